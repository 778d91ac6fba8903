//! The tracker server's side of one connection (`tracker::server::ServerConn`) fed
//! hostile bytes in hostile pieces: never panics, always answers in whole
//! NUL-terminated frames, never holds more than its message limit, and every line
//! it records re-encodes to a line that parses to itself.

use std::time::{Duration, Instant};
use tracker::message::{parse_line, Parsed};
use tracker::server::{Event, ServerConfig, ServerConn};

/// Input: byte 0 picks the piece size; byte 1 says whether to accept the
/// identification; the rest is the stream.
pub fn run(data: &[u8]) {
    let [piece, accept, stream @ ..] = data else {
        return;
    };
    let cfg = ServerConfig {
        max_message: 4096,
        max_unidentified: 4096,
        ..ServerConfig::default()
    };
    let max = cfg.max_message;
    let t0 = Instant::now();
    let mut conn = ServerConn::new(cfg, t0);
    let piece = usize::from(*piece % 64) + 1;
    for (i, chunk) in stream.chunks(piece).enumerate() {
        let now = t0 + Duration::from_secs(i as u64);
        let mut events = conn.received(chunk, now);
        while let Some(e) = events.pop() {
            match e {
                Event::Hello(_) => {
                    if accept % 2 == 0 {
                        events.extend(conn.accept("fuzz"));
                    } else {
                        conn.refuse();
                    }
                }
                Event::Message { lines, .. } => {
                    for l in lines {
                        let text = l.encode();
                        assert!(text.len() < max * 2 + 256, "a line longer than a message");
                        match parse_line(&text) {
                            Parsed::Line(again) => assert_eq!(again.encode(), text),
                            other => panic!("{text:?} re-parses as {other:?}"),
                        }
                    }
                }
                Event::Fatal(_) => {}
            }
        }
        conn.handle_timeout(now);
        while let Some(out) = conn.poll_transmit() {
            assert_eq!(out.last(), Some(&0), "whole frames only");
        }
        if conn.is_closed() {
            break;
        }
    }
}
