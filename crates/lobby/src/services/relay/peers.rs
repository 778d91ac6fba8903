//! Relay peers and crossfeed targets given as `host:port`: names are resolved off
//! the engine, retried with backoff while they do not resolve, and resolved again
//! periodically, so a name that does not resolve at start (DNS not up yet) never
//! stops the relay, and a peer that moves to a new address is followed. fgms
//! resolves once at start and logs "could not resolve"; lobby keeps trying.
//!
//! [`Peers`] is the pure schedule (time passed in); [`resolve_loop`] runs it.

use lifecycle::{lock, Stop};
use anyhow::Result;
use config::{Kind, PeerName};
use relay::stats::add;
use relay::{Engine, RelayPeer};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// First retry after a failed resolution; doubled after each further failure.
const RETRY_MIN: Duration = Duration::from_secs(1);
/// Longest wait between two attempts at a name that does not resolve.
const RETRY_MAX: Duration = Duration::from_secs(60);
/// Longest a resolution may take before it counts as failed.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Every configured peer, in configuration order, with its address in use.
    pub fn entries(&self) -> impl Iterator<Item = (&PeerName, Option<SocketAddr>)> {
        self.entries.iter().map(|e| (&e.name, e.addr))
    }

    /// `base` with every peer that has an address added to its relays and crossfeeds.
    pub fn apply(&self, base: &relay::Config) -> relay::Config {
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

/// The peers of a running relay and the configuration they complete.
pub struct PeerState {
    /// The engine configuration without the peers.
    pub base: relay::Config,
    /// The peers.
    pub peers: Peers,
}

/// Resolves due names until `stop`, applying every change to `engine`. `wake` is
/// notified when a reload replaced the peers.
pub async fn resolve_loop(
    state: Arc<Mutex<PeerState>>,
    engine: Arc<Mutex<Engine>>,
    wake: Arc<tokio::sync::Notify>,
    stop: Stop,
) -> Result<()> {
    let stats = lock(&engine).stats().clone();
    loop {
        let now = Instant::now();
        let due = lock(&state).peers.due(now);
        let mut changed = false;
        for name in due {
            let (host, port) = (name.host.clone(), name.port);
            let lookup = tokio::task::spawn_blocking(move || {
                udp::addr::resolve(&format!("{host}:{port}"), port)
            });
            let got = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
                Ok(Ok(Ok(a))) => Ok(a),
                Ok(Ok(Err(e))) => Err(e.to_string()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", RESOLVE_TIMEOUT.as_secs())),
            };
            let mut st = lock(&state);
            let before = st
                .peers
                .entries
                .iter()
                .find(|e| e.name == name)
                .and_then(|e| e.addr);
            match st
                .peers
                .record(&name, Instant::now(), got.as_ref().ok().copied())
            {
                Outcome::Changed => {
                    add(&stats.peer_address_changes, 1);
                    let addr = got.as_ref().ok();
                    match before {
                        None => {
                            tracing::info!(peer = %name.text, addr = ?addr, kind = name.kind.name(), "resolved")
                        }
                        Some(old) => {
                            tracing::info!(peer = %name.text, %old, new = ?addr, kind = name.kind.name(), "address changed")
                        }
                    }
                    changed = true;
                }
                Outcome::Same => {}
                Outcome::Failed => {
                    add(&stats.peer_resolve_failures, 1);
                    let error = got.err().unwrap_or_default();
                    let retry = st
                        .peers
                        .entries
                        .iter()
                        .find(|e| e.name == name)
                        .and_then(|e| e.next);
                    let in_s =
                        retry.map_or(0, |t| t.saturating_duration_since(Instant::now()).as_secs());
                    let kept = before
                        .map(|a| a.to_string())
                        .unwrap_or_else(|| "none".into());
                    tracing::warn!(peer = %name.text, kind = name.kind.name(), %error, retry_in_s = in_s, last_address = %kept, "could not resolve");
                }
            }
        }
        if changed {
            let st = lock(&state);
            let config = st.peers.apply(&st.base);
            drop(st);
            lock(&engine).reconfigure(config);
        }
        let next = lock(&state).peers.next_due();
        let sleep = next.map_or(Duration::from_secs(3600), |t| {
            t.saturating_duration_since(Instant::now())
        });
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = wake.notified() => {}
            _ = stop.stopped() => return Ok(()),
        }
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
        assert_eq!(p.apply(&relay::Config::default()).relays.len(), 1);
        let a: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert_eq!(p.record(&n, t, Some(a)), Outcome::Changed);
        assert_eq!(p.next_due(), Some(t + Duration::from_secs(300)));
        assert_eq!(p.record(&n, t, Some(a)), Outcome::Same);
        let c = p.apply(&relay::Config::default());
        assert_eq!(c.relays.len(), 2);
        assert_eq!(c.relays[0].label, "mpserver01");
        // A later failure keeps the address; the backoff starts again from 1 s.
        assert_eq!(p.record(&n, t, None), Outcome::Failed);
        assert_eq!(p.next_due(), Some(t + Duration::from_secs(1)));
        assert_eq!(p.apply(&relay::Config::default()).relays.len(), 2);
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
        let c = q.apply(&relay::Config::default());
        assert_eq!(c.relays.iter().map(|r| r.addr).collect::<Vec<_>>(), vec![a]);
        assert_eq!(q.due(t0).len(), 1, "only the new name is due at once");
    }
}
