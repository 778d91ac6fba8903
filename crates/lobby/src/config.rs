//! The TOML configuration file: one table per part, every key with a default,
//! unknown keys rejected with the key named.

use anyhow::{bail, Context, Result};
use ipnet::IpNet;
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
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
}

/// The `[relay]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RelaySection {
    /// Name on the telnet list.
    pub name: String,
    /// UDP addresses to listen on (IPv4 and IPv6).
    pub listen: Vec<String>,
    /// TCP addresses for the telnet pilot list; empty disables it.
    pub telnet: Vec<String>,
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
    /// Crossfeed targets, `host:port`.
    pub crossfeeds: Vec<String>,
    /// IPs or CIDRs allowed to send relay traffic without being relays.
    pub whitelist: Vec<String>,
    /// IPs or CIDRs whose traffic is dropped.
    pub blacklist: Vec<String>,
    /// Upper bound on pilots held.
    pub max_pilots: usize,
    /// Receive threads per listen address (SO_REUSEPORT); 0 = one per CPU core.
    pub workers: usize,
}

impl Default for RelaySection {
    fn default() -> Self {
        let d = relay::Config::default();
        RelaySection {
            name: d.name,
            listen: vec!["0.0.0.0:5000".into(), "[::]:5000".into()],
            telnet: vec!["0.0.0.0:5001".into(), "[::]:5001".into()],
            out_of_reach: d.out_of_reach_nm,
            max_radar_range: d.max_radar_range_nm,
            player_expiry: d.player_expiry.as_secs_f64(),
            lazy_relay_interval: d.lazy_relay_interval.as_secs_f64(),
            hub: false,
            relays: vec![],
            crossfeeds: vec![],
            whitelist: vec![],
            blacklist: vec![],
            max_pilots: d.max_pilots,
            workers: 0,
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

/// Resolves `host:port` once (as fgms does at start-up); the label is the host's
/// first DNS label, or the IP itself.
pub fn peer(s: &str) -> Result<relay::RelayPeer> {
    let addr = s
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {s:?} (expected HOST:PORT)"))?
        .next()
        .with_context(|| format!("{s:?} resolved to no address"))?;
    let host = s.rsplit_once(':').map(|(h, _)| h).unwrap_or(s);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let label = if host.parse::<IpAddr>().is_ok() {
        host.to_string()
    } else {
        host.split('.').next().unwrap_or(host).to_string()
    };
    Ok(relay::RelayPeer { addr, label })
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
    if !(v.is_finite() && v > 0.0 && v < 1e9) {
        bail!("relay.{key} must be a positive number of seconds, got {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

impl RelaySection {
    /// The engine configuration this section describes (names resolved, values checked).
    pub fn engine_config(&self) -> Result<relay::Config> {
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
        Ok(relay::Config {
            name: self.name.clone(),
            out_of_reach_nm: self.out_of_reach,
            max_radar_range_nm: self.max_radar_range,
            player_expiry: secs(self.player_expiry, "player_expiry")?,
            lazy_relay_interval: secs(self.lazy_relay_interval, "lazy_relay_interval")?,
            relays: self.relays.iter().map(|s| peer(s)).collect::<Result<_>>()?,
            hub: self.hub,
            crossfeeds: self
                .crossfeeds
                .iter()
                .map(|s| peer(s).map(|p| p.addr))
                .collect::<Result<_>>()?,
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
    fn peers_get_short_labels() {
        assert_eq!(peer("127.0.0.1:5000").unwrap().label, "127.0.0.1");
        assert_eq!(peer("localhost:5000").unwrap().label, "localhost");
        assert!(net("192.168.0.0/16")
            .unwrap()
            .contains(&"192.168.4.4".parse::<IpAddr>().unwrap()));
        assert!(net("::1")
            .unwrap()
            .contains(&"::1".parse::<IpAddr>().unwrap()));
    }
}
