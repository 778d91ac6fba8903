//! `lobby master` as a real process on 127.0.0.1 / [::1] port 0, spoken to over UDP and HTTP.

mod common;

use common::*;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use xash::master::{NatConnect, ServerListPage};

const INFO: &str = "\\players\\1\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\1\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";
const SCAN: &str = "\\gamedir\\valve\\clver\\0.21\\nat\\0\\key\\1";

fn master(extra: &[&str]) -> Lobby {
    let mut args = vec![
        "master",
        "--listen",
        "127.0.0.1:0",
        "--listen",
        "[::1]:0",
        "--http",
        "127.0.0.1:0",
        "--workers",
        "2",
    ];
    args.extend_from_slice(extra);
    Lobby::start(&args, 3)
}

fn v4(m: &Lobby) -> SocketAddr {
    *m.addrs("master", "udp")
        .iter()
        .find(|a| a.is_ipv4())
        .unwrap()
}

fn v6(m: &Lobby) -> SocketAddr {
    *m.addrs("master", "udp")
        .iter()
        .find(|a| a.is_ipv6())
        .unwrap()
}

fn sock(ip: &str) -> UdpSocket {
    let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s
}

use common::register_server as register;

/// Scans and collects every page that arrives; returns (servers, datagrams).
fn scan(c: &UdpSocket, master: SocketAddr, filter: &str) -> (Vec<SocketAddr>, usize) {
    let mut p = b"1\xff0.0.0.0:0\0".to_vec();
    p.extend_from_slice(filter.as_bytes());
    p.push(0);
    c.send_to(&p, master).unwrap();
    let mut servers = Vec::new();
    let mut n = 0;
    let mut buf = [0u8; 65536];
    c.set_read_timeout(Some(Duration::from_millis(400)))
        .unwrap();
    while let Ok((len, from)) = c.recv_from(&mut buf) {
        assert_eq!(from, master);
        let page =
            ServerListPage::decode(&buf[..len], master.is_ipv6(), filter.contains("\\key\\"))
                .unwrap();
        assert!(page.terminated);
        servers.extend(page.servers);
        n += 1;
    }
    (servers, n)
}

/// Scans until `pred` holds on the list (registration is asynchronous).
fn scan_until(
    c: &UdpSocket,
    master: SocketAddr,
    filter: &str,
    what: &str,
    pred: impl Fn(&[SocketAddr]) -> bool,
) -> Vec<SocketAddr> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (s, _) = scan(c, master, filter);
        if pred(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "never saw {what}; last list {s:?} ({} entries)",
            s.len()
        );
    }
}

#[test]
fn registration_and_scans_on_ipv4_and_ipv6() {
    let m = master(&[]);
    let (s4, s6) = (sock("127.0.0.1"), sock("[::1]"));
    assert!(register(&s4, v4(&m), INFO));
    assert!(register(&s6, v6(&m), INFO));
    let c4 = sock("127.0.0.1");
    let list = scan_until(&c4, v4(&m), SCAN, "the IPv4 server", |l| !l.is_empty());
    assert_eq!(
        list,
        vec![s4.local_addr().unwrap()],
        "IPv4 clients get IPv4 lists"
    );
    let c6 = sock("[::1]");
    let list = scan_until(&c6, v6(&m), SCAN, "the IPv6 server", |l| !l.is_empty());
    assert_eq!(
        list,
        vec![s6.local_addr().unwrap()],
        "IPv6 clients get IPv6 lists"
    );
    // The HTTP list serves the same table.
    let (status, body) = http_get(m.addr("http", "tcp"), "/v1/servers/valve");
    assert_eq!(status, 200);
    let mut lines = common::engine_entries(&body);
    lines.sort();
    let mut want = vec![
        format!("ip {}", s4.local_addr().unwrap()),
        format!("ip {}", s6.local_addr().unwrap()),
    ];
    want.sort();
    assert_eq!(lines, want);
    let (_, empty) = http_get(m.addr("http", "tcp"), "/v1/servers/cstrike");
    assert!(empty.starts_with("# cstrike server list\n"), "{empty}");
    assert!(common::engine_entries(&empty).is_empty());
    let (_, stats) = http_get(m.addr("http", "tcp"), "/stats");
    assert!(stats.contains("\"servers_added\":2"), "{stats}");
}

#[test]
fn pages_and_nat_announce_over_udp() {
    let m = master(&["--page-size", "512", "--max-servers-per-source", "5"]);
    let master4 = v4(&m);
    let mut servers = Vec::new();
    // 120 servers from 40 loopback addresses (127.1.x.y, 8 per /24: a /24 holds
    // eight sources' worth), 3 each.
    for i in 0..40 {
        for _ in 0..3 {
            let s = sock(&format!("127.1.{}.{}", i / 8, i % 8 + 1));
            assert!(register(&s, master4, INFO));
            servers.push(s);
        }
    }
    let nat = sock("127.0.10.1");
    register(&nat, master4, &INFO.replace("\\nat\\0", "\\nat\\1"));
    let c = sock("127.0.0.1");
    let list = scan_until(&c, master4, "\\clver\\0.21\\key\\1", "121 servers", |l| {
        l.len() == 121
    });
    let mut sorted = list.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 121);
    let (_, pages) = scan(&c, master4, "\\clver\\0.21\\key\\1");
    assert_eq!(pages, 2, "82 records per 512-byte page");
    // The NAT server was told about the client (once per scan that listed it).
    let mut buf = [0u8; 512];
    let (n, from) = nat.recv_from(&mut buf).expect("NAT connect");
    assert_eq!(from, master4);
    assert_eq!(
        NatConnect::decode(&buf[..n]).unwrap().client,
        c.local_addr().unwrap()
    );
}

#[test]
fn quotas_admit_exactly_n_per_source() {
    let m = master(&["--max-servers-per-source", "4"]);
    let socks: Vec<UdpSocket> = (0..6).map(|_| sock("127.0.11.1")).collect();
    for s in &socks {
        assert!(register(s, v4(&m), INFO));
    }
    std::thread::sleep(Duration::from_millis(300));
    let c = sock("127.0.0.1");
    let (list, _) = scan(&c, v4(&m), SCAN);
    assert_eq!(list.len(), 4, "exactly 4, not 5");
    let (_, stats) = http_get(m.addr("http", "tcp"), "/stats");
    assert!(stats.contains("\"drop_quota_source\":2"), "{stats}");
}

#[test]
fn one_ipv4_24_holds_eight_sources_worth_of_servers() {
    // Issue 20, item 6. Before the fix each address of a /24 (and each of an IPv6
    // /48's 65,536 /64s) had its own quota: all 12 below were listed.
    let m = master(&["--max-servers-per-source", "1"]);
    let socks: Vec<UdpSocket> = (1..=12)
        .map(|h| sock(&format!("127.0.13.{h}")))
        .chain([sock("127.0.14.1")])
        .collect();
    for s in &socks {
        assert!(register(s, v4(&m), INFO));
    }
    std::thread::sleep(Duration::from_millis(300));
    let c = sock("127.0.0.1");
    let (list, _) = scan(&c, v4(&m), SCAN);
    assert_eq!(list.len(), 9, "8 from the /24, 1 from the next");
    let (_, stats) = http_get(m.addr("http", "tcp"), "/stats");
    assert!(stats.contains("\"drop_quota_network\":4"), "{stats}");
}

#[test]
fn clients_are_rate_limited() {
    let m = master(&["--rate-burst", "3", "--rate-decay", "60"]);
    let s = sock("127.0.0.1");
    register(&s, v4(&m), INFO);
    let c = sock("127.0.12.1");
    std::thread::sleep(Duration::from_millis(200));
    let answered: Vec<usize> = (0..5).map(|_| scan(&c, v4(&m), SCAN).1).collect();
    // The heartbeat came from another IP; this client gets 3 answers, then silence.
    assert_eq!(answered, vec![1, 1, 1, 0, 0]);
    let other = sock("127.0.12.2");
    assert_eq!(scan(&other, v4(&m), SCAN).1, 1);
}

#[test]
fn servers_expire() {
    let m = master(&["--server-ttl", "1"]);
    let s = sock("127.0.0.1");
    register(&s, v4(&m), INFO);
    let c = sock("127.0.13.1");
    scan_until(&c, v4(&m), "\\clver\\0.21", "the server", |l| l.len() == 1);
    std::thread::sleep(Duration::from_millis(2100));
    let c2 = sock("127.0.13.2");
    assert!(scan(&c2, v4(&m), "\\clver\\0.21").0.is_empty());
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-master-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_restart_with_the_state_file_keeps_the_list_and_bans() {
    let dir = tmpdir("state");
    let state = dir.join("master.json");
    let cfg = dir.join("master.toml");
    std::fs::write(&cfg, "[master]\nlisten = [\"127.0.0.1:0\"]\n[[master.admin]]\nname = \"gordon\"\npassword = \"crowbar\"\n").unwrap();
    let m = Lobby::start(
        &[
            "master",
            "--config",
            cfg.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ],
        1,
    );
    let s = sock("127.0.0.1");
    register(&s, v4(&m), INFO);
    let c = sock("127.0.14.1");
    scan_until(&c, v4(&m), SCAN, "the server", |l| l.len() == 1);
    let out = admin(v4(&m), "crowbar", &["ban", "127.0.14.99"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(m.stop().success());
    assert!(state.exists());
    // A new process (new port, new challenge secret) lists the server at once.
    let m2 = Lobby::start(
        &[
            "master",
            "--config",
            cfg.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ],
        1,
    );
    let c2 = sock("127.0.14.2");
    let (list, _) = scan(&c2, v4(&m2), SCAN);
    assert_eq!(list, vec![s.local_addr().unwrap()]);
    let banned = sock("127.0.14.99");
    assert!(
        scan(&banned, v4(&m2), SCAN).0.is_empty() && scan(&banned, v4(&m2), SCAN).1 == 0,
        "the ban survived"
    );
    // A corrupt state file is a clear error, not a silently empty list.
    drop(m2);
    std::fs::write(&state, "garbage").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args([
            "master",
            "--config",
            cfg.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("corrupt"));
}

fn admin(master: SocketAddr, password: &str, cmd: &[&str]) -> std::process::Output {
    let mut args = vec![
        "master-admin".to_string(),
        "--master".into(),
        master.to_string(),
        "--timeout".into(),
        "1".into(),
    ];
    args.extend(cmd.iter().map(|s| s.to_string()));
    std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(&args)
        .env("LOBBY_ADMIN_PASSWORD", password)
        .output()
        .unwrap()
}

#[test]
fn admin_ban_unban_and_a_wrong_password_that_does_not_hang() {
    let dir = tmpdir("admin");
    let cfg = dir.join("master.toml");
    std::fs::write(&cfg, "[master]\nlisten = [\"127.0.0.1:0\"]\n[[master.admin]]\nname = \"gordon\"\npassword = \"crowbar\"\n").unwrap();
    let m = Lobby::start(&["master", "--config", cfg.to_str().unwrap()], 1);
    let s = sock("127.0.15.1");
    register(&s, v4(&m), INFO);
    let c = sock("127.0.0.1");
    scan_until(&c, v4(&m), SCAN, "the server", |l| l.len() == 1);
    let out = admin(v4(&m), "crowbar", &["ban", "127.0.15.1"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 servers removed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(scan(&c, v4(&m), SCAN).0.is_empty());
    assert!(
        !register(&sock("127.0.15.1"), v4(&m), INFO),
        "banned: no challenge"
    );
    let out = admin(v4(&m), "crowbar", &["list"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("127.0.15.1"));
    let out = admin(v4(&m), "crowbar", &["unban", "127.0.15.1"]);
    assert!(out.status.success());
    assert!(register(&sock("127.0.15.1"), v4(&m), INFO));
    // An unknown command is refused: exit code 1, and --json says why.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args([
            "master-admin",
            "--master",
            &v4(&m).to_string(),
            "--timeout",
            "1",
            "--json",
            "reboot",
        ])
        .env("LOBBY_ADMIN_PASSWORD", "crowbar")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(v["reply"].as_str().unwrap().contains("unknown command"));
    // A wrong password: no answer, a clear message, exit code 3, within the timeout;
    // then the IP is locked out, even with the right password.
    let t = Instant::now();
    let out = admin(v4(&m), "wrong", &["list"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no acknowledgement"));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(admin(v4(&m), "crowbar", &["list"]).status.code(), Some(3));
}

#[test]
fn sighup_reloads_the_config_and_keeps_servers() {
    let dir = tmpdir("hup");
    let cfg = dir.join("master.toml");
    std::fs::write(
        &cfg,
        "[master]\nlisten = [\"127.0.0.1:0\"]\nmax_servers_per_source = 1\n",
    )
    .unwrap();
    let m = Lobby::start(&["master", "--config", cfg.to_str().unwrap()], 1);
    let a = sock("127.0.16.1");
    let b = sock("127.0.16.1");
    register(&a, v4(&m), INFO);
    register(&b, v4(&m), INFO);
    let c = sock("127.0.0.1");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(scan(&c, v4(&m), SCAN).0.len(), 1);
    std::fs::write(
        &cfg,
        "[master]\nlisten = [\"127.0.0.1:0\"]\nmax_servers_per_source = 2\n",
    )
    .unwrap();
    m.signal(libc::SIGHUP);
    // Wait for the reload itself rather than guess: then re-register. Each scan comes
    // from its own address, so no client allowance runs out on a slow machine (all
    // scans from 127.0.0.1 used to share 8 requests and one more per second).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !m.stderr().contains("configuration reloaded") {
        assert!(
            Instant::now() < deadline,
            "no reload logged:\n{}",
            m.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Either of the two may have been the one refused: the master's socket loop does
    // not promise to handle two sources' datagrams in the order they were sent, so
    // under load `b` can win and `a` be refused. Both heartbeat again, as servers do.
    let both = [a.local_addr().unwrap(), b.local_addr().unwrap()];
    for round in 1.. {
        register(&a, v4(&m), INFO);
        register(&b, v4(&m), INFO);
        let c = sock(&format!("127.0.16.{}", 10 + round % 200));
        let list = scan_until(&c, v4(&m), SCAN, "a server", |l| !l.is_empty());
        let n = list.len();
        if n == 2 {
            assert!(both.iter().all(|s| list.contains(s)), "{list:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "reload never took effect: {n} servers listed"
        );
    }
    // A broken config on reload is refused and the running one kept.
    std::fs::write(&cfg, "[master]\nbogus = 1\n").unwrap();
    m.signal(libc::SIGHUP);
    std::thread::sleep(Duration::from_millis(300));
    assert!(m.stderr().contains("bogus"), "{}", m.stderr());
    let c = sock("127.0.0.1");
    assert_eq!(scan(&c, v4(&m), SCAN).0.len(), 2);
}

#[test]
fn bad_input_of_every_kind_then_valid_scans() {
    let m = master(&["--rate-burst", "100000"]);
    let s = sock("127.0.0.1");
    register(&s, v4(&m), INFO);
    let evil = sock("127.0.17.1");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for n in 0..300usize {
        let junk: Vec<u8> = (0..(n * 13 % 1500))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        evil.send_to(&junk, v4(&m)).unwrap();
    }
    let hostile: Vec<&[u8]> = vec![
        b"q\xff\x01",
        b"0\n\\challenge\\1\0\\x\\y",
        b"0\n\\protocol\\49\\challenge\\12\\nat\\2",
        b"1\xff0.0.0.0:0\0\\nat\\yes\0",
        b"1\xff0.0.0.0:0\0\\full\\maybe\0",
        b"1\x090.0.0.0:0\0\0",
        b"1\xff",
        b"1\xff0.0.0.0:0\0\\gamedir\\val\0ve\0",
        b"adminchallenge",
        b"admin\x01\x02",
        b"\xff\xff\xff\xffinfo abc",
    ];
    for h in &hostile {
        evil.send_to(h, v4(&m)).unwrap();
    }
    evil.send_to(&vec![b'1'; 9000], v4(&m)).unwrap();
    let mut buf = [0u8; 2048];
    evil.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    while let Ok((n, _)) = evil.recv_from(&mut buf) {
        // Only well-formed requests may get answers (a random `q\xff` prefix can), never a list.
        assert!(!buf[..n].starts_with(b"\xff\xff\xff\xfff\n") || n <= 1400);
    }
    let c = sock("127.0.0.1");
    let list = scan_until(&c, v4(&m), SCAN, "the server", |l| l.len() == 1);
    assert_eq!(list, vec![s.local_addr().unwrap()]);
    let (_, stats) = http_get(m.addr("http", "tcp"), "/stats");
    for key in [
        "drop_bad_filter",
        "drop_bad_scan",
        "drop_bad_info",
        "drop_unknown",
    ] {
        assert!(
            !stats.contains(&format!("\"{key}\":0")),
            "{key} never counted: {stats}"
        );
    }
}

#[test]
fn every_filter_key_and_client_gating_over_udp() {
    let m = Lobby::start(
        &[
            "master",
            "--listen",
            "127.0.0.1:0",
            "--update-addr",
            "127.0.0.1:27999",
        ],
        1,
    );
    let master = v4(&m);
    let infos = [
        "\\gamedir\\valve\\map\\crossfire\\version\\0.21\\type\\d\\players\\0\\max\\8",
        "\\gamedir\\cstrike\\map\\de_dust\\version\\0.21\\type\\l\\players\\8\\max\\8\\password\\1",
        "\\gamedir\\valve\\map\\stalkyard\\version\\0.21\\players\\2\\max\\8\\secure\\1\\bots\\3",
        "\\gamedir\\valve\\map\\crossfire\\version\\0.21\\lan\\1\\nat\\1\\players\\1\\max\\8",
    ];
    let servers: Vec<UdpSocket> = (0..4).map(|_| sock("127.0.21.1")).collect();
    for (s, info) in servers.iter().zip(infos) {
        assert!(register(s, master, info));
    }
    let a: Vec<SocketAddr> = servers.iter().map(|s| s.local_addr().unwrap()).collect();
    let c = sock("127.0.21.2");
    scan_until(&c, master, "\\clver\\0.21", "all four", |l| l.len() == 4);
    let cases: &[(&str, &[usize])] = &[
        ("\\gamedir\\valve", &[0, 2, 3]),
        ("\\gamedir\\VALVE", &[]),
        ("\\map\\crossfire", &[0, 3]),
        ("\\protocol\\49", &[0, 1, 2, 3]),
        ("\\protocol\\48", &[]),
        ("\\dedicated\\1", &[0]),
        ("\\password\\1", &[1]),
        ("\\secure\\1", &[2]),
        ("\\bots\\1", &[2]),
        ("\\lan\\1", &[3]),
        ("\\empty\\1", &[0]),
        ("\\noplayers\\1", &[0]),
        ("\\full\\1", &[1]),
        ("\\nat\\1", &[3]),
        ("\\nat\\0", &[0, 1, 2]),
    ];
    for (i, (f, want)) in cases.iter().enumerate() {
        let client = sock(&format!("127.0.22.{}", i + 1));
        let (mut got, _) = scan(&client, master, &format!("{f}\\clver\\0.21\\key\\1"));
        got.sort();
        let mut want: Vec<SocketAddr> = want.iter().map(|&k| a[k]).collect();
        want.sort();
        assert_eq!(got, want, "filter {f}");
    }
    // An outdated client gets the update entry, then the fake info reply.
    let old = sock("127.0.23.1");
    let (list, _) = scan(&old, master, "\\gamedir\\cstrike\\clver\\0.19\\key\\1");
    assert_eq!(list, vec!["127.0.0.1:27999".parse::<SocketAddr>().unwrap()]);
    old.send_to(b"\xff\xff\xff\xffinfo 48", master).unwrap();
    let mut buf = [0u8; 1024];
    let (n, _) = old.recv_from(&mut buf).expect("fake info reply");
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(
        text.contains("\\map\\Update please") && text.contains("\\gamedir\\cstrike"),
        "{text}"
    );
}
