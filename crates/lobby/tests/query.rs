//! `lobby query` end to end against `lobby sim` and `lobby master` (real processes,
//! 127.0.0.1, port 0): scan, then query everything; every query type; handshake outcomes.

mod common;

use common::*;
use serde_json::Value;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

fn query(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lobby"))
        .arg("query")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        stdout + &String::from_utf8_lossy(&out.stderr),
    )
}

fn sim(master: Option<SocketAddr>, extra: &[&str]) -> Lobby {
    let count = extra
        .iter()
        .position(|a| *a == "--count")
        .map(|i| extra[i + 1].parse::<usize>().unwrap())
        .unwrap_or(1);
    let mut args = vec!["sim".to_string(), "--listen-ip".into(), "127.0.0.1".into()];
    if let Some(m) = master {
        args.push("--master".into());
        args.push(m.to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Lobby::start(&refs, count)
}

#[test]
fn scan_then_query_everything_equals_the_simulated_fleet() {
    let m = Lobby::start(&["master", "--listen", "127.0.0.1:0"], 1);
    let master = m.addr("master", "udp");
    let s = sim(
        Some(master),
        &[
            "--count",
            "5",
            "--hostname",
            "Sim ^1Test",
            "--map",
            "crossfire",
            "--max-players",
            "16",
            "--players",
            "3",
            "--seed",
            "7",
        ],
    );
    let fleet: Vec<SocketAddr> = s.addrs("sim", "udp");
    let deadline = Instant::now() + Duration::from_secs(15);
    let v = loop {
        let (code, v, out) = query(&[
            "master",
            &master.to_string(),
            "--gamedir",
            "valve",
            "--json",
            "--timeout",
            "1",
        ]);
        if v.as_array().is_some_and(|a| a.len() == 5) {
            assert_eq!(code, 0, "{out}");
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "the master never listed the fleet: {out}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut got: Vec<SocketAddr> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["address"].as_str().unwrap().parse().unwrap())
        .collect();
    got.sort();
    let mut want = fleet.clone();
    want.sort();
    assert_eq!(got, want, "every simulated server, once");
    for e in v.as_array().unwrap() {
        assert_eq!(e["status"], "info", "{e}");
        let info = &e["info"];
        assert_eq!(info["dialect"], "xash49");
        assert!(
            info["name"].as_str().unwrap().starts_with("Sim Test #"),
            "colour codes stripped in JSON: {info}"
        );
        assert_eq!(info["map"], "crossfire");
        assert_eq!(info["gamedir"], "valve");
        assert_eq!(info["players"], 3);
        assert_eq!(info["max_players"], 16);
    }
    // --list-only prints the merged list; the table form strips colour codes.
    let (_, _, out) = query(&["master", &master.to_string(), "--list-only"]);
    assert_eq!(
        out.lines()
            .filter(|l| l.parse::<SocketAddr>().is_ok())
            .count(),
        5
    );
    let (_, _, out) = query(&["info", &fleet[0].to_string()]);
    assert!(out.contains("Sim Test #") && !out.contains("^1"), "{out}");
}

#[test]
fn every_query_type_against_one_simulated_server() {
    let s = sim(
        None,
        &[
            "--count",
            "1",
            "--players",
            "2",
            "--max-players",
            "8",
            "--big-rules",
            "--hostname",
            "Q",
        ],
    );
    let a = s.addr("sim", "udp").to_string();
    let (code, v, out) = query(&["info", &a, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v[0]["info"]["name"], "Q");
    let (code, v, out) = query(&["players", &a, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v[0]["players"].as_array().unwrap().len(), 2, "{v}");
    let (code, v, out) = query(&["rules", &a, "--json"]);
    assert_eq!(code, 0, "{out}");
    let rules = v[0]["rules"].as_array().unwrap();
    assert!(
        rules.len() > 50,
        "a split rules reply, reassembled: {} rules",
        rules.len()
    );
    let (code, v, out) = query(&["ping", &a, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v[0]["spelling"], "ack");
    // An empty server sends no player list: a hint, not a bare timeout.
    let empty = sim(None, &["--count", "1", "--players", "0"]);
    let (code, v, _) = query(&[
        "players",
        &empty.addr("sim", "udp").to_string(),
        "--json",
        "--timeout",
        "0.3",
        "--retries",
        "0",
    ]);
    assert_eq!(code, 1);
    assert!(
        v[0]["hint"].as_str().unwrap().contains("empty or hidden"),
        "{v}"
    );
}

#[test]
fn connect_accepted_and_full() {
    let s = sim(
        None,
        &["--count", "1", "--players", "0", "--max-players", "2"],
    );
    let a = s.addr("sim", "udp").to_string();
    let (code, v, out) = query(&["connect", &a, "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v[0]["result"], "accepted", "{v}");
    assert!(v[0]["protinfo"].as_str().unwrap().contains("\\challenge\\"));
    assert_eq!(
        v[0]["bandwidth"], 1400,
        "the bandwidth test passed at the first size"
    );
    let full = sim(
        None,
        &["--count", "1", "--players", "2", "--max-players", "2"],
    );
    let (code, v, out) = query(&["connect", &full.addr("sim", "udp").to_string(), "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v[0]["result"], "rejected", "{v}");
    assert!(
        v[0]["reason"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("full"),
        "{v}"
    );
}

#[test]
fn nothing_answering_is_exit_code_1_and_usage_errors_are_2() {
    let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = dead.local_addr().unwrap().to_string();
    let (code, v, _) = query(&["info", &a, "--json", "--timeout", "0.2", "--retries", "0"]);
    assert_eq!(code, 1);
    assert_eq!(v[0]["status"], "no_reply");
    let (code, _, _) = query(&["master", &a, "--master-timeout", "0.2"]);
    assert_eq!(code, 1);
    let (code, _, out) = query(&["info", "not a host name!", "--timeout", "0.2"]);
    assert_eq!(code, 2, "{out}");
    let s = sim(None, &["--count", "1"]);
    let (code, _, _) = query(&[
        "info",
        &s.addr("sim", "udp").to_string(),
        &a,
        "--timeout",
        "0.3",
        "--retries",
        "0",
    ]);
    assert_eq!(code, 3, "some answered");
}

/// A hostile server on loopback: it answers every datagram at once with a fresh
/// A2S challenge, and sends the connect rejection's `errormsg` every 100 ms to
/// whoever spoke last, for as long as the test runs.
struct Hostile {
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Hostile {
    fn start() -> Hostile {
        use std::sync::atomic::{AtomicBool, Ordering};
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let [errormsg, ..] = xash::handshake::Reject::new("go away").datagrams();
            let mut buf = [0u8; 2048];
            let mut peer = None;
            let mut n: i32 = 1;
            let mut answered = 0u64;
            // Bounded even if the test never stops it.
            let end = Instant::now() + Duration::from_secs(60);
            while !stop2.load(Ordering::Relaxed) && Instant::now() < end {
                match sock.recv_from(&mut buf) {
                    Ok((_, from)) => {
                        peer = Some(from);
                        n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        let mut c = b"\xff\xff\xff\xffA".to_vec();
                        c.extend_from_slice(&n.to_le_bytes());
                        let _ = sock.send_to(&c, from);
                        answered += 1;
                    }
                    Err(_) => {
                        if let Some(p) = peer {
                            let _ = sock.send_to(&errormsg, p);
                        }
                    }
                }
            }
            answered
        });
        Hostile {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// Runs `lobby query ARGS`, killing it if it is still running after `within`.
fn query_within(args: &[&str], within: Duration) -> Option<(i32, Value)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lobby"))
        .arg("query")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            let v = serde_json::from_str(&out).unwrap_or(Value::Null);
            return Some((status.code().unwrap_or(-1), v));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_answering_every_request_with_a_new_challenge_cannot_hold_a_query() {
    let h = Hostile::start();
    let a = h.addr.to_string();
    for kind in ["players", "rules", "info", "connect"] {
        let args = [kind, &a, "--json", "--timeout", "0.5", "--retries", "1"];
        let Some((code, v)) = query_within(&args, Duration::from_secs(20)) else {
            panic!("lobby query {kind} still running after 20 s against a hostile server");
        };
        // A rejection is an answer (exit 0); the challenge loops are not.
        assert!(code != 0 || kind == "connect", "{kind}: {v}");
        let status = v[0]["status"].as_str().unwrap_or_default().to_string();
        assert!(
            ["invalid", "no_reply", "connect"].contains(&status.as_str()),
            "{kind}: {v}"
        );
    }
    // An explicit --deadline is a hard bound too.
    let t0 = Instant::now();
    let r = query_within(
        &[
            "players",
            &a,
            "--json",
            "--timeout",
            "5",
            "--retries",
            "5",
            "--deadline",
            "1",
        ],
        Duration::from_secs(20),
    );
    assert!(r.is_some() && t0.elapsed() < Duration::from_secs(20));
    assert!(h.stop() > 0, "the hostile server was asked");
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-query-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn addresses(v: &Value) -> Vec<SocketAddr> {
    let mut a: Vec<SocketAddr> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e["address"].as_str().unwrap().parse().unwrap())
                .collect()
        })
        .unwrap_or_default();
    a.sort();
    a
}

/// Runs `lobby query ARGS` until its JSON lists `n` servers (within 20 s).
fn query_until(args: &[&str], n: usize) -> (i32, Value, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (code, v, out) = query(args);
        if v.as_array().is_some_and(|a| a.len() == n) {
            return (code, v, out);
        }
        assert!(Instant::now() < deadline, "never {n} servers: {out}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// `lobby query static` reads lobby's own `/v1/servers/valve` (curated sources
/// listing a fleet of Xash and GoldSrc sims) as the engine does, then asks every
/// server; `lobby query master --static` merges that list with a UDP master's.
#[test]
fn static_http_lists_are_read_then_every_server_queried_and_merged_with_masters() {
    let dir = tmp("static");
    let sources = dir.join("servers");
    std::fs::create_dir_all(&sources).unwrap();
    let xash = sim(None, &["--count", "2"]);
    let gold = sim(None, &["--count", "1", "--protocol", "48"]);
    let x = xash.addrs("sim", "udp");
    let g = gold.addr("sim", "udp");
    let toml = format!(
        "[[server]]\naddress = \"{}\"\n\n[[server]]\naddress = \"{}\"\nprotocol = 49\n\n\
         [[server]]\naddress = \"{g}\"\nprotocol = 48\n",
        x[0], x[1]
    );
    std::fs::write(sources.join("valve.toml"), toml).unwrap();
    let m = list_master(&[
        "--state",
        dir.join("master.json").to_str().unwrap(),
        "--sources",
        sources.to_str().unwrap(),
    ]);
    // The engine strips the base URL's trailing slashes.
    let base = format!("http://{}//", m.addr("http", "tcp"));
    let (code, v, out) = query_until(&["static", &base, "valve", "--json", "--timeout", "1"], 3);
    assert_eq!(code, 0, "every server answered: {out}");
    let mut want = vec![x[0], x[1], g];
    want.sort();
    assert_eq!(addresses(&v), want, "{out}");
    for e in v.as_array().unwrap() {
        assert_eq!(e["status"], "info", "{e}");
        let gs = e["address"] == g.to_string();
        // The `gs` line is asked with A2S_INFO, the `ip` lines with `info 49`.
        assert_eq!(e["info"]["protocol"], if gs { 48 } else { 49 }, "{e}");
        assert_eq!(
            e["info"]["dialect"],
            if gs { "source" } else { "xash49" },
            "{e}"
        );
        assert_eq!(e["info"]["gamedir"], "valve", "{e}");
    }
    // The table, as `lobby query master` prints it, and the list alone.
    let (code, _, out) = query(&["static", &base, "valve", "--timeout", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ADDRESS") && out.contains(&g.to_string()),
        "{out}"
    );
    let list_url = format!("{}/v1/servers/valve", base.trim_end_matches('/'));
    assert!(
        out.contains(&format!("3 server(s) listed by {list_url}, 3 answered")),
        "{out}"
    );
    let (code, v, out) = query(&["static", &base, "valve", "--list-only", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v.as_array().map(Vec::len), Some(3), "{out}");

    // A UDP master with a server registered by heartbeats, merged with the list
    // (given twice: each server is asked once).
    let udp = Lobby::start(&["master", "--listen", "127.0.0.1:0"], 1);
    let udp_master = udp.addr("master", "udp");
    let hb = sim(Some(udp_master), &["--count", "1"]);
    let h = hb.addr("sim", "udp");
    let args = [
        "master",
        &udp_master.to_string(),
        "--static",
        &base,
        "--static",
        base.trim_end_matches('/'),
        "--gamedir",
        "valve",
        "--timeout",
        "1",
    ];
    let mut json = args.to_vec();
    json.push("--json");
    let (code, v, out) = query_until(&json, 4);
    assert_eq!(code, 0, "{out}");
    want.push(h);
    want.sort();
    assert_eq!(addresses(&v), want, "{out}");
    let (code, _, out) = query(&args);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("4 server(s) listed by 1 master(s) and 2 static list(s), 4 answered"),
        "{out}"
    );

    // A list that cannot be had names its URL and why: exit 1; an https:// URL or
    // a malformed one is a usage error: exit 2.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (code, v, out) = query(&[
        "static",
        &format!("http://{closed}/list"),
        "valve",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(v, serde_json::json!([]));
    assert!(
        out.contains(&format!(
            "http://{closed}/list/v1/servers/valve: cannot connect"
        )),
        "{out}"
    );
    let (code, _, out) = query(&[
        "static",
        &format!("{}/nothing-here", base.trim_end_matches('/')),
        "valve",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("status 404"), "{out}");
    let (code, _, out) = query(&["static", "https://xash.su/server-list", "valve"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("https:// is not supported"), "{out}");
    let (code, _, out) = query(&["static", "xash.su/server-list", "valve"]);
    assert_eq!(code, 2, "{out}");
    // --static needs the game directory whose list it reads.
    let (code, _, out) = query(&["master", "--static", &base]);
    assert_eq!(code, 2, "{out}");
    // The master's UDP side failing leaves the static list: still listed, and asked.
    let dead = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (code, v, out) = query(&[
        "master",
        &dead.local_addr().unwrap().to_string(),
        "--master-timeout",
        "0.2",
        "--static",
        &base,
        "--gamedir",
        "valve",
        "--json",
        "--timeout",
        "1",
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(v.as_array().map(Vec::len), Some(3), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
