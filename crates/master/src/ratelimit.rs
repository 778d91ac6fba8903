//! Per-client request throttling with decay (dpmaster's flood protection): each
//! request adds one to a client's count, which drains by one per `decay`; a client
//! whose count has reached `burst` gets no answer. The table is bounded.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The key a client is counted under: an IPv4 address, or an IPv6 /64.
pub fn source_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let mut o = v6.octets();
            o[8..].fill(0);
            IpAddr::V6(o.into())
        }
    }
}

/// Decision for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Answer it.
    Allow,
    /// The client is over its allowance.
    Throttled,
    /// Too many clients tracked; refuse new ones rather than answer untracked.
    TableFull,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    count: f64,
    last: Instant,
}

/// The limiter.
#[derive(Debug)]
pub struct RateLimiter {
    burst: f64,
    decay: Duration,
    capacity: usize,
    clients: HashMap<IpAddr, Bucket>,
}

impl RateLimiter {
    /// `burst` requests at once, one more per `decay`, at most `capacity` clients tracked.
    pub fn new(burst: f64, decay: Duration, capacity: usize) -> RateLimiter {
        RateLimiter {
            burst,
            decay,
            capacity,
            clients: HashMap::new(),
        }
    }

    /// Applies new limits, keeping the counts.
    pub fn reconfigure(&mut self, burst: f64, decay: Duration, capacity: usize) {
        self.burst = burst;
        self.decay = decay;
        self.capacity = capacity;
    }

    fn drained(&self, b: &Bucket, now: Instant) -> f64 {
        let e = now.saturating_duration_since(b.last).as_secs_f64() / self.decay.as_secs_f64();
        (b.count - e).max(0.0)
    }

    /// Counts a request from `ip` at `now`.
    pub fn check(&mut self, ip: IpAddr, now: Instant) -> Verdict {
        let key = source_key(ip);
        if !self.clients.contains_key(&key) && self.clients.len() >= self.capacity {
            self.sweep(now);
            if self.clients.len() >= self.capacity {
                return Verdict::TableFull;
            }
        }
        let (burst, decay) = (self.burst, self.decay);
        let b = self.clients.entry(key).or_insert(Bucket {
            count: 0.0,
            last: now,
        });
        let e = now.saturating_duration_since(b.last).as_secs_f64() / decay.as_secs_f64();
        let count = (b.count - e).max(0.0);
        b.last = now;
        if count + 1.0 > burst {
            b.count = count;
            Verdict::Throttled
        } else {
            b.count = count + 1.0;
            Verdict::Allow
        }
    }

    /// Forgets clients whose count has drained to zero.
    pub fn sweep(&mut self, now: Instant) {
        let clients = std::mem::take(&mut self.clients);
        self.clients = clients
            .into_iter()
            .filter(|(_, b)| self.drained(b, now) > 0.0)
            .collect();
    }

    /// Clients tracked now.
    pub fn len(&self) -> usize {
        self.clients.len()
    }

    /// Whether no client is tracked.
    pub fn is_empty(&self) -> bool {
        self.clients.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ipv6_counts_per_64_and_the_table_is_bounded() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(1.0, Duration::from_secs(10), 2);
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
        assert_eq!(
            r.check("192.0.2.1".parse().unwrap(), t0),
            Verdict::TableFull
        );
        // Once the others have drained, room is made.
        assert_eq!(
            r.check("192.0.2.1".parse().unwrap(), t0 + Duration::from_secs(11)),
            Verdict::Allow
        );
        assert!(r.len() <= 2);
    }
}
