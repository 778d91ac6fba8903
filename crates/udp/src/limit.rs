//! [`ConnLimiter`]: the one cap on open connections per source and in total, used by
//! every TCP listener (HTTP, telnet, tracker).

use sansio::SourceQuota;
use std::net::IpAddr;
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
