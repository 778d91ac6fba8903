//! The ban list: IPv4 networks and IPv6 networks of at least a /64 (an IPv6 host can
//! change the low 64 bits at will, so banning less than its /64 bans nothing). A plain
//! IPv4 address is its /32, a plain IPv6 address its /64. Lookups mask the address once
//! per prefix length in use, so they stay cheap however many networks are banned.

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// Networks banned at most (an admin command that would exceed it is refused).
pub const MAX_BANS: usize = 65_536;

/// Parses `ADDR` or `ADDR/LEN` into the network a ban covers (see the module docs).
pub fn parse_net(s: &str) -> Option<IpNet> {
    let net = match s.parse::<IpNet>() {
        Ok(n) => n,
        Err(_) => IpNet::from(s.parse::<IpAddr>().ok()?),
    };
    Some(normalize(net))
}

/// The network a ban on `net` covers: IPv6 prefixes longer than 64 widen to the /64,
/// host bits are cleared.
pub fn normalize(net: IpNet) -> IpNet {
    match net {
        IpNet::V4(n) => IpNet::V4(n.trunc()),
        IpNet::V6(n) if n.prefix_len() > 64 => IpNet::V6(
            Ipv6Net::new(n.addr(), 64)
                .expect("64 is a valid length")
                .trunc(),
        ),
        IpNet::V6(n) => IpNet::V6(n.trunc()),
    }
}

/// The banned networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bans {
    nets: BTreeSet<IpNet>,
    /// How many banned networks have each prefix length, per family (lookups try these).
    lens_v4: BTreeMap<u8, usize>,
    lens_v6: BTreeMap<u8, usize>,
}

impl Bans {
    /// No bans.
    pub fn new() -> Bans {
        Bans::default()
    }

    fn lens(&mut self, net: &IpNet) -> &mut BTreeMap<u8, usize> {
        match net {
            IpNet::V4(_) => &mut self.lens_v4,
            IpNet::V6(_) => &mut self.lens_v6,
        }
    }

    /// Bans `net` (normalised); false when it was banned already or the list is full.
    pub fn insert(&mut self, net: IpNet) -> bool {
        let net = normalize(net);
        if self.nets.len() >= MAX_BANS || !self.nets.insert(net) {
            return false;
        }
        *self.lens(&net).entry(net.prefix_len()).or_insert(0) += 1;
        true
    }

    /// Lifts the ban on exactly `net` (normalised); false when it was not banned.
    pub fn remove(&mut self, net: IpNet) -> bool {
        let net = normalize(net);
        if !self.nets.remove(&net) {
            return false;
        }
        let lens = self.lens(&net);
        if let Some(n) = lens.get_mut(&net.prefix_len()) {
            *n -= 1;
            if *n == 0 {
                lens.remove(&net.prefix_len());
            }
        }
        true
    }

    /// Whether `ip` is in a banned network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match ip {
            IpAddr::V4(a) => self.lens_v4.keys().any(|&l| {
                Ipv4Net::new(a, l)
                    .map(|n| self.nets.contains(&IpNet::V4(n.trunc())))
                    .unwrap_or(false)
            }),
            IpAddr::V6(a) => self.lens_v6.keys().any(|&l| {
                Ipv6Net::new(a, l)
                    .map(|n| self.nets.contains(&IpNet::V6(n.trunc())))
                    .unwrap_or(false)
            }),
        }
    }

    /// Banned networks, in order.
    pub fn iter(&self) -> impl Iterator<Item = IpNet> + '_ {
        self.nets.iter().copied()
    }

    /// How many networks are banned.
    pub fn len(&self) -> usize {
        self.nets.len()
    }

    /// Whether nothing is banned.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
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
    fn addresses_networks_and_the_ipv6_64() {
        let mut b = Bans::new();
        assert!(b.insert(parse_net("192.0.2.7").unwrap()));
        assert!(b.insert(parse_net("198.51.100.0/24").unwrap()));
        assert!(b.insert(parse_net("2001:db8::1").unwrap()));
        assert!(b.insert(parse_net("2001:db8:ff::/48").unwrap()));
        assert!(
            !b.insert(parse_net("2001:db8::99/128").unwrap()),
            "the same /64"
        );
        assert!(b.contains(ip("192.0.2.7")) && !b.contains(ip("192.0.2.8")));
        assert!(b.contains(ip("198.51.100.200")) && !b.contains(ip("198.51.101.1")));
        assert!(b.contains(ip("2001:db8::ffff:1")), "same /64");
        assert!(!b.contains(ip("2001:db8:0:1::1")));
        assert!(b.contains(ip("2001:db8:ff:1234::1")));
        assert_eq!(
            b.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            [
                "192.0.2.7/32",
                "198.51.100.0/24",
                "2001:db8::/64",
                "2001:db8:ff::/48"
            ]
        );
        assert!(b.remove(parse_net("2001:db8::5").unwrap()));
        assert!(!b.contains(ip("2001:db8::1")));
        assert!(parse_net("10.0.0.0/33").is_none() && parse_net("nope").is_none());
        assert_eq!(parse_net("10.1.2.3/8").unwrap().to_string(), "10.0.0.0/8");
    }

    proptest! {
        /// `contains` agrees with a linear scan of the banned networks.
        #[test]
        fn contains_matches_a_linear_scan(
            nets in proptest::collection::vec((any::<u32>(), 0u8..=32), 0..40),
            nets6 in proptest::collection::vec((any::<u128>(), 0u8..=128), 0..40),
            probes in proptest::collection::vec(any::<u32>(), 1..60),
            probes6 in proptest::collection::vec(any::<u128>(), 1..60),
        ) {
            let mut b = Bans::new();
            for (a, l) in &nets {
                b.insert(IpNet::V4(Ipv4Net::new((*a).into(), *l).unwrap()));
            }
            for (a, l) in &nets6 {
                b.insert(IpNet::V6(Ipv6Net::new((*a).into(), *l).unwrap()));
            }
            let list: Vec<IpNet> = b.iter().collect();
            // Probe inside the banned networks too, not only at random.
            let inside = nets.iter().map(|(a, _)| IpAddr::V4((*a).into()));
            let inside6 = nets6.iter().map(|(a, _)| IpAddr::V6((*a).into()));
            let all = probes.iter().map(|a| IpAddr::V4((*a).into()))
                .chain(probes6.iter().map(|a| IpAddr::V6((*a).into())))
                .chain(inside).chain(inside6);
            for p in all {
                prop_assert_eq!(b.contains(p), list.iter().any(|n| n.contains(&p)), "{}", p);
            }
        }
    }
}
