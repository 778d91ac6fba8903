//! `GET /api/airports` (by area, for the map) and `GET /api/airports/{ident}`: the
//! embedded airport table. The table never changes while lobby runs, so answers may
//! be cached for an hour.

use crate::http::reply::{ApiError, Params};
use crate::http::state::AppState;
use api::airports::{Airport, AirportsBody, AirportsQuery};
use api::ErrorBody;
use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};

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
    params(AirportsQuery),
    responses(
        (status = 200, description = "the airports", body = AirportsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
    ))]
pub async fn list(Params(query): Params<AirportsQuery>) -> impl IntoResponse {
    (
        [(header::CACHE_CONTROL, CACHE)],
        Json(query.answer(airports::table())),
    )
}

/// One airport by its ident (case-insensitive).
#[utoipa::path(get, path = "/api/airports/{ident}", tag = "airports",
    params(("ident" = String, Path, description = "ICAO or local code, e.g. EGLL")),
    responses(
        (status = 200, description = "the airport", body = Airport),
        (status = 404, description = "no airport has this ident", body = ErrorBody),
    ))]
pub async fn one(Path(ident): Path<String>) -> Result<impl IntoResponse, ApiError> {
    let a = airports::table()
        .get(&ident)
        .ok_or_else(|| ApiError::not_found(format!("no airport {ident:?} in the table")))?;
    Ok(([(header::CACHE_CONTROL, CACHE)], Json(Airport::of(a))))
}
