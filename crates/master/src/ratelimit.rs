//! Per-source budgets with decay (dpmaster's flood protection, generalised): each
//! request adds its cost to the source's count, which drains at a fixed rate; a request
//! whose cost does not fit under `burst` is refused, unless the source owes nothing (so a
//! cost larger than the whole burst, such as a very long server list, is served once the
//! source has paid off its previous replies).
//!
//! The table has a fixed size, allocated once, and never rebuilds: it is set-associative
//! (a keyed hash picks a set of [`WAYS`] slots). A new source takes a slot whose count has
//! drained to zero; when every slot of its set is in use it evicts the one that owes the
//! least. So every check is constant time, a flood of new (spoofed) sources never makes
//! the master refuse a source it has never seen, and it evicts only entries that carry
//! less debt than the others: a throttled source stays throttled while sources that sent
//! one request each come and go around it.

use sansio::quota::{nets, Net};
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Slots per set.
pub const WAYS: usize = 8;

/// The key a client is counted under: an IPv4 address (IPv4-mapped IPv6 ones
/// included), or an IPv6 /64; one definition for every part.
pub use sansio::source_key;

/// Decision for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Answer it.
    Allow,
    /// The source is over its allowance.
    Throttled,
}

/// 16 bytes per key: a source's own network as itself (IPv4 as an IPv4-mapped IPv6
/// address, distinct from every /64 key), a wider network tagged with its prefix
/// length (IPv6: in the last byte, zero in every /64 key; IPv4: in the first byte,
/// zero in every mapped address), so no two networks share a key.
fn key_bytes(net: Net) -> [u8; 16] {
    match net.addr {
        IpAddr::V4(v4) => {
            let mut b = v4.to_ipv6_mapped().octets();
            if net.len < 32 {
                b[0] = net.len;
            }
            b
        }
        IpAddr::V6(v6) => {
            let mut b = v6.octets();
            if net.len < 64 {
                b[15] = net.len;
            }
            b
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: [u8; 16],
    /// What the source owes, in units of cost, as of `last_ms`.
    count: f32,
    /// Milliseconds since the limiter's epoch.
    last_ms: u64,
}

/// The limiter.
#[derive(Debug)]
pub struct RateLimiter {
    burst: f64,
    /// Units drained per millisecond.
    per_ms: f64,
    capacity: usize,
    /// `sets * WAYS` slots, allocated on first use.
    slots: Vec<Slot>,
    hasher: RandomState,
    epoch: Option<Instant>,
    evictions: u64,
}

fn sets_for(capacity: usize) -> usize {
    capacity.div_ceil(WAYS).max(1).next_power_of_two()
}

impl RateLimiter {
    /// `burst` requests at once, one more per `decay`, about `capacity` sources tracked
    /// (rounded up to a power of two times [`WAYS`]).
    pub fn new(burst: f64, decay: Duration, capacity: usize) -> RateLimiter {
        RateLimiter::per_second(burst, 1.0 / decay.as_secs_f64().max(1e-9), capacity)
    }

    /// `burst` units at once, `rate` more per second (e.g. a byte budget).
    pub fn per_second(burst: f64, rate: f64, capacity: usize) -> RateLimiter {
        RateLimiter {
            burst,
            per_ms: rate / 1000.0,
            capacity,
            slots: Vec::new(),
            hasher: RandomState::new(),
            epoch: None,
            evictions: 0,
        }
    }

    /// Applies new limits (a request limit: `burst`, one per `decay`), keeping the counts
    /// unless the capacity changes.
    pub fn reconfigure(&mut self, burst: f64, decay: Duration, capacity: usize) {
        self.reconfigure_per_second(burst, 1.0 / decay.as_secs_f64().max(1e-9), capacity);
    }

    /// Applies new limits (`burst` units, `rate` per second).
    pub fn reconfigure_per_second(&mut self, burst: f64, rate: f64, capacity: usize) {
        self.burst = burst;
        self.per_ms = rate / 1000.0;
        if sets_for(capacity) != sets_for(self.capacity) {
            // Only on reload: the new table starts empty (forgiving every debt once).
            self.slots = Vec::new();
        }
        self.capacity = capacity;
    }

    fn ms(&mut self, now: Instant) -> u64 {
        let epoch = *self.epoch.get_or_insert(now);
        now.saturating_duration_since(epoch).as_millis() as u64
    }

    fn drained(&self, s: &Slot, now_ms: u64) -> f64 {
        self.drained_times(s, now_ms, 1)
    }

    /// What a slot owes at `now_ms`, draining `times` as fast as a source's (a wider
    /// network's slot).
    fn drained_times(&self, s: &Slot, now_ms: u64, times: usize) -> f64 {
        let e = now_ms.saturating_sub(s.last_ms) as f64 * self.per_ms * times as f64;
        (f64::from(s.count) - e).max(0.0)
    }

    /// The slot for `net`: its own, else a free or the least indebted one of its set
    /// other than those in `held` (the same request's other networks), taken over
    /// (constant time).
    fn slot(&mut self, net: Net, now_ms: u64, held: &[(usize, f64)]) -> usize {
        let key = key_bytes(net);
        let sets = sets_for(self.capacity);
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); sets * WAYS];
        }
        let set = (self.hasher.hash_one(key) as usize) & (sets - 1);
        let base = set * WAYS;
        let mut victim = usize::MAX;
        let mut victim_owes = f64::INFINITY;
        for i in base..base + WAYS {
            let s = &self.slots[i];
            let owes = self.drained(s, now_ms);
            if s.key == key {
                return i;
            }
            if held.iter().any(|&(h, _)| h == i) {
                continue;
            }
            if victim == usize::MAX
                || owes < victim_owes
                || (owes == victim_owes && s.last_ms < self.slots[victim].last_ms)
            {
                victim = i;
                victim_owes = owes;
            }
        }
        if victim_owes > 0.0 {
            self.evictions += 1;
        }
        self.slots[victim] = Slot {
            key,
            count: 0.0,
            last_ms: now_ms,
        };
        victim
    }

    /// Counts a request of cost 1 from `ip` at `now`.
    pub fn check(&mut self, ip: IpAddr, now: Instant) -> Verdict {
        self.check_cost(ip, now, 1.0)
    }

    /// Counts a request of `cost` units: allowed when it fits under the burst, or when
    /// the source owes nothing, and the same for each network around it, whose burst
    /// and rate are their multiple of a source's ([`sansio::quota`]: IPv6 /56 and
    /// /48, IPv4 /24). A refused request costs nothing.
    pub fn check_cost(&mut self, ip: IpAddr, now: Instant, cost: f64) -> Verdict {
        let now_ms = self.ms(now);
        let mut held = [(0usize, 0f64); 3];
        let mut allow = true;
        for (k, (net, times)) in nets(ip).enumerate() {
            let i = self.slot(net, now_ms, &held[..k]);
            let owes = self.drained_times(&self.slots[i], now_ms, times);
            allow &= owes + cost <= self.burst * times as f64 || owes <= 0.0;
            held[k] = (i, owes);
        }
        for &(i, owes) in held.iter().take(nets(ip).count()) {
            let s = &mut self.slots[i];
            s.last_ms = now_ms;
            s.count = if allow { owes + cost } else { owes } as f32;
        }
        if allow {
            Verdict::Allow
        } else {
            Verdict::Throttled
        }
    }

    /// Takes up to `want` whole units from `ip`'s allowance (and its networks'); returns
    /// how many it got.
    pub fn take_up_to(&mut self, ip: IpAddr, now: Instant, want: u32) -> u32 {
        let now_ms = self.ms(now);
        let mut held = [(0usize, 0f64); 3];
        let mut got = f64::from(want);
        let n = nets(ip).count();
        for (k, (net, times)) in nets(ip).enumerate() {
            let i = self.slot(net, now_ms, &held[..k]);
            let owes = self.drained_times(&self.slots[i], now_ms, times);
            let room = (self.burst * times as f64 - owes).floor().max(0.0);
            got = got.min(room);
            held[k] = (i, owes);
        }
        for &(i, owes) in held.iter().take(n) {
            let s = &mut self.slots[i];
            s.last_ms = now_ms;
            s.count = (owes + got) as f32;
        }
        got as u32
    }

    /// Sources that were evicted while they still owed something (the table was full).
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Slots in the table (fixed: its memory never grows).
    pub fn slots(&self) -> usize {
        sets_for(self.capacity) * WAYS
    }

    /// Sources that owe something now.
    pub fn active(&self, now: Instant) -> usize {
        let Some(epoch) = self.epoch else { return 0 };
        let now_ms = now.saturating_duration_since(epoch).as_millis() as u64;
        self.slots
            .iter()
            .filter(|s| self.drained(s, now_ms) > 0.0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v4(i: u32) -> IpAddr {
        IpAddr::V4(i.into())
    }

    #[test]
    fn burst_then_one_per_decay() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(5.0, Duration::from_secs(3), 100);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..5 {
            assert_eq!(r.check(ip, t0), Verdict::Allow);
        }
        assert_eq!(r.check(ip, t0), Verdict::Throttled, "the 6th quick request");
        assert_eq!(r.check(ip, t0 + Duration::from_secs(1)), Verdict::Throttled);
        assert_eq!(
            r.check(ip, t0 + Duration::from_secs(3)),
            Verdict::Allow,
            "one back after 3 s"
        );
        assert_eq!(r.check(ip, t0 + Duration::from_secs(3)), Verdict::Throttled);
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(r.check(other, t0), Verdict::Allow, "per client");
    }

    #[test]
    fn ipv6_counts_per_64() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(1.0, Duration::from_secs(10), 64);
        assert_eq!(r.check("2001:db8::1".parse().unwrap(), t0), Verdict::Allow);
        assert_eq!(
            r.check("2001:db8::2".parse().unwrap(), t0),
            Verdict::Throttled,
            "same /64"
        );
        assert_eq!(
            r.check("2001:db8:0:1::1".parse().unwrap(), t0),
            Verdict::Allow
        );
        // ::ffff:192.0.2.1 as an IPv6 /64 key is not the IPv4 address's key.
        assert_eq!(r.check("192.0.2.1".parse().unwrap(), t0), Verdict::Allow);
        assert_eq!(r.check("::".parse().unwrap(), t0), Verdict::Allow);
    }

    #[test]
    fn a_48_gets_eight_sources_worth_however_many_64s_it_uses() {
        // The bug: each of a /48's 65,536 /64s had its own burst.
        let t0 = Instant::now();
        let mut r = RateLimiter::new(2.0, Duration::from_secs(3600), 4096);
        let allowed = (0..4096u32)
            .filter(|i| {
                let ip = IpAddr::V6(std::net::Ipv6Addr::new(
                    0x2001, 0xdb8, 9, *i as u16, 0, 0, 0, 1,
                ));
                r.check(ip, t0) == Verdict::Allow
            })
            .count();
        assert_eq!(allowed, 16, "a /48 holds 8 bursts of 2");
        // A /24 likewise, and a network's budget refills 8 times as fast.
        let allowed = (0..256u32)
            .filter(|i| r.check(v4(0xc000_0200 + i), t0) == Verdict::Allow)
            .count();
        assert_eq!(allowed, 16);
        let later = t0 + Duration::from_secs(3600 / 8);
        assert_eq!(r.check(v4(0xc000_02f0), later), Verdict::Allow);
        assert_eq!(
            r.check("2001:db8:9:ff00::1".parse().unwrap(), later),
            Verdict::Allow
        );
    }

    #[test]
    fn a_full_table_evicts_instead_of_refusing_new_sources() {
        // The bug: with every slot held (a long decay), new sources were refused, and
        // each refusal rebuilt the map. Now they are answered, in constant time.
        let t0 = Instant::now();
        let mut r = RateLimiter::new(8.0, Duration::from_secs(3600), 16);
        // One source per /24 (a /24 holds eight sources' worth).
        for i in 0..10_000 {
            assert_eq!(r.check(v4(i << 8), t0), Verdict::Allow, "source {i}");
        }
        assert_eq!(r.slots(), 16);
        assert!(r.evictions() >= 10_000 - 16);
    }

    #[test]
    fn a_byte_budget_serves_a_reply_larger_than_the_burst_once_paid_off() {
        let t0 = Instant::now();
        let mut r = RateLimiter::per_second(1000.0, 1000.0, 64);
        let ip = v4(7);
        assert_eq!(r.check_cost(ip, t0, 600.0), Verdict::Allow);
        assert_eq!(r.check_cost(ip, t0, 600.0), Verdict::Throttled);
        assert_eq!(r.check_cost(ip, t0, 400.0), Verdict::Allow, "fits");
        assert_eq!(r.check_cost(ip, t0, 5000.0), Verdict::Throttled);
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(r.check_cost(ip, t1, 5000.0), Verdict::Allow, "owes nothing");
        assert_eq!(
            r.check_cost(ip, t1 + Duration::from_secs(4), 1.0),
            Verdict::Throttled,
            "5 s to pay 5000"
        );
        assert_eq!(
            r.check_cost(ip, t1 + Duration::from_millis(4100), 1.0),
            Verdict::Allow
        );
    }

    #[test]
    fn take_up_to_grants_what_is_left() {
        let t0 = Instant::now();
        let mut r = RateLimiter::per_second(32.0, 32.0, 64);
        let ip = v4(9);
        assert_eq!(r.take_up_to(ip, t0, 20), 20);
        assert_eq!(r.take_up_to(ip, t0, 20), 12);
        assert_eq!(r.take_up_to(ip, t0, 20), 0);
        assert_eq!(r.take_up_to(ip, t0 + Duration::from_millis(500), 20), 16);
    }

    proptest! {
        /// With room for every source, each gets at most burst + elapsed / decay.
        #[test]
        fn never_more_than_burst_plus_refill(
            steps in proptest::collection::vec((0u32..6, 0u64..700), 1..400),
            burst in 1u32..10,
        ) {
            let t0 = Instant::now();
            let decay = Duration::from_millis(250);
            let mut r = RateLimiter::new(f64::from(burst), decay, 64);
            let mut now = t0;
            let mut allowed = [0u64; 6];
            for (src, gap) in steps {
                now += Duration::from_millis(gap);
                if r.check(v4(src), now) == Verdict::Allow {
                    allowed[src as usize] += 1;
                }
            }
            let refill = (now - t0).as_millis() as u64 / 250;
            for a in allowed {
                prop_assert!(a <= u64::from(burst) + refill + 1, "{a} > {burst} + {refill}");
            }
        }

        /// Memory is fixed, every check answers, and a throttled source stays
        /// throttled while any number of one-shot sources flood past it.
        #[test]
        fn floods_of_new_sources_do_not_free_a_throttled_one(
            flood in proptest::collection::vec(any::<u32>(), 0..5000),
            capacity in 8usize..512,
        ) {
            let t0 = Instant::now();
            let mut r = RateLimiter::new(4.0, Duration::from_secs(3600), capacity);
            let victim = v4(0xcb00_7107);
            for _ in 0..4 {
                prop_assert_eq!(r.check(victim, t0), Verdict::Allow);
            }
            let slots = r.slots();
            for (i, ip) in flood.into_iter().enumerate() {
                if ip == 0xcb00_7107 { continue; }
                r.check(v4(ip), t0 + Duration::from_millis(i as u64 % 1000));
                prop_assert_eq!(r.slots(), slots);
            }
            prop_assert_eq!(r.check(victim, t0 + Duration::from_secs(1)), Verdict::Throttled);
        }
    }
}
