//! The server table: entries with expiry, exact per-source quotas, a global cap,
//! and a cache of encoded list pages that lives until the table changes.

use sansio::{Over, SourceQuota};
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;
use xash::filter::{Filter, ServerFacts, Version};
use xash::master::{Os, ServerAdd, ServerType};

/// What the master keeps about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Protocol.
    pub protocol: u8,
    /// Players without bots.
    pub players: u8,
    /// Maximum players.
    pub max: u8,
    /// Bots.
    pub bots: u8,
    /// Game directory.
    pub gamedir: Box<[u8]>,
    /// Map.
    pub map: Box<[u8]>,
    /// Dedicated/listen.
    pub server_type: ServerType,
    /// OS letter.
    pub os: Os,
    /// Engine version.
    pub version: Version,
    /// Region.
    pub region: u8,
    /// Filter flag bits.
    pub flags: u8,
}

impl Server {
    /// The stored form of a registration.
    pub fn from_add(a: &ServerAdd) -> Server {
        Server {
            protocol: a.protocol,
            players: a.players,
            max: a.max,
            bots: a.bots,
            gamedir: a.gamedir.clone().into_boxed_slice(),
            map: a.map.clone().into_boxed_slice(),
            server_type: a.server_type,
            os: a.os,
            version: a.version,
            region: a.region,
            flags: a.flags(),
        }
    }

    /// What filters look at.
    pub fn facts(&self) -> ServerFacts<'_> {
        ServerFacts {
            gamedir: &self.gamedir,
            map: &self.map,
            protocol: self.protocol,
            flags: self.flags,
            players: self.players,
            max: self.max,
        }
    }

    /// Behind NAT.
    pub fn nat(&self) -> bool {
        self.flags & xash::filter::flags::NAT != 0
    }
}

#[derive(Debug, Clone)]
struct Entry {
    server: Server,
    expires: Instant,
    /// When it was first registered.
    since: Instant,
    /// When its last accepted heartbeat (info reply) arrived.
    heartbeat: Instant,
}

/// One listed server with its times, for readers outside the engine.
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a> {
    /// Its address.
    pub addr: SocketAddr,
    /// What it registered.
    pub server: &'a Server,
    /// When it is dropped unless it heartbeats again.
    pub expires: Instant,
    /// When it was first registered (across restarts, when the state file kept it).
    pub since: Instant,
    /// When its last registration or refresh was accepted.
    pub heartbeat: Instant,
}

/// Outcome of [`Table::register`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// A new entry.
    Added,
    /// An existing entry refreshed (and possibly changed).
    Refreshed,
    /// The source already has its quota of servers.
    QuotaSource,
    /// A network around the source (IPv6 /56 or /48, IPv4 /24) has its multiple of
    /// the per-source quota ([`sansio::quota`]).
    QuotaNetwork,
    /// The table is full.
    QuotaGlobal,
}

/// What a scan gets: encoded pages and the NAT servers to announce the client to.
#[derive(Debug)]
pub struct Selection {
    /// Server-list datagrams.
    pub pages: Vec<Arc<[u8]>>,
    /// The key the pages carry in their `0x7F` block (see [`Selection::page_for_key`]).
    pub key: Option<u32>,
    /// NAT servers in the result.
    pub nat_servers: Vec<SocketAddr>,
}

// The scan key is not part of the cache key: clients that send a fresh random key
// per request (engines from 2023 to 2026, xash3d-observer) still hit the cache; their
// pages are copied with the key patched (see `Selection::page_for_key`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    v6: bool,
    gamedir: Option<Box<[u8]>>,
    nat: Option<bool>,
    has_key: bool,
    region: u8,
}

/// Offset of the key in a page with a key block (after `FF FF FF FF f \n 7F`).
const KEY_OFFSET: usize = 7;

impl Selection {
    /// Page `i` for a scan carrying `key`: the cached bytes, to share, when the key
    /// matches; else the cached bytes with the key block to rewrite, which
    /// [`PageForKey::write_to`] copies into the caller's buffer (no allocation here).
    pub fn page_for_key(&self, i: usize, key: Option<u32>) -> PageForKey<'_> {
        let page = &self.pages[i];
        match (key, self.key) {
            (Some(k), Some(cached)) if k != cached && page.len() >= KEY_OFFSET + 4 => {
                PageForKey::Patched { page, key: k }
            }
            _ => PageForKey::Shared(page),
        }
    }
}

/// A list page as a scan with some key gets it (see [`Selection::page_for_key`]).
#[derive(Debug, Clone, Copy)]
pub enum PageForKey<'a> {
    /// The cached page carries the scan's key: send it as it is.
    Shared(&'a Arc<[u8]>),
    /// The cached page with `key` written into its key block.
    Patched {
        /// The cached page.
        page: &'a [u8],
        /// The scan's key.
        key: u32,
    },
}

impl PageForKey<'_> {
    /// The page's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            PageForKey::Shared(p) => p.len(),
            PageForKey::Patched { page, .. } => page.len(),
        }
    }

    /// Whether the page is empty (never, for pages the table encodes).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the page's bytes, key patched, to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match *self {
            PageForKey::Shared(p) => out.extend_from_slice(p),
            PageForKey::Patched { page, key } => {
                let start = out.len();
                out.extend_from_slice(page);
                out[start + KEY_OFFSET..start + KEY_OFFSET + 4].copy_from_slice(&key.to_le_bytes());
            }
        }
    }
}

/// Cached selections kept at most.
const CACHE_ENTRIES: usize = 256;

/// The table.
#[derive(Debug, Default)]
pub struct Table {
    // BTreeMap: a stable address order, so pages and "resume after" are deterministic.
    servers: BTreeMap<SocketAddr, Entry>,
    per_source: SourceQuota,
    cache: HashMap<CacheKey, Arc<Selection>>,
    version: u64,
}

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Servers held.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// A change counter: bumped whenever a server is added, removed or expired, or
    /// its listed facts change (a refresh with the same facts leaves it). Readers
    /// keep a copy of what they built from the table and rebuild only when it moved.
    pub fn version(&self) -> u64 {
        self.version
    }

    fn changed(&mut self) {
        self.cache.clear();
        self.version = self.version.wrapping_add(1);
    }

    /// Registers or refreshes `addr` at `now` until `expires`, enforcing the quotas
    /// exactly: at most `per_source` servers per IPv4 address / IPv6 /64 (and its
    /// multiples per IPv6 /56 and /48 and IPv4 /24: [`sansio::quota`]), `global` in
    /// all. A new entry is listed since `since` (`now`, or earlier for a server
    /// restored from the state file).
    #[allow(clippy::too_many_arguments)]
    pub fn register(
        &mut self,
        addr: SocketAddr,
        server: Server,
        now: Instant,
        since: Instant,
        expires: Instant,
        per_source: usize,
        global: usize,
    ) -> Registered {
        if let Some(e) = self.servers.get_mut(&addr) {
            e.expires = expires;
            e.heartbeat = now;
            if e.server != server {
                e.server = server;
                self.changed();
            }
            return Registered::Refreshed;
        }
        self.per_source.set_per_source(per_source);
        match self.per_source.check(addr.ip()) {
            Ok(()) => {}
            Err(Over::Source) => return Registered::QuotaSource,
            Err(Over::Network(_)) => return Registered::QuotaNetwork,
        }
        if self.servers.len() >= global {
            return Registered::QuotaGlobal;
        }
        self.servers.insert(
            addr,
            Entry {
                server,
                expires,
                since,
                heartbeat: now,
            },
        );
        self.per_source.add(addr.ip());
        self.changed();
        Registered::Added
    }

    /// Removes one server.
    pub fn remove(&mut self, addr: &SocketAddr) -> bool {
        if self.servers.remove(addr).is_none() {
            return false;
        }
        self.per_source.remove(addr.ip());
        self.changed();
        true
    }

    /// Removes every server whose IP is `ip`; returns how many.
    pub fn remove_ip(&mut self, ip: IpAddr) -> usize {
        let gone: Vec<SocketAddr> = self
            .servers
            .keys()
            .filter(|a| a.ip() == ip)
            .copied()
            .collect();
        gone.iter().filter(|a| self.remove(a)).count()
    }

    /// Removes every server whose IP is in `net`; returns how many.
    pub fn remove_net(&mut self, net: &ipnet::IpNet) -> usize {
        let gone: Vec<SocketAddr> = self
            .servers
            .keys()
            .filter(|a| net.contains(&a.ip()))
            .copied()
            .collect();
        gone.iter().filter(|a| self.remove(a)).count()
    }

    /// Drops entries that expired by `now`; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let gone: Vec<SocketAddr> = self
            .servers
            .iter()
            .filter(|(_, e)| e.expires <= now)
            .map(|(a, _)| *a)
            .collect();
        gone.iter().filter(|a| self.remove(a)).count()
    }

    /// The earliest expiry.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.servers.values().map(|e| e.expires).min()
    }

    /// Every entry: address, server, expiry.
    pub fn iter(&self) -> impl Iterator<Item = (SocketAddr, &Server, Instant)> {
        self.servers.iter().map(|(a, e)| (*a, &e.server, e.expires))
    }

    /// Every entry with its times, in address order.
    pub fn listed(&self) -> impl Iterator<Item = Listed<'_>> {
        self.servers.iter().map(|(a, e)| Listed {
            addr: *a,
            server: &e.server,
            expires: e.expires,
            since: e.since,
            heartbeat: e.heartbeat,
        })
    }

    /// One entry.
    pub fn get(&self, addr: &SocketAddr) -> Option<&Server> {
        self.servers.get(addr).map(|e| &e.server)
    }

    fn matching<'a>(
        &'a self,
        v6: bool,
        filter: &'a Filter,
        region: u8,
    ) -> impl Iterator<Item = (SocketAddr, &'a Server)> + 'a {
        self.servers
            .iter()
            .filter(move |(a, e)| {
                a.is_ipv6() == v6 && e.server.region == region && filter.matches(&e.server.facts())
            })
            .map(|(a, e)| (*a, &e.server))
    }

    /// Up to `limit` servers of family `v6` passing `filter`, in address order, after
    /// `resume`; the bool says whether more follow.
    pub fn select_addrs(
        &self,
        v6: bool,
        filter: &Filter,
        region: u8,
        resume: Option<SocketAddr>,
        limit: usize,
    ) -> (Vec<SocketAddr>, bool) {
        let mut it = self
            .matching(v6, filter, region)
            .map(|(a, _)| a)
            .filter(|a| resume.is_none_or(|r| *a > r));
        let page: Vec<SocketAddr> = it.by_ref().take(limit).collect();
        let more = it.next().is_some();
        (page, more)
    }

    /// The servers of family `v6` passing `filter`, as encoded pages of at most
    /// `page_size` bytes, starting after `resume` when given. Selections for common
    /// filters (gamedir, nat, key) are cached until the table changes; the bool says
    /// whether this one came from the cache.
    pub fn select(
        &mut self,
        v6: bool,
        filter: &Filter,
        region: u8,
        page_size: usize,
        resume: Option<SocketAddr>,
    ) -> (Arc<Selection>, bool) {
        let key = (filter.is_simple() && resume.is_none()).then(|| CacheKey {
            v6,
            gamedir: filter.gamedir.clone().map(Vec::into_boxed_slice),
            nat: filter.nat(),
            has_key: filter.key.is_some(),
            region,
        });
        if let Some(k) = &key {
            if let Some(s) = self.cache.get(k) {
                return (s.clone(), true);
            }
        }
        let mut addrs = Vec::new();
        let mut nat_servers = Vec::new();
        for (a, s) in self.matching(v6, filter, region) {
            if resume.is_some_and(|r| a <= r) {
                continue;
            }
            addrs.push(a);
            if s.nat() {
                nat_servers.push(a);
            }
        }
        let pages = xash::master::encode_pages(filter.key, &addrs, v6, page_size)
            .into_iter()
            .map(Arc::from)
            .collect();
        let sel = Arc::new(Selection {
            pages,
            key: filter.key,
            nat_servers,
        });
        if let Some(k) = key {
            if self.cache.len() >= CACHE_ENTRIES {
                self.cache.clear();
            }
            self.cache.insert(k, sel.clone());
        }
        (sel, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use xash::info::InfoString;

    fn server(gamedir: &str) -> Server {
        let info = InfoString::new()
            .with("challenge", "1")
            .unwrap()
            .with("gamedir", gamedir)
            .unwrap()
            .with("version", "0.21")
            .unwrap()
            .with("region", "255")
            .unwrap();
        Server::from_add(&ServerAdd::from_info(&info).unwrap())
    }

    #[test]
    fn quotas_are_exact() {
        let mut t = Table::new();
        let exp = Instant::now() + Duration::from_secs(60);
        for port in 0..14u16 {
            let a = SocketAddr::from(([127, 0, 2, 1], 27000 + port));
            assert_eq!(
                t.register(a, server("valve"), exp, exp, exp, 14, 100),
                Registered::Added
            );
        }
        let a = SocketAddr::from(([127, 0, 2, 1], 28000));
        assert_eq!(
            t.register(a, server("valve"), exp, exp, exp, 14, 100),
            Registered::QuotaSource,
            "the 15th"
        );
        // IPv6: per /64.
        let mut t = Table::new();
        let a: SocketAddr = "[2001:db8::1]:1".parse().unwrap();
        let b: SocketAddr = "[2001:db8::2]:1".parse().unwrap();
        let c: SocketAddr = "[2001:db8:0:1::1]:1".parse().unwrap();
        assert_eq!(
            t.register(a, server("valve"), exp, exp, exp, 1, 100),
            Registered::Added
        );
        assert_eq!(
            t.register(b, server("valve"), exp, exp, exp, 1, 100),
            Registered::QuotaSource
        );
        assert_eq!(
            t.register(c, server("valve"), exp, exp, exp, 1, 100),
            Registered::Added
        );
        assert_eq!(
            t.register(a, server("cstrike"), exp, exp, exp, 1, 100),
            Registered::Refreshed
        );
        // Global cap.
        let d: SocketAddr = "[2001:db8:0:2::1]:1".parse().unwrap();
        assert_eq!(
            t.register(d, server("valve"), exp, exp, exp, 1, 2),
            Registered::QuotaGlobal
        );
        // Removing frees the quota.
        assert!(t.remove(&b) || t.remove(&a));
        assert_eq!(
            t.register(b, server("valve"), exp, exp, exp, 1, 100),
            Registered::Added
        );
    }

    #[test]
    fn the_selection_cache_holds_256_filters_and_is_cleared_when_full() {
        let mut t = Table::new();
        let filter = |i: usize| Filter {
            gamedir: Some(format!("mod{i}").into_bytes()),
            key: Some(1),
            ..Filter::default()
        };
        for i in 0..CACHE_ENTRIES {
            assert!(!t.select(false, &filter(i), 255, 1400, None).1);
        }
        assert_eq!(t.cache.len(), 256);
        assert!(
            t.select(false, &filter(0), 255, 1400, None).1,
            "all 256 held"
        );
        assert!(t.select(false, &filter(255), 255, 1400, None).1);
        // The 257th filter clears the cache and is the only one held.
        assert!(!t.select(false, &filter(256), 255, 1400, None).1);
        assert_eq!(t.cache.len(), 1);
        assert!(!t.select(false, &filter(0), 255, 1400, None).1, "cleared");
        assert!(t.select(false, &filter(256), 255, 1400, None).1);
    }

    #[test]
    fn cache_is_reused_until_the_table_changes() {
        let mut t = Table::new();
        let now = Instant::now();
        let exp = now + Duration::from_secs(60);
        t.register(
            "10.0.0.1:1".parse().unwrap(),
            server("valve"),
            exp,
            exp,
            exp,
            10,
            100,
        );
        let f = Filter {
            gamedir: Some(b"valve".to_vec()),
            key: Some(1),
            ..Filter::default()
        };
        let (a, cached) = t.select(false, &f, 255, 1400, None);
        assert!(!cached);
        let (b, cached) = t.select(false, &f, 255, 1400, None);
        assert!(cached && Arc::ptr_eq(&a, &b));
        // Another key hits the same cache entry; the page is patched, not re-encoded.
        let other = Filter {
            key: Some(0xdead_beef),
            ..f.clone()
        };
        let (c, cached) = t.select(false, &other, 255, 1400, None);
        assert!(cached && Arc::ptr_eq(&a, &c));
        let p = c.page_for_key(0, Some(0xdead_beef));
        assert!(matches!(p, PageForKey::Patched { .. }), "expected a copy");
        let mut patched = Vec::new();
        p.write_to(&mut patched);
        assert_eq!(patched.len(), p.len());
        let d = xash::master::ServerListPage::decode(&patched, false, true).unwrap();
        assert_eq!(d.key, Some(0xdead_beef));
        assert_eq!(d.servers.len(), 1);
        assert!(
            matches!(c.page_for_key(0, Some(1)), PageForKey::Shared(_)),
            "same key: the shared page"
        );
        // A refresh with identical content keeps the cache.
        t.register(
            "10.0.0.1:1".parse().unwrap(),
            server("valve"),
            exp,
            exp,
            exp,
            10,
            100,
        );
        assert!(t.select(false, &f, 255, 1400, None).1);
        t.register(
            "10.0.0.2:1".parse().unwrap(),
            server("valve"),
            exp,
            exp,
            exp,
            10,
            100,
        );
        let (c, cached) = t.select(false, &f, 255, 1400, None);
        assert!(!cached);
        assert_eq!(c.pages[0].len(), 6 + 6 + 2 * 6 + 6);
        assert_eq!(t.expire(now + Duration::from_secs(61)), 2);
        assert!(t.is_empty());
    }

    #[test]
    fn version_moves_exactly_when_the_listed_facts_change() {
        let mut t = Table::new();
        let now = Instant::now();
        let exp = now + Duration::from_secs(60);
        let a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let v0 = t.version();
        assert_eq!(
            t.register(a, server("valve"), exp, exp, exp, 10, 100),
            Registered::Added
        );
        let v1 = t.version();
        assert_ne!(v1, v0, "added");
        t.register(
            a,
            server("valve"),
            exp + Duration::from_secs(1),
            exp + Duration::from_secs(1),
            exp + Duration::from_secs(1),
            10,
            100,
        );
        assert_eq!(t.version(), v1, "a refresh with the same facts");
        t.register(a, server("cstrike"), exp, exp, exp, 10, 100);
        let v2 = t.version();
        assert_ne!(v2, v1, "facts changed");
        t.register(
            "10.0.0.1:2".parse().unwrap(),
            server("valve"),
            exp,
            exp,
            exp,
            1,
            100,
        );
        assert_eq!(t.version(), v2, "refused by the quota");
        t.select(false, &Filter::default(), 255, 1400, None);
        assert_eq!(t.version(), v2, "a scan");
        assert!(!t.remove(&"10.0.0.9:1".parse().unwrap()));
        assert_eq!(t.version(), v2, "nothing removed");
        assert_eq!(t.expire(now), 0);
        assert_eq!(t.version(), v2, "nothing expired");
        assert_eq!(t.expire(exp), 1);
        let v3 = t.version();
        assert_ne!(v3, v2, "expired");
        t.register(a, server("valve"), exp, exp, exp, 10, 100);
        assert!(t.remove(&a));
        assert_ne!(t.version(), v3, "removed");
    }
}
