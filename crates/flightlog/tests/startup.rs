//! What a real FlightGear client sends while it starts on the ground (issue 29,
//! item 5): `testdata/fg/c172p_TEST1_onground_startup.lpf`, FlightGear 2020.3.16
//! started at BIKF. Its first datagram is at the airport's reference point at
//! -9,999 ft, the next ones jump to the runway, still at -9,999 ft, until the
//! scenery has loaded (about 8 s) and the altitude is the ground's. None of that
//! may become the flight's start, its track's first point or its departure.

use flightlog::{Fix, Flights, Op, Report};
use std::path::PathBuf;

fn data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fg")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The capture's positions with their times (whole seconds after the listener
/// started, from the index).
fn startup() -> Vec<(i64, Fix)> {
    let b = data("c172p_TEST1_onground_startup.lpf");
    let index = String::from_utf8(data("c172p_TEST1_onground_startup.index.tsv")).unwrap();
    let times: Vec<f64> = index
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').nth(1).unwrap().parse().unwrap())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let n = u32::from_be_bytes(b[i..i + 4].try_into().unwrap()) as usize;
        let d = &b[i + 4..i + 4 + n];
        i += 4 + n;
        let m = fgmp::Message::decode(d).unwrap();
        let fgmp::message::Body::Position(p) = m.body else {
            panic!("not a position")
        };
        let g = fgmp::geo::from_ecef(p.position);
        let fix = Fix {
            lat: g.lat_deg,
            lon: g.lon_deg,
            alt_ft: g.alt_m * fgmp::geo::FEET_PER_METRE,
            heading: 0.0,
        };
        out.push((times[out.len()] as i64, fix));
    }
    assert_eq!(out.len(), times.len());
    out
}

#[test]
fn the_capture_is_what_the_note_says() {
    let s = startup();
    assert!((s[0].1.alt_ft - -9999.0).abs() < 0.01, "{:?}", s[0]);
    assert!(s[1..]
        .iter()
        .any(|(_, f)| (f.alt_ft - -9999.0).abs() < 0.01));
    let runway = s.iter().rfind(|(_, f)| f.alt_ft < -2000.0).unwrap().1;
    let jump = fgmp::geo::great_circle_nm(s[0].1.lat, s[0].1.lon, runway.lat, runway.lon);
    assert!(
        jump > 0.4,
        "{jump} nm from the reference point to the runway"
    );
    let placed = s.iter().find(|(_, f)| f.alt_ft > -2000.0).unwrap();
    assert!((placed.1.alt_ft - 145.5).abs() < 1.0, "{placed:?}");
}

#[test]
fn a_client_starting_on_the_ground_begins_its_flight_at_the_airport() {
    let s = startup();
    let t0 = 1_800_000_000;
    let mut fl = Flights::new(1, 10);
    let mut out = Vec::new();
    fl.apply(
        Report::Began {
            callsign: "TEST1".into(),
            model: "Aircraft/c172p/Models/c172p.xml".into(),
            relay: "r1".into(),
            at: t0 + s[0].0,
            source: Some("127.0.0.1".into()),
        },
        &mut out,
    );
    // The capture, then the aircraft sits on the runway for two minutes and
    // takes off to the west, 90 kt and 500 ft/min.
    let mut reports: Vec<(i64, Fix)> = s.clone();
    let (last_t, runway) = *s.last().unwrap();
    for k in 1..=120 {
        reports.push((last_t + k, runway));
    }
    for k in 1..=300 {
        let nm = 90.0 * k as f64 / 3600.0;
        let mut f = runway;
        f.lon -= nm / (60.0 * runway.lat.to_radians().cos());
        f.alt_ft += 500.0 * k as f64 / 60.0;
        reports.push((last_t + 120 + k, f));
    }
    for (t, f) in &reports {
        fl.apply(
            Report::Position {
                callsign: "TEST1".into(),
                relay: "r1".into(),
                at: t0 + t,
                fix: *f,
            },
            &mut out,
        );
    }
    let elevation = airports::table().get("BIKF").unwrap().elevation_ft.unwrap() as f64;
    let samples: Vec<(Fix, Fix, flightlog::Totals)> = out
        .iter()
        .filter_map(|o| match o {
            Op::Sample {
                fix, first, totals, ..
            } => Some((*fix, *first, *totals)),
            _ => None,
        })
        .collect();
    let (fix, first, totals) = samples[0];
    for f in [fix, first] {
        assert!(
            (f.alt_ft - elevation).abs() <= 50.0,
            "{f:?} at BIKF, {elevation} ft"
        );
    }
    assert!(
        samples.iter().all(|(f, _, _)| f.alt_ft > 0.0),
        "no sample below the ground"
    );
    assert_eq!(totals.departure, Some("BIKF"));
    let st = fl.stats();
    assert!(st.unplaced >= 20, "{st:?}");
}

#[test]
fn a_jump_before_the_row_opens_begins_the_track_again() {
    // Placed positions that jump (a client still placing itself at a real
    // altitude, or relocated at once): the track starts after the jump.
    let t0 = 1_800_000_000;
    let mut fl = Flights::new(1, 10);
    let mut out = Vec::new();
    let at = |lat: f64, lon: f64| Fix {
        lat,
        lon,
        alt_ft: 150.0,
        heading: 0.0,
    };
    let report = |t: i64, f: Fix| Report::Position {
        callsign: "TEST1".into(),
        relay: "r1".into(),
        at: t0 + t,
        fix: f,
    };
    // Ten seconds at Heathrow, then at Keflavik for ever after.
    for t in 0..10 {
        fl.apply(report(t, at(51.47, -0.4543)), &mut out);
    }
    for t in 10..200 {
        fl.apply(report(t, at(63.985, -22.605)), &mut out);
    }
    let firsts: Vec<Fix> = out
        .iter()
        .filter_map(|o| match o {
            Op::Sample { first, fix, .. } => {
                assert!(fix.lat > 60.0, "{fix:?}");
                Some(*first)
            }
            _ => None,
        })
        .collect();
    assert!(!firsts.is_empty());
    assert!(firsts.iter().all(|f| f.lat > 60.0), "{firsts:?}");
    assert_eq!(fl.stats().restarted, 1);
}
