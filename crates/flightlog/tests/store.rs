//! The flight log's store, the same cases against SQLite (a temporary file) and a
//! real PostgreSQL (a throwaway cluster on a Unix socket, started and stopped here:
//! Debian's `postgresql` package, which `scripts/ci-deps` installs).

use flightlog::flights::{Fix, Flights, Limits, Op, Report};
use flightlog::store::{
    track_rows, Backend, FlightQuery, Rank, ServerSample, Store, MAX_TRACK_POINTS,
};

#[path = "pg/mod.rs"]
mod pg;
use pg::Pg;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-flightlog-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fix(lat: f64, alt_ft: f64) -> Fix {
    Fix {
        lat,
        lon: -22.0,
        alt_ft,
        heading: 360.0 * lat.fract(),
    }
}

fn at_once() -> Limits {
    Limits {
        min_secs: 0,
        ..Limits::default()
    }
}

/// A flight of `secs` seconds at one position per second, 360 kt north.
fn fly(fl: &mut Flights, cs: &str, model: &str, start: i64, secs: i64) -> Vec<Op> {
    let mut ops = Vec::new();
    fl.apply(
        Report::Began {
            callsign: cs.into(),
            model: model.into(),
            relay: "lobby".into(),
            at: start,
            source: None,
        },
        &mut ops,
    );
    for i in 0..=secs {
        let lat = 63.0 + i as f64 / 600.0;
        fl.apply(
            Report::Position {
                callsign: cs.into(),
                relay: "lobby".into(),
                at: start + i,
                fix: fix(lat, 1000.0 + i as f64),
            },
            &mut ops,
        );
    }
    fl.apply(
        Report::Ended {
            callsign: cs.into(),
            relay: "lobby".into(),
            at: start + secs,
        },
        &mut ops,
    );
    ops
}

async fn every_case(url: &str, backend: Backend) {
    let store = Store::open(url).await.unwrap();
    assert_eq!(store.backend(), backend);
    assert_eq!(store.next_flight_id().await.unwrap(), 1);
    // Ids in blocks the store reserves for this writer, as lobby's writer takes them.
    // Every session a row at once: these flights are short (the rule that holds
    // them back is tested in flights.rs and tests/flights.rs).
    let mut fl = Flights::with_id_blocks(100).with_limits(at_once());
    fl.add_ids(store.reserve_flight_ids(100).await.unwrap(), 100);
    // A 60 s flight: 7 samples (every 10 s), 6 nm, highest 1060 ft.
    let ops = fly(&mut fl, "TEST1", "c172p", 1_000_000, 60);
    store.apply(&ops).await.unwrap();
    let f = store.flight(1).await.unwrap().expect("flight 1");
    assert_eq!(
        (f.callsign.as_str(), f.model.as_str(), f.relay.as_str()),
        ("TEST1", "c172p", "lobby")
    );
    assert_eq!((f.start, f.end), (1_000_000, Some(1_000_060)));
    assert_eq!(f.samples, 7);
    assert!((f.distance_nm - 6.0).abs() < 0.01, "{f:?}");
    assert_eq!(f.max_alt_ft, Some(1060.0));
    assert_eq!(f.first.map(|x| x.alt_ft), Some(1000.0));
    assert_eq!(f.last.map(|x| x.alt_ft), Some(1060.0));
    let (track, stored) = store.track(1, MAX_TRACK_POINTS).await.unwrap();
    assert_eq!((track.len(), stored), (7, 7));
    assert_eq!(track[1].0, 1_000_010);
    assert!((track[6].1.lat - 63.1).abs() < 1e-9);

    // More flights, two callsigns and two models; newest first, paged by id.
    for (i, (cs, model)) in [
        ("TEST1", "ufo"),
        ("TEST2", "c172p"),
        ("TEST1", "c172p"),
        ("TEST2", "ufo"),
    ]
    .iter()
    .enumerate()
    {
        let ops = fly(&mut fl, cs, model, 1_000_100 + 100 * i as i64, 30);
        store.apply(&ops).await.unwrap();
    }
    let page = |before, limit| FlightQuery {
        limit,
        before,
        ..FlightQuery::default()
    };
    let ids = |v: Vec<flightlog::store::FlightRow>| v.iter().map(|f| f.id).collect::<Vec<_>>();
    assert_eq!(ids(store.flights(&page(None, 2)).await.unwrap()), [5, 4]);
    assert_eq!(ids(store.flights(&page(Some(4), 2)).await.unwrap()), [3, 2]);
    assert_eq!(ids(store.flights(&page(Some(2), 2)).await.unwrap()), [1]);
    let q = FlightQuery {
        callsign: Some("TEST2".into()),
        limit: 10,
        ..FlightQuery::default()
    };
    assert_eq!(ids(store.flights(&q).await.unwrap()), [5, 3]);
    let q = FlightQuery {
        since: Some(1_000_220),
        until: Some(1_000_320),
        limit: 10,
        ..FlightQuery::default()
    };
    assert_eq!(ids(store.flights(&q).await.unwrap()), [4, 3]);

    // A callsign's totals.
    let t = store.callsign("TEST1", 2_000_000, 20, 20).await.unwrap();
    assert_eq!(t.flights, 3);
    assert!((t.hours - 120.0 / 3600.0).abs() < 1e-9, "{t:?}");
    assert!((t.distance_nm - 12.0).abs() < 0.05, "{t:?}");
    assert_eq!(t.aircraft[0].0, "c172p");
    assert_eq!(t.aircraft[0].1, 2);
    // The models listed are bounded; the totals still count every flight.
    let one = store.callsign("TEST1", 2_000_000, 1, 1).await.unwrap();
    assert_eq!((one.flights, one.aircraft.len()), (3, 1));
    assert_eq!(one.aircraft[0], t.aircraft[0]);
    let none = store.callsign("NOBODY", 2_000_000, 20, 20).await.unwrap();
    assert_eq!((none.flights, none.hours, none.aircraft.len()), (0, 0.0, 0));

    // A flight left open by a process that stopped ends at its last sample.
    let mut ops = Vec::new();
    fl.apply(
        Report::Position {
            callsign: "GONE".into(),
            relay: "lobby".into(),
            at: 1_001_000,
            fix: fix(10.0, 5.0),
        },
        &mut ops,
    );
    fl.apply(
        Report::Position {
            callsign: "GONE".into(),
            relay: "lobby".into(),
            at: 1_001_020,
            fix: fix(10.0, 5.0),
        },
        &mut ops,
    );
    store.apply(&ops).await.unwrap();
    assert_eq!(store.close_orphans().await.unwrap(), 1);
    let gone = store.flight(6).await.unwrap().unwrap();
    assert_eq!(
        (gone.model.as_str(), gone.end),
        ("unknown", Some(1_001_020))
    );

    // Servers: first and last seen, the name kept when a later sample has none.
    let sample = |at, players, name: Option<&str>| ServerSample {
        address: "192.0.2.7:27015".into(),
        gamedir: "valve".into(),
        name: name.map(str::to_string),
        at,
        players,
        max: 16,
        map: "crossfire".into(),
    };
    store
        .record_servers(&[
            sample(1_000_000, 3, Some("Black Mesa")),
            sample(1_000_300, 5, None),
        ])
        .await
        .unwrap();
    let (first, last, name, samples) = store
        .server_history("192.0.2.7:27015", 0, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first, last, name.as_deref()),
        (1_000_000, 1_000_300, Some("Black Mesa"))
    );
    assert_eq!(samples.iter().map(|s| s.1).collect::<Vec<_>>(), [3, 5]);
    // At most `limit` samples, the newest, in time order.
    let (_, _, _, newest) = store
        .server_history("192.0.2.7:27015", 0, 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(newest.iter().map(|s| s.0).collect::<Vec<_>>(), [1_000_300]);
    assert!(store
        .server_history("192.0.2.8:1", 0, 10)
        .await
        .unwrap()
        .is_none());

    // Retention: flights that ended before the cut go with their positions.
    let n = store.prune(1_000_250).await.unwrap();
    assert_eq!(n, 3, "flights 1, 2 and 3 ended before the cut");
    assert!(store.track(1, 10).await.unwrap().0.is_empty());
    assert_eq!(store.flights(&page(None, 10)).await.unwrap().len(), 3);
    store.close().await;

    // Reopened: the migrations are not run twice and ids continue.
    let again = Store::open(url).await.unwrap();
    assert_eq!(again.next_flight_id().await.unwrap(), 7);
    // Two writers of one database (two lobby processes) never get the same ids, and
    // none of the block the first writer held.
    let other = Store::open(url).await.unwrap();
    let a = again.reserve_flight_ids(1000).await.unwrap();
    let b = other.reserve_flight_ids(1000).await.unwrap();
    assert!(a >= 101 && b >= 101, "{a} {b}");
    assert!(a + 1000 <= b || b + 1000 <= a, "overlapping blocks {a} {b}");
    other.close().await;
    again.close().await;
}

/// Writes one flight of `n` positions, one every 10 s from `t0`; returns its id.
async fn long_flight(store: &Store, cs: &str, t0: i64, n: i64) -> i64 {
    let id = store.reserve_flight_ids(1).await.unwrap();
    let mut ops = vec![Op::Open {
        id,
        callsign: cs.into(),
        model: "c172p".into(),
        relay: "lobby".into(),
        start: t0,
    }];
    let first = fix(10.0, 0.0);
    for i in 0..n {
        ops.push(Op::Sample {
            id,
            at: t0 + 10 * i,
            fix: fix(10.0 + i as f64 / 10_000.0, i as f64),
            first,
            totals: flightlog::Totals {
                samples: i + 1,
                ..flightlog::Totals::default()
            },
        });
    }
    store.apply(&ops).await.unwrap();
    id
}

/// Issue 20, item 8: a long flight's track comes back downsampled to at most the
/// points asked for (2,000 at most), evenly chosen, its first and last kept; the
/// database chooses the same rows as `track_rows`.
async fn long_tracks(url: &str) {
    let store = Store::open(url).await.unwrap();
    let n = 4321;
    let t0 = 1_500_000;
    let id = long_flight(&store, "LONG1", t0, n).await;
    for max in [2, 3, 7, 1000, MAX_TRACK_POINTS, 5000, 10_000] {
        let (track, stored) = store.track(id, max).await.unwrap();
        assert_eq!(stored, n);
        let want: Vec<i64> = track_rows(n, max.min(MAX_TRACK_POINTS))
            .iter()
            .map(|i| t0 + 10 * i)
            .collect();
        let got: Vec<i64> = track.iter().map(|p| p.0).collect();
        assert_eq!(got, want, "max {max}");
        assert_eq!(
            got.len() as i64,
            n.min(max).min(MAX_TRACK_POINTS),
            "max {max}"
        );
        assert_eq!((got[0], *got.last().unwrap()), (t0, t0 + 10 * (n - 1)));
    }
    // A short track is whole; one position is one point.
    let short = long_flight(&store, "SHORT", t0, 1).await;
    let (track, stored) = store.track(short, 2).await.unwrap();
    assert_eq!((track.len(), stored), (1, 1));
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_holds_the_flight_log() {
    let dir = tmp("sqlite");
    let url = format!("sqlite:{}", dir.join("log.sqlite").display());
    every_case(&url, Backend::Sqlite).await;
    assert!(dir.join("log.sqlite").exists(), "created on first open");
    long_tracks(&url).await;
    let url = format!("sqlite:{}", dir.join("logbook.sqlite").display());
    logbook(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_holds_the_flight_log() {
    let pg = Pg::start("cases");
    let started = Instant::now();
    every_case(pg.url(), Backend::Postgres).await;
    long_tracks(pg.url()).await;
    logbook(pg.url()).await;
    assert!(started.elapsed() < Duration::from_secs(600));
}

#[test]
fn downsampled_tracks_keep_the_first_and_last_and_spread_evenly() {
    assert_eq!(track_rows(5, 10), [0, 1, 2, 3, 4]);
    assert_eq!(track_rows(10, 2), [0, 9]);
    assert_eq!(track_rows(10, 4), [0, 3, 6, 9]);
    for n in [3, 10, 2001, 4321, 86_400] {
        for max in [2, 3, 10, 1999, 2000] {
            let r = track_rows(n, max);
            assert_eq!(r.len() as i64, n.min(max), "{n} {max}");
            assert_eq!((r[0], *r.last().unwrap()), (0, n - 1), "{n} {max}");
            // Evenly: no gap wider than twice the mean one.
            let widest = r.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
            assert!(
                widest <= 2 * (n - 1) / (r.len() as i64 - 1).max(1) + 1,
                "{n} {max}: {widest}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flight_list_names_only_the_filters_given_and_a_callsign_uses_its_index() {
    // Issue 20, item 8: `($1 IS NULL OR callsign = $1)` made SQLite scan the whole
    // table for a callsign (the index was never used).
    let dir = tmp("plan");
    let url = format!("sqlite:{}", dir.join("log.sqlite").display());
    let store = Store::open(&url).await.unwrap();
    let q = |callsign: Option<&str>, since, until, before| FlightQuery {
        callsign: callsign.map(str::to_string),
        since,
        until,
        limit: 50,
        before,
    };
    let by_cs = q(Some("TEST1"), None, None, None);
    let plan = store.query_plan(&by_cs).await.unwrap().join("; ");
    assert!(
        plan.contains("USING INDEX flights_by_callsign_id (callsign=?)") && !plan.contains("SCAN"),
        "{plan}"
    );
    assert!(
        !plan.contains("TEMP B-TREE"),
        "no sort: the index gives the order: {plan}"
    );
    let paged = q(Some("TEST1"), Some(1), Some(2), Some(100));
    let plan = store.query_plan(&paged).await.unwrap().join("; ");
    assert!(
        plan.contains("USING INDEX flights_by_callsign_id (callsign=? AND id<?)"),
        "{plan}"
    );
    assert_eq!(
        flightlog::store::flights_sql(&paged),
        "SELECT id, callsign, model, relay, start_time, end_time, start_lat, start_lon, start_alt_ft, end_lat, end_lon, end_alt_ft, distance_nm, max_alt_ft, samples, moving_s, departure, arrival, aircraft_name, aircraft_class FROM flights WHERE callsign = $1 AND (end_time IS NULL OR end_time >= $2) AND start_time <= $3 AND id < $4 ORDER BY id DESC LIMIT $5"
    );
    assert!(flightlog::store::flights_sql(&q(None, None, None, None))
        .ends_with("FROM flights ORDER BY id DESC LIMIT $1"));
    assert!(
        flightlog::store::flights_sql(&q(None, None, Some(5), Some(9)))
            .ends_with("WHERE start_time <= $1 AND id < $2 ORDER BY id DESC LIMIT $3")
    );
    // With every filter but the callsign, the newest come by id without a sort.
    let plan = store
        .query_plan(&q(None, None, None, Some(10)))
        .await
        .unwrap()
        .join("; ");
    assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_never_make_the_writer_wait() {
    // Issue 20, item 8: SQLite's one connection served the API's reads and the
    // writer, so a few slow reads held every write back. Now the reads have their own
    // pool (WAL lets them read while the writer commits).
    let dir = tmp("readers");
    let url = format!("sqlite:{}", dir.join("log.sqlite").display());
    let store = Store::open(&url).await.unwrap();
    let id = long_flight(&store, "LONG1", 1_000_000, 200_000).await;
    let read_once = Instant::now();
    store.track(id, 2000).await.unwrap();
    let one_read = read_once.elapsed();
    // Readers as many as the pool holds, and as many waiting, each reading again and
    // again for a while.
    let until = Instant::now() + (one_read * 8).max(Duration::from_millis(1500));
    let readers: Vec<_> = (0..2 * flightlog::store::READ_CONNECTIONS)
        .map(|_| {
            let s = store.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while Instant::now() < until {
                    s.track(id, 2000).await.unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    tokio::time::sleep(one_read / 2).await;
    // Meanwhile the writer commits small batches, each within a fraction of one read.
    let mut fl =
        Flights::new(store.reserve_flight_ids(1000).await.unwrap(), 100).with_limits(at_once());
    let mut slowest = Duration::ZERO;
    let mut writes = 0;
    while Instant::now() < until {
        let ops = fly(
            &mut fl,
            &format!("W{writes}"),
            "c172p",
            2_000_000 + writes * 100,
            5,
        );
        let t = Instant::now();
        store.apply(&ops).await.unwrap();
        slowest = slowest.max(t.elapsed());
        writes += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut reads = 0;
    for r in readers {
        reads += r.await.unwrap();
    }
    assert!(
        reads >= 2 * flightlog::store::READ_CONNECTIONS as i64,
        "{reads} reads"
    );
    assert!(writes >= 5, "{writes} writes");
    assert!(
        slowest < one_read.max(Duration::from_millis(50)) * 2,
        "a write waited {slowest:?}; one read takes {one_read:?}"
    );
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_urls_are_refused_with_the_accepted_forms() {
    let e = Backend::of("mysql://x").unwrap_err().to_string();
    assert!(
        e.contains("sqlite:PATH") && e.contains("postgres://"),
        "{e}"
    );
    assert_eq!(
        flightlog::store::redact("postgres://lobby:secret@db/x"),
        "postgres://lobby:***@db/x"
    );
    assert_eq!(
        flightlog::store::redact("postgres://lobby@db/x"),
        "postgres://lobby@db/x"
    );
    assert_eq!(
        flightlog::store::redact("postgres://db/x?sslmode=require&password=s3cret"),
        "postgres://db/x?sslmode=require&password=***"
    );
    assert_eq!(
        flightlog::store::redact("sqlite:x.sqlite"),
        "sqlite:x.sqlite"
    );
}

/// Latitude, longitude, altitude in feet.
type Place = (f64, f64, f64);

/// Positions every 10 s along `legs` (each `(n, from, to)` with `(lat, lon, alt_ft)`
/// ends), as reports of `cs` from `t0`, then its end.
fn track_reports(cs: &str, model: &str, t0: i64, legs: &[(i64, Place, Place)]) -> Vec<Report> {
    let mut v = vec![Report::Began {
        callsign: cs.into(),
        model: model.into(),
        relay: "lobby".into(),
        at: t0,
        source: None,
    }];
    let mut t = t0;
    for &(n, a, b) in legs {
        for i in 0..n {
            let k = i as f64 / (n - 1).max(1) as f64;
            v.push(Report::Position {
                callsign: cs.into(),
                relay: "lobby".into(),
                at: t,
                fix: Fix {
                    lat: a.0 + (b.0 - a.0) * k,
                    lon: a.1 + (b.1 - a.1) * k,
                    alt_ft: a.2 + (b.2 - a.2) * k,
                    heading: 90.0,
                },
            });
            t += 10;
        }
    }
    v.push(Report::Ended {
        callsign: cs.into(),
        relay: "lobby".into(),
        at: t - 10,
    });
    v
}

const EGLL: Place = (51.4710, -0.4545, 90.0);
const EGKK: Place = (51.1565, -0.1616, 205.0);
const CRUISE: Place = (51.30, -0.30, 4000.0);

/// Issue 21, section 3: departure, arrival, moving time and aircraft name stored,
/// a callsign's airports, leaderboards.
async fn logbook(url: &str) {
    let store = Store::open(url).await.unwrap();
    let mut fl = Flights::with_id_blocks(100).with_limits(at_once());
    fl.add_ids(store.reserve_flight_ids(100).await.unwrap(), 100);
    let t0 = 3_000_000;
    let mut ops = Vec::new();
    // LOG1: parked 1 minute at EGLL, to EGKK, parked 1 minute (20 minutes).
    for r in track_reports(
        "LOG1",
        "Aircraft/c172p/Models/c172p.xml",
        t0,
        &[
            (6, EGLL, EGLL),
            (60, EGLL, CRUISE),
            (54, CRUISE, EGKK),
            (6, EGKK, EGKK),
        ],
    ) {
        fl.apply(r, &mut ops);
    }
    // LOG1 again: EGKK, left in cruise (10 minutes); LOG2 twice, short.
    for r in track_reports(
        "LOG1",
        "Aircraft/c172p/Models/c172p.xml",
        t0 + 2000,
        &[(3, EGKK, EGKK), (60, EGKK, CRUISE)],
    ) {
        fl.apply(r, &mut ops);
    }
    for k in 0..2 {
        for r in track_reports("LOG2", "ufo", t0 + 4000 + 1000 * k, &[(10, CRUISE, CRUISE)]) {
            fl.apply(r, &mut ops);
        }
    }
    store.apply(&ops).await.unwrap();
    let rows = store.callsign_flights("LOG1", 10).await.unwrap();
    assert_eq!(rows.len(), 2);
    let (second, first) = (&rows[0], &rows[1]);
    assert_eq!(
        (first.departure.as_deref(), first.arrival.as_deref()),
        (Some("EGLL"), Some("EGKK"))
    );
    assert_eq!(
        (second.departure.as_deref(), second.arrival.as_deref()),
        (Some("EGKK"), None)
    );
    // Moving: all but the parked minute at each end (and the leg joins).
    let m = first.moving_s.unwrap();
    assert!((1080..=1140).contains(&m), "{m}");
    assert_eq!(first.aircraft_name.as_deref(), Some("Cessna 172P Skyhawk"));
    assert_eq!(first.aircraft_class.as_deref(), Some("single_prop"));
    assert_eq!(store.flight(first.id).await.unwrap().as_ref(), Some(first));
    assert_eq!(
        store.callsign_flights("LOG1", 1).await.unwrap()[0].id,
        second.id
    );
    let t = store.callsign("LOG1", t0 + 10_000, 20, 20).await.unwrap();
    assert_eq!(
        t.airports,
        [("EGKK".to_string(), 1, 1), ("EGLL".to_string(), 1, 0)]
    );
    let t = store.callsign("LOG1", t0 + 10_000, 20, 1).await.unwrap();
    assert_eq!(t.airports.len(), 1);
    // Leaderboards: LOG1 has the hours, LOG2 as many flights; a period counts the
    // flights that started in it.
    let now = t0 + 10_000;
    let by_hours = store.leaderboard(None, Rank::Hours, 10, now).await.unwrap();
    // (The other cases' flights share the database: only these callsigns'.)
    let names = |v: &[flightlog::store::Leader]| {
        v.iter()
            .filter(|l| l.callsign.starts_with("LOG"))
            .map(|l| (l.callsign.clone(), l.flights, l.secs))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&by_hours),
        [
            ("LOG1".to_string(), 2, 1250 + 620),
            ("LOG2".to_string(), 2, 180)
        ]
    );
    let since = store
        .leaderboard(Some(t0 + 1000), Rank::Flights, 10, now)
        .await
        .unwrap();
    assert_eq!(
        names(&since),
        [("LOG2".to_string(), 2, 180), ("LOG1".to_string(), 1, 620)]
    );
    assert_eq!(
        store
            .leaderboard(Some(t0), Rank::Flights, 1, now)
            .await
            .unwrap()[0]
            .callsign,
        "LOG1",
        "as many flights, more hours"
    );
    assert!(store
        .leaderboard(Some(now), Rank::Hours, 10, now)
        .await
        .unwrap()
        .is_empty());
    // The API's boards come from a cache for a minute: the same rows 59 s later, read
    // again at 60 s (open flights counted up to the reading).
    let cached = store
        .leaderboard_cached(None, Rank::Hours, 10, now)
        .await
        .unwrap();
    assert_eq!(cached, by_hours);
    // A new open flight of LOG3 from t0: the longest of all once it is read.
    let id = store.reserve_flight_ids(1).await.unwrap();
    store
        .apply(&[Op::Open {
            id,
            callsign: "LOG3".into(),
            model: "c172p".into(),
            relay: "lobby".into(),
            start: t0,
        }])
        .await
        .unwrap();
    let later = store
        .leaderboard_cached(None, Rank::Hours, 10, now + 59)
        .await
        .unwrap();
    assert_eq!(later, by_hours, "from the cache");
    let fresh = store
        .leaderboard_cached(None, Rank::Hours, 10, now + 60)
        .await
        .unwrap();
    assert_eq!(names(&fresh)[0].0, "LOG3", "read again");
    if store.backend() == Backend::Sqlite {
        for rank in [Rank::Hours, Rank::Flights] {
            let plan = store.leaderboard_plan(rank).await.unwrap().join("; ");
            assert!(
                plan.contains("USING COVERING INDEX flights_by_start_callsign (start_time>?)"),
                "{plan}"
            );
        }
    }
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_of_before_the_logbook_opens_with_its_flights_unknown() {
    // A file written by the migrations before 0004, with a flight in it, is migrated
    // in place: its flights keep every value and get NULL (unknown) logbook columns.
    use sqlx::Row;
    let dir = tmp("old");
    let url = format!("sqlite:{}?mode=rwc", dir.join("old.sqlite").display());
    let old = dir.join("migrations");
    std::fs::create_dir_all(&old).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    for f in [
        "0001_flight_log.sql",
        "0002_flight_ids.sql",
        "0003_callsign_pages.sql",
    ] {
        std::fs::copy(src.join(f), old.join(f)).unwrap();
    }
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::migrate::Migrator::new(old.as_path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO flights (id, callsign, model, relay, start_time, end_time, distance_nm, samples) VALUES (1, 'OLD1', 'c172p', 'lobby', 100, 200, 1.5, 3)")
        .execute(&pool)
        .await
        .unwrap();
    let n: i64 = sqlx::query("SELECT COUNT(*) AS n FROM _sqlx_migrations")
        .fetch_one(&pool)
        .await
        .unwrap()
        .try_get("n")
        .unwrap();
    assert_eq!(n, 3);
    pool.close().await;
    let store = Store::open(&url).await.unwrap();
    let f = store.flight(1).await.unwrap().unwrap();
    assert_eq!(
        (f.callsign.as_str(), f.end, f.distance_nm),
        ("OLD1", Some(200), 1.5)
    );
    assert_eq!(
        (f.moving_s, f.departure, f.arrival, f.aircraft_name),
        (None, None, None, None)
    );
    assert_eq!(
        store.callsign("OLD1", 300, 10, 10).await.unwrap().airports,
        []
    );
    assert_eq!(
        store.leaderboard(None, Rank::Hours, 10, 300).await.unwrap()[0].secs,
        100
    );
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
