//! Fairness on the HTTP API (`[http] request_rate`): every route has a cost
//! ([`Class`]), every source a budget of cost units per second, a token bucket
//! ([`sansio::rate::TokenBucket`]) nested as the other quotas ([`sansio::quota`]: an
//! IPv4 address within its /24 ×8, an IPv6 /64 within its /56 ×4 and its /48 ×8). A
//! request whose cost is not in every one of its buckets is answered `429` with the
//! wait until it is ([`Refused::retry_after`]); a refused request takes nothing.
//!
//! The table ([`RequestRates`]) holds one bucket per source and per wider network
//! (at most four entries a source: what a request touches), and at most
//! `max_entries` in all: at the cap, the buckets full again (idle: nothing to
//! remember) are dropped, then, if that freed too little, the half that owes least
//! (so a throttled source stays throttled while one-request sources come and go).
//! Pure: `now` is an argument, a [`Duration`] since the caller's epoch.

use sansio::quota::{nets, Net, Over};
use sansio::rate::{Limit, TokenBucket};
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

/// Entries the table holds at most by default (sources and networks; about 40
/// bytes each).
pub const MAX_ENTRIES: usize = 100_000;

/// What a route costs, in units of a source's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// 1 unit: the page's files, the engine's `/v1/servers/*` and `/v1/gamedirs`,
    /// `/mpservers.xml`, `/api/pilots` (and its stream), `/healthz`, `/readyz`:
    /// answers made once and shared.
    Cheap,
    /// 4 units: every other `/api/*` path (one flight, one airport, the server
    /// and relay lists, chat, ATC, DNS, the admin API, the OpenAPI document),
    /// `/stats`, `/metrics`.
    Normal,
    /// 25 units: what reads the flight log or scans a table per request: flight
    /// searches (`/api/flights`), exports (`/api/flights/{id}/gpx|kml`,
    /// `/api/callsigns/{cs}/csv`), a callsign's history, `/api/leaderboards`,
    /// `/api/airports` (bounding boxes), `/api/servers/{addr}/history` and
    /// `/details`, `/api/list/heatmaps`.
    Heavy,
}

impl Class {
    /// Every class, cheapest first.
    pub const ALL: [Class; 3] = [Class::Cheap, Class::Normal, Class::Heavy];

    /// Its cost in units.
    pub const fn cost(self) -> u32 {
        match self {
            Class::Cheap => 1,
            Class::Normal => 4,
            Class::Heavy => 25,
        }
    }

    /// Its name (`/stats`, `/metrics`, docs).
    pub const fn name(self) -> &'static str {
        match self {
            Class::Cheap => "cheap",
            Class::Normal => "normal",
            Class::Heavy => "heavy",
        }
    }

    /// The class of a request path.
    pub fn of(path: &str) -> Class {
        let seg: Vec<&str> = path.trim_matches('/').split('/').collect();
        match seg.as_slice() {
            ["api", "pilots"] | ["api", "pilots", "stream"] => Class::Cheap,
            ["api", "flights"]
            | ["api", "flights", _, "gpx" | "kml"]
            | ["api", "callsigns", ..]
            | ["api", "leaderboards"]
            | ["api", "airports"]
            | ["api", "servers", _, "history" | "details"]
            | ["api", "list", "heatmaps"] => Class::Heavy,
            ["api", ..] | ["stats"] | ["metrics"] => Class::Normal,
            _ => Class::Cheap,
        }
    }
}

/// A source's budget: `rate` units a second, `burst` at once (a wider network has
/// its [`sansio::quota::WIDER`] multiple of both). A rate of 0 turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Units a second.
    pub rate: u32,
    /// Units at once (at least the heaviest cost, so every route can be asked).
    pub burst: u32,
}

/// A refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// How long until the request's cost is in every bucket.
    pub wait: Duration,
    /// The narrowest bucket that was short.
    pub over: Over,
}

impl Refused {
    /// The `Retry-After` value: whole seconds, rounded up, at least 1.
    pub fn retry_after(&self) -> u64 {
        let s = self.wait.as_secs();
        (s + u64::from(self.wait.subsec_nanos() > 0)).max(1)
    }
}

/// Per-source buckets under one [`Budget`] (see the module's doc).
#[derive(Debug, Clone)]
pub struct RequestRates {
    budget: Budget,
    held: HashMap<Net, TokenBucket>,
    max_entries: usize,
    evicted: u64,
    exempt_loopback: bool,
}

impl RequestRates {
    /// An empty table under `budget`, at most `max_entries` entries.
    pub fn new(budget: Budget, max_entries: usize) -> RequestRates {
        RequestRates {
            budget,
            held: HashMap::new(),
            max_entries: max_entries.max(8),
            evicted: 0,
            exempt_loopback: false,
        }
    }

    /// An empty table of `rate` units a second and `burst` at once per source, at
    /// most [`MAX_ENTRIES`] entries; loopback sources (127.0.0.0/8, `::1`) are let
    /// through unless `loopback` (a reverse proxy on the same host is every client).
    pub fn with(rate: u32, burst: u32, loopback: bool) -> RequestRates {
        let mut r = RequestRates::new(Budget { rate, burst }, MAX_ENTRIES);
        r.exempt_loopback = !loopback;
        r
    }

    /// The limit of a network holding `times` sources' worth.
    fn limit(&self, times: usize) -> Limit {
        let t = u32::try_from(times).unwrap_or(u32::MAX);
        Limit::per_second(
            f64::from(self.budget.rate) * f64::from(t),
            self.budget.burst.saturating_mul(t),
        )
    }

    /// Takes `class`'s cost for `ip` at `now` from the source's bucket and each
    /// wider network's, if every one holds it; else nothing, and how long to wait.
    pub fn check(&mut self, ip: IpAddr, class: Class, now: Duration) -> Result<(), Refused> {
        if self.budget.rate == 0 || (self.exempt_loopback && ip.to_canonical().is_loopback()) {
            return Ok(());
        }
        let mut refused: Option<Refused> = None;
        let mut fresh = 0;
        for (net, times) in nets(ip) {
            let limit = self.limit(times);
            let cost = class.cost().min(limit.burst());
            let b = match self.held.get(&net) {
                Some(b) => *b,
                None => {
                    fresh += 1;
                    TokenBucket::new()
                }
            };
            if b.tokens(limit, now) < cost {
                // The first token's time, then one interval for each further one.
                let at = b.ready_at(limit) + limit.interval() * (cost - 1);
                let wait = at.saturating_sub(now);
                let over = if times == 1 {
                    Over::Source
                } else {
                    Over::Network(net)
                };
                let longer = refused.is_none_or(|r| wait > r.wait);
                let first = refused.map_or(over, |r| r.over);
                refused = Some(Refused {
                    wait: if longer {
                        wait
                    } else {
                        refused.map_or(wait, |r| r.wait)
                    },
                    over: first,
                });
            }
        }
        if let Some(r) = refused {
            return Err(r);
        }
        if self.held.len() + fresh > self.max_entries {
            self.make_room(now, fresh);
        }
        for (net, times) in nets(ip) {
            let limit = self.limit(times);
            let b = self.held.entry(net).or_default();
            for _ in 0..class.cost().min(limit.burst()) {
                b.take(limit, now);
            }
        }
        Ok(())
    }

    /// Drops the idle buckets, then, if there is still no room for `fresh` more,
    /// the half that owes least.
    fn make_room(&mut self, now: Duration, fresh: usize) {
        self.held.retain(|_, b| !b.is_full(now));
        if self.held.len() + fresh > self.max_entries {
            let before = self.held.len();
            let mut owed: Vec<u64> = self.held.values().map(|b| b.to_bits()).collect();
            let mid = owed.len() / 2;
            let (_, &mut median, _) = owed.select_nth_unstable(mid);
            let mut dropped = 0;
            self.held.retain(|_, b| {
                let keep = b.to_bits() > median || dropped >= mid;
                dropped += usize::from(!keep);
                keep
            });
            self.evicted += (before - self.held.len()) as u64;
        }
    }

    /// Applies a new budget (a reload); the buckets keep what they owe.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }

    /// Entries held (sources and networks).
    pub fn entries(&self) -> usize {
        self.held.len()
    }

    /// Entries dropped at the cap while they still owed something.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const B: Budget = Budget {
        rate: 10,
        burst: 50,
    };

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn routes_have_the_documented_classes() {
        for (p, c) in [
            ("/", Class::Cheap),
            ("/assets/index-1.js", Class::Cheap),
            ("/v1/servers/valve", Class::Cheap),
            ("/v1/gamedirs", Class::Cheap),
            ("/mpservers.xml", Class::Cheap),
            ("/api/pilots", Class::Cheap),
            ("/api/pilots/stream", Class::Cheap),
            ("/healthz", Class::Cheap),
            ("/api/servers", Class::Normal),
            ("/api/flights/7", Class::Normal),
            ("/api/airports/EDDF", Class::Normal),
            ("/api/admin/bans", Class::Normal),
            ("/stats", Class::Normal),
            ("/metrics", Class::Normal),
            ("/api/flights", Class::Heavy),
            ("/api/flights/7/gpx", Class::Heavy),
            ("/api/flights/7/kml", Class::Heavy),
            ("/api/callsigns/ABC/csv", Class::Heavy),
            ("/api/callsigns/ABC", Class::Heavy),
            ("/api/leaderboards", Class::Heavy),
            ("/api/airports", Class::Heavy),
            ("/api/servers/1.2.3.4:27015/details", Class::Heavy),
            ("/api/servers/1.2.3.4:27015/history", Class::Heavy),
            ("/api/list/heatmaps", Class::Heavy),
        ] {
            assert_eq!(Class::of(p), c, "{p}");
        }
    }

    #[test]
    fn a_source_gets_its_burst_then_its_rate_and_a_retry_after() {
        let mut r = RequestRates::new(B, 1000);
        let a = ip("192.0.2.1");
        assert!(r.check(a, Class::Heavy, secs(0.0)).is_ok());
        assert!(r.check(a, Class::Heavy, secs(0.0)).is_ok());
        let e = r.check(a, Class::Heavy, secs(0.0)).unwrap_err();
        assert_eq!(e.over, Over::Source);
        assert_eq!(e.wait, secs(2.5), "25 units at 10 a second");
        assert_eq!(e.retry_after(), 3);
        // A cheap one still fits? No: the bucket is empty.
        assert!(r.check(a, Class::Cheap, secs(0.0)).is_err());
        assert!(r.check(a, Class::Cheap, secs(0.1)).is_ok(), "one unit back");
        assert!(r.check(a, Class::Heavy, secs(2.5)).is_err());
        assert!(r.check(a, Class::Heavy, secs(2.6)).is_ok());
        // Another source is untouched.
        assert!(r.check(ip("192.0.3.1"), Class::Heavy, secs(0.0)).is_ok());
    }

    #[test]
    fn a_24_holds_eight_sources_worth_and_a_48_eight_and_a_56_four() {
        let mut r = RequestRates::new(B, 1000);
        // Two heavy requests use a source's burst; a /24 takes 16 (8 sources').
        let mut ok = 0;
        for h in 1..=64 {
            for _ in 0..2 {
                ok += usize::from(
                    r.check(ip(&format!("10.0.0.{h}")), Class::Heavy, secs(0.0))
                        .is_ok(),
                );
            }
        }
        assert_eq!(ok, 16);
        let e = r
            .check(ip("10.0.0.99"), Class::Heavy, secs(0.0))
            .unwrap_err();
        assert_eq!(
            e.over,
            Over::Network(Net {
                addr: ip("10.0.0.0"),
                len: 24
            })
        );
        assert!(r.check(ip("10.0.1.1"), Class::Heavy, secs(0.0)).is_ok());
        // IPv6: a /56 holds 4 sources' worth (8 heavy), its /48 8 (16 heavy).
        let mut ok = 0;
        for s in 0..64u16 {
            ok += usize::from(
                r.check(ip(&format!("2001:db8:1:{s}::1")), Class::Heavy, secs(0.0))
                    .is_ok(),
            );
            ok += usize::from(
                r.check(ip(&format!("2001:db8:1:{s}::1")), Class::Heavy, secs(0.0))
                    .is_ok(),
            );
        }
        assert_eq!(
            ok, 8,
            "one /56 (2001:db8:1:0..ff::) holds four sources' worth"
        );
        let mut ok = 0;
        for n in 1..=64u16 {
            let a = ip(&format!("2001:db8:1:{:x}::1", n * 0x100));
            ok += usize::from(r.check(a, Class::Heavy, secs(0.0)).is_ok());
        }
        assert_eq!(ok, 8, "the /48 holds eight sources' worth");
        let e = r
            .check(ip("2001:db8:1:ff00::1"), Class::Cheap, secs(0.0))
            .unwrap_err();
        assert_eq!(
            e.over,
            Over::Network(Net {
                addr: ip("2001:db8:1::"),
                len: 48
            })
        );
        assert!(r
            .check(ip("2001:db8:2::1"), Class::Heavy, secs(0.0))
            .is_ok());
    }

    #[test]
    fn the_table_is_capped_and_a_throttled_source_stays_throttled() {
        let mut r = RequestRates::new(B, 64);
        let bad = ip("198.51.100.1");
        while r.check(bad, Class::Heavy, secs(0.0)).is_ok() {}
        // A thousand one-request sources come and go (each /24 new: 2 entries).
        for n in 0..1000u32 {
            let a = IpAddr::from([11, (n >> 8) as u8, n as u8, 1]);
            assert!(r.check(a, Class::Cheap, secs(0.001 * f64::from(n))).is_ok());
            assert!(r.entries() <= 64);
        }
        assert!(r.evicted() > 0);
        assert!(
            r.check(bad, Class::Heavy, secs(1.0)).is_err(),
            "its debt is kept"
        );
        // Idle buckets are dropped first: after a quiet while, nothing is evicted.
        let before = r.evicted();
        for n in 0..20u32 {
            let a = IpAddr::from([12, 0, n as u8, 1]);
            assert!(r.check(a, Class::Cheap, secs(100.0)).is_ok());
        }
        assert_eq!(r.evicted(), before);
    }

    #[test]
    fn loopback_is_let_through_unless_asked_for() {
        let mut r = RequestRates::with(10, 50, false);
        for _ in 0..100 {
            assert!(r.check(ip("127.0.0.1"), Class::Heavy, secs(0.0)).is_ok());
            assert!(r.check(ip("::1"), Class::Heavy, secs(0.0)).is_ok());
        }
        assert!(r.check(ip("192.0.2.1"), Class::Heavy, secs(0.0)).is_ok());
        let mut r = RequestRates::with(10, 50, true);
        assert!(r.check(ip("127.0.0.1"), Class::Heavy, secs(0.0)).is_ok());
        assert!(r.check(ip("127.0.0.1"), Class::Heavy, secs(0.0)).is_ok());
        assert!(r.check(ip("127.0.0.1"), Class::Heavy, secs(0.0)).is_err());
    }

    #[test]
    fn a_rate_of_zero_is_off() {
        let mut r = RequestRates::new(Budget { rate: 0, burst: 0 }, 8);
        for _ in 0..1000 {
            assert!(r.check(ip("192.0.2.1"), Class::Heavy, secs(0.0)).is_ok());
        }
        assert_eq!(r.entries(), 0);
    }

    proptest! {
        /// Over any requests from one /24 at any times, a source never takes more
        /// than `burst + rate × window` units, nor its /24 eight times that; a
        /// refused request's wait is when it would pass.
        #[test]
        fn no_budget_is_ever_passed(
            reqs in prop::collection::vec((0u8..12, 0usize..3, 0u64..20_000), 1..200),
        ) {
            let mut r = RequestRates::new(B, 1000);
            let mut reqs = reqs;
            reqs.sort_by_key(|q| q.2);
            let mut taken: Vec<(u8, u64, u32)> = Vec::new();
            for &(h, c, ms) in &reqs {
                let now = Duration::from_millis(ms);
                let a = IpAddr::from([10, 0, 0, h]);
                let class = Class::ALL[c];
                match r.check(a, class, now) {
                    Ok(()) => taken.push((h, ms, class.cost())),
                    Err(e) => {
                        let mut probe = r.clone();
                        prop_assert!(probe.check(a, class, now + e.wait).is_ok());
                    }
                }
            }
            for &(_, start, _) in &taken {
                for &(_, end, _) in &taken {
                    if end < start { continue; }
                    let w = (end - start) as f64 / 1000.0;
                    let within = |one: Option<u8>| -> u32 {
                        taken.iter()
                            .filter(|t| t.1 >= start && t.1 <= end && one.is_none_or(|h| t.0 == h))
                            .map(|t| t.2).sum()
                    };
                    prop_assert!(f64::from(within(None)) <= 8.0 * (50.0 + 10.0 * w) + 1e-6);
                    for h in 0..12 {
                        prop_assert!(f64::from(within(Some(h))) <= 50.0 + 10.0 * w + 1e-6);
                    }
                }
            }
        }
    }
}
