//! One HTTP connection from accept to close, hardened for the public internet with
//! library settings only:
//! - hyper's header-read timer (`header_read_timeout`: a request head, on a fresh
//!   connection or a kept-alive one, must be complete in time), its header size and
//!   count limits (431) and its buffer limit;
//! - tokio-io-timeout's read and write timeouts on the socket (`idle_timeout`: no byte
//!   moved either way for that long closes the connection, so an idle keep-alive
//!   connection, a silent one and a client that stops reading its response all end);
//! - a total lifetime per connection (`connection_timeout`, then a graceful close);
//! - a connection cap shared by every listener of the server and a per-source cap
//!   (per IPv4 address / IPv6 /64: [`udp::ConnLimiter`]), checked in the accept loop:
//!   at either cap the connection that has waited longest for a request head (at
//!   the per-source cap: of that source) is closed for the new one ([`udp::Waiting`]);
//!   only when none waits is it answered `503` (after a second: [`Refusals`]).
//!
//! Every refusal and every timeout is counted ([`HttpStats`], `/stats` → `http`).

use anyhow::Result;
use axum::response::Response;
use config::Limits;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use lifecycle::{accept, Refusals, Stop};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_io_timeout::TimeoutStream;
use tower::ServiceBuilder;
use udp::{ConnLimiter, Place, Refusal, Waiting};

/// The HTTP server's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family of the HTTP server.
        pub const FAMILIES;
        CONNECTIONS = Family::counter("lobby_http_connections_total", "HTTP connections accepted.");
        OPEN_CONNECTIONS = Family::gauge("lobby_http_open_connections", "HTTP connections open now.");
        OPEN_STREAMS = Family::gauge(
            "lobby_http_open_streams",
            "Pilot streams (Server-Sent Events) open now.",
        )
        .elsewhere();
        REQUESTS = Family::counter("lobby_http_requests_total", "HTTP requests answered.");
        EVICTED = Family::counter(
            "lobby_http_connections_evicted_total",
            "HTTP connections closed while waiting for a request head, to make room for a new one at the connection cap.",
        );
        REFUSED = Family::counter(
            "lobby_http_connections_refused_total",
            "HTTP connections refused at accept, by cap (connection_cap, per_ip_cap).",
        )
        .label("reason");
        ACCEPT_ERRORS = Family::counter(
            "lobby_http_accept_errors_total",
            "Failed accepts (descriptor table full, reset before accept).",
        );
        TIMEOUTS = Family::counter(
            "lobby_http_timeouts_total",
            "HTTP connections or requests cut off, by timer (header, idle, connection, request).",
        )
        .label("timer");
        REJECTED = Family::counter(
            "lobby_http_rejected_requests_total",
            "HTTP requests refused, by reason (body_too_large, headers_too_large, bad_request; rate_cheap, rate_normal, rate_heavy: 429 past the source's request_rate, by route class).",
        )
        .label("reason");
        REQUEST_TIME = Family::histogram(
            crate::recorder::HTTP_REQUEST_TIME,
            "Time from a request to its response head, by status code.",
        )
        .label("code")
        .label_doc("`code`: the HTTP status");
    }
}

use families::*;

telemetry::counters! {
    /// Why a connection was refused or ended early; each is a counter in `/stats`.
    pub enum Reason;
    /// One counter per [`Reason`] (a part of [`HttpStats`]).
    pub struct Reasons;
    /// Refused at accept: every place is taken.
    RefusedFull => "refused_connection_cap", REFUSED["connection_cap"];
    /// Refused at accept: its source has its share.
    RefusedPerIp => "refused_per_ip_cap", REFUSED["per_ip_cap"];
    /// Closed while waiting for a request head, for a new connection at a cap.
    Evicted => "evicted_waiting", EVICTED;
    /// The accept itself failed.
    AcceptErrors => "accept_errors", ACCEPT_ERRORS;
    /// The request head did not arrive in time.
    HeaderTimeout => "header_timeouts", TIMEOUTS["header"];
    /// Nothing moved either way for `idle_timeout`.
    IdleTimeout => "idle_timeouts", TIMEOUTS["idle"];
    /// The connection outlived `connection_timeout`.
    ConnectionTimeout => "connection_timeouts", TIMEOUTS["connection"];
    /// A request outlived `request_timeout` (408).
    RequestTimeout => "request_timeouts", TIMEOUTS["request"];
    /// A body over `max_request_bytes` (413).
    BodyTooLarge => "body_too_large", REJECTED["body_too_large"];
    /// A head over the header limits (431).
    HeadersTooLarge => "headers_too_large", REJECTED["headers_too_large"];
    /// Not HTTP/1.1.
    BadRequest => "bad_requests", REJECTED["bad_request"];
    /// Past its source's `request_rate` (429), a 1-unit route.
    RateCheap => "rate_limited_cheap", REJECTED["rate_cheap"];
    /// Past its source's `request_rate` (429), a 4-unit route.
    RateNormal => "rate_limited_normal", REJECTED["rate_normal"];
    /// Past its source's `request_rate` (429), a 25-unit route.
    RateHeavy => "rate_limited_heavy", REJECTED["rate_heavy"];
}

telemetry::fields! {
    /// The HTTP server's own counters.
    pub struct HttpStats in FAMILIES {
        /// Connections accepted.
        pub connections => CONNECTIONS;
        /// Connections open now (gauge).
        pub open => OPEN_CONNECTIONS;
        /// Requests answered.
        pub requests => REQUESTS;
    }
    tail reasons: Reasons;
}

impl HttpStats {
    /// Counts one `r`.
    pub fn count(&self, r: Reason) {
        self.reasons.incr(r);
    }
}

/// Put in every request's extensions: a handler that answers with a long-lived
/// stream marks its connection, whose idle read timer and total lifetime then no
/// longer apply (the write timeout still does: a client that stops reading is cut).
#[derive(Clone, Default)]
pub struct Streaming(Arc<AtomicBool>);

impl Streaming {
    /// Marks the connection as streaming until the guard is dropped (the stream's
    /// body ends or is dropped): a kept-alive connection is then under the idle and
    /// lifetime limits again (issue 20, item 4: the flag never reset).
    pub fn start(&self) -> StreamingGuard {
        self.0.store(true, Ordering::Relaxed);
        StreamingGuard(self.clone())
    }

    pub(crate) fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Ends a connection's streaming when dropped.
pub struct StreamingGuard(Streaming);

impl Drop for StreamingGuard {
    fn drop(&mut self) {
        (self.0).0.store(false, Ordering::Relaxed);
    }
}

/// hyper's smallest allowed read buffer.
const MIN_BUF: usize = 8192;

/// Headers per request, at most (hyper answers 431 past it).
const MAX_HEADERS: usize = 64;

/// What a connection refused at accept gets: one write.
const REFUSED_REPLY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\nretry-after: 1\r\n\r\n";

/// What the accept loops of one server share.
pub struct Shared {
    /// The configured limits.
    pub limits: Limits,
    /// The counters.
    pub stats: Arc<HttpStats>,
    /// Open connections, in total and per source.
    pub open: ConnLimiter,
    /// Connections waiting for a request head, oldest first.
    pub waiting: Waiting,
}

/// One request handler stack, cloned into every connection.
pub type Handler =
    tower::util::BoxCloneService<hyper::Request<hyper::body::Incoming>, Response, Infallible>;

/// Accepts until the stop signal; each connection gets its own task (at most
/// `max_connections` over every listener), and they get a few seconds to finish
/// when the server stops.
pub async fn accept_loop(
    l: TcpListener,
    handler: Handler,
    shared: Arc<Shared>,
    stop: Stop,
) -> Result<()> {
    let mut conns = JoinSet::new();
    loop {
        let (tcp, peer) = tokio::select! {
            c = accept(&l, "HTTP", || shared.stats.count(Reason::AcceptErrors)) => c,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            _ = stop.stopped() => break,
        };
        let slot = match shared.waiting.admit(&shared.open, peer.ip()) {
            Ok((slot, made_room)) => {
                if made_room {
                    shared.stats.count(Reason::Evicted);
                }
                slot
            }
            Err(Refusal::Total) => {
                refuse(tcp, peer, Reason::RefusedFull, &shared.stats);
                continue;
            }
            Err(Refusal::PerSource) => {
                refuse(tcp, peer, Reason::RefusedPerIp, &shared.stats);
                continue;
            }
        };
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let cut = Arc::new(tokio::sync::Notify::new());
        let told = cut.clone();
        let conn = Conn {
            peer,
            shared: shared.clone(),
            place: Place::new(slot, move || told.notify_one()),
            cut,
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

/// Answers a connection past a cap with a `503` after a second (1,024 at most wait).
fn refuse(tcp: TcpStream, peer: SocketAddr, why: Reason, stats: &HttpStats) {
    static HELD: Refusals = Refusals::new(1024, Duration::from_secs(1));
    stats.count(why);
    tracing::debug!(%peer, reason = why.name(), "HTTP connection refused");
    HELD.refuse(tcp, REFUSED_REPLY);
}

/// One accepted connection, holding its places under the caps until it ends (or
/// until its place is taken back while it waits for a request head: `cut`).
struct Conn {
    peer: SocketAddr,
    shared: Arc<Shared>,
    place: Arc<Place>,
    cut: Arc<tokio::sync::Notify>,
}

impl Conn {
    async fn serve(self, tcp: TcpStream, handler: Handler, stop: Stop) {
        let limits = self.shared.limits;
        let stats = &self.shared.stats;
        stats.open.fetch_add(1, Ordering::Relaxed);
        let _ = tcp.set_nodelay(true);
        let hangup = lifecycle::hangup::Hangup::watch(&tcp);
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
        // Waiting for a head from the start and again once a response is made (but
        // not while streaming: streams have caps of their own).
        let waiting = &self.shared.waiting;
        waiting.enter(&self.place);
        let (w, p) = (waiting.clone(), self.place.clone());
        let (w2, p2, flag2) = (waiting.clone(), self.place.clone(), streaming.clone());
        let handler = ServiceBuilder::new()
            .map_request(move |mut r: hyper::Request<hyper::body::Incoming>| {
                w.leave(&p);
                r.extensions_mut().insert(flag.clone());
                r.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                r
            })
            .map_response(move |r: Response| {
                if !flag2.is_on() {
                    w2.enter(&p2);
                }
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
                _ = self.cut.notified() => break (Ok(()), Some(Reason::Evicted), false),
                // The client closed a stream it was reading (issue 29, item 6: its
                // stream slot was held until a keep-alive write failed, ~30 s).
                _ = hangup.closed_while(|| streaming.is_on()) => {
                    tracing::debug!(peer = %self.peer, "HTTP stream closed by the client");
                    break (Ok(()), None, false);
                }
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
            if why != Reason::Evicted {
                stats.count(why); // (an eviction is counted where it is decided)
            }
            tracing::debug!(peer = %self.peer, reason = why.name(), "HTTP connection closed");
        }
        if let (Err(e), None) = (&result, ended) {
            let why = classify(e);
            if let Some(why) = why {
                stats.count(why);
            }
            tracing::debug!(peer = %self.peer, reason = why.map_or("error", Reason::name), error = %e, "HTTP connection ended");
        }
        // Out of the queue for good, even if a response that finished late queued
        // it again (a place left queued would hold its slot until it was cut).
        waiting.done(&self.place);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_http_counter_has_a_metric_series_of_its_own() {
        assert_eq!(HttpStats::TABLE.problems(), vec![]);
        let keys: Vec<_> = HttpStats::default()
            .snapshot()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys[..3], ["connections", "open", "requests"]);
        assert_eq!(keys.len(), 3 + Reason::COUNT);
    }
}
