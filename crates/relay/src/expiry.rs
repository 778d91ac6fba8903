//! When to look at each pilot again, so a sweep visits only the pilots whose
//! deadline has come instead of the whole table.
//!
//! Every pilot has exactly one entry, filed under the whole second in which it
//! would expire if it stayed silent. At a sweep the due seconds are taken out;
//! each entry's pilot is dropped if it really is silent, or filed again under its
//! new deadline. A pilot is therefore looked at about once per expiry period,
//! and dropping one costs O(log S) for S distinct pending seconds (at most the
//! expiry period in seconds plus one), independent of the number of pilots.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One filed entry: a table slot and the serial of the pilot that held it when
/// filed (a slot reused by a later pilot does not match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Table slot.
    pub slot: u32,
    /// Serial of the pilot the entry was filed for.
    pub serial: u64,
}

/// Entries by the second they come due.
#[derive(Debug, Default)]
pub struct ExpiryQueue {
    base: Option<Instant>,
    by_second: BTreeMap<u64, Vec<Entry>>,
    len: usize,
}

impl ExpiryQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn second_of(&mut self, at: Instant) -> u64 {
        let base = *self.base.get_or_insert(at);
        // Round up: an entry is never due before `at`.
        let d = at.saturating_duration_since(base);
        d.as_secs() + u64::from(d.subsec_nanos() > 0)
    }

    /// Files `e` to come due at `at` (rounded up to the next whole second).
    pub fn schedule(&mut self, e: Entry, at: Instant) {
        let s = self.second_of(at);
        self.by_second.entry(s).or_default().push(e);
        self.len += 1;
    }

    /// When the earliest entry comes due.
    pub fn next_due(&self) -> Option<Instant> {
        let base = self.base?;
        let (&s, _) = self.by_second.first_key_value()?;
        Some(base + Duration::from_secs(s))
    }

    /// Takes out every entry due at `now`, appending them to `into`.
    pub fn take_due(&mut self, now: Instant, into: &mut Vec<Entry>) {
        let Some(base) = self.base else {
            return;
        };
        let now_s = now.saturating_duration_since(base).as_secs();
        while let Some(e) = self.by_second.first_entry() {
            if *e.key() > now_s {
                break;
            }
            let v = e.remove();
            self.len -= v.len();
            into.extend(v);
        }
    }

    /// Number of entries filed (live and stale).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is filed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every entry (before refiling all pilots, e.g. when the expiry changes).
    pub fn clear(&mut self) {
        self.by_second.clear();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn e(slot: u32) -> Entry {
        Entry { slot, serial: 0 }
    }

    #[test]
    fn entries_come_due_in_order_and_never_early() {
        let t0 = Instant::now();
        let mut q = ExpiryQueue::new();
        q.schedule(e(1), t0);
        q.schedule(e(2), t0 + Duration::from_millis(2500));
        q.schedule(e(3), t0 + Duration::from_secs(1));
        assert_eq!(q.next_due(), Some(t0));
        let mut got = vec![];
        q.take_due(t0 + Duration::from_millis(999), &mut got);
        assert_eq!(got, vec![e(1)]);
        q.take_due(t0 + Duration::from_millis(2999), &mut got);
        assert_eq!(got, vec![e(1), e(3)]);
        assert_eq!(q.next_due(), Some(t0 + Duration::from_secs(3)));
        q.take_due(t0 + Duration::from_secs(3), &mut got);
        assert_eq!(got, vec![e(1), e(3), e(2)]);
        assert!(q.is_empty());
        assert_eq!(q.next_due(), None);
    }

    proptest! {
        /// Whatever the order of scheduling, an entry is taken out exactly once,
        /// never before its time and within a second after it.
        #[test]
        fn each_entry_once_never_early_at_most_a_second_late(
            at_ms in prop::collection::vec(0u64..20_000, 1..200),
            step_ms in 1u64..1500,
        ) {
            let t0 = Instant::now();
            let mut q = ExpiryQueue::new();
            q.schedule(Entry { slot: u32::MAX, serial: 0 }, t0);
            for (i, &ms) in at_ms.iter().enumerate() {
                q.schedule(e(i as u32), t0 + Duration::from_millis(ms));
            }
            let mut seen = vec![None; at_ms.len()];
            let mut now = 0u64;
            while !q.is_empty() {
                let mut got = vec![];
                q.take_due(t0 + Duration::from_millis(now), &mut got);
                for g in got.into_iter().filter(|g| g.slot != u32::MAX) {
                    prop_assert!(seen[g.slot as usize].is_none());
                    seen[g.slot as usize] = Some(now);
                }
                now += step_ms;
            }
            for (i, s) in seen.iter().enumerate() {
                let s = s.expect("taken");
                prop_assert!(s >= at_ms[i]);
                prop_assert!(s < at_ms[i] + 1000 + step_ms);
            }
        }
    }
}
