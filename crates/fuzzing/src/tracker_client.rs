//! The relay's tracker client (`tracker::client::Client`) against a hostile
//! tracker: never panics, writes whole NUL-terminated frames, keeps its queue and
//! its unacknowledged window within their bounds, and loses no message it accepted
//! (each is either sent and acknowledged, still held, or was refused at push).

use std::time::{Duration, Instant};
use tracker::client::{Client, ClientConfig};

/// Input: the tracker's bytes, cut at every byte from 0xFB up into reads half a
/// second apart; one report is pushed after each read, and the client reconnects
/// whenever it wants to.
pub fn run(data: &[u8]) {
    let t0 = Instant::now();
    let cfg = ClientConfig {
        max_queue: 64,
        ..ClientConfig::default()
    };
    let (max_queue, max_in_flight) = (cfg.max_queue, cfg.max_in_flight);
    let mut now = t0;
    let mut c = Client::new(cfg, t0);
    c.connected(now);
    let mut accepted = 0u64;
    for chunk in data.split(|&b| b >= 0xFB) {
        c.received(chunk, now);
        c.handle_timeout(now);
        while let Some(out) = c.poll_transmit() {
            assert_eq!(out.last(), Some(&0), "whole frames only");
        }
        let s = c.stats();
        assert!(s.in_flight <= max_in_flight);
        assert!(s.pending + s.in_flight <= max_queue);
        assert_eq!(
            s.acked + (s.pending + s.in_flight) as u64,
            accepted,
            "{s:?}"
        );
        if c.wants_close() {
            c.disconnected(now);
        }
        now += Duration::from_millis(500);
        if c.push(format!(
            "POSITION FUZZ test 1 2 3 4 5 6 2026-12-02 00:00:{:02}",
            accepted % 60
        )) {
            accepted += 1;
        }
        if c.wants_connect(now) {
            c.connected(now);
        }
    }
    assert_eq!(c.backlog().len() as u64 + c.stats().acked, accepted);
}
