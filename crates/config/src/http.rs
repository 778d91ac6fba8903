//! `[http]`: the HTTP listener every part shares, and what a stranger can make it hold.
use crate::listen_addr;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

/// Largest `max_connections` (tokio's `Semaphore::MAX_PERMITS`, which counts them).
const MAX_CONNECTIONS: usize = usize::MAX >> 3;

/// What a stranger can make the HTTP server hold, and for how long (`[http]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once, over every listener.
    pub max_connections: usize,
    /// Connections open at once from one IPv4 address or IPv6 /64.
    pub max_connections_per_ip: usize,
    /// From when the server waits for a request head until the head is complete.
    pub header_read_timeout: Duration,
    /// No byte read or written for this long closes the connection.
    pub idle_timeout: Duration,
    /// A handler's answer, at most (then 408).
    pub request_timeout: Duration,
    /// A connection's whole life, at most (then it is closed after the response in
    /// flight, which gets `idle_timeout` more).
    pub connection_timeout: Duration,
    /// Request line and headers, bytes (then 431).
    pub max_header_bytes: usize,
    /// Request body, bytes (then 413).
    pub max_request_bytes: usize,
    /// Pilot streams open at once.
    pub max_streams: usize,
    /// Pilot streams open at once from one IPv4 address or IPv6 /64.
    pub max_streams_per_ip: usize,
    /// How long one pilot stream lasts; then it ends and the page reconnects.
    pub stream_lifetime: Duration,
    /// A labelled gauge in `/metrics` not set for this long leaves it (a gamedir
    /// with no server left).
    pub metrics_idle: Duration,
    /// Cost units a second one source (IPv4 address, IPv6 /64) may ask for (0: no
    /// limit); its /24, /56 and /48 hold their multiples.
    pub request_rate: u32,
    /// Cost units one source may ask for at once.
    pub request_burst: u32,
    /// Whether loopback sources are limited too (off: a proxy on the host is exempt).
    pub request_rate_loopback: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_connections_per_ip: 6,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(60),
            max_header_bytes: 8192,
            max_request_bytes: 4096,
            max_streams: 64,
            max_streams_per_ip: 2,
            stream_lifetime: Duration::from_secs(1800),
            metrics_idle: Duration::from_secs(600),
            request_rate: 50,
            request_burst: 200,
            request_rate_loopback: false,
        }
    }
}

/// The `[http]` table: where to listen, and what a stranger can make the server
/// hold (every limit has a default that suits a public server).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HttpSection {
    /// TCP addresses to serve HTTP on; empty disables HTTP.
    pub listen: Vec<String>,
    /// Connections open at once over every address; past it a connection gets `503`.
    pub max_connections: usize,
    /// Connections open at once from one IPv4 address or IPv6 /64.
    pub max_connections_per_ip: usize,
    /// Seconds from when the server waits for a request head (on a new or a kept-alive
    /// connection) until the head is complete; a slower client is cut off.
    pub header_read_timeout: f64,
    /// Seconds without a byte read or written before a connection is closed (idle
    /// keep-alive connections, silent clients, clients that stop reading).
    pub idle_timeout: f64,
    /// Seconds a request may take to answer (then 408).
    pub request_timeout: f64,
    /// Seconds a connection may live in all (then it is closed after its response).
    pub connection_timeout: f64,
    /// Largest request line and headers, bytes (then 431).
    pub max_header_bytes: usize,
    /// Largest request body, bytes (then 413).
    pub max_request_bytes: usize,
    /// `/api/pilots/stream` connections open at once (then 503); each also counts
    /// against `max_connections`.
    pub max_streams: usize,
    /// Pilot streams from one IPv4 address or IPv6 /64 (then 503): a few sources
    /// cannot hold every stream (a page opens one).
    pub max_streams_per_ip: usize,
    /// Seconds one pilot stream lasts; then it ends and the page's EventSource
    /// reconnects by itself (a held stream is exempt from the connection timeouts).
    pub stream_lifetime: f64,
    /// Seconds after which a gauge series of `/metrics` that is no longer set (a
    /// gamedir with no server left) leaves the exposition.
    pub metrics_idle: f64,
    /// Cost units a second one source (an IPv4 address or IPv6 /64) may ask for;
    /// each route costs 1 (the page, `/v1/servers`, `/api/pilots`), 4 (other API
    /// paths) or 25 (searches, exports, leaderboards, bounding boxes, details).
    /// Past it a request gets `429` with `Retry-After`. A /24, /56 and /48 hold 8,
    /// 4 and 8 sources' worth. 0 turns the limit off.
    pub request_rate: u32,
    /// Cost units one source may ask for at once (at least 25, the dearest route).
    pub request_burst: u32,
    /// Whether loopback sources (127.0.0.0/8, ::1) are limited too; off by default,
    /// as a reverse proxy on the same host is every client (let it limit).
    pub request_rate_loopback: bool,
}

impl Default for HttpSection {
    fn default() -> Self {
        let d = Limits::default();
        HttpSection {
            listen: vec![],
            max_connections: d.max_connections,
            max_connections_per_ip: d.max_connections_per_ip,
            header_read_timeout: d.header_read_timeout.as_secs_f64(),
            idle_timeout: d.idle_timeout.as_secs_f64(),
            request_timeout: d.request_timeout.as_secs_f64(),
            connection_timeout: d.connection_timeout.as_secs_f64(),
            max_header_bytes: d.max_header_bytes,
            max_request_bytes: d.max_request_bytes,
            max_streams: d.max_streams,
            max_streams_per_ip: d.max_streams_per_ip,
            stream_lifetime: d.stream_lifetime.as_secs_f64(),
            metrics_idle: d.metrics_idle.as_secs_f64(),
            request_rate: d.request_rate,
            request_burst: d.request_burst,
            request_rate_loopback: d.request_rate_loopback,
        }
    }
}

impl HttpSection {
    /// The listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The limits, checked.
    pub fn limits(&self) -> Result<Limits> {
        let secs = |v: f64, key: &str| crate::seconds(v, &format!("http.{key}"), 86400.0);
        for (key, v, min) in [
            ("max_connections", self.max_connections, 1),
            ("max_connections_per_ip", self.max_connections_per_ip, 1),
            ("max_header_bytes", self.max_header_bytes, 256),
            ("max_streams", self.max_streams, 1),
            ("max_streams_per_ip", self.max_streams_per_ip, 1),
        ] {
            if v < min {
                bail!("http.{key} must be at least {min}, got {v}");
            }
        }
        if self.request_burst < 25 {
            bail!(
                "http.request_burst must be at least 25 (the dearest route's cost), got {}",
                self.request_burst
            );
        }
        if self.max_connections > MAX_CONNECTIONS {
            bail!(
                "http.max_connections is too large: {}",
                self.max_connections
            );
        }
        Ok(Limits {
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            header_read_timeout: secs(self.header_read_timeout, "header_read_timeout")?,
            idle_timeout: secs(self.idle_timeout, "idle_timeout")?,
            request_timeout: secs(self.request_timeout, "request_timeout")?,
            connection_timeout: secs(self.connection_timeout, "connection_timeout")?,
            max_header_bytes: self.max_header_bytes,
            max_request_bytes: self.max_request_bytes,
            max_streams: self.max_streams,
            max_streams_per_ip: self.max_streams_per_ip,
            stream_lifetime: secs(self.stream_lifetime, "stream_lifetime")?,
            metrics_idle: secs(self.metrics_idle, "metrics_idle")?,
            request_rate: self.request_rate,
            request_burst: self.request_burst,
            request_rate_loopback: self.request_rate_loopback,
        })
    }
}
