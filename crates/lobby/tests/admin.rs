//! The admin API and `lobby admin` (fgms's admin CLI): the real binary serving a
//! relay on 127.0.0.1 port 0, administered through the real client binary, with
//! real FlightGear datagrams showing that each change takes effect.

mod common;

use common::*;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("lobby-admin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lobby(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(args)
        .env_remove("LOBBY_ADMIN_TOKEN")
        .env_remove("LOBBY_ADMIN_URL")
        .output()
        .unwrap()
}

/// A tokens file with one admin, made by `lobby admin new-token`.
fn tokens(dir: &Dir, name: &str) -> PathBuf {
    let out = lobby(&["admin", "new-token", name]);
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields.len(), 2, "{line:?}");
    assert_eq!(fields[0], name);
    assert!(fields[1].len() >= 40, "{line:?}");
    let p = dir.path("tokens");
    std::fs::write(&p, format!("# admins\n{line}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

/// `lobby admin --url URL --token-file FILE ARGS...`: (exit code, stdout, stderr).
fn admin(http: SocketAddr, token_file: &Path, args: &[&str]) -> (i32, String, String) {
    let url = format!("http://{http}");
    let mut all = vec![
        "admin",
        "--url",
        &url,
        "--token-file",
        token_file.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = lobby(&all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn admin_json(http: SocketAddr, token_file: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (code, out, err) = admin(http, token_file, &a);
    assert_eq!(code, 0, "lobby admin {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// Waits until the process has applied `n` reloads (`show uptime`).
fn wait_reloads(http: SocketAddr, token_file: &Path, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin_json(http, token_file, &["show", "uptime"])["reloads"] != n {
        assert!(Instant::now() < deadline, "reload {n} never happened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start(config: &Path) -> Lobby {
    Lobby::start(
        &[
            "relay",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "off",
            "--http",
            "127.0.0.1:0",
        ],
        2,
    )
}

fn entries(list: &Value) -> Vec<(String, String)> {
    list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["entry"].as_str().unwrap().to_string(),
                e["source"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn relay_stat(http: SocketAddr, key: &str) -> u64 {
    let (_, s) = http_get(http, "/stats");
    let v: Value = serde_json::from_str(&s).unwrap();
    v["relay"][key].as_u64().unwrap_or(0)
}

/// Sends `d` from `from` until `pred` holds (bounded).
fn send_until(
    from: &std::net::UdpSocket,
    d: &[u8],
    to: SocketAddr,
    what: &str,
    pred: impl Fn() -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pred() {
        assert!(Instant::now() < deadline, "never: {what}");
        from.send_to(d, to).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn run_time_changes_apply_at_once_survive_a_restart_and_merge_with_a_reload() {
    let dir = Dir::new("changes");
    let token_file = tokens(&dir, "gordon");
    let config = dir.path("lobby.toml");
    let state = dir.path("admin.json");
    let write_config = |blacklist: &str| {
        std::fs::write(
            &config,
            format!(
                "[relay]\nblacklist = [{blacklist}]\ntracker_secret = \"relay-secret-xyz\"\n[admin]\ntokens_file = {:?}\nstate_file = {:?}\n",
                token_file.to_str().unwrap(),
                state.to_str().unwrap()
            ),
        )
        .unwrap();
    };
    write_config("\"192.0.2.1\"");
    let l = start(&config);
    let (udp, http) = (l.addr("relay", "udp"), l.addr("http", "tcp"));

    // Two pilots in range of each other, the second one on 127.0.0.2.
    let a = client_on("127.0.0.1");
    let b = client_on("127.0.0.2");
    let pa = pos("ADMIN-A", BIKF, 100);
    let pb = pos("ADMIN-B", north(BIKF, 5.0), 100);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        a.send_to(&pa, udp).unwrap();
        b.send_to(&pb, udp).unwrap();
        let got = drain(&a, Duration::from_millis(200));
        if got.iter().any(|d| callsign_of(d) == "ADMIN-B") {
            break;
        }
        assert!(Instant::now() < deadline, "A never heard B");
    }

    // Shows, as fgms's CLI does.
    let v = admin_json(http, &token_file, &["show", "version"]);
    assert_eq!(v["fgmp_protocol"], "1.1");
    assert_eq!(v["tracker_protocol"], "V20151207");
    let users = admin_json(http, &token_file, &["show", "users"]);
    let b_user = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["callsign"] == "ADMIN-B")
        .expect("ADMIN-B in users")
        .clone();
    assert_eq!(b_user["address"], b.local_addr().unwrap().to_string());
    assert_eq!(b_user["local"], true);
    let bl = admin_json(http, &token_file, &["show", "blacklist"]);
    assert_eq!(entries(&bl), vec![("192.0.2.1".into(), "file".into())]);
    let (code, text, _) = admin(http, &token_file, &["show", "users"]);
    assert_eq!(code, 0);
    assert!(text.contains("ADMIN-B@LOCAL: 127.0.0.2:"), "{text}");

    // Blacklist B at run time: its datagrams are dropped from then on.
    let ch = admin_json(http, &token_file, &["blacklist", "add", "127.0.0.2"]);
    assert_eq!(ch["changed"], true);
    assert_eq!(ch["by"], "gordon");
    assert_eq!(
        ch["in_force"],
        serde_json::json!(["192.0.2.1", "127.0.0.2"])
    );
    let before = relay_stat(http, "blacklisted");
    send_until(&b, &pb, udp, "B's datagrams counted as blacklisted", || {
        relay_stat(http, "blacklisted") > before
    });
    drain(&a, Duration::from_millis(400));
    for _ in 0..5 {
        b.send_to(&pb, udp).unwrap();
    }
    assert!(
        drain(&a, Duration::from_millis(500))
            .iter()
            .all(|d| callsign_of(d) != "ADMIN-B"),
        "a blacklisted pilot was still forwarded"
    );

    // A crossfeed added at run time gets copies at once.
    let feed = client_on("127.0.0.1");
    let feed_addr = feed.local_addr().unwrap().to_string();
    let ch = admin_json(http, &token_file, &["crossfeed", "add", &feed_addr]);
    assert_eq!(ch["in_force"], serde_json::json!([feed_addr]));
    send_until_seen(&a, &pa, udp, &feed, "ADMIN-A");
    let cf = admin_json(http, &token_file, &["show", "crossfeeds"]);
    assert_eq!(entries(&cf), vec![(feed_addr.clone(), "admin".into())]);
    assert_eq!(cf["entries"][0]["by"], "gordon");
    assert_eq!(cf["entries"][0]["link"]["address"], feed_addr.as_str());

    // The file's entry deleted at run time.
    // Written another way, it is the same entry.
    let ch = admin_json(http, &token_file, &["blacklist", "delete", "192.0.2.1/32"]);
    assert_eq!(ch["entry"], "192.0.2.1");
    assert_eq!(ch["changed"], true);
    assert_eq!(ch["in_force"], serde_json::json!(["127.0.0.2"]));
    // A CIDR goes through the path of a delete.
    admin_json(http, &token_file, &["blacklist", "add", "203.0.113.0/24"]);
    let ch = admin_json(
        http,
        &token_file,
        &["blacklist", "delete", "203.0.113.0/24"],
    );
    assert_eq!(ch["in_force"], serde_json::json!(["127.0.0.2"]));
    // A bad entry is refused with the reason, and nothing changes.
    let (code, _, err) = admin(http, &token_file, &["relay", "add", "no-port-here"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("400"), "{err}");

    // Who did what is in the log.
    let log = l.stderr();
    assert!(
        log.contains("admin change applied")
            && log.contains("admin=\"gordon\"")
            && log.contains("peer=127.0.0.1:"),
        "{log}"
    );
    assert!(
        std::fs::read_to_string(&state)
            .unwrap()
            .contains("127.0.0.2"),
        "the state file holds the change"
    );

    // A restart keeps every run-time change.
    assert!(l.stop().success());
    let l = start(&config);
    let (udp, http) = (l.addr("relay", "udp"), l.addr("http", "tcp"));
    let bl = admin_json(http, &token_file, &["show", "blacklist"]);
    assert_eq!(entries(&bl), vec![("127.0.0.2".into(), "admin".into())]);
    assert_eq!(bl["deleted"][0]["entry"], "192.0.2.1");
    let before = relay_stat(http, "blacklisted");
    send_until(
        &b,
        &pb,
        udp,
        "B still blacklisted after the restart",
        || relay_stat(http, "blacklisted") > before,
    );
    send_until_seen(&a, &pa, udp, &feed, "ADMIN-A");

    // SIGHUP with an edited file: the file's new entry comes in, the run-time
    // deletion of 192.0.2.1 still holds although the file lists it, the run-time
    // addition stays.
    write_config("\"192.0.2.1\", \"198.51.100.0/24\"");
    l.signal(libc::SIGHUP);
    wait_reloads(http, &token_file, 1);
    let bl = admin_json(http, &token_file, &["show", "blacklist"]);
    assert_eq!(
        entries(&bl),
        vec![
            ("198.51.100.0/24".into(), "file".into()),
            ("127.0.0.2".into(), "admin".into())
        ]
    );
    let settings = admin_json(http, &token_file, &["show", "settings"]);
    assert_eq!(
        settings["relay"]["blacklist"],
        serde_json::json!(["198.51.100.0/24", "127.0.0.2"])
    );
    assert!(
        !settings.to_string().contains(
            &std::fs::read_to_string(&token_file)
                .unwrap()
                .split_whitespace()
                .last()
                .unwrap()
                .to_string()
        ),
        "a token in the settings"
    );
    assert!(
        !settings.to_string().contains("relay-secret-xyz"),
        "the tracker secret in the settings: {settings}"
    );
    assert_eq!(settings["relay"]["tracker_secret"], "***");
    // Deleting what is not in force is refused, and nothing is recorded.
    let (code, _, err) = admin(http, &token_file, &["blacklist", "delete", "192.0.2.99"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("404") && err.contains("not in the blacklist"),
        "{err}"
    );

    // The OpenAPI document describes what is served.
    let (_, doc) = http_get(http, "/api/openapi.json");
    let doc: Value = serde_json::from_str(&doc).unwrap();
    for p in ["/api/admin/{name}", "/api/admin/{name}/{entry}"] {
        assert!(
            doc["paths"][p].is_object(),
            "{p} not in the OpenAPI document"
        );
    }
    let fields = |schema: &str, v: &Value| {
        let mut want: Vec<&String> = doc["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        let mut got: Vec<&String> = v.as_object().unwrap().keys().collect();
        want.sort();
        got.sort();
        assert_eq!(want, got, "{schema}");
    };
    fields("ListBody", &bl);
    fields("ListEntry", &bl["entries"][0]);
    fields(
        "UptimeBody",
        &admin_json(http, &token_file, &["show", "uptime"]),
    );
    fields(
        "TrackerBody",
        &admin_json(http, &token_file, &["show", "tracker"]),
    );

    // Counted, and exported.
    let stats = admin_json(http, &token_file, &["show", "stats"]);
    assert!(stats["admin"]["requests"].as_u64().unwrap() >= 4);
    let (_, metrics) = http_get(http, "/metrics");
    assert!(metrics.contains("lobby_admin_requests_total"), "{metrics}");

    // The run-time changes apply while the admin API is on: a reload that turns it
    // off leaves the file alone in force (B is forwarded again), one that turns it
    // back on brings them back from the state file.
    std::fs::write(&config, "[relay]\nblacklist = [\"192.0.2.1\"]\n").unwrap();
    l.signal(libc::SIGHUP);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        a.send_to(&pa, udp).unwrap();
        b.send_to(&pb, udp).unwrap();
        if drain(&a, Duration::from_millis(200))
            .iter()
            .any(|d| callsign_of(d) == "ADMIN-B")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "B never forwarded with the API off"
        );
    }
    let (code, _, err) = admin(http, &token_file, &["show", "version"]);
    assert_eq!(code, 1, "{err}");
    write_config("\"192.0.2.1\"");
    l.signal(libc::SIGHUP);
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin(http, &token_file, &["show", "version"]).0 != 0 {
        assert!(Instant::now() < deadline, "the API never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
    let bl = admin_json(http, &token_file, &["show", "blacklist"]);
    assert_eq!(entries(&bl), vec![("127.0.0.2".into(), "admin".into())]);
    assert!(l.stop().success());
}

#[test]
fn strangers_are_refused_and_a_change_that_cannot_be_saved_is_not_made() {
    let dir = Dir::new("refusals");
    let token_file = tokens(&dir, "alyx");
    let wrong = dir.path("wrong");
    std::fs::write(&wrong, "alyx wrongwrongwrongwrongwrong\n").unwrap();
    // The state file's directory does not exist: every save fails.
    let config = dir.path("lobby.toml");
    std::fs::write(
        &config,
        format!(
            "[admin]\ntokens_file = {:?}\nstate_file = {:?}\n",
            token_file.to_str().unwrap(),
            dir.path("missing/admin.json").to_str().unwrap()
        ),
    )
    .unwrap();
    let l = start(&config);
    let http = l.addr("http", "tcp");

    let (code, _, err) = admin(http, &wrong, &["show", "stats"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("401"), "{err}");
    let (status, body) = http_get(http, "/api/admin/stats");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("no bearer token"), "{body}");

    let (code, _, err) = admin(http, &token_file, &["blacklist", "add", "192.0.2.7"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot save"), "{err}");
    let bl = admin_json(http, &token_file, &["show", "blacklist"]);
    assert!(
        entries(&bl).is_empty(),
        "an unsaved change was applied: {bl}"
    );
    let stats = admin_json(http, &token_file, &["show", "stats"]);
    assert_eq!(stats["admin"]["refused_token"], 2);
    assert_eq!(stats["admin"]["save_failures"], 1);
    assert_eq!(stats["admin"]["changes"], 0);
    let log = l.stderr();
    assert!(log.contains("reason=\"unknown token\""), "{log}");

    // Nothing listens: exit 3; no token at all: a usage error.
    drop(l);
    let (code, _, _) = admin(http, &token_file, &["show", "version"]);
    assert_eq!(code, 3);
    let out = lobby(&[
        "admin",
        "--url",
        &format!("http://{http}"),
        "show",
        "version",
    ]);
    assert_eq!(out.status.code(), Some(2));

    // Only the allowed networks may ask (here none that loopback is in).
    std::fs::write(
        &config,
        format!(
            "[admin]\ntokens_file = {:?}\nallow = [\"192.0.2.0/24\"]\nstate_file = \"\"\n",
            token_file.to_str().unwrap()
        ),
    )
    .unwrap();
    let l = start(&config);
    let http = l.addr("http", "tcp");
    let (code, _, err) = admin(http, &token_file, &["show", "version"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("403"), "{err}");
    drop(l);

    // Off unless configured.
    std::fs::write(&config, "[relay]\nname = \"plain\"\n").unwrap();
    let l = start(&config);
    let http = l.addr("http", "tcp");
    let (code, _, err) = admin(http, &token_file, &["show", "version"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("404") && err.contains("admin API is off"),
        "{err}"
    );
}

#[test]
fn a_bad_tokens_file_stops_the_start_with_the_line_named() {
    let dir = Dir::new("badtokens");
    let t = dir.path("tokens");
    std::fs::write(&t, "gordon short\n").unwrap();
    let config = dir.path("lobby.toml");
    std::fs::write(
        &config,
        format!("[admin]\ntokens_file = {:?}\n", t.to_str().unwrap()),
    )
    .unwrap();
    let out = lobby(&[
        "relay",
        "--config",
        config.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--telnet",
        "off",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tokens:1: the token of \"gordon\" must be 16-256"),
        "{err}"
    );
}

#[test]
fn without_a_state_file_changes_last_until_the_process_stops() {
    let dir = Dir::new("nostate");
    let token_file = tokens(&dir, "gordon");
    let config = dir.path("lobby.toml");
    std::fs::write(
        &config,
        format!(
            "[admin]\ntokens_file = {:?}\nstate_file = \"\"\nmax_changes = 2\n",
            token_file.to_str().unwrap()
        ),
    )
    .unwrap();
    let l = start(&config);
    let http = l.addr("http", "tcp");
    admin_json(http, &token_file, &["relay", "add", "MP9.Example.ORG:5000"]);
    // At most max_changes are held; changing a held entry again is no new one.
    admin_json(http, &token_file, &["blacklist", "add", "192.0.2.9"]);
    admin_json(http, &token_file, &["blacklist", "delete", "192.0.2.9"]);
    let (code, _, err) = admin(http, &token_file, &["blacklist", "add", "192.0.2.10"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("409") && err.contains("max_changes"), "{err}");
    admin_json(http, &token_file, &["blacklist", "add", "192.0.2.9"]);
    // Reloads keep them...
    l.signal(libc::SIGHUP);
    wait_reloads(http, &token_file, 1);
    let relays = admin_json(http, &token_file, &["show", "relays"]);
    assert_eq!(
        entries(&relays),
        vec![("mp9.example.org:5000".into(), "admin".into())]
    );
    // ...a restart does not.
    assert!(l.stop().success());
    let l = start(&config);
    let relays = admin_json(l.addr("http", "tcp"), &token_file, &["show", "relays"]);
    assert!(entries(&relays).is_empty(), "{relays}");
}

#[test]
fn refused_admin_requests_reach_the_log_at_warn_at_most_once_a_second() {
    let dir = Dir::new("refusal-log");
    let token_file = tokens(&dir, "alyx");
    let config = dir.path("lobby.toml");
    std::fs::write(
        &config,
        format!(
            "[admin]\ntokens_file = {:?}\n",
            token_file.to_str().unwrap()
        ),
    )
    .unwrap();
    let l = start(&config);
    let http = l.addr("http", "tcp");
    let warned = || {
        l.stderr()
            .lines()
            .filter(|line| line.contains("WARN") && line.contains("admin request refused"))
            .count()
    };
    let t = Instant::now();
    for _ in 0..30 {
        assert_eq!(http_get(http, "/api/admin/stats").0, 401);
    }
    // 30 refusals within a second or two (crossing at most one second's turn).
    let secs = t.elapsed().as_secs() as usize;
    assert!(
        (1..=secs + 2).contains(&warned()),
        "{} warnings in {secs} s:\n{}",
        warned(),
        l.stderr()
    );
    let stats = admin_json(http, &token_file, &["show", "stats"]);
    assert_eq!(stats["admin"]["refused_token"], 30, "every one counted");
    std::thread::sleep(Duration::from_millis(1100));
    let before = warned();
    http_get(http, "/api/admin/stats");
    assert!(
        poll_until(Duration::from_secs(2), || warned() == before + 1),
        "a second later, the next one is logged at warn"
    );
}
