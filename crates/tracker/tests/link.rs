//! A `Client` (fgms's side) and a `ServerConn` (fgtracker's side) driven against each
//! other in memory with virtual time: no sockets, no sleeps.

use std::time::{Duration, Instant};

use tracker::message::{format_time, model_name};
use tracker::{Client, ClientConfig, Event, Ident, Line, ServerConfig, ServerConn};

const T: i64 = 1_796_155_200; // 2026-12-01 20:00:00 UTC

/// A virtual network with one tracker that accepts (or refuses) every server.
struct Net {
    now: Instant,
    client: Client,
    server: Option<ServerConn>,
    server_cfg: ServerConfig,
    /// `Some(name)`: accept as `name`; `None`: refuse.
    accept_as: Option<&'static str>,
    /// The tracker reads and answers nothing (a hung process).
    dead: bool,
    /// Tracker output is kept here instead of being delivered.
    hold_replies: bool,
    held: Vec<u8>,
    /// Messages the tracker committed, in order.
    stored: Vec<Vec<Line>>,
    fatals: Vec<String>,
    hellos: Vec<Ident>,
    /// Every byte each way, in order, across connections.
    to_tracker: Vec<u8>,
    to_relay: Vec<u8>,
    connections: usize,
}

impl Net {
    fn new(cfg: ClientConfig) -> Net {
        let now = Instant::now();
        Net {
            now,
            client: Client::new(cfg, now),
            server: None,
            server_cfg: ServerConfig::default(),
            accept_as: Some("tracked-relay"),
            dead: false,
            hold_replies: false,
            held: Vec::new(),
            stored: Vec::new(),
            fatals: Vec::new(),
            hellos: Vec::new(),
            to_tracker: Vec::new(),
            to_relay: Vec::new(),
            connections: 0,
        }
    }

    fn connect_if_wanted(&mut self) {
        if self.server.is_none() && self.client.wants_connect(self.now) {
            self.server = Some(ServerConn::new(self.server_cfg.clone(), self.now));
            self.client.connected(self.now);
            self.connections += 1;
            self.dead = false;
        }
    }

    fn drop_link(&mut self) {
        self.server = None;
        self.held.clear();
        self.client.disconnected(self.now);
    }

    fn on_events(&mut self, events: Vec<Event>) {
        for e in events {
            match e {
                Event::Hello(ident) => {
                    self.hellos.push(ident);
                    let server = self.server.as_mut().expect("hello without a server");
                    let more = match self.accept_as {
                        Some(name) => server.accept(name),
                        None => {
                            server.refuse();
                            Vec::new()
                        }
                    };
                    self.on_events(more);
                }
                Event::Message { lines, .. } => self.stored.push(lines),
                Event::Fatal(why) => self.fatals.push(why),
            }
        }
    }

    fn deliver_to_relay(&mut self, bytes: &[u8]) {
        self.to_relay.extend_from_slice(bytes);
        self.client.received(bytes, self.now);
    }

    /// Moves bytes both ways until nothing moves.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            if self.client.wants_close() {
                self.drop_link();
            }
            if self.server.is_none() {
                return;
            }
            if let Some(bytes) = self.client.poll_transmit() {
                moved = true;
                self.to_tracker.extend_from_slice(&bytes);
                if !self.dead {
                    let now = self.now;
                    let events = self.server.as_mut().map(|s| s.received(&bytes, now));
                    self.on_events(events.unwrap_or_default());
                }
            }
            if !self.dead {
                if let Some(bytes) = self.server.as_mut().and_then(|s| s.poll_transmit()) {
                    moved = true;
                    if self.hold_replies {
                        self.held.extend_from_slice(&bytes);
                    } else {
                        self.deliver_to_relay(&bytes);
                    }
                }
                if self.server.as_ref().is_some_and(|s| s.is_closed()) {
                    // Everything written: the tracker closes, the relay sees EOF.
                    self.drop_link();
                    moved = true;
                }
            }
            if !moved {
                return;
            }
        }
        panic!("the link never settled");
    }

    /// Delivers held tracker frames one at a time, at most `n` (replies they provoke
    /// are held too while `hold_replies` is set).
    fn release(&mut self, n: usize) {
        for _ in 0..n {
            let Some(end) = self.held.iter().position(|&b| b == 0) else {
                break;
            };
            let frame: Vec<u8> = self.held.drain(..=end).collect();
            self.deliver_to_relay(&frame);
            self.pump();
        }
    }

    fn next_timeout(&self) -> Option<Instant> {
        let server = if self.dead {
            None
        } else {
            self.server.as_ref().and_then(|s| s.poll_timeout())
        };
        match (self.client.poll_timeout(), server) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every timer up to `now + d`, in order.
    fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        for _ in 0..100_000 {
            self.connect_if_wanted();
            self.pump();
            match self.next_timeout() {
                Some(at) if at <= target => {
                    self.now = self.now.max(at);
                    self.client.handle_timeout(self.now);
                    if !self.dead {
                        if let Some(s) = self.server.as_mut() {
                            s.handle_timeout(self.now);
                        }
                    }
                }
                _ => {
                    self.now = target;
                    self.connect_if_wanted();
                    self.pump();
                    return;
                }
            }
        }
        panic!("timers never settled");
    }

    /// Connected and identified.
    fn identified(cfg: ClientConfig) -> Net {
        let mut net = Net::new(cfg);
        net.advance(Duration::from_secs(2));
        assert!(net.client.stats().identified);
        net
    }
}

fn cfg() -> ClientConfig {
    ClientConfig {
        version: "lobby-test".into(),
        fqdn: "mp.example.org".into(),
        server_name: "lobby01".into(),
        ..ClientConfig::default()
    }
}

fn connect(cs: &str) -> Line {
    Line::Connect {
        callsign: cs.into(),
        passwd: "test".into(),
        model: model_name("Aircraft/c172p/Models/c172p.xml"),
        time: T,
    }
}

fn position(cs: &str, lat: f64) -> Line {
    Line::Position {
        callsign: cs.into(),
        passwd: "test".into(),
        lat,
        lon: -122.375,
        alt_ft: 13.0,
        heading: 280.0,
        pitch: 0.5,
        roll: -1.0,
        time: T + 10,
    }
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn identification_follows_fgms_and_the_tracker_answers_with_its_name() {
    let mut net = Net::new(cfg());
    net.advance(Duration::ZERO);
    assert_eq!(net.connections, 1);
    // The lone NUL at once; nothing else until the 2 s delay.
    assert_eq!(net.to_tracker, b"\0");
    net.advance(Duration::from_millis(1999));
    assert_eq!(net.to_tracker, b"\0");
    assert!(!net.client.stats().identified);
    net.advance(Duration::from_millis(1));
    assert_eq!(
        net.to_tracker,
        b"\0V20151207 lobby-test mp.example.org lobby01\0"
    );
    assert_eq!(
        net.hellos,
        vec![Ident::V20151207 {
            version: "lobby-test".into(),
            fqdn: "mp.example.org".into(),
            name: "lobby01".into()
        }]
    );
    assert_eq!(net.to_relay, b"IDENTIFIED tracked-relay\0");
    assert!(net.client.stats().identified);
    assert_eq!(net.client.tracker_name(), Some("tracked-relay"));
}

#[test]
fn a_shared_secret_rides_in_the_first_message_which_fgtracker_discards() {
    let mut net = Net::new(ClientConfig {
        secret: "s3cret-with space".into(),
        ..cfg()
    });
    net.advance(Duration::from_secs(2));
    // fgtracker reads the second message as the identification whatever the first.
    assert!(net.client.stats().identified);
    assert!(
        net.to_tracker
            .starts_with(b"SECRET s3cret-with_space\0V20151207 lobby-test "),
        "{:?}",
        String::from_utf8_lossy(&net.to_tracker)
    );
    assert_eq!(
        net.server.as_ref().unwrap().greeting_secret(),
        Some("s3cret-with_space")
    );
    // fgms's empty first message carries none.
    let net = Net::identified(cfg());
    assert_eq!(net.server.as_ref().unwrap().greeting_secret(), None);
    assert_eq!(tracker::control::greeting_secret("SECRET "), None);
    assert_eq!(tracker::control::greeting_secret("SECRETx"), None);
}

#[test]
fn reports_queued_before_identification_wait_for_it() {
    let mut net = Net::new(cfg());
    assert!(net.client.push(connect("Early").encode()));
    net.advance(Duration::from_secs(1));
    assert_eq!(net.to_tracker, b"\0");
    assert!(net.stored.is_empty());
    net.advance(Duration::from_secs(1));
    assert_eq!(net.stored, vec![vec![connect("Early")]]);
}

#[test]
fn each_message_is_one_transaction_acknowledged_by_one_ok() {
    let mut net = Net::identified(cfg());
    let batch = [position("Alpha", 37.5), position("Bravo", -33.25)];
    let joined = batch
        .iter()
        .map(Line::encode)
        .collect::<Vec<_>>()
        .join("\n");
    net.client.push(connect("Alpha").encode());
    net.client.push(joined);
    net.client.push(
        Line::Disconnect {
            callsign: "Alpha".into(),
            passwd: "test".into(),
            model: "c172p".into(),
            time: T + 20,
        }
        .encode(),
    );
    net.pump();
    assert_eq!(net.stored.len(), 3);
    assert_eq!(net.stored[0], vec![connect("Alpha")]);
    assert_eq!(net.stored[1], batch.to_vec());
    assert!(matches!(net.stored[2][..], [Line::Disconnect { .. }]));
    assert_eq!(count(&net.to_relay, b"OK\0"), 3);
    let s = net.client.stats();
    assert_eq!(
        (s.queued, s.sent, s.acked, s.in_flight, s.pending),
        (3, 3, 3, 0, 0)
    );
}

#[test]
fn at_most_25_unacknowledged_the_26th_waits_for_an_ok() {
    let mut net = Net::identified(cfg());
    net.hold_replies = true;
    for i in 0..30 {
        assert!(net.client.push(connect(&format!("P{i}")).encode()));
    }
    net.pump();
    assert_eq!(net.stored.len(), 25);
    let s = net.client.stats();
    assert_eq!((s.in_flight, s.pending, s.sent), (25, 5, 25));
    assert_eq!(count(&net.held, b"OK\0"), 25);

    // Replies stay held: each released OK lets exactly one more message out.
    net.release(1);
    assert_eq!(net.stored.len(), 26);
    assert_eq!(net.stored[25], vec![connect("P25")]);
    let s = net.client.stats();
    assert_eq!((s.in_flight, s.pending, s.acked), (25, 4, 1));

    net.release(usize::MAX);
    assert_eq!(net.stored.len(), 30);
    let s = net.client.stats();
    assert_eq!((s.in_flight, s.pending, s.acked), (0, 0, 30));
}

#[test]
fn the_relay_pings_a_quiet_tracker_and_gets_pong_without_ok() {
    let mut net = Net::identified(cfg());
    net.advance(Duration::from_secs(54));
    assert_eq!(count(&net.to_tracker, b"PING\0"), 0);
    net.advance(Duration::from_secs(1));
    assert_eq!(count(&net.to_tracker, b"PING\0"), 1);
    assert!(net.to_relay.ends_with(b"PONG\0"));
    assert_eq!(count(&net.to_relay, b"OK\0"), 0);
    // The pings keep both ends alive for as long as it lasts.
    net.advance(Duration::from_secs(3600));
    assert_eq!(net.connections, 1);
    assert_eq!(count(&net.to_tracker, b"PING\0"), 3655 / 55);
    assert_eq!(count(&net.to_relay, b"PONG\0"), 3655 / 55);
    assert_eq!(
        count(&net.to_relay, b"PING\0"),
        0,
        "the tracker never went 60 s without a message"
    );
}

#[test]
fn the_tracker_pings_a_quiet_relay_and_gets_pong() {
    let mut net = Net::identified(ClientConfig {
        ping_after: Duration::from_secs(100),
        ..cfg()
    });
    net.advance(Duration::from_secs(59));
    assert_eq!(count(&net.to_relay, b"PING\0"), 0);
    net.advance(Duration::from_secs(1));
    assert_eq!(count(&net.to_relay, b"PING\0"), 1);
    assert!(net.to_tracker.ends_with(b"PONG\0"));
    net.advance(Duration::from_secs(600));
    assert_eq!(net.connections, 1);
    assert_eq!(count(&net.to_relay, b"PING\0"), 11);
    assert_eq!(count(&net.to_tracker, b"PONG\0"), 11);
    assert_eq!(count(&net.to_tracker, b"PING\0"), 0);
}

#[test]
fn a_silent_tracker_is_pinged_three_times_then_the_relay_reconnects() {
    let mut net = Net::identified(cfg());
    let identified_at = net.now;
    net.dead = true;
    net.advance(Duration::from_secs(219));
    assert_eq!(count(&net.to_tracker, b"PING\0"), 3);
    assert!(net.server.is_some());
    net.advance(Duration::from_secs(1));
    assert!(net.server.is_none(), "gave up after 220 s of silence");
    assert_eq!(net.now - identified_at, Duration::from_secs(220));
    net.advance(Duration::from_secs(29));
    assert_eq!(net.connections, 1);
    net.advance(Duration::from_secs(1));
    assert_eq!(net.connections, 2);
    net.advance(Duration::from_secs(2));
    let s = net.client.stats();
    assert!(s.identified);
    assert_eq!(s.reconnects, 1);
    assert_eq!(net.hellos.len(), 2);
}

#[test]
fn unacknowledged_messages_are_resent_first_and_in_order_after_a_reconnect() {
    let mut net = Net::identified(cfg());
    net.hold_replies = true;
    let msgs: Vec<String> = (0..5).map(|i| connect(&format!("P{i}")).encode()).collect();
    for m in &msgs {
        net.client.push(m.clone());
    }
    net.pump();
    net.hold_replies = false;
    net.release(2);
    assert_eq!(net.client.stats().in_flight, 3);

    // The connection breaks with three unacknowledged.
    net.drop_link();
    assert_eq!(net.client.backlog(), msgs[2..].to_vec());
    net.client.push(connect("Later").encode());
    let s = net.client.stats();
    assert_eq!((s.in_flight, s.pending), (0, 4));

    net.stored.clear();
    net.advance(Duration::from_secs(32));
    assert_eq!(net.connections, 2);
    assert_eq!(
        net.stored,
        vec![
            vec![connect("P2")],
            vec![connect("P3")],
            vec![connect("P4")],
            vec![connect("Later")]
        ]
    );
    let s = net.client.stats();
    assert_eq!((s.acked, s.in_flight, s.pending, s.sent), (6, 0, 0, 9));
}

#[test]
fn a_fatal_line_rolls_back_its_whole_message_and_closes() {
    let mut net = Net::identified(cfg());
    net.client.push(connect("Good").encode());
    net.pump();
    assert_eq!(net.stored.len(), 1);

    let bad = "POSITION Bad test north 2 3 4 5 6 2026-12-01 20:00:10";
    net.client.push(format!(
        "{}\n{bad}\n{}",
        connect("Alpha").encode(),
        connect("Bravo").encode()
    ));
    net.client.push(connect("After").encode());
    net.pump();
    // Nothing of that message (nor the next) was stored, and it was not acknowledged.
    assert_eq!(net.stored.len(), 1);
    assert_eq!(net.fatals.len(), 1);
    let want = format!(
        "OK\0ERROR Message \"{bad}\" not recognized\0ERROR FGTracker is closing your connection\0"
    );
    assert!(
        net.to_relay.ends_with(want.as_bytes()),
        "{:?}",
        String::from_utf8_lossy(&net.to_relay)
    );
    assert!(net.server.is_none(), "the tracker closed");
    assert_eq!(
        net.client.last_error(),
        Some("ERROR FGTracker is closing your connection")
    );
    let s = net.client.stats();
    assert_eq!((s.acked, s.in_flight, s.pending), (1, 0, 2));
    assert!(net.client.backlog()[0].contains(bad));
}

#[test]
fn a_refused_relay_retries_after_30_s() {
    let mut net = Net::new(cfg());
    net.accept_as = None;
    net.advance(Duration::from_secs(2));
    assert_eq!(
        net.to_relay,
        b"ERROR FGTracker is closing your connection\0"
    );
    assert!(net.server.is_none());
    assert!(!net.client.stats().identified);
    net.accept_as = Some("now-listed");
    net.advance(Duration::from_secs(30));
    assert_eq!(net.connections, 2);
    net.advance(Duration::from_secs(2));
    assert_eq!(net.client.tracker_name(), Some("now-listed"));
}

#[test]
fn the_queue_is_bounded_and_drops_the_newest() {
    let mut net = Net::identified(ClientConfig {
        max_queue: 5,
        ..cfg()
    });
    net.hold_replies = true;
    let msgs: Vec<String> = (0..8).map(|i| connect(&format!("P{i}")).encode()).collect();
    for m in &msgs[..3] {
        assert!(net.client.push(m.clone()));
    }
    net.pump(); // three in flight still count against the bound
    let accepted: Vec<bool> = msgs[3..]
        .iter()
        .map(|m| net.client.push(m.clone()))
        .collect();
    assert_eq!(accepted, [true, true, false, false, false]);
    let s = net.client.stats();
    assert_eq!(
        (s.queued, s.dropped_queue_full, s.in_flight, s.pending),
        (5, 3, 3, 2)
    );
    assert_eq!(net.client.backlog(), msgs[..5].to_vec());
    // A disconnect keeps exactly what was kept.
    net.drop_link();
    assert_eq!(net.client.backlog(), msgs[..5].to_vec());
}

#[test]
fn backlog_saved_and_restored_is_sent_first() {
    let mut old = Client::new(cfg(), Instant::now());
    old.push(connect("Saved1").encode());
    old.push(connect("Saved2").encode());
    let saved = old.backlog();

    let mut net = Net::new(cfg());
    net.client.restore(saved);
    net.client.push(connect("Fresh").encode());
    net.advance(Duration::from_secs(2));
    assert_eq!(
        net.stored,
        vec![
            vec![connect("Saved1")],
            vec![connect("Saved2")],
            vec![connect("Fresh")]
        ]
    );
}

/// An old fgms that identifies as NOWAIT, written byte by byte as it would.
#[test]
fn nowait_servers_get_ok_for_everything() {
    let t0 = Instant::now();
    let mut s = ServerConn::new(ServerConfig::default(), t0);
    assert_eq!(
        s.received(b"\0NOWAIT\0", t0),
        vec![Event::Hello(Ident::NoWait)]
    );
    assert!(s.accept("old-fgms").is_empty());
    assert_eq!(s.poll_transmit(), Some(b"IDENTIFIED old-fgms\0".to_vec()));

    let ev = s.received(
        b"POSITION Pilot1 test 37.5 -122.25 1500 2026-12-01 20:00:00\0",
        t0,
    );
    assert_eq!(
        ev,
        vec![Event::Message {
            lines: vec![Line::Position {
                callsign: "Pilot1".into(),
                passwd: "test".into(),
                lat: 37.5,
                lon: -122.25,
                alt_ft: 1500.0,
                heading: 0.0,
                pitch: 0.0,
                roll: 0.0,
                time: T,
            }],
            ignored: 0
        }]
    );
    assert_eq!(s.poll_transmit(), Some(b"OK\0".to_vec()));

    assert!(s.received(b"PING\0", t0).is_empty());
    assert_eq!(s.poll_transmit(), Some(b"PONG\0OK\0".to_vec()));

    let ev = s.received(
        b"CONNECT Pilot2 test ufo 2026-12-01 20:00:00\0POSITION * Bad Client *  0 0 . 2012-12-03 21:03:53\0HELLO x test\0",
        t0,
    );
    assert!(matches!(&ev[0], Event::Message { lines, ignored: 0 } if lines.len() == 1));
    assert!(matches!(&ev[1], Event::Message { lines, ignored: 1 } if lines.is_empty()));
    assert!(matches!(&ev[2], Event::Message { lines, ignored: 1 } if lines.is_empty()));
    assert_eq!(s.poll_transmit(), Some(b"OK\0OK\0OK\0".to_vec()));
    assert!(!s.is_closed());
}

#[test]
fn a_v20151207_message_where_every_line_is_ignored_is_still_acknowledged() {
    let mut net = Net::identified(cfg());
    net.client
        .push("CONNECT Pilot1 secret c172p 2026-12-01 20:00:00\nPOSITION x test 1 2".into());
    net.pump();
    assert_eq!(net.stored, vec![Vec::<Line>::new()]);
    assert_eq!(net.client.stats().acked, 1);
}

#[test]
fn model_names_and_times_in_reports() {
    let l = Line::Connect {
        callsign: "N172SP".into(),
        passwd: "test".into(),
        model: model_name("Aircraft/ufo/Models/ufo.xml"),
        time: 0,
    };
    assert_eq!(
        l.encode(),
        format!("CONNECT N172SP test ufo {}", format_time(0))
    );
    assert_eq!(l.encode(), "CONNECT N172SP test ufo 1970-01-01 00:00:00");
}
