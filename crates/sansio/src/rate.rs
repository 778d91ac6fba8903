//! The one token bucket every rate in lobby is made of: probes started per second,
//! sessions a pilot may begin, log lines let out at warn.
//!
//! A bucket holds `burst` tokens and gains one every `interval`; taking a token needs
//! a whole one. It is kept as one number (GCRA): the time at which it is full again,
//! in nanoseconds since an epoch of the caller's choosing. So it is `Copy`, eight
//! bytes (a keyed table of buckets costs a `u64` a key, a shared one fits an
//! `AtomicU64`), and exact: no float drifts, a fraction of a token is a fraction of
//! an interval.
//!
//! No clock: `now` is an argument, a [`Duration`] since the caller's epoch. A caller
//! on [`std::time::Instant`] passes `now.saturating_duration_since(epoch)` (its start,
//! say); one on Unix seconds passes `Duration::from_secs(secs)`.
//!
//! Whatever the calls, the arithmetic saturates (no overflow, no panic) and the bucket
//! never gains from time going backwards: a `now` earlier than an earlier call's
//! grants nothing that call had not, so at most `burst + rate × window` tokens are
//! taken over any window of times, in any order. A clock stepped back by a long way
//! therefore holds the bucket empty until it has caught up again. Times saturate at
//! `u64::MAX` nanoseconds (584 years after the epoch), where the limit ends.

use std::time::Duration;

/// Nanoseconds in a second.
const NANOS: f64 = 1e9;

/// `d` in whole nanoseconds, saturating at `u64::MAX` (about 584 years).
const fn nanos(d: Duration) -> u64 {
    let n = d.as_nanos();
    if n > u64::MAX as u128 {
        u64::MAX
    } else {
        n as u64
    }
}

/// A rate: at most `burst` at once, then one more every `interval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    burst: u32,
    interval: u64,
}

impl Limit {
    /// `burst` at once (at least 1), then one every `interval` (zero: no limit).
    pub const fn every(interval: Duration, burst: u32) -> Limit {
        Limit {
            burst: if burst == 0 { 1 } else { burst },
            interval: nanos(interval),
        }
    }

    /// `burst` at once (at least 1), then `rate` a second (a fraction is fine: 0.5 is
    /// one every 2 s). The interval is rounded up to a whole nanosecond, so the rate
    /// is never exceeded; a rate of zero or less (or NaN) never refills.
    pub fn per_second(rate: f64, burst: u32) -> Limit {
        let interval = if rate.is_nan() || rate <= 0.0 {
            u64::MAX
        } else {
            // `as` saturates: an infinite rate is an interval of 0.
            (NANOS / rate).ceil() as u64
        };
        Limit {
            burst: burst.max(1),
            interval,
        }
    }

    /// Tokens the full bucket holds.
    pub const fn burst(self) -> u32 {
        self.burst
    }

    /// Time for one more token.
    pub const fn interval(self) -> Duration {
        Duration::from_nanos(self.interval)
    }

    /// Time for a bucket to fill from empty.
    fn span(self) -> u64 {
        self.interval.saturating_mul(u64::from(self.burst))
    }
}

/// A token bucket's state: the time it is full again. The [`Limit`] is passed to each
/// call (a table of buckets under one limit keeps it once); [`TokenBucket::new`] is
/// full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TokenBucket {
    /// Nanoseconds since the caller's epoch at which the bucket is full again.
    full_at: u64,
}

impl TokenBucket {
    /// A full bucket.
    pub const fn new() -> TokenBucket {
        TokenBucket { full_at: 0 }
    }

    /// The bucket kept as a `u64` (for an `AtomicU64`).
    pub const fn to_bits(self) -> u64 {
        self.full_at
    }

    /// The bucket from [`TokenBucket::to_bits`].
    pub const fn from_bits(bits: u64) -> TokenBucket {
        TokenBucket { full_at: bits }
    }

    /// How long after `now` the bucket is full again (zero: it is full).
    fn deficit(self, now: u64) -> u64 {
        self.full_at.saturating_sub(now)
    }

    /// Whole tokens in the bucket at `now`.
    pub fn tokens(self, limit: Limit, now: Duration) -> u32 {
        let missing = self.deficit(nanos(now));
        let held = limit.span().saturating_sub(missing);
        match held.checked_div(limit.interval) {
            Some(n) => n.min(u64::from(limit.burst)) as u32,
            None => limit.burst,
        }
    }

    /// Whether a token can be taken at `now`.
    pub fn room(self, limit: Limit, now: Duration) -> bool {
        // Room for one: the bucket is short of at most `burst - 1` intervals.
        self.deficit(nanos(now)) <= limit.span().saturating_sub(limit.interval)
    }

    /// Takes a token at `now`, whether or not there was room (call after
    /// [`TokenBucket::room`] said yes, when several buckets must all have room).
    pub fn take(&mut self, limit: Limit, now: Duration) {
        self.full_at = self.full_at.max(nanos(now)).saturating_add(limit.interval);
    }

    /// Takes a token at `now` if there is room; whether it did.
    pub fn try_take(&mut self, limit: Limit, now: Duration) -> bool {
        let room = self.room(limit, now);
        if room {
            self.take(limit, now);
        }
        room
    }

    /// The earliest time a token can be taken, as a [`Duration`] since the epoch (at
    /// or before `now` when there is room now).
    pub fn ready_at(self, limit: Limit) -> Duration {
        let wait = limit.span().saturating_sub(limit.interval);
        Duration::from_nanos(self.full_at.saturating_sub(wait))
    }

    /// Whether the bucket is full at `now` (it holds nothing a table need remember).
    pub fn is_full(self, now: Duration) -> bool {
        self.full_at <= nanos(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_new_bucket_is_full_and_gives_its_burst_at_once() {
        let l = Limit::every(Duration::from_secs(1), 3);
        let mut b = TokenBucket::new();
        assert!(b.is_full(Duration::ZERO));
        assert_eq!(b.tokens(l, Duration::ZERO), 3);
        assert!(b.try_take(l, Duration::ZERO));
        assert!(b.try_take(l, Duration::ZERO));
        assert!(b.try_take(l, Duration::ZERO));
        assert!(!b.try_take(l, Duration::ZERO), "the burst is spent");
        assert_eq!(b.tokens(l, Duration::ZERO), 0);
        assert_eq!(b.ready_at(l), ms(1000));
    }

    #[test]
    fn it_refills_one_per_interval_and_caps_at_the_burst() {
        let l = Limit::every(ms(100), 2);
        let mut b = TokenBucket::new();
        assert!(b.try_take(l, ms(0)) && b.try_take(l, ms(0)));
        assert!(!b.room(l, ms(99)));
        assert!(b.try_take(l, ms(100)), "one back after an interval");
        assert!(!b.room(l, ms(100)));
        // A long wait fills it only to the burst.
        assert_eq!(b.tokens(l, ms(10_000)), 2);
        assert!(b.is_full(ms(10_000)));
        assert!(b.try_take(l, ms(10_000)) && b.try_take(l, ms(10_000)));
        assert!(!b.room(l, ms(10_000)), "not three after a long wait");
    }

    #[test]
    fn fractions_of_a_token_accumulate() {
        // 2.5 a second: one every 400 ms.
        let l = Limit::per_second(2.5, 1);
        assert_eq!(l.interval(), ms(400));
        let mut b = TokenBucket::new();
        assert!(b.try_take(l, ms(0)));
        assert!(!b.room(l, ms(200)), "half a token is not one");
        assert!(!b.room(l, ms(399)));
        assert!(b.try_take(l, ms(400)));
        // Half a second a token: 0.5 a second.
        let l = Limit::per_second(0.5, 1);
        assert_eq!(l.interval(), Duration::from_secs(2));
        // A third of a second, rounded up: never faster than asked.
        assert_eq!(
            Limit::per_second(3.0, 1).interval(),
            Duration::from_nanos(333_333_334)
        );
    }

    #[test]
    fn odd_rates_and_bursts() {
        let never = Limit::per_second(0.0, 1);
        let mut b = TokenBucket::new();
        assert!(b.try_take(never, ms(0)), "the burst still comes");
        assert!(
            !b.room(never, Duration::from_secs(500 * 365 * 86_400)),
            "never refilled"
        );
        assert_eq!(Limit::per_second(f64::NAN, 0), never);
        let free = Limit::per_second(f64::INFINITY, 1);
        assert_eq!(free.interval(), Duration::ZERO);
        let mut b = TokenBucket::new();
        for _ in 0..1000 {
            assert!(b.try_take(free, ms(5)));
        }
        assert_eq!(Limit::every(ms(1), 0).burst(), 1, "a burst of at least one");
    }

    #[test]
    fn time_going_backwards_gives_no_credit_and_no_panic() {
        let l = Limit::every(Duration::from_secs(1), 2);
        let mut b = TokenBucket::new();
        assert!(b.try_take(l, Duration::from_secs(100)));
        assert!(b.try_take(l, Duration::from_secs(100)));
        for back in [99, 50, 0] {
            let t = Duration::from_secs(back);
            assert_eq!(b.tokens(l, t), 0);
            assert!(!b.try_take(l, t), "no token at {back} s");
        }
        assert!(b.try_take(l, Duration::from_secs(101)), "as due");
        assert!(!b.try_take(l, Duration::from_secs(101)));
    }

    #[test]
    fn huge_gaps_and_huge_limits_saturate() {
        let l = Limit::every(Duration::MAX, u32::MAX);
        let mut b = TokenBucket::new();
        assert!(b.try_take(l, Duration::MAX));
        assert!(
            !b.try_take(l, Duration::ZERO),
            "used at the end of time: none earlier"
        );
        assert_eq!(b.tokens(l, Duration::MAX), 1);
        let l = Limit::every(ms(1), 1);
        let mut b = TokenBucket::new();
        let end = Duration::from_nanos(u64::MAX - 1);
        assert!(b.try_take(l, end));
        assert!(
            !b.try_take(l, end),
            "still limited just before the end of time"
        );
        assert_eq!(b.to_bits(), u64::MAX, "saturated");
        b.take(l, Duration::MAX);
        assert_eq!(b.to_bits(), u64::MAX);
        let mut b = TokenBucket::from_bits(5);
        assert!(b.try_take(l, Duration::from_secs(u64::MAX)));
        assert_eq!(b.ready_at(l), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn ready_at_is_when_room_comes() {
        let l = Limit::every(ms(10), 3);
        let mut b = TokenBucket::new();
        assert!(b.ready_at(l) <= ms(0));
        for _ in 0..3 {
            b.take(l, ms(0));
        }
        assert_eq!(b.ready_at(l), ms(10));
        assert!(!b.room(l, ms(9)));
        assert!(b.room(l, b.ready_at(l)));
    }

    proptest! {
        /// Over any calls, in any order of times, the tokens taken at times within any
        /// window of length `w` are at most `burst + w / interval`, and a bucket left
        /// alone for a span is full again.
        #[test]
        fn never_more_than_burst_plus_rate_times_window(
            burst in 1u32..8,
            interval in 1u64..1_000,
            calls in prop::collection::vec((0u64..20_000, any::<bool>()), 1..300),
        ) {
            let l = Limit::every(Duration::from_nanos(interval), burst);
            let mut b = TokenBucket::new();
            let mut taken = Vec::new();
            for &(t, check_first) in &calls {
                let now = Duration::from_nanos(t);
                let before = b.tokens(l, now);
                prop_assert!(before <= burst);
                let got = if check_first {
                    let room = b.room(l, now);
                    if room {
                        b.take(l, now);
                    }
                    room
                } else {
                    b.try_take(l, now)
                };
                prop_assert_eq!(got, before > 0);
                if got {
                    taken.push(t);
                }
            }
            taken.sort_unstable();
            for (i, &start) in taken.iter().enumerate() {
                for (j, &end) in taken.iter().enumerate().skip(i) {
                    let w = end - start;
                    let n = (j - i + 1) as u64;
                    prop_assert!(n <= u64::from(burst) + w / interval,
                        "{n} taken in {w} ns at burst {burst}, one per {interval} ns");
                }
            }
            let last = calls.iter().map(|c| c.0).max().unwrap_or(0);
            let later = Duration::from_nanos(last + u64::from(burst) * interval);
            prop_assert!(b.is_full(later));
            prop_assert_eq!(b.tokens(l, later), burst);
        }

        /// Steady use at the rate never starves: one call per interval always gets one.
        #[test]
        fn one_per_interval_always_passes(burst in 1u32..8, interval in 1u64..1_000, n in 1u64..500) {
            let l = Limit::every(Duration::from_nanos(interval), burst);
            let mut b = TokenBucket::new();
            for k in 0..n {
                prop_assert!(b.try_take(l, Duration::from_nanos(k * interval)));
            }
        }
    }
}
