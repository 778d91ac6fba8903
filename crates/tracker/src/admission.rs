//! Who may report to a tracker server, and when a report may say it happened: the
//! policy `lobby tracker` applies before a line reaches the flight log.
//!
//! - A relay is admitted by the first `[[tracker.relay]]` entry whose network holds
//!   its address (IPv4-mapped IPv6 seen as IPv4); an entry with a secret admits only
//!   the relay whose first message carries it (compared in constant time).
//! - A report's time is kept within six hours before the time it arrived and a
//!   minute after: a flight dated in the future would never be closed nor pruned,
//!   and a relay's backlog after a long outage is the oldest an honest report gets.

use ipnet::IpNet;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// One relay allowed to report (`[[tracker.relay]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedRelay {
    /// The name its flights are recorded under.
    pub name: String,
    /// Where it connects from.
    pub net: IpNet,
    /// The secret its first message must carry (lobby to lobby), if any.
    pub secret: Option<String>,
}

/// Why an identification is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No `[[tracker.relay]]` holds the source address.
    NotListed,
    /// The relay's entry has a secret and the first message did not carry it.
    WrongSecret,
}

/// The relay allowed from `ip` with the first message's `secret`: the first entry
/// whose network holds `ip`, and whose secret (if it has one) is the one sent.
pub fn admit<'a>(
    allowed: &'a [AllowedRelay],
    ip: IpAddr,
    secret: Option<&str>,
) -> Result<&'a str, Refused> {
    let ip = ip.to_canonical();
    let r = allowed
        .iter()
        .find(|r| r.net.contains(&ip))
        .ok_or(Refused::NotListed)?;
    match (&r.secret, secret) {
        (None, _) => Ok(&r.name),
        (Some(want), Some(got)) if bool::from(want.as_bytes().ct_eq(got.as_bytes())) => Ok(&r.name),
        _ => Err(Refused::WrongSecret),
    }
}

/// The most a report may lie in the past of its arrival, seconds.
pub const MAX_AGE: i64 = 6 * 3600;
/// The most a report may lie in the future of its arrival, seconds.
pub const MAX_AHEAD: i64 = 60;

/// A report's time `t` as recorded when it arrived at `now` (Unix seconds).
pub fn clamp_time(t: i64, now: i64) -> i64 {
    t.clamp(now.saturating_sub(MAX_AGE), now.saturating_add(MAX_AHEAD))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relays_are_admitted_by_the_first_network_that_holds_them() {
        let entry = |name: &str, net: &str, secret: Option<&str>| AllowedRelay {
            name: name.into(),
            net: net.parse().unwrap(),
            secret: secret.map(str::to_string),
        };
        let allowed = vec![
            entry("mpserver01", "192.0.2.1/32", None),
            entry("lan", "10.0.0.0/8", None),
            entry("v6", "2001:db8::/64", None),
            entry("lobby02", "198.51.100.0/24", Some("s3cret")),
        ];
        let n = |s: &str, secret: Option<&str>| admit(&allowed, s.parse().unwrap(), secret);
        assert_eq!(n("192.0.2.1", None), Ok("mpserver01"));
        assert_eq!(n("::ffff:192.0.2.1", None), Ok("mpserver01"), "mapped IPv4");
        assert_eq!(n("10.9.8.7", Some("anything")), Ok("lan"));
        assert_eq!(n("2001:db8::5", None), Ok("v6"));
        assert_eq!(n("192.0.2.2", None), Err(Refused::NotListed));
        // An entry with a secret admits only the relay that sends it.
        assert_eq!(n("198.51.100.7", Some("s3cret")), Ok("lobby02"));
        assert_eq!(n("198.51.100.7", None), Err(Refused::WrongSecret));
        assert_eq!(n("198.51.100.7", Some("s3cre")), Err(Refused::WrongSecret));
        assert_eq!(
            n("198.51.100.7", Some("s3cret!")),
            Err(Refused::WrongSecret)
        );
    }

    #[test]
    fn report_times_are_clamped_near_now() {
        let now = 1_796_155_200;
        assert_eq!(clamp_time(now + 10, now), now + 10);
        assert_eq!(clamp_time(now + 86_400 * 365, now), now + 60, "the future");
        assert_eq!(clamp_time(0, now), now - 6 * 3600, "the distant past");
        assert_eq!(clamp_time(i64::MAX, i64::MAX), i64::MAX, "no overflow");
        assert_eq!(clamp_time(i64::MIN, i64::MIN), i64::MIN, "no overflow");
    }
}
