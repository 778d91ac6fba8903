//! Self-registration (`POST /api/servers/register`) tried as an attacker would
//! (issue 30, item 4), against the real binary on loopback: `lobby master` with
//! `registration` and `registration_private` on, asked from many loopback sources
//! (127.0.N.1 is its own IPv4 /24, so its own network), with UDP sockets standing in
//! for the addresses named (silent, or answering something unrelated) and `lobby sim`
//! servers with chosen host names. Each test records the answers, what the target
//! receives, what the master holds (`/api/admin/registrations`, `/metrics`) and what
//! it logs. docs/RELIABILITY.md, "Issue 30: self-registration as an attacker", holds
//! the table.

mod common;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ADMIN: &str = "0123456789abcdef0123456789";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-regattack-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `lobby master` with self-registration on (loopback addresses allowed), an admin
/// token, the list probed every second and `extra` flags.
fn master(dir: &std::path::Path, extra: &[&str]) -> Lobby {
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("gordon {ADMIN}\n")).unwrap();
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        format!(
            "[master]\nregistration = true\nregistration_private = true\nsave_interval = 0.5\n\n[admin]\ntokens_file = {:?}\nstate_file = \"\"\n",
            tokens.to_str().unwrap()
        ),
    )
    .unwrap();
    let state = dir.join("master.json");
    let mut args = vec![
        "--config",
        cfg.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    list_master(&args)
}

/// One HTTP/1.1 exchange from the loopback address `ip`: (status, JSON body or the
/// text as a JSON string).
fn request_from(ip: &str, http: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut s = tcp_from(ip, http);
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let v = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_string()));
    (status, v)
}

/// `POST /api/servers/register` of `addr` in `gamedir` from the loopback address `ip`.
fn register(ip: &str, http: SocketAddr, addr: &str, gamedir: &str) -> (u16, Value) {
    let body =
        format!(r#"{{"address": "{addr}", "gamedir": "{gamedir}", "contact": "ops@example.org"}}"#);
    request_from(ip, http, "POST", "/api/servers/register", &body)
}

fn error(v: &Value) -> String {
    v["error"].as_str().unwrap_or_default().to_string()
}

/// The admin's view: `{"pending": {TOKEN: {...}}, "registered": {...}}`.
fn registrations(http: SocketAddr) -> Value {
    let (s, v) = request_from("127.0.0.1", http, "GET", "/api/admin/registrations", "");
    assert_eq!(s, 200, "{v}");
    v
}

/// The value of the `/metrics` sample `name{labels}` (0 when absent).
fn metric(http: SocketAddr, sample: &str) -> u64 {
    let (_, text) = http_get(http, "/metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

/// Log lines at INFO, WARN or ERROR that mention registration.
fn loud_registration_lines(m: &Lobby) -> Vec<String> {
    m.stderr()
        .lines()
        .filter(|l| {
            (l.contains(" INFO ") || l.contains(" WARN ") || l.contains(" ERROR "))
                && l.contains("regist")
        })
        .map(str::to_string)
        .collect()
}

/// A UDP socket standing in for someone else's address: it records what arrives
/// (when, how long) and answers with `reply`, if any, something that is no game
/// server's answer.
struct Target {
    addr: SocketAddr,
    got: Arc<Mutex<Vec<(Instant, usize)>>>,
    stop: Arc<AtomicBool>,
}

impl Target {
    fn new(ip: &str, reply: Option<&'static [u8]>) -> Target {
        let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let addr = s.local_addr().unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (g, st) = (got.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !st.load(Ordering::Relaxed) {
                if let Ok((n, from)) = s.recv_from(&mut buf) {
                    g.lock().unwrap().push((Instant::now(), n));
                    if let Some(r) = reply {
                        let _ = s.send_to(r, from);
                    }
                }
            }
        });
        Target { addr, got, stop }
    }

    /// (datagrams, bytes) received since `since`.
    fn since(&self, since: Instant) -> (usize, usize) {
        let g = self.got.lock().unwrap();
        let v: Vec<usize> = g
            .iter()
            .filter(|(t, _)| *t >= since)
            .map(|(_, n)| *n)
            .collect();
        (v.len(), v.iter().sum())
    }

    /// The checks received: runs of datagrams less than 5 s apart, as (start,
    /// datagrams, bytes).
    fn checks(&self) -> Vec<(Instant, usize, usize)> {
        let g = self.got.lock().unwrap();
        let mut out: Vec<(Instant, usize, usize)> = Vec::new();
        let mut last: Option<Instant> = None;
        for (t, n) in g.iter() {
            match (last, out.last_mut()) {
                (Some(l), Some(c)) if t.duration_since(l) < Duration::from_secs(5) => {
                    c.1 += 1;
                    c.2 += n;
                }
                _ => out.push((*t, 1, *n)),
            }
            last = Some(*t);
        }
        out
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A silent address is asked `info 49` and A2S_INFO, once more 2 s later: four
/// datagrams a check, 25 bytes at most each (A2S_INFO is the longest).
const DATAGRAMS_PER_CHECK: usize = 4;
const LONGEST: usize = 25;

/// b) and d): one address (a silent UDP socket) named from six networks in six
/// gamedirs, in two rounds a loop tick apart; another that answers with something
/// unrelated; ten ports of one IP named from ten networks. The first four networks
/// get their own tokens (202), the next 429, the same network again 409; eight ports
/// of one IP are held and two refused. The silent address gets one check at a time,
/// at least 14 s apart, four datagrams of at most 25 bytes each, whatever number of
/// registrations name it; the unrelated answers change nothing; once the admin
/// removes the registrations, nothing more. No log line at INFO or louder.
#[test]
fn an_address_named_from_many_networks_gets_one_bounded_check_at_a_time() {
    let dir = tmp("victim");
    let m = master(&dir, &[]);
    let http = m.addr("http", "tcp");
    let victim = Target::new("127.0.0.1", None);
    let unrelated = Target::new("127.0.0.1", Some(b"HTTP/1.0 400 Bad Request\r\n\r\n"));
    let ports: Vec<Target> = (0..10).map(|_| Target::new("127.0.0.3", None)).collect();
    let start = Instant::now();

    let gamedirs = ["valve", "cstrike", "tfc", "dmc", "ricochet", "gearbox"];
    let mut answers = Vec::new();
    for (i, g) in gamedirs.iter().enumerate() {
        if i == 3 {
            // The next three a loop tick later: before the checks were shared, each
            // registration kept its own 15 s phase.
            std::thread::sleep(Duration::from_secs(6));
        }
        answers.push(register(
            &format!("127.0.{}.1", 10 + i),
            http,
            &victim.addr.to_string(),
            g,
        ));
    }
    let tokens: Vec<String> = answers
        .iter()
        .filter(|(s, _)| *s == 202)
        .map(|(_, v)| v["token"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tokens.len(),
        4,
        "a token per network, four per address: {answers:?}"
    );
    assert!(tokens
        .iter()
        .all(|t| tokens.iter().filter(|u| *u == t).count() == 1));
    for (s, v) in &answers[4..] {
        assert_eq!(*s, 429, "{v}");
        assert!(
            error(v).contains("has 4 registrations pending; retry after"),
            "{v}"
        );
    }
    let (s, v) = register("127.0.10.1", http, &victim.addr.to_string(), "valve");
    assert_eq!(s, 409, "the same network again: {v}");
    assert!(
        error(&v).contains("from 127.0.10.0/24 is pending until"),
        "{v}"
    );

    let (s, v) = register("127.0.30.1", http, &unrelated.addr.to_string(), "valve");
    assert_eq!(s, 202, "{v}");
    let mut port_answers = Vec::new();
    for (i, t) in ports.iter().enumerate() {
        port_answers.push(register(
            &format!("127.0.{}.1", 40 + i),
            http,
            &t.addr.to_string(),
            "valve",
        ));
    }
    let held: Vec<bool> = port_answers.iter().map(|(s, _)| *s == 202).collect();
    assert_eq!(held.iter().filter(|h| **h).count(), 8, "{port_answers:?}");
    for (s, v) in port_answers.iter().filter(|(s, _)| *s != 202) {
        assert_eq!(*s, 429, "{v}");
        assert!(
            error(v).contains("127.0.0.3 has 8 addresses pending"),
            "{v}"
        );
    }
    let pending = registrations(http)["pending"].as_object().unwrap().len();
    assert_eq!(pending, 4 + 1 + 8);
    assert_eq!(
        metric(http, "lobby_list_registrations{state=\"pending\"}"),
        13
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"accepted\"}"
        ),
        13
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"limited\"}"
        ),
        4
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"exists\"}"
        ),
        1
    );

    // 40 s from the first request.
    std::thread::sleep(Duration::from_secs(40).saturating_sub(start.elapsed()));
    let window = start.elapsed().as_secs_f64();
    let max_checks = (window / 14.0).floor() as usize + 1;
    for (who, t) in [("silent", &victim), ("unrelated", &unrelated)] {
        let checks = t.checks();
        let at: Vec<String> = checks
            .iter()
            .map(|(t, n, b)| {
                format!(
                    "{:.0} s: {n} datagrams, {b} bytes",
                    t.duration_since(start).as_secs_f64()
                )
            })
            .collect();
        eprintln!("{who}: {} checks in {window:.0} s: {at:?}", checks.len());
        assert!(
            !checks.is_empty() && checks.len() <= max_checks,
            "{who}: {checks:?}"
        );
        for w in checks.windows(2) {
            let gap = w[1].0.duration_since(w[0].0);
            assert!(
                gap >= Duration::from_secs(14),
                "{who}: a check {gap:?} after the last"
            );
        }
        for (_, n, bytes) in &checks {
            assert!(
                *n <= DATAGRAMS_PER_CHECK && *bytes <= n * LONGEST,
                "{who}: {checks:?}"
            );
        }
    }
    let mut on_ip = 0;
    for (t, h) in ports.iter().zip(&held) {
        let (n, bytes) = t.since(start);
        on_ip += n;
        if *h {
            assert!(
                n <= max_checks * DATAGRAMS_PER_CHECK && bytes <= n * LONGEST,
                "{n} {bytes}"
            );
        } else {
            assert_eq!(n, 0, "a refused registration sends nothing");
        }
    }
    assert!(on_ip <= 8 * max_checks * DATAGRAMS_PER_CHECK, "{on_ip}");
    let checks = metric(http, "lobby_list_registration_checks_total");
    assert!(checks <= 10 * max_checks as u64, "{checks}");

    let loud = loud_registration_lines(&m);
    assert!(loud.is_empty(), "{loud:#?}");
    let debug = m.stderr().matches("registration pending").count();
    assert_eq!(debug, 13, "each accepted request at debug");

    // The admin removes the silent one's registrations: nothing more reaches it.
    let path = format!("/api/admin/registrations/{}", victim.addr);
    let (s, v) = request_from("127.0.0.1", http, "DELETE", &path, "");
    assert_eq!(s, 200, "{v}");
    std::thread::sleep(Duration::from_secs(3));
    let quiet = Instant::now();
    std::thread::sleep(Duration::from_secs(20));
    assert_eq!(victim.since(quiet), (0, 0), "after its registrations ended");
    assert_eq!(
        metric(http, "lobby_list_registrations{state=\"pending\"}"),
        9
    );
    let loud = loud_registration_lines(&m);
    assert!(
        loud.len() == 1 && loud[0].contains("removed by an admin"),
        "{loud:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lobby sim` serving one Xash3D server on 127.0.0.1 (`args` added): it and its address.
fn sim(args: &[&str]) -> (Lobby, SocketAddr) {
    let mut a = vec!["sim", "--listen-ip", "127.0.0.1", "--count", "1"];
    a.extend_from_slice(args);
    let s = Lobby::start(&a, 1);
    let addr = s.addr("sim", "udp");
    (s, addr)
}

/// A loopback port nothing answers on now (bound, then closed).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The engine's list of `valve`.
fn listed(http: SocketAddr) -> Vec<String> {
    let (s, body) = http_get(http, "/v1/servers/valve");
    assert_eq!(s, 200, "{body}");
    engine_entries(&body)
}

/// Polls `what` every 250 ms until it holds, for at most `within`.
fn until(within: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `/api/servers`' entry for `addr`.
fn api_entry(http: SocketAddr, addr: SocketAddr) -> Option<Value> {
    let (_, body) = http_get(http, "/api/servers");
    let v: Value = serde_json::from_str(&body).ok()?;
    v["servers"]
        .as_array()?
        .iter()
        .find(|e| e["address"] == addr.to_string())
        .cloned()
}

/// a) Tokens guessed: a server showing another pending entry's token (and a guessed
/// one) in its host name admits neither entry; tokens are `lobby-` and 24 hex
/// digits (96 random bits), distinct; a network's tries are rationed (4 pending, 12
/// requests an hour, then 429). A server showing its own token is admitted: one INFO
/// line, for the admission only.
#[test]
fn guessed_or_borrowed_tokens_admit_nothing_and_tries_are_rationed() {
    let dir = tmp("guess");
    let m = master(&dir, &[]);
    let http = m.addr("http", "tcp");

    // The victim: a server whose host name the attacker does not control.
    let (_victim, v) = sim(&["--hostname", "Victim server"]);
    let (s, b) = register("127.0.20.1", http, &v.to_string(), "valve");
    assert_eq!(s, 202, "{b}");
    let tv = b["token"].as_str().unwrap().to_string();
    // The attacker's own server shows the victim's token and a guess.
    let port = free_port();
    let own = format!("127.0.0.1:{port}");
    let (s, b) = register("127.0.21.1", http, &own, "valve");
    assert_eq!(s, 202, "{b}");
    let ta = b["token"].as_str().unwrap().to_string();
    let guess = format!("lobby-{}", "0".repeat(24));
    let shown = format!("{tv} {guess}");
    let p = port.to_string();
    let attacker = sim(&["--hostname", &shown, "--base-port", &p]);

    // Two checks each: both still pending, the list empty.
    until(Duration::from_secs(60), "two checks of each", || {
        let r = registrations(http);
        [&tv, &ta]
            .iter()
            .all(|t| r["pending"][t.as_str()]["checks"].as_u64().unwrap_or(0) >= 2)
    });
    let r = registrations(http);
    for t in [&tv, &ta] {
        let last = r["pending"][t.as_str()]["last_result"].as_str().unwrap();
        assert!(last.contains("answered, but the token is"), "{t}: {last}");
    }
    assert!(r["registered"].as_object().unwrap().is_empty(), "{r}");
    assert!(listed(http).is_empty());

    // The attacker's network tries again and again: 12 requests an hour, 4 pending.
    let mut tokens = vec![tv.clone(), ta.clone()];
    let mut codes = Vec::new();
    for i in 0..12 {
        let (s, b) = register(
            &format!("127.0.21.{}", 2 + i),
            http,
            &format!("127.0.0.5:{}", 1000 + i),
            "valve",
        );
        codes.push((s, error(&b)));
        if s == 202 {
            tokens.push(b["token"].as_str().unwrap().to_string());
        }
    }
    assert!(codes[..3].iter().all(|(s, _)| *s == 202), "{codes:?}");
    assert!(
        codes[3..11]
            .iter()
            .all(|(s, e)| *s == 429 && e.contains("has 4 registrations pending")),
        "{codes:?}"
    );
    assert_eq!(codes[11].0, 429);
    assert!(
        codes[11]
            .1
            .contains("asked 12 times this hour; retry after"),
        "{codes:?}"
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"limited\"}"
        ),
        9
    );
    for t in &tokens {
        assert!(
            t.len() == 30
                && t.starts_with("lobby-")
                && t[6..].chars().all(|c| c.is_ascii_hexdigit()),
            "{t}"
        );
        assert_eq!(tokens.iter().filter(|u| *u == t).count(), 1, "{tokens:?}");
    }

    // Its own token, on its own server: admitted; the victim never is.
    drop(attacker);
    let name = format!("Attacker {ta}");
    let _honest = sim(&["--hostname", &name, "--base-port", &p]);
    until(
        Duration::from_secs(40),
        "the attacker's own server listed",
        || listed(http) == vec![format!("ip {own}")],
    );
    assert!(
        registrations(http)["pending"].get(&tv).is_some(),
        "the victim's entry waits for its expiry"
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registrations_ended_total{how=\"admitted\"}"
        ),
        1
    );
    let loud = loud_registration_lines(&m);
    assert!(
        loud.len() == 1 && loud[0].contains("server registered: it showed its token"),
        "{loud:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// c) A server shows its token, is admitted, then its address changes hands: the
/// server answering there now, without the token and under another name, stays
/// listed (the token proved control once; the listing follows the address, as a
/// curated or heartbeat entry does), and its new holder cannot register it again
/// (409). When the address falls silent it leaves the list after `grace`, and the
/// master keeps probing it as it probes any silent listed address (a probe of at
/// most six datagrams, backing off) until `prune_after` or an admin removes it.
#[test]
fn an_address_that_changes_hands_stays_listed_until_it_falls_silent() {
    let dir = tmp("hands");
    let m = master(&dir, &["--grace", "3"]);
    let http = m.addr("http", "tcp");
    let port = free_port();
    let own = format!("127.0.0.1:{port}");
    let addr: SocketAddr = own.parse().unwrap();
    let p = port.to_string();
    let (s, b) = register("127.0.50.1", http, &own, "valve");
    assert_eq!(s, 202, "{b}");
    let token = b["token"].as_str().unwrap().to_string();
    let first = format!("First owner {token}");
    let a = sim(&["--hostname", &first, "--base-port", &p]);
    until(Duration::from_secs(40), "admitted and listed", || {
        listed(http) == vec![format!("ip {own}")]
    });
    until(Duration::from_secs(10), "probed", || {
        api_entry(http, addr).is_some_and(|e| e["name"] == first.as_str())
    });

    // Another server at the address, without the token.
    drop(a);
    let _b = sim(&["--hostname", "Second owner", "--base-port", &p]);
    until(Duration::from_secs(20), "the new name published", || {
        api_entry(http, addr).is_some_and(|e| e["name"] == "Second owner")
    });
    assert_eq!(listed(http), vec![format!("ip {own}")]);
    let e = api_entry(http, addr).unwrap();
    assert!(
        e["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "registered"),
        "{e}"
    );
    let r = registrations(http);
    let reg = r["registered"].as_object().unwrap();
    assert_eq!(reg.len(), 1, "{r}");
    let reg = reg.values().next().unwrap();
    assert_eq!(
        (reg["from"].as_str(), reg["admitted_by"].as_str()),
        (Some("127.0.50.0/24"), Some("proof"))
    );
    let (s, b) = register("127.0.51.1", http, &own, "valve");
    assert_eq!(s, 409, "{b}");
    assert!(error(&b).contains("is listed for valve already"), "{b}");

    // The address falls silent: unpublished after grace, the registration kept.
    drop(_b);
    let t = UdpSocket::bind(addr).unwrap();
    t.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    until(Duration::from_secs(30), "unpublished", || {
        listed(http).is_empty()
    });
    assert_eq!(
        registrations(http)["registered"].as_object().unwrap().len(),
        1
    );
    // What the master sends it now: the prober's probes of a silent address (here
    // every second, `--probe-interval 1`): a try is `info 49` and A2S_INFO, one in
    // flight, a try every 2 s (12 datagrams seen in 10 s).
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(10) {
        if let Ok((n, _)) = t.recv_from(&mut buf) {
            got.push((watch.elapsed(), n));
        }
    }
    eprintln!(
        "silent listed address, 10 s: {} datagrams: {got:?}",
        got.len()
    );
    assert!(got.iter().all(|(_, n)| *n <= LONGEST), "{got:?}");
    assert!(got.len() <= 2 * 11, "{got:?}");
    // A server of another game at the address: its answers do not count for valve's
    // list, as they would not at admission (before: any answer there counted, so the
    // address went back on valve's list playing cstrike).
    drop(t);
    let _c = sim(&[
        "--hostname",
        "Third owner",
        "--gamedir",
        "cstrike",
        "--base-port",
        &p,
    ]);
    let other_game = || {
        let (_, body) = http_get(http, "/stats");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["list"]["registered_other_game"].as_u64().unwrap()
    };
    until(
        Duration::from_secs(40),
        "answers as cstrike counted",
        || other_game() >= 2,
    );
    assert!(listed(http).is_empty(), "{:?}", listed(http));
    assert!(api_entry(http, addr).is_none_or(|e| e["name"] != "Third owner"));
    // An admin removes it.
    let path = format!("/api/admin/registrations/{own}");
    let (s, v) = request_from("127.0.0.1", http, "DELETE", &path, "");
    assert_eq!(s, 200, "{v}");
    assert!(registrations(http)["registered"]
        .as_object()
        .unwrap()
        .is_empty());
    let loud = loud_registration_lines(&m);
    assert_eq!(
        loud.len(),
        2,
        "the admission and the admin's removal: {loud:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// e) The pending caps: a network's fifth request is refused (4 pending per /24),
/// and once 256 networks hold 1,024 pending entries in all the next network is
/// refused; each refusal is a 429 counted in `/metrics`, none logged above debug.
#[test]
fn pending_entries_at_their_caps_are_refused_and_counted() {
    let dir = tmp("caps");
    let m = master(&dir, &[]);
    let http = m.addr("http", "tcp");
    // Targets: four ports on each of 256 IPs (the cap is 8 a target IP).
    let target = |n: usize| {
        format!(
            "127.3.{}.{}:{}",
            n / 4 / 250,
            n / 4 % 250 + 1,
            20000 + n % 4
        )
    };
    let mut n = 0;
    let mut codes = Vec::new();
    for h in 0..5 {
        codes.push(register(
            &format!("127.0.60.{}", h + 1),
            http,
            &target(n),
            "valve",
        ));
        n += 1;
    }
    assert!(codes[..4].iter().all(|(s, _)| *s == 202), "{codes:?}");
    assert_eq!(codes[4].0, 429);
    assert!(
        error(&codes[4].1)
            .contains("127.0.60.0/24 has 4 registrations pending; retry when they end"),
        "{codes:?}"
    );
    // 255 more networks, four each: 1,024 pending in all.
    for net in 0..255 {
        for h in 0..4 {
            let from = format!("127.1.{net}.{}", h + 1);
            let (s, v) = register(&from, http, &target(n), "valve");
            assert_eq!(s, 202, "{from}: {v}");
            n += 1;
        }
    }
    assert_eq!(
        metric(http, "lobby_list_registrations{state=\"pending\"}"),
        1024
    );
    let (s, v) = register("127.2.0.1", http, &target(n), "valve");
    assert_eq!(s, 429, "{v}");
    assert!(
        error(&v).contains("too many registrations pending; retry in a few minutes"),
        "{v}"
    );
    assert_eq!(
        registrations(http)["pending"].as_object().unwrap().len(),
        1024
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"accepted\"}"
        ),
        1024
    );
    assert_eq!(
        metric(
            http,
            "lobby_list_registration_requests_total{answer=\"limited\"}"
        ),
        2
    );
    let loud = loud_registration_lines(&m);
    assert!(
        loud.is_empty(),
        "{} lines at INFO or louder, e.g. {:?}",
        loud.len(),
        loud.first()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
