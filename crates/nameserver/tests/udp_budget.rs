//! The per-source UDP budget's arithmetic in virtual time (`now` passed in): the
//! limiter the DNS server's `Budgeted` handler asks, with the numbers
//! `crates/lobby/tests/dns.rs` gives the binary (`udp_rate = 5`, `udp_burst = 20`).
//! The binary test keeps what needs sockets (the truncated answers, TCP, the
//! counters); the refill's timing is checked here, exactly, without sleeping.

use master::ratelimit::{RateLimiter, Verdict};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// How many of `n` queries from `ip` at `now` are answered.
fn answered(r: &mut RateLimiter, ip: &str, now: Instant, n: u32) -> u32 {
    let ip: IpAddr = ip.parse().unwrap();
    (0..n)
        .filter(|_| r.check(ip, now) == Verdict::Allow)
        .count() as u32
}

#[test]
fn a_flooding_source_gets_its_burst_then_the_rate() {
    // As the server builds it (its table is 65,536 sources).
    let mut r = RateLimiter::per_second(20.0, 5.0, 65_536);
    let t0 = Instant::now();
    let ms = |n: u64| t0 + Duration::from_millis(n);
    // 300 at once: the burst.
    assert_eq!(answered(&mut r, "127.0.0.2", t0, 300), 20);
    // Another source (in the same /24, which holds 8 sources' worth) is untouched.
    assert_eq!(answered(&mut r, "127.0.0.3", t0, 10), 10);
    // One more every 0.2 s: nothing at 0.1 s, 2 at 0.5 s (17.5 owed), then after
    // 0.6 s more exactly 3, as the binary test expects of a refilled budget.
    assert_eq!(answered(&mut r, "127.0.0.2", ms(100), 5), 0);
    assert_eq!(answered(&mut r, "127.0.0.2", ms(500), 5), 2);
    assert_eq!(answered(&mut r, "127.0.0.2", ms(1100), 5), 3);
    // Refused queries cost nothing: a flood does not push the refill further away.
    assert_eq!(answered(&mut r, "127.0.0.2", ms(1100), 1000), 0);
    assert_eq!(answered(&mut r, "127.0.0.2", ms(1300), 5), 1);
    // Owing nothing after 20 / 5 = 4 s quiet: the whole burst again.
    assert_eq!(answered(&mut r, "127.0.0.2", ms(5300), 300), 20);
}
