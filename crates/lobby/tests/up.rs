//! `lobby up`: the whole backbone from one command.

mod common;

use common::*;

#[test]
fn up_starts_every_part_and_says_where_it_listens() {
    let dir = std::env::temp_dir().join(format!("lobby-up-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("up.toml");
    // The embedded defaults use the standard ports; tests use port 0 (same file shape).
    let text = lobby_default()
        .replace(":5000", ":0")
        .replace(":5001", ":0");
    std::fs::write(&f, text).unwrap();
    let up = Lobby::start(&["up", "--config", f.to_str().unwrap()], 6);
    assert_eq!(up.addrs("master", "udp").len(), 2);
    assert!(up.addrs("master", "udp").iter().any(|a| a.is_ipv6()));
    let http = up.addr("http", "tcp");
    assert!(http_get(http, "/stats").1.contains("\"master\""));
    let udp = up.addrs("relay", "udp");
    assert!(
        udp.iter().all(|a| a.ip().is_loopback() && a.port() != 0),
        "{udp:?}"
    );
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), udp[0]).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), udp[0], &a, "BRAVO");
    let t = telnet(up.addr("relay", "telnet"));
    assert!(t.contains("# 2 pilot(s) online"), "{t}");
    assert!(up.stop().success());
}

fn lobby_default() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/default.toml")).unwrap()
}
