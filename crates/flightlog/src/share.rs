//! Shares, so one pilot or one source cannot take what the others need (pure: times
//! come in as Unix seconds).
//!
//! - [`Rate`]: a burst, then one every so many seconds; [`Buckets`] keeps a
//!   [`sansio::rate::TokenBucket`] (one number: the time it is full again) per key.
//! - [`SessionShare`]: which of the relay's session events go on to the tracker link
//!   and the flight log: each pilot (source address and callsign) and each source
//!   address may begin sessions at a [`Rate`]; a session whose beginning was shed
//!   has its end shed too. A pilot flipping its model (each flip ends a session and
//!   begins one in the relay) is thus reported a few times, not 500 times a second.
//! - [`QueueShare`]: what one key (a relay) may hold of a queue counted in items, so
//!   one flooding relay cannot fill the flight log writer's queue for the others.

use sansio::rate::{Limit, TokenBucket};
use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

/// At most `burst` at once, then one every `every` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// How many at once (at least 1).
    pub burst: u32,
    /// Seconds per one more.
    pub every: i64,
}

impl Rate {
    /// The token bucket's limit (a negative `every` counts as 0).
    fn limit(self) -> Limit {
        Limit::every(secs(self.every), self.burst)
    }
}

/// Unix seconds as the bucket's time (the epoch is Unix's; earlier counts as it).
fn secs(t: i64) -> Duration {
    Duration::from_secs(t.max(0).unsigned_abs())
}

/// Rate buckets ([`sansio::rate::TokenBucket`]) by key, at most `max_keys` of them (a
/// key not yet held when the table is full gets no room: who fills the table cannot
/// empty the buckets of others).
#[derive(Debug, Clone)]
pub struct Buckets<K> {
    limit: Limit,
    held: HashMap<K, TokenBucket>,
    max_keys: usize,
}

impl<K: Hash + Eq + Clone> Buckets<K> {
    /// Empty buckets filling at `rate`.
    pub fn new(rate: Rate, max_keys: usize) -> Buckets<K> {
        Buckets {
            limit: rate.limit(),
            held: HashMap::new(),
            max_keys,
        }
    }

    /// Whether `key` has room for one more at Unix second `now`.
    pub fn room(&self, key: &K, now: i64) -> bool {
        match self.held.get(key) {
            Some(b) => b.room(self.limit, secs(now)),
            None => self.held.len() < self.max_keys,
        }
    }

    /// Takes one for `key` (after [`Buckets::room`] said yes).
    pub fn take(&mut self, key: &K, now: i64) {
        let limit = self.limit;
        self.held
            .entry(key.clone())
            .or_default()
            .take(limit, secs(now));
    }

    /// Forgets the buckets that are full again by `now` (they hold nothing).
    pub fn prune(&mut self, now: i64) {
        self.held.retain(|_, b| !b.is_full(secs(now)));
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// No key held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

/// Sessions a pilot (source address and callsign) may begin: 4 at once, then one a
/// minute.
pub const PILOT_SESSIONS: Rate = Rate {
    burst: 4,
    every: 60,
};
/// Sessions one source address may begin: 32 at once (a LAN behind one address;
/// the relay admits 16 pilots an address by default), then one every 10 s.
pub const SOURCE_SESSIONS: Rate = Rate {
    burst: 32,
    every: 10,
};
/// Keys each table holds at most (pilots, sources, open sessions).
pub const MAX_SESSION_KEYS: usize = 100_000;

/// Which session events go on (see the module's doc).
#[derive(Debug, Clone)]
pub struct SessionShare {
    pilots: Buckets<(String, String)>,
    sources: Buckets<String>,
    /// Sessions passed on and not yet ended, by callsign (the relay's end events
    /// carry no address).
    open: HashMap<String, u32>,
    max_open: usize,
    shed: u64,
}

impl Default for SessionShare {
    fn default() -> Self {
        SessionShare::new(PILOT_SESSIONS, SOURCE_SESSIONS, MAX_SESSION_KEYS)
    }
}

impl SessionShare {
    /// Pilots at `pilot`, sources at `source`, each table at most `max_keys`.
    pub fn new(pilot: Rate, source: Rate, max_keys: usize) -> SessionShare {
        SessionShare {
            pilots: Buckets::new(pilot, max_keys),
            sources: Buckets::new(source, max_keys),
            open: HashMap::new(),
            max_open: max_keys,
            shed: 0,
        }
    }

    /// Whether the session `callsign` began from `source` at `now` goes on.
    pub fn began(&mut self, source: &str, callsign: &str, now: i64) -> bool {
        let pilot = (source.to_string(), callsign.to_string());
        let room = self.pilots.room(&pilot, now)
            && self.sources.room(&source.to_string(), now)
            && (self.open.len() < self.max_open || self.open.contains_key(callsign));
        if !room {
            self.shed += 1;
            return false;
        }
        self.pilots.take(&pilot, now);
        self.sources.take(&source.to_string(), now);
        *self.open.entry(callsign.to_string()).or_default() += 1;
        true
    }

    /// Whether the end of a session of `callsign` goes on: when one of its sessions
    /// went on and has not ended.
    pub fn ended(&mut self, callsign: &str) -> bool {
        match self.open.get_mut(callsign) {
            Some(n) => {
                *n -= 1;
                if *n == 0 {
                    self.open.remove(callsign);
                }
                true
            }
            None => {
                self.shed += 1;
                false
            }
        }
    }

    /// Forgets the buckets full again by `now`.
    pub fn prune(&mut self, now: i64) {
        self.pilots.prune(now);
        self.sources.prune(now);
    }

    /// Events shed so far.
    pub fn shed(&self) -> u64 {
        self.shed
    }

    /// Keys held: (pilots, sources, open sessions).
    pub fn held(&self) -> (usize, usize, usize) {
        (self.pilots.len(), self.sources.len(), self.open.len())
    }
}

/// What each key holds of a queue counted in items: at most `max_total` in all and
/// `max_per_key` for one key.
#[derive(Debug, Clone, Default)]
pub struct QueueShare {
    held: HashMap<String, usize>,
    total: usize,
    max_total: usize,
    max_per_key: usize,
}

impl QueueShare {
    /// At most `max_total` items, `max_per_key` of them one key's.
    pub fn new(max_total: usize, max_per_key: usize) -> QueueShare {
        QueueShare {
            max_total,
            max_per_key,
            ..QueueShare::default()
        }
    }

    /// Counts `n` items of `key` in, if they fit.
    pub fn admit(&mut self, key: &str, n: usize) -> bool {
        let mine = self.held.get(key).copied().unwrap_or(0);
        if self.total + n > self.max_total || mine + n > self.max_per_key {
            return false;
        }
        self.total += n;
        *self.held.entry(key.to_string()).or_default() += n;
        true
    }

    /// Counts `n` items of `key` out (taken from the queue).
    pub fn release(&mut self, key: &str, n: usize) {
        if let Some(h) = self.held.get_mut(key) {
            let n = n.min(*h);
            *h -= n;
            self.total -= n;
            if *h == 0 {
                self.held.remove(key);
            }
        }
    }

    /// Items held in all.
    pub fn total(&self) -> usize {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_gives_its_burst_then_one_every_interval() {
        let r = Rate {
            burst: 3,
            every: 10,
        };
        let mut b: Buckets<&str> = Buckets::new(r, 10);
        let mut got = Vec::new();
        for t in 0..40 {
            if b.room(&"a", t) {
                b.take(&"a", t);
                got.push(t);
            }
        }
        assert_eq!(got, [0, 1, 2, 10, 20, 30]);
    }

    #[test]
    fn a_full_table_gives_no_room_to_new_keys_and_full_buckets_are_forgotten() {
        let r = Rate {
            burst: 1,
            every: 10,
        };
        let mut b: Buckets<u32> = Buckets::new(r, 2);
        for k in [1, 2] {
            assert!(b.room(&k, 0));
            b.take(&k, 0);
        }
        assert!(!b.room(&3, 0), "the table is full");
        assert!(!b.room(&1, 5));
        b.prune(10);
        assert!(b.is_empty());
        assert!(b.room(&3, 10));
    }

    #[test]
    fn a_flipping_pilot_is_shed_and_its_neighbours_are_not() {
        let mut s = SessionShare::default();
        let mut passed = 0;
        // 500 sessions a second for 10 s from one pilot.
        for i in 0..5000 {
            let now = 1000 + i / 500;
            if s.began("192.0.2.1", "FLOOD", now) {
                passed += 1;
                assert!(s.ended("FLOOD"));
            } else {
                assert!(!s.ended("FLOOD"), "its end is shed with its beginning");
            }
        }
        assert_eq!(passed, 4, "the burst, then one a minute");
        assert_eq!(s.shed(), 2 * (5000 - 4));
        // Another pilot of the same address, and one elsewhere, still begin.
        assert!(s.began("192.0.2.1", "HONEST", 1010));
        assert!(s.began("192.0.2.2", "OTHER", 1010));
        assert!(s.ended("HONEST") && s.ended("OTHER"));
        // An end nobody saw begin (from before the share) is shed.
        assert!(!s.ended("NOBODY"));
    }

    #[test]
    fn one_source_with_many_callsigns_gets_its_source_share() {
        let mut s = SessionShare::default();
        let passed = (0..1000)
            .filter(|i| s.began("2001:db8::", &format!("C{i}"), 0))
            .count();
        assert_eq!(passed, SOURCE_SESSIONS.burst as usize);
        s.prune(100_000);
        assert_eq!(s.held().0 + s.held().1, 0, "nothing kept once full again");
        assert_eq!(s.held().2, 32, "sessions still open are remembered");
    }

    #[test]
    fn a_queue_share_bounds_each_key_and_the_total() {
        let mut q = QueueShare::new(100, 60);
        assert!(q.admit("flood", 60));
        assert!(!q.admit("flood", 1), "its share is used");
        assert!(q.admit("honest", 40));
        assert!(!q.admit("other", 1), "the queue is full");
        q.release("flood", 10);
        assert!(q.admit("other", 10));
        assert_eq!(q.total(), 100);
        q.release("nobody", 5);
        assert_eq!(q.total(), 100);
    }
}
