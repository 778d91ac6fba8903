//! `lobby dns` checked with real DNS peers: Debian's `dig` against lobby's
//! authoritative server (UDP and TCP), SRV ports following relay health end to end,
//! and push mode into Debian's `knot` with TSIG-signed RFC 2136 updates.

mod common;

use base64::Engine as _;
use common::*;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn need(tool: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "{tool} is not installed: run scripts/ci-deps-dns (Debian packages bind9-dnsutils, nsd, knot)");
}

/// `dig +short` (or full answer lines with `full`), over UDP or TCP.
fn dig(server: SocketAddr, name: &str, rtype: &str, tcp: bool) -> Vec<String> {
    need("dig");
    let mut args = vec![
        format!("@{}", server.ip()),
        "-p".into(),
        server.port().to_string(),
        "+norecurse".into(),
        "+short".into(),
        "+time=2".into(),
        "+tries=1".into(),
        name.into(),
        rtype.into(),
    ];
    if tcp {
        args.push("+tcp".into());
    }
    let out = Command::new("dig").args(&args).output().expect("dig");
    assert!(
        out.status.success(),
        "dig failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.starts_with(';'))
        .collect();
    v.sort();
    v
}

fn dig_flags(server: SocketAddr, name: &str, rtype: &str) -> String {
    let out = Command::new("dig")
        .args([
            format!("@{}", server.ip()),
            "-p".into(),
            server.port().to_string(),
            "+norecurse".into(),
            name.into(),
            rtype.into(),
        ])
        .output()
        .expect("dig");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-dns-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_conf(dir: &Path, extra: &str) -> PathBuf {
    let p = dir.join("lobby.toml");
    std::fs::write(
        &p,
        format!(
            r#"[dns]
listen = ["127.0.0.1:0"]
zone = "fg.test"
ttl = 30

[directory]
probe_interval = 0.3
probe_timeout = 0.2
fall = 2
rise = 1

[[directory.scenery]]
url = "https://a.example.org/ws2"
order = 100
preference = 50

[[directory.scenery]]
url = "https://backup.example.org/ws2"
order = 200
preference = 10

[[directory.scenery]]
url = "https://o2c.example.org/o2c"
service = "o2c"
{extra}
"#
        ),
    )
    .unwrap();
    p
}

fn relay_entry(
    host: &str,
    port: u16,
    name: &str,
    location: &str,
    probe: Option<SocketAddr>,
) -> String {
    format!(
        "\n[[directory.relay]]\nhost = \"{host}\"\nport = {port}\naddresses = [\"127.0.0.1\"]\nname = \"{name}\"\nlocation = \"{location}\"\n{}\n",
        probe.map(|p| format!("probe = \"{p}\"")).unwrap_or_default()
    )
}

fn decode_txt(line: &str) -> serde_json::Value {
    let s = line.trim_matches('"');
    let b64 = s.strip_prefix("flightgear-mpserver=").expect(line);
    let json = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    serde_json::from_slice(&json).unwrap()
}

#[test]
fn dig_sees_soa_ns_srv_txt_and_naptr_over_udp_and_tcp() {
    let dir = tmp("records");
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let conf = write_conf(
        &dir,
        &(relay_entry("mp1", r.port(), "mpserver01", "Frankfurt, Germany", Some(r))
            + &relay_entry(
                "mp2",
                5000,
                "mpserver02",
                "Nowhere",
                Some("127.0.0.1:9".parse().unwrap()),
            )),
    );
    let d = Lobby::start(
        &[
            "dns",
            "--config",
            conf.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
        ],
        3,
    );
    let ns = d.addr("dns", "udp");
    assert_eq!(d.addr("dns", "tcp"), ns, "TCP on the same port");
    for tcp in [false, true] {
        let soa = dig(ns, "fg.test", "SOA", tcp);
        assert_eq!(soa.len(), 1);
        assert!(
            soa[0].starts_with("ns1.fg.test. hostmaster.fg.test. "),
            "{soa:?}"
        );
        assert_eq!(dig(ns, "fg.test", "NS", tcp), vec!["ns1.fg.test."]);
        let txt = dig(ns, "mp1.fg.test", "TXT", tcp);
        assert_eq!(txt.len(), 1, "exactly one TXT record: {txt:?}");
        assert!(!txt[0].contains("\" \""), "one character-string: {txt:?}");
        assert!(txt[0].len() - 2 <= 255);
        let j = decode_txt(&txt[0]);
        assert_eq!(
            j,
            serde_json::json!({"name": "mpserver01", "location": "Frankfurt, Germany"})
        );
        let naptr = dig(ns, "terrasync.fg.test", "NAPTR", tcp);
        assert_eq!(
            naptr,
            vec![
                "100 100 \"U\" \"o2c\" \"!^.*$!https://o2c.example.org/o2c!\" .",
                "100 50 \"U\" \"ws20\" \"!^.*$!https://a.example.org/ws2!\" .",
                "200 10 \"U\" \"ws20\" \"!^.*$!https://backup.example.org/ws2!\" .",
            ]
        );
        assert_eq!(dig(ns, "mp1.fg.test", "A", tcp), vec!["127.0.0.1"]);
    }
    assert!(
        dig_flags(ns, "_fgms._udp.fg.test", "SRV").contains(" aa"),
        "authoritative answer"
    );
    assert!(dig_flags(ns, "nope.fg.test", "SRV").contains("NXDOMAIN"));
    // The probes settle: mp1 answers PING, mp2 (port 9 on loopback) does not.
    let want = vec![
        format!("10 20 0 mp2.fg.test."),
        format!("10 20 {} mp1.fg.test.", r.port()),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let srv = dig(ns, "_fgms._udp.fg.test", "SRV", false);
        if srv == want {
            break;
        }
        assert!(Instant::now() < deadline, "SRV never settled: {srv:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, xml) = http_get(d.addr("http", "tcp"), "/mpservers.xml");
    assert_eq!(status, 200);
    assert!(
        xml.contains("<name>mpserver01</name>")
            && xml.contains("<online type=\"bool\">true</online>"),
        "{xml}"
    );
    assert!(
        xml.contains("<hostname>mp2.fg.test</hostname>")
            && xml.contains("<online type=\"bool\">false</online>"),
        "{xml}"
    );
}

fn srv_port(ns: SocketAddr, host: &str) -> Option<u16> {
    dig(ns, "_fgms._udp.fg.test", "SRV", false)
        .iter()
        .find(|l| l.ends_with(&format!(" {host}.fg.test.")))
        .and_then(|l| l.split_whitespace().nth(2)?.parse().ok())
}

fn serial(ns: SocketAddr) -> u64 {
    dig(ns, "fg.test", "SOA", false)[0]
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_stopped_relay_turns_its_srv_port_to_zero_and_back() {
    let dir = tmp("health");
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let conf = write_conf(
        &dir,
        &relay_entry("mp1", r.port(), "mpserver01", "Test", Some(r)),
    );
    let d = Lobby::start(&["dns", "--config", conf.to_str().unwrap()], 2);
    let ns = d.addr("dns", "udp");
    let wait_for = |want: u16, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        let start = Instant::now();
        loop {
            if srv_port(ns, "mp1") == Some(want) {
                return start.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "SRV port never became {want} ({what})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for(r.port(), "relay up");
    let s0 = serial(ns);
    drop(relay); // killed
    let took = wait_for(0, "relay stopped");
    // probe_interval 0.3 s × fall 2, plus a probe timeout and slack.
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let s1 = serial(ns);
    assert!(
        s1 > s0,
        "the SOA serial increases on a change ({s0} -> {s1})"
    );
    let relay = Lobby::start(&["relay", "--listen", &r.to_string(), "--telnet", "off"], 1);
    wait_for(r.port(), "relay restarted");
    assert!(serial(ns) > s1);
    drop(relay);
}

struct Knot {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Knot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

const TSIG_SECRET: &str = "c2VjcmV0LWtleS1mb3ItbG9iYnktdGVzdHMtMTIzNDU2Nzg=";

fn start_knot(dir: &Path) -> Knot {
    need("knotd");
    let kdir = dir.join("knot");
    std::fs::create_dir_all(kdir.join("db")).unwrap();
    std::fs::write(
        kdir.join("fg.test.zone"),
        "$ORIGIN fg.test.\n$TTL 60\n@ IN SOA ns1.fg.test. hostmaster.fg.test. 1 3600 600 86400 60\n@ IN NS ns1.fg.test.\nns1 IN A 127.0.0.1\nkeep IN TXT \"not lobby's\"\n",
    )
    .unwrap();
    for _ in 0..5 {
        let port = free_port();
        std::fs::write(
            kdir.join("knot.conf"),
            format!(
                "server:\n    listen: 127.0.0.1@{port}\n    rundir: {d}\ncontrol:\n    listen: {d}/knot.sock\nlog:\n  - target: {d}/knot.log\n    any: info\ndatabase:\n    storage: {d}/db\nkey:\n  - id: lobby-key\n    algorithm: hmac-sha256\n    secret: {TSIG_SECRET}\nacl:\n  - id: lobby_update\n    address: 127.0.0.1\n    key: lobby-key\n    action: update\ntemplate:\n  - id: default\n    storage: {d}\n    file: \"%s.zone\"\n    zonefile-sync: -1\n    journal-content: changes\nzone:\n  - domain: fg.test\n    acl: lobby_update\n",
                d = kdir.display()
            ),
        )
        .unwrap();
        let child = Command::new("knotd")
            .args(["-c", kdir.join("knot.conf").to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("knotd");
        let mut knot = Knot {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = knot.child.try_wait() {
                break; // port taken: try another
            }
            let out = Command::new("dig")
                .args([
                    "@127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "+short",
                    "+time=1",
                    "+tries=1",
                    "fg.test",
                    "SOA",
                ])
                .output()
                .unwrap();
            if !out.stdout.is_empty() {
                return knot;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = knot.child.kill();
        let _ = knot.child.wait();
        knot.addr.set_port(0);
    }
    panic!("knotd did not start; see {}/knot.log", kdir.display());
}

/// `lobby dns` in push-only mode towards `knot`, signing with the key in `secret`.
fn push_to(knot: &Knot, conf: &Path, secret: &Path) -> Lobby {
    let knot_addr = knot.addr.to_string();
    Lobby::start(
        &[
            "dns",
            "--config",
            conf.to_str().unwrap(),
            "--listen",
            "off",
            "--http",
            "127.0.0.1:0",
            "--push",
            &knot_addr,
            "--tsig-key-name",
            "lobby-key",
            "--tsig-secret-file",
            secret.to_str().unwrap(),
        ],
        1,
    )
}

#[test]
fn push_mode_sends_tsig_signed_updates_to_knot() {
    let dir = tmp("push");
    let knot = start_knot(&dir);
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let conf = write_conf(
        &dir,
        &relay_entry("mp1", r.port(), "mpserver01", "Test", Some(r)),
    );
    let secret = dir.join("tsig.secret");
    std::fs::write(&secret, TSIG_SECRET).unwrap();
    // A wrong key is refused by knot and reported, not silently ignored.
    let wrong = dir.join("wrong.secret");
    std::fs::write(&wrong, "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktISE=").unwrap();
    let bad = push_to(&knot, &conf, &wrong);
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        dig(knot.addr, "_fgms._udp.fg.test", "SRV", false).is_empty(),
        "unsigned/wrongly signed updates must not land"
    );
    assert!(bad.stderr().contains("push to"), "{}", bad.stderr());
    drop(bad);
    let d = push_to(&knot, &conf, &secret);
    let wait_for = |name: &str, rtype: &str, pred: &dyn Fn(&[String]) -> bool, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let v = dig(knot.addr, name, rtype, false);
            if pred(&v) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "knot never showed {what}: {v:?}\n{}",
                d.stderr()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let port = r.port();
    wait_for(
        "_fgms._udp.fg.test",
        "SRV",
        &|v| v == [format!("10 20 {port} mp1.fg.test.")],
        "the SRV",
    );
    let txt = wait_for("mp1.fg.test", "TXT", &|v| v.len() == 1, "the TXT");
    assert_eq!(decode_txt(&txt[0])["name"], "mpserver01");
    let naptr = wait_for(
        "terrasync.fg.test",
        "NAPTR",
        &|v| v.len() == 3,
        "the NAPTRs",
    );
    assert!(naptr
        .iter()
        .any(|l| l.contains("https://a.example.org/ws2")));
    // Records lobby does not own are left alone.
    assert_eq!(
        dig(knot.addr, "keep.fg.test", "TXT", false),
        vec!["\"not lobby's\""]
    );
    // A relay going down is pushed as port 0, replacing (not adding to) the SRV.
    drop(relay);
    wait_for(
        "_fgms._udp.fg.test",
        "SRV",
        &|v| v == ["10 20 0 mp1.fg.test."],
        "the SRV port 0",
    );
    assert_eq!(dig(knot.addr, "keep.fg.test", "TXT", false).len(), 1);
}
