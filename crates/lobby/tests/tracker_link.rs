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
