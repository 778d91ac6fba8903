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

/// The answer of `dig` (sorted lines), or what dig said when it got none (a busy
/// server may miss dig's 2 s: conditions waited on use this and try again).
fn try_dig(server: SocketAddr, name: &str, rtype: &str, tcp: bool) -> Result<Vec<String>, String> {
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
    if !out.status.success() {
        return Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.starts_with(';'))
        .collect();
    v.sort();
    Ok(v)
}

/// `dig +short` over UDP or TCP: the sorted answer lines; no answer fails the test.
fn dig(server: SocketAddr, name: &str, rtype: &str, tcp: bool) -> Vec<String> {
    try_dig(server, name, rtype, tcp).unwrap_or_else(|e| panic!("dig failed: {e}"))
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
    let d = start_dns_http(&conf);
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
    // Issue 20, item 3: every positive answer to a query with the DO bit (as
    // resolvers send) wrote a WARN line from the DNS library: one datagram, one line.
    let queries = || d.stderr().matches("dns query").count();
    let before = queries();
    for _ in 0..5 {
        let out = Command::new("dig")
            .args([
                format!("@{}", ns.ip()),
                "-p".into(),
                ns.port().to_string(),
                "+dnssec".into(),
                "+norecurse".into(),
                "mp1.fg.test".into(),
                "SRV".into(),
            ])
            .output()
            .expect("dig");
        assert!(out.status.success());
    }
    // Until the fifth query's debug line is read: the answers to the four before it
    // (and any line they wrote) are in the log by then.
    assert!(
        poll_until(Duration::from_secs(10), || queries() >= before + 5),
        "the queries' debug lines:\n{}",
        d.stderr()
    );
    let log = d.stderr();
    assert!(
        !log.contains("unexpected lookup skip"),
        "a log line per answer:\n{log}"
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

const TSIG_SECRET: &str = "c2VjcmV0LWtleS1mb3ItbG9iYnktdGVzdHMtMTIzNDU2Nzg=";

fn start_knot(dir: &Path) -> Knot {
    start_knot_on(dir, None)
}

/// Knot serving `fg.test` from a fresh zone file (its journal, where updates are
/// kept, wiped: a primary restarted from its zone file), on `port` or a free one.
fn start_knot_on(dir: &Path, port: Option<u16>) -> Knot {
    need("knotd");
    let kdir = dir.join("knot");
    let _ = std::fs::remove_dir_all(kdir.join("db"));
    std::fs::create_dir_all(kdir.join("db")).unwrap();
    std::fs::write(
        kdir.join("fg.test.zone"),
        "$ORIGIN fg.test.\n$TTL 60\n@ IN SOA ns1.fg.test. hostmaster.fg.test. 1 3600 600 86400 60\n@ IN NS ns1.fg.test.\nns1 IN A 127.0.0.1\nkeep IN TXT \"not lobby's\"\n",
    )
    .unwrap();
    for _ in 0..5 {
        let port = port.unwrap_or_else(free_port);
        std::fs::write(
            kdir.join("knot.conf"),
            format!(
                "server:\n    listen: 127.0.0.1@{port}\n    rundir: {d}\ncontrol:\n    listen: {d}/knot.sock\nlog:\n  - target: {d}/knot.log\n    any: debug\ndatabase:\n    storage: {d}/db\nkey:\n  - id: lobby-key\n    algorithm: hmac-sha256\n    secret: {TSIG_SECRET}\nacl:\n  - id: lobby_update\n    address: 127.0.0.1\n    key: lobby-key\n    action: update\ntemplate:\n  - id: default\n    storage: {d}\n    file: \"%s.zone\"\n    zonefile-sync: -1\n    journal-content: changes\nzone:\n  - domain: fg.test\n    acl: lobby_update\n",
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
    wait_until(
        "the refused push is reported",
        Duration::from_secs(10),
        &|| bad.stderr(),
        &|| bad.stderr().contains("push to"),
    );
    assert!(
        dig(knot.addr, "_fgms._udp.fg.test", "SRV", false).is_empty(),
        "unsigned/wrongly signed updates must not land"
    );
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

// ---- issue 9, item 8 (and item 12 for the push target) ----

/// `lobby ARGS` that must refuse to start: its exit status and standard error
/// (killed, and reported as started, if it is still running after 10 s).
fn start_fails(args: &[&str]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lobby");
    let deadline = Instant::now() + Duration::from_secs(10);
    let failed = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break !s.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.wait();
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (failed, err)
}

fn dns_stats(http: SocketAddr) -> serde_json::Value {
    let (status, body) = http_get(http, "/stats");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["dns"].clone()
}

/// Polls `pred` until it holds; after `within`, fails with `what` and `log()`.
fn wait_until(what: &str, within: Duration, log: &dyn Fn() -> String, pred: &dyn Fn() -> bool) {
    assert!(poll_until(within, pred), "never: {what}\n{}", log());
}

/// Probes every 30 s (only the one before serving happens in the test), fall 3.
fn write_slow_probe_conf(dir: &Path, extra: &str) -> PathBuf {
    let p = dir.join("lobby.toml");
    std::fs::write(
        &p,
        format!(
            "[dns]\nlisten = [\"127.0.0.1:0\"]\nzone = \"fg.test\"\n\n[directory]\nprobe_interval = 30\nprobe_timeout = 0.3\nfall = 3\nrise = 1\n{extra}\n"
        ),
    )
    .unwrap();
    p
}

#[test]
fn a_relay_is_published_with_port_zero_until_it_answers_a_probe() {
    // Failed before: every relay started as up, so for `fall` probe intervals (here
    // 90 s) a relay that does not run was advertised with its real port.
    let dir = tmp("first-probe");
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let dead = free_port();
    let conf = write_slow_probe_conf(
        &dir,
        &(relay_entry("mp1", r.port(), "up", "Test", Some(r))
            + &relay_entry(
                "mp2",
                dead,
                "down",
                "Test",
                Some(SocketAddr::from(([127, 0, 0, 1], dead))),
            )),
    );
    let d = start_dns_http(&conf);
    let ns = d.addr("dns", "udp");
    // The very first answers: probed once before serving.
    assert_eq!(srv_port(ns, "mp2"), Some(0), "{}", d.stderr());
    assert_eq!(srv_port(ns, "mp1"), Some(r.port()), "{}", d.stderr());
    let (_, xml) = http_get(d.addr("http", "tcp"), "/mpservers.xml");
    let mp2 = xml
        .split("<server>")
        .find(|s| s.contains("mp2.fg.test"))
        .unwrap();
    assert!(
        mp2.contains("<online type=\"bool\">false</online>"),
        "{xml}"
    );
    assert!(
        dns_stats(d.addr("http", "tcp"))["probe_failed"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

#[test]
fn empty_tsig_secrets_are_configuration_errors() {
    // Failed before: an empty secret was taken as an empty HMAC key.
    let dir = tmp("empty-secret");
    let conf = write_slow_probe_conf(&dir, "");
    let empty = dir.join("empty.secret");
    std::fs::write(&empty, "\n").unwrap();
    let (failed, err) = start_fails(&[
        "dns",
        "--config",
        conf.to_str().unwrap(),
        "--push",
        "127.0.0.1:9",
        "--tsig-key-name",
        "lobby-key",
        "--tsig-secret-file",
        empty.to_str().unwrap(),
    ]);
    assert!(failed && err.contains("dns.tsig_secret is empty"), "{err}");
    let conf = write_slow_probe_conf(&dir, "");
    add_dns_keys(
        &conf,
        "allow_axfr = true\naxfr_tsig_key_name = \"xfr\"\naxfr_tsig_secret = \"\"\n",
    );
    let (failed, err) = start_fails(&["dns", "--config", conf.to_str().unwrap()]);
    assert!(
        failed && err.contains("dns.axfr_tsig_secret is empty"),
        "{err}"
    );
}

fn dig_axfr(ns: SocketAddr, key: Option<&str>) -> String {
    let mut args = vec![
        format!("@{}", ns.ip()),
        "-p".into(),
        ns.port().to_string(),
        "+time=2".into(),
        "+tries=1".into(),
        "fg.test".into(),
        "AXFR".into(),
    ];
    if let Some(k) = key {
        args.push("-y".into());
        args.push(k.into());
    }
    let out = Command::new("dig").args(&args).output().expect("dig");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn zone_transfers_need_tsig_or_an_allowed_source() {
    // Failed before: with allow_axfr, anyone could transfer the zone.
    let dir = tmp("axfr");
    let axfr = |extra: &str| {
        let conf = write_slow_probe_conf(&dir, "");
        let text = std::fs::read_to_string(&conf)
            .unwrap()
            .replace("[dns]\n", &format!("[dns]\nallow_axfr = true\n{extra}\n"));
        std::fs::write(&conf, text).unwrap();
        conf
    };
    let key = format!("hmac-sha256:xfr-key:{TSIG_SECRET}");
    let conf = axfr(&format!(
        "axfr_allow = [\"192.0.2.0/24\"]\naxfr_tsig_key_name = \"xfr-key\"\naxfr_tsig_secret = \"{TSIG_SECRET}\""
    ));
    let d = start_dns_http(&conf);
    let ns = d.addr("dns", "udp");
    let unsigned = dig_axfr(ns, None);
    assert!(
        !unsigned.contains("IN\tSOA") && unsigned.contains("Transfer failed"),
        "an unsigned transfer from a source not listed is refused:\n{unsigned}"
    );
    let signed = dig_axfr(ns, Some(&key));
    assert!(
        signed.matches("IN\tSOA").count() == 2 && signed.contains("IN\tNS"),
        "a transfer signed with the key gets the zone:\n{signed}\n{}",
        d.stderr()
    );
    assert!(
        !signed.contains("Couldn't verify"),
        "its answer is signed:\n{signed}"
    );
    let wrong = dig_axfr(
        ns,
        Some("hmac-sha256:xfr-key:d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktISE="),
    );
    assert!(!wrong.contains("IN\tNS"), "{wrong}");
    let stats = dns_stats(d.addr("http", "tcp"));
    assert_eq!(stats["axfr_allowed"], 1, "{stats}");
    assert_eq!(stats["axfr_refused_unsigned"], 1, "{stats}");
    assert_eq!(stats["axfr_refused_bad_tsig"], 1, "{stats}");
    assert!(
        d.stderr().contains("zone transfer refused"),
        "{}",
        d.stderr()
    );
    drop(d);
    // A listed source needs no key.
    let conf = axfr("axfr_allow = [\"127.0.0.1/32\"]");
    let d = Lobby::start(&["dns", "--config", conf.to_str().unwrap()], 2);
    let listed = dig_axfr(d.addr("dns", "udp"), None);
    assert_eq!(listed.matches("IN\tSOA").count(), 2, "{listed}");
    drop(d);
    // Neither: a configuration error, not an open zone.
    let conf = axfr("");
    let (failed, err) = start_fails(&["dns", "--config", conf.to_str().unwrap()]);
    assert!(failed && err.contains("dns.allow_axfr"), "{err}");
}

#[test]
fn queries_are_logged_at_debug_not_info() {
    // Failed before: hickory logged two INFO lines per query.
    let dir = tmp("querylog");
    let conf = write_slow_probe_conf(&dir, "");
    for (level, want) in [("info", false), ("debug", true)] {
        let d = Lobby::start_with_env(
            &["dns", "--config", conf.to_str().unwrap()],
            2,
            &[("RUST_LOG", level)],
        );
        let ns = d.addr("dns", "udp");
        for _ in 0..3 {
            dig(ns, "querylog.fg.test", "TXT", false);
        }
        let log = d.stderr();
        assert!(
            !log.contains("query:querylog.fg.test"),
            "hickory's per-query lines at {level}:\n{log}"
        );
        let ours = log
            .lines()
            .filter(|l| l.contains("dns query") && l.contains("querylog.fg.test"))
            .count();
        assert_eq!(ours >= 3, want, "RUST_LOG={level}:\n{log}");
        if want {
            let line = log.lines().find(|l| l.contains("dns query")).unwrap();
            assert!(line.contains("127.0.0.1:"), "the peer is named: {line}");
        }
    }
}

/// Push-only lobby towards `knot` with the right key and `extra` in `[dns]`.
fn pusher(dir: &Path, knot: SocketAddr, relays: &str, extra: &str) -> Lobby {
    let conf = write_conf(dir, relays);
    let text = std::fs::read_to_string(&conf)
        .unwrap()
        .replace("[dns]\n", &format!("[dns]\n{extra}\n"));
    std::fs::write(&conf, text).unwrap();
    let secret = dir.join("tsig.secret");
    std::fs::write(&secret, TSIG_SECRET).unwrap();
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
            &knot.to_string(),
            "--tsig-key-name",
            "lobby-key",
            "--tsig-secret-file",
            secret.to_str().unwrap(),
        ],
        1,
    )
}

#[test]
fn a_wrong_key_is_reported_as_the_primarys_refusal() {
    // Failed before: logged as hickory's "protocol error: Please file an issue ...
    // truncated HMACs" although Knot answered NOTAUTH with TSIG error BADSIG.
    let dir = tmp("refusal");
    let knot = start_knot(&dir);
    let conf = write_conf(&dir, "");
    let wrong = dir.join("wrong.secret");
    std::fs::write(&wrong, "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktISE=").unwrap();
    let bad = push_to(&knot, &conf, &wrong);
    wait_until(
        "the refusal is logged",
        Duration::from_secs(10),
        &|| bad.stderr(),
        &|| bad.stderr().contains("NOTAUTH"),
    );
    let log = bad.stderr();
    assert!(log.contains("TSIG error BADSIG"), "{log}");
    assert!(!log.contains("truncated HMAC"), "{log}");
    let stats = dns_stats(bad.addr("http", "tcp"));
    assert!(stats["push_refused"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["push_acked"], 0, "{stats}");
}

#[test]
fn a_push_is_retried_until_the_primary_answers() {
    // Failed before: a failed push was only retried at the next health change (none
    // here), so a primary that was down at start stayed empty.
    let dir = tmp("retry");
    let port = free_port();
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let d = pusher(
        &dir,
        SocketAddr::from(([127, 0, 0, 1], port)),
        &relay_entry("mp1", r.port(), "mpserver01", "Test", Some(r)),
        "push_retry_min = 0.2\npush_retry_max = 0.5\npush_refresh = 60",
    );
    // The primary is down until a push went unanswered and was retried (the
    // backoff's intervals: directory::push's schedule_retries_with_backoff_and_refreshes).
    let retried = |s: &serde_json::Value| {
        s["push_unanswered"].as_u64() >= Some(1) && s["push_retry"].as_u64() >= Some(1)
    };
    wait_until(
        "a push unanswered and retried",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| retried(&dns_stats(d.addr("http", "tcp"))),
    );
    let knot = start_knot_on(&dir, Some(port));
    let want = vec![format!("10 20 {} mp1.fg.test.", r.port())];
    wait_until(
        "the records reach the primary that came up late",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| try_dig(knot.addr, "_fgms._udp.fg.test", "SRV", false).is_ok_and(|r| r == want),
    );
    let stats = dns_stats(d.addr("http", "tcp"));
    assert!(stats["push_unanswered"].as_u64().unwrap() >= 1, "{stats}");
    assert!(stats["push_retry"].as_u64().unwrap() >= 1, "{stats}");
    assert!(stats["push_acked"].as_u64().unwrap() >= 1, "{stats}");
}

#[test]
fn a_primary_that_lost_the_records_gets_them_back_on_refresh() {
    // Failed before: the records were pushed at start and on health changes only.
    let dir = tmp("refresh");
    let knot = start_knot(&dir);
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let d = pusher(
        &dir,
        knot.addr,
        &relay_entry("mp1", r.port(), "mpserver01", "Test", Some(r)),
        "push_retry_min = 0.2\npush_retry_max = 0.5\npush_refresh = 0.5",
    );
    let want = vec![format!("10 20 {} mp1.fg.test.", r.port())];
    let srv = |k: &Knot| dig(k.addr, "_fgms._udp.fg.test", "SRV", false);
    wait_until(
        "the first push",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| srv(&knot) == want,
    );
    let port = knot.addr.port();
    drop(knot);
    let knot = start_knot_on(&dir, Some(port));
    assert!(
        srv(&knot).is_empty(),
        "restarted from its zone file, without the records"
    );
    wait_until(
        "the records come back",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| srv(&knot) == want && dig(knot.addr, "mp1.fg.test", "TXT", false).len() == 1,
    );
    let stats = dns_stats(d.addr("http", "tcp"));
    assert!(
        stats["push_refresh_mismatch"].as_u64().unwrap() >= 1,
        "{stats}"
    );
    // Records lobby does not own are still the primary's own.
    assert_eq!(dig(knot.addr, "keep.fg.test", "TXT", false).len(), 1);
}

#[test]
fn an_update_too_big_for_udp_goes_over_tcp() {
    // Failed before: every push went over UDP, whatever its size.
    let dir = tmp("tcp");
    let knot = start_knot(&dir);
    let relays: String = (0..12)
        .map(|i| {
            relay_entry(
                &format!("mp{i}"),
                5000 + i,
                &format!("mpserver{i:02}"),
                "Somewhere far away",
                Some(SocketAddr::from(([127, 0, 0, 1], 9))),
            )
        })
        .collect();
    let d = pusher(&dir, knot.addr, &relays, "push_refresh = 60");
    wait_until(
        "all twelve relays on the primary",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| try_dig(knot.addr, "_fgms._udp.fg.test", "SRV", false).is_ok_and(|r| r.len() == 12),
    );
    let stats = dns_stats(d.addr("http", "tcp"));
    assert!(stats["push_tcp"].as_u64().unwrap() >= 1, "{stats}");
    drop(d);
    // The transport as a primary sees it: a UDP socket that records what arrives and
    // never answers, and a TCP listener on the same port that acknowledges.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = tcp.local_addr().unwrap();
    let udp = std::net::UdpSocket::bind(at).unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let conf = write_conf(&dir, &relays);
    let d = Lobby::start(
        &[
            "dns",
            "--config",
            conf.to_str().unwrap(),
            "--listen",
            "off",
            "--push",
            &at.to_string(),
        ],
        0,
    );
    tcp.set_nonblocking(false).unwrap();
    let (mut conn, _) = tcp.accept().unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    use std::io::{Read, Write};
    let mut len = [0u8; 2];
    conn.read_exact(&mut len).unwrap();
    let mut msg = vec![0u8; u16::from_be_bytes(len) as usize];
    conn.read_exact(&mut msg).unwrap();
    assert!(
        msg.len() > 512,
        "the big update came over TCP ({} bytes)",
        msg.len()
    );
    assert_eq!((msg[2] >> 3) & 0x0f, 5, "an UPDATE");
    let mut answer = vec![0, 12, msg[0], msg[1], 0x80 | (5 << 3), 0];
    answer.extend_from_slice(&[0; 8]);
    conn.write_all(&answer).unwrap();
    let mut buf = [0u8; 4096];
    let mut big_udp = 0;
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        if let Ok((n, _)) = udp.recv_from(&mut buf) {
            big_udp += usize::from(n > 512);
        }
    }
    assert_eq!(big_udp, 0, "no UDP datagram over 512 bytes");
    wait_until(
        "the TCP answer is taken as an acknowledgement",
        Duration::from_secs(5),
        &|| d.stderr(),
        &|| d.stderr().contains("zone pushed"),
    );
}

#[test]
fn a_push_target_that_does_not_resolve_does_not_stop_the_part() {
    // Failed before: the push target was resolved once at start, and a name that
    // did not resolve stopped `lobby dns` from starting at all.
    let dir = tmp("unresolved");
    let conf = write_slow_probe_conf(&dir, "");
    add_dns_keys(&conf, "push = \"primary.does-not-exist.invalid:53\"\npush_retry_min = 0.2\npush_retry_max = 0.4\n");
    let d = start_dns_http(&conf);
    // It serves.
    assert_eq!(
        dig(d.addr("dns", "udp"), "fg.test", "NS", false),
        vec!["ns1.fg.test."]
    );
    wait_until(
        "resolution retried",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| {
            dns_stats(d.addr("http", "tcp"))["push_resolve_failed"]
                .as_u64()
                .unwrap()
                >= 2
        },
    );
    assert!(
        d.stderr().contains("cannot resolve the push target"),
        "{}",
        d.stderr()
    );
    drop(d);
    // Only a malformed HOST:PORT is a start-up error.
    let (failed, err) = start_fails(&[
        "dns",
        "--config",
        conf.to_str().unwrap(),
        "--push",
        "primary.example.org:notaport",
    ]);
    assert!(failed && err.contains("dns.push"), "{err}");
}

#[test]
fn a_relay_host_that_does_not_resolve_is_retried_and_counted() {
    // Failed before: a relay host without addresses was resolved once at start;
    // one that did not resolve was never probed again and nothing was counted.
    let dir = tmp("relay-resolve");
    let conf = write_conf(
        &dir,
        "\n[[directory.relay]]\nhost = \"mp9.does-not-exist.invalid.\"\nname = \"far\"\nlocation = \"Nowhere\"\n",
    );
    let d = start_dns_http(&conf);
    let ns = d.addr("dns", "udp");
    assert_eq!(
        dig(ns, "fg.test", "NS", false),
        vec!["ns1.fg.test."],
        "it serves"
    );
    wait_until(
        "resolution retried every probe round",
        Duration::from_secs(10),
        &|| d.stderr(),
        &|| {
            dns_stats(d.addr("http", "tcp"))["relay_resolve_failed"]
                .as_u64()
                .unwrap()
                >= 3
        },
    );
    assert!(
        d.stderr().contains("cannot resolve the relay's host"),
        "{}",
        d.stderr()
    );
    let srv = dig(ns, "_fgms._udp.fg.test", "SRV", false);
    assert_eq!(srv, vec!["10 20 0 mp9.does-not-exist.invalid."]);
}

#[test]
fn a_process_out_of_descriptors_does_not_unpublish_its_relays() {
    // Issue 20, item 3: with the descriptors taken (here by held DNS TCP
    // connections, their caps raised for it), the prober could not open its
    // socket and counted that as the relay's failure: every relay went down.
    let dir = tmp("nofd");
    let relay = Lobby::start(&["relay", "--listen", "127.0.0.1:0", "--telnet", "off"], 1);
    let r = relay.addr("relay", "udp");
    let conf = write_conf(
        &dir,
        &relay_entry("mp1", r.port(), "mpserver01", "Test", Some(r)),
    );
    add_dns_keys(&conf, "max_tcp_connections = 1000\nmax_tcp_per_ip = 1000\n");
    let cmd = format!(
        "ulimit -n 48 && exec {} dns --config {}",
        env!("CARGO_BIN_EXE_lobby"),
        conf.display()
    );
    let d = Lobby::start_cmd("sh", &["-c", &cmd], 2);
    let (ns, tcp) = (d.addr("dns", "udp"), d.addr("dns", "tcp"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv_port(ns, "mp1") != Some(r.port()) {
        assert!(Instant::now() < deadline, "the relay never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Take every descriptor the process has left, and keep them taken.
    // Until the probes have failed locally for over a second (two of their log lines,
    // at most one a second: at probe_interval 0.3 more failures than fall 2).
    let mut held: Vec<std::net::TcpStream> = Vec::new();
    let t0 = Instant::now();
    let local_errors = || d.stderr().matches("a local error").count();
    while local_errors() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the probes never failed locally twice:\n{}",
            d.stderr()
        );
        held.retain(|s| s.peer_addr().is_ok());
        while held.len() < 80 {
            match std::net::TcpStream::connect_timeout(&tcp, Duration::from_millis(200)) {
                Ok(s) => held.push(s),
                Err(_) => break,
            }
        }
        assert_eq!(
            srv_port(ns, "mp1"),
            Some(r.port()),
            "unpublished after {:?}",
            t0.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        srv_port(ns, "mp1"),
        Some(r.port()),
        "unpublished at the end"
    );
}

/// A TCP connection to `to` from the loopback address `from` (all of 127.0.0.0/8
/// is local, so each is a source of its own).
fn tcp_from(from: &str, to: SocketAddr) -> std::net::TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    s.bind(&local.into()).unwrap();
    s.connect_timeout(&to.into(), Duration::from_secs(2))
        .unwrap();
    let s: std::net::TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    s
}

/// Adds `keys` (lines) to the `[dns]` table of the configuration file `conf`.
fn add_dns_keys(conf: &std::path::Path, keys: &str) {
    let text = std::fs::read_to_string(conf).unwrap();
    std::fs::write(conf, text.replace("[dns]\n", &format!("[dns]\n{keys}"))).unwrap();
}

/// `lobby dns` on `conf`, with HTTP on loopback.
fn start_dns_http(conf: &std::path::Path) -> Lobby {
    let conf = conf.to_str().unwrap();
    Lobby::start(&["dns", "--config", conf, "--http", "127.0.0.1:0"], 3)
}

/// `message` behind its two-byte length, as DNS over TCP carries it.
fn framed(message: &[u8]) -> Vec<u8> {
    let mut f = (message.len() as u16).to_be_bytes().to_vec();
    f.extend_from_slice(message);
    f
}

/// A query for `fg.test` of type `qtype` with `id`.
fn query(id: u16, qtype: u8) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    q.extend_from_slice(b"\x02fg\x04test\x00\x00");
    q.extend_from_slice(&[qtype, 0, 1]);
    q
}

/// A query for the SOA of `fg.test` with `id`.
fn soa_query(id: u16) -> Vec<u8> {
    query(id, 6)
}

/// The next answer on `s`: its ID, RCODE and answer count.
fn tcp_answer(s: &mut std::net::TcpStream) -> (u16, u8, u16) {
    use std::io::Read;
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).expect("an answer");
    let mut m = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut m).expect("the whole answer");
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let word = |i: usize| u16::from_be_bytes([m[i], m[i + 1]]);
    (word(0), m[3] & 0x0f, word(6))
}

/// Asks the SOA over `s`; true when it was answered (NOERROR, one record).
fn tcp_soa(s: &mut std::net::TcpStream, id: u16) -> bool {
    use std::io::Write;
    s.write_all(&framed(&soa_query(id))).unwrap();
    tcp_answer(s) == (id, 0, 1)
}

#[test]
fn dns_over_tcp_is_capped_per_source_and_in_total_and_idle_connections_end() {
    // Issue 20, item 3: hickory's TCP listener accepted every connection and kept
    // each for 5 s between messages, so held connections took every descriptor.
    // Failed before: the third connection from one source was not closed.
    use std::io::Write;
    let dir = tmp("tcpcaps");
    let conf = write_slow_probe_conf(&dir, "");
    add_dns_keys(
        &conf,
        "max_tcp_connections = 5\nmax_tcp_per_ip = 2\ntcp_idle_timeout = 3\n",
    );
    let d = start_dns_http(&conf);
    let (tcp, http) = (d.addr("dns", "tcp"), d.addr("http", "tcp"));
    // Two connections from 127.0.0.1 are served and stay open (more than one query
    // each); a third is closed at once, nothing read.
    let mut held: Vec<_> = (0..2).map(|_| tcp_from("127.0.0.1", tcp)).collect();
    let mut used = Vec::new(); // when each open connection last had an answer
    for (i, s) in held.iter_mut().enumerate() {
        assert!(tcp_soa(s, i as u16) && tcp_soa(s, 100 + i as u16));
        used.push(Instant::now());
        // The server's task joins the waiting connections after its answer is
        // written, which may be after the answer is read here: without a moment
        // between them, the second connection could wait longer than the first on a
        // busy machine (seen on 2 cores: the second was closed for the third).
        std::thread::sleep(Duration::from_millis(50));
    }
    // A third from that source is served: its own longest-waiting connection (the
    // first) is closed for it, so the source still holds two.
    let mut third = tcp_from("127.0.0.1", tcp);
    assert!(
        tcp_soa(&mut third, 150),
        "a third from one source is served"
    );
    assert!(
        closed_within(&mut held[0], Duration::from_secs(1), |_| {}),
        "its own longest-waiting connection made room\n{}",
        d.stderr()
    );
    held.remove(0);
    used.remove(0);
    held.push(third);
    used.push(Instant::now());
    // Another source is served; so is a third and a fourth, up to the total of 5.
    let mut others: Vec<_> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|ip| tcp_from(ip, tcp))
        .collect();
    for (i, s) in others.iter_mut().enumerate() {
        assert!(tcp_soa(s, 200 + i as u16), "another source is answered");
        used.push(Instant::now());
    }
    // At the total cap a sixth connection is served: the one that has waited
    // longest for a query (the first) is closed for it (issue 20, item 5's rule).
    let mut sixth = tcp_from("127.0.0.5", tcp);
    assert!(tcp_soa(&mut sixth, 300), "a sixth connection is served");
    assert!(
        closed_within(&mut held[0], Duration::from_secs(1), |_| {}),
        "the longest-waiting connection made room"
    );
    held.remove(0);
    used.remove(0);
    others.push(sixth);
    used.push(Instant::now());
    // Idle connections end after tcp_idle_timeout (3 s), not before, and free
    // their places.
    for (s, last) in held.iter_mut().chain(others.iter_mut()).zip(used) {
        assert!(
            closed_within(s, Duration::from_secs(6), |_| {}),
            "idle connection kept"
        );
        assert!(
            last.elapsed() >= Duration::from_secs(1),
            "closed {:?} after its last answer",
            last.elapsed()
        );
    }
    // A query begun and not finished ends the connection after the same time.
    let mut slow = tcp_from("127.0.0.1", tcp);
    slow.write_all(&[0]).unwrap();
    assert!(closed_within(&mut slow, Duration::from_secs(6), |_| {}));
    // A connection carries at most 100 queries: closed after the 100th answer.
    let mut busy = tcp_from("127.0.0.6", tcp);
    let queries: Vec<u8> = (0..100).flat_map(|i| framed(&soa_query(i))).collect();
    busy.write_all(&queries).unwrap();
    for i in 0..100 {
        assert_eq!(tcp_answer(&mut busy), (i, 0, 1));
    }
    assert!(closed_within(&mut busy, Duration::from_secs(1), |_| {}));
    // A query that does not decode gets FORMERR, and the connection ends.
    let mut bad = tcp_from("127.0.0.7", tcp);
    bad.write_all(&framed(&soa_query(9)[..15])).unwrap();
    assert_eq!(tcp_answer(&mut bad), (9, 1, 0));
    assert!(closed_within(&mut bad, Duration::from_secs(2), |_| {}));
    let wanted = [
        ("tcp_refused_per_ip_cap", 0),
        ("tcp_refused_connection_cap", 0),
        ("tcp_evicted", 2),
        ("tcp_idle_timeouts", 5),
        ("tcp_read_timeouts", 1),
        ("tcp_query_cap", 1),
        ("tcp_malformed", 1),
        ("tcp_accepted", 10),
    ];
    // A close is counted by the connection's task, which may run a moment after the
    // peer saw the close: read the counters again for up to a second.
    poll_until(Duration::from_secs(1), || {
        let stats = dns_stats(http);
        wanted.iter().all(|(key, want)| stats[key] == *want)
    });
    let stats = dns_stats(http);
    for (key, want) in wanted {
        assert_eq!(stats[key], want, "{key}: {stats}");
    }
    let (_, metrics) = http_get(http, "/metrics");
    assert!(
        metrics.contains("lobby_dns_tcp_closed_total{reason=\"evicted\"} 2"),
        "{metrics}"
    );
    let log = d.stderr();
    let refusals: Vec<_> = log
        .lines()
        .filter(|l| l.contains("DNS TCP connection refused") || l.contains("closed for a new one"))
        .collect();
    assert!(
        refusals.len() == 2 && refusals.iter().all(|l| l.contains("DEBUG")),
        "evictions are logged at debug only\n{log}"
    );
}

#[test]
fn refused_zone_transfers_are_not_logged_one_line_each() {
    // Failed before: every refused transfer was a line at info (a bad TSIG one at
    // warn), and any source may ask as often as it likes.
    use std::io::Write;
    let dir = tmp("axfrlog");
    let conf = write_slow_probe_conf(&dir, "");
    add_dns_keys(
        &conf,
        "allow_axfr = true\naxfr_allow = [\"192.0.2.0/24\"]\n",
    );
    let d = start_dns_http(&conf);
    let mut s = tcp_from("127.0.0.1", d.addr("dns", "tcp"));
    let asks: Vec<u8> = (0..20).flat_map(|i| framed(&query(i, 252))).collect();
    let t0 = Instant::now();
    s.write_all(&asks).unwrap();
    for i in 0..20 {
        assert_eq!(
            tcp_answer(&mut s),
            (i, 5, 0),
            "REFUSED, nothing transferred"
        );
    }
    // At most one line at info per second the refusals took (on a busy machine
    // they may take more than one).
    let most_info = 2 + t0.elapsed().as_secs() as usize;
    let stats = dns_stats(d.addr("http", "tcp"));
    assert_eq!(stats["axfr_refused_unsigned"], 20, "{stats}");
    let lines_in = |log: &str, level: &str| {
        log.lines()
            .filter(|l| l.contains("zone transfer refused") && l.contains(level))
            .count()
    };
    // The log is read as lobby writes it: wait for the twenty refusals' lines (found
    // flaky on 2 cores when read at once after the answers).
    poll_until(Duration::from_secs(5), || {
        let log = d.stderr();
        lines_in(&log, "INFO") + lines_in(&log, "DEBUG") >= 20
    });
    let log = d.stderr();
    let lines = |level: &str| lines_in(&log, level);
    assert!(
        (1..=most_info).contains(&lines("INFO")) && lines("INFO") + lines("DEBUG") == 20,
        "one line at info a second, the rest at debug:\n{log}"
    );
}

/// A UDP socket bound to the loopback address `from` (each is a source of its own).
fn udp_from(from: &str) -> std::net::UdpSocket {
    let s = std::net::UdpSocket::bind(format!("{from}:0")).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s
}

/// Sends `n` SOA queries from `s` to `ns` at once, then reads for what comes back:
/// (full answers, empty answers with TC set).
fn burst(s: &std::net::UdpSocket, ns: SocketAddr, n: u16, first_id: u16) -> (usize, usize) {
    for i in 0..n {
        s.send_to(&soa_query(first_id.wrapping_add(i)), ns).unwrap();
    }
    let (mut full, mut truncated) = (0, 0);
    let mut b = [0u8; 4096];
    while let Ok((len, _)) = s.recv_from(&mut b) {
        let tc = b[2] & 0x02 != 0;
        let answers = u16::from_be_bytes([b[6], b[7]]);
        if tc {
            assert_eq!(answers, 0, "a truncated answer carries no record");
            assert!(len <= 29, "no larger than the query: {len}");
            truncated += 1;
        } else {
            assert_eq!(answers, 1);
            full += 1;
        }
    }
    (full, truncated)
}

#[test]
fn dns_over_udp_answers_each_source_within_its_budget() {
    // Issue 20's review: hickory answered every UDP query, so one spoofed address
    // drew answers without bound (an amplifier). Failed before: 300 queries at once
    // from one source got 300 answers.
    let dir = tmp("udpbudget");
    let conf = write_slow_probe_conf(&dir, "");
    add_dns_keys(&conf, "udp_rate = 5\nudp_burst = 20\n");
    let d = start_dns_http(&conf);
    let (ns, http) = (d.addr("dns", "udp"), d.addr("http", "tcp"));
    let flood = udp_from("127.0.0.2");
    let (full, truncated) = burst(&flood, ns, 300, 0);
    let flooded = Instant::now();
    // The burst, and what the rate refills while the 300 arrive (a few).
    assert!((20..=30).contains(&full), "{full} full answers");
    // Of the rest, every second one is answered empty with TC set.
    let over = 300 - full;
    assert!(
        truncated.abs_diff(over / 2) <= 1,
        "{truncated} truncated of {over}"
    );
    // Another source is not touched by the first one's flood.
    let (full2, truncated2) = burst(&udp_from("127.0.0.3"), ns, 10, 1000);
    assert_eq!((full2, truncated2), (10, 0));
    // Over TCP the flooding source is still answered (its resolver's way out).
    let mut s = tcp_from("127.0.0.2", d.addr("dns", "tcp"));
    assert!(tcp_soa(&mut s, 7));
    // Later its budget has refilled by the rate (5 a second: 3 in 0.6 s, waited for
    // from the flood's end, most of it spent above). The refill's arithmetic in virtual
    // time: crates/nameserver/tests/udp_budget.rs.
    std::thread::sleep(
        (flooded + Duration::from_millis(700)).saturating_duration_since(Instant::now()),
    );
    let (full3, _) = burst(&flood, ns, 3, 2000);
    assert_eq!(full3, 3);
    let stats = dns_stats(http);
    let dropped = stats["udp_over_budget_dropped"].as_u64().unwrap();
    let tc = stats["udp_over_budget_truncated"].as_u64().unwrap();
    assert_eq!(dropped + tc, over as u64, "{stats}");
    assert_eq!(tc, truncated as u64, "{stats}");
}

#[test]
fn a_spoofed_source_flooding_udp_draws_less_than_it_sends_and_others_are_answered() {
    // Issue 30, item 2: the classic reflection. One address (the "victim", whose
    // address a spoofer would write) is sent 10,000 queries a second; everything
    // lobby sends toward it is counted. The default budget (20 a second, 60 at once):
    // full answers within it, past it every second query a TC answer no larger than
    // the query, the rest dropped. Another source keeps getting full answers.
    // LOBBY_DNS_FLOOD_SECS=30 runs the issue's 30 s (docs/RELIABILITY.md has that run).
    let secs: f64 = std::env::var("LOBBY_DNS_FLOOD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    let dir = tmp("udpflood");
    let conf = write_slow_probe_conf(&dir, "");
    let d = start_dns_http(&conf);
    let ns = d.addr("dns", "udp");
    let victim = udp_from("127.0.0.2");
    victim
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let q = soa_query(1);
    let full_len = {
        // One answered query first: the size of a full answer.
        let s = udp_from("127.0.0.4");
        s.send_to(&q, ns).unwrap();
        let mut b = [0u8; 4096];
        s.recv_from(&mut b).unwrap().0
    };
    let reader = victim.try_clone().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let counted = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut n, mut bytes, mut full) = (0u64, 0u64, 0u64);
            let mut b = [0u8; 4096];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((len, _)) = reader.recv_from(&mut b) {
                    n += 1;
                    bytes += len as u64;
                    full += u64::from(b[2] & 0x02 == 0);
                }
            }
            (n, bytes, full)
        })
    };
    // A resolver elsewhere asks 5 times a second during the flood.
    let other = udp_from("127.0.0.3");
    let (mut asked, mut answered) = (0, 0);
    let t0 = Instant::now();
    let mut sent = 0u64;
    let mut next_other = t0;
    while t0.elapsed().as_secs_f64() < secs {
        // 10 queries a millisecond: 10,000 a second.
        let due = (t0.elapsed().as_secs_f64() * 10_000.0) as u64;
        while sent < due {
            let _ = victim.send_to(&soa_query(sent as u16), ns);
            sent += 1;
        }
        if Instant::now() >= next_other {
            next_other += Duration::from_millis(200);
            asked += 1;
            other.send_to(&soa_query(40_000 + asked), ns).unwrap();
            let mut b = [0u8; 4096];
            if let Ok((_, _)) = other.recv_from(&mut b) {
                answered += u16::from(b[2] & 0x02 == 0 && u16::from_be_bytes([b[6], b[7]]) == 1);
            }
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let elapsed = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (n, bytes_out, full) = counted.join().unwrap();
    let bytes_in = sent * q.len() as u64;
    let ratio = bytes_out as f64 / bytes_in as f64;
    eprintln!(
        "flood {elapsed:.1} s: {sent} queries ({bytes_in} B) in, {n} datagrams ({bytes_out} B, {full} full) out toward the source: {ratio:.3} bytes out per byte in, {:.0} B/s out; other source answered {answered}/{asked}",
        bytes_out as f64 / elapsed
    );
    assert!(
        sent as f64 >= 8_000.0 * elapsed,
        "the flood ran: {sent} in {elapsed:.1} s"
    );
    // Full answers: the burst and the rate, no more.
    let most_full = 60.0 + 20.0 * (elapsed + 0.5);
    assert!(
        (full as f64) <= most_full,
        "{full} full answers, at most {most_full}"
    );
    // What went back: those full answers plus at most one query-sized TC answer per
    // two queries over the budget.
    let bound = most_full * full_len as f64 + 0.5 * sent as f64 * q.len() as f64 + 1_000.0;
    assert!(
        (bytes_out as f64) <= bound,
        "{bytes_out} B out, bound {bound:.0}"
    );
    assert!(ratio < 0.6, "{ratio:.3} bytes out per byte in");
    // The other source was answered in full every time (its budget is its own).
    assert!(asked >= (secs * 4.0) as u16, "{asked}");
    assert_eq!(
        answered, asked,
        "the other source's queries, answered in full"
    );
}
