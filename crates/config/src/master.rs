//! `[master]`: the Xash3D master server.
use crate::{listen_addr, net};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

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
    /// Directory of curated sources in FWGS/server-list's format (`<gamedir>.toml`
    /// files with `[[server]]` entries), read at start and on SIGHUP; empty = none.
    pub sources: String,
    /// Seconds between probes of each listed address (jittered; silent ones back off).
    pub probe_interval: f64,
    /// Probes started per second, at most.
    pub probe_rate: u32,
    /// Seconds a silent server stays published after its last answer (probe.py: 48 h).
    pub grace: f64,
    /// Seconds an address no longer in any source is remembered after its last answer.
    pub prune_after: f64,
    /// Seconds between players samples of each gamedir (the heat maps).
    pub sample_interval: f64,
    /// Self-registration (`POST /api/servers/register`): a server is admitted once it
    /// shows the token in its host name or a rule.
    pub registration: bool,
    /// Whether loopback and private addresses may register (a LAN, tests).
    pub registration_private: bool,
}

/// The HTTP-era server list's options (`[master] sources` and the probing keys), checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerListOptions {
    /// The sources directory, if any.
    pub sources: Option<std::path::PathBuf>,
    /// Between probes of one address.
    pub probe_interval: Duration,
    /// Probes started per second.
    pub probe_rate: u32,
    /// Publication after the last answer.
    pub grace: Duration,
    /// Memory of addresses in no source.
    pub prune_after: Duration,
    /// Between players samples.
    pub sample_interval: Duration,
    /// Self-registration on.
    pub registration: bool,
    /// Private addresses may register.
    pub registration_private: bool,
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
            sources: String::new(),
            probe_interval: 60.0,
            probe_rate: 200,
            grace: 172_800.0,
            prune_after: 30.0 * 86_400.0,
            sample_interval: 600.0,
            registration: false,
            registration_private: false,
        }
    }
}

fn msecs(v: f64, key: &str) -> Result<Duration> {
    crate::seconds(v, &format!("master.{key}"), 1e9)
}

fn version(v: &str, key: &str) -> Result<xash::filter::Version> {
    xash::filter::Version::parse(v.as_bytes())
        .with_context(|| format!("master.{key} must look like 0.21 or 0.19.4, got {v:?}"))
}

/// How a `HOST:PORT` the configuration names becomes an address: the caller's
/// lookup (`udp::addr::resolve` in the binary), so this crate opens no socket.
pub type Resolve<'a> = &'a dyn Fn(&str) -> std::io::Result<SocketAddr>;

fn opt_peer(v: &str, resolve: Resolve) -> Result<Option<SocketAddr>> {
    if v.is_empty() {
        return Ok(None);
    }
    if !v.contains(':') {
        bail!("cannot resolve {v:?} (expected HOST:PORT)");
    }
    let addr = resolve(v).with_context(|| format!("expected HOST:PORT, got {v:?}"))?;
    Ok(Some(addr))
}

impl MasterSection {
    /// The engine configuration (values checked, `update_addr` and `update_addr6`
    /// resolved by `resolve`).
    pub fn engine_config(&self, resolve: Resolve) -> Result<master::Config> {
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
            update_addr_v4: opt_peer(&self.update_addr, resolve)?,
            update_addr_v6: opt_peer(&self.update_addr6, resolve)?,
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

    /// The server list's options, checked.
    pub fn server_list(&self) -> Result<ServerListOptions> {
        if !(1..=100_000).contains(&self.probe_rate) {
            bail!(
                "master.probe_rate must be 1 to 100000 probes a second, got {}",
                self.probe_rate
            );
        }
        Ok(ServerListOptions {
            sources: (!self.sources.is_empty()).then(|| self.sources.clone().into()),
            probe_interval: msecs(self.probe_interval, "probe_interval")?,
            probe_rate: self.probe_rate,
            grace: msecs(self.grace, "grace")?,
            prune_after: msecs(self.prune_after, "prune_after")?,
            sample_interval: msecs(self.sample_interval, "sample_interval")?,
            registration: self.registration,
            registration_private: self.registration_private,
        })
    }
}
