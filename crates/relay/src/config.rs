//! The engine's settings. Parsing (TOML, fgms.conf, CLI) lives in the binary;
//! this is the validated result.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
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
        }
    }
}

/// The unit a per-source limit counts in: an IPv4 address, or the /64 network of
/// an IPv6 address (one subscriber's allocation; its interface ids are free to
/// pick). IPv4-mapped IPv6 addresses count as their IPv4 address.
pub fn source_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(a) => IpAddr::V4(a),
        IpAddr::V6(a) => {
            let s = a.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_ipv4_addresses_and_ipv6_64s() {
        let k = |s: &str| source_key(s.parse().unwrap()).to_string();
        assert_eq!(k("192.0.2.7"), "192.0.2.7");
        assert_eq!(k("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::");
        assert_eq!(k("2001:db8:1:2:ffff:1:2:3"), "2001:db8:1:2::");
        assert_ne!(k("2001:db8:1:3::1"), k("2001:db8:1:2::1"));
        assert_eq!(k("::ffff:192.0.2.7"), "192.0.2.7");
    }
}
