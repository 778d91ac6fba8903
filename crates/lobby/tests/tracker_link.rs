//! `lobby relay --tracker`: the relay reports its pilots to a tracker as fgms
//! 0.13.10 does. The tracker here is a TCP listener on 127.0.0.1 port 0 driven by
//! the tracker crate's server half (fgtracker's behaviour); pilots are real
//! FlightGear position datagrams sent to the real relay binary.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tracker::message::Line;
use tracker::server::{Event, ServerConfig, ServerConn};

/// What the fake tracker saw on one connection.
#[derive(Debug)]
enum Seen {
    Hello(tracker::control::Ident),
    Lines(Vec<Line>),
}

/// Accepts connections one after another and reports what each sends.
fn tracker() -> (SocketAddr, mpsc::Receiver<Seen>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            let mut conn = ServerConn::new(ServerConfig::default(), Instant::now());
            let mut buf = [0u8; 65536];
            loop {
                let events = match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => conn.received(&buf[..n], Instant::now()),
                    Err(_) => Vec::new(),
                };
                for e in events {
                    let more = match e {
                        Event::Hello(id) => {
                            let _ = tx.send(Seen::Hello(id));
                            conn.accept("testtracker")
                        }
                        other => vec![other],
                    };
                    for e in more {
                        if let Event::Message { lines, .. } = e {
                            if tx.send(Seen::Lines(lines)).is_err() {
                                return;
                            }
                        }
                    }
                }
                while let Some(out) = conn.poll_transmit() {
                    if s.write_all(&out).is_err() {
                        break;
                    }
                }
                if conn.is_closed() {
                    break;
                }
            }
        }
    });
    (addr, rx)
}

/// Every line the tracker received so far, kept across waits.
struct Received {
    rx: mpsc::Receiver<Seen>,
    lines: Vec<Line>,
}

impl Received {
    /// Reads until `pred` holds for some line received so far (bounded); returns them all.
    fn until(&mut self, what: &str, pred: impl Fn(&Line) -> bool) -> &[Line] {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.lines.iter().any(&pred) {
            assert!(
                Instant::now() < deadline,
                "never {what}; got {:?}",
                self.lines
            );
            if let Ok(Seen::Lines(v)) = self.rx.recv_timeout(Duration::from_millis(200)) {
                self.lines.extend(v);
            }
        }
        &self.lines
    }
}

fn connect_of<'a>(lines: &'a [Line], cs: &str) -> Option<&'a Line> {
    lines
        .iter()
        .find(|l| matches!(l, Line::Connect { callsign, .. } if callsign == cs))
}

#[test]
fn pilots_are_reported_as_fgms_does_and_the_queue_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("lobby-tracker-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (taddr, rx) = tracker();
    let cfg = dir.join("relay.toml");
    std::fs::write(
        &cfg,
        format!(
            "[relay]\nname = \"testrelay\"\nlisten = [\"127.0.0.1:0\"]\ntelnet = []\nplayer_expiry = 2\n\
             tracker = \"{taddr}\"\ntracker_fqdn = \"relay.example.org\"\n"
        ),
    )
    .unwrap();
    let r = Lobby::start(&["relay", "--config", cfg.to_str().unwrap()], 1);
    let udp = r.addr("relay", "udp");
    // The identification, as fgms sends it.
    match rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the relay connects")
    {
        Seen::Hello(tracker::control::Ident::V20151207 {
            version,
            fqdn,
            name,
        }) => {
            assert!(version.starts_with("lobby-"), "{version}");
            assert_eq!(
                (fqdn.as_str(), name.as_str()),
                ("relay.example.org", "testrelay")
            );
        }
        other => panic!("{other:?}"),
    }
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), udp).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), udp, &a, "BRAVO");
    let mut got = Received {
        rx,
        lines: Vec::new(),
    };
    got.until(
        "CONNECT BRAVO",
        |l| matches!(l, Line::Connect { callsign, .. } if callsign == "BRAVO"),
    );
    let lines = got.until(
        "CONNECT ALPHA",
        |l| matches!(l, Line::Connect { callsign, .. } if callsign == "ALPHA"),
    );
    let alpha = match connect_of(lines, "ALPHA") {
        Some(Line::Connect {
            passwd,
            model,
            time,
            ..
        }) => (passwd.clone(), model.clone(), *time),
        other => panic!("{other:?}"),
    };
    assert_eq!((alpha.0.as_str(), alpha.1.as_str()), ("test", "c172p"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        (now - alpha.2).abs() <= 5,
        "CONNECT carries the join time: {} vs {now}",
        alpha.2
    );
    // Keep both flying until a POSITION round (every 10 s) reports them where they are.
    let flying = std::thread::spawn({
        let (a, b) = (a.try_clone().unwrap(), b.try_clone().unwrap());
        move || {
            for _ in 0..130 {
                a.send_to(&pos("ALPHA", BIKF, 100), udp).unwrap();
                b.send_to(&pos("BRAVO", BIKF, 100), udp).unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    });
    let lines = got.until(
        "POSITION ALPHA",
        |l| matches!(l, Line::Position { callsign, .. } if callsign == "ALPHA"),
    );
    let p = lines
        .iter()
        .find_map(|l| match l {
            Line::Position {
                callsign,
                lat,
                lon,
                alt_ft,
                ..
            } if callsign == "ALPHA" => Some((*lat, *lon, *alt_ft)),
            _ => None,
        })
        .unwrap();
    assert!(
        (p.0 - BIKF.0).abs() < 1e-4 && (p.1 - BIKF.1).abs() < 1e-4,
        "{p:?}"
    );
    assert!(
        (p.2 - 1000.0 / 0.3048 * 0.3048 * 3.28084).abs() < 5.0,
        "1000 m is about 3281 ft: {p:?}"
    );
    flying.join().unwrap();
    // Silence: both expire (2 s) and are disconnected.
    got.until(
        "DISCONNECT ALPHA",
        |l| matches!(l, Line::Disconnect { callsign, .. } if callsign == "ALPHA"),
    );
    r.stop();

    // A tracker that is away: the relay queues, saves the queue at stop, and sends
    // it first at the next start.
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap(); // closed at once
    let queue = dir.join("tracker.queue");
    let cfg2 = dir.join("relay2.toml");
    std::fs::write(
        &cfg2,
        format!(
            "[relay]\nname = \"testrelay\"\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n\
             tracker = \"{dead}\"\ntracker_queue_file = \"{}\"\n",
            queue.display()
        ),
    )
    .unwrap();
    let r = Lobby::start(&["relay", "--config", cfg2.to_str().unwrap()], 2);
    let udp = r.addr("relay", "udp");
    let c = client(false);
    c.send_to(&pos("QUEUED", BIKF, 100), udp).unwrap();
    telnet_until(r.addr("relay", "telnet"), "QUEUED", |t| {
        t.contains("QUEUED")
    });
    std::thread::sleep(Duration::from_secs(2)); // one feed take (every second)
    r.stop();
    let saved = std::fs::read_to_string(&queue).expect("the queue file is written at stop");
    assert!(saved.contains("CONNECT QUEUED test c172p"), "{saved:?}");
    std::fs::write(
        &cfg2,
        std::fs::read_to_string(&cfg2)
            .unwrap()
            .replace(&dead.to_string(), &taddr.to_string()),
    )
    .unwrap();
    let r = Lobby::start(&["relay", "--config", cfg2.to_str().unwrap()], 2);
    got.until(
        "the saved CONNECT QUEUED",
        |l| matches!(l, Line::Connect { callsign, .. } if callsign == "QUEUED"),
    );
    r.stop();
}

#[test]
fn a_pilot_flipping_its_model_cannot_push_the_others_out_of_the_tracker_queue() {
    // Issue 20, item 1. Before: every flip was a DISCONNECT and a CONNECT line, so
    // a socket flipping at 500 datagrams a second filled the tracker queue (newest
    // dropped) and the honest pilots' reports that came after were lost.
    let dir = std::env::temp_dir().join(format!("lobby-tracker-flip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap(); // closed at once: everything waits in the queue
    let queue = dir.join("tracker.queue");
    let cfg = dir.join("relay.toml");
    std::fs::write(
        &cfg,
        format!(
            "[relay]\nname = \"testrelay\"\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n\
             tracker = \"{dead}\"\ntracker_max_queue = 200\ntracker_queue_file = \"{}\"\n",
            queue.display()
        ),
    )
    .unwrap();
    let r = Lobby::start(&["relay", "--config", cfg.to_str().unwrap()], 2);
    let (udp, tn) = (r.addr("relay", "udp"), r.addr("relay", "telnet"));
    let flip = |model: &str| {
        let m = fgmp::message::Message::position(
            fgmp::Callsign::new("FLIP").unwrap(),
            100,
            fgmp::message::Position::at(model, ecef(BIKF.0, BIKF.1)),
        );
        fgmp::message::to_bytes(&m).unwrap()
    };
    let (a, b) = (
        flip("Aircraft/c172p/Models/c172p.xml"),
        flip("Aircraft/ufo/Models/ufo.xml"),
    );
    let flood = client(false);
    let started = Instant::now();
    let mut sent = 0;
    while started.elapsed() < Duration::from_secs(4) {
        for _ in 0..10 {
            flood
                .send_to(if sent % 2 == 0 { &a } else { &b }, udp)
                .unwrap();
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sent > 1000, "{sent}");
    // Then an honest pilot joins.
    let c = client(false);
    c.send_to(&pos("HONEST", BIKF, 100), udp).unwrap();
    telnet_until(tn, "HONEST", |t| t.contains("HONEST"));
    std::thread::sleep(Duration::from_secs(2)); // one feed take (every second)
    let t = telnet(tn);
    r.stop();
    let saved = std::fs::read_to_string(&queue).expect("the queue file is written at stop");
    assert!(
        saved.contains("CONNECT HONEST test c172p"),
        "the honest pilot's report is kept: {} bytes",
        saved.len()
    );
    let flips = saved
        .split(['\0', '\n'])
        .filter(|l| l.starts_with("CONNECT FLIP "))
        .count();
    assert!(
        (1..=5).contains(&flips),
        "{flips} CONNECT lines for the flipping pilot"
    );
    assert!(
        telnet_stat(&t, "session_events_shed") > 1000,
        "the flood is shed, counted: {t}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A GET's status, head (lower-cased) and body.
fn get_with_head(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, head.to_lowercase(), body.to_string())
}

fn json_of(addr: SocketAddr, path: &str) -> (u16, serde_json::Value) {
    let (code, body) = http_get(addr, path);
    (code, serde_json::from_str(&body).unwrap())
}

/// Runs `xmllint --noout` over `text` when xmllint is installed (`scripts/ci-deps`
/// installs it): well-formed, or the test fails with its complaint. A GPX file is
/// also validated against the GPX 1.1 schema when `GPX_XSD` names a copy of it
/// (`gpx.xsd`; not in this repository).
fn xmllint_if_there(text: &str, name: &str) {
    let file = std::env::temp_dir().join(format!("lobby-{}-{name}", std::process::id()));
    std::fs::write(&file, text).unwrap();
    let mut cmd = std::process::Command::new("xmllint");
    cmd.arg("--noout");
    if let (Ok(xsd), true) = (std::env::var("GPX_XSD"), name.ends_with(".gpx")) {
        cmd.args(["--schema", &xsd]);
    }
    match cmd.arg(&file).output() {
        Ok(o) => assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => eprintln!("xmllint not run ({e}): scripts/ci-deps installs it"),
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn an_fgms_relays_flight_gets_its_airports_moving_time_and_exports() {
    // Issue 21, section 3: a relay reports through the tracker (as fgms does) a pilot
    // parked at Heathrow, who taxies, flies to Gatwick, lands and parks: the flight
    // log gives it its departure, arrival, moving time and aircraft name, and serves
    // it as GPX, KML, CSV and in the leaderboards.
    let dir = std::env::temp_dir().join(format!("lobby-logbook-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("tracker.toml");
    std::fs::write(
        &cfg,
        format!(
            "[tracker]\nlisten = [\"127.0.0.1:0\"]\n[[tracker.relay]]\nname = \"edge\"\naddress = \"127.0.0.1\"\n\
             [history]\ndatabase_url = \"sqlite:{}\"\n",
            dir.join("t.sqlite").display()
        ),
    )
    .unwrap();
    let t = start_tracker_config(&cfg);
    let (tracker, http) = (t.addr("tracker", "tcp"), t.addr("http", "tcp"));
    let mut s = std::net::TcpStream::connect(tracker).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"\0V20151207 0.13.10 relay.example.org edge\0")
        .unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"IDENTIFIED edge\0");
    // Every 10 s: parked 1 minute at an EGLL stand (90 ft), 20 minutes to Gatwick's
    // (205 ft) through 4,000 ft, parked 1 minute; fgms's lines, as it sends them.
    let (egll, cruise, egkk) = (
        (51.4710, -0.4545, 90.0),
        (51.30, -0.30, 4000.0),
        (51.1565, -0.1616, 205.0),
    );
    let mut fixes = vec![];
    for (n, a, b) in [
        (6, egll, egll),
        (60, egll, cruise),
        (54, cruise, egkk),
        (6, egkk, egkk),
    ] {
        for i in 0..n {
            let k = f64::from(i) / f64::from(n - 1);
            let at = |x: f64, y: f64| x + (y - x) * k;
            fixes.push((at(a.0, b.0), at(a.1, b.1), at(a.2, b.2)));
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t0 = now - 10 * fixes.len() as i64 - 60;
    let fmt = tracker::message::format_time;
    let mut msg = format!("CONNECT LOGBK1 test c172p {}", fmt(t0));
    for (i, (lat, lon, alt)) in fixes.iter().enumerate() {
        msg.push_str(&format!(
            "\nPOSITION LOGBK1 test {lat:.6} {lon:.6} {alt:.1} 90 0 0 {}",
            fmt(t0 + 10 * i as i64)
        ));
    }
    let end = t0 + 10 * (fixes.len() as i64 - 1);
    msg.push_str(&format!("\nDISCONNECT LOGBK1 test c172p {}\0", fmt(end)));
    s.write_all(msg.as_bytes()).unwrap();
    let n = s.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"OK\0");
    let deadline = Instant::now() + Duration::from_secs(30);
    let f = loop {
        let (_, v) = json_of(http, "/api/flights?callsign=LOGBK1");
        if v["flights"][0]["end"].is_i64() {
            break v["flights"][0].clone();
        }
        assert!(Instant::now() < deadline, "never ended: {v}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(f["departure"], "EGLL", "{f}");
    assert_eq!(f["arrival"], "EGKK", "{f}");
    assert_eq!(f["aircraft_name"], "Cessna 172P Skyhawk", "{f}");
    assert_eq!(f["aircraft_class"], "single_prop", "{f}");
    let moving = f["moving_s"].as_i64().unwrap();
    assert!((1080..=1140).contains(&moving), "parked 2 minutes: {f}");
    let id = f["id"].as_i64().unwrap();
    let (_, one) = json_of(http, &format!("/api/flights/{id}"));
    assert_eq!(one["flight"], f);
    // The callsign's airports, the leaderboards.
    let (_, cs) = json_of(http, "/api/callsigns/LOGBK1");
    assert_eq!(
        cs["airports"],
        serde_json::json!([
            {"ident": "EGKK", "name": "London Gatwick Airport", "departures": 0, "arrivals": 1},
            {"ident": "EGLL", "name": "London Heathrow Airport", "departures": 1, "arrivals": 0}
        ])
    );
    assert_eq!(cs["aircraft"][0]["aircraft_name"], "Cessna 172P Skyhawk");
    for q in ["", "?period=30d&by=flights", "?period=all&limit=1"] {
        let (code, lb) = json_of(http, &format!("/api/leaderboards{q}"));
        assert_eq!(code, 200, "{q}: {lb}");
        assert_eq!(lb["leaders"].as_array().unwrap().len(), 1, "{q}: {lb}");
        let l = &lb["leaders"][0];
        assert_eq!(
            (
                l["rank"].as_i64(),
                l["callsign"].as_str(),
                l["flights"].as_i64()
            ),
            (Some(1), Some("LOGBK1"), Some(1))
        );
        assert!(
            (l["hours"].as_f64().unwrap() - (end - t0) as f64 / 3600.0).abs() < 0.01,
            "{lb}"
        );
    }
    for (q, name) in [
        ("period=1y", "period"),
        ("by=miles", "by"),
        ("limit=101", "limit"),
        ("x=1", "x"),
    ] {
        let (code, e) = json_of(http, &format!("/api/leaderboards?{q}"));
        assert_eq!(code, 400, "{q}");
        assert!(e["error"].as_str().unwrap().contains(name), "{q}: {e}");
    }
    // GPX: the headers, its trkpts one per position, well-formed (xmllint).
    let (code, head, gpx) = get_with_head(http, &format!("/api/flights/{id}/gpx"));
    assert_eq!(code, 200, "{gpx}");
    assert!(head.contains("content-type: application/gpx+xml"), "{head}");
    assert!(
        head.contains(&format!(
            "content-disposition: attachment; filename=\"logbk1-{id}.gpx\""
        )),
        "{head}"
    );
    assert!(gpx.contains(
        r#"<gpx version="1.1" creator="lobby" xmlns="http://www.topografix.com/GPX/1/1">"#
    ));
    assert_eq!(gpx.matches("<trkpt ").count(), fixes.len());
    assert_eq!(gpx.matches("<wpt ").count(), 2);
    assert!(gpx.contains("<name>LOGBK1 (Cessna 172P Skyhawk)</name>"));
    xmllint_if_there(&gpx, "flight.gpx");
    // KML: a LineString at absolute altitudes, a point per airport.
    let (code, head, kml) = get_with_head(http, &format!("/api/flights/{id}/kml"));
    assert_eq!(code, 200, "{kml}");
    assert!(
        head.contains("content-type: application/vnd.google-earth.kml+xml"),
        "{head}"
    );
    assert!(kml.contains("<altitudeMode>absolute</altitudeMode>"));
    assert!(
        kml.contains("<name>Departure: EGLL</name>") && kml.contains("<name>Arrival: EGKK</name>")
    );
    xmllint_if_there(&kml, "flight.kml");
    // CSV: a header and the flight.
    let (code, head, csv) = get_with_head(http, "/api/callsigns/LOGBK1/csv");
    assert_eq!(code, 200, "{csv}");
    assert!(head.contains("content-type: text/csv"), "{head}");
    assert!(head.contains("filename=\"logbk1-flights.csv\""), "{head}");
    let rows: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(rows.len(), 3, "{csv:?}");
    assert!(
        rows[0].starts_with("id,callsign,model,aircraft_name"),
        "{csv}"
    );
    assert!(
        rows[1].starts_with(&format!(
            "{id},LOGBK1,c172p,Cessna 172P Skyhawk,single_prop,edge,EGLL,EGKK,"
        )),
        "{csv}"
    );
    assert_eq!(rows[2], "");
    // Errors: no such flight, a bad id, a parameter where there is none.
    assert_eq!(get_with_head(http, "/api/flights/999999/gpx").0, 404);
    assert_eq!(get_with_head(http, "/api/flights/x/kml").0, 400);
    assert_eq!(
        get_with_head(http, &format!("/api/flights/{id}/gpx?points=5")).0,
        400
    );
    let (code, _, e) = get_with_head(http, "/api/callsigns/LOGBK1/csv?limit=5");
    assert_eq!(code, 400);
    assert!(e.contains("(this path takes none)"), "{e}");
    t.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
