//! Reads an existing fgms 0.13 `fgms.conf` (`name = value` lines) into the
//! `[relay]` settings, so an operator can switch with the file they have.
//!
//! Like fgms: a line is a comment only when column 0 is `#`, and inline `#` is
//! not stripped (so `server.telnet_port = 5001 # x` is an error, as in fgms, but
//! here with the line named). Relay and crossfeed entries are `host` then `port`
//! pairs. Keys fgms knows but lobby does not need (tracker, admin CLI, log file,
//! daemon) are accepted and reported as ignored; any other key is an error.

use crate::RelaySection;
use anyhow::{bail, Context, Result};

/// What reading the file produced.
#[derive(Debug, Default)]
pub struct Parsed {
    /// UDP port (`server.port`), if set.
    pub port: Option<u16>,
    /// Bind address (`server.address`), if set.
    pub address: Option<String>,
    /// Telnet port (`server.telnet_port`), 0 = disabled.
    pub telnet_port: Option<u16>,
    /// Keys accepted but without effect in lobby.
    pub ignored: Vec<String>,
}

const IGNORED: &[&str] = &[
    "server.domain",
    "server.admin_port",
    "server.admin_user",
    "server.admin_pass",
    "server.admin_enable",
    "server.admin_cli",
    "server.logfile",
    "server.daemon",
];

fn bool_value(v: &str) -> Option<bool> {
    match v {
        "true" | "on" | "1" => Some(true),
        "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Applies `text` (an fgms.conf) onto `relay`.
pub fn apply(text: &str, origin: &str, relay: &mut RelaySection) -> Result<Parsed> {
    let mut out = Parsed::default();
    let mut pending_relay: Option<String> = None;
    let (mut tracked, mut tracking_server, mut tracking_port) = (None, None, None);
    let mut pending_cf: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let lineno = n + 1;
        let at = || format!("{origin}:{lineno}");
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = raw.split_once('=') else {
            bail!("{}: expected `name = value`, got {raw:?}", at());
        };
        let (k, v) = (k.trim(), v.trim());
        let num = |what: &str| -> Result<f64> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .with_context(|| format!("{}: invalid value for {k} ({what}): {v:?}", at()))
        };
        let port = || -> Result<u16> {
            v.parse::<u16>()
                .with_context(|| format!("{}: invalid port for {k}: {v:?}", at()))
        };
        match k {
            "server.name" => relay.name = v.to_string(),
            "server.address" => out.address = Some(v.to_string()).filter(|s| !s.is_empty()),
            "server.port" => out.port = Some(port()?),
            "server.telnet_port" => out.telnet_port = Some(port()?),
            "server.out_of_reach" => relay.out_of_reach = num("nm")?,
            "server.max_radar_range" => relay.max_radar_range = num("nm")?,
            "server.playerexpires" => relay.player_expiry = num("seconds")?,
            "server.is_hub" => relay.hub = v == "true",
            "relay.host" => pending_relay = Some(v.to_string()),
            "relay.port" => {
                let host = pending_relay.take().with_context(|| {
                    format!("{}: relay.port without a relay.host before it", at())
                })?;
                relay.relays.push(join(&host, port()?));
            }
            "crossfeed.host" => pending_cf = Some(v.to_string()),
            "crossfeed.port" => {
                let host = pending_cf.take().with_context(|| {
                    format!(
                        "{}: crossfeed.port without a crossfeed.host before it",
                        at()
                    )
                })?;
                relay.crossfeeds.push(join(&host, port()?));
            }
            "server.tracked" => {
                tracked = Some(
                    bool_value(v)
                        .with_context(|| format!("{}: invalid value for {k}: {v:?}", at()))?,
                )
            }
            "server.tracking_server" => tracking_server = Some(v.to_string()),
            "server.tracking_port" => tracking_port = Some(port()?),
            "server.FQDN" => relay.tracker_fqdn = v.to_string(),
            "whitelist" => relay.whitelist.push(v.to_string()),
            "blacklist" => relay.blacklist.push(v.to_string()),
            k if IGNORED.contains(&k) => {
                if k == "server.daemon" && bool_value(v).is_none() {
                    bail!("{}: invalid value for {k}: {v:?}", at());
                }
                out.ignored.push(k.to_string());
            }
            other => bail!("{}: unknown fgms option {other:?}", at()),
        }
    }
    if let Some(h) = pending_relay {
        bail!("{origin}: relay.host {h:?} has no relay.port after it");
    }
    if let Some(h) = pending_cf {
        bail!("{origin}: crossfeed.host {h:?} has no crossfeed.port after it");
    }
    // fgms reports to the tracker only with `server.tracked = true`, and then needs
    // the server; its examples use port 8000, which is taken when none is given.
    match (tracked, tracking_server) {
        (Some(true), Some(host)) if !host.is_empty() => {
            relay.tracker = join(&host, tracking_port.unwrap_or(8000));
        }
        (Some(true), _) => bail!("{origin}: server.tracked = true needs server.tracking_server"),
        (Some(false), _) => relay.tracker.clear(),
        (None, _) => {}
    }
    let bind = out.address.clone();
    if let Some(p) = out.port {
        relay.listen = match &bind {
            Some(a) => vec![join(a, p)],
            None => vec![format!("0.0.0.0:{p}"), format!("[::]:{p}")],
        };
        // fgms: setting the data port moves telnet to port + 1.
        if out.telnet_port.is_none() {
            out.telnet_port = p.checked_add(1);
        }
    }
    if let Some(t) = out.telnet_port {
        relay.telnet = match (t, &bind) {
            (0, _) => vec![],
            (t, Some(a)) => vec![join(a, t)],
            (t, None) => vec![format!("0.0.0.0:{t}"), format!("[::]:{t}")],
        };
    }
    Ok(out)
}

fn join(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# fgms example
server.name = mpserver99
server.address =
server.port = 5010
server.out_of_reach = 150
server.max_radar_range = 1500
server.playerexpires = 12
server.is_hub = true
server.tracked = false
server.admin_cli = false
relay.host = 127.0.0.2
relay.port = 5000
relay.host = 127.0.0.3
relay.port = 5002
crossfeed.host = 127.0.0.1
crossfeed.port = 5100
whitelist = 10.1.2.3
blacklist = 192.0.2.0/24
";

    #[test]
    fn reads_an_fgms_conf() {
        let mut r = RelaySection::default();
        let p = apply(SAMPLE, "fgms.conf", &mut r).unwrap();
        assert_eq!(r.name, "mpserver99");
        assert_eq!(r.listen, vec!["0.0.0.0:5010", "[::]:5010"]);
        assert_eq!(r.telnet, vec!["0.0.0.0:5011", "[::]:5011"]);
        assert_eq!(r.out_of_reach, 150.0);
        assert_eq!(r.max_radar_range, 1500.0);
        assert_eq!(r.player_expiry, 12.0);
        assert!(r.hub);
        assert_eq!(r.relays, vec!["127.0.0.2:5000", "127.0.0.3:5002"]);
        assert_eq!(r.crossfeeds, vec!["127.0.0.1:5100"]);
        assert_eq!(r.whitelist, vec!["10.1.2.3"]);
        assert_eq!(r.blacklist, vec!["192.0.2.0/24"]);
        assert_eq!(p.ignored, vec!["server.admin_cli"]);
        assert_eq!(r.tracker, "", "server.tracked = false: no tracker");
        // fgms.conf has no per-source cap: the default applies.
        assert_eq!(r.engine_config().unwrap().max_pilots_per_ip, 16);
    }

    #[test]
    fn the_tracker_keys_configure_the_tracker_link() {
        // fgms's production sample: tracked, the tracker's name and port, and the FQDN
        // sent in the identification line.
        let mut r = RelaySection::default();
        apply(
            "server.name = mpserver01\nserver.FQDN = mpserver01.flightgear.org\nserver.tracked = true\nserver.tracking_server = 192.0.2.80\nserver.tracking_port = 8000\n",
            "f",
            &mut r,
        )
        .unwrap();
        assert_eq!(r.tracker, "192.0.2.80:8000");
        let t = r.tracker_options().unwrap().unwrap();
        assert_eq!(t.fqdn, "mpserver01.flightgear.org");
        assert_eq!(t.server_name, "mpserver01");
        // No port: fgms's examples' 8000; an IPv6 tracker is bracketed.
        let mut r = RelaySection::default();
        apply(
            "server.tracked = true\nserver.tracking_server = 2001:db8::80\n",
            "f",
            &mut r,
        )
        .unwrap();
        assert_eq!(r.tracker, "[2001:db8::80]:8000");
        // tracked without a server is an error naming the key; a bad boolean too.
        let e = apply("server.tracked = true\n", "f", &mut r).unwrap_err();
        assert!(e.to_string().contains("server.tracking_server"), "{e}");
        assert!(apply("server.tracked = maybe\n", "f", &mut r).is_err());
        // tracked = false turns off a tracker set before (e.g. by --config).
        let mut r = RelaySection {
            tracker: "192.0.2.80:8000".into(),
            ..RelaySection::default()
        };
        apply(
            "server.tracked = false\nserver.tracking_server = x\n",
            "f",
            &mut r,
        )
        .unwrap();
        assert!(r.tracker_options().unwrap().is_none());
    }

    #[test]
    fn inline_comments_are_not_stripped_like_fgms() {
        let mut r = RelaySection::default();
        apply("server.name = amy # x\n", "f", &mut r).unwrap();
        assert_eq!(r.name, "amy # x");
        let e = apply("server.telnet_port = 25001 # x\n", "f", &mut r).unwrap_err();
        assert!(e.to_string().contains("f:1"), "{e}");
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let mut r = RelaySection::default();
        let e = apply("server.name = a\nserver.bogus = 1\n", "f", &mut r).unwrap_err();
        assert!(
            e.to_string().contains("f:2") && e.to_string().contains("server.bogus"),
            "{e}"
        );
        assert!(apply("relay.port = 5000\n", "f", &mut r).is_err());
        assert!(apply("relay.host = x\n", "f", &mut r).is_err());
        assert!(apply("no equals sign\n", "f", &mut r).is_err());
    }

    #[test]
    fn telnet_port_zero_disables_and_address_binds() {
        let mut r = RelaySection::default();
        apply(
            "server.address = 127.0.0.1\nserver.port = 6000\nserver.telnet_port = 0\n",
            "f",
            &mut r,
        )
        .unwrap();
        assert_eq!(r.listen, vec!["127.0.0.1:6000"]);
        assert!(r.telnet.is_empty());
    }

    proptest::proptest! {
        /// Any text is either applied or refused with an error; it never panics.
        #[test]
        fn arbitrary_files_never_panic(text in "(\\PC{0,40}\n){0,20}") {
            let mut r = RelaySection::default();
            let _ = apply(&text, "fuzz", &mut r);
        }
    }
}
