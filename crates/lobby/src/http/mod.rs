//! The HTTP listener shared by every part: the Xash3D engine's static server list
//! (`GET /v1/servers/<gamedir>`) from a snapshot of the master's table, `/stats`,
//! `/metrics` (`parts::metrics`), the JSON API (`http::snapshot`) and the page
//! (`http::routes::web`).
//!
//! Hardened for the public internet with library settings only:
//! - hyper's header-read timer (`header_read_timeout`: a request head, on a fresh
//!   connection or a kept-alive one, must be complete in time), its header size and
//!   count limits (431) and its buffer limit;
//! - tokio-io-timeout's read and write timeouts on the socket (`idle_timeout`: no byte
//!   moved either way for that long closes the connection, so an idle keep-alive
//!   connection, a silent one and a client that stops reading its response all end);
//! - a total lifetime per connection (`connection_timeout`, then a graceful close);
//! - tower-http's `TimeoutLayer` (408) and `RequestBodyLimitLayer` (413);
//! - a connection cap (a semaphore shared by every listener of the server) and a
//!   per-source cap (per IPv4 address / IPv6 /64), checked in the accept loop: a
//!   connection past either is answered `503` and closed at once.
//!
//! Every refusal and every timeout is counted in `/stats` under `http`.

pub mod admin;
pub mod metrics;
pub mod routes;
pub mod snapshot;

use crate::lifecycle::{listening, lock, tcp_listener, Stop, Supervisor};
use anyhow::Result;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use config::Limits;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_io_timeout::TimeoutStream;
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// What the HTTP handlers read.
#[derive(Clone, Default)]
pub struct Sources {
    /// The master, when this process runs one.
    pub master: Option<Arc<Mutex<master::Engine>>>,
    /// The relay, when this process runs one.
    pub relay: Option<Arc<Mutex<relay::Engine>>>,
    /// The directory, when this process runs one.
    pub directory: Option<Arc<Mutex<directory::Directory>>>,
    /// Worker restarts per part (see `lifecycle`).
    pub restarts: Option<crate::lifecycle::RestartCounts>,
    /// The relay's configured peer names and their addresses.
    pub peers: Option<Arc<Mutex<crate::services::relay::peers::PeerState>>>,
    /// The master's listed servers' names, when it asks for them.
    pub names: Option<crate::services::master::names::Names>,
    /// The flight log, when this process keeps one.
    pub history: Option<crate::services::history::History>,
    /// The tracker server's counters, when it runs here.
    pub tracker: Option<Arc<crate::services::tracker::server::TrackerStats>>,
    /// Each part's readiness (`/readyz`).
    pub ready: crate::http::snapshot::Readiness,
    /// The admin API (`/api/admin/`), answering 404 while it is off.
    pub admin: Option<Arc<crate::http::admin::Admin>>,
}

/// Put in every request's extensions: a handler that answers with a long-lived
/// stream marks its connection, whose idle read timer and total lifetime then no
/// longer apply (the write timeout still does: a client that stops reading is cut).
#[derive(Clone, Default)]
pub struct Streaming(Arc<AtomicBool>);

impl Streaming {
    /// Marks the connection as streaming.
    pub fn start(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// hyper's smallest allowed read buffer.
const MIN_BUF: usize = 8192;

/// Headers per request, at most (hyper answers 431 past it).
const MAX_HEADERS: usize = 64;

/// Why a connection was refused or ended early; each is a counter in `/stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    RefusedFull,
    RefusedPerIp,
    AcceptErrors,
    HeaderTimeout,
    IdleTimeout,
    ConnectionTimeout,
    RequestTimeout,
    BodyTooLarge,
    HeadersTooLarge,
    BadRequest,
}

impl Reason {
    const ALL: [Reason; 10] = [
        Reason::RefusedFull,
        Reason::RefusedPerIp,
        Reason::AcceptErrors,
        Reason::HeaderTimeout,
        Reason::IdleTimeout,
        Reason::ConnectionTimeout,
        Reason::RequestTimeout,
        Reason::BodyTooLarge,
        Reason::HeadersTooLarge,
        Reason::BadRequest,
    ];

    fn name(self) -> &'static str {
        match self {
            Reason::RefusedFull => "refused_connection_cap",
            Reason::RefusedPerIp => "refused_per_ip_cap",
            Reason::AcceptErrors => "accept_errors",
            Reason::HeaderTimeout => "header_timeouts",
            Reason::IdleTimeout => "idle_timeouts",
            Reason::ConnectionTimeout => "connection_timeouts",
            Reason::RequestTimeout => "request_timeouts",
            Reason::BodyTooLarge => "body_too_large",
            Reason::HeadersTooLarge => "headers_too_large",
            Reason::BadRequest => "bad_requests",
        }
    }
}

/// The HTTP server's own counters.
#[derive(Debug, Default)]
struct HttpStats {
    connections: AtomicU64,
    open: AtomicU64,
    requests: AtomicU64,
    reasons: [AtomicU64; Reason::ALL.len()],
}

impl HttpStats {
    fn count(&self, r: Reason) {
        self.reasons[r as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// (name, value) of every counter, as `/stats` and `/metrics` show them.
    pub(crate) fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = [
            ("connections", &self.connections),
            ("open", &self.open),
            ("requests", &self.requests),
        ]
        .into_iter()
        .map(|(k, c)| (k, c.load(Ordering::Relaxed)))
        .collect();
        for r in Reason::ALL {
            v.push((r.name(), self.reasons[r as usize].load(Ordering::Relaxed)));
        }
        v
    }

    fn snapshot(&self) -> serde_json::Map<String, serde_json::Value> {
        self.counters()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect()
    }
}

/// The `/v1/servers/<gamedir>` bodies of one version of the master's table.
#[derive(Debug, Default)]
struct ListSnapshot {
    version: u64,
    /// One body per game directory present; any other gamedir gets an empty list.
    /// `Bytes`: each response shares the body instead of copying it.
    by_gamedir: HashMap<Box<[u8]>, Bytes>,
}

impl ListSnapshot {
    /// Builds the bodies from a copy of the table (outside any lock): one `ip <addr>`
    /// line per server, in the table's address order (IPv6 bracketed).
    fn build(version: u64, servers: &[(SocketAddr, Box<[u8]>)]) -> ListSnapshot {
        let mut text: HashMap<Box<[u8]>, String> = HashMap::new();
        for (addr, gamedir) in servers {
            let t = text.entry(gamedir.clone()).or_default();
            t.push_str("ip ");
            t.push_str(&addr.to_string());
            t.push('\n');
        }
        ListSnapshot {
            version,
            by_gamedir: text.into_iter().map(|(g, t)| (g, Bytes::from(t))).collect(),
        }
    }

    fn body(&self, gamedir: &str) -> Bytes {
        self.by_gamedir
            .get(gamedir.as_bytes())
            .cloned()
            .unwrap_or_default()
    }
}

/// The current list snapshot, rebuilt only when the master's table version moved.
#[derive(Default)]
struct ListCache {
    current: Mutex<Option<Arc<ListSnapshot>>>,
}

impl ListCache {
    /// The snapshot for the table as it is now. The master's lock is held only to
    /// compare the version and, when it moved, to copy (address, gamedir) pairs.
    fn get(&self, m: &Mutex<master::Engine>) -> Arc<ListSnapshot> {
        let have = lock(&self.current).clone();
        let copied = {
            let e = lock(m);
            let t = e.table();
            if let Some(s) = have.as_ref().filter(|s| s.version == t.version()) {
                return s.clone();
            }
            let servers: Vec<(SocketAddr, Box<[u8]>)> =
                t.iter().map(|(a, s, _)| (a, s.gamedir.clone())).collect();
            (t.version(), servers)
        };
        let snap = Arc::new(ListSnapshot::build(copied.0, &copied.1));
        let mut cur = lock(&self.current);
        // Two requests may rebuild at once: keep the newer table's snapshot.
        if cur.as_ref().is_none_or(|c| c.version < snap.version) {
            *cur = Some(snap.clone());
        }
        snap
    }
}

/// What the handlers share.
#[derive(Clone)]
struct App {
    sources: Sources,
    stats: Arc<HttpStats>,
    lists: Arc<ListCache>,
    publisher: Arc<crate::http::snapshot::Publisher>,
}

async fn servers(State(app): State<App>, Path(gamedir): Path<String>) -> Response {
    let Some(m) = &app.sources.master else {
        return (StatusCode::NOT_FOUND, "no master runs in this process\n").into_response();
    };
    let body = app.lists.get(m).body(&gamedir);
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

async fn stats(State(app): State<App>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        stats_json(&app).to_string(),
    )
        .into_response()
}

/// Every part's counters, as `/stats` serves them.
fn stats_json(app: &App) -> serde_json::Value {
    let src = &app.sources;
    let mut obj = serde_json::Map::new();
    if let Some(r) = &src.relay {
        let e = lock(r);
        let m: serde_json::Map<String, serde_json::Value> = e
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("relay".into(), m.into());
    }
    if let Some(m) = &src.master {
        let e = lock(m);
        let c: serde_json::Map<String, serde_json::Value> = e
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("master".into(), c.into());
    }
    if let Some(d) = &src.directory {
        let c: serde_json::Map<String, serde_json::Value> = lock(d)
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("dns".into(), c.into());
    }
    if let Some(h) = &src.history {
        let c: serde_json::Map<String, serde_json::Value> = h
            .stats
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("history".into(), c.into());
    }
    if let Some(t) = &src.tracker {
        let c: serde_json::Map<String, serde_json::Value> = t
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("tracker".into(), c.into());
    }
    if let Some(r) = &src.restarts {
        let c: serde_json::Map<String, serde_json::Value> = lock(r)
            .iter()
            .map(|(k, v)| (k.clone(), (*v).into()))
            .collect();
        obj.insert("worker_restarts".into(), c.into());
    }
    if let Some(a) = src.admin.as_ref().filter(|a| a.is_on()) {
        let c: serde_json::Map<String, serde_json::Value> = a
            .stats
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("admin".into(), c.into());
    }
    obj.insert("http".into(), app.stats.snapshot().into());
    serde_json::Value::Object(obj)
}

/// The Prometheus exposition (`parts::metrics`).
async fn metrics(State(app): State<App>) -> Response {
    let snap = app.publisher.current().await;
    let gamedirs = snap
        .servers()
        .map(|s| s.iter().map(|e| e.gamedir.as_str()).collect());
    let relays_up = app.sources.directory.as_ref().map(|_| {
        let up = snap.published().iter().filter(|r| r.up).count();
        (up, snap.published().len() - up)
    });
    let scrape = crate::http::metrics::Scrape {
        http: app.stats.counters(),
        open_streams: app.publisher.open_streams(),
        gamedirs,
        relays_up,
    };
    match crate::http::metrics::render(&app.sources, scrape) {
        Some(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "no metrics recorder in this process\n",
        )
            .into_response(),
    }
}

async fn mpservers(State(app): State<App>) -> Response {
    let Some(d) = &app.sources.directory else {
        return (StatusCode::NOT_FOUND, "no directory runs in this process\n").into_response();
    };
    let body = lock(d).mpservers_xml();
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Open connections per IPv4 address / IPv6 /64.
#[derive(Default)]
struct PerIp {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection's place in [`PerIp`], given back on drop.
struct IpSlot {
    table: Arc<PerIp>,
    key: IpAddr,
}

fn ip_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

impl PerIp {
    /// A place for one more connection from `ip`, unless it has `max` already.
    fn acquire(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<IpSlot> {
        let key = ip_key(ip);
        let mut open = lock(&self.open);
        let n = open.entry(key).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(IpSlot {
            table: self.clone(),
            key,
        })
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut open = lock(&self.table.open);
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// What a connection refused at accept gets: one write, never waited on.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\nretry-after: 1\r\n\r\n";

/// What the accept loops of one server share.
struct Shared {
    limits: Limits,
    stats: Arc<HttpStats>,
    slots: Arc<Semaphore>,
    per_ip: Arc<PerIp>,
}

/// One request handler stack, cloned into every connection.
type Handler =
    tower::util::BoxCloneService<hyper::Request<hyper::body::Incoming>, Response, Infallible>;

/// The request handlers with their tower layers (outermost first): the codes the
/// layers answer with (413, 408) are counted on the way out.
fn handler(app: App, limits: &Limits) -> Handler {
    let counters = app.stats.clone();
    let history = app.sources.history.clone();
    let api = crate::http::snapshot::routes(crate::http::snapshot::ApiState {
        publisher: app.publisher.clone(),
    });
    let admin = app.sources.admin.clone().map(|admin| {
        let a = app.clone();
        crate::http::admin::routes(crate::http::admin::AdminState {
            admin,
            sources: app.sources.clone(),
            publisher: app.publisher.clone(),
            stats: Arc::new(move || stats_json(&a)),
        })
    });
    let router = Router::new()
        .route("/v1/servers/{gamedir}", get(servers))
        .route("/stats", get(stats))
        .route("/metrics", get(metrics))
        .route("/mpservers.xml", get(mpservers))
        .route("/mpstatus/mpservers.xml", get(mpservers))
        .with_state(app)
        .merge(api)
        .merge(crate::http::routes::flights::routes(
            crate::http::routes::flights::HistoryState {
                history: history.clone(),
            },
        ))
        .merge(crate::http::routes::web::routes());
    let router = match admin {
        Some(a) => router.merge(a),
        None => router,
    };
    let svc = ServiceBuilder::new()
        .map_response(move |r: hyper::Response<_>| {
            counters.requests.fetch_add(1, Ordering::Relaxed);
            match r.status() {
                StatusCode::PAYLOAD_TOO_LARGE => counters.count(Reason::BodyTooLarge),
                StatusCode::REQUEST_TIMEOUT => counters.count(Reason::RequestTimeout),
                _ => {}
            }
            r.map(axum::body::Body::new)
        })
        // Request time until the response head, by status code (a stream's head
        // goes out at once; its length is not a request time).
        .layer(
            TraceLayer::new_for_http()
                .on_request(())
                .on_failure(())
                .on_response(
                    |r: &hyper::Response<_>, took: Duration, _: &tracing::Span| {
                        ::metrics::histogram!(
                            crate::recorder::HTTP_REQUEST_TIME,
                            "code" => r.status().as_u16().to_string()
                        )
                        .record(took.as_secs_f64());
                    },
                ),
        )
        .layer(RequestBodyLimitLayer::new(limits.max_request_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .service(router);
    tower::util::BoxCloneService::new(svc)
}

/// Accepts until the stop signal; each connection gets its own task (at most
/// `max_connections` over every listener), and they get a few seconds to finish
/// when the server stops.
async fn accept_loop(
    l: TcpListener,
    handler: Handler,
    shared: Arc<Shared>,
    stop: Stop,
) -> Result<()> {
    let mut conns = JoinSet::new();
    loop {
        let (tcp, peer) = tokio::select! {
            r = l.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was accepted:
                    // pause a little so a full descriptor table is no busy loop.
                    shared.stats.count(Reason::AcceptErrors);
                    tracing::warn!(error = %e, "HTTP accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            _ = stop.stopped() => break,
        };
        let Ok(permit) = shared.slots.clone().try_acquire_owned() else {
            refuse(tcp, peer, Reason::RefusedFull, &shared.stats);
            continue;
        };
        let Some(slot) = shared
            .per_ip
            .acquire(peer.ip(), shared.limits.max_connections_per_ip)
        else {
            refuse(tcp, peer, Reason::RefusedPerIp, &shared.stats);
            continue;
        };
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let conn = Conn {
            peer,
            shared: shared.clone(),
            _permit: permit,
            _slot: slot,
        };
        conns.spawn(conn.serve(tcp, handler.clone(), stop.clone()));
    }
    let drained = tokio::time::timeout(Duration::from_secs(3), async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = conns.len(),
            "HTTP connections still open at stop; closing them"
        );
    }
    Ok(())
}

/// Answers a connection past a cap with one non-blocking write of a `503`, then
/// closes it.
fn refuse(tcp: TcpStream, peer: SocketAddr, why: Reason, stats: &HttpStats) {
    stats.count(why);
    tracing::debug!(%peer, reason = why.name(), "HTTP connection refused");
    let _ = tcp.try_write(REFUSED);
}

/// One accepted connection, holding its places under the caps until it ends.
struct Conn {
    peer: SocketAddr,
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
    _slot: IpSlot,
}

impl Conn {
    async fn serve(self, tcp: TcpStream, handler: Handler, stop: Stop) {
        let limits = self.shared.limits;
        let stats = &self.shared.stats;
        stats.open.fetch_add(1, Ordering::Relaxed);
        let _ = tcp.set_nodelay(true);
        let mut io = TimeoutStream::new(tcp);
        io.set_read_timeout(Some(limits.idle_timeout));
        io.set_write_timeout(Some(limits.idle_timeout));
        let idle = Arc::new(AtomicBool::new(false));
        let streaming = Streaming::default();
        let io = TokioIo::new(Watched {
            inner: Box::pin(io),
            timed_out: idle.clone(),
            streaming: streaming.clone(),
        });
        let flag = streaming.clone();
        let peer = self.peer;
        let handler = ServiceBuilder::new()
            .map_request(move |mut r: hyper::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(flag.clone());
                r.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                r
            })
            .service(handler);
        let mut b = hyper::server::conn::http1::Builder::new();
        b.timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .keep_alive(true)
            // No read while a response is written: the idle timer then measures the
            // client's silence between requests, not the length of a download.
            .half_close(true)
            .max_headers(MAX_HEADERS)
            .max_header_size(limits.max_header_bytes)
            .max_buf_size(limits.max_header_bytes.saturating_mul(2).max(MIN_BUF));
        let conn = b.serve_connection(io, TowerToHyperService::new(handler));
        tokio::pin!(conn);
        let lifetime = tokio::time::sleep(limits.connection_timeout);
        tokio::pin!(lifetime);
        let mut lifetime_over = false;
        let (result, ended, close) = loop {
            tokio::select! {
                r = conn.as_mut() => break (r, None, false),
                _ = &mut lifetime, if !lifetime_over => {
                    if streaming.is_on() {
                        lifetime_over = true; // a stream lives as long as its client reads
                        continue;
                    }
                    break (Ok(()), Some(Reason::ConnectionTimeout), true);
                }
                _ = stop.stopped() => break (Ok(()), None, true),
            }
        };
        let result = if close {
            // Finish the response in flight (if any), then close.
            conn.as_mut().graceful_shutdown();
            match tokio::time::timeout(limits.idle_timeout, conn.as_mut()).await {
                Ok(r) => r,
                Err(_) => Ok(()),
            }
        } else {
            result
        };
        // hyper ends an idle connection whose read failed as if the client had
        // closed it: the idle timer's own flag tells the two apart.
        let ended = ended.or(idle.load(Ordering::Relaxed).then_some(Reason::IdleTimeout));
        if let Some(why) = ended {
            stats.count(why);
            tracing::debug!(peer = %self.peer, reason = why.name(), "HTTP connection closed");
        }
        if let (Err(e), None) = (&result, ended) {
            let why = classify(e);
            if let Some(why) = why {
                stats.count(why);
            }
            tracing::debug!(peer = %self.peer, reason = why.map_or("error", Reason::name), error = %e, "HTTP connection ended");
        }
        stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Which counter a connection error belongs to (`None`: a client that went away).
fn classify(e: &hyper::Error) -> Option<Reason> {
    if e.is_timeout() {
        return Some(Reason::HeaderTimeout);
    }
    if e.is_parse_too_large() {
        return Some(Reason::HeadersTooLarge);
    }
    if e.is_parse() {
        return Some(Reason::BadRequest);
    }
    None
}

/// The socket with its idle timers, noting when one fired (everything else passes
/// straight through).
struct Watched {
    inner: Pin<Box<TimeoutStream<TcpStream>>>,
    timed_out: Arc<AtomicBool>,
    streaming: Streaming,
}

impl Watched {
    fn note<T>(&self, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Err(e)) = &r {
            if e.kind() == io::ErrorKind::TimedOut {
                self.timed_out.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut r = self.inner.as_mut().poll_read(cx, buf);
        if self.streaming.is_on()
            && matches!(&r, Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::TimedOut)
        {
            // A streaming client sends nothing while it reads: polling again arms
            // the read timer afresh (and waits for the socket).
            r = self.inner.as_mut().poll_read(cx, buf);
        }
        self.note(r)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = self.inner.as_mut().poll_write(cx, buf);
        self.note(r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = self.inner.as_mut().poll_write_vectored(cx, bufs);
        self.note(r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = self.inner.as_mut().poll_flush(cx);
        self.note(r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = self.inner.as_mut().poll_shutdown(cx);
        self.note(r)
    }
}

/// A running HTTP listener.
pub struct HttpServer {
    /// Bound addresses.
    pub addrs: Vec<SocketAddr>,
}

impl HttpServer {
    /// Binds, prints `listening http tcp ADDR` lines, serves under `sup` until its stop
    /// signal (then finishes the requests in flight, for at most a few seconds).
    pub async fn start(
        sup: &Supervisor,
        listen: &[SocketAddr],
        limits: Limits,
        sources: Sources,
    ) -> Result<HttpServer> {
        let stats = Arc::new(HttpStats::default());
        let publisher = crate::http::snapshot::Publisher::new(sources.clone(), limits.max_streams);
        sup.spawn_task("http", publisher.clone().run(sup.stop().clone()));
        sup.spawn_task("http", crate::recorder::upkeep(sup.stop().clone()));
        let app = App {
            sources,
            stats: stats.clone(),
            lists: Arc::new(ListCache::default()),
            publisher,
        };
        let handler = handler(app, &limits);
        let shared = Arc::new(Shared {
            limits,
            stats,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            per_ip: Arc::new(PerIp::default()),
        });
        let mut addrs = Vec::new();
        for &a in listen {
            let l = tcp_listener(a, "HTTP")?;
            let bound = l.local_addr()?;
            listening("http", "tcp", bound);
            listening("web", "http", bound); // the page, at `/`
            addrs.push(bound);
            let (shared, stop) = (shared.clone(), sup.stop().clone());
            sup.spawn_task("http", accept_loop(l, handler.clone(), shared, stop));
        }
        Ok(HttpServer { addrs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_snapshot_is_rebuilt_only_when_the_table_moved() {
        let now = std::time::Instant::now();
        let e = master::Engine::new(
            master::Config::default(),
            Arc::new(master::Stats::default()),
            [7; 32],
            now,
        );
        let m = Mutex::new(e);
        let cache = ListCache::default();
        let a = cache.get(&m);
        let b = cache.get(&m);
        assert!(Arc::ptr_eq(&a, &b), "same version: the same snapshot");
        assert!(a.body("valve").is_empty());
        // A server registers (heartbeat, challenge, info): a new snapshot lists it.
        let from: SocketAddr = "192.0.2.7:27015".parse().unwrap();
        let mut out = master::Outbox::new();
        lock(&m).handle(&[0x71, 0xff, 1, 2, 3, 4], from, now, &mut out);
        let reply = out.iter().next().unwrap().payload.to_vec();
        let c = xash::master::ChallengeReply::decode(&reply).unwrap();
        out.clear();
        let info = format!(
            "0\n\\protocol\\49\\challenge\\{}\\players\\1\\max\\8\\bots\\0\\gamedir\\valve\\map\\c1a0\\type\\d\\password\\0\\os\\l\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0",
            c.master_challenge
        );
        lock(&m).handle(info.as_bytes(), from, now, &mut out);
        assert_eq!(lock(&m).table().len(), 1);
        let c = cache.get(&m);
        assert!(!Arc::ptr_eq(&a, &c), "the table moved: a new snapshot");
        assert_eq!(&c.body("valve")[..], b"ip 192.0.2.7:27015\n");
        assert!(Arc::ptr_eq(&c, &cache.get(&m)));
    }

    #[test]
    fn every_http_counter_has_a_metric_series_of_its_own() {
        use crate::http::metrics::{family, http_series};
        let mut seen = std::collections::HashSet::new();
        for (k, _) in HttpStats::default().counters() {
            let s = http_series(k);
            assert!(family(s.family).is_some(), "{k}: no family {}", s.family);
            assert!(seen.insert(s), "{k}: {s:?} twice");
        }
    }

    #[test]
    fn ip_keys_group_ipv6_by_64_and_unmap_ipv4() {
        let k = |s: &str| ip_key(s.parse().unwrap());
        assert_eq!(k("2001:db8:1:2:3:4:5:6"), k("2001:db8:1:2:ffff::1"));
        assert_ne!(k("2001:db8:1:2::1"), k("2001:db8:1:3::1"));
        assert_eq!(k("::ffff:192.0.2.1"), k("192.0.2.1"));
        assert_ne!(k("192.0.2.1"), k("192.0.2.2"));
    }

    #[test]
    fn per_ip_places_are_given_back() {
        let t = Arc::new(PerIp::default());
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let a = t.acquire(ip, 2).unwrap();
        let _b = t.acquire(ip, 2).unwrap();
        assert!(t.acquire(ip, 2).is_none());
        drop(a);
        assert!(t.acquire(ip, 2).is_some());
        drop(_b);
        assert!(lock(&t.open).is_empty(), "no entry left for a gone source");
    }

    proptest! {
        /// Every server appears in its gamedir's body exactly once, in table order,
        /// and in no other.
        #[test]
        fn snapshot_bodies_hold_each_server_once(
            servers in proptest::collection::btree_map(
                (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, p)| SocketAddr::from((ip, p))),
                prop_oneof![Just(b"valve".to_vec()), Just(b"cstrike".to_vec()), proptest::collection::vec(any::<u8>(), 0..8)],
                0..64,
            )
        ) {
            let list: Vec<(SocketAddr, Box<[u8]>)> =
                servers.iter().map(|(a, g)| (*a, g.clone().into_boxed_slice())).collect();
            let snap = ListSnapshot::build(3, &list);
            prop_assert_eq!(snap.version, 3);
            let mut seen = 0;
            for (g, body) in &snap.by_gamedir {
                let want: String = list
                    .iter()
                    .filter(|(_, sg)| sg == g)
                    .map(|(a, _)| format!("ip {a}\n"))
                    .collect();
                prop_assert_eq!(&body[..], want.as_bytes());
                seen += body.iter().filter(|&&b| b == b'\n').count();
            }
            prop_assert_eq!(seen, list.len());
        }
    }
}
