//! The directory: `GET /api/dns` (the records it publishes) and fgms's
//! `mpservers.xml` (the published relays, at `/mpservers.xml` and
//! `/mpstatus/mpservers.xml`).

use crate::http::reply::ApiError;
use crate::http::state::AppState;
use api::dns::DnsBody;
use api::ErrorBody;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use lifecycle::lock;

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/dns", get(dns))
        .route("/mpservers.xml", get(mpservers))
        .route("/mpstatus/mpservers.xml", get(mpservers))
}

/// The records the directory publishes now.
#[utoipa::path(get, path = "/api/dns", tag = "dns",
    responses(
        (status = 200, description = "the zone's records", body = DnsBody),
        (status = 404, description = "no directory runs in this process", body = ErrorBody),
    ))]
pub async fn dns(State(s): State<AppState>) -> Result<Json<DnsBody>, ApiError> {
    let snap = s.publisher.current().await;
    let d = snap
        .dns
        .as_ref()
        .ok_or_else(|| ApiError::not_running("dns"))?;
    Ok(Json(d.clone()))
}

async fn mpservers(State(s): State<AppState>) -> Response {
    let Some(d) = &s.sources.directory else {
        return (StatusCode::NOT_FOUND, "no directory runs in this process\n").into_response();
    };
    let body = lock(d).mpservers_xml();
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        body,
    )
        .into_response()
}
