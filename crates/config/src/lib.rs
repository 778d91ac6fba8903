//! lobby's configuration: the TOML file (one table per part, every key with a
//! default, unknown keys rejected with the key named), an existing fgms.conf read
//! into `[relay]`, the admin API's run-time overlay of the relay's lists, and the
//! checked options each part is started with. Pure: no sockets and no clock (the
//! master's `update_addr`, the one value resolved when it is a name, is resolved by
//! the lookup the caller passes).
//! It depends on no part: the parts depend on it.

use anyhow::{bail, Context, Result};
use ipnet::IpNet;
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

pub mod admin;
mod dns;
pub mod fgms_conf;
#[cfg(feature = "flags")]
pub mod flags;
mod history;
mod http;
mod master;
pub mod overlay;
mod relay;
mod sim;
pub mod tokens;
mod tracker;

pub use admin::AdminSection;
pub use dns::{DirectorySection, DnsSection, DnsTcpLimits, DnsUdpBudget, RelayEntry, SceneryEntry};
pub use history::{HistoryOptions, HistorySection};
pub use http::{HttpSection, Limits};
pub use master::{AdminEntry, MasterSection, Resolve, ServerListOptions};
pub use relay::{
    Kind, PeerName, PeerOptions, RelaySection, TelnetOptions, TiersSetting, TrackerOptions,
};
pub use sim::SimSection;
pub use tracker::{AllowedRelay, TrackerRelay, TrackerSection, TrackerServerOptions};

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

/// A number of seconds above 0 and at most `max`, as a duration. `what` names the
/// flag or key in the error (`--timeout`, `master.server_ttl`).
pub fn seconds(v: f64, what: &str, max: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        bail!("{what} must be a positive number of seconds (at most {max}), got {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

/// [`seconds`] for clap's value parsers: parses the text first.
pub fn parse_seconds(text: &str, max: f64) -> Result<f64, SecondsError> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| SecondsError::NotANumber(text.to_string()))?;
    if seconds(v, "the value", max).is_err() {
        return Err(SecondsError::OutOfRange { max, got: v });
    }
    Ok(v)
}

/// Why [`parse_seconds`] refused its text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecondsError {
    /// Not a number (the text).
    #[error("{0:?} is not a number of seconds")]
    NotANumber(String),
    /// A number, but not above 0 and at most the maximum (as [`seconds`] words it).
    #[error("the value must be a positive number of seconds (at most {max}), got {got}")]
    OutOfRange {
        /// The largest allowed.
        max: f64,
        /// The number given.
        got: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IP literals only: the tests resolve no name.
    fn literal(v: &str) -> std::io::Result<SocketAddr> {
        v.parse()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    }

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
        let c = f.master.engine_config(&literal).unwrap();
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
            .engine_config(&literal)
            .unwrap_err()
            .to_string()
            .contains("min_server_version"));
        let f = parse("[master]\npage_size = 20\n", "x").unwrap();
        assert!(f
            .master
            .engine_config(&literal)
            .unwrap_err()
            .to_string()
            .contains("page_size"));
        let f = parse("[master]\nupdate_addr = \"[::1]:27010\"\n", "x").unwrap();
        assert!(f.master.engine_config(&literal).is_err());
        assert_eq!(c.admin_allow.len(), 2, "loopback by default");
        assert_eq!(c.scan_reply_bytes_per_sec, 65_536);
        let f = parse(
            "[master]\nadmin_allow = [\"10.0.0.0/8\", \"2001:db8::1\"]\n",
            "x",
        )
        .unwrap();
        let c = f.master.engine_config(&literal).unwrap();
        assert!(c.admin_allow[1].contains(&"2001:db8::1".parse::<IpAddr>().unwrap()));
        let f = parse("[master]\nadmin_allow = [\"10.0.0.0/40\"]\n", "x").unwrap();
        let e = format!("{:#}", f.master.engine_config(&literal).unwrap_err());
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
    fn relay_tiers_read_as_text_or_list_and_off_means_none() {
        let tiers = |toml: &str| {
            parse(&format!("[relay]\n{toml}\n"), "x")
                .map_err(|e| format!("{e:#}"))
                .and_then(|f| f.relay.engine_config().map_err(|e| format!("{e:#}")))
                .map(|c| c.tiers)
        };
        let default = tiers("").unwrap();
        assert_eq!(default, ::relay::Tiers::recommended());
        assert_eq!(default.to_string(), "full@10,2hz@40,1hz");
        assert!(tiers("tiers = \"off\"").unwrap().is_off());
        assert!(tiers("tiers = []").unwrap().is_off());
        let t = tiers("tiers = [\"full@5\", \"1hz\"]\ntier_hysteresis = 0.5").unwrap();
        assert_eq!(t.to_string(), "full@5,1hz");
        assert_eq!(t.hysteresis_nm, 0.5);
        let e = tiers("tiers = \"full@10,0.2hz\"").unwrap_err();
        assert!(e.contains("relay.tiers") && e.contains("1.5"), "{e}");
        let e = tiers("tiers = \"2hz,1hz\"").unwrap_err();
        assert!(e.contains("relay.tiers") && e.contains("RATE@NM"), "{e}");
        assert!(tiers("tier_hysteresis = -1").is_err());
        assert!(tiers("tiers = 3").is_err(), "neither text nor a list");
    }

    #[test]
    fn http_limits_have_defaults_and_checks() {
        let f = parse("[http]\nlisten = [\"127.0.0.1:0\"]\n", "x").unwrap();
        assert_eq!(f.http.limits().unwrap(), Limits::default());
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
    fn the_telnet_write_timeout_has_a_default_and_a_check() {
        let r = parse("[relay]\n", "x").unwrap().relay;
        assert_eq!(
            r.telnet_options().unwrap().write_timeout,
            Duration::from_secs(10)
        );
        let r = parse("[relay]\ntelnet_write_timeout = 2\n", "x")
            .unwrap()
            .relay;
        assert_eq!(
            r.telnet_options().unwrap().write_timeout,
            Duration::from_secs(2)
        );
        let r = parse("[relay]\ntelnet_write_timeout = -1\n", "x")
            .unwrap()
            .relay;
        let e = r.telnet_options().unwrap_err().to_string();
        assert!(e.contains("relay.telnet_write_timeout"), "{e}");
    }

    #[test]
    fn the_tracker_write_timeout_has_a_default_and_a_check() {
        let t = parse("[tracker]\n", "x").unwrap().tracker;
        assert_eq!(
            t.server_options().unwrap().write_timeout,
            Duration::from_secs(30)
        );
        let t = parse("[tracker]\nwrite_timeout = 1.5\n", "x")
            .unwrap()
            .tracker;
        assert_eq!(
            t.server_options().unwrap().write_timeout,
            Duration::from_millis(1500)
        );
        let t = parse("[tracker]\nwrite_timeout = 0\n", "x")
            .unwrap()
            .tracker;
        let e = t.server_options().unwrap_err().to_string();
        assert!(e.contains("tracker.write_timeout"), "{e}");
    }

    #[test]
    fn dns_tcp_limits_have_defaults_and_checks() {
        let l = parse("[dns]\n", "x").unwrap().dns.tcp_limits().unwrap();
        assert_eq!(
            (l.max_connections, l.max_per_ip, l.idle_timeout),
            (128, 4, Duration::from_secs(10))
        );
        for (bad, key) in [
            ("max_tcp_connections = 0", "dns.max_tcp_connections"),
            ("max_tcp_per_ip = 0", "dns.max_tcp_per_ip"),
            ("tcp_idle_timeout = 0", "dns.tcp_idle_timeout"),
        ] {
            let f = parse(&format!("[dns]\n{bad}\n"), "x").unwrap();
            let e = f.dns.tcp_limits().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        for (bad, key) in [
            ("udp_rate = 0", "dns.udp_rate"),
            ("udp_burst = inf", "dns.udp_burst"),
        ] {
            let f = parse(&format!("[dns]\n{bad}\n"), "x").unwrap();
            let e = f.dns.udp_budget().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }

    #[test]
    fn peers_get_short_labels() {
        use crate::relay::{Kind, PeerName};
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

    #[test]
    fn bounds_and_messages() {
        assert_eq!(
            seconds(2.5, "--t", 10.0).unwrap(),
            Duration::from_millis(2500)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 11.0] {
            let e = seconds(bad, "master.server_ttl", 10.0)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("master.server_ttl must be"), "{e}");
        }
        assert!(parse_seconds("0", 3600.0).is_err());
        assert!(parse_seconds("NaN", 3600.0).is_err());
        assert!(parse_seconds("x", 3600.0)
            .unwrap_err()
            .to_string()
            .contains("not a number"));
        assert_eq!(
            parse_seconds("0", 3600.0).unwrap_err().to_string(),
            seconds(0.0, "the value", 3600.0).unwrap_err().to_string()
        );
        assert_eq!(parse_seconds(" 2.5", 3600.0).unwrap(), 2.5);
    }
}
