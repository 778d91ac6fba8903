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
//! [`ChatLimits::total`] in all (the oldest go first), none older than
//! [`ChatLimits::keep_secs`]; a line is at most 255 characters (cut by
//! `fgmp::extras`). What is refused or evicted is counted ([`ChatCounters`]).

use crate::pilots::{great_circle_nm, Pilot, PilotFilter};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use utoipa::ToSchema;

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

/// The recent chat of one relay.
#[derive(Debug, Clone, Default)]
pub struct ChatLog {
    limits: ChatLimits,
    lines: VecDeque<ChatLine>,
    per_callsign: HashMap<String, usize>,
    /// Each present pilot's chat text at the last look.
    current: HashMap<String, String>,
    next_id: u64,
    /// What was dropped.
    pub counters: ChatCounters,
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

    /// Looks at `pilots` at `now` (Unix seconds): records each line not seen at the
    /// last look, and returns the lines recorded.
    pub fn observe(&mut self, pilots: &[Pilot], now: u64) -> Vec<ChatLine> {
        self.expire(now);
        let mut fresh = Vec::new();
        let mut current = HashMap::with_capacity(pilots.len());
        for p in pilots {
            let Some(text) = &p.chat else { continue };
            if self.current.get(&p.callsign) != Some(text) {
                if let Some(l) = self.record(p, text, now) {
                    fresh.push(l);
                }
            }
            current.insert(p.callsign.clone(), text.clone());
        }
        self.current = current;
        fresh
    }

    fn record(&mut self, p: &Pilot, text: &str, now: u64) -> Option<ChatLine> {
        let n = self.per_callsign.entry(p.callsign.clone()).or_insert(0);
        if *n >= self.limits.per_pilot {
            self.counters.refused_per_pilot += 1;
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
        self.lines.push_back(line.clone());
        self.counters.recorded += 1;
        while self.lines.len() > self.limits.total {
            self.pop_oldest();
            self.counters.evicted += 1;
        }
        Some(line)
    }

    fn pop_oldest(&mut self) {
        if let Some(old) = self.lines.pop_front() {
            if let Some(n) = self.per_callsign.get_mut(&old.callsign) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.per_callsign.remove(&old.callsign);
                }
            }
        }
    }

    fn expire(&mut self, now: u64) {
        while self
            .lines
            .front()
            .is_some_and(|l| now.saturating_sub(l.at) > self.limits.keep_secs)
        {
            self.pop_oldest();
            self.counters.expired += 1;
        }
    }

    /// Lines kept, oldest first.
    pub fn lines(&self) -> impl Iterator<Item = &ChatLine> {
        self.lines.iter()
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
            .lines
            .iter()
            .rev()
            .filter(|l| filter.keeps(l))
            .take(filter.limit)
            .cloned()
            .collect();
        lines.reverse();
        ChatBody {
            generated_at: now,
            kept: self.lines.len(),
            counters: self.counters,
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
#[derive(Debug, Clone, PartialEq)]
pub struct ChatFilter {
    /// `callsign` and `near` as `GET /api/pilots` reads them.
    pub pilots: PilotFilter,
    /// Only lines with a greater id.
    pub since: Option<u64>,
    /// At most this many lines (the most recent): 1-1000, default 100.
    pub limit: usize,
}

impl Default for ChatFilter {
    fn default() -> Self {
        ChatFilter {
            pilots: PilotFilter::default(),
            since: None,
            limit: 100,
        }
    }
}

impl ChatFilter {
    /// Parses the query: `callsign`, `near=lat,lon,nm`, `since=ID`, `limit=N`.
    pub fn parse(q: &BTreeMap<String, String>) -> Result<ChatFilter, String> {
        let mut f = ChatFilter::default();
        let mut rest = BTreeMap::new();
        for (k, v) in q {
            match k.as_str() {
                "since" => {
                    f.since = Some(
                        v.parse()
                            .map_err(|_| format!("since: expected a line id, got {v:?}"))?,
                    )
                }
                "limit" => {
                    f.limit = v
                        .parse()
                        .ok()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or_else(|| format!("limit: expected 1 to 1000, got {v:?}"))?
                }
                "callsign" | "near" => {
                    rest.insert(k.clone(), v.clone());
                }
                other => {
                    return Err(format!(
                        "unknown parameter {other:?} (known: callsign, near, since, limit)"
                    ))
                }
            }
        }
        f.pilots = PilotFilter::parse(&rest)?;
        Ok(f)
    }

    /// Whether `l` passes.
    pub fn keeps(&self, l: &ChatLine) -> bool {
        if self.since.is_some_and(|s| l.id <= s) {
            return false;
        }
        if self
            .pilots
            .callsign
            .as_ref()
            .is_some_and(|c| *c != l.callsign)
        {
            return false;
        }
        if let Some((lat, lon, nm)) = self.pilots.near {
            if great_circle_nm(lat, lon, l.lat, l.lon) > nm {
                return false;
            }
        }
        true
    }
}
