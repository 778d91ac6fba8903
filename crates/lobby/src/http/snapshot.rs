//! The JSON API of `docs/API.md`: a [`Publisher`] that copies what the engines
//! hold into a [`Snapshot`] at most once a second (only while someone reads:
//! a request finding the last snapshot older than a second, or a live stream),
//! the handlers that answer from it, the pilot stream (Server-Sent Events, one
//! diff per snapshot, serialised once for every client), readiness, and the
//! OpenAPI document generated from the handler types.

use crate::http::{Sources, Streaming};
use crate::lifecycle::lock;
use api::dns::DnsBody;
use api::health::{HealthBody, PartStatus, ReadyBody};
use api::pilots::{Pilot, PilotFilter, PilotsBody};
use api::relays::{Link, RelayInfo, RelaysBody};
use api::servers::{ServerEntry, ServerFilter, ServersBody};
use api::stream::{Sent, Update};
use api::{Clock, ErrorBody};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{broadcast, OwnedSemaphorePermit, Semaphore};
use utoipa::OpenApi;

/// Snapshots are taken at most this often.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_secs(1);

/// Stream updates a slow client may fall behind before it is disconnected.
const STREAM_BACKLOG: usize = 8;

/// How often an idle stream sends a comment line.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Parts in start order, each with what it waits for (`None`: serving).
type PartStates = Vec<(String, Option<String>)>;

/// Each part's readiness, set by the part as it starts.
#[derive(Clone, Default)]
pub struct Readiness {
    parts: Arc<Mutex<PartStates>>,
}

impl Readiness {
    /// Records `part` as serving (`Ok`) or waiting for something (`Err(what)`).
    pub fn set(&self, part: &str, state: Result<(), String>) {
        let mut v = lock(&self.parts);
        let detail = state.err();
        match v.iter_mut().find(|(p, _)| p == part) {
            Some(e) => e.1 = detail,
            None => v.push((part.to_string(), detail)),
        }
    }

    fn body(&self) -> ReadyBody {
        ReadyBody::of(
            lock(&self.parts)
                .iter()
                .map(|(p, d)| PartStatus {
                    part: p.clone(),
                    ready: d.is_none(),
                    detail: d.clone(),
                })
                .collect(),
        )
    }
}

/// What the engines held at one moment, in API form.
pub struct Snapshot {
    /// Counts up by one per snapshot (the stream's event id).
    pub seq: u64,
    taken: Option<Instant>,
    clock: Clock,
    pilots: Option<Vec<Pilot>>,
    pilots_json: OnceLock<String>,
    servers: Option<Vec<ServerEntry>>,
    relays: RelaysBody,
    dns: Option<DnsBody>,
}

impl Snapshot {
    fn empty() -> Snapshot {
        Snapshot {
            seq: 0,
            taken: None,
            clock: wall_clock(),
            pilots: None,
            pilots_json: OnceLock::new(),
            servers: None,
            relays: RelaysBody {
                generated_at: 0,
                relay: None,
                published: Vec::new(),
            },
            dns: None,
        }
    }

    fn fresh(&self, now: Instant) -> bool {
        self.taken
            .is_some_and(|t| now.saturating_duration_since(t) < SNAPSHOT_INTERVAL)
    }

    /// The master's listed servers, if a master runs here.
    pub fn servers(&self) -> Option<&[ServerEntry]> {
        self.servers.as_deref()
    }

    /// The directory's published relays and their health.
    pub fn published(&self) -> &[api::relays::Published] {
        &self.relays.published
    }

    /// The body of an unfiltered `GET /api/pilots`, serialised once per snapshot.
    fn pilots_json(&self) -> &str {
        self.pilots_json.get_or_init(|| {
            let body = PilotsBody {
                generated_at: self.clock.now_secs(),
                online: self.pilots.as_ref().map_or(0, Vec::len),
                pilots: self.pilots.clone().unwrap_or_default(),
            };
            serde_json::to_string(&body).unwrap_or_default()
        })
    }
}

/// One stream update, serialised once for every client.
struct StreamUpdate {
    seq: u64,
    data: String,
}

/// Takes snapshots and hands them and the stream's updates out.
pub struct Publisher {
    sources: Sources,
    latest: Mutex<Arc<Snapshot>>,
    /// Held while a snapshot is built: concurrent readers wait for it instead of
    /// building their own; holds what the stream last sent.
    building: tokio::sync::Mutex<Sent>,
    updates: broadcast::Sender<Arc<StreamUpdate>>,
    streams: Arc<Semaphore>,
    max_streams: usize,
}

fn wall_clock() -> Clock {
    Clock {
        mono: Instant::now(),
        unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    }
}

impl Publisher {
    /// A publisher over `sources`, allowing `max_streams` pilot streams at once.
    pub fn new(sources: Sources, max_streams: usize) -> Arc<Publisher> {
        Arc::new(Publisher {
            sources,
            latest: Mutex::new(Arc::new(Snapshot::empty())),
            building: tokio::sync::Mutex::new(Sent::default()),
            updates: broadcast::channel(STREAM_BACKLOG).0,
            streams: Arc::new(Semaphore::new(max_streams)),
            max_streams,
        })
    }

    /// Pilot streams open now.
    pub fn open_streams(&self) -> usize {
        self.max_streams
            .saturating_sub(self.streams.available_permits())
    }

    /// The latest snapshot, taken now if the last one is a second old or more.
    pub async fn current(self: &Arc<Self>) -> Arc<Snapshot> {
        let now = Instant::now();
        let have = lock(&self.latest).clone();
        if have.fresh(now) {
            return have;
        }
        let mut sent = self.building.lock().await;
        let have = lock(&self.latest).clone();
        if have.fresh(Instant::now()) {
            return have; // another request built it while this one waited
        }
        let me = self.clone();
        let before = std::mem::take(&mut *sent);
        let seq = have.seq + 1;
        let built = tokio::task::spawn_blocking(move || me.build(seq, before)).await;
        let (snap, update, after) = match built {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(error = %e, "API snapshot failed");
                return have;
            }
        };
        *sent = after;
        let snap = Arc::new(snap);
        // Store first, then announce: a stream that subscribed and then read an
        // older snapshot still receives this update.
        *lock(&self.latest) = snap.clone();
        if let Some(data) = update {
            let _ = self.updates.send(Arc::new(StreamUpdate {
                seq: snap.seq,
                data,
            }));
        }
        snap
    }

    /// Copies the engines' state (each lock held only to copy) into API form, and
    /// the stream update from what was sent before (`None`: nothing changed).
    fn build(&self, seq: u64, before: Sent) -> (Snapshot, Option<String>, Sent) {
        let clock = wall_clock();
        let now = clock.mono;
        let src = &self.sources;
        let mut relay_info = None;
        let pilots = src.relay.as_ref().map(|r| {
            let (views, links, name, hub) = {
                let e = lock(r);
                (
                    e.pilots(now),
                    e.links(),
                    e.config().name.clone(),
                    e.config().hub,
                )
            };
            relay_info = Some(RelayInfo {
                name,
                hub,
                links: self.links(&links, &clock),
            });
            api::pilots::pilots(&views, &clock)
        });
        let servers = src.master.as_ref().map(|m| {
            let mut list: Vec<(std::net::SocketAddr, ServerEntry)> = {
                let e = lock(m);
                let t = e.table();
                t.listed()
                    .map(|l| (l.addr, api::servers::entry(&l, &clock)))
                    .collect()
            };
            if let Some(n) = &src.names {
                let book = lock(n);
                for (a, s) in &mut list {
                    s.name = book.name(a).map(str::to_string);
                }
            }
            list.into_iter()
                .map(|(_, s)| s)
                .collect::<Vec<ServerEntry>>()
        });
        let (published, dns) = match &src.directory {
            Some(d) => {
                let d = lock(d);
                let published = d
                    .relays()
                    .iter()
                    .map(|t| api::relays::published(t, &clock))
                    .collect();
                let records = d
                    .records()
                    .map(|rs| rs.iter().map(api::dns::record).collect())
                    .unwrap_or_default();
                let dns = DnsBody {
                    generated_at: clock.now_secs(),
                    zone: d.origin().to_string(),
                    serial: d.serial(),
                    records,
                };
                (published, Some(dns))
            }
            None => (Vec::new(), None),
        };
        let (update, after) = match &pilots {
            Some(p) => {
                let (u, after) = before.diff(p, clock.now_secs());
                let data = (!u.is_empty()).then(|| serde_json::to_string(&u).unwrap_or_default());
                (data, after)
            }
            None => (None, before),
        };
        let snap = Snapshot {
            seq,
            taken: Some(now),
            clock,
            pilots,
            pilots_json: OnceLock::new(),
            servers,
            relays: RelaysBody {
                generated_at: clock.now_secs(),
                relay: relay_info,
                published,
            },
            dns,
        };
        (snap, update, after)
    }

    /// The relay links now (not from the last snapshot): the admin API shows a
    /// change at once.
    pub(crate) fn links_now(&self) -> Vec<Link> {
        let Some(r) = &self.sources.relay else {
            return Vec::new();
        };
        let engine = lock(r).links();
        self.links(&engine, &wall_clock())
    }

    /// The configured peers in configuration order, each with its engine traffic
    /// when its name resolved; then any engine link no name accounts for.
    fn links(&self, engine: &[relay::LinkView], clock: &Clock) -> Vec<Link> {
        use config::Kind;
        let Some(peers) = &self.sources.peers else {
            return engine.iter().map(|l| api::relays::link(l, clock)).collect();
        };
        let state = lock(peers);
        let mut used = vec![false; engine.len()];
        let mut out = Vec::new();
        for (name, addr) in state.peers.entries() {
            let kind = match name.kind {
                Kind::Relay => relay::LinkKind::Relay,
                Kind::Crossfeed => relay::LinkKind::Crossfeed,
            };
            let found =
                addr.and_then(|a| engine.iter().position(|l| l.kind == kind && l.addr == a));
            match found {
                Some(i) => {
                    used[i] = true;
                    let mut l = api::relays::link(&engine[i], clock);
                    l.name = name.text.clone();
                    out.push(l);
                }
                None => out.push(api::relays::unresolved(kind, &name.text)),
            }
        }
        for (l, u) in engine.iter().zip(used) {
            if !u {
                out.push(api::relays::link(l, clock));
            }
        }
        out
    }

    /// Keeps snapshots coming once a second while any stream is open.
    pub async fn run(self: Arc<Self>, stop: crate::lifecycle::Stop) -> anyhow::Result<()> {
        loop {
            let next = if self.updates.receiver_count() > 0 {
                let s = self.current().await;
                s.taken.unwrap_or_else(Instant::now) + SNAPSHOT_INTERVAL
            } else {
                Instant::now() + Duration::from_millis(250)
            };
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = stop.stopped() => return Ok(()),
            }
        }
    }
}

/// What the API handlers share.
#[derive(Clone)]
pub struct ApiState {
    /// The snapshots.
    pub publisher: Arc<Publisher>,
}

/// An error answer: `code` with `{"error": what}`.
pub(crate) fn error(code: StatusCode, what: impl Into<String>) -> Response {
    (code, Json(ErrorBody::new(what))).into_response()
}

fn not_running(part: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no {part} runs in this process"),
    )
}

/// The query parameters read by `parse`, or the text of why they do not parse.
pub(crate) fn parsed<F>(
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
    parse: fn(&BTreeMap<String, String>) -> Result<F, String>,
) -> Result<F, String> {
    let q = q.map(|Query(m)| m).map_err(|e| e.body_text())?;
    parse(&q)
}

/// Every pilot the relay knows.
#[utoipa::path(get, path = "/api/pilots", tag = "relay",
    params(
        ("callsign" = Option<String>, Query, description = "only this callsign (exact)"),
        ("near" = Option<String>, Query, description = "lat,lon,nm: only pilots within nm nautical miles of the point"),
    ),
    responses(
        (status = 200, description = "the pilots", body = PilotsBody),
        (status = 400, description = "a bad parameter", body = ErrorBody),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
    ))]
pub async fn pilots(
    State(s): State<ApiState>,
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
) -> Response {
    let filter = match parsed(q, PilotFilter::parse) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let snap = s.publisher.current().await;
    let Some(all) = &snap.pilots else {
        return not_running("relay");
    };
    if filter.is_empty() {
        return json_text(snap.pilots_json().to_string());
    }
    Json(PilotsBody {
        generated_at: snap.clock.now_secs(),
        online: all.len(),
        pilots: all.iter().filter(|p| filter.keeps(p)).cloned().collect(),
    })
    .into_response()
}

fn json_text(body: String) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The pilot stream: a `snapshot` event, then one `update` per second with changes.
#[utoipa::path(get, path = "/api/pilots/stream", tag = "relay",
    responses(
        (status = 200, description = "text/event-stream: `snapshot` (data: PilotsBody), then `update` events (data: Update)", content_type = "text/event-stream", body = Update),
        (status = 404, description = "no relay runs in this process", body = ErrorBody),
        (status = 503, description = "too many streams open", body = ErrorBody),
    ))]
pub async fn pilots_stream(
    State(s): State<ApiState>,
    conn: Option<Extension<Streaming>>,
) -> Response {
    let p = &s.publisher;
    if p.sources.relay.is_none() {
        return not_running("relay");
    }
    let Ok(permit) = p.streams.clone().try_acquire_owned() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many pilot streams open; retry later",
        );
    };
    // Subscribe before reading the snapshot: no update between the two is missed.
    let rx = p.updates.subscribe();
    let snap = p.current().await;
    if let Some(Extension(c)) = conn {
        c.start(); // a long response: the connection's idle and lifetime limits step aside
    }
    let first = Event::default()
        .event("snapshot")
        .id(snap.seq.to_string())
        .data(snap.pilots_json());
    let state = StreamState {
        rx,
        last: snap.seq,
        first: Some(first),
        _permit: permit,
    };
    let stream = futures_util::stream::unfold(state, |mut st| async move {
        if let Some(e) = st.first.take() {
            return Some((Ok::<_, Infallible>(e), st));
        }
        loop {
            match st.rx.recv().await {
                Ok(u) if u.seq <= st.last => continue,
                Ok(u) => {
                    st.last = u.seq;
                    let e = Event::default()
                        .event("update")
                        .id(u.seq.to_string())
                        .data(&u.data);
                    return Some((Ok(e), st));
                }
                // Fell behind, or the server stops: end the stream; the client
                // reconnects and starts over from a snapshot.
                Err(_) => return None,
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response()
}

struct StreamState {
    rx: broadcast::Receiver<Arc<StreamUpdate>>,
    last: u64,
    first: Option<Event>,
    _permit: OwnedSemaphorePermit,
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
    State(s): State<ApiState>,
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
) -> Response {
    let filter = match parsed(q, ServerFilter::parse) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let snap = s.publisher.current().await;
    let Some(all) = &snap.servers else {
        return not_running("master");
    };
    Json(ServersBody {
        generated_at: snap.clock.now_secs(),
        total: all.len(),
        servers: all.iter().filter(|s| filter.keeps(s)).cloned().collect(),
    })
    .into_response()
}

/// Relay links and the directory's published relays.
#[utoipa::path(get, path = "/api/relays", tag = "relay",
    responses((status = 200, description = "links and published relays", body = RelaysBody)))]
pub async fn relays(State(s): State<ApiState>) -> Response {
    let snap = s.publisher.current().await;
    Json(snap.relays.clone()).into_response()
}

/// The records the directory publishes now.
#[utoipa::path(get, path = "/api/dns", tag = "dns",
    responses(
        (status = 200, description = "the zone's records", body = DnsBody),
        (status = 404, description = "no directory runs in this process", body = ErrorBody),
    ))]
pub async fn dns(State(s): State<ApiState>) -> Response {
    let snap = s.publisher.current().await;
    match &snap.dns {
        Some(d) => Json(d.clone()).into_response(),
        None => not_running("dns"),
    }
}

/// The process answers.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "alive", body = HealthBody)))]
pub async fn healthz() -> Json<HealthBody> {
    Json(HealthBody {
        status: "ok".into(),
    })
}

/// Whether every configured part serves.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "every part serves", body = ReadyBody),
        (status = 503, description = "some part does not serve yet", body = ReadyBody),
    ))]
pub async fn readyz(State(s): State<ApiState>) -> Response {
    let body = s.publisher.sources.ready.body();
    let code = if body.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

/// The OpenAPI document of every path above.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "lobby",
        description = "The HTTP API of lobby: FlightGear relay, Xash3D master and DNS directory. Times are Unix seconds (UTC), angles degrees, units in the field names; unknown values are null. See docs/API.md."
    ),
    paths(
        pilots,
        pilots_stream,
        servers,
        relays,
        dns,
        healthz,
        readyz,
        crate::http::routes::flights::flights,
        crate::http::routes::flights::flight,
        crate::http::routes::flights::callsign,
        crate::http::routes::flights::server_history,
        crate::http::admin::show,
        crate::http::admin::add,
        crate::http::admin::delete
    ),
    components(schemas(
        PilotsBody,
        Pilot,
        Update,
        ServersBody,
        ServerEntry,
        RelaysBody,
        RelayInfo,
        Link,
        api::relays::Published,
        DnsBody,
        api::dns::DnsRecord,
        HealthBody,
        ReadyBody,
        PartStatus,
        ErrorBody,
        api::flights::FlightsBody,
        api::flights::FlightEntry,
        api::flights::Point,
        api::flights::FlightBody,
        api::flights::TrackFeature,
        api::flights::LineString,
        api::flights::CallsignBody,
        api::flights::AircraftTotals,
        api::flights::ServerHistoryBody,
        api::flights::ServerSamplePoint,
        api::admin::ChangeRequest,
        api::admin::ChangeBody,
        api::admin::ListBody,
        api::admin::ListEntry,
        api::admin::DeletedEntry,
        api::admin::UsersBody,
        api::admin::User,
        api::admin::VersionBody,
        api::admin::UptimeBody,
        api::admin::TrackerBody
    )),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

/// The admin API's bearer tokens, in the document.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// `GET /api/openapi.json`.
pub async fn openapi() -> Response {
    json_text(openapi_json())
}

/// The OpenAPI document as JSON.
pub fn openapi_json() -> String {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc.to_json().unwrap_or_default()
}

/// The API routes, on a router whose state is [`ApiState`].
pub fn routes(state: ApiState) -> axum::Router {
    use axum::routing::get;
    axum::Router::new()
        .route("/api/pilots", get(pilots))
        .route("/api/pilots/stream", get(pilots_stream))
        .route("/api/servers", get(servers))
        .route("/api/relays", get(relays))
        .route("/api/dns", get(dns))
        .route("/api/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(state)
}
