//! The flight log's HTTP API (`docs/API.md`): flights (paged), one flight with its
//! track as GeoJSON, GPX or KML, a callsign's totals and CSV, the leaderboards, a
//! server's player history (bodies, query parameters and formats in `api`). Read
//! straight from the store (SQLite or PostgreSQL, through its readers' pool: never the
//! writer's connection), never from an engine. Every list is bounded, with a
//! documented default and maximum (a parameter beyond the maximum is refused).

use crate::http::reply::{ApiError, Params};
use crate::http::state::AppState;
use api::flights::{
    callsign_body, entry, leaderboard_body, track_feature, CallsignBody, CallsignQuery, FlightBody,
    FlightFilter, FlightPath, FlightsBody, LeaderboardBody, LeaderboardQuery, ServerHistoryBody,
    ServerHistoryQuery, ServerSamplePoint, TrackQuery, MAX_POINTS,
};
use api::params::NoParams;
use api::ErrorBody;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use flightlog::store::{
    FlightQuery, MAX_AIRCRAFT, MAX_AIRPORTS, MAX_EXPORT_FLIGHTS, MAX_SERVER_SAMPLES,
    MAX_TRACK_POINTS,
};

// The API's documented bounds are the store's.
const _: () = assert!(
    api::flights::MAX_POINTS == MAX_TRACK_POINTS
        && api::flights::MAX_AIRCRAFT == MAX_AIRCRAFT
        && api::flights::MAX_AIRPORTS == MAX_AIRPORTS
        && api::flights::MAX_SERVER_SAMPLES == MAX_SERVER_SAMPLES
);

/// A query read after the flight log is found (a process without one answers 404
/// before it looks at the parameters).
type ParamsLater<T> = Result<Params<T>, ApiError>;

/// The flight log, or the answer that there is none.
fn no_log() -> ApiError {
    ApiError::not_found("no flight log in this process ([history] database_url)")
}

fn failed(e: impl Into<anyhow::Error>) -> ApiError {
    let e = e.into();
    tracing::error!("flight log read failed: {e:#}");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "the flight log cannot be read now",
    )
}

/// Flights, newest first, paged.
#[utoipa::path(get, path = "/api/flights", tag = "history",
    params(FlightFilter),
    responses(
        (status = 200, description = "the flights", body = FlightsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn flights(
    State(s): State<AppState>,
    q: ParamsLater<FlightFilter>,
) -> Result<Json<FlightsBody>, ApiError> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    let Params(q) = q?;
    let query = FlightQuery {
        callsign: q.callsign,
        since: q.since,
        until: q.until,
        limit: q.limit,
        before: q.before,
    };
    let rows = h.store.flights(&query).await.map_err(failed)?;
    let t = udp::time::unix_secs();
    let next_before = (rows.len() as i64 == q.limit)
        .then(|| rows.last().map(|f| f.id))
        .flatten();
    Ok(Json(FlightsBody {
        generated_at: t,
        flights: rows.into_iter().map(|f| entry(f, t)).collect(),
        next_before,
    }))
}

/// One flight with its track.
#[utoipa::path(get, path = "/api/flights/{id}", tag = "history",
    params(FlightPath, TrackQuery),
    responses(
        (status = 200, description = "the flight and its track (GeoJSON Feature)", body = FlightBody),
        (status = 400, description = "a bad id or parameter", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn flight(
    State(s): State<AppState>,
    id: Result<Path<FlightPath>, PathRejection>,
    Params(q): Params<TrackQuery>,
) -> Result<Json<FlightBody>, ApiError> {
    let (f, track, stored) = read_flight(&s, id, q.points).await?;
    let pts: Vec<_> = track.iter().map(|t| (t.0, t.1, t.2, t.3, t.4)).collect();
    Ok(Json(FlightBody {
        generated_at: udp::time::unix_secs(),
        track: track_feature(f.id, &f.callsign, &pts, stored),
        flight: f,
    }))
}

/// A flight's entry and its track (time, lat, lon, alt_ft, heading) of at most
/// `points` positions, with how many are stored; or the answer why not.
async fn read_flight(
    s: &AppState,
    id: Result<Path<FlightPath>, PathRejection>,
    points: i64,
) -> Result<
    (
        api::flights::FlightEntry,
        Vec<(i64, f64, f64, f64, f64)>,
        i64,
    ),
    ApiError,
> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    let Path(FlightPath { id }) = id?;
    let row = h.store.flight(id).await.map_err(failed)?;
    let row = row.ok_or_else(|| ApiError::not_found(format!("no flight {id}")))?;
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
async fn export(
    s: AppState,
    id: Result<Path<FlightPath>, PathRejection>,
    gpx: bool,
) -> Result<Response, ApiError> {
    let (f, track, _) = read_flight(&s, id, MAX_POINTS).await?;
    let pts: Vec<_> = track.iter().map(|t| (t.0, t.1, t.2, t.3)).collect();
    let name = |ext| api::export::file_name(&f.callsign, &format!("{}.{ext}", f.id));
    Ok(if gpx {
        download(
            "application/gpx+xml",
            name("gpx"),
            api::export::gpx(&f, &pts),
        )
    } else {
        download(KML, name("kml"), api::export::kml(&f, &pts))
    })
}

const KML: &str = "application/vnd.google-earth.kml+xml";

/// A flight as GPX 1.1.
#[utoipa::path(get, path = "/api/flights/{id}/gpx", tag = "history",
    params(FlightPath),
    responses(
        (status = 200, description = "GPX 1.1: departure and arrival waypoints, one trk of one trkseg (ele in metres above the WGS84 ellipsoid, time ISO 8601 UTC), at most 2,000 positions; an attachment named CALLSIGN-ID.gpx", content_type = "application/gpx+xml", body = String),
        (status = 400, description = "a bad id or any parameter (there are none)", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn gpx(
    State(s): State<AppState>,
    id: Result<Path<FlightPath>, PathRejection>,
    _: Params<NoParams>,
) -> Result<Response, ApiError> {
    export(s, id, true).await
}

/// A flight as KML 2.2.
#[utoipa::path(get, path = "/api/flights/{id}/kml", tag = "history",
    params(FlightPath),
    responses(
        (status = 200, description = "KML 2.2: a Placemark with the track as a LineString (altitudeMode absolute, lon,lat,metres), and a Placemark per known departure and arrival airport; an attachment named CALLSIGN-ID.kml", content_type = "application/vnd.google-earth.kml+xml", body = String),
        (status = 400, description = "a bad id or any parameter (there are none)", body = ErrorBody),
        (status = 404, description = "no such flight, or no flight log", body = ErrorBody),
    ))]
pub async fn kml(
    State(s): State<AppState>,
    id: Result<Path<FlightPath>, PathRejection>,
    _: Params<NoParams>,
) -> Result<Response, ApiError> {
    export(s, id, false).await
}

/// A callsign's totals and latest flights.
#[utoipa::path(get, path = "/api/callsigns/{callsign}", tag = "history",
    params(
        ("callsign" = String, Path, description = "the callsign"),
        CallsignQuery,
    ),
    responses(
        (status = 200, description = "flights, hours, distance, aircraft flown and airports visited", body = CallsignBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn callsign(
    State(s): State<AppState>,
    Path(cs): Path<String>,
    q: ParamsLater<CallsignQuery>,
) -> Result<Json<CallsignBody>, ApiError> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    let Params(q) = q?;
    let t = udp::time::unix_secs();
    let totals = h.store.callsign(&cs, t, q.aircraft, q.airports).await;
    let totals = totals.map_err(failed)?;
    let recent = h.store.callsign_flights(&cs, q.recent).await;
    Ok(Json(callsign_body(cs, totals, recent.map_err(failed)?, t)))
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
    q: ParamsLater<NoParams>,
) -> Result<Response, ApiError> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    q?;
    let t = udp::time::unix_secs();
    let rows = h.store.callsign_flights(&cs, MAX_EXPORT_FLIGHTS).await;
    let rows: Vec<_> = rows
        .map_err(failed)?
        .into_iter()
        .map(|f| entry(f, t))
        .collect();
    let name = api::export::file_name(&cs, "flights.csv");
    Ok(download(
        "text/csv; charset=utf-8",
        name,
        api::export::csv(&rows),
    ))
}

/// The leaderboards.
#[utoipa::path(get, path = "/api/leaderboards", tag = "history",
    params(LeaderboardQuery),
    responses(
        (status = 200, description = "the callsigns with the most hours or flights", body = LeaderboardBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no flight log in this process", body = ErrorBody),
    ))]
pub async fn leaderboards(
    State(s): State<AppState>,
    q: ParamsLater<LeaderboardQuery>,
) -> Result<Json<LeaderboardBody>, ApiError> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    let Params(q) = q?;
    let t = udp::time::unix_secs();
    let rows = h
        .store
        .leaderboard_cached(q.since(t), q.rank(), q.limit, t)
        .await;
    Ok(Json(leaderboard_body(&q, rows.map_err(failed)?, t)))
}

/// A Xash3D server's player history.
#[utoipa::path(get, path = "/api/servers/{addr}/history", tag = "history",
    params(
        ("addr" = String, Path, description = "ip:port (IPv6 bracketed)"),
        ServerHistoryQuery,
    ),
    responses(
        (status = 200, description = "first and last seen, and players over time", body = ServerHistoryBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "never seen, or no flight log", body = ErrorBody),
    ))]
pub async fn server_history(
    State(s): State<AppState>,
    Path(addr): Path<String>,
    q: ParamsLater<ServerHistoryQuery>,
) -> Result<Json<ServerHistoryBody>, ApiError> {
    let h = s.sources.history.as_ref().ok_or_else(no_log)?;
    let Params(q) = q?;
    let t = udp::time::unix_secs();
    let since = q.since.unwrap_or(t - 86_400);
    let found = h.store.server_history(&addr, since, q.limit).await;
    let Some((first_seen, last_seen, name, samples)) = found.map_err(failed)? else {
        return Err(ApiError::not_found(format!("no history for server {addr}")));
    };
    Ok(Json(ServerHistoryBody {
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
    }))
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
