//! The flight log's report ingestion (`flightlog::Flights::apply`), fed a hostile
//! sequence of reports decoded from the bytes: sessions beginning and ending,
//! positions, relays gone and silence, from a few callsigns, relays and sources, at
//! times that go forward, stall or go back; limits drawn from the bytes too. Never
//! panics, and the caps hold (issue 20, item 1):
//!
//! - every row opened is closed once, at last; samples and closes name open rows;
//! - rows per pilot slot come at most at the slot's rate (its burst, then one per
//!   interval over the time the reports span), rows per relay at most at the rate of
//!   the relay's bucket and its sources' buckets together;
//! - a flight lasts at most `max_secs`, stores at most the positions its sampling
//!   schedule allows, in time order;
//! - what is held stays within its bounds (sessions, positions, buckets).
//!
//! `flightlog`'s `tests/flights.rs` runs this body on random bytes as a property test.

use flightlog::flights::{
    sample_every, Fix, Flights, Limits, Op, Report, MAX_HELD, MAX_SAMPLE_EVERY, TRACK_STEP,
};
use flightlog::share::Rate;
use std::collections::{HashMap, HashSet};

const CALLSIGNS: [&str; 6] = ["A", "B", "C", "D", "E", "F"];
const RELAYS: [&str; 3] = ["r0", "r1", "r2"];
const SOURCES: [&str; 3] = ["192.0.2.1", "192.0.2.2", "2001:db8::"];
const MODELS: [&str; 2] = ["c172p", "ufo"];
/// Flights open or held at once in the harness (small, so the cap is reached).
const MAX_OPEN: usize = 8;

/// The most positions a flight of `d` seconds can store ([`sample_every`]): a run of
/// equal intervals at a time (at most five runs), not one interval at a time (up to
/// 2,610 for a day, per row closed; about 7% of the fuzzer's time before issue 30).
pub fn most_samples(d: i64) -> i64 {
    let (mut t, mut k) = (0i64, 1i64);
    loop {
        let step = sample_every(k);
        // The interval stays `step` up to the next multiple of TRACK_STEP positions,
        // and for ever from the longest interval on.
        let run_end = if step >= MAX_SAMPLE_EVERY {
            i64::MAX
        } else {
            (k / TRACK_STEP + 1) * TRACK_STEP
        };
        let n = ((d - t) / step).clamp(0, run_end - k);
        t += n * step;
        k += n;
        if k < run_end {
            return k;
        }
    }
}

fn limits(b: &[u8; 4]) -> Limits {
    let rate = |x: u8, unit: i64| Rate {
        burst: u32::from(x % 4) + 1,
        every: (i64::from(x / 4) + 1) * unit,
    };
    Limits {
        min_secs: i64::from(b[0] % 8) * 15,
        max_secs: 300 + i64::from(b[0] / 8) * 600,
        slot: rate(b[1], 30),
        source: rate(b[2], 5),
        relay: rate(b[3], 2),
    }
}

/// Input: 4 bytes of limits, then 4 bytes per step (what, who, when, where).
pub fn run(data: &[u8]) {
    let Some((head, steps)) = data.split_first_chunk::<4>() else {
        return;
    };
    let lim = if head[0] == 0xff {
        Limits::default()
    } else {
        limits(head)
    };
    let mut fl = Flights::new(1, MAX_OPEN).with_limits(lim);
    let mut out: Vec<Op> = Vec::new();
    let mut t: i64 = 1_800_000_000;
    // The latest report time, as `Flights` keeps it (from the first report, not the
    // starting time: a first report may come before it).
    let mut clock = i64::MIN;
    // What each step's operations are checked against.
    let mut open: HashMap<i64, (String, String, i64)> = HashMap::new();
    let mut closed: HashSet<i64> = HashSet::new();
    let mut samples: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut opens_by_slot: HashMap<(String, String), Vec<i64>> = HashMap::new();
    let mut opens_by_relay: HashMap<String, Vec<i64>> = HashMap::new();
    let mut last_id = 0;
    for (i, s) in steps.chunks_exact(4).enumerate() {
        let (what, who, when, r#where) = (s[0], s[1], s[2], s[3]);
        // Time: mostly forward by 0-63 s, sometimes minutes, sometimes back.
        t += match when >> 6 {
            0 | 1 => i64::from(when & 63),
            2 => i64::from(when & 63) * 60,
            _ => -i64::from(when & 63),
        };
        let callsign = CALLSIGNS[usize::from(who % 6)].to_string();
        let relay = RELAYS[usize::from((who / 6) % 3)].to_string();
        let source = match who / 18 {
            0 => None,
            n => Some(SOURCES[usize::from(n - 1) % 3].to_string()),
        };
        let fix = Fix {
            lat: f64::from(r#where) / 4.0 - 30.0,
            lon: f64::from(what) - 100.0,
            alt_ft: f64::from(r#where) * 100.0,
            heading: 0.0,
        };
        match what % 16 {
            0..=3 => fl.apply(
                Report::Began {
                    callsign,
                    model: MODELS[usize::from(what / 16) % 2].to_string(),
                    relay,
                    at: t,
                    source,
                },
                &mut out,
            ),
            4 | 5 => fl.apply(
                Report::Ended {
                    callsign,
                    relay,
                    at: t,
                },
                &mut out,
            ),
            6..=13 => fl.apply(
                Report::Position {
                    callsign,
                    relay,
                    at: t,
                    fix,
                },
                &mut out,
            ),
            14 => fl.close_relay(Some(&relay), t, &mut out),
            _ => fl.close_silent(t, i64::from(r#where) * 4, &mut out),
        }
        clock = clock.max(t);
        let last = i + 1 == steps.len() / 4;
        if last {
            fl.close_relay(None, t, &mut out);
        }
        for op in out.drain(..) {
            match op {
                Op::Open {
                    id,
                    callsign,
                    relay,
                    start,
                    ..
                } => {
                    assert!(id > last_id, "ids only grow: {id} after {last_id}");
                    last_id = id;
                    assert!(start <= clock, "a row starts by the latest report");
                    opens_by_slot
                        .entry((relay.clone(), callsign.clone()))
                        .or_default()
                        .push(clock);
                    opens_by_relay.entry(relay.clone()).or_default().push(clock);
                    open.insert(id, (relay, callsign, start));
                }
                Op::Sample { id, at, .. } => {
                    let (_, _, start) = open.get(&id).expect("a sample of an open row");
                    assert!(at >= *start, "a sample before its flight's start");
                    let v = samples.entry(id).or_default();
                    assert!(v.last().is_none_or(|&p| at > p), "samples in time order");
                    v.push(at);
                }
                Op::Close {
                    id, end, totals, ..
                } => {
                    let (_, _, start) = open.remove(&id).expect("a close of an open row");
                    assert!(closed.insert(id), "closed twice");
                    let d = end - start;
                    assert!((0..=lim.max_secs).contains(&d), "lasted {d} s");
                    let n = samples.get(&id).map_or(0, Vec::len) as i64;
                    assert_eq!(totals.samples, n, "the totals count the samples");
                    assert!(n <= most_samples(d), "{n} samples in {d} s");
                }
            }
        }
        let h = fl.held();
        assert!(h.open + h.held <= MAX_OPEN, "{h:?}");
        assert!(h.most_positions <= MAX_HELD, "{h:?}");
        assert!(h.buckets <= 3 * MAX_OPEN, "{h:?}");
    }
    assert!(open.is_empty(), "rows left open at the end: {open:?}");
    assert_eq!(fl.tracked(), 0);
    // Rows at most at their buckets' rates over the span of the reports.
    let allowed = |r: Rate, times: &[i64]| -> usize {
        let span = times.last().unwrap_or(&0) - times.first().unwrap_or(&0);
        r.burst as usize + (span / r.every) as usize + 1
    };
    for (slot, times) in &opens_by_slot {
        assert!(
            times.len() <= allowed(lim.slot, times),
            "{} rows for {slot:?} at {times:?}",
            times.len()
        );
    }
    for (relay, times) in &opens_by_relay {
        let most = allowed(lim.relay, times) + SOURCES.len() * allowed(lim.source, times);
        assert!(times.len() <= most, "{} rows for {relay}", times.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzzer's two stops of session 10, kept out of the corpus (which minimising
    /// may thin): the harness's clock started at the input's base time, and
    /// `close_relay` did not move the rate buckets' clock.
    #[test]
    fn the_fuzzers_stops_stay_fixed() {
        run(include_bytes!(
            "../regressions/flightlog_reports/harness-clock-from-first-report.bin"
        ));
        run(include_bytes!(
            "../regressions/flightlog_reports/close-relay-moves-the-clock.bin"
        ));
    }

    #[test]
    fn the_sampling_schedule_bounds_a_day_to_about_2610_positions() {
        assert_eq!(most_samples(0), 1);
        assert_eq!(most_samples(10), 2);
        assert_eq!(most_samples(7190), 720);
        assert_eq!(most_samples(86_400), 2610);
    }

    #[test]
    fn most_samples_by_runs_is_the_interval_by_interval_count() {
        let one_by_one = |d: i64| {
            let (mut t, mut k) = (0i64, 1i64);
            while t + sample_every(k) <= d {
                t += sample_every(k);
                k += 1;
            }
            k
        };
        for d in (-5..=40_000).chain((40_000..=400_000).step_by(97)) {
            assert_eq!(most_samples(d), one_by_one(d), "{d} s");
        }
    }

    #[test]
    fn a_flip_flop_stream_opens_nothing_under_the_default_limits() {
        // Default limits (0xff); one pilot from one source, model flips every second.
        let mut d = vec![0xff, 0, 0, 0];
        for i in 0..2000u32 {
            d.extend([if i % 2 == 0 { 0 } else { 16 }, 18, 1, 0]);
        }
        run(&d);
    }
}
