//! Admin authentication as a layer in front of every admin route: the API off (404),
//! a source outside `[admin] allow` (403) or no valid bearer token (401, with
//! `WWW-Authenticate`) is answered here, before the handler reads its path or body;
//! an admitted request carries the admin's name ([`AdminName`]) to the handler.

use crate::http::admin_state::Admin;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::Arc;

/// The name of the admin whose token a request carried (for logs and change records).
#[derive(Debug, Clone)]
pub struct AdminName(pub String);

/// The layer's function (`axum::middleware::from_fn_with_state`).
pub async fn require_admin(
    State(admin): State<Arc<Admin>>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| *a);
    match admin.authorize(peer, req.headers()) {
        Ok(name) => {
            req.extensions_mut().insert(AdminName(name));
            next.run(req).await
        }
        Err(refusal) => refusal,
    }
}
