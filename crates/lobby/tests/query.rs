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
