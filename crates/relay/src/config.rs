//! The engine's settings. Parsing (TOML, fgms.conf, CLI) lives in the binary;
//! this is the validated result.

use crate::tiers::Tiers;
use ipnet::IpNet;
use std::net::SocketAddr;
use std::time::Duration;

/// Another relay this one exchanges `SFGF` traffic with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayPeer {
    /// Where to send, and the source its traffic is expected from.
    pub addr: SocketAddr,
    /// Short label for the telnet list (fgms prints the host's first DNS label).
    pub label: String,
}

/// Everything the engine needs to decide who receives what.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Server name shown on the telnet list (`# This is <name>`).
    pub name: String,
    /// Range used when a client requests none, nautical miles (fgms `out_of_reach`).
    pub out_of_reach_nm: f64,
    /// Largest range a client may request, nautical miles (fgms `max_radar_range`).
    pub max_radar_range_nm: f64,
    /// A pilot silent this long is dropped (fgms `playerexpires`).
    pub player_expiry: Duration,
    /// Relays exchanged with (fgms `relay.host`/`relay.port`).
    pub relays: Vec<RelayPeer>,
    /// Hub mode: re-forward relay traffic to the other relays.
    pub hub: bool,
    /// Targets that get an `SFGF` copy of every valid datagram.
    pub crossfeeds: Vec<SocketAddr>,
    /// Addresses allowed to send `SFGF` without being configured relays.
    pub whitelist: Vec<IpNet>,
    /// Addresses whose datagrams are dropped.
    pub blacklist: Vec<IpNet>,
    /// LazyRelay: a relay with nobody in range still gets one datagram per sender this often.
    pub lazy_relay_interval: Duration,
    /// Upper bound on pilots (local and remote) so memory stays bounded.
    pub max_pilots: usize,
    /// Most local pilots per source IPv4 address or IPv6 /64 (see [`source_key`]).
    pub max_pilots_per_ip: usize,
    /// Most pilots arriving over one relay link.
    pub max_pilots_per_relay: usize,
    /// Bytes the relay sends a local pilot per byte it received from it: the bound
    /// on what a spoofed source can make the relay send its victim (see
    /// [`crate::engine`]'s reply budget).
    pub reply_ratio: u32,
    /// Distance-tiered forwarding: how often a local pilot is sent the position
    /// datagrams of a pilot at each distance ([`Tiers::off`]: every one, as fgms).
    pub tiers: Tiers,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            name: "lobby".into(),
            out_of_reach_nm: 100.0,
            max_radar_range_nm: 2000.0,
            player_expiry: Duration::from_secs(10),
            relays: Vec::new(),
            hub: false,
            crossfeeds: Vec::new(),
            whitelist: Vec::new(),
            blacklist: Vec::new(),
            lazy_relay_interval: Duration::from_secs(2),
            max_pilots: 50_000,
            max_pilots_per_ip: 16,
            max_pilots_per_relay: 5_000,
            reply_ratio: 512,
            tiers: Tiers::recommended(),
        }
    }
}

/// The unit a per-source limit counts in (one definition for every part).
pub use sansio::source_key;
