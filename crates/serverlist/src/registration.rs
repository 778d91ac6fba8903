//! Self-registration over HTTP (issue 19, "Sources"): `POST /api/servers/register`
//! with an address, a gamedir and a contact opens a *pending* entry with a token; the
//! master queries the address and admits it only when the server shows the token in
//! its host name or in a server rule (`sv_contact`, a `lobby_token` cvar: any rule
//! value, read with A2S_RULES) within [`TOKEN_TTL`] seconds. Pure: the caller passes
//! the time, the token's random bytes and the answers.
//!
//! Bounds, whatever strangers send:
//! - requests per source network (an IPv4 /24, an IPv6 /48: a registration is rare,
//!   and one network must not be able to hold the table) per hour, pending entries per
//!   source network and in all, registered servers per source network and in all;
//! - a pending address is checked every [`CHECK_EVERY`] s until it proves control or
//!   its token expires: at most 40 checks of a few datagrams each toward an address
//!   a stranger named, one check per address however many registrations name it
//!   (each asking network gets its own token, up to [`Limits::pending_per_address`],
//!   so a stranger cannot hold an address against its owner by asking first), and at
//!   most [`Limits::pending_per_target`] addresses pending on one IP (the ports of
//!   one host cannot be named to multiply what it receives);
//! - only numeric addresses (a name's owner could not be told from its resolver's),
//!   and no loopback, private or otherwise unroutable one unless the operator allows
//!   it (the master would otherwise probe its own network for strangers);
//! - the contact is kept for the operator (admin API) and never published.

use crate::masterlist::Directive;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};

/// Seconds a token is valid.
pub const TOKEN_TTL: i64 = 600;
/// Seconds between checks of one pending address.
pub const CHECK_EVERY: i64 = 15;
/// The longest contact kept.
pub const MAX_CONTACT: usize = 200;

/// The caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Pending entries in all.
    pub max_pending: usize,
    /// Pending entries per source network.
    pub pending_per_source: usize,
    /// Requests per source network per hour (refused ones included).
    pub requests_per_hour: u32,
    /// Source networks whose hourly count is tracked at once.
    pub max_tracked_sources: usize,
    /// Registered servers in all.
    pub max_registered: usize,
    /// Registered servers per source network (the network that asked).
    pub registered_per_source: usize,
    /// Pending entries naming one address (any gamedir), each from its own network.
    pub pending_per_address: usize,
    /// Addresses pending on one target IP (its ports).
    pub pending_per_target: usize,
    /// Whether loopback, private and link-local addresses may register (tests, LANs).
    pub allow_private: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pending: 1024,
            pending_per_source: 4,
            requests_per_hour: 12,
            max_tracked_sources: 4096,
            max_registered: 10_000,
            registered_per_source: 16,
            pending_per_address: 4,
            pending_per_target: 8,
            allow_private: false,
        }
    }
}

/// A registration waiting for its proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// What the server must show.
    pub token: String,
    /// The server.
    pub address: SocketAddr,
    /// Its gamedir.
    pub gamedir: String,
    /// Who to reach (never published).
    pub contact: String,
    /// The source network that asked.
    pub from: String,
    /// When it was asked, Unix seconds.
    pub created: i64,
    /// When the token expires.
    pub expires: i64,
    /// Checks made.
    pub checks: u32,
    /// When it was last checked.
    pub last_check: Option<i64>,
    /// What the last check found, for the operator.
    pub last_result: String,
}

/// A server that proved control (or an operator approved).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registered {
    /// The server.
    pub address: SocketAddr,
    /// Its gamedir.
    pub gamedir: String,
    /// Who to reach (never published).
    pub contact: String,
    /// The source network that asked.
    pub from: String,
    /// When it was admitted.
    pub since: i64,
    /// `ip` or `gs`, from how it answered.
    pub directive: Directive,
    /// `proof` or the approving admin's name.
    pub admitted_by: String,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A field is wrong (the text says which and why).
    Invalid(String),
    /// The address is registered, listed or pending already.
    Exists(String),
    /// The address is banned.
    Banned(String),
    /// The source network asked too often, or a table is full; retry after.
    TooMany(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Invalid(s) | Refused::Exists(s) | Refused::Banned(s) | Refused::TooMany(s) => {
                f.write_str(s)
            }
        }
    }
}

/// The network a request counts against: an IPv4 /24 or an IPv6 /48.
pub fn source_network(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.0/24", o[0], o[1], o[2])
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}::/48", s[0], s[1], s[2])
        }
    }
}

fn routable(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || v4.octets()[0] == 0
                || (v4.octets()[0] == 100 && v4.octets()[1] & 0xc0 == 64))
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || s[0] == 0x2001 && s[1] == 0xdb8)
        }
    }
}

/// The pending and registered servers, and the hourly counts per source network.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registrations {
    /// Waiting for proof, by token.
    pub pending: BTreeMap<String, Pending>,
    /// Admitted, by (gamedir, address).
    pub registered: BTreeMap<String, Registered>,
    #[serde(skip)]
    hourly: HashMap<String, (i64, u32)>,
}

fn reg_key(gamedir: &str, a: SocketAddr) -> String {
    format!("{gamedir} {a}")
}

impl Registrations {
    /// Opens a pending entry for `address` in `gamedir`, asked from `from` at `now`;
    /// `token_bytes` are fresh random bytes for its token. `elsewhere` refuses an
    /// address the caller knows (listed from another source: `Exists`; banned:
    /// `Banned`).
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        limits: &Limits,
        from: IpAddr,
        address: &str,
        gamedir: &str,
        contact: &str,
        elsewhere: impl Fn(&str, SocketAddr) -> Option<Refused>,
        now: i64,
        token_bytes: [u8; 12],
    ) -> Result<&Pending, Refused> {
        let net = source_network(from);
        self.count_request(limits, &net, now)?;
        let address: SocketAddr = address.trim().parse().map_err(|_| {
            Refused::Invalid(format!(
                "address {address:?}: expected IP:PORT (numeric; IPv6 as [ADDR]:PORT)"
            ))
        })?;
        let address = SocketAddr::new(address.ip().to_canonical(), address.port());
        if address.port() == 0 {
            return Err(Refused::Invalid("address: port 0".into()));
        }
        if !limits.allow_private && !routable(address.ip()) {
            return Err(Refused::Invalid(format!(
                "address {address}: not a public address"
            )));
        }
        if crate::curated::gamedir_of(&format!("{gamedir}.toml")).is_none() {
            return Err(Refused::Invalid(format!(
                "gamedir {gamedir:?}: letters, digits, _ - . only, at most 63"
            )));
        }
        let contact = contact.trim();
        if contact.is_empty()
            || contact.chars().count() > MAX_CONTACT
            || contact.chars().any(char::is_control)
        {
            return Err(Refused::Invalid(format!(
                "contact: 1 to {MAX_CONTACT} characters, no control characters"
            )));
        }
        if let Some(r) = elsewhere(gamedir, address) {
            return Err(r);
        }
        if self.registered.contains_key(&reg_key(gamedir, address)) {
            return Err(Refused::Exists(format!(
                "{address} is listed for {gamedir} already"
            )));
        }
        // One token per asking network: a second network asking for the same
        // address gets its own (the check is shared), so asking first holds
        // nothing against the address's owner.
        if let Some(p) = self
            .pending
            .values()
            .find(|p| p.address == address && p.gamedir == gamedir && p.from == net)
        {
            return Err(Refused::Exists(format!(
                "a registration of {address} for {gamedir} from {net} is pending until {}",
                p.expires
            )));
        }
        let here = self.pending.values().filter(|p| p.address == address);
        if let Some(end) = here.clone().map(|p| p.expires).min() {
            if here.count() >= limits.pending_per_address {
                return Err(Refused::TooMany(format!(
                    "{address} has {} registrations pending; retry after {end}",
                    limits.pending_per_address
                )));
            }
        }
        let mut on_ip: Vec<SocketAddr> = self
            .pending
            .values()
            .filter(|p| p.address.ip() == address.ip())
            .map(|p| p.address)
            .collect();
        on_ip.sort_unstable();
        on_ip.dedup();
        if !on_ip.contains(&address) && on_ip.len() >= limits.pending_per_target {
            return Err(Refused::TooMany(format!(
                "{} has {} addresses pending; retry in a few minutes",
                address.ip(),
                limits.pending_per_target
            )));
        }
        if self.pending.len() >= limits.max_pending {
            return Err(Refused::TooMany(
                "too many registrations pending; retry in a few minutes".into(),
            ));
        }
        let pending_here = self.pending.values().filter(|p| p.from == net).count();
        if pending_here >= limits.pending_per_source {
            return Err(Refused::TooMany(format!(
                "{net} has {} registrations pending; retry when they end",
                limits.pending_per_source
            )));
        }
        // A pending entry holds its place among the registered, so proofs arriving
        // together never take the list past its caps.
        if self.registered.len() + self.pending.len() >= limits.max_registered
            || self.registered.values().filter(|r| r.from == net).count() + pending_here
                >= limits.registered_per_source
        {
            return Err(Refused::TooMany(
                "no more registrations are taken from this network".into(),
            ));
        }
        let token = format!(
            "lobby-{}",
            token_bytes
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let p = Pending {
            token: token.clone(),
            address,
            gamedir: gamedir.to_string(),
            contact: contact.to_string(),
            from: net,
            created: now,
            expires: now + TOKEN_TTL,
            checks: 0,
            last_check: None,
            last_result: "not checked yet".into(),
        };
        Ok(self.pending.entry(token).or_insert(p))
    }

    fn count_request(&mut self, limits: &Limits, net: &str, now: i64) -> Result<(), Refused> {
        if !self.hourly.contains_key(net) && self.hourly.len() >= limits.max_tracked_sources {
            self.hourly.retain(|_, (start, _)| now - *start < 3600);
            if self.hourly.len() >= limits.max_tracked_sources {
                return Err(Refused::TooMany(
                    "too many registrations this hour; retry later".into(),
                ));
            }
        }
        let (start, n) = self.hourly.entry(net.to_string()).or_insert((now, 0));
        if now - *start >= 3600 {
            *start = now;
            *n = 0;
        }
        *n += 1;
        if *n > limits.requests_per_hour {
            return Err(Refused::TooMany(format!(
                "{net} asked {} times this hour; retry after {}",
                limits.requests_per_hour,
                *start + 3600
            )));
        }
        Ok(())
    }

    /// Drops expired pending entries; returns them (for the log).
    pub fn expire(&mut self, now: i64) -> Vec<Pending> {
        let gone: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.expires <= now)
            .map(|(t, _)| t.clone())
            .collect();
        gone.iter().filter_map(|t| self.pending.remove(t)).collect()
    }

    /// Addresses due for a check at `now` (at most `max`), each with the tokens of
    /// every pending entry naming it, all marked as checked: an address is asked
    /// once every [`CHECK_EVERY`] s however many registrations name it.
    pub fn due(&mut self, now: i64, max: usize) -> Vec<(SocketAddr, Vec<String>)> {
        let mut last: HashMap<SocketAddr, i64> = HashMap::new();
        for p in self.pending.values() {
            if let Some(t) = p.last_check {
                let l = last.entry(p.address).or_insert(t);
                *l = (*l).max(t);
            }
        }
        let mut out: Vec<(SocketAddr, Vec<String>)> = Vec::new();
        for p in self.pending.values_mut() {
            if p.expires <= now {
                continue;
            }
            let i = match out.iter().position(|(a, _)| *a == p.address) {
                Some(i) => i,
                None if out.len() < max
                    && last.get(&p.address).is_none_or(|t| now - t >= CHECK_EVERY) =>
                {
                    out.push((p.address, Vec::new()));
                    out.len() - 1
                }
                None => continue,
            };
            p.last_check = Some(now);
            p.checks += 1;
            out[i].1.push(p.token.clone());
        }
        out
    }

    /// A check of `token` found `info` (its host name and gamedir, if it answered)
    /// and `rules` (if it answered them): admitted when either shows the token and
    /// the server plays the gamedir asked for. `directive` is what it answered as.
    /// Returns the registration when admitted.
    pub fn check(
        &mut self,
        token: &str,
        info: Option<(&str, &str)>,
        rules: Option<&[(String, String)]>,
        directive: Directive,
        now: i64,
    ) -> Option<Registered> {
        let p = self.pending.get_mut(token)?;
        let name = info.map(|(n, _)| n);
        let in_name = name.is_some_and(|n| n.contains(token));
        let in_rules = rules.is_some_and(|r| r.iter().any(|(_, v)| v.contains(token)));
        if let Some((_, g)) = info.filter(|(_, g)| !g.eq_ignore_ascii_case(&p.gamedir)) {
            p.last_result = format!(
                "answered as gamedir {:?}, registered for {:?}",
                g.chars().take(64).collect::<String>(),
                p.gamedir
            );
            return None;
        }
        if !(in_name || in_rules) {
            p.last_result = match (name, rules) {
                (None, _) => "no answer".into(),
                (Some(_), None) => {
                    "answered, but the token is not in its host name and it sent no rules".into()
                }
                (Some(_), Some(_)) => {
                    "answered, but the token is in neither its host name nor its rules".into()
                }
            };
            return None;
        }
        let p = self.pending.remove(token)?;
        Some(self.admit(p, directive, "proof", now))
    }

    /// Admits `p`; the other pending entries of its gamedir and address end (their
    /// requests would now be refused as listed).
    fn admit(&mut self, p: Pending, directive: Directive, by: &str, now: i64) -> Registered {
        self.pending
            .retain(|_, q| !(q.address == p.address && q.gamedir == p.gamedir));
        let r = Registered {
            address: p.address,
            gamedir: p.gamedir,
            contact: p.contact,
            from: p.from,
            since: now,
            directive,
            admitted_by: by.to_string(),
        };
        self.registered
            .insert(reg_key(&r.gamedir, r.address), r.clone());
        r
    }

    /// An operator admits `token` without proof.
    pub fn approve(&mut self, token: &str, by: &str, now: i64) -> Option<Registered> {
        let p = self.pending.remove(token)?;
        Some(self.admit(p, Directive::Ip, by, now))
    }

    /// Removes every registration (pending or admitted) of `address`; returns how many.
    pub fn remove(&mut self, address: SocketAddr) -> usize {
        let before = self.pending.len() + self.registered.len();
        self.pending.retain(|_, p| p.address != address);
        self.registered.retain(|_, r| r.address != address);
        before - self.pending.len() - self.registered.len()
    }

    /// The admitted servers as (gamedir, address, directive), for the catalog.
    pub fn listed(&self) -> Vec<(String, SocketAddr, Directive)> {
        self.registered
            .values()
            .map(|r| (r.gamedir.clone(), r.address, r.directive))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lim() -> Limits {
        Limits {
            allow_private: false,
            ..Limits::default()
        }
    }

    const FROM: &str = "198.51.100.7";
    const SERVER: &str = "203.0.113.9:27015";

    /// Fresh token bytes for each request.
    fn bytes() -> [u8; 12] {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut b = [0u8; 12];
        b[..8].copy_from_slice(&n.to_be_bytes());
        b
    }

    fn ask(r: &mut Registrations, from: &str, addr: &str, now: i64) -> Result<String, Refused> {
        r.request(
            &lim(),
            from.parse().unwrap(),
            addr,
            "valve",
            "ops@example.org",
            |_, _| None,
            now,
            bytes(),
        )
        .map(|p| p.token.clone())
    }

    #[test]
    fn a_server_showing_its_token_is_admitted_and_others_are_not() {
        let mut r = Registrations::default();
        // Documentation ranges are not public: allow them here as a LAN would.
        let l = Limits {
            allow_private: true,
            ..lim()
        };
        let t = r
            .request(
                &l,
                FROM.parse().unwrap(),
                SERVER,
                "valve",
                "ops@example.org",
                |_, _| None,
                100,
                [0xab; 12],
            )
            .unwrap()
            .token
            .clone();
        assert_eq!(t, format!("lobby-{}", "ab".repeat(12)));
        assert_eq!(
            r.due(100, 10),
            vec![(SERVER.parse().unwrap(), vec![t.clone()])]
        );
        assert!(r.due(101, 10).is_empty(), "not again before CHECK_EVERY");
        assert!(r
            .check(
                &t,
                Some(("My Server", "valve")),
                Some(&[("sv_contact".into(), "me".into())]),
                Directive::Ip,
                101
            )
            .is_none());
        assert!(r.pending[&t].last_result.contains("neither"));
        let rules = vec![("lobby_token".to_string(), t.clone())];
        let reg = r
            .check(
                &t,
                Some(("My Server", "VALVE")),
                Some(&rules),
                Directive::Gs,
                120,
            )
            .unwrap();
        assert_eq!(
            (reg.directive, reg.admitted_by.as_str(), reg.since),
            (Directive::Gs, "proof", 120)
        );
        assert!(r.pending.is_empty());
        assert_eq!(
            r.listed(),
            vec![("valve".into(), SERVER.parse().unwrap(), Directive::Gs)]
        );
        // Listed already: refused.
        let e = r
            .request(
                &l,
                FROM.parse().unwrap(),
                SERVER,
                "valve",
                "x",
                |_, _| None,
                130,
                [1; 12],
            )
            .unwrap_err();
        assert!(matches!(e, Refused::Exists(_)));
        assert_eq!(r.remove(SERVER.parse().unwrap()), 1);
    }

    #[test]
    fn bad_requests_are_refused_naming_the_field() {
        let mut r = Registrations::default();
        for (addr, what) in [
            ("example.org:27015", "address"),
            ("127.0.0.1:27015", "public"),
            ("10.1.2.3:27015", "public"),
            ("[fe80::1]:27015", "public"),
            ("8.8.8.8:0", "port 0"),
        ] {
            let e = ask(&mut r, &format!("198.51.{}.1", what.len()), addr, 0).unwrap_err();
            assert!(e.to_string().contains(what), "{addr}: {e}");
        }
        let e = r
            .request(
                &lim(),
                FROM.parse().unwrap(),
                "8.8.8.8:27015",
                "../etc",
                "x",
                |_, _| None,
                0,
                [0; 12],
            )
            .unwrap_err();
        assert!(e.to_string().contains("gamedir"));
        let e = r
            .request(
                &lim(),
                FROM.parse().unwrap(),
                "8.8.8.8:27015",
                "valve",
                "a\nb",
                |_, _| None,
                0,
                [0; 12],
            )
            .unwrap_err();
        assert!(e.to_string().contains("contact"));
    }

    #[test]
    fn one_network_is_bounded() {
        let mut r = Registrations::default();
        let mut ok = 0;
        for i in 0..40u32 {
            // Different hosts of one /24, different servers.
            let from = format!("198.51.100.{}", i % 250);
            if ask(
                &mut r,
                &from,
                &format!("8.8.{}.{}:27015", i / 250, i % 250),
                0,
            )
            .is_ok()
            {
                ok += 1;
            }
        }
        assert_eq!(ok, lim().pending_per_source, "pending per /24");
        // The hour's budget: 12 requests in all, refused ones included.
        let e = ask(&mut r, "198.51.100.1", "8.8.9.9:27015", 10).unwrap_err();
        assert!(e.to_string().contains("this hour"), "{e}");
        // Another network is not affected; an hour later the first may ask again.
        assert!(ask(&mut r, "192.0.2.1", "8.8.9.9:27015", 10).is_ok());
        r.expire(10 + TOKEN_TTL);
        assert!(ask(&mut r, "198.51.100.1", "8.8.9.10:27015", 3700).is_ok());
        // IPv6: one /48 is one network.
        let mut v6 = Registrations::default();
        let n = (0..10u16)
            .filter(|i| {
                ask(
                    &mut v6,
                    &format!("2001:db8:1:{i:x}::1"),
                    &format!("8.8.8.{i}:27015"),
                    0,
                )
                .is_ok()
            })
            .count();
        assert_eq!(n, lim().pending_per_source);
    }

    #[test]
    fn registered_servers_are_capped_per_asking_network_and_in_all() {
        let approve_all = |r: &mut Registrations| {
            let tokens: Vec<String> = r.pending.keys().cloned().collect();
            for t in tokens {
                assert!(r.approve(&t, "admin", 0).is_some());
            }
        };
        // One /24: 16 servers, whatever its hosts, pending ones included.
        let mut r = Registrations::default();
        let mut n = 0u32;
        let mut next = |r: &mut Registrations, from: &str, now| {
            n += 1;
            ask(r, from, &format!("8.8.{}.{}:27015", n / 250, n % 250), now)
        };
        for _ in 0..3 {
            for h in 1..=4 {
                next(&mut r, &format!("198.51.100.{h}"), 0).unwrap();
            }
            approve_all(&mut r);
        }
        assert_eq!(r.registered.len(), 12);
        // The next hour: three more make 15, one pending makes 16, and the 17th is
        // refused while that one is still pending.
        for h in 1..=3 {
            next(&mut r, &format!("198.51.100.{h}"), 3600).unwrap();
        }
        approve_all(&mut r);
        next(&mut r, "198.51.100.4", 3600).unwrap();
        let e = next(&mut r, "198.51.100.9", 3600).unwrap_err();
        assert!(e.to_string().contains("no more registrations"), "{e}");
        approve_all(&mut r);
        assert_eq!(r.registered.len(), lim().registered_per_source);
        let e = next(&mut r, "198.51.100.9", 3600).unwrap_err();
        assert!(e.to_string().contains("no more registrations"), "{e}");
        assert!(next(&mut r, "192.0.2.1", 3600).is_ok(), "another network");
        // In all (the default is 10,000; 20 here): pending entries count too.
        assert_eq!(Limits::default().max_registered, 10_000);
        let l = Limits {
            max_registered: 20,
            ..lim()
        };
        let mut r = Registrations::default();
        let from_net = |r: &mut Registrations, i: u32| {
            r.request(
                &l,
                IpAddr::from([198, 18, i as u8, 1]),
                &format!("8.8.8.{i}:27015"),
                "valve",
                "ops@example.org",
                |_, _| None,
                0,
                bytes(),
            )
            .map(|_| ())
        };
        for i in 0..19 {
            from_net(&mut r, i).unwrap();
            approve_all(&mut r);
        }
        from_net(&mut r, 19).unwrap();
        let e = from_net(&mut r, 20).unwrap_err();
        assert!(e.to_string().contains("no more registrations"), "{e}");
        approve_all(&mut r);
        assert_eq!(r.registered.len(), 20);
        assert!(from_net(&mut r, 21).is_err());
        assert_eq!(r.registered.len() + r.pending.len(), 20);
    }

    #[test]
    fn tokens_expire() {
        let mut r = Registrations::default();
        let t = ask(&mut r, FROM, "8.8.8.8:27015", 0).unwrap();
        assert!(r.expire(TOKEN_TTL - 1).is_empty());
        assert_eq!(r.expire(TOKEN_TTL).len(), 1);
        assert!(r
            .check(&t, Some((&t, "valve")), None, Directive::Ip, TOKEN_TTL)
            .is_none());
        assert!(r.approve(&t, "admin", 0).is_none());
    }

    /// Issue 30: one address named from many networks and in many gamedirs gets its
    /// own token per network up to the cap, and is asked once every CHECK_EVERY
    /// however many name it; nothing is asked once the last token has expired.
    #[test]
    fn an_address_named_from_many_networks_is_checked_once_per_interval() {
        let mut r = Registrations::default();
        let victim: SocketAddr = "8.8.8.8:27015".parse().unwrap();
        let mut tokens = Vec::new();
        let mut answers = Vec::new();
        let mut checks = Vec::new();
        // Every 5 s (the loop's tick) from 0 to well past the last expiry. In the
        // first ten ticks a network asks, each in another gamedir: before the checks
        // were shared, each entry kept its own 15 s phase and the address was asked
        // at every tick.
        for tick in 0..=(TOKEN_TTL / 5 + 20) {
            let now = tick * 5;
            if let Some(i) = u8::try_from(tick).ok().filter(|&i| i < 10) {
                let g = ["valve", "cstrike", "tfc", "dmc", "ricochet"][usize::from(i % 5)];
                let res = r
                    .request(
                        &lim(),
                        IpAddr::from([198, 18, i, 1]),
                        &victim.to_string(),
                        g,
                        "x",
                        |_, _| None,
                        now,
                        bytes(),
                    )
                    .map(|p| p.token.clone());
                if let Ok(t) = &res {
                    tokens.push(t.clone());
                }
                answers.push(res.map_err(|e| e.to_string()));
            }
            if tick == 10 {
                // The same network again, same gamedir: 409.
                let e = ask(&mut r, "198.18.0.1", &victim.to_string(), now).unwrap_err();
                assert!(matches!(e, Refused::Exists(_)), "{e}");
            }
            r.expire(now);
            for (a, t) in r.due(now, 32) {
                assert_eq!(a, victim);
                assert!(t.iter().all(|t| tokens.contains(t)));
                checks.push(now);
            }
        }
        assert_eq!(tokens.len(), lim().pending_per_address, "{answers:?}");
        let mut unique = tokens.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tokens.len(), "a token per network");
        assert!(
            answers[4]
                .as_ref()
                .unwrap_err()
                .contains("4 registrations pending"),
            "{answers:?}"
        );
        for w in checks.windows(2) {
            assert!(w[1] - w[0] >= CHECK_EVERY, "asked at {w:?}: {checks:?}");
        }
        // The last token was asked for at 15 s and expires at 615 s.
        let last = 15 + TOKEN_TTL;
        assert!(checks.iter().all(|&t| t < last), "{checks:?}");
        assert!(
            checks.len() as i64 <= last / CHECK_EVERY,
            "{}",
            checks.len()
        );
        assert!(r.pending.is_empty());
    }

    /// Issue 30: the ports of one IP hold at most `pending_per_target` pending
    /// addresses, whoever asks; another IP is not affected; an admission frees its place.
    #[test]
    fn the_ports_of_one_ip_are_bounded() {
        let mut r = Registrations::default();
        let mut ok = Vec::new();
        for i in 0..12u16 {
            let from = format!("198.18.{i}.1");
            match ask(&mut r, &from, &format!("8.8.4.4:{}", 27000 + i), 0) {
                Ok(t) => ok.push(t),
                Err(e) => assert!(e.to_string().contains("8 addresses pending"), "{e}"),
            }
        }
        assert_eq!(ok.len(), lim().pending_per_target);
        assert_eq!(r.due(0, 32).len(), 8, "eight checks of that IP at most");
        assert!(ask(&mut r, "198.18.99.1", "8.8.4.5:27000", 0).is_ok());
        // Another network may still ask for a port already pending.
        assert!(ask(&mut r, "198.18.98.1", "8.8.4.4:27000", 0).is_ok());
        // An admission ends the other entries of its address and gamedir.
        assert!(r.approve(&ok[0], "admin", 1).is_some());
        let first: SocketAddr = "8.8.4.4:27000".parse().unwrap();
        assert!(r.pending.values().all(|p| p.address != first));
        assert!(ask(&mut r, "198.18.97.1", "8.8.4.4:27100", 2).is_ok());
    }

    /// Issue 30: what admits is the token of the entry checked, shown by its own
    /// address, playing its gamedir; a guessed token, another entry's, or the right
    /// one from a server of another game admit nothing.
    #[test]
    fn only_the_own_token_in_the_own_gamedir_admits() {
        let l = Limits {
            allow_private: true,
            ..lim()
        };
        let mut r = Registrations::default();
        let mut take = |from: &str, addr: &str| {
            r.request(
                &l,
                from.parse().unwrap(),
                addr,
                "valve",
                "x",
                |_, _| None,
                0,
                rand::random(),
            )
            .unwrap()
            .token
            .clone()
        };
        let mine = take("198.18.1.1", "8.8.8.8:27015");
        let theirs = take("198.18.2.1", "8.8.8.9:27015");
        assert_ne!(mine, theirs);
        assert!(mine.len() == 30 && mine[6..].chars().all(|c| c.is_ascii_hexdigit()));
        let guess = format!("lobby-{}", "0".repeat(24));
        // The server at `mine` shows the other entry's token and a guess; the other
        // entry's address shows nothing: neither is admitted (each entry is checked
        // with what its own address answered).
        let shown = format!("{theirs} {guess}");
        let rules = [("sv_contact".to_string(), theirs.clone())];
        assert!(r
            .check(
                &mine,
                Some((&shown, "valve")),
                Some(&rules),
                Directive::Ip,
                1
            )
            .is_none());
        assert!(r
            .check(
                &theirs,
                Some(("Plain", "valve")),
                Some(&[]),
                Directive::Ip,
                1
            )
            .is_none());
        assert!(r.pending[&mine].last_result.contains("neither"));
        // Its own token, but a cstrike server: not in the valve list.
        let own = format!("srv {mine}");
        assert!(r
            .check(&mine, Some((&own, "cstrike")), None, Directive::Ip, 2)
            .is_none());
        assert!(
            r.pending[&mine].last_result.contains("cstrike"),
            "{:?}",
            r.pending[&mine]
        );
        assert!(r
            .check(&mine, Some((&own, "valve")), None, Directive::Ip, 3)
            .is_some());
        assert_eq!(r.pending.len(), 1);
    }

    proptest! {
        /// Any requests from anywhere: the tables stay within their caps.
        #[test]
        fn the_tables_stay_bounded(reqs in proptest::collection::vec((any::<u32>(), any::<u32>(), 0i64..10_000), 0..300)) {
            let mut r = Registrations::default();
            let l = Limits { max_pending: 50, max_tracked_sources: 20, ..lim() };
            for (from, to, t) in reqs {
                let from = IpAddr::from(from.to_be_bytes());
                let to = format!("{}:27015", std::net::Ipv4Addr::from(to));
                let _ = r.request(&l, from, &to, "valve", "c", |_, _| None, t, bytes());
                prop_assert!(r.pending.len() <= 50);
                prop_assert!(r.hourly.len() <= 20);
            }
        }
    }
}
