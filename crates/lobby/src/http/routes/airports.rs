//! `GET /api/airports` (by area, for the map) and `GET /api/airports/{ident}`: the
//! embedded airport table. The table never changes while lobby runs, so answers may
//! be cached for an hour.

use crate::http::reply::{error, parsed};
use crate::http::state::AppState;
use api::airports::{Airport, AirportsBody, AirportsQuery};
use api::ErrorBody;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::collections::BTreeMap;

/// What the answers may be cached for.
const CACHE: &str = "public, max-age=3600";

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/airports", get(list))
        .route("/api/airports/{ident}", get(one))
}

/// The airports in an area, the most prominent first.
#[utoipa::path(get, path = "/api/airports", tag = "airports",
    params(
        ("bbox" = Option<String>, Query, description = "west,south,east,north in degrees (west > east crosses the antimeridian); default the world"),
        ("min" = Option<String>, Query, description = "the least kind listed: large, medium, small (default; with seaplane bases) or seaplane"),
        ("limit" = Option<usize>, Query, description = "at most this many (1-5000, default 500), large first"),
    ),
    responses(
        (status = 200, description = "the airports", body = AirportsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
    ))]
pub async fn list(q: Result<Query<BTreeMap<String, String>>, QueryRejection>) -> Response {
    let query = match parsed(q, AirportsQuery::parse) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    (
        [(header::CACHE_CONTROL, CACHE)],
        Json(query.answer(airports::table())),
    )
        .into_response()
}

/// One airport by its ident (case-insensitive).
#[utoipa::path(get, path = "/api/airports/{ident}", tag = "airports",
    params(("ident" = String, Path, description = "ICAO or local code, e.g. EGLL")),
    responses(
        (status = 200, description = "the airport", body = Airport),
        (status = 404, description = "no airport has this ident", body = ErrorBody),
    ))]
pub async fn one(Path(ident): Path<String>) -> Response {
    match airports::table().get(&ident) {
        Some(a) => ([(header::CACHE_CONTROL, CACHE)], Json(Airport::of(a))).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no airport {ident:?} in the table"),
        ),
    }
}
