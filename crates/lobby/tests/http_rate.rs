//! `[http] request_rate` over the real binary (issue 30, item 1): `lobby master` with
//! HTTP on 127.0.0.1 port 0, asked from several loopback addresses (each its own
//! source; 127.0.3.0/24 one network). A source past its budget gets `429` with
//! `Retry-After` and the JSON error body; another source is unaffected; the 64
//! sources of one /24 share eight sources' worth.

mod common;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::SocketAddr;

/// `GET path` from `ip` on a fresh connection: status, lowercased head, body.
fn get_from(ip: &str, addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = tcp_from(ip, addr);
    // A connection refused at accept may be closed before the request is written
    // (EPIPE, seen once under load): what it answered, if anything, is still read.
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    );
    let mut raw = Vec::new();
    if s.read_to_end(&mut raw).is_err() && raw.is_empty() {
        return (0, String::new(), String::new()); // reset: refused at accept (503)
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .map_or(0, |c| c.parse().unwrap());
    (status, head.to_lowercase(), body.to_string())
}

#[test]
fn a_source_past_its_budget_gets_429_and_others_do_not() {
    let dir = std::env::temp_dir().join(format!("lobby-http-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        "[master]\nlisten = [\"127.0.0.1:0\"]\nworkers = 1\n[http]\nlisten = [\"127.0.0.1:0\"]\nrequest_rate = 10\nrequest_burst = 50\nrequest_rate_loopback = true\n",
    )
    .unwrap();
    let m = Lobby::start(&["master", "--config", cfg.to_str().unwrap()], 2);
    let http = m.addr("http", "tcp");
    let heavy = "/api/leaderboards";
    // A burst of 50 units is two heavy (25-unit) requests; the third waits 2.5 s.
    for _ in 0..2 {
        assert_ne!(get_from("127.0.1.1", http, heavy).0, 429);
    }
    let (status, head, body) = get_from("127.0.1.1", http, heavy);
    assert_eq!(status, 429, "{head}");
    assert!(head.contains("retry-after: 3"), "{head}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["error"].as_str().unwrap().contains("heavy"), "{body}");
    // The 429 came after up to a second of its wait: 10 units are back, not 25.
    assert_eq!(get_from("127.0.1.1", http, heavy).0, 429);
    assert_eq!(get_from("127.0.1.1", http, "/v1/servers/valve").0, 200);
    // Another source (another /24) is unaffected.
    assert_eq!(get_from("127.0.2.1", http, "/v1/servers/valve").0, 200);
    assert_ne!(get_from("127.0.2.1", http, heavy).0, 429);
    // 64 sources of one /24, two heavy requests each: the /24 holds eight sources'
    // worth (16, and what refills while they ask: 80 units a second); its 48
    // connections' share turns some away at accept (503).
    let askers: Vec<_> = (1..=64)
        .map(|h| {
            std::thread::spawn(move || {
                (0..2)
                    .filter(|_| {
                        ![0, 429, 503].contains(&get_from(&format!("127.0.3.{h}"), http, heavy).0)
                    })
                    .count()
            })
        })
        .collect();
    let passed: usize = askers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!((16..=40).contains(&passed), "{passed} of 128 passed");
    let (_, _, stats) = get_from("127.0.4.1", http, "/stats");
    let v: Value = serde_json::from_str(&stats).unwrap();
    assert!(
        v["http"]["rate_limited_heavy"].as_u64().unwrap() >= 40,
        "{v}"
    );
    assert_eq!(v["http"]["rate_limited_cheap"], 0, "{v}");
    let (_, _, metrics) = get_from("127.0.4.1", http, "/metrics");
    assert!(metrics.contains("lobby_http_rejected_requests_total{reason=\"rate_heavy\"}"));
}
