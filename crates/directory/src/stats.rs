//! The directory's counters: probes, pushes to the primary server (by outcome and
//! reason), resolution of names, and refused zone transfers. Atomic, so the DNS
//! listeners, the prober, the pusher and `/stats` share one set without a lock.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What is counted. Every variant has its own counter in `/stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// A relay did not answer a probe.
    ProbeFailed,
    /// An RFC 2136 UPDATE the primary acknowledged (NOERROR, signature valid).
    PushAcked,
    /// An UPDATE the primary answered with an error RCODE (NOTAUTH, REFUSED, ...).
    PushRefused,
    /// An UPDATE that got no answer (timeout, unreachable, connection failed).
    PushUnanswered,
    /// An answer that was not a valid reply (bad TSIG on a NOERROR, garbage).
    PushBadReply,
    /// An UPDATE sent over TCP because it does not fit a UDP message.
    PushTcp,
    /// A retry after a failed push.
    PushRetry,
    /// A refresh found the primary's records differing from the published ones.
    PushRefreshMismatch,
    /// A refresh could not read the primary's records.
    PushRefreshFailed,
    /// The push target's host name did not resolve.
    PushResolveFailed,
    /// A relay's host name (to probe) did not resolve.
    RelayResolveFailed,
    /// A zone transfer that was allowed (listed source or valid TSIG).
    AxfrAllowed,
    /// A zone transfer refused: unsigned, from a source not on the allow list.
    AxfrRefusedUnsigned,
    /// A zone transfer refused: TSIG with an unknown key, a bad MAC or a bad time.
    AxfrRefusedBadTsig,
}

impl Counter {
    /// Every counter, in `/stats` order.
    pub const ALL: [Counter; 14] = [
        Counter::ProbeFailed,
        Counter::PushAcked,
        Counter::PushRefused,
        Counter::PushUnanswered,
        Counter::PushBadReply,
        Counter::PushTcp,
        Counter::PushRetry,
        Counter::PushRefreshMismatch,
        Counter::PushRefreshFailed,
        Counter::PushResolveFailed,
        Counter::RelayResolveFailed,
        Counter::AxfrAllowed,
        Counter::AxfrRefusedUnsigned,
        Counter::AxfrRefusedBadTsig,
    ];

    /// The key in `/stats`.
    pub fn name(self) -> &'static str {
        match self {
            Counter::ProbeFailed => "probe_failed",
            Counter::PushAcked => "push_acked",
            Counter::PushRefused => "push_refused",
            Counter::PushUnanswered => "push_unanswered",
            Counter::PushBadReply => "push_bad_reply",
            Counter::PushTcp => "push_tcp",
            Counter::PushRetry => "push_retry",
            Counter::PushRefreshMismatch => "push_refresh_mismatch",
            Counter::PushRefreshFailed => "push_refresh_failed",
            Counter::PushResolveFailed => "push_resolve_failed",
            Counter::RelayResolveFailed => "relay_resolve_failed",
            Counter::AxfrAllowed => "axfr_allowed",
            Counter::AxfrRefusedUnsigned => "axfr_refused_unsigned",
            Counter::AxfrRefusedBadTsig => "axfr_refused_bad_tsig",
        }
    }
}

/// The counters.
#[derive(Debug, Default)]
pub struct Stats {
    counts: [AtomicU64; Counter::ALL.len()],
}

impl Stats {
    /// Adds one to `c`.
    pub fn count(&self, c: Counter) {
        self.counts[c as usize].fetch_add(1, Relaxed);
    }

    /// The value of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.counts[c as usize].load(Relaxed)
    }

    /// Every counter by its `/stats` name.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        Counter::ALL
            .iter()
            .map(|&c| (c.name(), self.get(c)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_its_own_slot_and_name() {
        let s = Stats::default();
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            for _ in 0..=i {
                s.count(*c);
            }
        }
        let snap = s.snapshot();
        let mut names: Vec<_> = snap.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Counter::ALL.len());
        for (i, (_, v)) in snap.iter().enumerate() {
            assert_eq!(*v, i as u64 + 1);
        }
    }
}
