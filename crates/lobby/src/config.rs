//! The TOML configuration file: one table per part, every key with a default,
//! unknown keys rejected with the key named.

use anyhow::{bail, Context, Result};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// The configuration `lobby up` uses when no `--config` is given.
pub const EMBEDDED_DEFAULT: &str = include_str!("default.toml");

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// `[relay]`: the FlightGear relay.
    #[serde(default)]
    pub relay: RelaySection,
    /// `[master]`: the Xash3D master server.
    #[serde(default)]
    pub master: MasterSection,
    /// `[http]`: the HTTP listener shared by every part (server lists, stats).
    #[serde(default)]
    pub http: HttpSection,
    /// `[dns]`: the authoritative DNS server (or push target) for the directory.
    #[serde(default)]
    pub dns: DnsSection,
    /// `[directory]`: the relays and scenery servers to publish, and their probes.
    #[serde(default)]
    pub directory: DirectorySection,
    /// `[sim]`: a simulated Xash3D fleet registered with the local master (`lobby up`).
    #[serde(default)]
    pub sim: SimSection,
    /// `[history]`: the flight log and the servers' history.
    #[serde(default)]
    pub history: HistorySection,
    /// `[tracker]`: the tracker server relays report to.
    #[serde(default)]
    pub tracker: TrackerSection,
    /// `[admin]`: the authenticated admin API on the HTTP listener.
    #[serde(default)]
    pub admin: AdminSection,
}

/// The `[admin]` table: fgms's admin CLI as an authenticated HTTP API (`/api/admin/`),
/// off unless `tokens_file` is set.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdminSection {
    /// File of bearer tokens, one `NAME TOKEN` per line (`#` comments); the name is
    /// who made a change in the logs. Empty: no admin API.
    pub tokens_file: String,
    /// Source networks allowed to use the admin API (IPs or CIDRs).
    pub allow: Vec<String>,
    /// Where run-time changes of the lists are kept across restarts (JSON, written
    /// atomically at every change); empty: they last until the process stops.
    pub state_file: String,
    /// Run-time changes held at most (one per entry); past it a change is refused
    /// until they are written into this file.
    pub max_changes: usize,
}

impl Default for AdminSection {
    fn default() -> Self {
        AdminSection {
            tokens_file: String::new(),
            allow: vec!["127.0.0.0/8".into(), "::1/128".into()],
            state_file: "lobby-admin.json".into(),
            max_changes: 4096,
        }
    }
}

/// The `[history]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HistorySection {
    /// `sqlite:PATH` (one file, created on first start) or `postgres://USER@HOST/DB`;
    /// empty: no flight log.
    pub database_url: String,
    /// Days flights and server samples are kept.
    pub retention_days: f64,
    /// Reports waiting to be written, at most (more are dropped and counted; the
    /// relay never waits for the database).
    pub queue: usize,
    /// Seconds between samples of every listed Xash3D server's players.
    pub server_sample_interval: f64,
}

impl Default for HistorySection {
    fn default() -> Self {
        HistorySection {
            database_url: String::new(),
            retention_days: 90.0,
            queue: 4096,
            server_sample_interval: 300.0,
        }
    }
}

impl HistorySection {
    /// The writer's settings, checked; `None` when no database is configured.
    pub fn options(&self) -> Result<Option<crate::parts::history::HistoryOptions>> {
        if self.database_url.is_empty() {
            return Ok(None);
        }
        flightlog::store::Backend::of(&self.database_url)?;
        if !(self.retention_days.is_finite() && self.retention_days > 0.0) {
            bail!(
                "history.retention_days must be a positive number of days, got {}",
                self.retention_days
            );
        }
        if self.queue == 0 {
            bail!("history.queue must be at least 1");
        }
        Ok(Some(crate::parts::history::HistoryOptions {
            database_url: self.database_url.clone(),
            retention: Duration::from_secs_f64(self.retention_days * 86_400.0),
            queue: self.queue,
            server_sample_interval: crate::args::seconds(
                self.server_sample_interval,
                "history.server_sample_interval",
                86_400.0,
            )?,
        }))
    }
}

/// One relay allowed to report to the tracker server.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrackerRelay {
    /// The name its flights are recorded under (sent back as `IDENTIFIED <name>`).
    pub name: String,
    /// IP or CIDR it connects from.
    pub address: String,
    /// A secret it must send (a lobby relay's `tracker_secret`); empty: none, as
    /// fgms cannot send one.
    #[serde(default)]
    pub secret: String,
}

/// The `[tracker]` table.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TrackerSection {
    /// TCP addresses to accept relays' tracker connections on; empty: none.
    pub listen: Vec<String>,
    /// The relays allowed to report (`[[tracker.relay]]` with `name` and `address`);
    /// any other source is refused and logged.
    pub relay: Vec<TrackerRelay>,
}

impl TrackerSection {
    /// The listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The allowed relays, checked.
    pub fn allowed(&self) -> Result<Vec<crate::parts::tracker_server::AllowedRelay>> {
        self.relay
            .iter()
            .map(|r| {
                if r.name.is_empty() || r.name.contains(char::is_whitespace) {
                    bail!("tracker.relay name {:?} must be one word", r.name);
                }
                if r.secret
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
                {
                    bail!(
                        "tracker.relay {:?}: the secret must be one word of printable characters",
                        r.name
                    );
                }
                Ok(crate::parts::tracker_server::AllowedRelay {
                    name: r.name.clone(),
                    net: net(&r.address).with_context(|| format!("tracker.relay {:?}", r.name))?,
                    secret: (!r.secret.is_empty()).then(|| r.secret.clone()),
                })
            })
            .collect()
    }
}

/// The `[sim]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SimSection {
    /// Simulated servers `lobby up` starts (0 = none).
    pub count: u16,
    /// IP they listen on (ephemeral ports).
    pub listen_ip: String,
    /// Their game directory.
    pub gamedir: String,
    /// Seed for names, maps and players.
    pub seed: u64,
}

impl Default for SimSection {
    fn default() -> Self {
        SimSection {
            count: 0,
            listen_ip: "127.0.0.1".into(),
            gamedir: "valve".into(),
            seed: 1,
        }
    }
}

/// The `[dns]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DnsSection {
    /// UDP and TCP addresses to serve the zone on; empty = do not serve (push only).
    pub listen: Vec<String>,
    /// The zone, e.g. `fg.example.org`.
    pub zone: String,
    /// Name server name (relative to the zone unless it ends with a dot).
    pub ns: String,
    /// Addresses of the name server, published as A/AAAA when it is inside the zone.
    pub ns_addresses: Vec<String>,
    /// Responsible mailbox as a name (relative unless it ends with a dot).
    pub hostmaster: String,
    /// TTL of every published record, seconds (short, so changes spread fast).
    pub ttl: u32,
    /// Allow zone transfers (AXFR), e.g. for secondaries of a delegated zone: only
    /// from `axfr_allow` sources or signed with the `axfr_tsig_*` key (one of them
    /// must be set).
    pub allow_axfr: bool,
    /// Sources (IP or CIDR) allowed to transfer the zone without TSIG.
    pub axfr_allow: Vec<String>,
    /// TSIG key name a transfer may be signed with (its answer is signed too).
    pub axfr_tsig_key_name: String,
    /// Its algorithm: hmac-sha256, hmac-sha384 or hmac-sha512.
    pub axfr_tsig_algorithm: String,
    /// Its secret, base64 (must not be empty).
    pub axfr_tsig_secret: String,
    /// Push mode: the primary server (`IP[:PORT]` or `HOST[:PORT]`, port 53 by
    /// default) that gets RFC 2136 updates. A host name is resolved when pushing
    /// (retried with backoff, re-resolved at every refresh), never at start.
    pub push: String,
    /// Seconds before the first retry of a push the primary did not acknowledge;
    /// doubled per failure up to `push_retry_max`.
    pub push_retry_min: f64,
    /// Longest wait between push retries, seconds.
    pub push_retry_max: f64,
    /// Seconds between refreshes: the primary's records are read back and pushed
    /// again when they differ (a primary restarted from its zone file lost them).
    pub push_refresh: f64,
    /// TSIG key name for push mode.
    pub tsig_key_name: String,
    /// TSIG algorithm: hmac-sha256, hmac-sha384 or hmac-sha512.
    pub tsig_algorithm: String,
    /// TSIG secret, base64 (as in BIND/Knot key files).
    pub tsig_secret: String,
}

impl Default for DnsSection {
    fn default() -> Self {
        DnsSection {
            listen: vec![],
            zone: "fg.lobby.test".into(),
            ns: "ns1".into(),
            ns_addresses: vec!["127.0.0.1".into()],
            hostmaster: "hostmaster".into(),
            ttl: 60,
            allow_axfr: false,
            axfr_allow: vec![],
            axfr_tsig_key_name: String::new(),
            axfr_tsig_algorithm: "hmac-sha256".into(),
            axfr_tsig_secret: String::new(),
            push: String::new(),
            push_retry_min: 1.0,
            push_retry_max: 60.0,
            push_refresh: 300.0,
            tsig_key_name: String::new(),
            tsig_algorithm: "hmac-sha256".into(),
            tsig_secret: String::new(),
        }
    }
}

/// One `[[directory.relay]]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RelayEntry {
    /// SRV target host (relative to the zone unless it ends with a dot).
    pub host: String,
    /// UDP port.
    #[serde(default = "default_fg_port")]
    pub port: u16,
    /// Addresses published for the host (A/AAAA) and probed.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Display name (TXT `name`).
    pub name: String,
    /// Location (TXT `location`).
    pub location: String,
    /// SRV priority.
    #[serde(default = "default_priority")]
    pub priority: u16,
    /// SRV weight.
    #[serde(default = "default_weight")]
    pub weight: u16,
    /// Extra string attributes for the TXT record.
    #[serde(default)]
    pub attributes: std::collections::BTreeMap<String, String>,
    /// Probe this address instead of the published ones (`IP:PORT`).
    #[serde(default)]
    pub probe: String,
}

fn default_fg_port() -> u16 {
    5000
}
fn default_priority() -> u16 {
    10
}
fn default_weight() -> u16 {
    20
}

/// One `[[directory.scenery]]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SceneryEntry {
    /// Base URL (http or https, no `!`).
    pub url: String,
    /// Service: `ws20`, `o2c`, `https+ws20`, ...
    #[serde(default = "default_service")]
    pub service: String,
    /// NAPTR order (lower is used first).
    #[serde(default = "default_order")]
    pub order: u16,
    /// NAPTR preference (lower preferred; give equals within an order).
    #[serde(default = "default_order")]
    pub preference: u16,
}

fn default_service() -> String {
    "ws20".into()
}
fn default_order() -> u16 {
    100
}

/// The `[directory]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DirectorySection {
    /// Seconds between health probes.
    pub probe_interval: f64,
    /// Seconds to wait for a PONG.
    pub probe_timeout: f64,
    /// Failed probes in a row before a relay is published as down (SRV port 0).
    pub fall: u32,
    /// Successful probes in a row before it is published as up again.
    pub rise: u32,
    /// Publish the relay this process runs (`lobby up`).
    pub include_local_relay: bool,
    /// Relays.
    pub relay: Vec<RelayEntry>,
    /// Scenery servers.
    pub scenery: Vec<SceneryEntry>,
}

impl Default for DirectorySection {
    fn default() -> Self {
        DirectorySection {
            probe_interval: 10.0,
            probe_timeout: 2.0,
            fall: 3,
            rise: 2,
            include_local_relay: true,
            relay: vec![],
            scenery: vec![],
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
}

impl Default for HttpSection {
    fn default() -> Self {
        let d = crate::parts::http::Limits::default();
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
        }
    }
}

impl HttpSection {
    /// The listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The limits, checked.
    pub fn limits(&self) -> Result<crate::parts::http::Limits> {
        let secs = |v: f64, key: &str| crate::args::seconds(v, &format!("http.{key}"), 86400.0);
        for (key, v, min) in [
            ("max_connections", self.max_connections, 1),
            ("max_connections_per_ip", self.max_connections_per_ip, 1),
            ("max_header_bytes", self.max_header_bytes, 256),
            ("max_streams", self.max_streams, 1),
        ] {
            if v < min {
                bail!("http.{key} must be at least {min}, got {v}");
            }
        }
        if self.max_connections > tokio::sync::Semaphore::MAX_PERMITS {
            bail!(
                "http.max_connections is too large: {}",
                self.max_connections
            );
        }
        Ok(crate::parts::http::Limits {
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            header_read_timeout: secs(self.header_read_timeout, "header_read_timeout")?,
            idle_timeout: secs(self.idle_timeout, "idle_timeout")?,
            request_timeout: secs(self.request_timeout, "request_timeout")?,
            connection_timeout: secs(self.connection_timeout, "connection_timeout")?,
            max_header_bytes: self.max_header_bytes,
            max_request_bytes: self.max_request_bytes,
            max_streams: self.max_streams,
        })
    }
}

/// One `[[master.admin]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AdminEntry {
    /// Name, for logs.
    pub name: String,
    /// Shared secret (never sent on the wire).
    pub password: String,
}

/// The `[master]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MasterSection {
    /// UDP addresses (IPv4 and IPv6).
    pub listen: Vec<String>,
    /// State file (servers and bans), saved atomically; empty = no persistence.
    pub state_file: String,
    /// Seconds between state saves (also saved on stop).
    pub save_interval: f64,
    /// Seconds a server stays listed after its last valid info.
    pub server_ttl: f64,
    /// Challenge window, seconds.
    pub challenge_window: f64,
    /// Servers per IPv4 address / IPv6 /64.
    pub max_servers_per_source: usize,
    /// Servers in all.
    pub max_servers: usize,
    /// Minimum server `version`.
    pub min_server_version: String,
    /// Minimum client `clver`.
    pub client_min_version: String,
    /// Minimum `buildnum` for clver >= 0.20 (0 = off).
    pub min_engine_buildnum: u32,
    /// Minimum `buildnum` for clver < 0.20 (0 = off).
    pub min_old_engine_buildnum: u32,
    /// Treat scans without `clver` as outdated engines (xash3d-master's rule).
    pub require_clver: bool,
    /// "Please update" address listed to outdated IPv4 clients (default: the master's own).
    pub update_addr: String,
    /// Same, for IPv6 clients.
    pub update_addr6: String,
    /// Host name of the fake update server.
    pub update_title: String,
    /// Map of the fake update server.
    pub update_map: String,
    /// Largest server-list datagram, bytes.
    pub page_size: usize,
    /// Requests a client may burst before it is throttled.
    pub rate_burst: f64,
    /// Seconds for one request of allowance to come back.
    pub rate_decay: f64,
    /// Sources each per-source table tracks (fixed memory; a full table evicts).
    pub rate_table_size: usize,
    /// Reply bytes per second one client (IPv4 address / IPv6 /64) may be sent; 0 = off.
    pub scan_reply_bytes_per_sec: u64,
    /// NAT servers one client may be announced to per second; 0 = unlimited.
    pub nat_announces_per_sec: u32,
    /// Admin hash length (bytes).
    pub hash_len: usize,
    /// Admin hash key.
    pub hash_key: String,
    /// Admin hash personalisation.
    pub hash_personal: String,
    /// Seconds an IPv4 address / IPv6 /64 is ignored after a bad admin hash.
    pub admin_lockout: f64,
    /// Networks (IP or CIDR) admin messages are accepted from; default loopback only.
    pub admin_allow: Vec<String>,
    /// Admins (`[[master.admin]]` with `name` and `password`).
    pub admin: Vec<AdminEntry>,
    /// Receive threads per UDP address; 0 = one per core.
    pub workers: usize,
    /// Seconds before a listed server is asked for its name again (its info, as a
    /// client's browser asks; shown by `/api/servers` and the page); 0 = never ask.
    pub name_refresh: f64,
}

impl Default for MasterSection {
    fn default() -> Self {
        let d = master::Config::default();
        MasterSection {
            listen: vec!["0.0.0.0:27010".into(), "[::]:27010".into()],
            state_file: String::new(),
            save_interval: 30.0,
            server_ttl: d.server_ttl.as_secs_f64(),
            challenge_window: d.challenge_window.as_secs_f64(),
            max_servers_per_source: d.max_servers_per_source,
            max_servers: d.max_servers,
            min_server_version: d.min_server_version.to_string(),
            client_min_version: d.client_min_version.to_string(),
            min_engine_buildnum: d.min_engine_buildnum,
            min_old_engine_buildnum: d.min_old_engine_buildnum,
            require_clver: d.require_clver,
            update_addr: String::new(),
            update_addr6: String::new(),
            update_title: d.update_title,
            update_map: d.update_map,
            page_size: d.page_size,
            rate_burst: d.rate_burst,
            rate_decay: d.rate_decay.as_secs_f64(),
            rate_table_size: d.rate_table_size,
            scan_reply_bytes_per_sec: d.scan_reply_bytes_per_sec,
            nat_announces_per_sec: d.nat_announces_per_sec,
            hash_len: d.hash_len,
            hash_key: d.hash_key,
            hash_personal: d.hash_personal,
            admin_lockout: d.admin_lockout.as_secs_f64(),
            admin_allow: d.admin_allow.iter().map(|n| n.to_string()).collect(),
            admin: vec![],
            workers: 0,
            name_refresh: 300.0,
        }
    }
}

fn msecs(v: f64, key: &str) -> Result<Duration> {
    crate::args::seconds(v, &format!("master.{key}"), 1e9)
}

fn version(v: &str, key: &str) -> Result<xash::filter::Version> {
    xash::filter::Version::parse(v.as_bytes())
        .with_context(|| format!("master.{key} must look like 0.21 or 0.19.4, got {v:?}"))
}

fn opt_peer(v: &str) -> Result<Option<SocketAddr>> {
    if v.is_empty() {
        return Ok(None);
    }
    if !v.contains(':') {
        bail!("cannot resolve {v:?} (expected HOST:PORT)");
    }
    let addr =
        udp::addr::resolve(v, 0).with_context(|| format!("expected HOST:PORT, got {v:?}"))?;
    Ok(Some(addr))
}

impl MasterSection {
    /// The engine configuration (values checked, addresses resolved).
    pub fn engine_config(&self) -> Result<master::Config> {
        let c = master::Config {
            server_ttl: msecs(self.server_ttl, "server_ttl")?,
            challenge_window: msecs(self.challenge_window, "challenge_window")?,
            max_servers_per_source: self.max_servers_per_source,
            max_servers: self.max_servers,
            min_server_version: version(&self.min_server_version, "min_server_version")?,
            client_min_version: version(&self.client_min_version, "client_min_version")?,
            min_engine_buildnum: self.min_engine_buildnum,
            min_old_engine_buildnum: self.min_old_engine_buildnum,
            require_clver: self.require_clver,
            update_addr_v4: opt_peer(&self.update_addr)?,
            update_addr_v6: opt_peer(&self.update_addr6)?,
            update_title: self.update_title.clone(),
            update_map: self.update_map.clone(),
            page_size: self.page_size,
            rate_burst: self.rate_burst,
            rate_decay: msecs(self.rate_decay, "rate_decay")?,
            rate_table_size: self.rate_table_size,
            scan_reply_bytes_per_sec: self.scan_reply_bytes_per_sec,
            nat_announces_per_sec: self.nat_announces_per_sec,
            admins: self
                .admin
                .iter()
                .map(|a| master::AdminUser {
                    name: a.name.clone(),
                    password: a.password.clone(),
                })
                .collect(),
            hash_len: self.hash_len,
            hash_key: self.hash_key.clone(),
            hash_personal: self.hash_personal.clone(),
            admin_lockout: msecs(self.admin_lockout, "admin_lockout")?,
            admin_allow: self
                .admin_allow
                .iter()
                .map(|s| net(s).context("master.admin_allow"))
                .collect::<Result<_>>()?,
        };
        if let Some(a) = c.update_addr_v4.filter(|a| !a.is_ipv4()) {
            bail!("master.update_addr must be an IPv4 address, got {a}");
        }
        if let Some(a) = c.update_addr_v6.filter(|a| !a.is_ipv6()) {
            bail!("master.update_addr6 must be an IPv6 address, got {a}");
        }
        c.validate().map_err(|e| anyhow::anyhow!("master: {e}"))?;
        msecs(self.save_interval, "save_interval")?;
        Ok(c)
    }

    /// UDP listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        if self.listen.is_empty() {
            bail!("master.listen is empty: the master needs at least one UDP address");
        }
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// Worker threads per address.
    pub fn workers(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n.min(64),
        }
    }

    /// How long a server's name is kept before it is asked again; `None`: never ask.
    pub fn name_refresh(&self) -> Result<Option<Duration>> {
        if self.name_refresh == 0.0 {
            return Ok(None);
        }
        msecs(self.name_refresh, "name_refresh").map(Some)
    }
}

/// The `[relay]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RelaySection {
    /// Name on the telnet list.
    pub name: String,
    /// UDP addresses to listen on (IPv4 and IPv6).
    pub listen: Vec<String>,
    /// TCP addresses for the telnet pilot list; empty disables it.
    pub telnet: Vec<String>,
    /// Telnet connections served at once, in total.
    pub telnet_max_connections: usize,
    /// Telnet connections served at once per source IPv4 address or IPv6 /64.
    pub telnet_max_per_ip: usize,
    /// Default receive range, nm.
    pub out_of_reach: f64,
    /// Largest range a client may request, nm.
    pub max_radar_range: f64,
    /// Seconds of silence before a pilot is dropped.
    pub player_expiry: f64,
    /// Seconds between LazyRelay datagrams per sender to relays with nobody in range.
    pub lazy_relay_interval: f64,
    /// Re-forward relay traffic to the other relays.
    pub hub: bool,
    /// Relays, `host:port`.
    pub relays: Vec<String>,
    /// Seconds between resolutions of relay and crossfeed host names (a name that
    /// does not resolve is retried sooner, from 1 s doubling to 60 s).
    pub peer_refresh: f64,
    /// Crossfeed targets, `host:port`.
    pub crossfeeds: Vec<String>,
    /// IPs or CIDRs allowed to send relay traffic without being relays.
    pub whitelist: Vec<String>,
    /// IPs or CIDRs whose traffic is dropped.
    pub blacklist: Vec<String>,
    /// Upper bound on pilots held.
    pub max_pilots: usize,
    /// Most local pilots per source IPv4 address or IPv6 /64.
    pub max_pilots_per_ip: usize,
    /// Receive threads per listen address (SO_REUSEPORT); 0 = one per CPU core.
    pub workers: usize,
    /// SCHED_FIFO priority (1-99) for the UDP workers; 0 = normal scheduling.
    pub realtime_priority: u8,
    /// The tracker to report pilots to, `host:port` as fgms does (fgms.conf's
    /// `server.tracked`, `server.tracking_server`, `server.tracking_port`); empty: none.
    pub tracker: String,
    /// The host name sent in the tracker identification (fgms's `server.FQDN`; a
    /// tracker may admit relays by it); empty: the relay's `name`.
    pub tracker_fqdn: String,
    /// Tracker messages kept while the tracker is slow or away (the oldest kept,
    /// newer ones dropped and counted).
    pub tracker_max_queue: usize,
    /// File keeping the tracker's unsent messages across a restart (fgms's
    /// `queue_file`); empty: none.
    pub tracker_queue_file: String,
    /// A secret shared with a lobby tracker that lists this relay with one (sent
    /// first, where fgms sends an empty message; fgtracker ignores it); empty: none.
    pub tracker_secret: String,
}

impl Default for RelaySection {
    fn default() -> Self {
        let d = relay::Config::default();
        RelaySection {
            name: d.name,
            listen: vec!["0.0.0.0:5000".into(), "[::]:5000".into()],
            telnet: vec!["0.0.0.0:5001".into(), "[::]:5001".into()],
            telnet_max_connections: 64,
            telnet_max_per_ip: 4,
            out_of_reach: d.out_of_reach_nm,
            max_radar_range: d.max_radar_range_nm,
            player_expiry: d.player_expiry.as_secs_f64(),
            lazy_relay_interval: d.lazy_relay_interval.as_secs_f64(),
            hub: false,
            relays: vec![],
            peer_refresh: 300.0,
            crossfeeds: vec![],
            whitelist: vec![],
            blacklist: vec![],
            max_pilots: d.max_pilots,
            max_pilots_per_ip: d.max_pilots_per_ip,
            workers: 0,
            realtime_priority: 0,
            tracker: String::new(),
            tracker_fqdn: String::new(),
            tracker_max_queue: 10_000,
            tracker_queue_file: String::new(),
            tracker_secret: String::new(),
        }
    }
}

/// Parses TOML text; errors name the offending key and line.
pub fn parse(text: &str, origin: &str) -> Result<File> {
    toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))
}

/// Reads and parses a TOML file.
pub fn load(path: &Path) -> Result<File> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parses a listen address (`ADDR:PORT`, IPv6 in brackets).
pub fn listen_addr(s: &str) -> Result<SocketAddr> {
    s.parse().with_context(|| {
        format!("invalid listen address {s:?}: expected IP:PORT, IPv6 as [::1]:PORT")
    })
}

/// Parses an IP or CIDR.
pub fn net(s: &str) -> Result<IpNet> {
    if let Ok(n) = s.parse::<IpNet>() {
        return Ok(n);
    }
    let ip: IpAddr = s
        .parse()
        .with_context(|| format!("invalid IP or CIDR {s:?}"))?;
    Ok(IpNet::from(ip))
}

fn secs(v: f64, key: &str) -> Result<Duration> {
    crate::args::seconds(v, &format!("relay.{key}"), 1e9)
}

impl RelaySection {
    /// The relay peers and crossfeed targets, checked for syntax only (names are
    /// resolved by the running relay, see `parts::peers`).
    pub fn peer_names(&self) -> Result<Vec<crate::parts::peers::PeerName>> {
        use crate::parts::peers::{Kind, PeerName};
        let relays = self.relays.iter().map(|s| PeerName::parse(s, Kind::Relay));
        let feeds = self
            .crossfeeds
            .iter()
            .map(|s| PeerName::parse(s, Kind::Crossfeed));
        relays.chain(feeds).collect()
    }

    /// How often peer names are resolved again.
    pub fn peer_refresh(&self) -> Result<Duration> {
        secs(self.peer_refresh, "peer_refresh")
    }

    /// The engine configuration this section describes, values checked, without
    /// the relay peers and crossfeed targets ([`RelaySection::peer_names`]: the
    /// running relay adds them as their names resolve).
    pub fn engine_config(&self) -> Result<relay::Config> {
        self.peer_names()?;
        self.peer_refresh()?;
        for (key, v) in [
            ("out_of_reach", self.out_of_reach),
            ("max_radar_range", self.max_radar_range),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("relay.{key} must be a positive number of nautical miles, got {v}");
            }
        }
        if self.max_pilots == 0 {
            bail!("relay.max_pilots must be at least 1");
        }
        if self.max_pilots_per_ip == 0 {
            bail!("relay.max_pilots_per_ip must be at least 1");
        }
        Ok(relay::Config {
            name: self.name.clone(),
            out_of_reach_nm: self.out_of_reach,
            max_radar_range_nm: self.max_radar_range,
            player_expiry: secs(self.player_expiry, "player_expiry")?,
            lazy_relay_interval: secs(self.lazy_relay_interval, "lazy_relay_interval")?,
            relays: Vec::new(),
            hub: self.hub,
            crossfeeds: Vec::new(),
            whitelist: self
                .whitelist
                .iter()
                .map(|s| net(s))
                .collect::<Result<_>>()?,
            blacklist: self
                .blacklist
                .iter()
                .map(|s| net(s))
                .collect::<Result<_>>()?,
            max_pilots: self.max_pilots,
            max_pilots_per_ip: self.max_pilots_per_ip,
        })
    }

    /// Worker threads per listen address.
    pub fn workers(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n.min(64),
        }
    }

    /// The UDP listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        if self.listen.is_empty() {
            bail!("relay.listen is empty: the relay needs at least one UDP address");
        }
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The telnet listen addresses (possibly none).
    pub fn telnet_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.telnet.iter().map(|s| listen_addr(s)).collect()
    }

    /// The tracker link, if one is configured (syntax checked; the name is resolved
    /// by the running link, again at every connection attempt).
    pub fn tracker_options(&self) -> Result<Option<crate::parts::tracker_client::TrackerOptions>> {
        if self.tracker.is_empty() {
            return Ok(None);
        }
        let target =
            crate::parts::peers::PeerName::parse(&self.tracker, crate::parts::peers::Kind::Relay)
                .with_context(|| format!("relay.tracker {:?}", self.tracker))?;
        if self.tracker_max_queue == 0 {
            bail!("relay.tracker_max_queue must be at least 1");
        }
        let fqdn = if self.tracker_fqdn.is_empty() {
            self.name.clone()
        } else {
            self.tracker_fqdn.clone()
        };
        if fqdn.contains(char::is_whitespace) {
            bail!("relay.tracker_fqdn must be one word (it is a field of the identification line), got {fqdn:?}");
        }
        Ok(Some(crate::parts::tracker_client::TrackerOptions {
            target: target.text,
            fqdn,
            server_name: self.name.clone(),
            max_queue: self.tracker_max_queue,
            queue_file: (!self.tracker_queue_file.is_empty())
                .then(|| std::path::PathBuf::from(&self.tracker_queue_file)),
            secret: self.tracker_secret.clone(),
        }))
    }

    /// The telnet listener's addresses and limits.
    pub fn telnet_options(&self) -> Result<crate::parts::relay::TelnetOptions> {
        for (key, v) in [
            ("telnet_max_connections", self.telnet_max_connections),
            ("telnet_max_per_ip", self.telnet_max_per_ip),
        ] {
            if v == 0 {
                bail!("relay.{key} must be at least 1 (an empty telnet list disables telnet)");
            }
        }
        Ok(crate::parts::relay::TelnetOptions {
            addrs: self.telnet_addrs()?,
            max_connections: self.telnet_max_connections,
            max_per_ip: self.telnet_max_per_ip,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_parses_and_listens_on_loopback() {
        let f = parse(EMBEDDED_DEFAULT, "embedded").unwrap();
        for a in f.relay.listen_addrs().unwrap() {
            assert!(a.ip().is_loopback(), "{a}");
        }
        f.relay.engine_config().unwrap();
    }

    #[test]
    fn master_section_defaults_and_errors() {
        let f = parse(
            "[master]\n[[master.admin]]\nname = \"gordon\"\npassword = \"crowbar\"\n",
            "x",
        )
        .unwrap();
        let c = f.master.engine_config().unwrap();
        assert_eq!(c.admins.len(), 1);
        assert_eq!(c.page_size, 1400);
        assert_eq!(c.server_ttl, Duration::from_secs(900));
        let e = parse("[master]\npage_sise = 512\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("page_sise"), "{e}");
        let f = parse("[master]\nmin_server_version = \"new\"\n", "x").unwrap();
        assert!(f
            .master
            .engine_config()
            .unwrap_err()
            .to_string()
            .contains("min_server_version"));
        let f = parse("[master]\npage_size = 20\n", "x").unwrap();
        assert!(f
            .master
            .engine_config()
            .unwrap_err()
            .to_string()
            .contains("page_size"));
        let f = parse("[master]\nupdate_addr = \"[::1]:27010\"\n", "x").unwrap();
        assert!(f.master.engine_config().is_err());
        assert_eq!(c.admin_allow.len(), 2, "loopback by default");
        assert_eq!(c.scan_reply_bytes_per_sec, 65_536);
        let f = parse(
            "[master]\nadmin_allow = [\"10.0.0.0/8\", \"2001:db8::1\"]\n",
            "x",
        )
        .unwrap();
        let c = f.master.engine_config().unwrap();
        assert!(c.admin_allow[1].contains(&"2001:db8::1".parse::<IpAddr>().unwrap()));
        let f = parse("[master]\nadmin_allow = [\"10.0.0.0/40\"]\n", "x").unwrap();
        let e = format!("{:#}", f.master.engine_config().unwrap_err());
        assert!(e.contains("admin_allow"), "{e}");
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = parse("[relay]\nnmae = \"x\"\n", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nmae"), "{e}");
        let e = parse("[rleay]\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("rleay"), "{e}");
    }

    #[test]
    fn every_key_has_a_default() {
        let f = parse("", "empty").unwrap();
        assert_eq!(f.relay, RelaySection::default());
        let c = parse("[relay]\nhub = true\n", "x")
            .unwrap()
            .relay
            .engine_config()
            .unwrap();
        assert!(c.hub);
        assert_eq!(c.out_of_reach_nm, 100.0);
    }

    #[test]
    fn bad_values_are_errors() {
        let f = parse("[relay]\nplayer_expiry = -1\n", "x").unwrap();
        assert!(f
            .relay
            .engine_config()
            .unwrap_err()
            .to_string()
            .contains("player_expiry"));
        let f = parse("[relay]\nblacklist = [\"10.0.0.0/33\"]\n", "x").unwrap();
        assert!(f.relay.engine_config().is_err());
        assert!(listen_addr("localhost").is_err());
    }

    #[test]
    fn http_limits_have_defaults_and_checks() {
        let f = parse("[http]\nlisten = [\"127.0.0.1:0\"]\n", "x").unwrap();
        assert_eq!(
            f.http.limits().unwrap(),
            crate::parts::http::Limits::default()
        );
        let f = parse("[http]\nidle_timeout = 0.5\nmax_connections = 3\n", "x").unwrap();
        let l = f.http.limits().unwrap();
        assert_eq!(
            (l.idle_timeout, l.max_connections),
            (Duration::from_millis(500), 3)
        );
        for (bad, key) in [
            ("idle_timeout = 0", "http.idle_timeout"),
            ("header_read_timeout = -1", "http.header_read_timeout"),
            ("max_connections = 0", "http.max_connections"),
            ("max_connections_per_ip = 0", "http.max_connections_per_ip"),
        ] {
            let f = parse(&format!("[http]\n{bad}\n"), "x").unwrap();
            let e = f.http.limits().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        let e = parse("[http]\nidle_timout = 1\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("idle_timout"), "{e}");
    }

    #[test]
    fn peers_get_short_labels() {
        use crate::parts::peers::{Kind, PeerName};
        let label = |s: &str| PeerName::parse(s, Kind::Relay).unwrap().label;
        assert_eq!(label("127.0.0.1:5000"), "127.0.0.1");
        assert_eq!(label("localhost:5000"), "localhost");
        assert!(net("192.168.0.0/16")
            .unwrap()
            .contains(&"192.168.4.4".parse::<IpAddr>().unwrap()));
        assert!(net("::1")
            .unwrap()
            .contains(&"::1".parse::<IpAddr>().unwrap()));
    }
}
