//! Relay peers and crossfeed targets given as `host:port`, and when each name is
//! resolved: names are resolved off the engine, retried with backoff while they do
//! not resolve, and resolved again periodically, so a name that does not resolve at
//! start (DNS not up yet) never stops the relay, and a peer that moves to a new
//! address is followed. fgms resolves once at start and logs "could not resolve";
//! lobby keeps trying.
//!
//! [`PeerName`] is a configured name checked for syntax; [`Peers`] is the pure
//! schedule (time passed in) that the binary's resolver task runs, and the engine
//! configuration the resolved addresses complete ([`Peers::apply`]).

use crate::{Config, RelayPeer};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

/// What a configured address is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A relay this one exchanges traffic with.
    Relay,
    /// A crossfeed target.
    Crossfeed,
}

impl Kind {
    /// What it is, in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Relay => "relay peer",
            Kind::Crossfeed => "crossfeed target",
        }
    }
}

/// One configured `host:port`, checked for syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerName {
    /// Relay or crossfeed.
    pub kind: Kind,
    /// As written in the configuration.
    pub text: String,
    /// Host name or IP literal.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Short label for the telnet list (fgms prints the host's first DNS label).
    pub label: String,
}

impl PeerName {
    /// Checks `text` as `HOST:PORT` (IPv6 literals in brackets). Only a malformed
    /// value is an error; whether the name resolves is found out later.
    pub fn parse(text: &str, kind: Kind) -> Result<PeerName, PeerNameError> {
        let bad = |problem: &'static str| PeerNameError {
            kind,
            text: text.to_string(),
            problem,
        };
        let t = text.trim();
        let Some((host, port)) = t.rsplit_once(':') else {
            return Err(bad("expected HOST:PORT"));
        };
        let bracketed = host.starts_with('[') && host.ends_with(']');
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.contains(':') && !bracketed {
            return Err(bad("write an IPv6 address in brackets, [ADDR]:PORT"));
        }
        let port: u16 = match port.parse() {
            Ok(p) if p != 0 => p,
            _ => return Err(bad("the port must be 1-65535")),
        };
        let literal = host.parse::<IpAddr>().is_ok();
        if host.is_empty() || (host.contains(':') && !literal) || !valid_hostname(host) && !literal
        {
            return Err(bad("expected HOST:PORT"));
        }
        let label = if literal {
            host.to_string()
        } else {
            host.split('.').next().unwrap_or(host).to_string()
        };
        Ok(PeerName {
            kind,
            text: t.to_string(),
            host: host.to_string(),
            port,
            label,
        })
    }

    /// The address, when the host is an IP literal (no resolution needed).
    pub fn literal(&self) -> Option<SocketAddr> {
        self.host
            .parse::<IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, self.port))
    }
}

/// Letters, digits, `-`, `_` and dots, 1-253 characters, labels of 1-63.
fn valid_hostname(h: &str) -> bool {
    h.len() <= 253
        && h.trim_end_matches('.').split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// A configured `host:port` that cannot be used, with what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {} {text:?}: {problem}", kind.name())]
pub struct PeerNameError {
    /// Relay or crossfeed.
    pub kind: Kind,
    /// As written.
    pub text: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// First retry after a failed resolution; doubled after each further failure.
const RETRY_MIN: Duration = Duration::from_secs(1);
/// Longest wait between two attempts at a name that does not resolve.
const RETRY_MAX: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
struct Entry {
    name: PeerName,
    addr: Option<SocketAddr>,
    next: Option<Instant>,
    backoff: Duration,
}

/// What became of one resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// First address, or a new one: the engine needs the new configuration.
    Changed,
    /// Same address as before.
    Same,
    /// Did not resolve; the last known address (if any) stays in use.
    Failed,
}

/// The configured peers, their last known addresses and when each name is due.
#[derive(Debug, Clone)]
pub struct Peers {
    entries: Vec<Entry>,
    refresh: Duration,
}

impl Peers {
    /// The peers `names`, due at once (IP literals need no resolution). Addresses
    /// already known for the same text in `previous` (before a reload) are kept.
    pub fn new(
        names: Vec<PeerName>,
        refresh: Duration,
        previous: Option<&Peers>,
        now: Instant,
    ) -> Peers {
        let entries = names
            .into_iter()
            .map(|name| {
                let literal = name.literal();
                let known = previous.and_then(|p| {
                    p.entries
                        .iter()
                        .find(|e| e.name.text == name.text && e.name.kind == name.kind)
                });
                Entry {
                    addr: literal.or(known.and_then(|e| e.addr)),
                    next: if literal.is_some() {
                        None
                    } else {
                        Some(known.and_then(|e| e.next).unwrap_or(now))
                    },
                    backoff: known.map_or(RETRY_MIN, |e| e.backoff),
                    name,
                }
            })
            .collect();
        Peers { entries, refresh }
    }

    /// Names due for resolution at `now`.
    pub fn due(&self, now: Instant) -> Vec<PeerName> {
        self.entries
            .iter()
            .filter(|e| e.next.is_some_and(|t| t <= now))
            .map(|e| e.name.clone())
            .collect()
    }

    /// When the next name is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.entries.iter().filter_map(|e| e.next).min()
    }

    /// Records a resolution of `name` (ignored if it is no longer configured).
    pub fn record(&mut self, name: &PeerName, now: Instant, got: Option<SocketAddr>) -> Outcome {
        let Some(e) = self.entries.iter_mut().find(|e| e.name == *name) else {
            return Outcome::Same;
        };
        match got {
            Some(a) => {
                e.backoff = RETRY_MIN;
                e.next = Some(now + self.refresh);
                if e.addr.replace(a) == Some(a) {
                    Outcome::Same
                } else {
                    Outcome::Changed
                }
            }
            None => {
                e.next = Some(now + e.backoff);
                e.backoff = (e.backoff * 2).min(RETRY_MAX);
                Outcome::Failed
            }
        }
    }

    /// The address in use for `name`, if it has one.
    pub fn address(&self, name: &PeerName) -> Option<SocketAddr> {
        self.entries
            .iter()
            .find(|e| e.name == *name)
            .and_then(|e| e.addr)
    }

    /// When `name` is next tried, if it is resolved at all (literals are not).
    pub fn retry_at(&self, name: &PeerName) -> Option<Instant> {
        self.entries
            .iter()
            .find(|e| e.name == *name)
            .and_then(|e| e.next)
    }

    /// Every configured peer, in configuration order, with its address in use.
    pub fn entries(&self) -> impl Iterator<Item = (&PeerName, Option<SocketAddr>)> {
        self.entries.iter().map(|e| (&e.name, e.addr))
    }

    /// `base` with every peer that has an address added to its relays and crossfeeds.
    pub fn apply(&self, base: &Config) -> Config {
        let mut c = base.clone();
        for e in &self.entries {
            let Some(addr) = e.addr else { continue };
            match e.name.kind {
                Kind::Relay => c.relays.push(RelayPeer {
                    addr,
                    label: e.name.label.clone(),
                }),
                Kind::Crossfeed => c.crossfeeds.push(addr),
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> PeerName {
        PeerName::parse(s, Kind::Relay).unwrap()
    }

    #[test]
    fn only_malformed_values_are_errors() {
        for ok in [
            "mpserver01.flightgear.org:5000",
            "127.0.0.1:5000",
            "[::1]:5000",
            "relay_1:5000",
        ] {
            assert!(PeerName::parse(ok, Kind::Relay).is_ok(), "{ok}");
        }
        for bad in [
            "mpserver01",
            "host:0",
            "host:99999",
            ":5000",
            "a b:5000",
            "::1:5000",
            "x..y:1",
        ] {
            let e = PeerName::parse(bad, Kind::Crossfeed)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("crossfeed target") && e.contains(bad),
                "{bad}: {e}"
            );
        }
        assert_eq!(name("mpserver01.flightgear.org:5000").label, "mpserver01");
        assert_eq!(
            name("[::1]:5000").literal(),
            Some("[::1]:5000".parse().unwrap())
        );
    }

    #[test]
    fn failures_back_off_and_successes_refresh() {
        let t0 = Instant::now();
        let n = name("mpserver01.flightgear.org:5000");
        let mut p = Peers::new(
            vec![n.clone(), name("127.0.0.1:5002")],
            Duration::from_secs(300),
            None,
            t0,
        );
        assert_eq!(p.due(t0), vec![n.clone()], "literals need no resolution");
        let mut t = t0;
        let mut waits = vec![];
        for _ in 0..9 {
            assert_eq!(p.record(&n, t, None), Outcome::Failed);
            let next = p.next_due().unwrap();
            waits.push((next - t).as_secs());
            t = next;
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        // The literal is already in the configuration; the name is not yet.
        assert_eq!(p.apply(&Config::default()).relays.len(), 1);
        let a: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert_eq!(p.record(&n, t, Some(a)), Outcome::Changed);
        assert_eq!(p.next_due(), Some(t + Duration::from_secs(300)));
        assert_eq!(p.record(&n, t, Some(a)), Outcome::Same);
        let c = p.apply(&Config::default());
        assert_eq!(c.relays.len(), 2);
        assert_eq!(c.relays[0].label, "mpserver01");
        // A later failure keeps the address; the backoff starts again from 1 s.
        assert_eq!(p.record(&n, t, None), Outcome::Failed);
        assert_eq!(p.next_due(), Some(t + Duration::from_secs(1)));
        assert_eq!(p.apply(&Config::default()).relays.len(), 2);
        let b: SocketAddr = "192.0.2.2:5000".parse().unwrap();
        assert_eq!(p.record(&n, t, Some(b)), Outcome::Changed);
    }

    #[test]
    fn a_reload_keeps_known_addresses() {
        let t0 = Instant::now();
        let n = name("relay.example:5000");
        let mut p = Peers::new(vec![n.clone()], Duration::from_secs(300), None, t0);
        let a: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        p.record(&n, t0, Some(a));
        let q = Peers::new(
            vec![n.clone(), name("other.example:5000")],
            Duration::from_secs(300),
            Some(&p),
            t0,
        );
        let c = q.apply(&Config::default());
        assert_eq!(c.relays.iter().map(|r| r.addr).collect::<Vec<_>>(), vec![a]);
        assert_eq!(q.due(t0).len(), 1, "only the new name is due at once");
    }
}
