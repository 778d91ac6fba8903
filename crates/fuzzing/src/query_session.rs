//! The query session (`lobby query`) against a hostile server: arbitrary replies at
//! arbitrary times never panic, and every session ends within its budget: a
//! bounded number of rounds and its overall deadline, whatever the server sends.

use query::session::{Budget, Kind, Session, Step};
use std::time::{Duration, Instant};

const KINDS: [Kind; 5] = [
    Kind::Info,
    Kind::Players,
    Kind::Rules,
    Kind::Ping,
    Kind::Connect,
];

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
/// Byte 0 picks the query, byte 1 the retries; the rest is split at `0xfe` into
/// replies, each arriving 0-255 ms after the previous (the first byte of each).
pub fn run(data: &[u8]) {
    let (Some(&k), Some(&r)) = (data.first(), data.get(1)) else {
        return;
    };
    let kind = KINDS[usize::from(k) % KINDS.len()];
    let budget = Budget::new(kind, Duration::from_millis(500), u32::from(r % 4));
    let t0 = Instant::now();
    let (mut s, _) = Session::with_budget(kind, t0, budget);
    let end = t0 + budget.overall;
    let mut now = t0;
    let mut sends = 0u32;
    let mut done = false;
    for reply in data[2..].split(|&b| b == 0xfe) {
        let gap = u64::from(reply.first().copied().unwrap_or(0));
        now += Duration::from_millis(gap);
        let step = if now >= s.poll_timeout() {
            s.handle_timeout(now)
        } else {
            s.handle(reply.get(1..).unwrap_or(&[]), now)
        };
        match step {
            Step::Send(_) => sends += 1,
            Step::Wait => {}
            Step::Done(_) => {
                done = true;
                break;
            }
        }
        assert!(
            now <= end + Duration::from_secs(1) || done,
            "past the overall deadline"
        );
    }
    // Left alone, the session ends by its own timers, within its deadline.
    let mut rounds = 0;
    while !done {
        now = now.max(s.poll_timeout());
        assert!(now <= end, "timer beyond the overall deadline");
        match s.handle_timeout(now) {
            Step::Done(_) => done = true,
            Step::Send(_) => sends += 1,
            Step::Wait => {}
        }
        rounds += 1;
        assert!(rounds < 10_000, "the session never ends");
    }
    assert!(
        sends <= budget.max_rounds + 1,
        "{sends} sends for {} rounds",
        budget.max_rounds
    );
}
