//! Switching a Xash3D server list between FWGS/server-list's `scripts/probe.py` and
//! lobby, either way (issue 29), over real files and the real binary: each case's
//! sources are in `testdata/xash3d/server-list-probe-py/<case>/`, and what probe.py
//! wrote for the same sources (run by that directory's `generate.py`, against
//! `lobby sim` servers) is committed beside them as the expected data, addresses as
//! placeholders the tests fill with their own servers.
//!
//! - `bad-entries`: one bad entry of each kind; probe and the live master publish
//!   the rest, name what they skipped, and `--strict` refuses;
//! - `no-port`: an address without a port (probe.py's batch of it fails whole);
//! - `export`: probe.py's own `state.json`, exported and started from.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/xash3d/server-list-probe-py")
        .join(case)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-switch-{name}-{}", std::process::id()));
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

/// Placeholders (`@X0@`, `@G0@`, `@D0@`) and the addresses they stand for.
type Real = Vec<(String, String)>;

fn subst(text: &str, real: &Real) -> String {
    real.iter()
        .fold(text.to_string(), |t, (k, v)| t.replace(k, v))
}

/// The case's sources (and state) with real addresses, in a fresh directory.
fn materialise(case: &str, real: &Real) -> PathBuf {
    let dir = tmp(case);
    let from = case_dir(case);
    std::fs::create_dir_all(dir.join("servers")).unwrap();
    for f in std::fs::read_dir(from.join("servers")).unwrap().flatten() {
        let text = std::fs::read_to_string(f.path()).unwrap();
        std::fs::write(dir.join("servers").join(f.file_name()), subst(&text, real)).unwrap();
    }
    dir
}

/// probe.py's output `file` for the case, with real addresses.
fn expected(case: &str, file: &str, real: &Real) -> String {
    let text = std::fs::read_to_string(case_dir(case).join("expected").join(file)).unwrap();
    subst(&text, real)
}

fn lines(body: &str) -> BTreeSet<String> {
    engine_entries(body).into_iter().collect()
}

fn rows(gamedirs: &str) -> Vec<String> {
    gamedirs
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(String::from)
        .collect()
}

fn lobby(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(args)
        .output()
        .unwrap()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

fn entries(http: SocketAddr, gamedir: &str) -> BTreeSet<String> {
    let (status, body) = http_get(http, &format!("/v1/servers/{gamedir}"));
    assert_eq!(status, 200, "{body}");
    lines(&body)
}

fn entries_until(http: SocketAddr, gamedir: &str, want: &BTreeSet<String>, m: &Lobby) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = entries(http, gamedir);
        if &got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{gamedir}: listed {got:?}, want {want:?}\n{}",
            m.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn bad_entries_are_skipped_and_named_and_everything_else_is_published() {
    let (_x, x) = sims(&[], 3);
    let (_g, g) = sims(&["--protocol", "48"], 2);
    let d0 = dead_addr();
    let real: Real = vec![
        ("@X0@".into(), x[0].to_string()),
        ("@X1@".into(), x[1].to_string()),
        ("@X2@".into(), x[2].to_string()),
        ("@G0@".into(), g[0].to_string()),
        ("@G1@".into(), g[1].to_string()),
        ("@D0@".into(), d0.to_string()),
    ];
    let dir = materialise("bad-entries", &real);
    let (sources, out) = (dir.join("servers"), dir.join("out"));
    let (s, o) = (sources.to_str().unwrap(), out.to_str().unwrap());

    // CI's check: any warning fails, and nothing is written.
    let r = lobby(&["master", "probe", "--sources", s, "--output", o, "--strict"]);
    assert_eq!(r.status.code(), Some(2), "{r:?}");
    assert!(!out.join("v1").exists(), "--strict wrote a tree");

    let r = lobby(&[
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
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "entries were skipped: {err}");
    for want in [
        "valve.toml:10: warning: key `comment` is unknown",
        "valve.toml:14: warning: key `protocol`: \"48\" is a string; read as 48",
        "valve.toml:19: warning: key `force`: 1 is not true or false; read as true",
        "valve.toml:24: entry skipped: key `protocol`: 47 is neither 49",
        "valve.toml:27: entry skipped: no `address`",
    ] {
        assert!(err.contains(want), "{want:?} not in:\n{err}");
    }
    let summary: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        (summary["skipped"].as_u64(), summary["warnings"].as_u64()),
        (Some(2), Some(3))
    );

    // What probe.py published for the same files, less the protocol-47 entry it
    // publishes as `ip` (FWGS's pull-request check marks it "Unknown protocol").
    let case = "bad-entries";
    let mut want_valve = lines(&expected(case, "v1/servers/valve", &real));
    assert!(want_valve.remove(&format!("ip {}", x[2])));
    assert_eq!(lines(&read(&out, "v1/servers/valve")), want_valve);
    assert_eq!(
        lines(&read(&out, "v1/servers/cstrike")),
        lines(&expected(case, "v1/servers/cstrike", &real))
    );
    // The duplicate: probe.py writes its line twice and counts the entries (the one
    // without an address too); lobby writes and counts each address once.
    let py_valve = expected(case, "v1/servers/valve", &real);
    assert_eq!(
        py_valve.matches(&format!("ip {}\n", x[0])).count(),
        2,
        "{py_valve}"
    );
    let valve = read(&out, "v1/servers/valve");
    assert_eq!(valve.matches(&format!("ip {}\n", x[0])).count(), 1);
    assert_eq!(
        rows(&expected(case, "v1/gamedirs", &real)),
        ["cstrike 1 1", "valve 7 6"]
    );
    assert_eq!(
        rows(&read(&out, "v1/gamedirs")),
        ["cstrike 1 1", "valve 4 4"]
    );

    // state.json: probe.py's keys; the ping a float of ms, as probe.py keeps it.
    let py: Value = serde_json::from_str(&expected(case, "state.json", &real)).unwrap();
    let ours: Value = serde_json::from_str(&read(&out, "state.json")).unwrap();
    let keys = |v: &Value| -> BTreeSet<String> {
        v["valve"].as_object().unwrap().keys().cloned().collect()
    };
    let mut py_keys = keys(&py);
    py_keys.remove(&x[2].to_string());
    assert_eq!(keys(&ours), py_keys);
    for v in [&py, &ours] {
        let e = &v["valve"][x[0].to_string()];
        assert!(e["last_ping_ms"].is_f64(), "{e}");
        assert!(
            e["last_seen"].is_string() && e["last_attempt"].is_string(),
            "{e}"
        );
    }

    // The live master: the same files, the same lines served at first start, and
    // the skipped entries named in its log.
    let m = list_master(&["--sources", s]);
    let http = m.addr("http", "tcp");
    entries_until(http, "valve", &want_valve, &m);
    entries_until(http, "cstrike", &set(&[format!("gs {}", g[1])]), &m);
    let log = m.stderr();
    assert!(log.contains("valve.toml:24: entry skipped"), "{log}");
    assert!(
        log.contains("valve.toml:10: warning: key `comment`"),
        "{log}"
    );
    drop(m);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_address_without_a_port_is_skipped_alone() {
    let (_x, x) = sims(&[], 1);
    let real: Real = vec![("@X0@".into(), x[0].to_string())];
    let dir = materialise("no-port", &real);
    let (sources, out) = (dir.join("servers"), dir.join("out"));
    let r = lobby(&[
        "master",
        "probe",
        "--sources",
        sources.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--timeout",
        "0.5",
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "valve.toml:8: entry skipped: key `address`: address \"127.0.0.1\": expected HOST:PORT"
        ),
        "{err}"
    );
    assert_eq!(
        lines(&read(&out, "v1/servers/valve")),
        set(&[format!("ip {}", x[0])])
    );
    assert_eq!(rows(&read(&out, "v1/gamedirs")), ["valve 1 1"]);
    // probe.py handed the portless address to xash3d-query with the good one, which
    // refused the whole batch: nothing was published.
    assert!(lines(&expected("no-port", "v1/servers/valve", &real)).is_empty());
    assert_eq!(
        rows(&expected("no-port", "v1/gamedirs", &real)),
        ["valve 2 0"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The export case: its sources, and probe.py's state.json with the players samples
/// moved by whole weeks to the present (so each falls on the same UTC hour and
/// weekday, within the heat maps' windows, as when probe.py ran).
fn export_case() -> (PathBuf, Real) {
    let real: Real = (0..6)
        .map(|i| (format!("@D{i}@"), dead_addr().to_string()))
        .collect();
    let dir = materialise("export", &real);
    let generated: i64 = std::fs::read_to_string(case_dir("export").join("generated-at"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let shift = (now - generated).div_euclid(7 * 86_400) * 7 * 86_400;
    let text = subst(
        &std::fs::read_to_string(case_dir("export").join("state.json")).unwrap(),
        &real,
    );
    let mut state: Value = serde_json::from_str(&text).unwrap();
    for list in state["samples"].as_object_mut().unwrap().values_mut() {
        for s in list.as_array_mut().unwrap() {
            s[0] = (s[0].as_i64().unwrap() + shift).into();
        }
    }
    std::fs::write(dir.join("state.json"), state.to_string()).unwrap();
    (dir, real)
}

fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg ")
        .skip(1)
        .map(|s| s.split("</svg>").next().unwrap())
        .collect()
}

#[test]
fn export_publishes_what_probe_py_publishes_from_its_state() {
    let (dir, real) = export_case();
    let (state, sources, out) = (dir.join("state.json"), dir.join("servers"), dir.join("out"));
    let (st, s, o) = (
        state.to_str().unwrap(),
        sources.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let grace = ["--grace-hours", "87600"];

    // probe.py's state keeps no protocol and no force: without the sources it is a
    // clear error, and nothing is written.
    let mut args = vec!["master", "export", "--state", st, "--output", o];
    args.extend_from_slice(&grace);
    let r = lobby(&args);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains("probe.py's state.json") && err.contains("--sources"),
        "{err}"
    );
    assert!(!out.join("v1").exists());

    args.extend_from_slice(&["--sources", s, "--json"]);
    let r = lobby(&args);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let summary: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(summary["published"], 4, "{summary}");
    for f in ["v1/servers/valve", "v1/servers/cstrike"] {
        assert_eq!(
            lines(&read(&out, f)),
            lines(&expected("export", f, &real)),
            "{f}"
        );
    }
    assert_eq!(
        rows(&read(&out, "v1/gamedirs")),
        rows(&expected("export", "v1/gamedirs", &real))
    );
    // The heat maps as probe.py draws them, numbers at its precision.
    let (ours, py) = (
        read(&out, "index.html"),
        expected("export", "index.html", &real),
    );
    assert_eq!(svgs(&ours), svgs(&py));
    assert_eq!(svgs(&ours).len(), 2);
    let st_out: Value = serde_json::from_str(&read(&out, "state.json")).unwrap();
    assert_eq!(st_out["valve"][&real[0].1]["last_ping_ms"], 0.203);
    assert_eq!(
        st_out["valve"][&real[0].1]["last_seen"],
        "2026-11-01T12:00:00+00:00"
    );

    // Inputs that cannot be used are errors, never an empty tree.
    let bad = dir.join("bad.json");
    for (text, says) in [
        ("[1, 2]", "not a JSON object"),
        ("{\"valve\": 3}", "\"valve\""),
        (
            "{\"version\": 1, \"servers\": [], \"bans\": []}",
            "no gamedir",
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        let out2 = dir.join("out2");
        let r = lobby(&[
            "master",
            "export",
            "--state",
            bad.to_str().unwrap(),
            "--output",
            out2.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
        assert!(!out2.join("v1").exists(), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_live_master_starts_from_probe_py_state_and_keeps_its_times() {
    let (dir, real) = export_case();
    let state = dir.join("master.json");
    std::fs::copy(dir.join("state.json"), &state).unwrap();
    let m = list_master(&[
        "--sources",
        dir.join("servers").to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--grace",
        "315360000",
    ]);
    let http = m.addr("http", "tcp");
    // What probe.py published from this state, at once: nothing seen within the
    // grace window disappears at the switch.
    let want = lines(&expected("export", "v1/servers/valve", &real));
    assert_eq!(want.len(), 3);
    assert_eq!(entries(http, "valve"), want);
    assert_eq!(
        entries(http, "cstrike"),
        lines(&expected("export", "v1/servers/cstrike", &real))
    );
    assert!(m.stderr().contains("probe.py's"), "{}", m.stderr());
    m.signal(libc::SIGTERM);
    m.wait_exit(Duration::from_secs(10));
    // Saved in the master's format, the last answers as probe.py had them.
    let saved: Value = serde_json::from_str(&read(&dir, "master.json")).unwrap();
    assert_eq!(saved["version"], 1, "{saved}");
    let d0 = &saved["list"]["valve"][&real[0].1];
    assert_eq!(d0["last_seen"], "2026-11-01T12:00:00+00:00", "{saved}");
    assert_eq!(d0["last_ping_ms"], 0.203, "{saved}");
    let _ = std::fs::remove_dir_all(&dir);
}
