//! The flight log end to end, over real sockets, the same cases on SQLite and on a
//! throwaway PostgreSQL cluster:
//! - `lobby tracker` accepts a listed relay's tracker connection and records what
//!   `lobby relay --tracker` reports (real FlightGear datagrams from two pilots),
//!   and refuses a relay it does not list;
//! - a relay with its own `[history]` records its local pilots in-process;
//! - `/api/flights`, `/api/flights/{id}` (GeoJSON), `/api/callsigns/{callsign}`
//!   read them back.

mod common;

#[path = "../../flightlog/tests/pg/mod.rs"]
mod pg;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn tmpdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-history-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(http: SocketAddr, path: &str) -> (u16, Value) {
    let (code, body) = http_get(http, path);
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body:?}"));
    (code, v)
}

/// Polls `path` until `pred` holds (bounded), returns the body.
fn json_until(http: SocketAddr, path: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let (code, v) = json(http, path);
        if code == 200 && pred(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "never {what}: {code} {v}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Two pilots fly at BIKF for `secs` seconds (10 Hz), then fall silent.
fn fly_two(relay: SocketAddr, secs: u64) {
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), relay).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), relay, &a, "BRAVO");
    for _ in 0..secs * 10 {
        a.send_to(&pos("ALPHA", BIKF, 100), relay).unwrap();
        b.send_to(&pos("BRAVO", BIKF, 100), relay).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn every_case(db: &str, tag: &str) {
    let dir = tmpdir(tag);
    // The tracker: only 127.0.0.1 is listed, as `edge`.
    let t = Lobby::start(
        &[
            "tracker",
            "--listen",
            "127.0.0.1:0",
            "--allow",
            "edge=127.0.0.1",
            "--database-url",
            db,
            "--http",
            "127.0.0.1:0",
        ],
        2,
    );
    let thttp = t.addr("http", "tcp");
    let taddr = t.addr("tracker", "tcp");
    // The relay reports to it; it also keeps its own log (SQLite) of its local pilots.
    let cfg = dir.join("relay.toml");
    std::fs::write(
        &cfg,
        format!(
            "[relay]\nname = \"edge\"\nlisten = [\"127.0.0.1:0\"]\ntelnet = []\nplayer_expiry = 2\ntracker = \"{taddr}\"\n\
             [history]\ndatabase_url = \"sqlite:{}\"\n",
            dir.join("local.sqlite").display()
        ),
    )
    .unwrap();
    let r = Lobby::start(
        &[
            "relay",
            "--config",
            cfg.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
        ],
        2,
    );
    let rhttp = r.addr("http", "tcp");
    fly_two(r.addr("relay", "udp"), 12);
    // Both ended (player_expiry 2 s, then a feed take, then the tracker's OK).
    for http in [thttp, rhttp] {
        let v = json_until(http, "/api/flights", "two ended flights", |v| {
            let f = v["flights"].as_array().unwrap();
            f.len() == 2 && f.iter().all(|x| x["end"].is_i64())
        });
        for f in v["flights"].as_array().unwrap() {
            assert_eq!(f["relay"], "edge", "{f}");
            assert!(f["duration_s"].as_i64().unwrap() >= 10, "{f}");
            assert!(f["samples"].as_i64().unwrap() >= 1, "{f}");
            let p = &f["start_position"];
            assert!((p["lat"].as_f64().unwrap() - BIKF.0).abs() < 1e-3, "{f}");
            assert!(
                (p["alt_ft"].as_f64().unwrap() - 3280.8).abs() < 1.0,
                "1000 m: {f}"
            );
        }
    }
    // Through the tracker the model is fgms's short name; in-process, the path.
    let (_, v) = json(thttp, "/api/flights?callsign=ALPHA");
    assert_eq!(v["flights"][0]["model"], "c172p");
    let (_, v) = json(rhttp, "/api/flights?callsign=ALPHA");
    assert_eq!(v["flights"][0]["model"], "Aircraft/c172p/Models/c172p.xml");
    // One flight with its track as GeoJSON.
    let id = v["flights"][0]["id"].as_i64().unwrap();
    let (code, f) = json(rhttp, &format!("/api/flights/{id}"));
    assert_eq!(code, 200, "{f}");
    assert_eq!(f["track"]["type"], "Feature");
    assert_eq!(f["track"]["geometry"]["type"], "LineString");
    let c = &f["track"]["geometry"]["coordinates"][0];
    assert!(
        (c[0].as_f64().unwrap() - BIKF.1).abs() < 1e-3
            && (c[1].as_f64().unwrap() - BIKF.0).abs() < 1e-3,
        "{c}"
    );
    // A callsign's totals.
    let (_, cs) = json(thttp, "/api/callsigns/BRAVO");
    assert_eq!(cs["flights"], 1, "{cs}");
    assert_eq!(cs["aircraft"][0]["model"], "c172p");
    // Errors name what is wrong.
    assert_eq!(json(thttp, "/api/flights?limit=0").0, 400);
    assert_eq!(json(thttp, "/api/flights/999999").0, 404);
    assert_eq!(json(thttp, "/api/flights/x").0, 400);
    // Paging: one per page.
    let (_, p1) = json(thttp, "/api/flights?limit=1");
    let before = p1["next_before"].as_i64().expect("a next page");
    let (_, p2) = json(thttp, &format!("/api/flights?limit=1&before={before}"));
    assert_ne!(p1["flights"][0]["id"], p2["flights"][0]["id"]);
    r.stop();
    t.stop();
}

#[test]
fn flights_are_recorded_through_the_tracker_and_in_process_on_sqlite() {
    let dir = tmpdir("sqlite-db");
    every_case(
        &format!("sqlite:{}", dir.join("tracker.sqlite").display()),
        "sqlite",
    );
}

#[test]
fn flights_are_recorded_through_the_tracker_and_in_process_on_postgresql() {
    let pg = pg::Pg::start("lobby-history");
    every_case(pg.url(), "postgres");
}

#[test]
fn a_relay_the_tracker_does_not_list_is_refused_and_counted() {
    let dir = tmpdir("refuse");
    let t = Lobby::start(
        &[
            "tracker",
            "--listen",
            "127.0.0.1:0",
            "--allow",
            "other=192.0.2.1",
            "--database-url",
            &format!("sqlite:{}", dir.join("t.sqlite").display()),
            "--http",
            "127.0.0.1:0",
        ],
        2,
    );
    let mut s = TcpStream::connect(t.addr("tracker", "tcp")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"\0V20151207 0.13.10 relay.example.org mpserver99\0")
        .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    assert_eq!(
        String::from_utf8_lossy(&got),
        "ERROR FGTracker is closing your connection\0"
    );
    let (_, st) = json(t.addr("http", "tcp"), "/stats");
    assert_eq!(st["tracker"]["refused_ident"], 1, "{st}");
    assert!(
        t.stderr().contains("refused a relay not listed"),
        "{}",
        t.stderr()
    );
    t.stop();
}
