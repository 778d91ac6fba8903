//! Properties: reports survive encoding, the framer stays bounded, and neither state
//! machine panics on anything a peer can send.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use tracker::message::{format_time, parse_line, parse_time};
use tracker::wire::{FrameError, Framer};
use tracker::{Client, ClientConfig, Event, Line, Parsed, ServerConfig, ServerConn};

/// A text field as a relay would have it: no space or control character, not a lone
/// `.` (those are rewritten by the encoder), at most 16 bytes (the callsign cap).
fn field() -> impl Strategy<Value = String> {
    "[A-Za-z0-9éÅ_-][A-Za-z0-9éÅ_.*-]{0,7}"
}

/// A time between 0000-01-01 and 9999-12-31.
fn time() -> impl Strategy<Value = i64> {
    -62_167_219_200i64..=253_402_300_799
}

/// A value with at most six decimals, as the wire carries it.
fn micro(max_abs: i64) -> impl Strategy<Value = f64> {
    (-max_abs * 1_000_000..=max_abs * 1_000_000).prop_map(|n| n as f64 / 1e6)
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        (field(), field(), time()).prop_map(|(callsign, model, time)| Line::Connect {
            callsign,
            passwd: "test".into(),
            model,
            time
        }),
        (field(), field(), time()).prop_map(|(callsign, model, time)| Line::Disconnect {
            callsign,
            passwd: "test".into(),
            model,
            time
        }),
        (
            field(),
            (micro(90), micro(180), micro(100_000)),
            (micro(360), micro(90), micro(180)),
            time()
        )
            .prop_map(
                |(callsign, (lat, lon, alt_ft), (heading, pitch, roll), time)| {
                    Line::Position {
                        callsign,
                        passwd: "test".into(),
                        lat,
                        lon,
                        alt_ft,
                        heading,
                        pitch,
                        roll,
                        time,
                    }
                }
            ),
    ]
}

/// Bytes rich in what matters to the protocol: NULs, newlines, control words and
/// report lines, mixed with noise.
fn chatter() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"\0".to_vec()),
        Just(b"\n".to_vec()),
        Just(b" ".to_vec()),
        Just(b"V20151207 v f n".to_vec()),
        Just(b"NOWAIT".to_vec()),
        Just(b"PING".to_vec()),
        Just(b"PONG".to_vec()),
        Just(b"OK".to_vec()),
        Just(b"IDENTIFIED x".to_vec()),
        Just(b"ERROR x".to_vec()),
        Just(b"DEBUG x".to_vec()),
        Just(b"CONNECT a test c 2026-12-01 20:00:00".to_vec()),
        Just(b"POSITION a test 1 2 3 4 5 6 2026-12-01 20:00:00".to_vec()),
        Just(b"POSITION a test x 2 3 4 5 6 2026-12-01 20:00:00".to_vec()),
        Just(b"POSITION a test 1 2 3 2026-12-01 20:00:00".to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
    ];
    prop::collection::vec(token, 0..24).prop_map(|t| t.concat())
}

/// One thing a peer or the clock does.
#[derive(Debug, Clone)]
enum Step {
    Bytes(Vec<u8>),
    Wait(u64),
    Push(String),
    Reconnect,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => chatter().prop_map(Step::Bytes),
        2 => (0u64..300_000).prop_map(Step::Wait),
        1 => "[ -~\n]{0,30}".prop_map(Step::Push),
        1 => Just(Step::Reconnect),
    ];
    prop::collection::vec(step, 0..30)
}

/// Every output of a state machine is whole frames.
fn assert_frames(out: &Option<Vec<u8>>) {
    if let Some(b) = out {
        assert!(!b.is_empty());
        assert_eq!(b.last(), Some(&0), "output ends mid-frame");
    }
}

proptest! {
    #[test]
    fn encode_then_parse_gives_the_line_back(l in line()) {
        let text = l.encode();
        prop_assert_eq!(parse_line(&text), Parsed::Line(l));
    }

    #[test]
    fn callsigns_over_the_cap_are_ignored(cs in "[A-Z0-9]{17,40}", t in time()) {
        let l = Line::Connect { callsign: cs, passwd: "test".into(), model: "ufo".into(), time: t };
        prop_assert!(matches!(parse_line(&l.encode()), Parsed::Ignored(_)));
    }

    #[test]
    fn time_round_trips(t in time()) {
        let s = format_time(t);
        let (date, clock) = s.split_once(' ').unwrap();
        prop_assert_eq!(parse_time(date, clock), Some(t));
    }

    #[test]
    fn parse_line_never_panics(s in "\\PC{0,80}", b in chatter()) {
        let _ = parse_line(&s);
        let _ = parse_line(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn framer_is_bounded_and_matches_a_model(
        data in prop::collection::vec(prop_oneof![Just(0u8), any::<u8>(), Just(b'x')], 0..600),
        cuts in prop::collection::vec(0usize..600, 0..12),
        max in 0usize..48,
    ) {
        let mut f = Framer::new(max);
        let mut got = Vec::new();
        let mut cuts = cuts;
        cuts.push(0);
        cuts.push(data.len());
        cuts.retain(|&c| c <= data.len());
        cuts.sort_unstable();
        for w in cuts.windows(2) {
            f.push(&data[w[0]..w[1]]);
            prop_assert!(f.buffered() <= max);
            while let Some(fr) = f.next_frame() {
                got.push(fr);
            }
        }
        // The model: every NUL-terminated segment is a frame or one error; the
        // unfinished tail is one error once it is too long.
        let mut want = Vec::new();
        let mut segments: Vec<&[u8]> = data.split(|&b| b == 0).collect();
        let tail = segments.pop().unwrap_or(&[]);
        for s in segments {
            want.push(if s.len() > max { Err(FrameError::TooLong { max }) } else { Ok(s.to_vec()) });
        }
        if tail.len() > max {
            want.push(Err(FrameError::TooLong { max }));
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn server_survives_anything(steps in steps(), max in 1usize..200) {
        let t0 = Instant::now();
        let mut now = t0;
        let cfg = ServerConfig { max_message: max, max_unidentified: max, ..ServerConfig::default() };
        let mut s = ServerConn::new(cfg, now);
        for step in steps {
            match step {
                Step::Bytes(b) => {
                    let was_closed = s.is_closed();
                    let events = s.received(&b, now);
                    prop_assert!(!was_closed || events.is_empty());
                    for e in events {
                        if let Event::Hello(_) = e {
                            if b.len() % 2 == 0 {
                                let _ = s.accept("x");
                            } else {
                                s.refuse();
                            }
                        }
                    }
                }
                Step::Wait(ms) => {
                    now += Duration::from_millis(ms);
                    if s.poll_timeout().is_some_and(|t| t <= now) {
                        s.handle_timeout(now);
                    }
                }
                Step::Push(_) | Step::Reconnect => {
                    let _ = s.accept("late");
                }
            }
            let out = s.poll_transmit();
            assert_frames(&out);
            if let Some(b) = &out {
                prop_assert!(b.len() <= 2 * max + 64 * 1024 + 64);
            }
        }
    }

    #[test]
    fn client_survives_anything(steps in steps()) {
        let t0 = Instant::now();
        let mut now = t0;
        let cfg = ClientConfig { max_queue: 8, max_in_flight: 3, ..ClientConfig::default() };
        let mut c = Client::new(cfg, now);
        for step in steps {
            match step {
                Step::Bytes(b) => c.received(&b, now),
                Step::Wait(ms) => {
                    now += Duration::from_millis(ms);
                    c.handle_timeout(now);
                }
                Step::Push(m) => {
                    let _ = c.push(m);
                }
                Step::Reconnect => {
                    if c.wants_connect(now) {
                        c.connected(now);
                    } else {
                        c.disconnected(now);
                    }
                }
            }
            if c.wants_close() {
                c.disconnected(now);
            }
            assert_frames(&c.poll_transmit());
            let st = c.stats();
            prop_assert!(st.in_flight <= 3);
            prop_assert!(st.in_flight + st.pending <= 8);
            prop_assert_eq!(c.backlog().len(), st.in_flight + st.pending);
        }
    }
}
