//! `[dns]` and `[directory]`: the zone, how it is served or pushed, and the relays
//! and scenery servers it publishes.
use anyhow::{bail, Result};
use serde::Deserialize;
use std::time::Duration;

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
    /// DNS over TCP: connections open at most, in total.
    pub max_tcp_connections: usize,
    /// DNS over TCP: connections open at most from one IPv4 address or IPv6 /64.
    pub max_tcp_per_ip: usize,
    /// DNS over TCP: seconds a connection may wait for its next query; reading one
    /// query, once begun, and writing one answer each get as long.
    pub tcp_idle_timeout: f64,
    /// DNS over UDP: answers per second one source (an IPv4 address or IPv6 /64) may
    /// have, on average; its /24, /56 and /48 get the multiples of
    /// `sansio::quota::WIDER`. Past it, queries are dropped, every second one
    /// answered empty with TC set (a resolver retries over TCP).
    pub udp_rate: f64,
    /// DNS over UDP: answers one source may have at once before `udp_rate` applies.
    pub udp_burst: f64,
}

/// DNS over UDP's per-source budget, checked (from [`DnsSection::udp_budget`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DnsUdpBudget {
    /// Answers per second per source, on average.
    pub rate: f64,
    /// Answers at once.
    pub burst: f64,
}

/// DNS over TCP's limits, checked (from [`DnsSection::tcp_limits`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DnsTcpLimits {
    /// Connections open at most, in total.
    pub max_connections: usize,
    /// Connections open at most per source.
    pub max_per_ip: usize,
    /// The idle, read and write timeout.
    pub idle_timeout: Duration,
}

impl DnsSection {
    /// The UDP budget, checked.
    pub fn udp_budget(&self) -> Result<DnsUdpBudget> {
        for (key, v) in [("udp_rate", self.udp_rate), ("udp_burst", self.udp_burst)] {
            if !(v.is_finite() && (0.1..=1_000_000.0).contains(&v)) {
                bail!("dns.{key} must be between 0.1 and 1000000, got {v}");
            }
        }
        Ok(DnsUdpBudget {
            rate: self.udp_rate,
            burst: self.udp_burst,
        })
    }

    /// The TCP limits, checked.
    pub fn tcp_limits(&self) -> Result<DnsTcpLimits> {
        for (key, v) in [
            ("max_tcp_connections", self.max_tcp_connections),
            ("max_tcp_per_ip", self.max_tcp_per_ip),
        ] {
            if !(1..=1_000_000).contains(&v) {
                bail!("dns.{key} must be between 1 and 1000000, got {v}");
            }
        }
        Ok(DnsTcpLimits {
            max_connections: self.max_tcp_connections,
            max_per_ip: self.max_tcp_per_ip,
            idle_timeout: crate::seconds(self.tcp_idle_timeout, "dns.tcp_idle_timeout", 3600.0)?,
        })
    }
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
            max_tcp_connections: 128,
            max_tcp_per_ip: 4,
            tcp_idle_timeout: 10.0,
            udp_rate: 20.0,
            udp_burst: 60.0,
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
