//! The master's servers: the Xash3D engine's static list
//! (`GET /v1/servers/<gamedir>` and `GET /v1/gamedirs`, plain text, as FWGS/server-list
//! publishes them) and `GET /api/servers` (JSON, filtered).

use crate::http::reply::{error, not_running, parsed};
use crate::http::state::AppState;
use api::servers::{ServerFilter, ServersBody};
use api::ErrorBody;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::collections::BTreeMap;

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/servers/{gamedir}", get(list))
        .route("/v1/gamedirs", get(gamedirs))
        .route("/api/servers", get(servers))
}

/// The engine's server list of one gamedir: `ip <addr>` (Xash3D) or `gs <addr>`
/// (GoldSrc) per published server, under probe.py's header comments.
async fn list(State(s): State<AppState>, Path(gamedir): Path<String>, req: HeaderMap) -> Response {
    let Some(m) = &s.sources.master else {
        return (StatusCode::NOT_FOUND, "no master runs in this process\n").into_response();
    };
    // The name is echoed in the body's header: only a game directory's name is one.
    if serverlist::curated::gamedir_of(&format!("{gamedir}.toml")).is_none() {
        return (StatusCode::NOT_FOUND, "not a game directory name\n").into_response();
    }
    let lists = s.lists.get(m, s.sources.list.as_ref());
    crate::http::lists::reply(lists.servers(&gamedir), &req)
}

/// `<gamedir> <total> <live>` per gamedir, as probe.py writes `v1/gamedirs`.
async fn gamedirs(State(s): State<AppState>, req: HeaderMap) -> Response {
    let Some(m) = &s.sources.master else {
        return (StatusCode::NOT_FOUND, "no master runs in this process\n").into_response();
    };
    let lists = s.lists.get(m, s.sources.list.as_ref());
    crate::http::lists::reply(lists.gamedirs(), &req)
}

/// The master's live servers.
#[utoipa::path(get, path = "/api/servers", tag = "master",
    params(
        ("gamedir" = Option<String>, Query, description = "game directory, exact"),
        ("map" = Option<String>, Query, description = "map, exact"),
        ("nat" = Option<u8>, Query, description = "0 or 1"),
        ("full" = Option<u8>, Query, description = "0: not full; 1: full only"),
        ("empty" = Option<u8>, Query, description = "0: not empty; 1: empty only"),
        ("password" = Option<u8>, Query, description = "0 or 1"),
        ("dedicated" = Option<u8>, Query, description = "0 or 1"),
    ),
    responses(
        (status = 200, description = "the servers", body = ServersBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no master runs in this process", body = ErrorBody),
    ))]
pub async fn servers(
    State(s): State<AppState>,
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
) -> Response {
    let filter = match parsed(q, ServerFilter::parse) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let snap = s.publisher.current().await;
    let Some(all) = snap.servers() else {
        return not_running("master");
    };
    Json(ServersBody {
        generated_at: snap.clock.now_secs(),
        total: all.len(),
        servers: all.iter().filter(|s| filter.keeps(s)).cloned().collect(),
    })
    .into_response()
}
