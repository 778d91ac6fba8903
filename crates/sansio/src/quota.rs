//! Nested per-source quotas, written once for every part that counts something per
//! source (relay pilots, master servers, TCP connections).
//!
//! A source ([`source_key`]: an IPv4 address or an IPv6 /64) has its share, and so do
//! the networks around it: an IPv6 /64 sits within its /56 and its /48, an IPv4
//! address within its /24. A wider network holds a fixed multiple of one source's
//! share ([`WIDER`]), so one site's /48 (65,536 /64s) or one /24 can take only a few
//! sources' worth of a global cap, never the whole of it.
//!
//! With the relay's 16 pilots per source, a /48 holds 128 pilots (its 65,536 /64s
//! would otherwise hold all 50,000); with HTTP's connections per source, a /48 holds
//! eight sources' worth.

use crate::source_key;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The networks an address counts in beyond its source, with the multiple of one
/// source's share each holds: IPv6 /56 (4) and /48 (8); IPv4 /24 (8).
pub const WIDER: [(Family, u8, usize); 3] = [
    (Family::V6, 56, 4),
    (Family::V6, 48, 8),
    (Family::V4, 24, 8),
];

/// An address family, for [`WIDER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4 (IPv4-mapped IPv6 addresses included).
    V4,
    /// IPv6.
    V6,
}

/// A network an address counts in: its prefix length and its first address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Net {
    /// The network's first address.
    pub addr: IpAddr,
    /// Its prefix length (64 or 32 for a source itself).
    pub len: u8,
}

impl std::fmt::Display for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// The first address of the `len`-bit network around `ip` (already canonical).
fn network(ip: IpAddr, len: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
        }
        IpAddr::V6(a) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
        }
    }
}

/// The source `ip` counts as, then each wider network it sits in with the multiple
/// of a source's share that network holds (1 for the source itself).
pub fn nets(ip: IpAddr) -> impl Iterator<Item = (Net, usize)> {
    let key = source_key(ip);
    let (family, len) = match key {
        IpAddr::V4(_) => (Family::V4, 32),
        IpAddr::V6(_) => (Family::V6, 64),
    };
    std::iter::once((Net { addr: key, len }, 1)).chain(
        WIDER
            .iter()
            .filter(move |(f, _, _)| *f == family)
            .map(move |&(_, len, times)| {
                (
                    Net {
                        addr: network(key, len),
                        len,
                    },
                    times,
                )
            }),
    )
}

/// Which share is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// The source's own (an IPv4 address or an IPv6 /64).
    Source,
    /// The share of a wider network around it (an IPv6 /56 or /48, an IPv4 /24).
    Network(Net),
}

/// Counts per source and per wider network, each under its share: `per_source` for
/// a source, `per_source` times the [`WIDER`] multiple for a network. Entries whose
/// count falls to zero are removed, so the table holds only what is counted.
#[derive(Debug, Clone, Default)]
pub struct SourceQuota {
    per_source: usize,
    counts: HashMap<Net, usize>,
}

impl SourceQuota {
    /// A quota of `per_source` per source (and its multiples for wider networks).
    pub fn new(per_source: usize) -> SourceQuota {
        SourceQuota {
            per_source,
            counts: HashMap::new(),
        }
    }

    /// One source's share.
    pub fn per_source(&self) -> usize {
        self.per_source
    }

    /// Changes one source's share (a reload); what is counted stays counted, and a
    /// source over its new share only gets nothing more.
    pub fn set_per_source(&mut self, per_source: usize) {
        self.per_source = per_source;
    }

    /// Whether one more from `ip` fits under every share; the narrowest share taken
    /// if not.
    pub fn check(&self, ip: IpAddr) -> Result<(), Over> {
        for (net, times) in nets(ip) {
            let n = self.counts.get(&net).copied().unwrap_or(0);
            if n >= self.per_source.saturating_mul(times) {
                return Err(if times == 1 {
                    Over::Source
                } else {
                    Over::Network(net)
                });
            }
        }
        Ok(())
    }

    /// Counts one more from `ip` if it fits ([`SourceQuota::check`]).
    pub fn try_add(&mut self, ip: IpAddr) -> Result<(), Over> {
        self.check(ip)?;
        self.add(ip);
        Ok(())
    }

    /// Counts one more from `ip` whatever the shares (for what is admitted by another
    /// rule, such as a pilot that takes over its own callsign).
    pub fn add(&mut self, ip: IpAddr) {
        for (net, _) in nets(ip) {
            *self.counts.entry(net).or_insert(0) += 1;
        }
    }

    /// Counts one fewer from `ip` (nothing if it has none).
    pub fn remove(&mut self, ip: IpAddr) {
        for (net, _) in nets(ip) {
            if let Some(n) = self.counts.get_mut(&net) {
                *n -= 1;
                if *n == 0 {
                    self.counts.remove(&net);
                }
            }
        }
    }

    /// How many `ip`'s source has.
    pub fn count(&self, ip: IpAddr) -> usize {
        nets(ip)
            .next()
            .and_then(|(net, _)| self.counts.get(&net).copied())
            .unwrap_or(0)
    }

    /// Sources with something counted.
    pub fn sources(&self) -> usize {
        self.counts
            .keys()
            .filter(|n| n.len == 64 || n.len == 32)
            .count()
    }

    /// Entries held (sources and networks).
    pub fn entries(&self) -> usize {
        self.counts.len()
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
    fn a_48_holds_eight_sources_worth_and_a_56_four() {
        let mut q = SourceQuota::new(2);
        // 2001:db8:1:0::/56 holds 8: four /64s of two each.
        for sub in 0..4 {
            for host in 1..=2 {
                q.try_add(ip(&format!("2001:db8:1:{sub}::{host}"))).unwrap();
            }
        }
        let over = q.try_add(ip("2001:db8:1:4::1")).unwrap_err();
        assert_eq!(over.to_string_net(), "2001:db8:1::/56");
        // Another /56 of the same /48 takes the other 8, then the /48 is full.
        for sub in 0..4 {
            for host in 1..=2 {
                q.try_add(ip(&format!("2001:db8:1:{:x}::{host}", 0x100 + sub)))
                    .unwrap();
            }
        }
        let over = q.try_add(ip("2001:db8:1:200::1")).unwrap_err();
        assert_eq!(over.to_string_net(), "2001:db8:1::/48");
        // Another /48 is untouched.
        q.try_add(ip("2001:db8:2::1")).unwrap();
        assert_eq!(q.sources(), 9);
    }

    #[test]
    fn an_ipv4_24_holds_eight_addresses_worth_and_mapped_addresses_count_as_ipv4() {
        let mut q = SourceQuota::new(1);
        for h in 1..=7 {
            q.try_add(ip(&format!("192.0.2.{h}"))).unwrap();
        }
        q.try_add(ip("::ffff:192.0.2.8")).unwrap();
        assert_eq!(q.check(ip("192.0.2.8")), Err(Over::Source));
        let over = q.try_add(ip("192.0.2.9")).unwrap_err();
        assert_eq!(over.to_string_net(), "192.0.2.0/24");
        q.try_add(ip("192.0.3.1")).unwrap();
    }

    #[test]
    fn removing_gives_every_share_back_and_leaves_no_entry() {
        let mut q = SourceQuota::new(1);
        q.try_add(ip("2001:db8::1")).unwrap();
        q.try_add(ip("10.0.0.1")).unwrap();
        assert_eq!(q.entries(), 5);
        q.remove(ip("2001:db8::ffff"));
        q.remove(ip("10.0.0.1"));
        q.remove(ip("10.0.0.1"));
        assert_eq!(q.entries(), 0);
    }

    impl Over {
        fn to_string_net(self) -> String {
            match self {
                Over::Source => "source".into(),
                Over::Network(n) => n.to_string(),
            }
        }
    }

    proptest! {
        /// Under any sequence of adds and removes within one /48 and one /24, no
        /// share is ever passed and everything is given back.
        #[test]
        fn no_share_is_ever_passed(ops in proptest::collection::vec((0u16..24, 0u8..4, any::<bool>()), 0..300)) {
            let mut q = SourceQuota::new(2);
            let mut held: Vec<IpAddr> = Vec::new();
            for (sub, host, add) in ops {
                let a = if sub < 20 {
                    IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 7, sub * 0x40, 0, 0, 0, u16::from(host)))
                } else {
                    IpAddr::V4(Ipv4Addr::new(192, 0, 2, (sub as u8) * 4 + host))
                };
                if add {
                    if q.try_add(a).is_ok() {
                        held.push(a);
                    }
                } else if let Some(i) = held.iter().position(|h| *h == a) {
                    held.swap_remove(i);
                    q.remove(a);
                }
                for h in &held {
                    for (net, times) in nets(*h) {
                        let n = held.iter().filter(|o| nets(**o).any(|(m, _)| m == net)).count();
                        prop_assert!(n <= 2 * times, "{} holds {}", net, n);
                        prop_assert_eq!(q.counts.get(&net).copied().unwrap_or(0), n);
                    }
                }
            }
            for h in held.drain(..) {
                q.remove(h);
            }
            prop_assert_eq!(q.entries(), 0);
        }
    }
}
