//! The unit every per-source quota counts in, written once for every part (relay
//! pilots, master servers and rate limits, HTTP, telnet and tracker connections).

use std::net::{IpAddr, Ipv6Addr};

/// The key a source is counted under: an IPv4 address, or the /64 network of an IPv6
/// address (one subscriber's allocation; its interface ids are free to pick).
/// IPv4-mapped IPv6 addresses (what a dual-stack socket reports for IPv4 clients)
/// count as their IPv4 address.
pub fn source_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(a) => IpAddr::V4(a),
        IpAddr::V6(a) => {
            let s = a.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn k(s: &str) -> String {
        source_key(s.parse().unwrap()).to_string()
    }

    #[test]
    fn sources_are_ipv4_addresses_and_ipv6_64s() {
        assert_eq!(k("192.0.2.7"), "192.0.2.7");
        assert_eq!(k("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::");
        assert_eq!(k("2001:db8:1:2:ffff:1:2:3"), "2001:db8:1:2::");
        assert_ne!(k("2001:db8:1:3::1"), k("2001:db8:1:2::1"));
        assert_ne!(k("192.0.2.1"), k("192.0.2.2"));
    }

    #[test]
    fn ipv4_mapped_addresses_count_as_their_ipv4_address() {
        // The master's own copy of this function missed this: every IPv4 client of a
        // dual-stack socket fell into the one /64 of ::ffff:0:0/96.
        assert_eq!(k("::ffff:192.0.2.7"), "192.0.2.7");
        assert_ne!(k("::ffff:192.0.2.7"), k("::ffff:192.0.2.8"));
    }

    proptest! {
        #[test]
        fn a_key_is_its_own_key(ip in any::<IpAddr>()) {
            let key = source_key(ip);
            prop_assert_eq!(source_key(key), key);
        }

        #[test]
        fn addresses_of_one_64_share_a_key(net in any::<u64>(), a in any::<u64>(), b in any::<u64>()) {
            let ip = |iid: u64| IpAddr::V6(Ipv6Addr::from((u128::from(net) << 64) | u128::from(iid)));
            // (the ::ffff:0:0/96 block is IPv4 space and is keyed per address)
            prop_assume!(net != 0);
            prop_assert_eq!(source_key(ip(a)), source_key(ip(b)));
        }
    }
}
