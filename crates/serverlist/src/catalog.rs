//! The catalog: every server the list knows from its curated sources, with what
//! probes learnt about it, and the rule that decides what is published.
//!
//! Entries are keyed by (gamedir, address as written in the source), as probe.py's
//! `state.json` is, so either can read the other's state. Pure: the caller passes the
//! wall-clock time (`now`, Unix seconds) and resolves host names.
//!
//! Rules (probe.py's, applied continuously):
//! - published: answered within `grace` seconds, or `force = true`; never when it has
//!   never answered (unless forced) or is no longer in any source;
//! - an entry no longer in any source stays in the state (not probed, not published)
//!   until unseen for `prune_after` seconds, then is dropped; entries still in the
//!   sources are never dropped (the operator's files are never changed);
//! - players samples (the sum of the players of the servers that answered lately,
//!   per gamedir) are kept for six weeks.

use crate::curated::{CuratedServer, Protocol};
use crate::masterlist::Directive;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::net::SocketAddr;

/// Samples older than this are dropped (probe.py: six weeks).
pub const SAMPLE_RETAIN_SECS: i64 = 6 * 7 * 24 * 3600;
/// At most this many gamedirs have samples: gamedirs are named by whoever sends a
/// heartbeat, so without it each new name would start a series kept six weeks. The
/// curated gamedirs always keep theirs; past the cap a new name takes the place of
/// the uncurated series sampled least recently (fewest players on a tie), or gets
/// none.
pub const MAX_SAMPLED_GAMEDIRS: usize = 128;

/// At most this many samples per gamedir (one every ten minutes for six weeks).
pub const MAX_SAMPLES_PER_GAMEDIR: usize = 6 * 7 * 24 * 6;
/// At most this many entries in all: sources beyond it are refused whole.
pub const MAX_ENTRIES: usize = 100_000;

/// Why [`Catalog::set_curated`] refused the sources: they list more servers (this
/// many) than [`MAX_ENTRIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the sources list {0} servers; at most {MAX_ENTRIES} are read")]
pub struct TooManyServers(pub usize);

/// Where an entry came from (a set: an address in the sources that also sends
/// heartbeats has both).
pub mod source {
    /// A curated `<gamedir>.toml` lists it.
    pub const CURATED: u8 = 1;
    /// It registers with the master by UDP heartbeats (challenge-proven).
    pub const HEARTBEAT: u8 = 2;
    /// It registered over HTTP and proved control of the address.
    pub const REGISTERED: u8 = 4;

    /// The bit of a source's name (0 for a name not known).
    pub fn bit(name: &str) -> u8 {
        match name {
            "curated" => CURATED,
            "heartbeat" => HEARTBEAT,
            "registered" => REGISTERED,
            _ => 0,
        }
    }

    /// The names of the sources in `bits`, for JSON.
    pub fn names(bits: u8) -> Vec<&'static str> {
        [
            (CURATED, "curated"),
            (HEARTBEAT, "heartbeat"),
            (REGISTERED, "registered"),
        ]
        .into_iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| n)
        .collect()
    }
}

/// What the last answer said.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ProbeInfo {
    /// Host name, colour codes as sent.
    pub name: String,
    /// Map.
    pub map: String,
    /// Game directory it reported.
    pub gamedir: String,
    /// Players (bots included on A2S).
    pub players: u32,
    /// Maximum players.
    pub max: u32,
    /// Bots.
    pub bots: u32,
    /// Version string, when reported.
    pub version: String,
    /// Password protected.
    pub password: bool,
    /// Protocol it answered with.
    pub protocol: u32,
}

/// One known server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    /// What it is published as (`ip` or `gs`): the source's protocol, not the
    /// responder's (probe.py's rule).
    pub directive: Option<Directive>,
    /// Published even while silent.
    pub force: bool,
    /// [`source`] bits; 0 = in no source any more (kept until pruned).
    pub sources: u8,
    /// The address it resolved to last (itself for a numeric address).
    pub resolved: Option<SocketAddr>,
    /// When it was last probed (Unix seconds).
    pub last_attempt: Option<i64>,
    /// When it last answered.
    pub last_seen: Option<i64>,
    /// When it first answered (lobby's own key; probe.py keeps none).
    pub first_seen: Option<i64>,
    /// The round trip of its last answer, µs (`last_ping_ms` in `state.json`, a
    /// number of ms with its fraction, as probe.py writes it).
    pub last_ping_us: Option<u32>,
    /// Its last answer.
    pub info: Option<ProbeInfo>,
}

impl Entry {
    fn published(&self, now: i64, grace: i64) -> bool {
        self.sources != 0
            && (self.force
                || self
                    .last_seen
                    .is_some_and(|s| now.saturating_sub(s) <= grace))
    }
}

/// The key of an entry: its gamedir and its address as the source wrote it.
pub type Key = (String, String);

/// What a server said at its last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// When, Unix seconds.
    pub at: i64,
    /// When it first answered.
    pub first_seen: i64,
    /// Round trip from the master, ms.
    pub ping_ms: u32,
    /// Its info.
    pub info: ProbeInfo,
}

/// One line of a published list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The gamedir whose list it is on.
    pub gamedir: String,
    /// The address written.
    pub addr: SocketAddr,
    /// `ip` or `gs`.
    pub directive: Directive,
    /// [`source`] bits of every entry merged into it.
    pub sources: u8,
    /// The latest answer of the entries merged into it, if any answered.
    pub answer: Option<Answer>,
}

/// Totals of one gamedir for `v1/gamedirs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GamedirCount {
    /// Entries of this gamedir in the sources.
    pub total: usize,
    /// Addresses published.
    pub live: usize,
}

/// Every known entry and the players samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: BTreeMap<Key, Entry>,
    /// Per gamedir: (Unix seconds, players summed over responding servers).
    samples: BTreeMap<String, Vec<(i64, u32)>>,
    /// Addresses per gamedir in the curated sources: an address written twice in
    /// one file counts once, as it is published once (probe.py counts, and writes,
    /// it twice).
    listed: BTreeMap<String, usize>,
    /// Bumped whenever anything published may have changed.
    version: u64,
    /// Bumped whenever an entry is added or removed or its address changes.
    structure: u64,
    /// Keys by resolved address, as of `structure` (rebuilt when it moved), so a
    /// probe's or a heartbeat's result costs the entries at its address only.
    by_addr: Option<(u64, HashMap<SocketAddr, Vec<Key>>)>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Changes whenever the published lists may have changed.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// All entries.
    pub fn entries(&self) -> impl Iterator<Item = (&Key, &Entry)> {
        self.entries.iter()
    }

    /// The entry of `gamedir` and `address`.
    pub fn get(&self, gamedir: &str, address: &str) -> Option<&Entry> {
        self.entries
            .get(&(gamedir.to_string(), address.to_string()))
    }

    /// The samples of every gamedir.
    pub fn samples(&self) -> &BTreeMap<String, Vec<(i64, u32)>> {
        &self.samples
    }

    /// Replaces the curated sources with `files` (gamedir → its servers): entries
    /// listed get the curated source, protocol and force flag; entries no longer
    /// listed lose them (and are kept until pruned). A numeric address is its own
    /// resolution; host names wait for [`Catalog::set_resolved`].
    /// Refused (the catalog unchanged) past [`MAX_ENTRIES`].
    pub fn set_curated(
        &mut self,
        files: &BTreeMap<String, Vec<CuratedServer>>,
    ) -> Result<(), TooManyServers> {
        let listed: usize = files.values().map(Vec::len).sum();
        if listed > MAX_ENTRIES {
            return Err(TooManyServers(listed));
        }
        let mut keep: HashSet<Key> = HashSet::new();
        for (gamedir, servers) in files {
            for s in servers {
                let key = (gamedir.clone(), s.address.clone());
                let e = self.entries.entry(key.clone()).or_default();
                // A duplicate within the sources: forced if any copy is, `gs` only
                // if every copy says so.
                let first = keep.insert(key);
                let directive = match s.protocol {
                    Protocol::Xash => Directive::Ip,
                    Protocol::GoldSrc => Directive::Gs,
                };
                e.directive = Some(match (first, e.directive) {
                    (false, Some(Directive::Ip)) => Directive::Ip,
                    _ => directive,
                });
                e.force = if first { s.force } else { e.force || s.force };
                e.sources |= source::CURATED;
                if let Ok(ip) = s.host_part.parse::<std::net::IpAddr>() {
                    e.resolved = Some(SocketAddr::new(ip, s.port));
                }
            }
        }
        for (k, e) in self.entries.iter_mut() {
            if !keep.contains(k) && e.sources & source::CURATED != 0 {
                e.sources &= !source::CURATED;
                e.force = false;
            }
        }
        self.listed = files
            .iter()
            .map(|(g, s)| {
                let distinct: HashSet<&str> = s.iter().map(|e| e.address.as_str()).collect();
                (g.clone(), distinct.len())
            })
            .collect();
        self.version += 1;
        self.structure += 1;
        Ok(())
    }

    /// Makes `list` the registered servers (gamedir, address, directive): they get
    /// the registered source (a curated entry's protocol wins); entries no longer
    /// registered lose it.
    pub fn set_registered(&mut self, list: &[(String, SocketAddr, Directive)]) {
        let mut keep: HashSet<Key> = HashSet::new();
        for (g, a, d) in list {
            let key = (g.clone(), a.to_string());
            if self.entries.len() >= MAX_ENTRIES && !self.entries.contains_key(&key) {
                continue;
            }
            let e = self.entries.entry(key.clone()).or_default();
            e.sources |= source::REGISTERED;
            if e.sources & source::CURATED == 0 {
                e.directive = Some(*d);
            }
            e.resolved = Some(*a);
            keep.insert(key);
        }
        for (k, e) in self.entries.iter_mut() {
            if !keep.contains(k) {
                e.sources &= !source::REGISTERED;
            }
        }
        self.version += 1;
        self.structure += 1;
    }

    /// Addresses written as host names, for the caller to resolve.
    pub fn host_names(&self) -> BTreeSet<String> {
        self.entries
            .iter()
            .filter(|(_, e)| e.sources != 0)
            .filter(|((_, a), _)| {
                let host = a.rsplit_once(':').map_or(a.as_str(), |(h, _)| h);
                host.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_err()
            })
            .map(|((_, a), _)| a.clone())
            .collect()
    }

    /// `address` (as written) resolved to `to`; `None` keeps the last good
    /// resolution (a name server's bad minute must not unlist a server).
    pub fn set_resolved(&mut self, address: &str, to: Option<SocketAddr>) {
        let Some(to) = to else { return };
        for ((_, a), e) in self.entries.iter_mut() {
            if a == address && e.resolved != Some(to) {
                e.resolved = Some(to);
                self.version += 1;
                self.structure += 1;
            }
        }
    }

    /// What to probe: the resolved addresses of entries in a source, except those
    /// in `proven` (a recent heartbeat shows them alive), each with the query its
    /// entries need (A2S only when every entry at it is GoldSrc).
    pub fn targets(&self, proven: &HashSet<SocketAddr>) -> Vec<(SocketAddr, query::Kind)> {
        let mut by_addr: BTreeMap<SocketAddr, bool> = BTreeMap::new();
        for e in self.entries.values().filter(|e| e.sources != 0) {
            let Some(a) = e.resolved.filter(|a| !proven.contains(a)) else {
                continue;
            };
            let gs = e.directive == Some(Directive::Gs);
            *by_addr.entry(a).or_insert(true) &= gs;
        }
        by_addr
            .into_iter()
            .map(|(a, gs)| {
                (
                    a,
                    if gs {
                        query::Kind::A2sInfo
                    } else {
                        query::Kind::Info
                    },
                )
            })
            .collect()
    }

    /// A probe of `addr` ended at `now`: with its answer and round trip (µs), or silent.
    /// Applies to every entry in a source that resolves to it. An entry that only
    /// registration lists (not curated) counts as seen only while the answer names its
    /// gamedir, as at admission: an address that changes hands, or a server that
    /// switches games after registering, is not listed under the game it left for
    /// longer than the grace. Curated entries are taken as written, as probe.py does.
    /// Returns how many registered entries an answer did not count for.
    pub fn record_probe(
        &mut self,
        addr: SocketAddr,
        answer: Option<(ProbeInfo, u32)>,
        now: i64,
    ) -> usize {
        let (mut changed, mut other_game) = (false, 0);
        for k in self.keys_at(addr) {
            let Some(e) = self.entries.get_mut(&k).filter(|e| e.sources != 0) else {
                continue;
            };
            e.last_attempt = Some(now);
            if let Some((info, ping)) = &answer {
                if e.sources & (source::CURATED | source::REGISTERED) == source::REGISTERED
                    && !info.gamedir.eq_ignore_ascii_case(&k.0)
                {
                    other_game += 1;
                    continue;
                }
                changed |= e.last_seen.is_none();
                e.last_seen = Some(now);
                e.first_seen.get_or_insert(now);
                e.last_ping_us = Some(*ping);
                e.info = Some(info.clone());
            }
        }
        if changed {
            self.version += 1;
        }
        other_game
    }

    /// `addr` sent a valid heartbeat for `gamedir` (it is in the master's table) at
    /// `now`: entries of that gamedir at that address count as seen.
    pub fn record_heartbeat(&mut self, gamedir: &str, addr: SocketAddr, now: i64) {
        let mut changed = false;
        for k in self.keys_at(addr) {
            let Some(e) = self.entries.get_mut(&k) else {
                continue;
            };
            if k.0 == gamedir && e.sources != 0 {
                changed |= e.last_seen.is_none();
                e.last_seen = Some(now);
                e.first_seen.get_or_insert(now);
                e.sources |= source::HEARTBEAT;
            }
        }
        if changed {
            self.version += 1;
        }
    }

    /// The keys of the entries resolved to `addr`.
    fn keys_at(&mut self, addr: SocketAddr) -> Vec<Key> {
        if self
            .by_addr
            .as_ref()
            .is_none_or(|(at, _)| *at != self.structure)
        {
            let mut m: HashMap<SocketAddr, Vec<Key>> = HashMap::new();
            for (k, e) in &self.entries {
                if let Some(a) = e.resolved {
                    m.entry(a).or_default().push(k.clone());
                }
            }
            self.by_addr = Some((self.structure, m));
        }
        self.by_addr
            .as_ref()
            .and_then(|(_, m)| m.get(&addr).cloned())
            .unwrap_or_default()
    }

    /// Every published line at `now`: entries merged by (gamedir, resolved address),
    /// sorted by gamedir, then as probe.py sorts them (by the address text).
    /// Entries never resolved are not published (the engine resolves names
    /// blocking; a name that never resolved would stall every client's menu).
    pub fn published(&self, now: i64, grace: i64) -> Vec<Published> {
        let mut out: Vec<Published> = self.merged(now, grace).into_values().collect();
        out.sort_by_cached_key(|p| (p.gamedir.clone(), p.addr.to_string(), p.directive));
        out
    }

    /// How many lines [`Catalog::published`] has, without sorting them.
    pub fn published_len(&self, now: i64, grace: i64) -> usize {
        self.merged(now, grace).len()
    }

    /// Whether any list publishes `addr` at `now`, and as what (`ip` when any entry
    /// at it says 49).
    pub fn publishes(&self, addr: SocketAddr, now: i64, grace: i64) -> Option<Directive> {
        self.entries
            .values()
            .filter(|e| e.resolved == Some(addr) && e.published(now, grace))
            .filter_map(|e| e.directive)
            .min()
    }

    fn merged(&self, now: i64, grace: i64) -> BTreeMap<(String, SocketAddr), Published> {
        let mut merged: BTreeMap<(String, SocketAddr), Published> = BTreeMap::new();
        for ((g, _), e) in &self.entries {
            let (Some(addr), Some(directive)) = (e.resolved, e.directive) else {
                continue;
            };
            if !e.published(now, grace) {
                continue;
            }
            let p = merged
                .entry((g.clone(), addr))
                .or_insert_with(|| Published {
                    gamedir: g.clone(),
                    addr,
                    directive,
                    sources: 0,
                    answer: None,
                });
            p.sources |= e.sources;
            if let (Some(at), Some(info)) = (e.last_seen, &e.info) {
                if p.answer.as_ref().is_none_or(|a| a.at < at) {
                    p.answer = Some(Answer {
                        at,
                        first_seen: e.first_seen.unwrap_or(at),
                        ping_ms: e.last_ping_us.map_or(0, |us| us.saturating_add(500) / 1000),
                        info: info.clone(),
                    });
                }
            }
            if directive == Directive::Ip {
                p.directive = Directive::Ip;
            }
        }
        merged
    }

    /// Per gamedir in the sources: entries listed and, of `published` (what
    /// [`Catalog::published`] gave), the addresses published (`v1/gamedirs`).
    pub fn gamedir_counts(&self, published: &[Published]) -> BTreeMap<String, GamedirCount> {
        let mut out: BTreeMap<String, GamedirCount> = self
            .listed
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(g, n)| (g.clone(), GamedirCount { total: *n, live: 0 }))
            .collect();
        for p in published {
            if let Some(c) = out.get_mut(&p.gamedir) {
                c.live += 1;
            }
        }
        out
    }

    /// Adds one players sample per gamedir at `now`: the players of the distinct
    /// addresses that answered within `fresh` seconds, and of the servers `heard`
    /// (gamedir, address, players: the master's table, proven by heartbeats), when
    /// at least one counts.
    pub fn take_sample(&mut self, now: i64, fresh: i64, heard: &[(String, SocketAddr, u32)]) {
        let mut sums: HashMap<&str, (u32, HashSet<SocketAddr>)> = HashMap::new();
        for (g, a, players) in heard {
            let (sum, seen_addrs) = sums.entry(g.as_str()).or_default();
            if seen_addrs.insert(*a) {
                *sum = sum.saturating_add(*players);
            }
        }
        for ((g, _), e) in &self.entries {
            let (Some(addr), Some(info), Some(seen)) = (e.resolved, &e.info, e.last_seen) else {
                continue;
            };
            if e.sources == 0 || now.saturating_sub(seen) > fresh {
                continue;
            }
            let (sum, seen_addrs) = sums.entry(g.as_str()).or_default();
            if seen_addrs.insert(addr) {
                *sum = sum.saturating_add(info.players);
            }
        }
        let mut sums: Vec<(String, u32)> = sums
            .into_iter()
            .map(|(g, (s, _))| (g.to_string(), s))
            .collect();
        // Curated gamedirs first, then the most players: they get places first.
        sums.sort_by_key(|(g, s)| (!self.listed.contains_key(g), std::cmp::Reverse(*s)));
        for (g, sum) in sums {
            if !self.samples.contains_key(&g)
                && self.samples.len() >= MAX_SAMPLED_GAMEDIRS
                && !self.make_room(&g, now)
            {
                continue;
            }
            let v = self.samples.entry(g).or_default();
            v.push((now, sum));
            if v.len() > MAX_SAMPLES_PER_GAMEDIR {
                let extra = v.len() - MAX_SAMPLES_PER_GAMEDIR;
                v.drain(..extra);
            }
        }
    }

    /// Frees one series for `gamedir` at the cap: the uncurated one sampled least
    /// recently before `now` (fewest players on a tie); false when every series
    /// is curated or was sampled at `now` already.
    fn make_room(&mut self, gamedir: &str, now: i64) -> bool {
        let curated = self.listed.contains_key(gamedir);
        let victim = self
            .samples
            .iter()
            .filter(|(g, v)| {
                !self.listed.contains_key(*g) && v.last().is_none_or(|s| s.0 < now || curated)
            })
            .min_by_key(|(_, v)| v.last().map(|&(t, n)| (t, n)))
            .map(|(g, _)| g.clone());
        match victim {
            Some(g) => self.samples.remove(&g).is_some(),
            None => false,
        }
    }

    /// Drops entries in no source unseen for `prune_after` seconds, and samples
    /// older than six weeks (a gamedir with none left and no source goes). Returns
    /// the entries dropped.
    pub fn prune(&mut self, now: i64, prune_after: i64) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| {
            e.sources != 0
                || e.last_seen
                    .is_some_and(|s| now.saturating_sub(s) <= prune_after)
        });
        let cutoff = now.saturating_sub(SAMPLE_RETAIN_SECS);
        let listed = &self.listed;
        self.samples.retain(|g, v| {
            v.retain(|(t, _)| *t >= cutoff);
            !v.is_empty() || listed.contains_key(g)
        });
        let dropped = before - self.entries.len();
        if dropped > 0 {
            self.version += 1;
            self.structure += 1;
        }
        dropped
    }

    /// Puts back an entry read from a saved state. Its sources and force flag come
    /// from the sources read at start, not from the file, unless `keep_sources`.
    pub fn restore_entry(&mut self, key: Key, e: Entry, keep_sources: bool) {
        if self.entries.len() >= MAX_ENTRIES && !self.entries.contains_key(&key) {
            return;
        }
        let slot = self.entries.entry(key).or_default();
        if keep_sources {
            slot.sources = e.sources;
            slot.force = e.force;
        }
        slot.resolved = slot.resolved.or(e.resolved);
        slot.last_attempt = e.last_attempt;
        slot.last_seen = e.last_seen;
        // A probe.py state has no first answer: its last one is the earliest known.
        slot.first_seen = e.first_seen.or(e.last_seen);
        slot.last_ping_us = e.last_ping_us;
        slot.info = e.info;
        if slot.directive.is_none() {
            slot.directive = e.directive;
        }
        self.version += 1;
        self.structure += 1;
    }

    /// Adds a server the master lists from heartbeats (`lobby master export`, from a
    /// state file's table), seen at `now` and published as `ip`.
    pub fn add_heartbeat(&mut self, gamedir: &str, addr: SocketAddr, now: i64) {
        if self.entries.len() >= MAX_ENTRIES {
            return;
        }
        let e = self
            .entries
            .entry((gamedir.to_string(), addr.to_string()))
            .or_default();
        if e.sources == 0 {
            *self.listed.entry(gamedir.to_string()).or_default() += 1;
        }
        e.sources |= source::HEARTBEAT;
        e.directive.get_or_insert(Directive::Ip);
        e.resolved = Some(addr);
        e.last_seen = Some(now);
        e.first_seen.get_or_insert(now);
        self.version += 1;
        self.structure += 1;
    }

    /// Counts the curated entries per gamedir as the sources' totals (for a catalog
    /// restored without its source files).
    pub fn recount_listed(&mut self) {
        self.listed.clear();
        for ((g, _), e) in &self.entries {
            if e.sources & source::CURATED != 0 {
                *self.listed.entry(g.clone()).or_default() += 1;
            }
        }
    }

    /// Puts back a gamedir's samples read from a saved state.
    pub fn restore_samples(&mut self, gamedir: String, mut v: Vec<(i64, u32)>) {
        v.sort_unstable();
        if v.len() > MAX_SAMPLES_PER_GAMEDIR {
            v.drain(..v.len() - MAX_SAMPLES_PER_GAMEDIR);
        }
        self.samples.insert(gamedir, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: i64 = 172_800;

    fn files(list: &[(&str, &str, Protocol, bool)]) -> BTreeMap<String, Vec<CuratedServer>> {
        let mut m: BTreeMap<String, Vec<CuratedServer>> = BTreeMap::new();
        for (i, (g, a, p, force)) in list.iter().enumerate() {
            let (h, port) = a.rsplit_once(':').unwrap();
            m.entry(g.to_string()).or_default().push(CuratedServer {
                address: a.to_string(),
                host_part: h.trim_matches(['[', ']']).to_string(),
                port: port.parse().unwrap(),
                protocol: *p,
                contact: None,
                host: None,
                force: *force,
                line: i + 1,
            });
        }
        m
    }

    fn info(players: u32) -> ProbeInfo {
        ProbeInfo {
            players,
            ..ProbeInfo::default()
        }
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_grace_rule_as_probe_py_applies_it() {
        let mut c = Catalog::new();
        c.set_curated(&files(&[
            ("valve", "192.0.2.1:27015", Protocol::Xash, false),
            ("valve", "192.0.2.2:27015", Protocol::GoldSrc, false),
            ("valve", "192.0.2.3:27015", Protocol::Xash, true),
        ]))
        .unwrap();
        let t0 = 1_000_000;
        // Nothing answered yet: only the forced one.
        let p = c.published(t0, GRACE);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].addr, addr("192.0.2.3:27015"));
        c.record_probe(addr("192.0.2.1:27015"), Some((info(3), 20)), t0);
        c.record_probe(addr("192.0.2.2:27015"), Some((info(1), 30)), t0);
        let p = c.published(t0, GRACE);
        assert_eq!(
            p.iter().map(|p| (p.directive, p.addr)).collect::<Vec<_>>(),
            vec![
                (Directive::Ip, addr("192.0.2.1:27015")),
                (Directive::Gs, addr("192.0.2.2:27015")),
                (Directive::Ip, addr("192.0.2.3:27015")),
            ]
        );
        // Silent from now on: listed through the grace window, then not.
        c.record_probe(addr("192.0.2.1:27015"), None, t0 + 100);
        assert_eq!(c.published(t0 + GRACE, GRACE).len(), 3);
        assert_eq!(
            c.published(t0 + GRACE + 1, GRACE).len(),
            1,
            "only the forced one"
        );
        let counts = c.gamedir_counts(&c.published(t0 + GRACE + 1, GRACE));
        assert_eq!(counts["valve"], GamedirCount { total: 3, live: 1 });
    }

    #[test]
    fn removed_entries_are_kept_then_pruned_and_never_published() {
        let mut c = Catalog::new();
        c.set_curated(&files(&[(
            "valve",
            "192.0.2.1:27015",
            Protocol::Xash,
            true,
        )]))
        .unwrap();
        c.record_probe(addr("192.0.2.1:27015"), Some((info(0), 5)), 10);
        c.set_curated(&BTreeMap::new()).unwrap();
        assert!(
            c.published(10, GRACE).is_empty(),
            "in no source: not published"
        );
        assert!(c.targets(&HashSet::new()).is_empty(), "nor probed");
        assert_eq!(c.prune(10 + 100, 1000), 0, "kept for prune_after");
        assert_eq!(c.prune(10 + 1001, 1000), 1);
        // Still in a source: never pruned, however long it is silent.
        c.set_curated(&files(&[(
            "valve",
            "192.0.2.1:27015",
            Protocol::Xash,
            false,
        )]))
        .unwrap();
        assert_eq!(c.prune(10_000_000, 1000), 0);
    }

    #[test]
    fn duplicates_merge_and_heartbeats_count_as_seen() {
        let mut c = Catalog::new();
        c.set_curated(&files(&[
            ("valve", "192.0.2.1:27015", Protocol::GoldSrc, false),
            ("valve", "srv.example.org:27015", Protocol::Xash, false),
        ]))
        .unwrap();
        assert_eq!(
            c.host_names().into_iter().collect::<Vec<_>>(),
            ["srv.example.org:27015"]
        );
        c.set_resolved("srv.example.org:27015", Some(addr("192.0.2.1:27015")));
        c.set_resolved("srv.example.org:27015", None);
        let t = c.targets(&HashSet::new());
        assert_eq!(
            t,
            vec![(addr("192.0.2.1:27015"), query::Kind::Info)],
            "one probe per address"
        );
        c.record_heartbeat("valve", addr("192.0.2.1:27015"), 50);
        let proven: HashSet<SocketAddr> = [addr("192.0.2.1:27015")].into();
        assert!(c.targets(&proven).is_empty(), "a heartbeat proves it");
        let p = c.published(60, GRACE);
        assert_eq!(p.len(), 1, "one line for both entries");
        assert_eq!(p[0].directive, Directive::Ip, "ip when any source says 49");
        assert_eq!(p[0].sources, source::CURATED | source::HEARTBEAT);
    }

    #[test]
    fn an_address_twice_in_a_file_is_counted_and_published_once() {
        let mut c = Catalog::new();
        c.set_curated(&files(&[
            ("valve", "192.0.2.1:27015", Protocol::Xash, false),
            ("valve", "192.0.2.1:27015", Protocol::Xash, true),
            ("valve", "192.0.2.2:27015", Protocol::Xash, false),
        ]))
        .unwrap();
        let p = c.published(0, GRACE);
        assert_eq!(p.len(), 1, "the forced copy: {p:?}");
        assert_eq!(
            c.gamedir_counts(&p)["valve"],
            GamedirCount { total: 2, live: 1 },
            "probe.py: valve 3 2"
        );
    }

    #[test]
    fn registered_servers_are_probed_published_and_dropped_with_their_registration() {
        let mut c = Catalog::new();
        let a = addr("192.0.2.8:27015");
        c.set_registered(&[("valve".into(), a, Directive::Gs)]);
        assert_eq!(c.targets(&HashSet::new()), vec![(a, query::Kind::A2sInfo)]);
        assert_eq!(c.record_probe(a, Some((game("Valve", 1), 9)), 10), 0);
        let p = c.published(10, GRACE);
        assert_eq!(
            (p.len(), p[0].directive, p[0].sources),
            (1, Directive::Gs, source::REGISTERED)
        );
        c.set_registered(&[]);
        assert!(c.published(10, GRACE).is_empty());
    }

    fn game(gamedir: &str, players: u32) -> ProbeInfo {
        ProbeInfo {
            gamedir: gamedir.into(),
            ..info(players)
        }
    }

    #[test]
    fn a_registered_server_that_answers_as_another_game_ages_out_of_its_list() {
        // Before: any answer at the address counted, so a server admitted for valve
        // that then ran cstrike (or an address that changed hands) stayed on valve's
        // list for as long as anything answered there.
        let mut c = Catalog::new();
        let a = addr("192.0.2.8:27015");
        c.set_registered(&[("valve".into(), a, Directive::Ip)]);
        assert_eq!(c.record_probe(a, Some((game("valve", 1), 9)), 10), 0);
        let later = 10 + GRACE + 1;
        assert_eq!(c.record_probe(a, Some((game("cstrike", 1), 9)), later), 1);
        assert!(
            c.published(later, GRACE).is_empty(),
            "not listed past the grace"
        );
        assert_eq!(
            c.get("valve", &a.to_string()).unwrap().last_attempt,
            Some(later)
        );
        // A curated entry at the same address is taken as written (probe.py).
        c.set_curated(&files(&[(
            "valve",
            "192.0.2.8:27015",
            Protocol::Xash,
            false,
        )]))
        .unwrap();
        assert_eq!(c.record_probe(a, Some((game("cstrike", 1), 9)), later), 0);
        assert_eq!(c.published(later, GRACE).len(), 1);
    }

    #[test]
    fn samples_sum_distinct_answering_servers_and_age_out() {
        let mut c = Catalog::new();
        c.set_curated(&files(&[
            ("valve", "192.0.2.1:27015", Protocol::Xash, false),
            ("valve", "192.0.2.2:27015", Protocol::Xash, false),
            ("cstrike", "192.0.2.3:27015", Protocol::Xash, false),
        ]))
        .unwrap();
        c.record_probe(addr("192.0.2.1:27015"), Some((info(3), 1)), 100);
        c.record_probe(addr("192.0.2.2:27015"), Some((info(4), 1)), 100);
        c.record_probe(addr("192.0.2.3:27015"), Some((info(9), 1)), 10);
        // A server the master lists by heartbeat counts once, even if also curated.
        let heard = vec![
            ("valve".to_string(), addr("192.0.2.1:27015"), 3),
            ("dmc".to_string(), addr("192.0.2.9:27015"), 2),
        ];
        c.take_sample(200, 120, &heard);
        assert_eq!(c.samples()["valve"], vec![(200, 7)]);
        assert_eq!(c.samples()["dmc"], vec![(200, 2)]);
        assert!(!c.samples().contains_key("cstrike"), "its answer is stale");
        c.prune(200 + SAMPLE_RETAIN_SECS + 1, 1);
        assert!(c.samples().get("valve").is_none_or(|v| v.is_empty()));
    }

    #[test]
    fn gamedirs_named_by_heartbeats_hold_at_most_the_cap_of_series() {
        // Issue 20 (review): every gamedir a heartbeat named started a series kept
        // six weeks; a stranger rotating names grew the map without bound.
        let mut c = Catalog::new();
        c.set_curated(&files(&[(
            "valve",
            "192.0.2.1:27015",
            Protocol::Xash,
            false,
        )]))
        .unwrap();
        c.record_probe(addr("192.0.2.1:27015"), Some((info(1), 1)), 0);
        for round in 0..5i64 {
            let now = round * 600;
            c.record_probe(addr("192.0.2.1:27015"), Some((info(1), 1)), now);
            let heard: Vec<(String, SocketAddr, u32)> = (0..200u32)
                .map(|i| {
                    let a = SocketAddr::from(([198, 51, 100, (i % 250) as u8], 27015));
                    (format!("junk{round}x{i}"), a, 5)
                })
                .collect();
            c.take_sample(now, 120, &heard);
            assert_eq!(c.samples().len(), MAX_SAMPLED_GAMEDIRS, "round {round}");
            assert_eq!(
                c.samples()["valve"].last(),
                Some(&(now, 1)),
                "the curated gamedir is always sampled"
            );
        }
    }
}
