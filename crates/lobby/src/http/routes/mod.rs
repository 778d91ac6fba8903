//! The HTTP routes, one module per resource; each handler is documented by the
//! `#[utoipa::path]` attribute above it (its query parameters by their struct's
//! `IntoParams`), which the OpenAPI document collects.

pub mod airports;
pub mod dns;
pub mod flights;
pub mod ops;
pub mod pilots;
pub mod relays;
pub mod servers;
pub mod web;

use crate::http::state::AppState;
use axum::Router;

/// Every route, the admin API's (behind its authentication layer) when configured.
pub fn router(state: AppState) -> Router {
    let mut r = Router::new()
        .merge(servers::routes())
        .merge(pilots::routes())
        .merge(relays::routes())
        .merge(dns::routes())
        .merge(flights::routes())
        .merge(airports::routes())
        .merge(ops::routes())
        .merge(web::routes());
    if let Some(admin) = state.admin.clone() {
        r = r.merge(crate::http::admin::routes(admin));
    }
    r.with_state(state)
}
