//! `GET /api/pilots` and the pilot stream `GET /api/pilots/stream` (Server-Sent
//! Events: a `snapshot`, then one `update` per second with the changes, and a `chat`
//! event with each second's new chat lines); `GET /api/chat` and `GET /api/atc`.

use crate::http::conn::Streaming;
use crate::http::reply::{json_text, ApiError, Params};
use crate::http::snapshot::StreamUpdate;
use crate::http::state::AppState;
use api::atc::AtcBody;
use api::chat::{ChatBody, ChatFilter};
use api::pilots::{PilotFilter, PilotsBody};
use api::stream::Update;
use api::ErrorBody;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use lifecycle::lock;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// How often an idle stream sends a comment line.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/pilots", get(pilots))
        .route("/api/pilots/stream", get(pilots_stream))
        .route("/api/chat", get(chat))
        .route("/api/atc", get(atc))
}

/// The recent chat of the relay's pilots, each line once.
#[utoipa::path(get, path = "/api/chat", tag = "relay",
    params(ChatFilter),
    responses(
        (status = 200, description = "the lines, oldest first", body = ChatBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
    ))]
pub async fn chat(
    State(s): State<AppState>,
    Params(filter): Params<ChatFilter>,
) -> Result<Json<ChatBody>, ApiError> {
    if !s.publisher.has_relay() {
        return Err(ApiError::not_running("relay"));
    }
    let snap = s.publisher.current().await; // takes in what was said since the last
    let body = lock(&s.publisher.chat).body(&filter, snap.clock.now_secs());
    Ok(Json(body))
}

/// The ATC stations among the relay's pilots (fgms's rule: a callsign ending `_DL`,
/// `_GN`, `_TW`, `_AP`, `_DE` or `_CT` with the model `OpenRadar` or one containing `ATC`).
#[utoipa::path(get, path = "/api/atc", tag = "relay",
    responses(
        (status = 200, description = "the stations", body = AtcBody),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
    ))]
pub async fn atc(State(s): State<AppState>) -> Result<Json<AtcBody>, ApiError> {
    let snap = s.publisher.current().await;
    let all = snap
        .pilots
        .as_ref()
        .ok_or_else(|| ApiError::not_running("relay"))?;
    Ok(Json(AtcBody {
        generated_at: snap.clock.now_secs(),
        stations: api::atc::stations(all),
    }))
}

/// Every pilot the relay knows.
#[utoipa::path(get, path = "/api/pilots", tag = "relay",
    params(PilotFilter),
    responses(
        (status = 200, description = "the pilots", body = PilotsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
    ))]
pub async fn pilots(
    State(s): State<AppState>,
    Params(filter): Params<PilotFilter>,
) -> Result<Response, ApiError> {
    let snap = s.publisher.current().await;
    let all = snap
        .pilots
        .as_ref()
        .ok_or_else(|| ApiError::not_running("relay"))?;
    if filter.is_empty() {
        return Ok(json_text(snap.pilots_json().to_string()));
    }
    Ok(Json(PilotsBody {
        generated_at: snap.clock.now_secs(),
        online: all.len(),
        pilots: all.iter().filter(|p| filter.keeps(p)).cloned().collect(),
    })
    .into_response())
}

/// The pilot stream: a `snapshot` event, then one `update` per second with changes.
#[utoipa::path(get, path = "/api/pilots/stream", tag = "relay",
    responses(
        (status = 200, description = "text/event-stream: `snapshot` (data: PilotsBody), then `update` events (data: Update) and `chat` events (data: an array of ChatLine, the lines new since the last event)", content_type = "text/event-stream", body = Update),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
        (status = 503, description = "too many streams open", body = ErrorBody),
    ))]
pub async fn pilots_stream(
    State(s): State<AppState>,
    conn: Option<Extension<Streaming>>,
    peer: Option<Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
) -> Result<Response, ApiError> {
    let p = &s.publisher;
    if !p.has_relay() {
        return Err(ApiError::not_running("relay"));
    }
    let ip = peer.map_or(std::net::Ipv4Addr::LOCALHOST.into(), |c| c.0 .0.ip());
    // Subscribed before the snapshot is read: no update between the two is missed.
    let (slot, rx) = match p.open_stream(ip).await {
        Ok(x) => x,
        Err(why) => {
            let what = match why {
                udp::Refusal::Total => "too many pilot streams open; retry later",
                udp::Refusal::PerSource => "too many pilot streams from this address; retry later",
            };
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, what));
        }
    };
    let snap = p.current().await;
    // A long response: the connection's idle and lifetime limits step aside until
    // the stream ends.
    let guard = conn.map(|Extension(c)| c.start());
    let first = Event::default()
        .event("snapshot")
        .id(snap.seq.to_string())
        .data(snap.pilots_json());
    let state = StreamState {
        rx,
        last: snap.seq,
        first: Some(first),
        ends: tokio::time::Instant::now() + p.stream_lifetime,
        _slot: slot,
        _streaming: guard,
    };
    let stream = futures_util::stream::unfold(state, |mut st| async move {
        if let Some(e) = st.first.take() {
            return Some((Ok::<_, Infallible>(e), st));
        }
        loop {
            // At its end of life the stream ends; the page's EventSource reconnects.
            let next = tokio::select! {
                r = st.rx.recv() => r,
                _ = tokio::time::sleep_until(st.ends) => return None,
            };
            match next {
                Ok(u) if u.seq <= st.last => continue,
                Ok(u) => {
                    st.last = u.seq;
                    let event = |name, data: &String| {
                        Event::default()
                            .event(name)
                            .id(u.seq.to_string())
                            .data(data)
                    };
                    let chat = u.chat.as_ref().map(|c| event("chat", c));
                    let Some(d) = &u.data else {
                        let e = chat?; // one of the two is always there
                        return Some((Ok(e), st));
                    };
                    st.first = chat; // sent next
                    return Some((Ok(event("update", d)), st));
                }
                // Fell behind, or the server stops: end the stream; the client
                // reconnects and starts over from a snapshot.
                Err(_) => return None,
            }
        }
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response())
}

struct StreamState {
    rx: broadcast::Receiver<Arc<StreamUpdate>>,
    last: u64,
    first: Option<Event>,
    ends: tokio::time::Instant,
    _slot: udp::Slot,
    _streaming: Option<crate::http::conn::StreamingGuard>,
}
