//! The HTTP listener as a stranger on the internet sees it: `lobby master` with
//! `[http]` on 127.0.0.1 port 0, spoken to over raw TCP. Slow, idle, oversized and
//! too many connections are cut off, refused and counted; the server list follows
//! the master's table as servers come, change and go.

mod common;

use common::*;
use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use xash::master::ChallengeReply;

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-http-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `lobby master` with HTTP on loopback; `http` and `master` are extra lines for
/// those tables.
fn start(tag: &str, http: &str, master: &str) -> Lobby {
    let dir = tmpdir(tag);
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        format!(
            "[master]\nlisten = [\"127.0.0.1:0\"]\nworkers = 1\n{master}\n[http]\nlisten = [\"127.0.0.1:0\"]\n{http}\n"
        ),
    )
    .unwrap();
    Lobby::start(&["master", "--config", cfg.to_str().unwrap()], 2)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

/// Reads one response (status, body) of a kept-alive connection (Content-Length).
fn response(s: &mut TcpStream) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if raw.len() >= end + 4 + len {
                let status = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let body = String::from_utf8_lossy(&raw[end + 4..end + 4 + len]).into_owned();
                return (status, body);
            }
        }
        assert!(Instant::now() < deadline, "no whole response: {raw:?}");
        match s.read(&mut buf) {
            Ok(0) => panic!("closed before a whole response: {raw:?}"),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("read failed: {e}"),
        }
    }
}

/// Writes a request the server is expected to refuse before it has read all of it:
/// the server answers and closes as soon as it has seen enough, so the rest of the
/// write may fail with a broken pipe or a reset; the answer is still in the receive
/// queue and `response` reads it.
fn send_refused(s: &mut TcpStream, request: &[u8]) {
    match s.write_all(request) {
        Ok(()) => {}
        Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {}
        Err(e) => panic!("write failed: {e}"),
    }
}

fn get(s: &mut TcpStream, path: &str) -> (u16, String) {
    write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    response(s)
}

/// `/stats` → `http` counters.
fn http_stats(addr: SocketAddr) -> Value {
    let (status, body) = http_get(addr, "/stats");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["http"].clone()
}

fn counter(addr: SocketAddr, name: &str) -> u64 {
    http_stats(addr)[name]
        .as_u64()
        .unwrap_or_else(|| panic!("no http.{name}"))
}

#[test]
fn a_client_that_sends_half_a_header_is_cut_off() {
    // The idle timer alone would never fire: a byte arrives every 200 ms.
    let m = start("half", "header_read_timeout = 1\nidle_timeout = 30", "");
    let http = m.addr("http", "tcp");
    let mut s = connect(http);
    s.write_all(b"GET /stats HTTP/1.1\r\nHost: test\r\n")
        .unwrap();
    let closed = closed_within(&mut s, Duration::from_secs(10), |s| {
        let _ = s.write_all(b"X");
    });
    assert!(closed, "a trickled header kept the connection open");
    // A connection that sends nothing at all is cut off by the same timer.
    let mut silent = connect(http);
    assert!(closed_within(&mut silent, Duration::from_secs(10), |_| {}));
    assert!(counter(http, "header_timeouts") >= 2);
}

#[test]
fn idle_keep_alive_connections_are_closed() {
    let m = start("idle", "idle_timeout = 1\nheader_read_timeout = 60", "");
    let http = m.addr("http", "tcp");
    let mut s = connect(http);
    assert_eq!(get(&mut s, "/").0, 200);
    assert_eq!(get(&mut s, "/").0, 200, "kept alive between requests");
    let t0 = Instant::now();
    assert!(
        closed_within(&mut s, Duration::from_secs(10), |_| {}),
        "an idle keep-alive connection stayed open"
    );
    assert!(
        t0.elapsed() >= Duration::from_millis(500),
        "closed before it was idle"
    );
    assert!(counter(http, "idle_timeouts") >= 1, "{}", m.stderr());
}

#[test]
fn a_connection_lives_at_most_connection_timeout() {
    let m = start(
        "life",
        "connection_timeout = 1\nidle_timeout = 30\nheader_read_timeout = 30",
        "",
    );
    let http = m.addr("http", "tcp");
    let mut s = connect(http);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut served = 0;
    let closed = loop {
        if Instant::now() > deadline {
            break false;
        }
        if write!(s, "GET / HTTP/1.1\r\nHost: test\r\n\r\n").is_err() {
            break true;
        }
        let mut buf = [0u8; 4096];
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => served += 1,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break true,
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(closed, "a busy connection lived past connection_timeout");
    assert!(served >= 2, "served {served}");
    assert!(counter(http, "connection_timeouts") >= 1);
}

/// A connection from `ip`.
fn connect_from(ip: &str, addr: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&format!("{ip}:0").parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.connect(&addr.into()).unwrap();
    let s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

#[test]
fn at_the_cap_the_longest_waiting_connection_makes_room() {
    // Issue 20, item 5. Before the fix the third connection was refused (503) while
    // two kept-alive connections sat idle.
    let m = start(
        "cap",
        "max_connections = 2\nidle_timeout = 60\nheader_read_timeout = 60",
        "",
    );
    let http = m.addr("http", "tcp");
    let mut a = connect(http);
    let mut b = connect(http);
    assert_eq!(get(&mut a, "/").0, 200);
    assert_eq!(get(&mut b, "/").0, 200);
    let mut c = connect(http);
    assert_eq!(get(&mut c, "/stats").0, 200, "served at once");
    assert!(
        closed_within(&mut a, Duration::from_secs(5), |_| {}),
        "a, the longest waiting, was closed for it"
    );
    assert_eq!(get(&mut c, "/").0, 200, "c is kept alive");
    let (_, body) = get(&mut c, "/stats");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["http"]["evicted_waiting"], 1, "{v}");
    assert_eq!(v["http"]["refused_connection_cap"], 0, "{v}");
    assert_eq!(get(&mut b, "/").0, 200, "b, younger, still works");
}

#[test]
fn half_sent_heads_from_many_sources_do_not_keep_a_fresh_client_out() {
    // Issue 20, item 5: 1,000 half-sent requests from 100 addresses filled the cap and
    // fresh clients got only 503s. Here 40 from 10 addresses fill a cap of 40 (4 per
    // source, each source in its own /24); a fresh client is served at once.
    let m = start(
        "slowheads",
        "max_connections = 40\nmax_connections_per_ip = 4\nidle_timeout = 60\nheader_read_timeout = 60",
        "",
    );
    let http = m.addr("http", "tcp");
    let mut slow: Vec<TcpStream> = Vec::new();
    for src in 0..10 {
        for _ in 0..4 {
            let mut s = connect_from(&format!("127.0.{}.1", 20 + src), http);
            s.write_all(b"GET /v1/gamedirs HTTP/1.1\r\nHo").unwrap();
            slow.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..5 {
        let mut fresh = connect_from(&format!("127.0.{}.1", 60 + i), http);
        assert_eq!(get(&mut fresh, "/v1/gamedirs").0, 200, "fresh client {i}");
    }
    // One of the earliest half-sent requests (the tasks' start order is not the
    // connect order) was closed to make room.
    std::thread::sleep(Duration::from_millis(300));
    let mut closed = 0;
    for s in &mut slow {
        s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        if closed_within(s, Duration::from_millis(20), |_| {}) {
            closed += 1;
        }
    }
    assert!(closed >= 1, "no half-sent request was closed");
    // (each fresh client closes before the next: one made room for all five)
    assert!(counter(http, "evicted_waiting") >= 1);
    assert_eq!(counter(http, "refused_connection_cap"), 0);
}

#[test]
fn one_source_holds_its_share_and_its_own_waiting_connection_makes_room() {
    // Before: a third connection from a source with two was refused (503) even when
    // both sat idle (a browser's keep-alive connections then kept its next request
    // out). Now the source's own longest-waiting connection is closed for it; the
    // source still holds at most its two.
    let m = start(
        "perip",
        "max_connections = 10\nmax_connections_per_ip = 2\nidle_timeout = 60\nheader_read_timeout = 60",
        "",
    );
    let http = m.addr("http", "tcp");
    let mut held: Vec<TcpStream> = (0..2).map(|_| connect(http)).collect();
    for s in &mut held {
        assert_eq!(get(s, "/").0, 200);
    }
    std::thread::sleep(Duration::from_millis(100));
    let mut third = connect(http);
    assert_eq!(get(&mut third, "/").0, 200, "served at once");
    let mut closed = 0;
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        if closed_within(s, Duration::from_millis(500), |_| {}) {
            closed += 1;
        }
    }
    assert_eq!(closed, 1, "one of its own made room, the other stays");
    // Another source is served and sees the count.
    let other = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    other
        .bind(&"127.0.0.2:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    other.connect(&http.into()).unwrap();
    let mut other: TcpStream = other.into();
    other
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let (status, body) = get(&mut other, "/stats");
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["http"]["evicted_waiting"], 1, "{v}");
    assert_eq!(v["http"]["refused_per_ip_cap"], 0, "{v}");
}

#[test]
fn oversized_requests_are_refused_with_413_and_431() {
    // The defaults: 8 KiB of headers, 4 KiB of body.
    let m = start("big", "", "");
    let http = m.addr("http", "tcp");
    let mut s = connect(http);
    // Before this used send_refused, CI failed here with a broken pipe: the 431 went
    // out, and the connection closed, while the client was still writing.
    let big = format!(
        "GET /stats HTTP/1.1\r\nHost: test\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    send_refused(&mut s, big.as_bytes());
    assert_eq!(response(&mut s).0, 431);
    let mut s = connect(http);
    write!(
        s,
        "GET /stats HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\n"
    )
    .unwrap();
    assert_eq!(response(&mut s).0, 413);
    let mut s = connect(http);
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    write!(s, "GET /stats HTTP/1.1\r\nHost: test\r\n{many}\r\n").unwrap();
    assert_eq!(response(&mut s).0, 431, "too many headers");
    // A connection is counted when it ends, just after its 431 went out: wait for it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let st = loop {
        let st = http_stats(http);
        if st["headers_too_large"].as_u64().unwrap() >= 2 || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(st["headers_too_large"].as_u64().unwrap() >= 2, "{st}");
    assert!(st["body_too_large"].as_u64().unwrap() >= 1, "{st}");
    // A normal request on the same server still works.
    assert_eq!(http_get(http, "/v1/servers/valve").0, 200);
}

const INFO: &str = "\\players\\1\\max\\16\\bots\\0\\map\\crossfire\\type\\d\\password\\0\\os\\l\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";

/// Registers `s` as a server of `gamedir` (heartbeat, challenge, info).
fn register(s: &UdpSocket, master: SocketAddr, gamedir: &str) {
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        s.send_to(&[0x71, 0xff, 1, 2, 3, 4], master).unwrap();
        if let Ok((n, _)) = s.recv_from(&mut buf) {
            let c = ChallengeReply::decode(&buf[..n]).unwrap();
            let p = format!(
                "0\n\\protocol\\49\\challenge\\{}\\gamedir\\{gamedir}{INFO}",
                c.master_challenge
            );
            s.send_to(p.as_bytes(), master).unwrap();
            return;
        }
        assert!(Instant::now() < deadline, "the master never answered");
    }
}

fn list(http: SocketAddr, gamedir: &str) -> Vec<String> {
    let (status, body) = http_get(http, &format!("/v1/servers/{gamedir}"));
    assert_eq!(status, 200);
    let mut l = common::engine_entries(&body);
    l.sort();
    l
}

fn lines(socks: &[&UdpSocket]) -> Vec<String> {
    let mut l: Vec<String> = socks
        .iter()
        .map(|s| format!("ip {}", s.local_addr().unwrap()))
        .collect();
    l.sort();
    l
}

/// Polls the list until it equals `want`, refreshing `keep` meanwhile (bounded).
fn list_until(
    http: SocketAddr,
    master: SocketAddr,
    gamedir: &str,
    want: &[String],
    keep: &[(&UdpSocket, &str)],
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = list(http, gamedir);
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{gamedir}: got {got:?}, want {want:?}"
        );
        for (s, g) in keep {
            register(s, master, g);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_list_follows_servers_that_come_change_and_go() {
    let m = start("list", "", "server_ttl = 2\nrate_burst = 1000");
    let (http, master) = (m.addr("http", "tcp"), m.addr("master", "udp"));
    let sock = |ip: &str| {
        let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        s
    };
    let (a, b, c) = (sock("127.0.0.1"), sock("127.0.0.2"), sock("127.0.0.3"));
    assert!(list(http, "valve").is_empty());
    register(&a, master, "valve");
    register(&b, master, "cstrike");
    list_until(http, master, "valve", &lines(&[&a]), &[]);
    list_until(http, master, "cstrike", &lines(&[&b]), &[]);
    // The same list again, from the snapshot.
    assert_eq!(list(http, "valve"), lines(&[&a]));
    // A server comes.
    register(&c, master, "valve");
    list_until(http, master, "valve", &lines(&[&a, &c]), &[]);
    // One changes game: it leaves one list and joins the other.
    register(&c, master, "cstrike");
    list_until(http, master, "valve", &lines(&[&a]), &[]);
    list_until(http, master, "cstrike", &lines(&[&b, &c]), &[]);
    // Servers that stop refreshing expire; the one that refreshes stays.
    list_until(http, master, "cstrike", &lines(&[&c]), &[(&c, "cstrike")]);
    list_until(http, master, "valve", &[], &[(&c, "cstrike")]);
    assert!(list(http, "nosuchgame").is_empty());
}

#[test]
fn a_gamedir_or_map_longer_than_the_engines_is_refused() {
    // Issue 20, item 9: info values were bounded only by the info string's 127 bytes
    // per value; the engine's own names are under 64 (MAX_QPATH).
    let m = start("longname", "", "");
    let (master, http) = (m.addr("master", "udp"), m.addr("http", "tcp"));
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let long = "g".repeat(100);
    register(&s, master, &long);
    let ok = UdpSocket::bind("127.0.0.1:0").unwrap();
    ok.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let name63 = "v".repeat(63);
    list_until(
        http,
        master,
        &name63,
        &[format!("ip {}", ok.local_addr().unwrap())],
        &[(&ok, name63.as_str())],
    );
    let st: Value = serde_json::from_str(&http_get(http, "/stats").1).unwrap();
    assert_eq!(st["master"]["servers_added"], 1, "{st}");
    assert!(st["master"]["drop_bad_info"].as_u64() >= Some(1), "{st}");
}

#[test]
fn out_of_descriptors_accepts_fail_at_most_20_a_second_and_warn_once_a_second() {
    // lobby under a hard limit of 64 descriptors, and clients holding connections
    // until its accepts fail (EMFILE): each failure is counted, logged at warn at
    // most once a second, and followed by a 50 ms pause, not a busy loop (the
    // waiting connection keeps the listener readable).
    let dir = std::env::temp_dir().join(format!("lobby-http-emfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        "[http]\nmax_connections = 1000\nmax_connections_per_ip = 1000\nidle_timeout = 30\nheader_read_timeout = 30\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_lobby");
    let l = Lobby::start_cmd(
        "prlimit",
        &[
            "--nofile=64:64",
            bin,
            "relay",
            "--config",
            cfg.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "off",
            "--http",
            "127.0.0.1:0",
        ],
        2,
    );
    let http = l.addr("http", "tcp");
    let failed = || l.stderr().matches("HTTP accept failed").count();
    let mut held = Vec::new();
    while failed() == 0 {
        assert!(held.len() < 100, "accepts never failed\n{}", l.stderr());
        held.push(TcpStream::connect(http).unwrap());
        std::thread::sleep(Duration::from_millis(5));
    }
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(1000));
    drop(held);
    let held_for = t.elapsed().as_secs_f64();
    let (code, body) = http_get(http, "/stats");
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let errors = v["http"]["accept_errors"].as_u64().unwrap();
    assert!(
        (10..=(held_for * 20.0) as u64 + 3).contains(&errors),
        "{errors} failed accepts in {held_for:.2} s"
    );
    let warned = l
        .stderr()
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("HTTP accept failed"))
        .count();
    assert!(
        (1..=3).contains(&warned),
        "{warned} warnings for {errors} failures"
    );
    drop(l);
    let _ = std::fs::remove_dir_all(&dir);
}
