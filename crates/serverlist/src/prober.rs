//! The live prober: what probe.py does nightly, done continuously, as a sans-IO state
//! machine. It holds the schedule of every target address and one
//! [`query::Session`] per probe in flight; the caller moves datagrams and calls
//! [`Prober::poll`] when [`Prober::poll_timeout`] says so.
//!
//! Bounds, whatever the targets do:
//! - at most one probe in flight per address, at most `max_in_flight` in all;
//! - probes start at most `rate` per second (a token bucket of one second's worth);
//! - a probe is one [`query::Session`]: its datagrams are bounded by its budget
//!   (`info 49` and A2S_INFO, or A2S_INFO alone, each re-sent at most `retries`
//!   times, plus a challenge or the `info 48` fallback), each under 64 bytes: a
//!   listed address can never be made a target of more than that per interval;
//! - every address is probed again after `interval` (jittered ±20 %), and a silent
//!   one backs off: twice the interval after two silent rounds, up to 16 times.

use crate::catalog::ProbeInfo;
use query::{Budget, Kind, Outcome, Session, Step};
use sansio::rate::{Limit, TokenBucket};
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How the prober paces itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProberConfig {
    /// Seconds between probes of one address (jittered).
    pub interval: Duration,
    /// Probes started per second, at most.
    pub rate: u32,
    /// Probes in flight, at most.
    pub max_in_flight: usize,
    /// How long each try waits for an answer.
    pub attempt_timeout: Duration,
    /// Tries after the first.
    pub retries: u32,
    /// The longest back-off, as a multiple of `interval`.
    pub max_backoff: u32,
}

impl Default for ProberConfig {
    fn default() -> Self {
        ProberConfig {
            interval: Duration::from_secs(60),
            rate: 200,
            max_in_flight: 1024,
            // xash3d-query as probe.py runs it: a try every 2 s within 6 s.
            attempt_timeout: Duration::from_secs(2),
            retries: 2,
            max_backoff: 16,
        }
    }
}

/// How a probe ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// It answered.
    Answered {
        /// The address probed.
        addr: SocketAddr,
        /// What it said.
        info: ProbeInfo,
        /// Round trip of the answering try, µs (probe.py keeps the ping in ms to
        /// the µs, as xash3d-query prints it).
        ping_us: u32,
    },
    /// No (valid) answer within the probe's budget.
    Silent {
        /// The address probed.
        addr: SocketAddr,
        /// Why, for the log at debug.
        why: String,
    },
}

/// Counts since start, for `/stats` and `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProberCounts {
    /// Probes started.
    pub started: u64,
    /// Probes answered.
    pub answered: u64,
    /// Probes that ended silent or invalid.
    pub silent: u64,
    /// Datagrams sent.
    pub datagrams_out: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Datagrams from an address with no probe in flight (ignored).
    pub unsolicited: u64,
    /// Due probes that waited for the rate or the in-flight cap.
    pub deferred: u64,
}

#[derive(Debug, Clone, Copy)]
struct Target {
    kind: Kind,
    due: Instant,
    failures: u32,
}

/// The schedule and the probes in flight.
#[derive(Debug)]
pub struct Prober {
    cfg: ProberConfig,
    targets: HashMap<SocketAddr, Target>,
    due: BTreeSet<(Instant, SocketAddr)>,
    in_flight: HashMap<SocketAddr, Session>,
    /// Probes started: `rate` a second, one second's worth at once.
    starts: TokenBucket,
    /// The bucket's epoch (the prober's start).
    epoch: Instant,
    rng: u64,
    counts: ProberCounts,
}

impl Prober {
    /// A prober with no targets; `seed` drives the jitter.
    pub fn new(cfg: ProberConfig, now: Instant, seed: u64) -> Prober {
        Prober {
            starts: TokenBucket::new(),
            cfg,
            targets: HashMap::new(),
            due: BTreeSet::new(),
            in_flight: HashMap::new(),
            epoch: now,
            rng: seed | 1,
            counts: ProberCounts::default(),
        }
    }

    /// Applies a new pacing (a reload); the schedule is kept.
    pub fn reconfigure(&mut self, cfg: ProberConfig) {
        self.cfg = cfg;
    }

    /// Counts since start.
    pub fn counts(&self) -> ProberCounts {
        self.counts
    }

    /// Addresses scheduled.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Probes in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn jitter(&mut self, d: Duration) -> Duration {
        // xorshift64*: enough to spread probes, no security asked of it.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        let frac = r as f64 / (1u64 << 53) as f64;
        d.mul_f64(0.8 + 0.4 * frac)
    }

    /// Makes `targets` the addresses probed: new ones are due now, gone ones are
    /// dropped (a probe in flight ends and is reported all the same), kept ones keep
    /// their schedule (their query kind follows the new list).
    pub fn set_targets(&mut self, targets: &[(SocketAddr, Kind)], now: Instant) {
        let want: HashMap<SocketAddr, Kind> = targets.iter().copied().collect();
        let due = &mut self.due;
        self.targets.retain(|a, t| {
            let keep = want.contains_key(a);
            if !keep {
                due.remove(&(t.due, *a));
            }
            keep
        });
        for (a, kind) in want {
            match self.targets.get_mut(&a) {
                Some(t) => t.kind = kind,
                None => {
                    self.targets.insert(
                        a,
                        Target {
                            kind,
                            due: now,
                            failures: 0,
                        },
                    );
                    self.due.insert((now, a));
                }
            }
        }
    }

    /// The start rate: `rate` a second, as many at once.
    fn limit(&self) -> Limit {
        let rate = self.cfg.rate.max(1);
        Limit::per_second(f64::from(rate), rate)
    }

    fn send(
        &mut self,
        to: SocketAddr,
        datagrams: Vec<Vec<u8>>,
        out: &mut Vec<(SocketAddr, Vec<u8>)>,
    ) {
        for d in datagrams {
            self.counts.datagrams_out += 1;
            self.counts.bytes_out += d.len() as u64;
            out.push((to, d));
        }
    }

    fn finish(
        &mut self,
        addr: SocketAddr,
        outcome: Outcome,
        now: Instant,
        events: &mut Vec<Event>,
    ) {
        self.in_flight.remove(&addr);
        let event = match outcome {
            Outcome::Info { info, ping_ms } => Event::Answered {
                addr,
                info: ProbeInfo {
                    name: capped(info.name, 64),
                    map: capped(info.map, 64),
                    gamedir: capped(info.gamedir, 64),
                    players: info.players,
                    max: info.max_players,
                    bots: info.bots,
                    version: capped(info.version, 32),
                    password: info.password,
                    protocol: info.protocol,
                },
                ping_us: (ping_ms * 1000.0).round().clamp(0.0, f64::from(u32::MAX)) as u32,
            },
            Outcome::NoReply { hint } => Event::Silent { addr, why: hint },
            Outcome::Invalid { error } => Event::Silent { addr, why: error },
            other => Event::Silent {
                addr,
                why: format!("unexpected outcome {other:?}"),
            },
        };
        let answered = matches!(event, Event::Answered { .. });
        if answered {
            self.counts.answered += 1;
        } else {
            self.counts.silent += 1;
        }
        let interval = self.cfg.interval;
        let max_backoff = self.cfg.max_backoff.max(1);
        let wait = match self.targets.get_mut(&addr) {
            Some(t) => {
                t.failures = if answered {
                    0
                } else {
                    t.failures.saturating_add(1)
                };
                let mult = 1u32 << t.failures.saturating_sub(1).min(16);
                Some(interval.saturating_mul(mult.min(max_backoff)))
            }
            None => None,
        };
        if let Some(wait) = wait {
            let due = now + self.jitter(wait);
            if let Some(t) = self.targets.get_mut(&addr) {
                t.due = due;
            }
            self.due.insert((due, addr));
        }
        events.push(event);
    }

    /// Runs what is due at `now`: tries that timed out, and new probes as the rate
    /// and the in-flight cap allow. Datagrams to send go to `out`, ended probes to
    /// `events`.
    pub fn poll(
        &mut self,
        now: Instant,
        out: &mut Vec<(SocketAddr, Vec<u8>)>,
        events: &mut Vec<Event>,
    ) {
        let expired: Vec<SocketAddr> = self
            .in_flight
            .iter()
            .filter(|(_, s)| s.poll_timeout() <= now)
            .map(|(a, _)| *a)
            .collect();
        for a in expired {
            let Some(s) = self.in_flight.get_mut(&a) else {
                continue;
            };
            match s.handle_timeout(now) {
                Step::Send(d) => self.send(a, d, out),
                Step::Wait => {}
                Step::Done(o) => self.finish(a, o, now, events),
            }
        }
        let (limit, since) = (self.limit(), now.saturating_duration_since(self.epoch));
        while let Some(&(at, a)) = self.due.first() {
            if at > now {
                break;
            }
            if !self.starts.room(limit, since)
                || self.in_flight.len() >= self.cfg.max_in_flight.max(1)
            {
                self.counts.deferred += 1;
                break;
            }
            self.due.pop_first();
            let Some(t) = self.targets.get(&a).copied() else {
                continue;
            };
            if self.in_flight.contains_key(&a) {
                // Still running (a schedule moved under it): after it ends.
                continue;
            }
            self.starts.take(limit, since);
            self.counts.started += 1;
            let budget = Budget::new(t.kind, self.cfg.attempt_timeout, self.cfg.retries);
            let (session, first) = Session::with_budget(t.kind, now, budget);
            self.in_flight.insert(a, session);
            self.send(a, first, out);
        }
    }

    /// A datagram from `from` at `now`.
    pub fn handle(
        &mut self,
        from: SocketAddr,
        packet: &[u8],
        now: Instant,
        out: &mut Vec<(SocketAddr, Vec<u8>)>,
        events: &mut Vec<Event>,
    ) {
        let from = canonical(from);
        let Some(s) = self.in_flight.get_mut(&from) else {
            self.counts.unsolicited += 1;
            return;
        };
        match s.handle(packet, now) {
            Step::Send(d) => self.send(from, d, out),
            Step::Wait => {}
            Step::Done(o) => self.finish(from, o, now, events),
        }
    }

    /// When [`Prober::poll`] must run next, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let flight = self.in_flight.values().map(Session::poll_timeout).min();
        let next = if self.in_flight.len() >= self.cfg.max_in_flight.max(1) {
            None
        } else {
            let ready = self.epoch + self.starts.ready_at(self.limit());
            self.due.first().map(|(at, _)| (*at).max(ready))
        };
        match (flight, next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// `s` cut to at most `max` characters: what a server says is kept for every entry
/// (and saved), so a server sending a 64 KiB name does not make the list hold it.
fn capped(mut s: String, max: usize) -> String {
    if let Some((i, _)) = s.char_indices().nth(max) {
        s.truncate(i);
    }
    s
}

/// An IPv4-mapped IPv6 source (a dual-stack socket's view) as the IPv4 address it is.
pub fn canonical(a: SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => a,
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cfg() -> ProberConfig {
        ProberConfig {
            interval: Duration::from_secs(60),
            rate: 10,
            max_in_flight: 4,
            attempt_timeout: Duration::from_secs(2),
            retries: 2,
            max_backoff: 16,
        }
    }

    fn a(i: u32) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, (i % 250) as u8], 27015 + (i / 250) as u16))
    }

    /// A Xash server's answer to `info 49`.
    fn xash_info(players: u32) -> Vec<u8> {
        format!("\u{ff}\u{ff}\u{ff}\u{ff}info\n\\p\\49\\map\\crossfire\\dm\\0\\team\\0\\coop\\0\\numcl\\{players}\\maxcl\\8\\gamedir\\valve\\password\\0\\host\\Test")
            .chars()
            .map(|c| c as u32 as u8)
            .collect()
    }

    #[test]
    fn probes_answer_back_off_and_respect_the_caps() {
        let t0 = Instant::now();
        let mut p = Prober::new(cfg(), t0, 7);
        let targets: Vec<_> = (0..20).map(|i| (a(i), Kind::Info)).collect();
        p.set_targets(&targets, t0);
        let (mut out, mut ev) = (vec![], vec![]);
        p.poll(t0, &mut out, &mut ev);
        assert_eq!(p.in_flight(), 4, "the in-flight cap");
        assert_eq!(out.len(), 8, "info 49 and A2S_INFO each");
        assert!(out.iter().all(|(_, d)| d.len() < 64));
        // The first one answers.
        let first = out[0].0;
        out.clear();
        p.handle(
            first,
            &xash_info(3),
            t0 + Duration::from_millis(40),
            &mut out,
            &mut ev,
        );
        assert!(
            matches!(&ev[..], [Event::Answered { info, ping_us: 40_000, .. }] if info.players == 3)
        );
        ev.clear();
        // An answer from nobody asked is counted and ignored.
        p.handle(a(200), &xash_info(1), t0, &mut out, &mut ev);
        assert_eq!((p.counts().unsolicited, ev.len()), (1, 0));
        // Run the clock: everyone ends, no more than 10 probes start per second.
        let mut now = t0;
        let mut started = vec![(t0, p.counts().started)];
        while now < t0 + Duration::from_secs(40) {
            now = p.poll_timeout().unwrap().max(now);
            p.poll(now, &mut out, &mut ev);
            started.push((now, p.counts().started));
            assert!(p.in_flight() <= 4);
        }
        assert_eq!(ev.len(), 19, "every other probe ended silent");
        assert!(ev.iter().all(|e| matches!(e, Event::Silent { .. })));
        for w in started.windows(2) {
            let dt = w[1].0 - w[0].0;
            assert!((w[1].1 - w[0].1) as f64 <= 10.0 * dt.as_secs_f64() + 10.0);
        }
        // Bytes out per silent probe: 3 tries of two datagrams.
        let per_probe = p.counts().datagrams_out as f64 / p.counts().started as f64;
        assert!(per_probe <= 6.0, "{per_probe}");
        // The answered one comes back after about the interval; the silent ones too
        // (first silence: no back-off yet), then twice as late.
        let c = p.counts().started;
        while now < t0 + Duration::from_secs(200) {
            now = p.poll_timeout().unwrap().max(now);
            p.poll(now, &mut out, &mut ev);
        }
        assert!(p.counts().started >= c + 20, "everyone probed again");
        assert!(p.counts().started < c + 60, "silent ones backed off");
    }

    #[test]
    fn what_a_server_says_is_capped() {
        assert_eq!(capped("é".repeat(100), 64).chars().count(), 64);
        assert_eq!(capped("short".into(), 64), "short");
    }

    #[test]
    fn gone_targets_stop_and_one_probe_per_address() {
        let t0 = Instant::now();
        let mut p = Prober::new(cfg(), t0, 1);
        p.set_targets(&[(a(1), Kind::A2sInfo)], t0);
        let (mut out, mut ev) = (vec![], vec![]);
        p.poll(t0, &mut out, &mut ev);
        assert_eq!(out.len(), 1, "A2S_INFO alone for GoldSrc");
        p.set_targets(&[(a(1), Kind::A2sInfo)], t0);
        p.poll(t0, &mut out, &mut ev);
        assert_eq!(out.len(), 1, "still one in flight");
        p.set_targets(&[], t0);
        let mut now = t0;
        while let Some(t) = p.poll_timeout() {
            now = t.max(now);
            p.poll(now, &mut out, &mut ev);
        }
        assert_eq!(ev.len(), 1, "the probe in flight still ends");
        assert!(p.is_empty());
    }

    proptest! {
        /// Any datagrams from anywhere at any time: no panic, at most one session
        /// per address, and every probe ends within its budget.
        #[test]
        fn hostile_traffic_never_breaks_the_bounds(
            events in proptest::collection::vec((0u32..30, proptest::collection::vec(any::<u8>(), 0..200), 0u64..3000), 0..200)
        ) {
            let t0 = Instant::now();
            let mut p = Prober::new(cfg(), t0, 3);
            let targets: Vec<_> = (0..30).map(|i| (a(i), if i % 2 == 0 { Kind::Info } else { Kind::A2sInfo })).collect();
            p.set_targets(&targets, t0);
            let (mut out, mut ev) = (vec![], vec![]);
            let mut now = t0;
            for (from, data, dt) in events {
                now += Duration::from_millis(dt);
                p.poll(now, &mut out, &mut ev);
                p.handle(a(from), &data, now, &mut out, &mut ev);
                prop_assert!(p.in_flight() <= 4);
            }
            let budget = Budget::new(Kind::Info, cfg().attempt_timeout, cfg().retries);
            prop_assert!(p.counts().datagrams_out <= p.counts().started * 2 * u64::from(budget.max_rounds + 1));
        }
    }
}
