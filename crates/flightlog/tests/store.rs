//! The flight log's store, the same cases against SQLite (a temporary file) and a
//! real PostgreSQL (a throwaway cluster on a Unix socket, started and stopped here:
//! Debian's `postgresql` package, which `scripts/ci-deps` installs).

use flightlog::flights::{Fix, Flights, Op, Report};
use flightlog::store::{Backend, FlightQuery, ServerSample, Store};

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

/// A flight of `secs` seconds at one position per second, 360 kt north.
fn fly(fl: &mut Flights, cs: &str, model: &str, start: i64, secs: i64) -> Vec<Op> {
    let mut ops = Vec::new();
    fl.apply(
        Report::Began {
            callsign: cs.into(),
            model: model.into(),
            relay: "lobby".into(),
            at: start,
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
    let mut fl = Flights::with_id_blocks(100);
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
    let track = store.track(1).await.unwrap();
    assert_eq!(track.len(), 7);
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
    let t = store.callsign("TEST1", 2_000_000).await.unwrap();
    assert_eq!(t.flights, 3);
    assert!((t.hours - 120.0 / 3600.0).abs() < 1e-9, "{t:?}");
    assert!((t.distance_nm - 12.0).abs() < 0.05, "{t:?}");
    assert_eq!(t.aircraft[0].0, "c172p");
    assert_eq!(t.aircraft[0].1, 2);

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
        .server_history("192.0.2.7:27015", 0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first, last, name.as_deref()),
        (1_000_000, 1_000_300, Some("Black Mesa"))
    );
    assert_eq!(samples.iter().map(|s| s.1).collect::<Vec<_>>(), [3, 5]);
    assert!(store
        .server_history("192.0.2.8:1", 0)
        .await
        .unwrap()
        .is_none());

    // Retention: flights that ended before the cut go with their positions.
    let n = store.prune(1_000_250).await.unwrap();
    assert_eq!(n, 3, "flights 1, 2 and 3 ended before the cut");
    assert!(store.track(1).await.unwrap().is_empty());
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_holds_the_flight_log() {
    let dir = tmp("sqlite");
    let url = format!("sqlite:{}", dir.join("log.sqlite").display());
    every_case(&url, Backend::Sqlite).await;
    assert!(dir.join("log.sqlite").exists(), "created on first open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_holds_the_flight_log() {
    let pg = Pg::start("cases");
    let started = Instant::now();
    every_case(pg.url(), Backend::Postgres).await;
    assert!(started.elapsed() < Duration::from_secs(600));
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
