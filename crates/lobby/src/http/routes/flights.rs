//! The flight log's HTTP API (`docs/API.md`): flights (paged), one flight with its
//! track as GeoJSON, a callsign's totals, a server's player history. Read straight
//! from the store (SQLite or PostgreSQL, through its readers' pool: never the
//! writer's connection), never from an engine. Every list is bounded, with a
//! documented default and maximum (a parameter beyond the maximum is refused).

use crate::http::reply::{error, parsed};
use crate::http::state::AppState;
use api::flights::{
    int_params, track_feature, AircraftTotals, CallsignBody, FlightBody, FlightEntry, FlightFilter,
    FlightsBody, Point, ServerHistoryBody, ServerSamplePoint, DEFAULT_AIRCRAFT, DEFAULT_RECENT,
    DEFAULT_SERVER_SAMPLES, MAX_RECENT,
};
use api::ErrorBody;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use flightlog::store::{
    FlightQuery, FlightRow, MAX_AIRCRAFT, MAX_SERVER_SAMPLES, MAX_TRACK_POINTS,
};
use flightlog::Fix;
use std::collections::BTreeMap;

type Params = Result<Query<BTreeMap<String, String>>, QueryRejection>;

/// The integer parameters `allowed` names, or what is wrong with them.
fn ints(q: Params, allowed: &[(&str, i64, i64, i64)]) -> Result<Vec<i64>, String> {
    int_params(&q.map(|Query(m)| m).map_err(|e| e.body_text())?, allowed)
}

fn no_log() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no flight log in this process ([history] database_url)",
    )
}

fn failed(e: anyhow::Error) -> Response {
    tracing::error!("flight log read failed: {e:#}");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the flight log cannot be read now",
    )
}

fn point(f: Fix) -> Point {
    Point {
        lat: f.lat,
        lon: f.lon,
        alt_ft: f.alt_ft,
    }
}

fn entry(f: FlightRow, now: i64) -> FlightEntry {
    FlightEntry {
        id: f.id,
        duration_s: f.end.unwrap_or(now).max(f.start) - f.start,
        callsign: f.callsign,
        model: f.model,
        relay: f.relay,
        start: f.start,
        end: f.end,
        start_position: f.first.map(point),
        end_position: f.last.map(point),
        distance_nm: f.distance_nm,
        max_alt_ft: f.max_alt_ft,
        samples: f.samples,
    }
}

/// Flights, newest first, paged.
#[utoipa::path(get, path = "/api/flights", tag = "history",
    params(
        ("callsign" = Option<String>, Query, description = "only this callsign (exact)"),
        ("since" = Option<i64>, Query, description = "only flights that ended at or after this (Unix seconds), or are flying"),
        ("until" = Option<i64>, Query, description = "only flights that started at or before this (Unix seconds)"),
        ("limit" = Option<i64>, Query, description = "page size, 1-500 (default 50)"),
        ("before" = Option<i64>, Query, description = "the previous page's next_before"),
    ),
    responses(
        (status = 200, description = "the flights", body = FlightsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn flights(State(s): State<AppState>, q: Params) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let q = match parsed(q, FlightFilter::parse) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let query = FlightQuery {
        callsign: q.callsign,
        since: q.since,
        until: q.until,
        limit: q.limit,
        before: q.before,
    };
    match h.store.flights(&query).await {
        Ok(rows) => {
            let t = udp::time::unix_secs();
            let next_before = (rows.len() as i64 == q.limit)
                .then(|| rows.last().map(|f| f.id))
                .flatten();
            Json(FlightsBody {
                generated_at: t,
                flights: rows.into_iter().map(|f| entry(f, t)).collect(),
                next_before,
            })
            .into_response()
        }
        Err(e) => failed(e),
    }
}

/// One flight with its track.
#[utoipa::path(get, path = "/api/flights/{id}", tag = "history",
    params(
        ("id" = i64, Path, description = "the flight's id"),
        ("points" = Option<i64>, Query, description = "positions in the track at most, 2-2000 (default 2000): a longer track is downsampled evenly, its first and last positions kept"),
    ),
    responses(
        (status = 200, description = "the flight and its track (GeoJSON Feature)", body = FlightBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn flight(State(s): State<AppState>, Path(id): Path<String>, q: Params) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let Ok(id) = id.parse::<i64>() else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("flight id must be an integer, got {id:?}"),
        );
    };
    let points = match ints(q, &[("points", MAX_TRACK_POINTS, 2, MAX_TRACK_POINTS)]) {
        Ok(v) => v[0],
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let row = match h.store.flight(id).await {
        Ok(Some(r)) => r,
        Ok(None) => return error(StatusCode::NOT_FOUND, format!("no flight {id}")),
        Err(e) => return failed(e),
    };
    let (track, stored) = match h.store.track(id, points).await {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let pts: Vec<(i64, f64, f64, f64, f64)> = track
        .iter()
        .map(|(t, f)| (*t, f.lat, f.lon, f.alt_ft, f.heading))
        .collect();
    let feature = track_feature(id, &row.callsign, &pts, stored);
    let t = udp::time::unix_secs();
    Json(FlightBody {
        generated_at: t,
        flight: entry(row, t),
        track: feature,
    })
    .into_response()
}

/// A callsign's totals and latest flights.
#[utoipa::path(get, path = "/api/callsigns/{callsign}", tag = "history",
    params(
        ("callsign" = String, Path, description = "the callsign"),
        ("recent" = Option<i64>, Query, description = "latest flights listed, 1-100 (default 20)"),
        ("aircraft" = Option<i64>, Query, description = "models listed (most hours first), 1-100 (default 20)"),
    ),
    responses(
        (status = 200, description = "flights, hours, distance and aircraft flown", body = CallsignBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn callsign(State(s): State<AppState>, Path(cs): Path<String>, q: Params) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let (recent, aircraft) = match ints(
        q,
        &[
            ("recent", DEFAULT_RECENT, 1, MAX_RECENT),
            ("aircraft", DEFAULT_AIRCRAFT, 1, MAX_AIRCRAFT),
        ],
    ) {
        Ok(v) => (v[0], v[1]),
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let t = udp::time::unix_secs();
    let totals = match h
        .store
        .callsign(&cs, t, aircraft, flightlog::store::MAX_AIRPORTS)
        .await
    {
        Ok(x) => x,
        Err(e) => return failed(e),
    };
    let recent = match h
        .store
        .flights(&FlightQuery {
            callsign: Some(cs.clone()),
            limit: recent,
            ..FlightQuery::default()
        })
        .await
    {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    Json(CallsignBody {
        generated_at: t,
        callsign: cs,
        flights: totals.flights,
        hours: totals.hours,
        distance_nm: totals.distance_nm,
        aircraft: totals
            .aircraft
            .into_iter()
            .map(|(model, flights, hours)| AircraftTotals {
                model,
                flights,
                hours,
            })
            .collect(),
        recent: recent.into_iter().map(|f| entry(f, t)).collect(),
    })
    .into_response()
}

/// A Xash3D server's player history.
#[utoipa::path(get, path = "/api/servers/{addr}/history", tag = "history",
    params(
        ("addr" = String, Path, description = "ip:port (IPv6 bracketed)"),
        ("since" = Option<i64>, Query, description = "samples from this time on (Unix seconds; default: the last 24 hours)"),
        ("limit" = Option<i64>, Query, description = "samples at most, the newest, 1-5000 (default 1000)"),
    ),
    responses(
        (status = 200, description = "first and last seen, and players over time", body = ServerHistoryBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "never seen, or no flight log", body = ErrorBody),
    ))]
pub async fn server_history(
    State(s): State<AppState>,
    Path(addr): Path<String>,
    q: Params,
) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let t = udp::time::unix_secs();
    let (since, limit) = match ints(
        q,
        &[
            ("since", t - 86_400, i64::MIN, i64::MAX),
            ("limit", DEFAULT_SERVER_SAMPLES, 1, MAX_SERVER_SAMPLES),
        ],
    ) {
        Ok(v) => (v[0], v[1]),
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    match h.store.server_history(&addr, since, limit).await {
        Ok(Some((first_seen, last_seen, name, samples))) => Json(ServerHistoryBody {
            generated_at: t,
            address: addr,
            name,
            first_seen,
            last_seen,
            samples: samples
                .into_iter()
                .map(|(time, players, max, map)| ServerSamplePoint {
                    time,
                    players,
                    max,
                    map,
                })
                .collect(),
        })
        .into_response(),
        Ok(None) => error(
            StatusCode::NOT_FOUND,
            format!("no history for server {addr}"),
        ),
        Err(e) => failed(e),
    }
}

/// The routes of this file.
pub fn routes() -> axum::Router<AppState> {
    use axum::routing::get;
    axum::Router::new()
        .route("/api/flights", get(flights))
        .route("/api/flights/{id}", get(flight))
        .route("/api/callsigns/{callsign}", get(callsign))
        .route("/api/servers/{addr}/history", get(server_history))
}
