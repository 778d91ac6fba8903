//! The master's servers: the Xash3D engine's static list
//! (`GET /v1/servers/<gamedir>` and `GET /v1/gamedirs`, plain text, as FWGS/server-list
//! publishes them) and `GET /api/servers` (JSON, filtered).

use crate::http::reply::{ApiError, Params};
use crate::http::state::AppState;
use api::servers::{
    HeatmapsBody, RegisterBody, RegisterRequest, ServerDetails, ServerFilter, ServersBody,
};
use api::ErrorBody;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/servers/{gamedir}", get(list))
        .route("/v1/gamedirs", get(gamedirs))
        .route("/api/servers", get(servers))
        .route("/api/servers/register", axum::routing::post(register))
        .route("/api/servers/{addr}/details", get(details))
        .route("/api/list/heatmaps", get(heatmaps))
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
    let lists = s
        .lists
        .get(m, s.sources.list.as_deref(), udp::time::unix_secs());
    crate::http::lists::reply(lists.servers(&gamedir), &req)
}

/// `<gamedir> <total> <live>` per gamedir, as probe.py writes `v1/gamedirs`.
async fn gamedirs(State(s): State<AppState>, req: HeaderMap) -> Response {
    let Some(m) = &s.sources.master else {
        return (StatusCode::NOT_FOUND, "no master runs in this process\n").into_response();
    };
    let lists = s
        .lists
        .get(m, s.sources.list.as_deref(), udp::time::unix_secs());
    crate::http::lists::reply(lists.gamedirs(), &req)
}

/// Self-registration: a pending entry and its token; the master admits the server
/// once it shows the token in its host name or a rule (see docs/API.md).
#[utoipa::path(post, path = "/api/servers/register", tag = "master",
    request_body = RegisterRequest,
    responses(
        (status = 202, description = "pending: the server must show the token", body = RegisterBody),
        (status = 400, description = "a bad field (named)", body = ErrorBody),
        (status = 403, description = "the address is banned", body = ErrorBody),
        (status = 404, description = "registration is off, or no master runs here", body = ErrorBody),
        (status = 409, description = "listed or pending already", body = ErrorBody),
        (status = 429, description = "too many from this network or in all; retry later", body = ErrorBody),
    ))]
pub async fn register(
    State(s): State<AppState>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    body: Result<Json<RegisterRequest>, JsonRejection>,
) -> Result<impl IntoResponse, ApiError> {
    use serverlist::registration::Refused;
    let (Some(m), Some(list)) = (&s.sources.master, &s.sources.list) else {
        return Err(ApiError::not_running("master"));
    };
    let Json(req) = body?;
    let from = peer.map_or(std::net::Ipv4Addr::LOCALHOST.into(), |p| p.0 .0.ip());
    let elsewhere = |g: &str, a| serverlist::beside_master::refuses(m, g, a);
    match list.register(from, &req.address, &req.gamedir, &req.contact, elsewhere) {
        Ok(p) => Ok((
            StatusCode::ACCEPTED,
            Json(RegisterBody {
                token: p.token,
                address: p.address.to_string(),
                gamedir: p.gamedir,
                expires_at: p.expires,
                check_every: serverlist::registration::CHECK_EVERY,
            }),
        )),
        Err(None) => Err(ApiError::not_found("registration is off on this list")),
        Err(Some(r)) => {
            let code = match r {
                Refused::Invalid(_) => StatusCode::BAD_REQUEST,
                Refused::Banned(_) => StatusCode::FORBIDDEN,
                Refused::Exists(_) => StatusCode::CONFLICT,
                Refused::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            };
            Err(ApiError::new(code, r.to_string()))
        }
    }
}

/// A listed server's info, players and rules, asked now (cached 10 s).
#[utoipa::path(get, path = "/api/servers/{addr}/details", tag = "master",
    params(("addr" = String, Path, description = "ip:port (IPv6 bracketed)")),
    responses(
        (status = 200, description = "what it answered", body = ServerDetails),
        (status = 404, description = "not a listed server, or no master runs here", body = ErrorBody),
        (status = 503, description = "the master is asking as many servers as it may; retry", body = ErrorBody),
    ))]
pub async fn details(
    State(s): State<AppState>,
    Path(addr): Path<String>,
) -> Result<Response, ApiError> {
    let m = s.sources.master.as_ref();
    let m = m.ok_or_else(|| ApiError::not_running("master"))?;
    let now = udp::time::unix_secs();
    let kind = addr.parse().ok().and_then(|a| {
        serverlist::beside_master::listed_kind(m, s.sources.list.as_deref(), a, now).map(|k| (a, k))
    });
    let (a, kind) =
        kind.ok_or_else(|| ApiError::not_found(format!("{addr:?} is not a listed server")))?;
    match s.details.get(a, kind, now).await {
        Some(d) => Ok(Json(&*d).into_response()),
        None => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the master is asking as many servers as it may; retry",
        )),
    }
}

/// The list's players samples as heat maps.
#[utoipa::path(get, path = "/api/list/heatmaps", tag = "master",
    responses(
        (status = 200, description = "the heat maps", body = HeatmapsBody),
        (status = 404, description = "no master runs here", body = ErrorBody),
    ))]
pub async fn heatmaps(State(s): State<AppState>) -> Result<Response, ApiError> {
    let l = s.sources.list.as_ref();
    let l = l.ok_or_else(|| ApiError::not_running("master"))?;
    // Cached for a minute, or a sample interval when shorter.
    let max_age = lifecycle::lock(&l.options).sample_every.as_secs().min(60) as i64;
    let maps = s
        .details
        .heatmaps(&l.catalog, udp::time::unix_secs(), max_age);
    Ok(Json(&*maps).into_response())
}

/// The master's live servers.
#[utoipa::path(get, path = "/api/servers", tag = "master",
    params(ServerFilter),
    responses(
        (status = 200, description = "the servers", body = ServersBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no master runs in this process", body = ErrorBody),
    ))]
pub async fn servers(
    State(s): State<AppState>,
    Params(filter): Params<ServerFilter>,
) -> Result<Json<ServersBody>, ApiError> {
    let snap = s.publisher.current().await;
    let all = snap
        .servers()
        .ok_or_else(|| ApiError::not_running("master"))?;
    Ok(Json(ServersBody {
        generated_at: snap.clock.now_secs(),
        total: all.len(),
        servers: all.iter().filter(|s| filter.keeps(s)).cloned().collect(),
    }))
}
