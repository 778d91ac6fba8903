//! [`ConnLimiter`]: the one cap on open connections per source and in total, used by
//! every TCP listener (HTTP, telnet, tracker); [`Waiting`]: the places a listener may
//! take back at its cap (HTTP: connections waiting for a request head).

use sansio::SourceQuota;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Why a connection gets no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Every place of the listener is taken.
    Total,
    /// Its source (an IPv4 address or IPv6 /64, [`sansio::source_key`]) has its
    /// share, or a network around it (IPv6 /56 or /48, IPv4 /24) has its own
    /// ([`sansio::quota`]).
    PerSource,
}

#[derive(Debug)]
struct Open {
    total: usize,
    per_source: SourceQuota,
}

/// Open connections, at most `max_total` in all and `max_per_source` per source
/// (and its multiples per wider network: [`sansio::quota`]).
/// Cheap to clone (one shared table); a [`Slot`] gives its place back when dropped.
#[derive(Debug, Clone)]
pub struct ConnLimiter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    max_total: usize,
    open: Mutex<Open>,
}

/// One connection's place under a [`ConnLimiter`], given back on drop.
#[derive(Debug)]
pub struct Slot {
    inner: Arc<Inner>,
    source: IpAddr,
}

impl ConnLimiter {
    /// A limiter allowing `max_total` connections, `max_per_source` from one source.
    pub fn new(max_total: usize, max_per_source: usize) -> ConnLimiter {
        ConnLimiter {
            inner: Arc::new(Inner {
                max_total,
                open: Mutex::new(Open {
                    total: 0,
                    per_source: SourceQuota::new(max_per_source),
                }),
            }),
        }
    }

    /// A place for one more connection from `ip`, or which cap is reached (the total
    /// is checked first).
    pub fn acquire(&self, ip: IpAddr) -> Result<Slot, Refusal> {
        let mut open = self.inner.lock();
        if open.total >= self.inner.max_total {
            return Err(Refusal::Total);
        }
        if open.per_source.try_add(ip).is_err() {
            return Err(Refusal::PerSource);
        }
        open.total += 1;
        Ok(Slot {
            inner: self.inner.clone(),
            source: ip,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.inner.lock().total
    }

    /// Sources with a connection open now.
    pub fn sources(&self) -> usize {
        self.inner.lock().per_source.sources()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.inner.lock();
        open.total -= 1;
        open.per_source.remove(self.source);
    }
}

/// Raises the soft open-file limit to the hard limit (every connection and every
/// simulated client has its own descriptor); returns the soft limit now in force.
pub fn raise_nofile() -> u64 {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 1024;
        }
        if r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return want.rlim_cur;
            }
        }
        r.rlim_cur
    }
}

/// Connections waiting for something from their client (HTTP: the next request
/// head), oldest first. At the connection cap the listener takes back the place of
/// the one that has waited longest ([`Waiting::cut_oldest`]) for the new connection,
/// so a crowd of slow or silent clients cannot keep fresh ones out. Holds at most
/// one entry per open connection.
#[derive(Clone, Default)]
pub struct Waiting {
    inner: Arc<Mutex<Queue>>,
}

#[derive(Default)]
struct Queue {
    next: u64,
    by_age: BTreeMap<u64, Arc<Place>>,
}

/// One connection's place, which [`Waiting`] can take back while it waits.
pub struct Place {
    slot: Mutex<Option<Slot>>,
    /// Told when the place is taken back (the connection then closes).
    cut: Box<dyn Fn() + Send + Sync>,
    /// Its position in the queue while it waits; 0 when it does not.
    seq: AtomicU64,
}

impl Place {
    /// A place holding `slot`; `cut` is called once if it is taken back.
    pub fn new(slot: Slot, cut: impl Fn() + Send + Sync + 'static) -> Arc<Place> {
        Arc::new(Place {
            slot: Mutex::new(Some(slot)),
            cut: Box::new(cut),
            seq: AtomicU64::new(0),
        })
    }

    /// Whether the place was taken back.
    pub fn is_cut(&self) -> bool {
        self.slot
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }
}

impl Waiting {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `p` starts waiting (again: its age starts now).
    pub fn enter(&self, p: &Arc<Place>) {
        let mut q = self.lock();
        if p.is_cut() {
            return;
        }
        let old = p.seq.load(Ordering::Relaxed);
        if old != 0 {
            q.by_age.remove(&old);
        }
        q.next += 1;
        let seq = q.next;
        p.seq.store(seq, Ordering::Relaxed);
        q.by_age.insert(seq, p.clone());
    }

    /// `p` got what it waited for, or ended.
    pub fn leave(&self, p: &Place) {
        let mut q = self.lock();
        let seq = p.seq.swap(0, Ordering::Relaxed);
        if seq != 0 {
            q.by_age.remove(&seq);
        }
    }

    /// `p`'s connection ended: out of the queue for good (a later
    /// [`Waiting::enter`], from a response that finished late, is ignored) and its
    /// place given back at once.
    pub fn done(&self, p: &Place) {
        self.leave(p);
        drop(p.slot.lock().unwrap_or_else(|e| e.into_inner()).take());
    }

    /// Takes back the place of the connection that has waited longest: its slot is
    /// given back at once and it is told to close. False when none waits.
    pub fn cut_oldest(&self) -> bool {
        let Some((_, p)) = self.lock().by_age.pop_first() else {
            return false;
        };
        p.seq.store(0, Ordering::Relaxed);
        drop(p.slot.lock().unwrap_or_else(|e| e.into_inner()).take());
        (p.cut)();
        true
    }

    /// Takes back the place of the longest-waiting connection from `ip`'s source
    /// ([`sansio::source_key`]), for a new one from that source at its share: a
    /// client's own idle keep-alive connections make room for its next. False when
    /// none of them waits.
    pub fn cut_oldest_from(&self, ip: IpAddr) -> bool {
        let key = sansio::source_key(ip);
        let p = {
            let mut q = self.lock();
            let found = q.by_age.iter().find_map(|(&seq, p)| {
                let slot = p.slot.lock().unwrap_or_else(|e| e.into_inner());
                slot.as_ref()
                    .is_some_and(|s| sansio::source_key(s.source) == key)
                    .then_some(seq)
            });
            match found.and_then(|seq| q.by_age.remove(&seq)) {
                Some(p) => p,
                None => return false,
            }
        };
        p.seq.store(0, Ordering::Relaxed);
        drop(p.slot.lock().unwrap_or_else(|e| e.into_inner()).take());
        (p.cut)();
        true
    }

    /// A place under `open` for a new connection from `ip`: at a cap, the
    /// longest-waiting connection (at the per-source cap, one of that source's own)
    /// is closed for it. The slot and whether a connection was closed; the cap
    /// reached when none waits.
    pub fn admit(&self, open: &ConnLimiter, ip: IpAddr) -> Result<(Slot, bool), Refusal> {
        match open.acquire(ip) {
            Ok(slot) => Ok((slot, false)),
            Err(why) => {
                let cut = match why {
                    Refusal::Total => self.cut_oldest(),
                    Refusal::PerSource => self.cut_oldest_from(ip),
                };
                if !cut {
                    return Err(why);
                }
                open.acquire(ip).map(|slot| (slot, true))
            }
        }
    }

    /// Connections waiting now.
    pub fn len(&self) -> usize {
        self.lock().by_age.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn places_are_given_back_and_no_entry_outlives_its_source() {
        let l = ConnLimiter::new(10, 2);
        let a = l.acquire(ip("192.0.2.1")).unwrap();
        let b = l.acquire(ip("192.0.2.1")).unwrap();
        assert_eq!(l.acquire(ip("192.0.2.1")).unwrap_err(), Refusal::PerSource);
        drop(a);
        let c = l.acquire(ip("192.0.2.1")).unwrap();
        drop((b, c));
        assert_eq!((l.open(), l.sources()), (0, 0));
    }

    #[test]
    fn one_ipv6_64_and_a_mapped_ipv4_address_are_one_source_each() {
        let l = ConnLimiter::new(10, 1);
        let _a = l.acquire(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(
            l.acquire(ip("2001:db8:1:2:ffff::9")).unwrap_err(),
            Refusal::PerSource
        );
        assert!(l.acquire(ip("2001:db8:1:3::1")).is_ok());
        let _v4 = l.acquire(ip("192.0.2.1")).unwrap();
        assert_eq!(
            l.acquire(ip("::ffff:192.0.2.1")).unwrap_err(),
            Refusal::PerSource
        );
    }

    #[test]
    fn one_ipv6_48_holds_eight_sources_worth() {
        // 2 per /64; the /56 holds 8 and the /48 16, whatever the /64s.
        let l = ConnLimiter::new(1000, 2);
        let held: Vec<Slot> = (0..64u16)
            .flat_map(|sub| (1..=2u16).map(move |h| (sub, h)))
            .filter_map(|(sub, h)| {
                l.acquire(IpAddr::from([0x2001, 0xdb8, 5, sub * 0x40, 0, 0, 0, h]))
                    .ok()
            })
            .collect();
        assert_eq!(held.len(), 16);
        assert!(l.acquire(ip("2001:db8:6::1")).is_ok());
    }

    #[test]
    fn the_longest_waiting_place_is_taken_back_and_its_slot_freed_at_once() {
        use std::sync::atomic::AtomicUsize;
        let l = ConnLimiter::new(3, 3);
        let w = Waiting::default();
        let cuts = Arc::new(AtomicUsize::new(0));
        let place = |ip: &str| {
            let c = cuts.clone();
            Place::new(l.acquire(super::tests::ip(ip)).unwrap(), move || {
                c.fetch_add(1, Ordering::Relaxed);
            })
        };
        let (a, b, c) = (place("192.0.2.1"), place("192.0.2.2"), place("192.0.2.3"));
        w.enter(&a);
        w.enter(&b);
        w.enter(&c);
        w.leave(&b); // b's head arrived: not a candidate
        w.enter(&a); // a waits again: now younger than c
        assert_eq!(l.acquire(ip("192.0.2.9")).unwrap_err(), Refusal::Total);
        assert!(w.cut_oldest());
        assert!(c.is_cut() && !a.is_cut() && !b.is_cut());
        assert_eq!(cuts.load(Ordering::Relaxed), 1);
        let _new = l.acquire(ip("192.0.2.9")).unwrap();
        w.enter(&c); // a cut place never waits again
        assert!(w.cut_oldest());
        assert!(a.is_cut());
        assert!(!w.cut_oldest(), "b does not wait");
        w.leave(&b);
        assert!(w.is_empty());
        // An ended connection gives its place back and never waits again.
        w.done(&b);
        w.enter(&b);
        assert!(w.is_empty() && b.is_cut());
        assert_eq!(l.open(), 1, "only the new connection holds a place");
    }

    #[test]
    fn a_source_at_its_share_makes_room_from_its_own_waiting_connections() {
        let l = ConnLimiter::new(10, 2);
        let w = Waiting::default();
        let place = |ip: &str| Place::new(l.acquire(super::tests::ip(ip)).unwrap(), || {});
        let (other, a, b) = (place("192.0.2.9"), place("192.0.2.1"), place("192.0.2.1"));
        w.enter(&other);
        w.enter(&a);
        assert_eq!(l.acquire(ip("192.0.2.1")).unwrap_err(), Refusal::PerSource);
        assert!(w.cut_oldest_from(ip("192.0.2.1")));
        assert!(
            a.is_cut() && !other.is_cut() && !b.is_cut(),
            "its own, not another's"
        );
        let _c = l.acquire(ip("192.0.2.1")).unwrap();
        assert!(!w.cut_oldest_from(ip("192.0.2.1")), "b does not wait");
    }

    #[test]
    fn the_total_cap_holds_across_sources() {
        let l = ConnLimiter::new(2, 5);
        let _a = l.acquire(ip("192.0.2.1")).unwrap();
        let _b = l.acquire(ip("192.0.2.2")).unwrap();
        assert_eq!(l.acquire(ip("192.0.2.3")).unwrap_err(), Refusal::Total);
    }

    proptest! {
        /// Whatever the order of connects and disconnects, neither cap is ever passed
        /// and everything is given back.
        #[test]
        fn caps_hold_under_any_sequence(ops in proptest::collection::vec((0u8..6, any::<bool>()), 0..200)) {
            let l = ConnLimiter::new(7, 3);
            let mut held: Vec<(u8, Slot)> = Vec::new();
            for (src, connect) in ops {
                if connect {
                    if let Ok(s) = l.acquire(IpAddr::from([192, 0, 2, src])) {
                        held.push((src, s));
                    }
                } else if let Some(i) = held.iter().position(|(s, _)| *s == src) {
                    held.swap_remove(i);
                }
                prop_assert!(l.open() <= 7);
                prop_assert_eq!(l.open(), held.len());
                for s in 0..6u8 {
                    prop_assert!(held.iter().filter(|(h, _)| *h == s).count() <= 3);
                }
            }
            held.clear();
            prop_assert_eq!((l.open(), l.sources()), (0, 0));
        }
    }
}
