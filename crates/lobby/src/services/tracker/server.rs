//! `lobby tracker`: the server side of the fgms tracker link (FlightGear's
//! fgtracker), so a network of fgms or lobby relays can report its pilots here and
//! the flight log records them. The protocol is `tracker::server::ServerConn`; this
//! is its TCP driver:
//!
//! - only relays listed in `[[tracker.relay]]` (by source address) are identified,
//!   under the name configured there; anyone else gets fgtracker's refusal and a
//!   warning line naming the source;
//! - at most [`MAX_CONNECTIONS`] connections, [`MAX_PER_IP`] per source (an IPv4
//!   address or an IPv6 /64, as every listener counts);
//!   identification within 20 s, PINGs on silence and a close after 240 s (the
//!   protocol's timers), a write gives up after `[tracker] write_timeout`;
//! - each acknowledged message becomes flight log reports (CONNECT begins a flight,
//!   POSITION samples it, DISCONNECT ends it); when a relay's connection ends, its
//!   open flights end at their last position.

use crate::services::history::{History, Input};
use anyhow::Result;
use config::TrackerServerOptions;
use flightlog::tracked::report;
use lifecycle::{accept, listening, tcp_listener, Stop, Supervisor};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracker::admission::{admit, Refused};
use tracker::server::{Event, ServerConfig, ServerConn};
use udp::{ConnLimiter, Refusal};

/// Connections at once, at most.
pub const MAX_CONNECTIONS: usize = 256;
/// Connections at once from one address, at most.
pub const MAX_PER_IP: usize = 4;

/// The tracker server's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family of the tracker server.
        pub const FAMILIES;
        CONNECTIONS = Family::counter("lobby_tracker_connections_total", "Tracker connections accepted.");
        REFUSED = Family::counter(
            "lobby_tracker_refused_total",
            "Tracker connections refused, by reason (connection_cap, not_allowed).",
        )
        .label("reason");
        MESSAGES = Family::counter("lobby_tracker_messages_total", "Tracker messages acknowledged.");
        LINES = Family::counter("lobby_tracker_lines_total", "Tracker lines recorded.");
        FATAL_CLOSES = Family::counter(
            "lobby_tracker_fatal_closes_total",
            "Tracker connections closed on a line fgtracker treats as fatal.",
        );
        RELAYS_CONNECTED = Family::gauge(
            "lobby_tracker_relays_connected",
            "Relays identified and connected to the tracker now.",
        );
    }
}

telemetry::fields! {
    /// The tracker server's counters (`/stats` → `tracker`).
    pub struct TrackerStats in families::FAMILIES {
        /// Connections accepted.
        pub connections => families::CONNECTIONS;
        /// Connections refused at accept (a cap).
        pub refused_cap => families::REFUSED["connection_cap"];
        /// Connections from an unlisted source (closed at accept) and
        /// identifications refused (a wrong or missing secret).
        pub refused_ident => families::REFUSED["not_allowed"];
        /// Messages acknowledged.
        pub messages => families::MESSAGES;
        /// Lines recorded.
        pub lines => families::LINES;
        /// Connections closed on a fatal line.
        pub fatal => families::FATAL_CLOSES;
        /// Relays identified and connected now.
        pub relays_connected => families::RELAYS_CONNECTED;
    }
}

/// What the accept loops share.
struct Shared {
    opts: TrackerServerOptions,
    /// Refusals at accept: logged at warn once a second.
    refusal_log: telemetry::LogGate,
    history: Option<History>,
    stats: Arc<TrackerStats>,
    /// Open connections, in total and per source.
    open: ConnLimiter,
}

/// A running tracker server.
pub struct TrackerServer {
    /// Bound addresses.
    pub addrs: Vec<SocketAddr>,
    /// Counters.
    pub stats: Arc<TrackerStats>,
}

impl TrackerServer {
    /// Binds, prints `listening tracker tcp ADDR` lines and serves under `sup`.
    pub fn start(
        sup: &Supervisor,
        listen: &[SocketAddr],
        opts: TrackerServerOptions,
        history: Option<History>,
    ) -> Result<TrackerServer> {
        let stats = Arc::new(TrackerStats::default());
        let shared = Arc::new(Shared {
            opts,
            refusal_log: telemetry::LogGate::new(),
            history,
            stats: stats.clone(),
            open: ConnLimiter::new(MAX_CONNECTIONS, MAX_PER_IP),
        });
        let mut addrs = Vec::new();
        for &a in listen {
            let l = tcp_listener(a, "tracker")?;
            let bound = l.local_addr()?;
            listening("tracker", "tcp", bound);
            addrs.push(bound);
            sup.spawn_task(
                "tracker",
                accept_loop(l, shared.clone(), sup.stop().clone()),
            );
        }
        Ok(TrackerServer { addrs, stats })
    }
}

async fn accept_loop(l: TcpListener, shared: Arc<Shared>, stop: Stop) -> Result<()> {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let (sock, peer) = tokio::select! {
            c = accept(&l, "tracker", || {}) => c,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            _ = stop.stopped() => break,
        };
        // Only listed relays may hold a connection (issue 20, item 7: 256 idle
        // strangers kept a listed relay out, each buffering until it identified).
        let ip = peer.ip().to_canonical();
        if !shared.opts.allowed.iter().any(|r| r.net.contains(&ip)) {
            shared.stats.refused_ident.fetch_add(1, Relaxed);
            if shared.refusal_log.warn_at(udp::time::unix_secs() as u64) {
                tracing::warn!(%peer, "tracker: connection from a source no [[tracker.relay]] lists, closed (at most one such line a second)");
            } else {
                tracing::debug!(%peer, "tracker: connection from an unlisted source closed");
            }
            continue;
        }
        let slot = match shared.open.acquire(peer.ip()) {
            Ok(slot) => slot,
            Err(why) => {
                shared.stats.refused_cap.fetch_add(1, Relaxed);
                let reason = match why {
                    Refusal::Total => "too many open",
                    Refusal::PerSource => "too many from this source",
                };
                tracing::debug!(%peer, reason, "tracker connection refused");
                continue;
            }
        };
        shared.stats.connections.fetch_add(1, Relaxed);
        let (shared, stop) = (shared.clone(), stop.clone());
        conns.spawn(async move {
            let _slot = slot;
            serve(sock, peer, &shared, &stop).await;
        });
    }
    conns.shutdown().await;
    Ok(())
}

/// One relay's connection, until it closes, the protocol closes it, or the stop.
async fn serve(mut sock: TcpStream, peer: SocketAddr, shared: &Shared, stop: &Stop) {
    let mut conn = ServerConn::new(ServerConfig::default(), Instant::now());
    let mut name: Option<String> = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while let Some(out) = conn.poll_transmit() {
            match tokio::time::timeout(shared.opts.write_timeout, sock.write_all(&out)).await {
                Ok(Ok(())) => {}
                _ => {
                    tracing::debug!(%peer, "tracker write failed or timed out");
                    return finish(shared, name, peer);
                }
            }
        }
        if conn.is_closed() {
            return finish(shared, name, peer);
        }
        let wake = conn
            .poll_timeout()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(60));
        let events = tokio::select! {
            r = sock.read(&mut buf) => match r {
                Ok(0) | Err(_) => return finish(shared, name, peer),
                Ok(n) => conn.received(&buf[..n], Instant::now()),
            },
            _ = tokio::time::sleep_until(wake.into()) => {
                conn.handle_timeout(Instant::now());
                Vec::new()
            }
            _ = stop.stopped() => return finish(shared, name, peer),
        };
        let mut queue = std::collections::VecDeque::from(events);
        while let Some(e) = queue.pop_front() {
            match e {
                Event::Hello(ident) => {
                    match admit(&shared.opts.allowed, peer.ip(), conn.greeting_secret()) {
                        Ok(n) => {
                            tracing::info!(%peer, relay = n, ident = ?ident, "tracker: relay identified");
                            shared.stats.relays_connected.fetch_add(1, Relaxed);
                            name = Some(n.to_string());
                            queue.extend(conn.accept(n));
                        }
                        Err(why) => {
                            shared.stats.refused_ident.fetch_add(1, Relaxed);
                            let reason = match why {
                                Refused::NotListed => "not listed in [[tracker.relay]]",
                                Refused::WrongSecret => "wrong or missing secret",
                            };
                            tracing::warn!(%peer, ident = ?ident, reason, "tracker: refused a relay");
                            conn.refuse();
                        }
                    }
                }
                Event::Message { lines, .. } => {
                    shared.stats.messages.fetch_add(1, Relaxed);
                    shared.stats.lines.fetch_add(lines.len() as u64, Relaxed);
                    if let (Some(h), Some(n)) = (&shared.history, &name) {
                        h.send(Input::Reports(
                            lines
                                .into_iter()
                                .map(|l| report(l, n, udp::time::unix_secs()))
                                .collect(),
                        ));
                    }
                }
                Event::Fatal(why) => {
                    shared.stats.fatal.fetch_add(1, Relaxed);
                    tracing::warn!(%peer, relay = ?name, reason = %why, "tracker: closing a connection on a bad line");
                }
            }
        }
    }
}

fn finish(shared: &Shared, name: Option<String>, peer: SocketAddr) {
    if let Some(n) = name {
        shared.stats.relays_connected.fetch_sub(1, Relaxed);
        tracing::info!(%peer, relay = n, "tracker: relay disconnected");
        if let Some(h) = &shared.history {
            h.send(Input::RelayGone(n));
        }
    }
}
