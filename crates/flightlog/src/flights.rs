//! From what relays report to flights: pure (times come in as Unix seconds, no
//! database). A flight is one callsign flying one model on one relay, from its
//! session's start to its end (the pilot left, or changed model or callsign).
//! [`Flights::apply`] turns each [`Report`] into the database operations ([`Op`])
//! the store runs; open flights live here, bounded.
//!
//! # Which sessions become flights (issue 20, item 1)
//!
//! A relay ends a pilot's session and begins another whenever the pilot's model
//! changes or a new callsign comes from its socket, so one pilot could begin
//! hundreds of sessions a second, each once a `flights` row. A session becomes a
//! flight (a row) only when
//!
//! 1. **it lasted** [`Limits::min_secs`] (60 s by default): until a report comes that
//!    long after its start, a session is *held* in memory only, with the positions
//!    sampled meanwhile (at most [`MAX_HELD`]). One that ends sooner (a model flip,
//!    a callsign change, a pilot who left at once) leaves no row: counted `too_short`.
//!    A model flip-flop is thus nothing but held sessions replacing each other.
//! 2. **its pilot slot and its source have room**: rows open per pilot slot (relay
//!    and callsign) at [`Limits::slot`] (4 at once, then one per 15 minutes); per
//!    source at [`Limits::source`] (the pilot's address, an IPv4 address or IPv6 /64,
//!    as the local relay's feed gives it: 32 at once, then one a minute) or, for a
//!    pilot reported without one (through the tracker), per relay at
//!    [`Limits::relay`] (200 at once, then one every 6 s). A session that lasted but
//!    finds no room stays held (its row opens, with its start and positions, once
//!    there is room); one that ends first leaves no row: counted `over_rate`.
//!
//! So whatever the reports, the rows a slot, a source or a relay opens over a time
//! `T` are at most the burst plus `T` over the interval. The buckets' clock is the
//! latest report time seen: a late report refills nothing.
//!
//! A flight lasts at most [`Limits::max_secs`] (24 h): the first position after that
//! ends it at its previous position and begins the next flight (counted `split`); an
//! end reported later is clamped to it. Tracks are stored sparser as a flight goes
//! on ([`sample_every`]): a position every 10 s for its first 720 (2 hours), then
//! every 20 s, 40 s, and from the 2,160th on every 80 s, so a 24-hour flight stores
//! at most about 2,610 positions.

use crate::logbook;
use crate::share::{Buckets, Rate};
use crate::track::{distance_nm, MAX_SPEED_KT};
use std::collections::HashMap;

pub use crate::track::Fix;

/// What a relay (in-process, or through the tracker server) says about a pilot.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// A session began.
    Began {
        /// Callsign.
        callsign: String,
        /// Model (path or name, as the relay gave it).
        model: String,
        /// Which relay.
        relay: String,
        /// When, Unix seconds.
        at: i64,
        /// The pilot's source (its address: an IPv4 address or IPv6 /64), when the
        /// relay is this process's; `None` through the tracker (the relay is then the
        /// source its rows are counted under).
        source: Option<String>,
    },
    /// A session ended.
    Ended {
        /// Callsign.
        callsign: String,
        /// Which relay.
        relay: String,
        /// When, Unix seconds.
        at: i64,
    },
    /// Where a pilot is.
    Position {
        /// Callsign.
        callsign: String,
        /// Which relay.
        relay: String,
        /// When, Unix seconds.
        at: i64,
        /// Where.
        fix: Fix,
    },
}

impl Report {
    /// The relay it comes from.
    pub fn relay(&self) -> &str {
        match self {
            Report::Began { relay, .. } | Report::Ended { relay, .. } => relay,
            Report::Position { relay, .. } => relay,
        }
    }
}

/// A flight's running totals.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// Nautical miles flown (between consecutive positions).
    pub distance_nm: f64,
    /// Highest altitude seen, feet.
    pub max_alt_ft: Option<f64>,
    /// Positions stored.
    pub samples: i64,
    /// Seconds moving ([`crate::logbook`]'s rule), over every position reported.
    pub moving_s: i64,
    /// The departure airport's ident ([`crate::logbook`]'s rule), once known: at
    /// the position after the first placed one.
    pub departure: Option<&'static str>,
    /// The arrival airport's ident, set when the flight ends.
    pub arrival: Option<&'static str>,
}

/// A database operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A new flight.
    Open {
        /// Its id.
        id: i64,
        /// Callsign.
        callsign: String,
        /// Model.
        model: String,
        /// Relay.
        relay: String,
        /// Start, Unix seconds.
        start: i64,
    },
    /// A stored position, with the flight's totals and first position after it.
    Sample {
        /// The flight.
        id: i64,
        /// When.
        at: i64,
        /// Where.
        fix: Fix,
        /// The flight's first position.
        first: Fix,
        /// Totals including this position.
        totals: Totals,
    },
    /// The flight ended.
    Close {
        /// The flight.
        id: i64,
        /// End, Unix seconds.
        end: i64,
        /// Its last position, if it had any.
        last: Option<Fix>,
        /// Final totals.
        totals: Totals,
    },
}

/// Seconds between stored positions of one flight, at first ([`sample_every`]).
pub const SAMPLE_EVERY: i64 = 10;

/// Positions stored at one interval before it doubles ([`sample_every`]).
pub const TRACK_STEP: i64 = 720;

/// The longest interval between stored positions, seconds.
pub const MAX_SAMPLE_EVERY: i64 = 80;

/// Positions a held session keeps (beyond, every other one is dropped).
pub const MAX_HELD: usize = 64;

/// Model recorded for a flight whose session start was not seen (a position from a
/// relay whose CONNECT came before the log started).
pub const UNKNOWN_MODEL: &str = "unknown";

/// Seconds between a flight's stored positions once it has `taken` of them: 10 for
/// the first [`TRACK_STEP`], then 20, 40, and 80 from then on.
pub fn sample_every(taken: i64) -> i64 {
    (SAMPLE_EVERY << (taken / TRACK_STEP).clamp(0, 3)).min(MAX_SAMPLE_EVERY)
}

/// Which sessions become flights, and how long a flight lasts (the crate's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A session becomes a row only once it lasted this long, seconds.
    pub min_secs: i64,
    /// A flight ends after this long, seconds; the next position begins another.
    pub max_secs: i64,
    /// New rows per pilot slot (relay and callsign).
    pub slot: Rate,
    /// New rows per source address (the local relay's pilots).
    pub source: Rate,
    /// New rows per relay, for pilots reported without a source (the tracker's).
    pub relay: Rate,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            min_secs: 60,
            max_secs: 86_400,
            slot: Rate {
                burst: 4,
                every: 900,
            },
            source: Rate {
                burst: 32,
                every: 60,
            },
            relay: Rate {
                burst: 200,
                every: 6,
            },
        }
    }
}

type Key = (String, String);

#[derive(Debug, Clone)]
struct OpenFlight {
    /// Its row's id; `None` while held (no row yet).
    id: Option<i64>,
    model: String,
    source: Option<String>,
    start: i64,
    /// Its start, or its last report's time: what silence is counted from, and
    /// how long it lasted.
    heard: i64,
    first: Option<Fix>,
    last: Option<(i64, Fix)>,
    last_sample: Option<i64>,
    /// Positions sampled, held or written.
    taken: i64,
    totals: Totals,
    /// Positions sampled while held, written when its row opens.
    held: Vec<(i64, Fix)>,
    /// Counted once as waiting for room.
    waited: bool,
    /// The first placed position, while its departure is not decided yet.
    dep: Option<(i64, Fix)>,
    /// Its departure was decided (from its first placed position and the next).
    dep_decided: bool,
    /// The ground speed from the position before the last to the last, knots.
    last_speed: Option<f64>,
}

impl OpenFlight {
    /// Forgets the positions seen so far (held ones only: no row yet): the next
    /// one is the first.
    fn restart_track(&mut self) {
        debug_assert!(self.id.is_none());
        self.first = None;
        self.last = None;
        self.last_sample = None;
        self.taken = 0;
        self.totals = Totals::default();
        self.held.clear();
        self.dep = None;
        self.dep_decided = false;
        self.last_speed = None;
    }
}

/// Whether going from `a` at `ta` to `b` at `tb` is faster than any aircraft
/// ([`MAX_SPEED_KT`]; within one second counted as a second).
fn jumped(ta: i64, a: Fix, tb: i64, b: Fix) -> bool {
    let dt_h = tb.saturating_sub(ta).max(1) as f64 / 3600.0;
    distance_nm(a, b) / dt_h > MAX_SPEED_KT
}

/// Counters of what could not be recorded, or was recorded otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlightStats {
    /// Sessions not held: `max_open` were open or held.
    pub dropped_open_cap: u64,
    /// Reports with a time before their flight's last one (kept out of order).
    pub out_of_order: u64,
    /// Flights not opened: no id was left (the writer reserves enough before each batch).
    pub dropped_no_id: u64,
    /// Sessions that ended before `min_secs`: no row.
    pub too_short: u64,
    /// Sessions that lasted but whose slot or source had no room before they ended: no row.
    pub over_rate: u64,
    /// Sessions that lasted and waited for room (a row opened later, or `over_rate`).
    pub waited: u64,
    /// Flights ended at `max_secs`, the next one begun.
    pub split: u64,
    /// Positions left out as not placed yet ([`logbook::placed`]: FlightGear's
    /// -9,999 ft before its scenery loads).
    pub unplaced: u64,
    /// Held sessions whose track began again at a jump faster than any aircraft
    /// (a client still placing itself).
    pub restarted: u64,
}

/// What opens rows: the limits, the ids, the buckets and their clock.
#[derive(Debug)]
struct Rows {
    limits: Limits,
    /// Ids this writer may give out: `next_id .. id_end`.
    next_id: i64,
    id_end: i64,
    slots: Buckets<Key>,
    sources: Buckets<String>,
    relays: Buckets<String>,
    /// The latest report time seen.
    clock: i64,
    stats: FlightStats,
}

/// Why a held session has no row yet.
enum NoRow {
    Short,
    NoRoom,
    NoId,
}

impl Rows {
    /// Opens `f`'s row when it lasted and its slot and source have room: the row,
    /// then the positions it held.
    fn open(&mut self, key: &Key, f: &mut OpenFlight, out: &mut Vec<Op>) -> Result<(), NoRow> {
        if f.id.is_some() {
            return Ok(());
        }
        if f.heard.saturating_sub(f.start) < self.limits.min_secs {
            return Err(NoRow::Short);
        }
        let now = self.clock;
        let room = self.slots.room(key, now)
            && match &f.source {
                Some(s) => self.sources.room(s, now),
                None => self.relays.room(&key.0, now),
            };
        if !room {
            if !f.waited {
                f.waited = true;
                self.stats.waited += 1;
            }
            return Err(NoRow::NoRoom);
        }
        if self.next_id >= self.id_end {
            // The writer reserves ids before each batch; running out is a bug, counted.
            self.stats.dropped_no_id += 1;
            return Err(NoRow::NoId);
        }
        self.slots.take(key, now);
        match &f.source {
            Some(s) => self.sources.take(s, now),
            None => self.relays.take(&key.0, now),
        }
        let id = self.next_id;
        self.next_id += 1;
        out.push(Op::Open {
            id,
            callsign: key.1.clone(),
            model: f.model.clone(),
            relay: key.0.clone(),
            start: f.start,
        });
        let first = f.first;
        for (i, (at, fix)) in f.held.drain(..).enumerate() {
            out.push(Op::Sample {
                id,
                at,
                fix,
                first: first.unwrap_or(fix),
                totals: Totals {
                    samples: i as i64 + 1,
                    ..f.totals
                },
            });
            f.totals.samples = i as i64 + 1;
        }
        f.id = Some(id);
        Ok(())
    }

    /// Ends `f` at `end` (clamped to its longest), heard until `heard`: its row
    /// closes, or a held session gets its row first when it may, or none (counted).
    fn finish(&mut self, key: &Key, mut f: OpenFlight, end: i64, heard: i64, out: &mut Vec<Op>) {
        f.heard = f.heard.max(heard);
        match self.open(key, &mut f, out) {
            Ok(()) => {}
            Err(NoRow::Short) => {
                self.stats.too_short += 1;
                return;
            }
            Err(NoRow::NoRoom) => {
                self.stats.over_rate += 1;
                return;
            }
            Err(NoRow::NoId) => return,
        }
        if let Some(id) = f.id {
            // A single placed position: its speed unknown (the rule counts it slow).
            if let (false, Some((_, first))) = (f.dep_decided, f.dep) {
                f.totals.departure = logbook::airport_at(first, None);
            }
            // The last position, when placed, with the speed it came at.
            f.totals.arrival = f
                .last
                .and_then(|(_, fix)| logbook::airport_at(fix, f.last_speed));
            // Not before its last position (a report may come late), nor after its longest.
            let end = end.max(f.last.map_or(f.start, |(t, _)| t));
            out.push(Op::Close {
                id,
                end: end.clamp(f.start, f.start.saturating_add(self.limits.max_secs)),
                last: f.last.map(|(_, fix)| fix),
                totals: f.totals,
            });
        }
    }
}

/// Sizes of what [`Flights`] holds (what its bounds bound).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Flights with a row, open.
    pub open: usize,
    /// Sessions held without a row yet.
    pub held: usize,
    /// The most positions one held session keeps.
    pub most_positions: usize,
    /// Rate buckets kept (slots, sources, relays).
    pub buckets: usize,
}

/// The open flights and held sessions, keyed by (relay, callsign).
#[derive(Debug)]
pub struct Flights {
    open: HashMap<Key, OpenFlight>,
    max_open: usize,
    rows: Rows,
}

impl Flights {
    /// No flight open; ids from `next_id` on, without end (one writer per database;
    /// with several, give each blocks with [`Flights::add_ids`] instead); at most
    /// `max_open` flights open or held at once; the default [`Limits`].
    pub fn new(next_id: i64, max_open: usize) -> Flights {
        Flights {
            open: HashMap::new(),
            max_open,
            rows: Rows {
                limits: Limits::default(),
                next_id,
                id_end: i64::MAX,
                slots: Buckets::new(Limits::default().slot, max_open),
                sources: Buckets::new(Limits::default().source, max_open),
                relays: Buckets::new(Limits::default().relay, max_open),
                clock: i64::MIN,
                stats: FlightStats::default(),
            },
        }
    }

    /// No flight open and no id yet: ids come from [`Flights::add_ids`] (blocks the
    /// store reserved for this writer).
    pub fn with_id_blocks(max_open: usize) -> Flights {
        let mut f = Flights::new(0, max_open);
        f.rows.id_end = 0;
        f
    }

    /// The same with `limits` (each bucket table still at most `max_open` keys).
    pub fn with_limits(mut self, limits: Limits) -> Flights {
        let n = self.max_open;
        self.rows.limits = limits;
        self.rows.slots = Buckets::new(limits.slot, n);
        self.rows.sources = Buckets::new(limits.source, n);
        self.rows.relays = Buckets::new(limits.relay, n);
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.rows.limits
    }

    /// Ids left to give out.
    pub fn ids_left(&self) -> i64 {
        self.rows.id_end - self.rows.next_id
    }

    /// Gives this writer the ids `start .. start + n` (the ones left are dropped:
    /// blocks need not be contiguous).
    pub fn add_ids(&mut self, start: i64, n: i64) {
        self.rows.next_id = start;
        self.rows.id_end = start + n;
    }

    /// Flights with a row open now.
    pub fn open_count(&self) -> usize {
        self.open.values().filter(|f| f.id.is_some()).count()
    }

    /// Flights open and sessions held now.
    pub fn tracked(&self) -> usize {
        self.open.len()
    }

    /// What is held, for its bounds.
    pub fn held(&self) -> Held {
        let mut h = Held {
            buckets: self.rows.slots.len() + self.rows.sources.len() + self.rows.relays.len(),
            ..Held::default()
        };
        for f in self.open.values() {
            if f.id.is_some() {
                h.open += 1;
            } else {
                h.held += 1;
                h.most_positions = h.most_positions.max(f.held.len());
            }
        }
        h
    }

    /// What could not be recorded.
    pub fn stats(&self) -> FlightStats {
        self.rows.stats
    }

    /// Begins a held session (a row once it lasted and has room).
    fn begin(
        &mut self,
        key: Key,
        model: String,
        source: Option<String>,
        at: i64,
        out: &mut Vec<Op>,
    ) {
        if self.open.len() >= self.max_open {
            self.rows.stats.dropped_open_cap += 1;
            return;
        }
        let f = self.open.entry(key.clone()).or_insert(OpenFlight {
            id: None,
            model,
            source,
            start: at,
            heard: at,
            first: None,
            last: None,
            last_sample: None,
            taken: 0,
            totals: Totals::default(),
            held: Vec::new(),
            waited: false,
            dep: None,
            dep_decided: false,
            last_speed: None,
        });
        let _ = self.rows.open(&key, f, out);
    }

    /// Applies one report; the operations it needs go to `out`.
    pub fn apply(&mut self, r: Report, out: &mut Vec<Op>) {
        match r {
            Report::Began {
                callsign,
                model,
                relay,
                at,
                source,
            } => {
                self.rows.clock = self.rows.clock.max(at);
                let key = (relay, callsign);
                if let Some(f) = self.open.remove(&key) {
                    self.rows.finish(&key, f, at, at, out);
                }
                self.begin(key, model, source, at, out);
            }
            Report::Ended {
                callsign,
                relay,
                at,
            } => {
                self.rows.clock = self.rows.clock.max(at);
                let key = (relay, callsign);
                if let Some(f) = self.open.remove(&key) {
                    let end = f.last.map_or(at, |(t, _)| at.max(t));
                    self.rows.finish(&key, f, end, end, out);
                }
            }
            Report::Position {
                callsign,
                relay,
                at,
                fix,
            } => {
                self.rows.clock = self.rows.clock.max(at);
                let key = (relay, callsign);
                // FlightGear before its scenery loads (-9,999 ft, first at the
                // airport's reference point): the pilot is heard, nowhere yet.
                if !logbook::placed(fix) {
                    self.rows.stats.unplaced += 1;
                    if let Some(f) = self.open.get_mut(&key) {
                        if at >= f.start {
                            f.heard = f.heard.max(at);
                        }
                    }
                    return;
                }
                match self.open.get(&key) {
                    // A flight that lasted its longest ends at its last position;
                    // this one begins the next, with its model and source.
                    Some(f) if at.saturating_sub(f.start) >= self.rows.limits.max_secs => {
                        let f = self.open.remove(&key).expect("just seen");
                        let (model, source) = (f.model.clone(), f.source.clone());
                        let (end, heard) = (f.last.map_or(f.heard, |(t, _)| t), f.heard);
                        let had_row = f.id.is_some();
                        self.rows.finish(&key, f, end, heard, out);
                        if had_row {
                            self.rows.stats.split += 1;
                        }
                        self.begin(key.clone(), model, source, at, out);
                    }
                    Some(_) => {}
                    None => self.begin(key.clone(), UNKNOWN_MODEL.to_string(), None, at, out),
                }
                let Some(f) = self.open.get_mut(&key) else {
                    return;
                };
                if at < f.start {
                    self.rows.stats.out_of_order += 1;
                    return;
                }
                if let Some((t, prev)) = f.last {
                    if at < t {
                        self.rows.stats.out_of_order += 1;
                        return;
                    }
                    if f.id.is_none() && jumped(t, prev, at, fix) {
                        // A jump before the flight has a row: the client was
                        // still placing itself (or relocated at once); its track
                        // and departure begin here.
                        f.restart_track();
                        self.rows.stats.restarted += 1;
                    }
                }
                if let Some((t, prev)) = f.last {
                    let d = distance_nm(prev, fix);
                    let dt_h = at.saturating_sub(t) as f64 / 3600.0;
                    if dt_h > 0.0 && d / dt_h <= MAX_SPEED_KT {
                        f.totals.distance_nm += d;
                    }
                    f.totals.moving_s += logbook::moving_secs(t, prev, at, fix);
                    if let Some(kt) = logbook::speed_kt(t, prev, at, fix) {
                        f.last_speed = Some(kt);
                    }
                }
                if !f.dep_decided {
                    match f.dep {
                        None => f.dep = Some((at, fix)),
                        Some((t, first)) => {
                            if let Some(kt) = logbook::speed_kt(t, first, at, fix) {
                                f.totals.departure = logbook::airport_at(first, Some(kt));
                                f.dep_decided = true;
                                f.dep = None;
                            }
                        }
                    }
                }
                f.first.get_or_insert(fix);
                f.last = Some((at, fix));
                f.heard = f.heard.max(at);
                f.totals.max_alt_ft = Some(
                    f.totals
                        .max_alt_ft
                        .map_or(fix.alt_ft, |m| m.max(fix.alt_ft)),
                );
                if f.last_sample
                    .is_none_or(|s| at.saturating_sub(s) >= sample_every(f.taken))
                {
                    f.last_sample = Some(at);
                    f.taken += 1;
                    match f.id {
                        Some(id) => {
                            f.totals.samples += 1;
                            out.push(Op::Sample {
                                id,
                                at,
                                fix,
                                first: f.first.unwrap_or(fix),
                                totals: f.totals,
                            });
                        }
                        None => {
                            f.held.push((at, fix));
                            if f.held.len() > MAX_HELD {
                                // Every other one: still the first, still spread.
                                let mut i = 0;
                                f.held.retain(|_| {
                                    i += 1;
                                    i % 2 == 1
                                });
                            }
                        }
                    }
                }
                let _ = self.rows.open(&key, f, out);
            }
        }
    }

    /// Closes the flights of `relay` (a tracker connection that ended: its pilots'
    /// flights end at their last position), or every flight with `None` (shutdown).
    /// Held sessions that lasted get their row first when they may.
    pub fn close_relay(&mut self, relay: Option<&str>, at: i64, out: &mut Vec<Op>) {
        // A relay's end is a report too: it moves the buckets' clock.
        self.rows.clock = self.rows.clock.max(at);
        let keys: Vec<Key> = self
            .open
            .keys()
            .filter(|(r, _)| relay.is_none_or(|x| x == r))
            .cloned()
            .collect();
        for k in keys {
            if let Some(f) = self.open.remove(&k) {
                let end = f.last.map_or(at, |(t, _)| t);
                let heard = f.heard;
                self.rows.finish(&k, f, end, heard, out);
            }
        }
    }

    /// Closes flights with no report for `silence` seconds (a relay that stopped
    /// reporting without saying so), at their last position's time; gives held
    /// sessions that lasted their row when there is room now; forgets the rate
    /// buckets that are full again. `now` also moves the buckets' clock.
    pub fn close_silent(&mut self, now: i64, silence: i64, out: &mut Vec<Op>) {
        self.rows.clock = self.rows.clock.max(now);
        let stale: Vec<Key> = self
            .open
            .iter()
            .filter(|(_, f)| now.saturating_sub(f.heard) > silence)
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            if let Some(f) = self.open.remove(&k) {
                let end = f.heard;
                self.rows.finish(&k, f, end, end, out);
            }
        }
        for (k, f) in self.open.iter_mut() {
            if f.waited && f.id.is_none() {
                let _ = self.rows.open(k, f, out);
            }
        }
        let clock = self.rows.clock;
        self.rows.slots.prune(clock);
        self.rows.sources.prune(clock);
        self.rows.relays.prune(clock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(lat: f64, lon: f64, alt_ft: f64) -> Fix {
        Fix {
            lat,
            lon,
            alt_ft,
            heading: 90.0,
        }
    }

    fn began(cs: &str, model: &str, at: i64) -> Report {
        Report::Began {
            callsign: cs.into(),
            model: model.into(),
            relay: "r1".into(),
            at,
            source: None,
        }
    }

    /// Every session a row at once (what the log did before issue 20, item 1): the
    /// cases of what a flight holds.
    fn at_once(next_id: i64, max_open: usize) -> Flights {
        Flights::new(next_id, max_open).with_limits(Limits {
            min_secs: 0,
            ..Limits::default()
        })
    }

    fn pos(cs: &str, at: i64, f: Fix) -> Report {
        Report::Position {
            callsign: cs.into(),
            relay: "r1".into(),
            at,
            fix: f,
        }
    }

    #[test]
    fn a_flight_samples_every_ten_seconds_and_totals_its_distance_and_height() {
        let mut fl = at_once(1, 10);
        let mut out = Vec::new();
        fl.apply(began("TEST1", "c172p", 1000), &mut out);
        // One nautical mile is one minute of latitude: 1 nm per 10 s is 360 kt.
        for i in 0..=30 {
            let lat = 63.0 + f64::from(i) / 60.0 / 10.0;
            fl.apply(
                pos(
                    "TEST1",
                    1000 + i64::from(i),
                    fix(lat, -22.0, 1000.0 + f64::from(i)),
                ),
                &mut out,
            );
        }
        fl.apply(
            Report::Ended {
                callsign: "TEST1".into(),
                relay: "r1".into(),
                at: 1040,
            },
            &mut out,
        );
        let samples: Vec<i64> = out
            .iter()
            .filter_map(|o| match o {
                Op::Sample { at, .. } => Some(*at),
                _ => None,
            })
            .collect();
        assert_eq!(samples, [1000, 1010, 1020, 1030]);
        match out.last() {
            Some(Op::Close {
                id,
                end,
                last,
                totals,
            }) => {
                assert_eq!((*id, *end), (1, 1040));
                assert!((totals.distance_nm - 3.0).abs() < 0.01, "{totals:?}");
                assert_eq!(totals.max_alt_ft, Some(1030.0));
                assert_eq!(totals.samples, 4);
                assert_eq!(last.map(|f| f.alt_ft), Some(1030.0));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fl.open_count(), 0);
    }

    #[test]
    fn a_model_change_ends_one_flight_and_begins_the_next() {
        let mut fl = at_once(7, 10);
        let mut out = Vec::new();
        fl.apply(began("A", "c172p", 0), &mut out);
        fl.apply(pos("A", 5, fix(1.0, 1.0, 100.0)), &mut out);
        fl.apply(began("A", "ufo", 60), &mut out);
        let kinds: Vec<String> = out
            .iter()
            .map(|o| match o {
                Op::Open { id, model, .. } => format!("open {id} {model}"),
                Op::Sample { id, .. } => format!("sample {id}"),
                Op::Close { id, end, .. } => format!("close {id} {end}"),
            })
            .collect();
        assert_eq!(
            kinds,
            ["open 7 c172p", "sample 7", "close 7 60", "open 8 ufo"]
        );
    }

    #[test]
    fn teleports_do_not_count_as_distance_and_positions_without_a_start_open_a_flight() {
        let mut fl = at_once(1, 10);
        let mut out = Vec::new();
        fl.apply(pos("B", 0, fix(0.0, 0.0, 0.0)), &mut out);
        assert!(matches!(&out[0], Op::Open { model, .. } if model == UNKNOWN_MODEL));
        // 600 nm in 10 s: relocated, not flown.
        fl.apply(pos("B", 10, fix(10.0, 0.0, 0.0)), &mut out);
        fl.apply(pos("B", 5, fix(10.0, 0.0, 0.0)), &mut out);
        assert_eq!(fl.stats().out_of_order, 1);
        fl.close_relay(Some("r1"), 100, &mut out);
        match out.last() {
            Some(Op::Close { end, totals, .. }) => {
                assert_eq!(*end, 10, "ends at its last position");
                assert_eq!(totals.distance_nm, 0.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_flight_with_no_position_yet_is_not_silent_until_its_start_is_old() {
        // Before the fix, a flight that had only begun counted as silent forever ago
        // and was closed at the writer's first flush.
        let mut fl = at_once(1, 10);
        let mut out = Vec::new();
        fl.apply(began("A", "c172p", 1000), &mut out);
        out.clear();
        fl.close_silent(1005, 300, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(fl.open_count(), 1);
        fl.close_silent(1301, 300, &mut out);
        assert!(matches!(out[..], [Op::Close { end: 1000, .. }]), "{out:?}");
    }

    #[test]
    fn ids_come_from_the_blocks_given() {
        let mut fl = Flights::with_id_blocks(10).with_limits(Limits {
            min_secs: 0,
            ..Limits::default()
        });
        let mut out = Vec::new();
        fl.apply(began("A", "c172p", 0), &mut out);
        assert!(out.is_empty(), "no id yet: nothing opened");
        assert_eq!(fl.stats().dropped_no_id, 1);
        fl.add_ids(100, 2);
        for cs in ["A", "B", "C"] {
            fl.apply(began(cs, "c172p", 1), &mut out);
        }
        let ids: Vec<i64> = out
            .iter()
            .filter_map(|o| match o {
                Op::Open { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        assert_eq!(ids, [100, 101]);
        assert_eq!(fl.ids_left(), 0);
    }

    #[test]
    fn open_flights_are_bounded_and_silent_ones_close() {
        let mut fl = at_once(1, 2);
        let mut out = Vec::new();
        for (i, cs) in ["A", "B", "C"].iter().enumerate() {
            fl.apply(pos(cs, i as i64, fix(0.0, 0.0, 0.0)), &mut out);
        }
        assert_eq!(fl.open_count(), 2);
        assert_eq!(fl.stats().dropped_open_cap, 1);
        out.clear();
        fl.close_silent(400, 300, &mut out);
        assert_eq!(fl.open_count(), 0);
        assert_eq!(out.len(), 2);
    }

    fn from(cs: &str, model: &str, at: i64, source: Option<&str>) -> Report {
        Report::Began {
            callsign: cs.into(),
            model: model.into(),
            relay: "r1".into(),
            at,
            source: source.map(str::to_string),
        }
    }

    fn ended(cs: &str, at: i64) -> Report {
        Report::Ended {
            callsign: cs.into(),
            relay: "r1".into(),
            at,
        }
    }

    fn opens(out: &[Op]) -> Vec<(i64, String, i64)> {
        out.iter()
            .filter_map(|o| match o {
                Op::Open {
                    id,
                    callsign,
                    start,
                    ..
                } => Some((*id, callsign.clone(), *start)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_model_flip_flop_leaves_no_flight() {
        // Issue 20, item 1: one socket alternating two models at 500 datagrams a
        // second made a flight each; 20 s of it made 10,000.
        let mut fl = Flights::new(1, 1000);
        let mut out = Vec::new();
        for i in 0..10_000 {
            let at = 1000 + i / 500;
            let model = if i % 2 == 0 { "c172p" } else { "ufo" };
            fl.apply(from("FLIP", model, at, Some("192.0.2.1")), &mut out);
            if i % 50 == 0 {
                fl.apply(pos("FLIP", at, fix(1.0, 1.0, 100.0)), &mut out);
            }
        }
        fl.close_relay(None, 1020, &mut out);
        assert!(out.is_empty(), "{:?}", &out[..3]);
        assert_eq!(fl.stats().too_short, 10_000);
        assert_eq!(fl.tracked(), 0);
    }

    #[test]
    fn a_session_becomes_a_flight_once_it_lasted_with_its_start_and_positions() {
        let mut fl = Flights::new(1, 10);
        let mut out = Vec::new();
        fl.apply(from("A", "c172p", 1000, Some("192.0.2.1")), &mut out);
        for t in 1000..1060 {
            fl.apply(pos("A", t, fix(1.0, 1.0, t as f64)), &mut out);
        }
        assert!(out.is_empty(), "held for a minute: {out:?}");
        assert_eq!(fl.held().held, 1);
        fl.apply(pos("A", 1060, fix(1.0, 1.0, 1060.0)), &mut out);
        assert_eq!(opens(&out), [(1, "A".to_string(), 1000)], "with its start");
        let samples: Vec<(i64, i64)> = out
            .iter()
            .filter_map(|o| match o {
                Op::Sample { at, totals, .. } => Some((*at, totals.samples)),
                _ => None,
            })
            .collect();
        assert_eq!(
            samples,
            [
                (1000, 1),
                (1010, 2),
                (1020, 3),
                (1030, 4),
                (1040, 5),
                (1050, 6),
                (1060, 7)
            ]
        );
        fl.apply(ended("A", 1065), &mut out);
        assert!(
            matches!(out.last(), Some(Op::Close { id: 1, end: 1065, totals, .. }) if totals.samples == 7)
        );
    }

    #[test]
    fn new_flights_of_one_slot_come_at_the_slot_rate() {
        // A model change every 61 s for 10 hours: every session lasted, one slot.
        let mut fl = Flights::new(1, 10);
        let mut out = Vec::new();
        let (t0, mut sessions) = (1_000_000, 0);
        for k in 0..590 {
            let at = t0 + 61 * k;
            let model = if k % 2 == 0 { "c172p" } else { "ufo" };
            fl.apply(from("A", model, at, Some("192.0.2.1")), &mut out);
            for s in (0..=60).step_by(10) {
                fl.apply(pos("A", at + s, fix(1.0, 1.0, 1.0)), &mut out);
            }
            sessions += 1;
        }
        fl.close_relay(None, t0 + 61 * 590, &mut out);
        let n = opens(&out).len() as u64;
        let slot = Limits::default().slot;
        let most = u64::from(slot.burst) + (61 * 590 / slot.every) as u64;
        assert!(n <= most && n >= most - 2, "{n} rows, at most {most}");
        assert_eq!(fl.stats().over_rate + n, sessions);
    }

    #[test]
    fn a_source_gets_its_rate_and_a_relay_reporting_without_one_its_own() {
        for (source, rate) in [
            (Some("192.0.2.1"), Limits::default().source),
            (None, Limits::default().relay),
        ] {
            // 1,000 callsigns from one source (or one relay through the tracker),
            // every session lasting 10 minutes.
            let mut fl = Flights::new(1, 10_000);
            let mut out = Vec::new();
            for i in 0..1000 {
                fl.apply(from(&format!("C{i}"), "c172p", 1000, source), &mut out);
            }
            for t in (1000..=1600).step_by(10) {
                for i in 0..1000 {
                    fl.apply(pos(&format!("C{i}"), t, fix(1.0, 1.0, 1.0)), &mut out);
                }
                fl.close_silent(t, 600, &mut out);
            }
            // From the minute each lasted: the burst at once, then one an interval;
            // those that waited open with their own start.
            let n = opens(&out).len() as i64;
            let most = i64::from(rate.burst) + 540 / rate.every + 1;
            assert!(
                n <= most && n >= most - 2,
                "{source:?}: {n} rows, at most {most}"
            );
            assert!(opens(&out).iter().all(|o| o.2 == 1000));
            assert_eq!(
                fl.stats().waited,
                1000 - u64::from(rate.burst),
                "{source:?}"
            );
            fl.close_relay(None, 1600, &mut out);
            assert_eq!(fl.stats().over_rate, 1000 - n as u64, "{source:?}");
        }
    }

    #[test]
    fn a_flight_ends_after_a_day_the_next_begins_and_long_tracks_are_stored_sparser() {
        let mut fl = Flights::new(1, 10);
        let mut out = Vec::new();
        let t0 = 1_000_000;
        fl.apply(from("LONG", "c172p", t0, Some("192.0.2.1")), &mut out);
        for s in (0..=30 * 3600).step_by(10) {
            fl.apply(pos("LONG", t0 + s, fix(1.0, 1.0, 1.0)), &mut out);
        }
        fl.close_relay(None, t0 + 30 * 3600, &mut out);
        let mut flights: Vec<(i64, i64, i64)> = Vec::new();
        for o in &out {
            if let Op::Close {
                id, end, totals, ..
            } = o
            {
                flights.push((*id, *end, totals.samples));
            }
        }
        assert_eq!(
            opens(&out),
            [
                (1, "LONG".to_string(), t0),
                (2, "LONG".to_string(), t0 + 86_400)
            ]
        );
        assert_eq!(
            flights[0].1,
            t0 + 86_390,
            "at its last position before the day ended"
        );
        assert_eq!(flights[0].2, 2610, "10 s for 2 h, then 20, 40 and 80 s");
        assert_eq!(flights[1].1, t0 + 30 * 3600);
        assert_eq!(fl.stats().split, 1);
        assert_eq!(
            [0, 719, 720, 1439, 1440, 2159, 2160, 5000].map(sample_every),
            [10, 10, 20, 20, 40, 40, 80, 80]
        );
    }

    #[test]
    fn a_flight_gets_its_airports_and_moving_time_as_its_positions_come() {
        // Heathrow to Gatwick (logbook's track), one position every 10 s, held the
        // first minute as every session is.
        let track = crate::logbook::tests::egll_to_egkk();
        let want = crate::logbook::of_track(&track);
        assert_eq!((want.departure, want.arrival), (Some("EGLL"), Some("EGKK")));
        let t0 = 1_000_000;
        let mut fl = Flights::new(1, 10);
        let mut out = Vec::new();
        fl.apply(from("GA1", "c172p", t0, Some("192.0.2.1")), &mut out);
        for (t, f) in &track {
            fl.apply(pos("GA1", t0 + t, *f), &mut out);
        }
        fl.apply(ended("GA1", t0 + track.last().unwrap().0), &mut out);
        // The departure is known from the row's first written position on.
        let first = out.iter().find_map(|o| match o {
            Op::Sample { totals, .. } => Some(*totals),
            _ => None,
        });
        assert_eq!(first.and_then(|t| t.departure), Some("EGLL"));
        match out.last() {
            Some(Op::Close { totals, .. }) => {
                assert_eq!(totals.departure, Some("EGLL"));
                assert_eq!(totals.arrival, Some("EGKK"));
                assert_eq!(totals.moving_s, want.moving_s);
            }
            other => panic!("{other:?}"),
        }
        // Joined in mid-air and left in cruise: neither.
        let mut out = Vec::new();
        fl.apply(from("GA2", "c172p", t0, Some("192.0.2.2")), &mut out);
        for (t, f) in &track[50..90] {
            fl.apply(pos("GA2", t0 + t, *f), &mut out);
        }
        fl.close_relay(None, t0 + 5000, &mut out);
        match out.last() {
            Some(Op::Close { totals, .. }) => {
                assert_eq!((totals.departure, totals.arrival), (None, None));
                assert_eq!(
                    totals.moving_s,
                    crate::logbook::of_track(&track[50..90]).moving_s
                );
                assert!(totals.moving_s >= track[89].0 - track[50].0 - 10);
            }
            other => panic!("{other:?}"),
        }
    }
}
