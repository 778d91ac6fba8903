//! Relays linked to each other over real UDP: two peers, a hub with three leaves,
//! LazyRelay, and SIGHUP reloads that keep pilots.

mod common;

use common::*;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn conf_path(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lobby-mesh-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("relay.toml")
}

fn write_conf(path: &PathBuf, name: &str, relays: &[SocketAddr], hub: bool) {
    let relays: Vec<String> = relays.iter().map(|a| format!("\"{a}\"")).collect();
    std::fs::write(
        path,
        format!(
            "[relay]\nname = \"{name}\"\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\nrelays = [{}]\nhub = {hub}\n",
            relays.join(", ")
        ),
    )
    .unwrap();
}

fn leaf(peers: &[SocketAddr]) -> Lobby {
    let mut args = vec![
        "relay".to_string(),
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--telnet".into(),
        "127.0.0.1:0".into(),
    ];
    for p in peers {
        args.push("--relay".into());
        args.push(p.to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    Lobby::start(&refs, 2)
}

/// Starts a relay from a config file with no peers, so others can be started pointing at it;
/// `link` then rewrites the file and reloads it with SIGHUP.
fn first(tag: &str) -> (Lobby, PathBuf) {
    let path = conf_path(tag);
    write_conf(&path, "first", &[], false);
    let r = Lobby::start(&["relay", "--config", path.to_str().unwrap()], 2);
    (r, path)
}

fn link(r: &Lobby, path: &PathBuf, name: &str, peers: &[SocketAddr], hub: bool) {
    write_conf(path, name, peers, hub);
    r.signal(libc::SIGHUP);
    telnet_until(r.addr("relay", "telnet"), "the reloaded name", |t| {
        t.starts_with(&format!("# This is {name}\n"))
    });
}

#[test]
fn two_linked_relays_carry_pilots_both_ways_and_sighup_keeps_pilots() {
    let (x, xconf) = first("pair");
    let xu = x.addr("relay", "udp");
    // A pilot joins X before the reload: it must survive the SIGHUP.
    let a = client(false);
    let da = pos("ALPHA", BIKF, 100);
    a.send_to(&da, xu).unwrap();
    telnet_until(x.addr("relay", "telnet"), "ALPHA", |t| {
        t.contains("ALPHA@LOCAL")
    });
    let y = leaf(&[xu]);
    let yu = y.addr("relay", "udp");
    link(&x, &xconf, "x-linked", &[yu], false);
    assert!(
        telnet(x.addr("relay", "telnet")).contains("ALPHA@LOCAL"),
        "SIGHUP kept the pilot table"
    );

    let b = client(false);
    let db = pos("BRAVO", north(BIKF, 10.0), 100);
    b.send_to(&db, yu).unwrap();
    let got = send_until_seen(&a, &da, xu, &b, "ALPHA");
    assert_eq!(got, da, "client magic restored, bytes otherwise unchanged");
    let got = send_until_seen(&b, &db, yu, &a, "BRAVO");
    assert_eq!(got, db);
    let ty = telnet(y.addr("relay", "telnet"));
    assert!(
        ty.contains(&format!("ALPHA@{}: ", xu.ip())),
        "remote pilot labelled by its relay:\n{ty}"
    );
    assert!(ty.contains("BRAVO@LOCAL: "));
}

#[test]
fn lazy_relay_sends_one_datagram_per_two_seconds_when_nobody_is_in_range() {
    let (x, xconf) = first("lazy");
    let xu = x.addr("relay", "udp");
    let y = leaf(&[xu]);
    let yu = y.addr("relay", "udp");
    link(&x, &xconf, "x-lazy", &[yu], false);
    // Y's only pilot is in Australia; X's pilot flies at Keflavik at 20 Hz for 3 s.
    let far = client(false);
    far.send_to(&pos("FAR", (-33.9, 151.2), 100), yu).unwrap();
    let a = client(false);
    let da = pos("ALPHA", BIKF, 100);
    let start = Instant::now();
    let mut sent = 0;
    while start.elapsed() < Duration::from_millis(3000) {
        a.send_to(&da, xu).unwrap();
        sent += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(sent >= 50);
    let t = telnet_until(y.addr("relay", "telnet"), "ALPHA as remote", |t| {
        t.contains("ALPHA@")
    });
    let crossed: u64 = t
        .split_whitespace()
        .find_map(|w| w.strip_prefix("from_relays="))
        .and_then(|v| v.parse().ok())
        .expect(&t);
    assert!(
        (1..=3).contains(&crossed),
        "LazyRelay: {crossed} of {sent} datagrams crossed in 3 s\n{t}"
    );
    assert!(
        drain(&far, Duration::from_millis(200)).is_empty(),
        "out of range of the Australian pilot"
    );
}

#[test]
fn a_hub_joins_three_relays_and_never_echoes_back() {
    let (h, hconf) = first("hub");
    let hu = h.addr("relay", "udp");
    let leaves: Vec<Lobby> = (0..3).map(|_| leaf(&[hu])).collect();
    let lu: Vec<SocketAddr> = leaves.iter().map(|l| l.addr("relay", "udp")).collect();
    link(&h, &hconf, "hub", &lu, true);
    let pilots: Vec<_> = (0..3).map(|_| client(false)).collect();
    let data: Vec<Vec<u8>> = (0..3)
        .map(|i| pos(&format!("P{i}"), north(BIKF, i as f64), 100))
        .collect();
    for i in 0..3 {
        pilots[i].send_to(&data[i], lu[i]).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    // Every pilot sees the other two, across two relay hops.
    for i in 0..3 {
        for j in 0..3 {
            if i != j {
                let got =
                    send_until_seen(&pilots[i], &data[i], lu[i], &pilots[j], &format!("P{i}"));
                assert_eq!(got, data[i], "P{i} -> P{j}");
            }
        }
    }
    // Nothing came back to where it started.
    for (i, p) in pilots.iter().enumerate() {
        assert!(drain(p, Duration::from_millis(200))
            .iter()
            .all(|d| callsign_of(d) != format!("P{i}")));
    }
    for l in &leaves {
        let t = telnet(l.addr("relay", "telnet"));
        assert!(
            !t.contains("address_mismatch="),
            "the hub echoed a leaf's own pilot back:\n{t}"
        );
        assert_eq!(t.matches("@LOCAL: ").count(), 1, "{t}");
        assert!(t.contains("# 3 pilot(s) online"), "{t}");
    }
}
