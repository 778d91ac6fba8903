//! The systemd units and the example configuration in `contrib/systemd/`: systemd
//! accepts the units without a warning, each unit's command line starts (and reloads,
//! and stops) with the example `lobby.toml`, only the port-53 units keep a capability,
//! and every system call lobby makes is inside the units' `SystemCallFilter=`.
//!
//! The tests that need `systemd-analyze` or `strace` skip with a message when the tool
//! is absent; `scripts/ci-deps` installs both, so CI always runs them.

mod common;

use common::Lobby;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const UNITS: [&str; 5] = [
    "lobby-relay.service",
    "lobby-master.service",
    "lobby-dns.service",
    "lobby-tracker.service",
    "lobby-up.service",
];

/// What every unit carries (the sandbox, reload, restart, logs), as `Key=value` lines.
const EVERY_UNIT: [&str; 23] = [
    "DynamicUser=yes",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
    "RestrictNamespaces=yes",
    "RestrictRealtime=yes",
    "LockPersonality=yes",
    "MemoryDenyWriteExecute=yes",
    "SystemCallFilter=@system-service",
    "SystemCallFilter=~@privileged",
    "SystemCallArchitectures=native",
    "ExecReload=/bin/kill -HUP $MAINPID",
    "Restart=on-failure",
    "LimitNOFILE=65536",
    "Environment=NO_COLOR=1",
    "WantedBy=multi-user.target",
];

const BINARY: &str = "/usr/bin/lobby";
const CONFIG: &str = "/etc/lobby/lobby.toml";

fn contrib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/systemd")
}

fn read(name: &str) -> String {
    let p = contrib().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-systemd-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `tool` can be run; prints why a test is skipped when not.
fn have(tool: &str, test: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().is_ok();
    if !ok {
        eprintln!("{test}: skipped: {tool} is not installed (scripts/ci-deps installs it)");
    }
    ok
}

/// A unit's `Key=value` lines (comments and section headers left out).
fn settings(unit: &str) -> Vec<(String, String)> {
    unit.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('['))
        .map(|l| {
            let (k, v) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("not Key=value: {l}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn values<'a>(s: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    s.iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// The unit's `ExecStart=` words.
fn exec_start(unit: &str) -> Vec<String> {
    let s = settings(unit);
    let v = values(&s, "ExecStart");
    assert_eq!(v.len(), 1, "one ExecStart= in {unit}");
    v[0].split_whitespace().map(String::from).collect()
}

/// `systemd-analyze verify` on one unit file; returns (success, every line printed).
fn verify(path: &Path) -> (bool, String) {
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no", "--generators=no"])
        .arg(path)
        .output()
        .expect("run systemd-analyze");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Lines of `systemd-analyze` output that are about this unit file.
fn about<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(name)).collect()
}

/// Writes `unit` into `dir` with its ExecStart binary pointed at the built lobby
/// (verify checks that the command exists and is executable).
fn installable(dir: &Path, name: &str, unit: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, unit.replace(BINARY, env!("CARGO_BIN_EXE_lobby"))).unwrap();
    p
}

#[test]
fn every_unit_passes_systemd_analyze_verify() {
    if !have(
        "systemd-analyze",
        "every_unit_passes_systemd_analyze_verify",
    ) {
        return;
    }
    let dir = temp_dir("verify");
    for name in UNITS {
        let path = installable(&dir, name, &read(name));
        let (ok, text) = verify(&path);
        assert!(ok, "systemd-analyze verify {name} failed:\n{text}");
        let warnings = about(&text, name);
        assert!(
            warnings.is_empty(),
            "systemd-analyze verify warns about {name}:\n{}",
            warnings.join("\n")
        );
        if !text.trim().is_empty() {
            eprintln!("systemd-analyze verify {name}, about other units:\n{text}");
        }
        // Informational: systemd's exposure score for the sandbox (lower is better).
        if let Ok(out) = Command::new("systemd-analyze")
            .args(["security", "--offline=yes", "--no-pager"])
            .arg(&path)
            .output()
        {
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(l) = text.lines().find(|l| l.contains("Overall exposure level")) {
                eprintln!("{}", l.trim_start_matches(|c: char| !c.is_alphanumeric()));
            }
        }
    }
    // The check has teeth: verify exits 0 on a misspelt key, but it says so, and the
    // assertion above would have caught it.
    let typo = read("lobby-relay.service").replace("ProtectSystem=", "ProtectSytem=");
    let path = installable(&dir, "lobby-typo.service", &typo);
    let (_, text) = verify(&path);
    assert!(
        about(&text, "lobby-typo.service")
            .iter()
            .any(|l| l.contains("ProtectSytem")),
        "a misspelt key went unreported:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_units_are_sandboxed_and_only_port_53_keeps_a_capability() {
    let example = parse_example(&read("lobby.toml"));
    let state_file = example["master"]["state_file"]
        .as_str()
        .unwrap()
        .to_string();
    let admin_state_file = example["admin"]["state_file"].as_str().unwrap().to_string();
    for name in UNITS {
        let unit = read(name);
        let s = settings(&unit);
        for line in EVERY_UNIT {
            let (k, v) = line.split_once('=').unwrap();
            assert!(values(&s, k).contains(&v), "{name} lacks {line}");
        }
        let part = name
            .trim_start_matches("lobby-")
            .trim_end_matches(".service");
        assert_eq!(
            exec_start(&unit)[..4],
            [BINARY, part, "--config", CONFIG],
            "{name}: ExecStart"
        );
        let caps = match part {
            "dns" | "up" => "CAP_NET_BIND_SERVICE",
            _ => "",
        };
        for key in ["CapabilityBoundingSet", "AmbientCapabilities"] {
            assert_eq!(values(&s, key), [caps], "{name}: {key}");
        }
        // The master (alone or in `up`) writes its state file into its StateDirectory,
        // the tracker its flight log, the relay its tracker queue and admin changes;
        // nothing else is writable.
        let state: Vec<&str> = values(&s, "StateDirectory");
        if part == "relay" {
            assert_eq!(state, ["lobby"], "{name}: StateDirectory");
            assert!(
                Path::new(&admin_state_file).starts_with("/var/lib/lobby"),
                "example admin state_file {admin_state_file} is outside the StateDirectory"
            );
        } else if part == "tracker" {
            assert_eq!(state, ["lobby"], "{name}: StateDirectory");
            let db = exec_start(&unit)
                .into_iter()
                .find(|w| w.starts_with("sqlite:"))
                .unwrap_or_default();
            assert!(
                db.starts_with("sqlite:/var/lib/lobby/"),
                "{name}: the flight log {db:?} is outside the StateDirectory"
            );
        } else if matches!(part, "master" | "up") {
            assert_eq!(state, ["lobby"], "{name}: StateDirectory");
            assert!(
                Path::new(&state_file).starts_with("/var/lib/lobby"),
                "example state_file {state_file} is outside the StateDirectory"
            );
        } else {
            assert!(state.is_empty(), "{name} has no state: {state:?}");
        }
    }
}

fn parse_example(text: &str) -> toml::Table {
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("contrib/systemd/lobby.toml: {e}"))
}

/// The example with its disabled settings (`#key = value`, `#[[table]]`) enabled.
fn every_setting_enabled(text: &str) -> (String, usize) {
    let mut enabled = 0;
    let out = text
        .lines()
        .map(|l| match l.strip_prefix('#') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_lowercase() || c == '[') => {
                enabled += 1;
                rest.to_string()
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    (out, enabled)
}

/// Public addresses become loopback port 0, of the same family.
fn loopback(addr: &str) -> String {
    match addr.parse::<SocketAddr>() {
        Ok(a) if a.is_ipv6() => "[::1]:0".into(),
        _ => "127.0.0.1:0".into(),
    }
}

/// The example made runnable in a test: listeners on loopback port 0, the state file
/// in `dir`. Everything else stays as written.
fn runnable(t: &mut toml::Table, dir: &Path) {
    for (k, v) in t.iter_mut() {
        match (k.as_str(), v) {
            ("listen" | "telnet", toml::Value::Array(a)) => {
                for x in a {
                    if let toml::Value::String(s) = x {
                        *s = loopback(s);
                    }
                }
            }
            ("state_file", toml::Value::String(s)) => {
                *s = dir.join("master.json").display().to_string();
            }
            // The server list's sources: a checkout's `servers/`, made here.
            ("sources", toml::Value::String(s)) => {
                let servers = dir.join("servers");
                std::fs::create_dir_all(&servers).unwrap();
                let entry = "[[server]]\naddress = \"127.0.0.1:9\"\nprotocol = 48\n";
                std::fs::write(servers.join("valve.toml"), entry).unwrap();
                *s = servers.display().to_string();
            }
            // The admin API: its own state file, and a tokens file made here.
            ("admin", toml::Value::Table(sub)) => {
                if let Some(toml::Value::String(s)) = sub.get_mut("state_file") {
                    *s = dir.join("admin.json").display().to_string();
                }
                if let Some(toml::Value::String(s)) = sub.get_mut("tokens_file") {
                    let tokens = dir.join("admin-tokens");
                    std::fs::write(&tokens, "gordon 0123456789abcdef0123456789\n").unwrap();
                    *s = tokens.display().to_string();
                }
            }
            (_, toml::Value::Table(sub)) => runnable(sub, dir),
            (_, toml::Value::Array(a)) => {
                for x in a {
                    if let toml::Value::Table(sub) = x {
                        runnable(sub, dir);
                    }
                }
            }
            _ => {}
        }
    }
}

fn count(t: &toml::Table, table: &str, key: &str) -> usize {
    t.get(table)
        .and_then(|s| s.get(key))
        .and_then(|v| v.as_array())
        .map_or(0, Vec::len)
}

/// Writes the runnable example into `dir`; returns its path and the table.
fn runnable_example(dir: &Path, text: &str) -> (PathBuf, toml::Table) {
    let mut t = parse_example(text);
    runnable(&mut t, dir);
    let path = dir.join("lobby.toml");
    std::fs::write(&path, toml::to_string(&t).unwrap()).unwrap();
    (path, t)
}

/// A unit's command line for the test: the built binary, the runnable config, and
/// every ADDR:PORT flag value on loopback port 0. Returns it with the listening lines
/// it will print, per part.
fn command_line(
    unit: &str,
    config: &Path,
    t: &toml::Table,
) -> (Vec<String>, BTreeMap<String, usize>) {
    let words = exec_start(unit);
    assert_eq!(words[0], BINARY);
    let args: Vec<String> = words[1..]
        .iter()
        .map(|w| match w.as_str() {
            CONFIG => config.display().to_string(),
            // The flight log's file, in the test's directory instead of the state one.
            w if w.starts_with("sqlite:") => format!(
                "sqlite:{}",
                config.with_file_name("history.sqlite").display()
            ),
            w if w.parse::<SocketAddr>().is_ok() => loopback(w),
            w => w.to_string(),
        })
        .collect();
    let http_flags = args.iter().filter(|a| *a == "--http").count();
    // `--http` replaces `[http] listen`; the relay serves HTTP only with the flag.
    let http = match (http_flags, args[0].as_str()) {
        (0, "relay") => 0,
        (0, _) => count(t, "http", "listen"),
        (n, _) => n,
    };
    let mut want = BTreeMap::new();
    let (relay, master, dns, tracker) = match args[0].as_str() {
        "relay" => (true, false, false, false),
        "master" => (false, true, false, false),
        "dns" => (false, false, true, false),
        "tracker" => (false, false, false, true),
        "up" => (true, true, true, true),
        other => panic!("unexpected part {other}"),
    };
    if relay {
        want.insert(
            "relay".into(),
            count(t, "relay", "listen") + count(t, "relay", "telnet"),
        );
    }
    if master {
        want.insert("master".into(), count(t, "master", "listen"));
    }
    if dns {
        want.insert("dns".into(), 2 * count(t, "dns", "listen"));
    }
    if tracker && count(t, "tracker", "listen") > 0 {
        want.insert("tracker".into(), count(t, "tracker", "listen"));
    }
    if http > 0 {
        want.insert("http".into(), http);
    }
    (args, want)
}

/// Waits until lobby's log shows `what` (bounded).
fn log_until(lobby: &Lobby, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lobby.stderr().contains(what) {
        assert!(
            Instant::now() < deadline,
            "lobby never logged {what:?}:\n{}",
            lobby.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn listeners_per_part(lobby: &Lobby) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    // `listening web http` repeats an HTTP listener's address (the page): not counted.
    for (part, _, _) in lobby.listeners.iter().filter(|(p, _, _)| p != "web") {
        *m.entry(part.clone()).or_insert(0) += 1;
    }
    m
}

/// Each unit's own command line, run with the example configuration: it starts every
/// listener the file names, reloads on SIGHUP (as ExecReload sends), stops cleanly
/// on SIGTERM, and the master's state file lands where the file says.
#[test]
fn every_unit_command_runs_with_the_example_config() {
    let dir = temp_dir("run");
    let (config, t) = runnable_example(&dir, &read("lobby.toml"));
    for name in UNITS {
        let unit = read(name);
        let (args, want) = command_line(&unit, &config, &t);
        let _ = std::fs::remove_file(dir.join("master.json"));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let lobby = Lobby::start(&argv, want.values().sum());
        assert_eq!(listeners_per_part(&lobby), want, "{name}: {args:?}");
        lobby.signal(libc::SIGHUP);
        log_until(&lobby, "configuration reloaded");
        let log = lobby.stderr();
        let status = lobby.stop();
        assert!(status.success(), "{name} exited with {status}:\n{log}");
        assert!(!log.contains("reload failed"), "{name}:\n{log}");
        let saved = dir.join("master.json").exists();
        assert_eq!(
            saved,
            args[0] == "master" || args[0] == "up",
            "{name}: state file"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The settings the example leaves disabled (`#key = value`) are real keys with
/// valid values too: enabled all at once, `lobby up` (which checks every table)
/// starts and stops with them.
#[test]
fn the_example_config_is_valid_with_every_disabled_setting_enabled() {
    let dir = temp_dir("enabled");
    let (text, enabled) = every_setting_enabled(&read("lobby.toml"));
    assert!(enabled >= 5, "only {enabled} disabled settings found");
    let (config, t) = runnable_example(&dir, &text);
    assert!(t["master"]["admin"].is_array(), "[[master.admin]] enabled");
    let (args, want) = command_line(&read("lobby-up.service"), &config, &t);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let lobby = Lobby::start(&argv, want.values().sum());
    assert_eq!(listeners_per_part(&lobby), want);
    let log = lobby.stderr();
    let status = lobby.stop();
    assert!(status.success(), "exited with {status}:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `systemd-analyze syscall-filter`'s groups, each expanded to its system calls.
fn syscall_groups() -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new("systemd-analyze")
        .arg("syscall-filter")
        .output()
        .expect("run systemd-analyze syscall-filter");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut raw: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut group = None;
    for line in text.lines() {
        if line.starts_with('@') {
            group = Some(line.trim().to_string());
            raw.entry(line.trim().to_string()).or_default();
        } else if line.starts_with(char::is_whitespace) {
            let item = line.trim();
            if let (Some(g), false) = (&group, item.is_empty() || item.starts_with('#')) {
                raw.get_mut(g).unwrap().push(item.to_string());
            }
        } else {
            group = None;
        }
    }
    fn expand(g: &str, raw: &BTreeMap<String, Vec<String>>, into: &mut BTreeSet<String>) {
        for item in raw.get(g).into_iter().flatten() {
            if item.starts_with('@') {
                expand(item, raw, into);
            } else {
                into.insert(item.clone());
            }
        }
    }
    raw.keys()
        .map(|g| {
            let mut set = BTreeSet::new();
            expand(g, &raw, &mut set);
            (g.clone(), set)
        })
        .collect()
}

/// The pid of `parent`'s only child (strace's tracee).
fn child_of(parent: u32) -> i32 {
    let path = format!("/proc/{parent}/task/{parent}/children");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(pid) = text.split_whitespace().next() {
            return pid.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "no child under {parent}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every system call `lobby up` makes with the example configuration (every setting
/// enabled), serving a pilot, the telnet list and HTTP, reloading and saving, is in
/// `@system-service` and none is in `@privileged`: the units' filter
/// (`SystemCallFilter=@system-service ~@privileged`) does not kill it.
#[test]
fn every_system_call_lobby_makes_is_inside_the_units_filter() {
    let test = "every_system_call_lobby_makes_is_inside_the_units_filter";
    if !have("systemd-analyze", test) || !have("strace", test) {
        return;
    }
    let dir = temp_dir("syscalls");
    let (text, _) = every_setting_enabled(&read("lobby.toml"));
    let (config, t) = runnable_example(&dir, &text);
    let (args, want) = command_line(&read("lobby-up.service"), &config, &t);
    let trace = dir.join("strace.out");
    let mut argv = vec![
        "-f".to_string(),
        "-qq".into(),
        "-o".into(),
        trace.display().to_string(),
        env!("CARGO_BIN_EXE_lobby").into(),
    ];
    argv.extend(args);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let lobby = Lobby::start_cmd("strace", &argv, want.values().sum());
    let pid = child_of(lobby.child.id());

    // Traffic through every part that serves it.
    let relay = lobby.addr("relay", "udp");
    let pilot = common::client(false);
    pilot
        .send_to(&common::pos("TEST1", (50.0, 8.0), 100), relay)
        .unwrap();
    common::telnet_until(lobby.addr("relay", "telnet"), "the pilot", |l| {
        l.contains("TEST1")
    });
    let http = lobby.addr("http", "tcp");
    for path in ["/stats", "/mpservers.xml", "/v1/servers/valve"] {
        assert_eq!(common::http_get(http, path).0, 200, "{path}");
    }
    unsafe { libc::kill(pid, libc::SIGHUP) };
    log_until(&lobby, "configuration reloaded");
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let log = lobby.stderr();
    let status = lobby.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "exited with {status}:\n{log}");

    let trace = std::fs::read_to_string(&trace).unwrap();
    let used: BTreeSet<String> = trace
        .lines()
        .filter_map(|l| {
            let call = l.split_once(' ')?.1.trim_start();
            let call = call.strip_prefix("<... ").unwrap_or(call);
            let end = call.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            (end > 0).then(|| call[..end].to_string())
        })
        .filter(|c| c.starts_with(|c: char| c.is_ascii_lowercase()))
        .collect();
    assert!(
        used.contains("recvmmsg"),
        "the trace has the UDP workers: {used:?}"
    );
    let groups = syscall_groups();
    let allowed = &groups["@system-service"];
    let outside: Vec<_> = used.difference(allowed).collect();
    assert!(outside.is_empty(), "not in @system-service: {outside:?}");
    let privileged: Vec<_> = used.intersection(&groups["@privileged"]).collect();
    assert!(privileged.is_empty(), "in @privileged: {privileged:?}");
    eprintln!("{} system calls, all inside the filter", used.len());
    let _ = std::fs::remove_dir_all(&dir);
}
