//! From what relays report to flights: pure (times come in as Unix seconds, no
//! database). A flight is one callsign flying one model on one relay, from its
//! session's start to its end (the pilot left, or changed model or callsign).
//! [`Flights::apply`] turns each [`Report`] into the database operations ([`Op`])
//! the store runs; open flights live here, bounded.

use std::collections::HashMap;

/// One position: degrees, feet, degrees true.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fix {
    /// Latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
    /// Altitude, feet.
    pub alt_ft: f64,
    /// Heading, degrees true.
    pub heading: f64,
}

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

/// A flight's running totals.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// Nautical miles flown (between consecutive positions).
    pub distance_nm: f64,
    /// Highest altitude seen, feet.
    pub max_alt_ft: Option<f64>,
    /// Positions stored.
    pub samples: i64,
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

/// Fastest ground speed believed between two positions, knots: a faster jump (a
/// teleport, a relocation in the simulator) is not counted as distance flown.
pub const MAX_SPEED_KT: f64 = 2000.0;

/// Seconds between stored positions of one flight.
pub const SAMPLE_EVERY: i64 = 10;

/// Model recorded for a flight whose session start was not seen (a position from a
/// relay whose CONNECT came before the log started).
pub const UNKNOWN_MODEL: &str = "unknown";

#[derive(Debug, Clone)]
struct OpenFlight {
    id: i64,
    /// Its start, or its last position's time: what silence is counted from.
    heard: i64,
    first: Option<Fix>,
    last: Option<(i64, Fix)>,
    last_sample: Option<i64>,
    totals: Totals,
}

/// Counters of what could not be recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlightStats {
    /// Flights not opened: `max_open` were open.
    pub dropped_open_cap: u64,
    /// Reports with a time before their flight's last one (kept out of order).
    pub out_of_order: u64,
    /// Flights not opened: no id was left (the writer reserves enough before each batch).
    pub dropped_no_id: u64,
}

/// The open flights, keyed by (relay, callsign).
#[derive(Debug)]
pub struct Flights {
    open: HashMap<(String, String), OpenFlight>,
    /// Ids this writer may give out: `next_id .. id_end`.
    next_id: i64,
    id_end: i64,
    max_open: usize,
    stats: FlightStats,
}

/// Great-circle distance between two fixes, nautical miles (a sphere of mean radius).
pub fn distance_nm(a: Fix, b: Fix) -> f64 {
    const R_NM: f64 = 3440.065;
    let (p1, p2) = (a.lat.to_radians(), b.lat.to_radians());
    let dp = p2 - p1;
    let dl = (b.lon - a.lon).to_radians();
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * R_NM * h.sqrt().min(1.0).asin()
}

impl Flights {
    /// No flight open; ids from `next_id` on, without end (one writer per database;
    /// with several, give each blocks with [`Flights::add_ids`] instead); at most
    /// `max_open` flights open at once.
    pub fn new(next_id: i64, max_open: usize) -> Flights {
        Flights {
            open: HashMap::new(),
            next_id,
            id_end: i64::MAX,
            max_open,
            stats: FlightStats::default(),
        }
    }

    /// No flight open and no id yet: ids come from [`Flights::add_ids`] (blocks the
    /// store reserved for this writer).
    pub fn with_id_blocks(max_open: usize) -> Flights {
        Flights {
            id_end: 0,
            next_id: 0,
            ..Flights::new(0, max_open)
        }
    }

    /// Ids left to give out.
    pub fn ids_left(&self) -> i64 {
        self.id_end - self.next_id
    }

    /// Gives this writer the ids `start .. start + n` (the ones left are dropped:
    /// blocks need not be contiguous).
    pub fn add_ids(&mut self, start: i64, n: i64) {
        self.next_id = start;
        self.id_end = start + n;
    }

    /// Flights open now.
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// What could not be recorded.
    pub fn stats(&self) -> FlightStats {
        self.stats
    }

    fn open_flight(
        &mut self,
        key: (String, String),
        model: &str,
        at: i64,
        out: &mut Vec<Op>,
    ) -> Option<&mut OpenFlight> {
        if self.open.len() >= self.max_open {
            self.stats.dropped_open_cap += 1;
            return None;
        }
        if self.next_id >= self.id_end {
            // The writer reserves ids before each batch; running out is a bug, counted.
            self.stats.dropped_no_id += 1;
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        out.push(Op::Open {
            id,
            callsign: key.1.clone(),
            model: model.to_string(),
            relay: key.0.clone(),
            start: at,
        });
        let f = self.open.entry(key).or_insert(OpenFlight {
            id,
            heard: at,
            first: None,
            last: None,
            last_sample: None,
            totals: Totals::default(),
        });
        Some(f)
    }

    fn close(f: OpenFlight, end: i64, out: &mut Vec<Op>) {
        out.push(Op::Close {
            id: f.id,
            end,
            last: f.last.map(|(_, fix)| fix),
            totals: f.totals,
        });
    }

    /// Applies one report; the operations it needs go to `out`.
    pub fn apply(&mut self, r: Report, out: &mut Vec<Op>) {
        match r {
            Report::Began {
                callsign,
                model,
                relay,
                at,
            } => {
                let key = (relay, callsign);
                if let Some(f) = self.open.remove(&key) {
                    Flights::close(f, at, out);
                }
                self.open_flight(key, &model, at, out);
            }
            Report::Ended {
                callsign,
                relay,
                at,
            } => {
                if let Some(f) = self.open.remove(&(relay, callsign)) {
                    let end = f.last.map_or(at, |(t, _)| at.max(t));
                    Flights::close(f, end, out);
                }
            }
            Report::Position {
                callsign,
                relay,
                at,
                fix,
            } => {
                let key = (relay, callsign);
                if !self.open.contains_key(&key)
                    && self
                        .open_flight(key.clone(), UNKNOWN_MODEL, at, out)
                        .is_none()
                {
                    return;
                }
                let Some(f) = self.open.get_mut(&key) else {
                    return;
                };
                if let Some((t, prev)) = f.last {
                    if at < t {
                        self.stats.out_of_order += 1;
                        return;
                    }
                    let d = distance_nm(prev, fix);
                    let dt_h = (at - t) as f64 / 3600.0;
                    if dt_h > 0.0 && d / dt_h <= MAX_SPEED_KT {
                        f.totals.distance_nm += d;
                    }
                }
                f.first.get_or_insert(fix);
                f.last = Some((at, fix));
                f.heard = at;
                f.totals.max_alt_ft = Some(
                    f.totals
                        .max_alt_ft
                        .map_or(fix.alt_ft, |m| m.max(fix.alt_ft)),
                );
                if f.last_sample.is_none_or(|s| at - s >= SAMPLE_EVERY) {
                    f.last_sample = Some(at);
                    f.totals.samples += 1;
                    out.push(Op::Sample {
                        id: f.id,
                        at,
                        fix,
                        first: f.first.unwrap_or(fix),
                        totals: f.totals,
                    });
                }
            }
        }
    }

    /// Closes the flights of `relay` (a tracker connection that ended: its pilots'
    /// flights end at their last position), or every flight with `None` (shutdown).
    pub fn close_relay(&mut self, relay: Option<&str>, at: i64, out: &mut Vec<Op>) {
        let keys: Vec<(String, String)> = self
            .open
            .keys()
            .filter(|(r, _)| relay.is_none_or(|x| x == r))
            .cloned()
            .collect();
        for k in keys {
            if let Some(f) = self.open.remove(&k) {
                let end = f.last.map_or(at, |(t, _)| t);
                Flights::close(f, end, out);
            }
        }
    }

    /// Closes flights with no report for `silence` seconds (a relay that stopped
    /// reporting without saying so), at their last position's time.
    pub fn close_silent(&mut self, now: i64, silence: i64, out: &mut Vec<Op>) {
        let stale: Vec<(String, String)> = self
            .open
            .iter()
            .filter(|(_, f)| now - f.heard > silence)
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            if let Some(f) = self.open.remove(&k) {
                let end = f.heard;
                Flights::close(f, end, out);
            }
        }
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
        }
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
        let mut fl = Flights::new(1, 10);
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
        let mut fl = Flights::new(7, 10);
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
        let mut fl = Flights::new(1, 10);
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
        let mut fl = Flights::new(1, 10);
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
        let mut fl = Flights::with_id_blocks(10);
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
        let mut fl = Flights::new(1, 2);
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
}
