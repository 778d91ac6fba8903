//! `GET /api/chat` and the pilot stream's `chat` event: the chat lines the relay's
//! pilots sent (property 10002), each once.
//!
//! FlightGear repeats a chat line in every datagram for about 10 s (and keeps the
//! "Hello" it sets on going online until the next line), so a line is recorded when
//! a pilot's chat property changes to a non-empty text it did not carry at the last
//! look. Looks happen once per API snapshot (at least every few seconds while a relay
//! runs), never per datagram.
//!
//! Bounded: at most [`ChatLimits::per_pilot`] lines per callsign and
//! [`ChatLimits::total`] in all, none older than [`ChatLimits::keep_secs`]; a line
//! is at most 255 characters (cut by `fgmp::extras`). At the total, the line that
//! goes is the oldest of the network holding the most lines (its sender's IPv4 /24
//! or IPv6 /48, by `sansio::quota::nets`), so one network's chatter pushes out its
//! own lines and never everyone else's. What is refused or evicted is counted
//! ([`ChatStats`], in `/metrics` as `lobby_chat_lines_total`).

use crate::pilots::Pilot;
use fgmp::geo::great_circle_nm;
use sansio::quota::Net;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::Ordering::Relaxed;
use utoipa::{IntoParams, ToSchema};

/// The chat log's metric families.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// The chat log's.
        pub const FAMILIES;
        LINES = Family::counter(
            "lobby_chat_lines_total",
            "Chat lines the relay's pilots sent, by outcome (recorded; refused_per_pilot: its sender already had per_pilot lines kept; evicted: pushed out before its hour to stay under the total, from the network holding the most; expired: kept its hour).",
        )
        .label("outcome");
        KEPT = Family::gauge("lobby_chat_lines_kept", "Chat lines kept now.");
    }
}

telemetry::fields! {
    /// The chat log's counters (`/stats` → `chat`).
    pub struct ChatStats in families::FAMILIES {
        /// Lines recorded.
        pub recorded => families::LINES["recorded"];
        /// Lines refused: their sender already had `per_pilot` lines kept.
        pub refused_per_pilot => families::LINES["refused_per_pilot"];
        /// Lines evicted early to stay under the total cap.
        pub evicted => families::LINES["evicted"];
        /// Lines that aged out.
        pub expired => families::LINES["expired"];
        /// Lines kept now.
        pub kept => families::KEPT;
    }
}

/// One chat line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatLine {
    /// Counts up by one per line recorded by this process (use with `since`).
    pub id: u64,
    /// When it was first seen, Unix seconds.
    pub at: u64,
    /// Who sent it.
    pub callsign: String,
    /// The line, cleaned of control characters, at most 255 characters.
    pub text: String,
    /// Where the sender was, degrees.
    pub lat: f64,
    /// Where the sender was, degrees.
    pub lon: f64,
    /// The sender's transmit frequency then, MHz, if it sent one.
    pub frequency_mhz: Option<f64>,
    /// Whether the sender is an ATC station.
    pub atc: bool,
}

/// What was dropped, since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChatCounters {
    /// Lines recorded.
    pub recorded: u64,
    /// Lines refused: their sender already had `per_pilot` lines kept.
    pub refused_per_pilot: u64,
    /// Lines evicted early to stay under the total cap.
    pub evicted: u64,
    /// Lines that aged out.
    pub expired: u64,
}

/// The chat log's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatLimits {
    /// Lines kept in all.
    pub total: usize,
    /// Lines kept per callsign.
    pub per_pilot: usize,
    /// How long a line is kept, seconds.
    pub keep_secs: u64,
}

impl Default for ChatLimits {
    fn default() -> Self {
        ChatLimits {
            total: 1000,
            per_pilot: 30,
            keep_secs: 3600,
        }
    }
}

/// One kept line and the network it counts against.
#[derive(Debug)]
struct Kept {
    line: ChatLine,
    holder: Net,
}

/// The network a sender's lines count against: its IPv4 /24 or IPv6 /48.
fn holder(ip: IpAddr) -> Net {
    sansio::quota::nets(ip)
        .last()
        .map(|(net, _)| net)
        .unwrap_or(Net { addr: ip, len: 0 })
}

/// Takes one from `key`'s count, removing the entry at zero.
fn release<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(key);
        }
    }
}

/// The recent chat of one relay.
#[derive(Debug, Default)]
pub struct ChatLog {
    limits: ChatLimits,
    lines: VecDeque<Kept>,
    per_callsign: HashMap<String, usize>,
    /// Lines kept per network.
    per_holder: HashMap<Net, usize>,
    /// Each present pilot's chat text at the last look.
    current: HashMap<String, String>,
    next_id: u64,
    /// What was recorded and dropped.
    pub stats: ChatStats,
}

impl ChatLog {
    /// An empty log with these bounds.
    pub fn new(limits: ChatLimits) -> ChatLog {
        ChatLog {
            limits,
            next_id: 1,
            ..ChatLog::default()
        }
    }

    /// Looks at the pilots, each with the address its datagrams come from, at `now`
    /// (Unix seconds): records each line not seen at the last look, and returns the
    /// lines recorded.
    pub fn observe<'a>(
        &mut self,
        pilots: impl IntoIterator<Item = (&'a Pilot, IpAddr)>,
        now: u64,
    ) -> Vec<ChatLine> {
        self.expire(now);
        let mut fresh = Vec::new();
        let mut current = HashMap::with_capacity(self.current.len());
        for (p, from) in pilots {
            let Some(text) = &p.chat else { continue };
            if self.current.get(&p.callsign) != Some(text) {
                if let Some(l) = self.record(p, from, text, now) {
                    fresh.push(l);
                }
            }
            current.insert(p.callsign.clone(), text.clone());
        }
        self.current = current;
        self.stats.kept.store(self.lines.len() as u64, Relaxed);
        fresh
    }

    fn record(&mut self, p: &Pilot, from: IpAddr, text: &str, now: u64) -> Option<ChatLine> {
        let n = self.per_callsign.entry(p.callsign.clone()).or_insert(0);
        if *n >= self.limits.per_pilot {
            self.stats.refused_per_pilot.fetch_add(1, Relaxed);
            return None;
        }
        *n += 1;
        let line = ChatLine {
            id: self.next_id.max(1),
            at: now,
            callsign: p.callsign.clone(),
            text: text.to_string(),
            lat: p.lat,
            lon: p.lon,
            frequency_mhz: p.frequency_mhz,
            atc: p.atc,
        };
        self.next_id = line.id + 1;
        let holder = holder(from);
        self.lines.push_back(Kept {
            line: line.clone(),
            holder,
        });
        *self.per_holder.entry(holder).or_insert(0) += 1;
        self.stats.recorded.fetch_add(1, Relaxed);
        while self.lines.len() > self.limits.total {
            self.evict_from_largest();
            self.stats.evicted.fetch_add(1, Relaxed);
        }
        Some(line)
    }

    /// Removes the oldest line of the network holding the most (ties: the one whose
    /// oldest line is oldest).
    fn evict_from_largest(&mut self) {
        let Some(most) = self.per_holder.values().copied().max() else {
            return;
        };
        let at = self
            .lines
            .iter()
            .position(|k| self.per_holder.get(&k.holder) == Some(&most));
        if let Some(i) = at {
            self.remove(i);
        }
    }

    fn remove(&mut self, i: usize) {
        let Some(old) = self.lines.remove(i) else {
            return;
        };
        release(&mut self.per_callsign, &old.line.callsign);
        release(&mut self.per_holder, &old.holder);
    }

    fn expire(&mut self, now: u64) {
        while self
            .lines
            .front()
            .is_some_and(|k| now.saturating_sub(k.line.at) > self.limits.keep_secs)
        {
            self.remove(0);
            self.stats.expired.fetch_add(1, Relaxed);
        }
    }

    /// Lines kept, oldest first.
    pub fn lines(&self) -> impl DoubleEndedIterator<Item = &ChatLine> {
        self.lines.iter().map(|k| &k.line)
    }

    /// Networks holding lines now.
    pub fn holders(&self) -> usize {
        self.per_holder.len()
    }

    /// The counters as `GET /api/chat` shows them.
    pub fn counters(&self) -> ChatCounters {
        ChatCounters {
            recorded: self.stats.recorded.load(Relaxed),
            refused_per_pilot: self.stats.refused_per_pilot.load(Relaxed),
            evicted: self.stats.evicted.load(Relaxed),
            expired: self.stats.expired.load(Relaxed),
        }
    }

    /// Lines kept.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The body of `GET /api/chat` for `filter` at `now`.
    pub fn body(&self, filter: &ChatFilter, now: u64) -> ChatBody {
        let mut lines: Vec<ChatLine> = self
            .lines()
            .rev()
            .filter(|l| filter.keeps(l))
            .take(filter.limit)
            .cloned()
            .collect();
        lines.reverse();
        ChatBody {
            generated_at: now,
            kept: self.lines.len(),
            counters: self.counters(),
            lines,
        }
    }
}

/// The body of `GET /api/chat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatBody {
    /// When it was made, Unix seconds.
    pub generated_at: u64,
    /// Lines kept in all, before any filter.
    pub kept: usize,
    /// What was recorded and dropped since the process started.
    pub counters: ChatCounters,
    /// The most recent lines the filters kept (at most `limit`), oldest first.
    pub lines: Vec<ChatLine>,
}

/// The query of `GET /api/chat`.
#[derive(Debug, Clone, PartialEq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChatFilter {
    /// Only this callsign (exact).
    #[serde(default)]
    pub callsign: Option<String>,
    /// `lat,lon,nm`: only lines sent within nm nautical miles of the point (as
    /// `GET /api/pilots` reads it).
    #[serde(default, deserialize_with = "crate::params::near")]
    #[param(value_type = Option<String>, example = "64.0,-22.6,10")]
    pub near: Option<(f64, f64, f64)>,
    /// Only lines with a greater id.
    #[serde(default)]
    pub since: Option<u64>,
    /// At most this many lines, the most recent.
    #[serde(default = "default_chat_limit")]
    #[param(minimum = 1, maximum = 1000, default = 100)]
    pub limit: usize,
}

/// Lines `GET /api/chat` lists when `limit` is not given.
pub const DEFAULT_CHAT_LIMIT: usize = 100;
/// The most `limit` may ask for.
pub const MAX_CHAT_LIMIT: usize = 1000;

fn default_chat_limit() -> usize {
    DEFAULT_CHAT_LIMIT
}

impl Default for ChatFilter {
    fn default() -> Self {
        ChatFilter {
            callsign: None,
            near: None,
            since: None,
            limit: DEFAULT_CHAT_LIMIT,
        }
    }
}

impl crate::params::Bounds for ChatFilter {
    fn check(&self) -> Result<(), crate::params::ParamError> {
        crate::params::within("limit", self.limit, 1, MAX_CHAT_LIMIT as i64)
    }
}

impl ChatFilter {
    /// Whether `l` passes.
    pub fn keeps(&self, l: &ChatLine) -> bool {
        if self.since.is_some_and(|s| l.id <= s) {
            return false;
        }
        if self.callsign.as_ref().is_some_and(|c| *c != l.callsign) {
            return false;
        }
        if let Some((lat, lon, nm)) = self.near {
            if great_circle_nm(lat, lon, l.lat, l.lon) > nm {
                return false;
            }
        }
        true
    }
}
