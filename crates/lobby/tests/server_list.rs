//! The HTTP-era Xash3D server list (issue 19) over real sockets: curated sources in
//! FWGS/server-list's format listing `lobby sim` fleets of Xash3D and GoldSrc
//! servers (and dead addresses), a heartbeat-registered server beside them, the
//! lists read with the engine's own rules, the grace window, a bad file on SIGHUP,
//! 304s, the state across SIGKILL, and the one-shot `probe` and `export` trees.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-list-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An address nothing answers on (a UDP socket bound then closed).
fn dead_addr() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn sims(args: &[&str], count: usize) -> (Lobby, Vec<SocketAddr>) {
    let n = count.to_string();
    let mut a = vec!["sim", "--listen-ip", "127.0.0.1", "--count", &n];
    a.extend_from_slice(args);
    let s = Lobby::start(&a, count);
    let addrs = s.addrs("sim", "udp");
    (s, addrs)
}

fn toml_entries(list: &[(String, Option<u8>, bool)]) -> String {
    let mut t = String::from("# written by the test, in FWGS/server-list's format\n");
    for (a, proto, force) in list {
        t.push_str(&format!(
            "\n[[server]]\naddress = \"{a}\"\ncontact = \"ops@example.org\"\n"
        ));
        if let Some(p) = proto {
            t.push_str(&format!("protocol = {p}\n"));
        }
        if *force {
            t.push_str("force = true\n");
        }
    }
    t
}

/// One raw HTTP/1.1 exchange; returns the whole response text.
fn http_raw(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    raw
}

fn header<'a>(resp: &'a str, name: &str) -> Option<&'a str> {
    let head = resp.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn entries(http: SocketAddr, gamedir: &str) -> BTreeSet<String> {
    let (status, body) = http_get(http, &format!("/v1/servers/{gamedir}"));
    assert_eq!(status, 200, "{body}");
    engine_entries(&body).into_iter().collect()
}

fn set(lines: &[String]) -> BTreeSet<String> {
    lines.iter().cloned().collect()
}

/// Polls `gamedir`'s list until it is `want` (bounded).
fn entries_until(
    http: SocketAddr,
    gamedir: &str,
    want: &BTreeSet<String>,
    within: Duration,
    m: &Lobby,
) {
    let deadline = Instant::now() + within;
    loop {
        let got = entries(http, gamedir);
        if &got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{gamedir}: listed {got:?}, want {want:?}\nstderr tail:\n{}",
            tail(&m.stderr())
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.contains("DEBUG")).collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn master(dir: &Path, sources: &Path, grace: &str) -> Lobby {
    let cfg = dir.join("lobby.toml");
    let db = format!("sqlite:{}", dir.join("history.sqlite").display());
    let text = format!("[master]\nsave_interval = 0.2\nsample_interval = 1\n\n[history]\ndatabase_url = \"{db}\"\nserver_sample_interval = 1\n");
    std::fs::write(&cfg, text).unwrap();
    list_master(&[
        "--config",
        cfg.to_str().unwrap(),
        "--state",
        dir.join("master.json").to_str().unwrap(),
        "--sources",
        sources.to_str().unwrap(),
        "--grace",
        grace,
    ])
}

#[test]
fn the_heat_maps_are_computed_at_most_once_a_minute_or_once_a_sample_interval() {
    // `/api/list/heatmaps` answers from a computation at most min(60 s, the sample
    // interval) old (each reads six weeks of samples per gamedir). Read every 100 ms
    // for 5 s: with `sample_interval = 2` a new one at most every 2 s, with the
    // default (600 s) the first one all along.
    let dir = tmp("heatmap-age");
    let cfg = dir.join("lobby.toml");
    std::fs::write(&cfg, "[master]\nsample_interval = 2\n").unwrap();
    let short = list_master(&["--config", cfg.to_str().unwrap()]);
    let default = list_master(&[]);
    let generated = |l: &Lobby| {
        let (code, body) = http_get(l.addr("http", "tcp"), "/api/list/heatmaps");
        assert_eq!(code, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["generated_at"].as_u64().unwrap()
    };
    let (mut short_at, mut default_at) = (BTreeSet::new(), BTreeSet::new());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        short_at.insert(generated(&short));
        default_at.insert(generated(&default));
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("in 5 s: computed at {short_at:?} (sample_interval 2), at {default_at:?} (600)");
    assert_eq!(default_at.len(), 1, "{default_at:?}");
    let short_at: Vec<u64> = short_at.into_iter().collect();
    assert!(
        (2..=4).contains(&short_at.len()) && short_at.windows(2).all(|w| w[1] - w[0] >= 2),
        "{short_at:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn curated_sources_are_probed_and_published_beside_heartbeats() {
    let dir = tmp("live");
    let sources = dir.join("servers");
    std::fs::create_dir_all(&sources).unwrap();
    let (_xash, x) = sims(&[], 2);
    let (goldsrc, g) = sims(&["--protocol", "48"], 2);
    let (dead, forced) = (dead_addr(), dead_addr());
    let valve = vec![
        (x[0].to_string(), None, false),
        (x[1].to_string(), Some(49), false),
        (dead.to_string(), None, false),
        (forced.to_string(), None, true),
        // The same server under its host name: one line, the IP it resolved to.
        (format!("localhost:{}", x[0].port()), None, false),
    ];
    std::fs::write(sources.join("valve.toml"), toml_entries(&valve)).unwrap();
    let cstrike = vec![
        (g[0].to_string(), Some(48), false),
        (g[1].to_string(), Some(48), false),
    ];
    std::fs::write(sources.join("cstrike.toml"), toml_entries(&cstrike)).unwrap();
    // Grace 4 s: a stopped server stays that long after its last answer.
    let m = master(&dir, &sources, "4");
    let http = m.addr("http", "tcp");
    // A server that registers by UDP heartbeats, as today.
    let master_udp = m.addr("master", "udp").to_string();
    let (_hb, h) = sims(&["--master", &master_udp], 1);

    let want_valve = set(&[
        format!("ip {}", x[0]),
        format!("ip {}", x[1]),
        format!("ip {forced}"),
        format!("ip {}", h[0]),
    ]);
    entries_until(http, "valve", &want_valve, Duration::from_secs(15), &m);
    let want_cstrike = set(&[format!("gs {}", g[0]), format!("gs {}", g[1])]);
    entries_until(http, "cstrike", &want_cstrike, Duration::from_secs(10), &m);

    // /api/servers (the page's table) has the curated servers too, from their probe.
    let deadline = Instant::now() + Duration::from_secs(10);
    let api = loop {
        let (_, body) = http_get(http, "/api/servers");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        if v["servers"].as_array().map_or(0, Vec::len) >= 5 {
            break v;
        }
        assert!(Instant::now() < deadline, "{body}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let find = |a: &SocketAddr| {
        api["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["address"] == a.to_string())
            .cloned()
            .unwrap_or_else(|| panic!("{a} not in {api}"))
    };
    let curated = find(&x[0]);
    assert_eq!(curated["sources"], serde_json::json!(["curated"]));
    assert!(
        curated["ping_ms"].is_u64() && curated["name"].is_string(),
        "{curated}"
    );
    assert_eq!(find(&g[0])["protocol"], 48);
    let hb = find(&h[0]);
    assert_eq!(
        (hb["sources"].clone(), hb["ping_ms"].clone()),
        (serde_json::json!(["heartbeat"]), serde_json::Value::Null)
    );

    // The page's details of a listed server: its players and rules, asked now; an
    // address the list does not publish is not asked (the master is no proxy).
    let (status, body) = http_get(http, &format!("/api/servers/{}/details", g[0]));
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["protocol"], 48, "{d}");
    assert!(d["ping_ms"].is_u64() && d["rules"].is_array(), "{d}");
    assert!(
        d["players"]
            .as_array()
            .is_some_and(|p| !p.is_empty() && p[0]["name"].is_string()),
        "{d}"
    );
    assert_eq!(
        http_get(http, &format!("/api/servers/{dead}/details")).0,
        404
    );
    assert_eq!(http_get(http, "/api/servers/nonsense/details").0, 404);
    // The heat maps, from the samples (one a second here).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = http_get(http, "/api/list/heatmaps");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let valve = v["gamedirs"]
            .as_array()
            .and_then(|g| g.iter().find(|e| e["gamedir"] == "valve").cloned());
        if let Some(valve) = valve {
            let hours = valve["hours"].as_array().unwrap();
            assert_eq!(
                (hours.len(), valve["weekdays"].as_array().unwrap().len()),
                (24, 7)
            );
            assert!(
                hours.iter().any(|h| h.as_f64().is_some_and(|p| p > 0.0)),
                "{v}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{body}");
        std::thread::sleep(Duration::from_millis(300));
    }

    // The flight log keeps players samples of curated servers as of any other.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = http_get(http, &format!("/api/servers/{}/history", g[0]));
        if status == 200 && body.contains("\"players\"") {
            break;
        }
        assert!(Instant::now() < deadline, "{status} {body}");
        std::thread::sleep(Duration::from_millis(300));
    }

    // v1/gamedirs: the sources' addresses (the host name and the IP it resolves to
    // are two addresses as written) plus the heartbeat server, and what is published.
    let (_, gd) = http_get(http, "/v1/gamedirs");
    let rows: Vec<&str> = gd
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(rows, ["cstrike 2 2", "valve 6 4"], "{gd}");

    // HTTP as the engine needs it: Content-Length, no Content-Encoding even when
    // asked for gzip, a validator, 304 on a repeated conditional GET, HEAD.
    let get = "GET /v1/servers/valve HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip, br\r\nConnection: close\r\n\r\n";
    let r = http_raw(http, get);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(header(&r, "content-encoding").is_none());
    let body = r.split_once("\r\n\r\n").unwrap().1;
    assert_eq!(
        header(&r, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(header(&r, "cache-control"), Some("max-age=60"));
    assert!(
        body.starts_with("# valve server list\n# Generated "),
        "{body}"
    );
    let etag = header(&r, "etag").unwrap().to_string();
    let last_modified = header(&r, "last-modified").unwrap().to_string();
    let again = http_raw(
        http,
        &format!("GET /v1/servers/valve HTTP/1.1\r\nHost: t\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"),
    );
    assert!(again.starts_with("HTTP/1.1 304"), "{again}");
    let since = http_raw(
        http,
        &format!("GET /v1/servers/valve HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: {last_modified}\r\nConnection: close\r\n\r\n"),
    );
    assert!(since.starts_with("HTTP/1.1 304"), "{since}");
    let head = http_raw(
        http,
        "HEAD /v1/servers/valve HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header(&head, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert!(head.ends_with("\r\n\r\n"), "no body on HEAD: {head:?}");

    // A name that is no game directory is not echoed (it would inject lines).
    assert_eq!(http_get(http, "/v1/servers/x%0Aip%201.2.3.4:5").0, 404);

    // A file that is not TOML on SIGHUP keeps the previous good copy, and says
    // where it is bad.
    let mut bad = toml_entries(&valve);
    bad.push_str("port = \"27015\n");
    std::fs::write(sources.join("valve.toml"), bad).unwrap();
    m.signal(libc::SIGHUP);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !m.stderr().contains("source refused") {
        assert!(Instant::now() < deadline, "{}", tail(&m.stderr()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = m.stderr();
    let line = log.lines().find(|l| l.contains("source refused")).unwrap();
    assert!(
        line.contains("valve.toml:") && line.contains("kept"),
        "{line}"
    );
    assert_eq!(
        entries(http, "valve"),
        want_valve,
        "the previous valve list is kept"
    );

    // The GoldSrc servers stop: listed through the grace window, then gone.
    drop(goldsrc);
    let stopped = Instant::now();
    assert_eq!(entries(http, "cstrike"), want_cstrike, "still within grace");
    entries_until(
        http,
        "cstrike",
        &BTreeSet::new(),
        Duration::from_secs(20),
        &m,
    );
    assert!(
        stopped.elapsed() >= Duration::from_secs(2),
        "left before its grace ended"
    );

    // The master is killed; the state file kept what the list learnt.
    std::thread::sleep(Duration::from_millis(500));
    m.signal(libc::SIGKILL);
    drop(m);

    // The static export of that state file: probe.py's tree, the heartbeat server
    // from the master's table included.
    let out = dir.join("export");
    let st = dir.join("master.json");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args([
            "master",
            "export",
            "--state",
            st.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let valve_file = std::fs::read_to_string(out.join("v1/servers/valve")).unwrap();
    assert_eq!(
        set(&engine_entries(&valve_file)),
        want_valve,
        "{valve_file}"
    );
    for f in [
        "v1/gamedirs",
        "state.json",
        "index.html",
        ".nojekyll",
        "v1/servers/cstrike",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }

    // A new master with a long grace lists the valve servers at once from the
    // state, though they are gone and it never heard from them, and the forced one.
    std::fs::write(sources.join("valve.toml"), toml_entries(&valve)).unwrap();
    drop(_xash);
    let m2 = master(&dir, &sources, "3600");
    let got = entries(m2.addr("http", "tcp"), "valve");
    for want in [
        format!("ip {}", x[0]),
        format!("ip {}", x[1]),
        format!("ip {forced}"),
    ] {
        assert!(got.contains(&want), "{want} missing after restart: {got:?}");
    }
    drop(m2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_one_shot_probe_writes_probe_py_tree() {
    let dir = tmp("probe");
    let sources = dir.join("servers");
    std::fs::create_dir_all(&sources).unwrap();
    let (_xash, x) = sims(&[], 2);
    let (_gs, g) = sims(&["--protocol", "48"], 1);
    let dead = dead_addr();
    std::fs::write(
        sources.join("valve.toml"),
        toml_entries(&[
            (x[0].to_string(), None, false),
            (x[1].to_string(), None, false),
            (dead.to_string(), None, false),
        ]),
    )
    .unwrap();
    std::fs::write(
        sources.join("tfc.toml"),
        toml_entries(&[(g[0].to_string(), Some(48), false)]),
    )
    .unwrap();
    std::fs::write(sources.join("dmc.toml"), "").unwrap();
    let out = dir.join("out");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
            .args(args)
            .output()
            .unwrap()
    };
    let (s, o) = (sources.to_str().unwrap(), out.to_str().unwrap());
    let r = run(&[
        "master",
        "probe",
        "--sources",
        s,
        "--output",
        o,
        "--timeout",
        "0.5",
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(summary["addresses"], 4);
    assert_eq!(summary["published"], 3);
    // probe.py's layout: a file per gamedir with servers in the sources.
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
    assert_eq!(
        set(&engine_entries(&read("v1/servers/valve"))),
        set(&[format!("ip {}", x[0]), format!("ip {}", x[1])])
    );
    assert_eq!(
        engine_entries(&read("v1/servers/tfc")),
        [format!("gs {}", g[0])]
    );
    // A file with no server is skipped, as probe.py skips it.
    assert!(!out.join("v1/servers/dmc").exists());
    let gamedirs = read("v1/gamedirs");
    assert!(gamedirs.ends_with("\ntfc 1 1\nvalve 3 2\n"), "{gamedirs}");
    let state: serde_json::Value = serde_json::from_str(&read("state.json")).unwrap();
    let seen = &state["valve"][x[0].to_string()];
    for key in ["last_attempt", "last_seen", "last_ping_ms"] {
        assert!(!seen[key].is_null(), "state.json lacks {key}: {seen}");
    }
    assert!(state["valve"][dead.to_string()]["last_seen"].is_null());
    assert!(!state["valve"][dead.to_string()]["last_attempt"].is_null());
    assert_eq!(
        state["samples"]["valve"][0].as_array().map(Vec::len),
        Some(2)
    );
    assert!(read("index.html").contains("v1/servers/valve"));
    assert!(out.join(".nojekyll").exists());

    // An entry in error: skipped and named, exit 3, every other gamedir published.
    let before = read("v1/servers/valve");
    std::fs::write(sources.join("tfc.toml"), "[[server]]\naddress = \"nope\"\n").unwrap();
    let r = run(&[
        "master",
        "probe",
        "--sources",
        s,
        "--output",
        o,
        "--timeout",
        "0.5",
    ]);
    assert_eq!(r.status.code(), Some(3));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("tfc.toml:2: entry skipped: key `address`"),
        "{err}"
    );
    assert_eq!(
        set(&engine_entries(&read("v1/servers/valve"))),
        set(&engine_entries(&before))
    );
    // A sources directory with no usable file: exit 2, nothing written.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("valve.toml"), "[[server\n").unwrap();
    let out2 = dir.join("out2");
    let r = run(&[
        "master",
        "probe",
        "--sources",
        empty.to_str().unwrap(),
        "--output",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("valve.toml:1"));
    assert!(!out2.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `POST` of `body` to `path`, with an optional bearer token: (status, body).
fn post(http: SocketAddr, path: &str, body: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let r = http_raw(
        http,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    let status = r
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (
        status,
        r.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default(),
    )
}

fn register(http: SocketAddr, addr: &str) -> (u16, serde_json::Value) {
    let body = format!(
        r#"{{"address": "{addr}", "gamedir": "valve", "contact": "secret-contact@example.org"}}"#
    );
    let (status, text) = post(http, "/api/servers/register", &body, None);
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

#[test]
fn self_registration_admits_only_a_server_showing_its_token() {
    let dir = tmp("register");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "gordon 0123456789abcdef0123456789\n").unwrap();
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        format!(
            "[master]\nregistration = true\nregistration_private = true\nsave_interval = 0.2\n\n[admin]\ntokens_file = {:?}\nstate_file = \"\"\n",
            tokens.to_str().unwrap()
        ),
    )
    .unwrap();
    let state = dir.join("master.json");
    let m = list_master(&[
        "--config",
        cfg.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    let http = m.addr("http", "tcp");

    // A server that does not show the token stays out.
    let (_plain, p) = sims(&[], 1);
    let (status, body) = register(http, &p[0].to_string());
    assert_eq!(status, 202, "{body}");
    let plain_token = body["token"].as_str().unwrap().to_string();
    assert!(plain_token.starts_with("lobby-") && body["expires_at"].as_i64().unwrap() > 0);
    // The same again: 409; a host name, a bad gamedir: 400.
    assert_eq!(register(http, &p[0].to_string()).0, 409);
    assert_eq!(register(http, "localhost:27015").0, 400);
    let (s, _) = post(
        http,
        "/api/servers/register",
        r#"{"address": "127.0.0.1:1", "gamedir": "a/b", "contact": "x"}"#,
        None,
    );
    assert_eq!(s, 400);

    // A server showing it in its host name is admitted and published.
    let (s, b) = register(http, &dead_addr().to_string());
    assert_eq!(s, 202, "{b}");
    let token = b["token"].as_str().unwrap().to_string();
    let name = format!("Proven server {token}");
    // The registered address is that server's: start it on the port asked for.
    let port = b["address"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let (_proven, q) = sims(&["--hostname", &name, "--base-port", &port], 1);
    let want = set(&[format!("ip {}", q[0])]);
    entries_until(http, "valve", &want, Duration::from_secs(30), &m);
    assert!(
        !entries(http, "valve").contains(&format!("ip {}", p[0])),
        "no token, no listing"
    );
    let (_, api) = http_get(http, "/api/servers");
    assert!(
        api.contains(&q[0].to_string()) && api.contains("registered"),
        "{api}"
    );
    assert!(
        !api.contains("secret-contact"),
        "the contact is never published"
    );

    // The admin sees both, with contacts, and may approve the other without proof.
    let admin = Some("0123456789abcdef0123456789");
    let r = http_raw(http, "GET /api/admin/registrations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer 0123456789abcdef0123456789\r\nConnection: close\r\n\r\n");
    assert!(
        r.contains(&plain_token) && r.contains("secret-contact"),
        "{r}"
    );
    assert!(
        r.contains("in neither") || r.contains("not in its host name"),
        "checked: {r}"
    );
    let (s, b) = post(
        http,
        "/api/admin/registrations",
        &format!(r#"{{"entry": "{plain_token}"}}"#),
        admin,
    );
    assert_eq!(s, 200, "{b}");
    let both = set(&[format!("ip {}", q[0]), format!("ip {}", p[0])]);
    entries_until(http, "valve", &both, Duration::from_secs(15), &m);

    // A ban removes them and refuses new registrations from the network.
    let (s, b) = post(http, "/api/admin/bans", r#"{"entry": "127.0.0.1"}"#, admin);
    assert_eq!(s, 200, "{b}");
    entries_until(http, "valve", &BTreeSet::new(), Duration::from_secs(10), &m);
    assert_eq!(register(http, &p[0].to_string()).0, 403);
    drop(m);

    // Off by default: 404.
    let plain = Lobby::start(
        &["master", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        2,
    );
    assert_eq!(
        register(plain.addr("http", "tcp"), "192.0.2.1:27015").0,
        404
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_handler_running_past_request_timeout_is_answered_408() {
    // The details of a listed server that answers nothing take the queries' 3 s;
    // with [http] request_timeout = 1 the client gets its 408 after 1 s, counted.
    let dir = tmp("request-timeout");
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        "[http]\nrequest_timeout = 1\nmax_connections_per_ip = 16\n",
    )
    .unwrap();
    let m = list_master(&["--config", cfg.to_str().unwrap()]);
    let http = m.addr("http", "tcp");
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    silent
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let info = "\\players\\0\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\0\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";
    assert!(register_server(&silent, m.addr("master", "udp"), info));
    let me = silent.local_addr().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !http_get(http, "/api/servers").1.contains(&me.to_string()) {
        assert!(Instant::now() < deadline, "never listed\n{}", m.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = Instant::now();
    let (status, body) = http_get(http, &format!("/api/servers/{me}/details"));
    assert_eq!(status, 408, "{body}");
    assert!(
        t.elapsed() >= Duration::from_millis(900) && t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
    let (_, stats) = http_get(http, "/stats");
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(v["http"]["request_timeouts"], 1, "{stats}");
    // Each 408 drops its query mid-way: its place among the eight asked at once is
    // given back (before 2026-12 it was kept, and these eight got 503s from the
    // second on).
    let path = format!("/api/servers/{me}/details");
    let codes: Vec<u16> = std::thread::scope(|s| {
        let asks: Vec<_> = (0..8)
            .map(|_| s.spawn(|| http_get(http, &path).0))
            .collect();
        asks.into_iter().map(|a| a.join().unwrap()).collect()
    });
    assert_eq!(codes, vec![408; 8]);
}

#[test]
fn registrations_survive_a_sigkill_right_after_they_change() {
    // The state file is written every save_interval (an hour here) and at once when a
    // registration is asked for or admitted: a master killed with SIGKILL a moment
    // later loses neither. Before 2026-12 both waited for the interval (the soak's
    // SIGKILLs lost the registrations of the last 30 s).
    let dir = tmp("register-kill");
    let cfg = dir.join("lobby.toml");
    std::fs::write(
        &cfg,
        "[master]\nregistration = true\nregistration_private = true\nsave_interval = 3600\n",
    )
    .unwrap();
    let state = dir.join("master.json");
    let args = [
        "--config",
        cfg.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    let m = list_master(&args);
    let http = m.addr("http", "tcp");
    let (pending_addr, proven_addr) = (dead_addr(), dead_addr());
    let (s, b) = register(http, &pending_addr.to_string());
    assert_eq!(s, 202, "{b}");
    let (s, b) = register(http, &proven_addr.to_string());
    assert_eq!(s, 202, "{b}");
    let name = format!("Proven server {}", b["token"].as_str().unwrap());
    let port = proven_addr.port().to_string();
    let (proven, q) = sims(&["--hostname", &name, "--base-port", &port], 1);
    let want = set(&[format!("ip {}", q[0])]);
    entries_until(http, "valve", &want, Duration::from_secs(30), &m);
    // The server goes (it could otherwise prove itself again after the restart).
    drop(proven);
    std::thread::sleep(Duration::from_millis(300));
    m.signal(libc::SIGKILL);
    drop(m);

    let m = list_master(&args);
    let http = m.addr("http", "tcp");
    let (s, b) = register(http, &proven_addr.to_string());
    assert_eq!(s, 409, "{b}");
    assert!(
        b["error"]
            .as_str()
            .unwrap()
            .contains("is listed for valve already"),
        "still admitted: {b}"
    );
    let (s, b) = register(http, &pending_addr.to_string());
    assert_eq!(s, 409, "{b}");
    assert!(
        b["error"].as_str().unwrap().contains("is pending until"),
        "still pending: {b}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
