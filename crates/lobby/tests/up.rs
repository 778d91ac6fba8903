//! `lobby up`: the whole backbone from one command.

mod common;

use common::*;

#[test]
fn up_starts_every_part_and_says_where_it_listens() {
    let dir = std::env::temp_dir().join(format!("lobby-up-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("up.toml");
    // The embedded defaults use the standard ports; tests use port 0 (same file shape):
    // every listener of the file (a port left fixed made this test fail whenever
    // anything else held it, a running `lobby up` for one).
    let text = [
        ":5000\"", ":5001\"", ":27010\"", ":8080\"", ":5353\"", ":8000\"",
    ]
    .into_iter()
    .fold(lobby_default(), |t, port| t.replace(port, ":0\""));
    assert!(
        !text.contains(":5353\"") && text.matches(":0\"").count() >= 8,
        "every listener on port 0: {text}"
    );
    let text = text.replace(
        "sqlite:lobby-history.sqlite",
        &format!("sqlite:{}", dir.join("history.sqlite").display()),
    );
    std::fs::write(&f, text).unwrap();
    // relay udp ×2 + telnet, master udp ×2, dns udp + tcp, tracker, 3 simulated
    // servers, http.
    let up = Lobby::start(&["up", "--config", f.to_str().unwrap()], 12);
    assert_eq!(up.addrs("sim", "udp").len(), 3);
    let dns = up.addr("dns", "udp");
    assert_eq!(up.addrs("master", "udp").len(), 2);
    assert!(up.addrs("master", "udp").iter().any(|a| a.is_ipv6()));
    let http = up.addr("http", "tcp");
    assert_eq!(
        up.addr("web", "http"),
        http,
        "the page is served by the HTTP listener"
    );
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
    // The simulated fleet registers with the local master; the HTTP list shows it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, list) = http_get(http, "/v1/servers/valve");
        if common::engine_entries(&list).len() == 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "sim servers never listed: {list:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The directory publishes the local relay: SRV with its real port, and mpservers.xml.
    let out = std::process::Command::new("dig")
        .args([
            format!("@{}", dns.ip()),
            "-p".into(),
            dns.port().to_string(),
            "+short".into(),
            "_fgms._udp.fg.lobby.test".into(),
            "SRV".into(),
        ])
        .output()
        .expect("dig (run scripts/ci-deps-dns)");
    let srv = String::from_utf8_lossy(&out.stdout);
    let relay_port = up
        .addrs("relay", "udp")
        .iter()
        .find(|a| a.is_ipv4())
        .unwrap()
        .port();
    assert_eq!(
        srv.trim(),
        format!("10 20 {relay_port} relay.fg.lobby.test.")
    );
    let (_, xml) = http_get(http, "/mpservers.xml");
    assert!(
        xml.contains(&format!("<port type=\"int\">{relay_port}</port>")),
        "{xml}"
    );
    assert!(up.stop().success());
}

fn lobby_default() -> String {
    config::EMBEDDED_DEFAULT.to_string()
}
