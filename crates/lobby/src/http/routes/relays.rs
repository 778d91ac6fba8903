//! `GET /api/relays`: the relay's links and the directory's published relays.

use crate::http::state::AppState;
use api::relays::RelaysBody;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/relays", get(relays))
}

/// Relay links and the directory's published relays.
#[utoipa::path(get, path = "/api/relays", tag = "relay",
    responses((status = 200, description = "links and published relays", body = RelaysBody)))]
pub async fn relays(State(s): State<AppState>) -> Json<RelaysBody> {
    let snap = s.publisher.current().await;
    Json(snap.relays.clone())
}
