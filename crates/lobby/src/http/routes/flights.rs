//! The flight log's HTTP API (`docs/API.md`): flights (paged), one flight with its
//! track as GeoJSON, GPX or KML, a callsign's totals and CSV, the leaderboards, a
//! server's player history (bodies and formats in `api`). Read straight
//! from the store (SQLite or PostgreSQL, through its readers' pool: never the
//! writer's connection), never from an engine. Every list is bounded, with a
//! documented default and maximum (a parameter beyond the maximum is refused).

use crate::http::reply::{error, parsed};
use crate::http::state::AppState;
use api::flights::{
    callsign_body, entry, int_params, leaderboard_body, track_feature, CallsignBody, FlightBody,
    FlightFilter, FlightsBody, LeaderboardBody, LeaderboardQuery, ServerHistoryBody,
    ServerSamplePoint, DEFAULT_AIRCRAFT, DEFAULT_AIRPORTS, DEFAULT_RECENT, DEFAULT_SERVER_SAMPLES,
    MAX_RECENT,
};
use api::ErrorBody;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use flightlog::store::{
    FlightQuery, MAX_AIRCRAFT, MAX_AIRPORTS, MAX_EXPORT_FLIGHTS, MAX_SERVER_SAMPLES,
    MAX_TRACK_POINTS,
};
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

fn failed(e: impl Into<anyhow::Error>) -> Response {
    let e = e.into();
    tracing::error!("flight log read failed: {e:#}");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the flight log cannot be read now",
    )
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
    let points = match ints(q, &[("points", MAX_TRACK_POINTS, 2, MAX_TRACK_POINTS)]) {
        Ok(v) => v[0],
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let (f, track, stored) = match read_flight(&s, &id, points).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let pts: Vec<_> = track.iter().map(|t| (t.0, t.1, t.2, t.3, t.4)).collect();
    Json(FlightBody {
        generated_at: udp::time::unix_secs(),
        track: track_feature(f.id, &f.callsign, &pts, stored),
        flight: f,
    })
    .into_response()
}

/// A flight's entry and its track (time, lat, lon, alt_ft, heading) of at most
/// `points` positions, with how many are stored; or the answer why not.
async fn read_flight(
    s: &AppState,
    id: &str,
    points: i64,
) -> Result<
    (
        api::flights::FlightEntry,
        Vec<(i64, f64, f64, f64, f64)>,
        i64,
    ),
    Response,
> {
    let Some(h) = &s.sources.history else {
        return Err(no_log());
    };
    let Ok(id) = id.parse::<i64>() else {
        let e = format!("flight id must be an integer, got {id:?}");
        return Err(error(StatusCode::BAD_REQUEST, e));
    };
    let row = match h.store.flight(id).await {
        Ok(Some(r)) => r,
        Ok(None) => return Err(error(StatusCode::NOT_FOUND, format!("no flight {id}"))),
        Err(e) => return Err(failed(e)),
    };
    let (track, stored) = h.store.track(id, points).await.map_err(failed)?;
    let track = track
        .iter()
        .map(|(t, f)| (*t, f.lat, f.lon, f.alt_ft, f.heading));
    Ok((entry(row, udp::time::unix_secs()), track.collect(), stored))
}

/// A file download: `body` as `mime`, saved as `name`.
fn download(mime: &'static str, name: String, body: String) -> Response {
    use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
    let disposition = format!("attachment; filename=\"{name}\"");
    (
        [
            (CONTENT_TYPE, mime.to_string()),
            (CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

/// A flight's track (at most 2,000 positions, as `/api/flights/{id}`) as GPX or KML.
async fn export(s: AppState, id: String, q: Params, gpx: bool) -> Response {
    if let Err(e) = ints(q, &[]) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    let (f, track, _) = match read_flight(&s, &id, MAX_TRACK_POINTS).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let pts: Vec<_> = track.iter().map(|t| (t.0, t.1, t.2, t.3)).collect();
    let name = |ext| api::export::file_name(&f.callsign, &format!("{}.{ext}", f.id));
    if gpx {
        download(
            "application/gpx+xml",
            name("gpx"),
            api::export::gpx(&f, &pts),
        )
    } else {
        download(KML, name("kml"), api::export::kml(&f, &pts))
    }
}

const KML: &str = "application/vnd.google-earth.kml+xml";

/// A flight as GPX 1.1.
#[utoipa::path(get, path = "/api/flights/{id}/gpx", tag = "history",
    params(("id" = i64, Path, description = "the flight's id")),
    responses(
        (status = 200, description = "GPX 1.1: departure and arrival waypoints, one trk of one trkseg (ele in metres above the WGS84 ellipsoid, time ISO 8601 UTC), at most 2,000 positions; an attachment named CALLSIGN-ID.gpx", content_type = "application/gpx+xml", body = String),
        (status = 400, description = "a bad id or parameter", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn gpx(State(s): State<AppState>, Path(id): Path<String>, q: Params) -> Response {
    export(s, id, q, true).await
}

/// A flight as KML 2.2.
#[utoipa::path(get, path = "/api/flights/{id}/kml", tag = "history",
    params(("id" = i64, Path, description = "the flight's id")),
    responses(
        (status = 200, description = "KML 2.2: a Placemark with the track as a LineString (altitudeMode absolute, lon,lat,metres), and a Placemark per known departure and arrival airport; an attachment named CALLSIGN-ID.kml", content_type = "application/vnd.google-earth.kml+xml", body = String),
        (status = 400, description = "a bad id or parameter", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn kml(State(s): State<AppState>, Path(id): Path<String>, q: Params) -> Response {
    export(s, id, q, false).await
}

/// A callsign's totals and latest flights.
#[utoipa::path(get, path = "/api/callsigns/{callsign}", tag = "history",
    params(
        ("callsign" = String, Path, description = "the callsign"),
        ("recent" = Option<i64>, Query, description = "latest flights listed, 1-100 (default 20)"),
        ("aircraft" = Option<i64>, Query, description = "models listed (most hours first), 1-100 (default 20)"),
        ("airports" = Option<i64>, Query, description = "airports listed (most departures and arrivals first), 1-100 (default 20)"),
    ),
    responses(
        (status = 200, description = "flights, hours, distance, aircraft flown and airports visited", body = CallsignBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn callsign(State(s): State<AppState>, Path(cs): Path<String>, q: Params) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let (recent, aircraft, airports) = match ints(
        q,
        &[
            ("recent", DEFAULT_RECENT, 1, MAX_RECENT),
            ("aircraft", DEFAULT_AIRCRAFT, 1, MAX_AIRCRAFT),
            ("airports", DEFAULT_AIRPORTS, 1, MAX_AIRPORTS),
        ],
    ) {
        Ok(v) => (v[0], v[1], v[2]),
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let t = udp::time::unix_secs();
    let totals = match h.store.callsign(&cs, t, aircraft, airports).await {
        Ok(x) => x,
        Err(e) => return failed(e),
    };
    match h.store.callsign_flights(&cs, recent).await {
        Ok(r) => Json(callsign_body(cs, totals, r, t)).into_response(),
        Err(e) => failed(e),
    }
}

/// A callsign's flights as CSV.
#[utoipa::path(get, path = "/api/callsigns/{callsign}/csv", tag = "history",
    params(("callsign" = String, Path, description = "the callsign")),
    responses(
        (status = 200, description = "RFC 4180 CSV, a header row then one row per flight, newest first, at most 10,000 (the newest); an attachment named CALLSIGN-flights.csv", content_type = "text/csv", body = String),
        (status = 400, description = "a parameter (there are none)", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn callsign_csv(
    State(s): State<AppState>,
    Path(cs): Path<String>,
    q: Params,
) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    if let Err(e) = ints(q, &[]) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    let t = udp::time::unix_secs();
    match h.store.callsign_flights(&cs, MAX_EXPORT_FLIGHTS).await {
        Ok(rows) => {
            let rows: Vec<_> = rows.into_iter().map(|f| entry(f, t)).collect();
            let name = api::export::file_name(&cs, "flights.csv");
            download("text/csv; charset=utf-8", name, api::export::csv(&rows))
        }
        Err(e) => failed(e),
    }
}

/// The leaderboards.
#[utoipa::path(get, path = "/api/leaderboards", tag = "history",
    params(
        ("period" = Option<String>, Query, description = "7d (default), 30d or all: the flights that started in the last 7 or 30 days, or every flight within retention"),
        ("by" = Option<String>, Query, description = "hours (default) or flights"),
        ("limit" = Option<i64>, Query, description = "callsigns listed, 1-100 (default 100)"),
    ),
    responses(
        (status = 200, description = "the callsigns with the most hours or flights", body = LeaderboardBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn leaderboards(State(s): State<AppState>, q: Params) -> Response {
    let Some(h) = &s.sources.history else {
        return no_log();
    };
    let q = match parsed(q, LeaderboardQuery::parse) {
        Ok(q) => q,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let t = udp::time::unix_secs();
    match h
        .store
        .leaderboard_cached(q.since(t), q.rank(), q.limit, t)
        .await
    {
        Ok(rows) => Json(leaderboard_body(&q, rows, t)).into_response(),
        Err(e) => failed(e),
    }
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
        .route("/api/flights/{id}/gpx", get(gpx))
        .route("/api/flights/{id}/kml", get(kml))
        .route("/api/callsigns/{callsign}", get(callsign))
        .route("/api/callsigns/{callsign}/csv", get(callsign_csv))
        .route("/api/leaderboards", get(leaderboards))
        .route("/api/servers/{addr}/history", get(server_history))
}
