//! `lobby fg servers` and `lobby fg terrasync` against a real authoritative DNS server
//! (Debian's nsd, see scripts/ci-deps-dns) and a real `lobby relay`.

mod common;
mod dnsd;

use base64::Engine as _;
use common::Lobby;
use dnsd::Nsd;
use serde_json::Value;
use std::collections::HashSet;
use std::net::UdpSocket;
use std::process::{Command, Output};

const ALLOWED: [&str; 2] = ["https://a.example.org/ws2", "https://b.example.org/ws2"];

fn b64(json: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(json)
}

/// The test zone: relays under `_fgms._udp.fg.test`, TerraSync under
/// `terrasync.fg.test`, and a few broken or empty subdomains.
///
/// SRV, in the order FlightGear sorts them (priority ascending, weight descending):
/// mpserver04 (10 50, bad base64), mpserver01 (10 20, the real relay), mpserver02
/// (10 5, offline), mpserver03 (20 10, a non-string JSON value). The zone lists them
/// in another order so the sort is tested.
fn zone(relay_port: u16, dead_port: u16) -> String {
    let txt01 = b64(r#"{"name":"mpserver01","location":"Frankfurt,Germany"}"#);
    let txt02 = b64(r#"{"name":"mpserver02","location":"Kansas,USA"}"#);
    let txt03 = b64(r#"{"name":"mpserver03","location":"Grenoble,France","port":5000}"#);
    let txt05 = b64(r#"{"name":"mpserver05","location":"Nowhere"}"#);
    format!(
        r#"$ORIGIN fg.test.
$TTL 60
@           IN SOA   ns1.fg.test. hostmaster.fg.test. 2026010101 3600 600 86400 60
@           IN NS    ns1.fg.test.
ns1         IN A     127.0.0.1
; multiplayer relays
_fgms._udp  IN SRV   10 20 {relay_port} mpserver01.fg.test.
_fgms._udp  IN SRV   20 10 {dead_port} mpserver03.fg.test.
_fgms._udp  IN SRV   10 5  0    mpserver02.fg.test.
_fgms._udp  IN SRV   10 50 {dead_port} mpserver04.fg.test.
mpserver01  IN A     127.0.0.1
mpserver01  IN TXT   "flightgear-mpserver={txt01}"
mpserver02  IN A     127.0.0.1
mpserver02  IN TXT   "flightgear-mpserver={txt02}"
mpserver03  IN A     127.0.0.1
mpserver03  IN TXT   "flightgear-mpserver={txt03}"
mpserver04  IN A     127.0.0.1
mpserver04  IN TXT   "flightgear-mpserver=not*base64!"
; a domain whose only relay is offline
_fgms._udp.down IN SRV 10 10 0 mpserver05.fg.test.
mpserver05  IN A     127.0.0.1
mpserver05  IN TXT   "flightgear-mpserver={txt05}"
; terrasync: lowest order 100, lowest well-formed preference 50 (a and b)
terrasync   IN NAPTR 100 50  "U" "ws20" "!^.*$!https://a.example.org/ws2!" .
terrasync   IN NAPTR 100 50  "U" "ws20" "!^.*$!https://b.example.org/ws2!" .
terrasync   IN NAPTR 100 100 "U" "ws20" "!^.*$!https://master.example.org/scenery!" .
terrasync   IN NAPTR 200 10  "U" "ws20" "!^.*$!https://backup.example.org/ws2!" .
terrasync   IN NAPTR 100 10  "U" "o2c"  "!^.*$!https://o2c.example.org/o2c!" .
terrasync   IN NAPTR 100 1   "U" "ws20" "!^http.*$!https://evil.example.org/ws2!" .
terrasync   IN NAPTR 50  1   "u" "ws20" "!^.*$!https://lowercase-flag.example.org/ws2!" .
; terrasync.empty exists without NAPTR (NODATA)
terrasync.empty IN TXT "no naptr here"
; every lowest-order entry malformed (SimGear would throw)
terrasync.bad IN NAPTR 100 1 "U" "ws20" "!bad!" .
terrasync.bad IN NAPTR 200 1 "U" "ws20" "!^.*$!https://later.example.org/ws2!" .
"#
    )
}

fn lobby(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lobby"));
    c.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("SIMGEAR_TERRASYNC_SERVER_") {
            c.env_remove(k);
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run lobby")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", describe(o)))
}

fn hosts(v: &Value) -> Vec<String> {
    v["servers"]
        .as_array()
        .expect("servers array")
        .iter()
        .map(|s| s["host"].as_str().expect("host").to_string())
        .collect()
}

fn server<'a>(v: &'a Value, host: &str) -> &'a Value {
    v["servers"]
        .as_array()
        .expect("servers array")
        .iter()
        .find(|s| s["host"] == host)
        .unwrap_or_else(|| panic!("no {host} in {v:#}"))
}

/// A UDP port with nothing listening on it.
fn dead_port() -> u16 {
    dnsd::free_port()
}

#[test]
fn servers_lists_relays_as_flightgear_does() {
    let nsd = Nsd::start(&[("fg.test", zone(5000, dead_port()))]);
    let ns = nsd.addr();
    let base = ["fg", "servers", "--nameserver", &ns, "--domain", "fg.test"];

    // JSON: the active relays in SimGear's order, the offline one hidden.
    let o = lobby(&[&base[..], &["--json"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let v = json(&o);
    assert_eq!(
        hosts(&v),
        [
            "mpserver04.fg.test",
            "mpserver01.fg.test",
            "mpserver03.fg.test"
        ],
        "{v:#}"
    );
    assert_eq!(v["active"], 3, "{v:#}");
    assert_eq!(v["offline"], 1, "{v:#}");
    assert_eq!(v["query"], "_fgms._udp.fg.test.");

    let s01 = server(&v, "mpserver01.fg.test");
    assert_eq!(s01["name"], "mpserver01");
    assert_eq!(s01["location"], "Frankfurt,Germany");
    assert_eq!(s01["port"], 5000);
    assert_eq!(s01["priority"], 10);
    assert_eq!(s01["weight"], 20);
    assert_eq!(s01["online"], true);
    assert!(s01["txt_error"].is_null(), "{s01:#}");
    assert_eq!(s01["warnings"].as_array().map(Vec::len), Some(0), "{s01:#}");
    assert!(
        s01.get("probe").is_none(),
        "no probe without --probe: {s01:#}"
    );

    // The non-string value is reported, the string ones kept.
    let s03 = server(&v, "mpserver03.fg.test");
    assert_eq!(s03["name"], "mpserver03");
    assert_eq!(s03["location"], "Grenoble,France");
    assert_eq!(s03["non_string"], serde_json::json!(["port"]), "{s03:#}");
    assert!(s03["attributes"].get("port").is_none(), "{s03:#}");
    assert!(
        s03["warnings"].to_string().contains("port"),
        "warning names the key: {s03:#}"
    );

    // Bad base64 is reported for that relay only; it is still listed.
    let s04 = server(&v, "mpserver04.fg.test");
    assert!(
        s04["txt_error"]
            .as_str()
            .is_some_and(|e| e.contains("base64")),
        "{s04:#}"
    );
    assert!(s04["name"].is_null(), "{s04:#}");
    let err = text(&o.stderr);
    assert!(
        err.contains("mpserver04.fg.test") && err.contains("base64"),
        "{err}"
    );
    assert!(
        err.contains("mpserver03.fg.test") && err.contains("not strings"),
        "{err}"
    );

    // --all shows the offline relay in its place.
    let o = lobby(&[&base[..], &["--json", "--all"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let v = json(&o);
    assert_eq!(
        hosts(&v),
        [
            "mpserver04.fg.test",
            "mpserver01.fg.test",
            "mpserver02.fg.test",
            "mpserver03.fg.test"
        ],
        "{v:#}"
    );
    let s02 = server(&v, "mpserver02.fg.test");
    assert_eq!(s02["online"], false);
    assert_eq!(s02["port"], 0);
    assert_eq!(s02["name"], "mpserver02");

    // The table.
    let o = lobby(&base, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = text(&o.stdout);
    assert!(out.contains("3 active, 1 offline"), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("mpserver01.fg.test"))
        .unwrap_or_else(|| panic!("no mpserver01 row:\n{out}"));
    assert!(
        row.contains("Frankfurt,Germany") && row.contains("5000") && row.contains("active"),
        "{row}"
    );
    assert!(!out.contains("mpserver02"), "offline hidden:\n{out}");
    let o = lobby(&[&base[..], &["--all"]].concat(), &[]);
    let out = text(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.contains("mpserver02.fg.test") && l.contains("offline")),
        "{out}"
    );
}

#[test]
fn servers_failures_are_clear() {
    let nsd = Nsd::start(&[("fg.test", zone(5000, dead_port()))]);
    let ns = nsd.addr();

    // No SRV at all: exit 1, naming the domain, the nameserver and the reason.
    let o = lobby(
        &[
            "fg",
            "servers",
            "--nameserver",
            &ns,
            "--domain",
            "nope.fg.test",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let err = text(&o.stderr);
    assert!(
        err.contains("nope.fg.test") && err.contains(&ns) && err.contains("NXDOMAIN"),
        "{err}"
    );

    // Only offline relays: exit 1, but the JSON is still printed.
    let o = lobby(
        &[
            "fg",
            "servers",
            "--nameserver",
            &ns,
            "--domain",
            "down.fg.test",
            "--json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let v = json(&o);
    assert_eq!(v["active"], 0);
    assert_eq!(v["offline"], 1);
    assert_eq!(hosts(&v).len(), 0);

    // A nameserver that never answers: a timeout, said as such.
    let silent = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let silent_addr = silent.local_addr().expect("addr").to_string();
    let o = lobby(
        &[
            "fg",
            "servers",
            "--nameserver",
            &silent_addr,
            "--domain",
            "fg.test",
            "--timeout",
            "1",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let err = text(&o.stderr);
    assert!(
        err.contains("timed out") && err.contains(&silent_addr) && err.contains("fg.test"),
        "{err}"
    );

    // Usage errors exit 2.
    let o = lobby(&["fg", "servers", "--nameserver", "not-an-ip"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
}

#[test]
fn servers_probe_measures_a_real_relay() {
    // The relay first: its port goes into the zone.
    let relay = Lobby::start(
        &[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "127.0.0.1:0",
        ],
        2,
    );
    let udp = relay.addr("relay", "udp");
    let telnet = relay.addr("relay", "telnet");
    let nsd = Nsd::start(&[("fg.test", zone(udp.port(), dead_port()))]);
    let ns = nsd.addr();
    let tport = telnet.port().to_string();
    let o = lobby(
        &[
            "fg",
            "servers",
            "--nameserver",
            &ns,
            "--domain",
            "fg.test",
            "--probe",
            "--telnet-port",
            &tport,
            "--timeout",
            "3",
            "--json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let v = json(&o);
    let s01 = server(&v, "mpserver01.fg.test");
    assert_eq!(s01["port"], udp.port());
    let p = &s01["probe"];
    assert_eq!(p["addresses"], serde_json::json!(["127.0.0.1"]), "{p:#}");
    assert_eq!(p["address"], udp.to_string(), "{p:#}");
    let rtt = p["rtt_ms"]
        .as_f64()
        .unwrap_or_else(|| panic!("no RTT: {p:#}\nrelay stderr:\n{}", relay.stderr()));
    assert!(rtt > 0.0 && rtt < 3000.0, "{rtt}");
    assert!(p["ping_error"].is_null(), "{p:#}");
    assert_eq!(p["telnet"], telnet.to_string(), "{p:#}");
    assert_eq!(p["pilots"], 0, "{p:#}");

    // A relay whose port has nothing behind it: the ping error is reported, no RTT.
    let p4 = &server(&v, "mpserver04.fg.test")["probe"];
    assert!(p4["rtt_ms"].is_null(), "{p4:#}");
    assert!(p4["ping_error"].is_string(), "{p4:#}");

    // The relay answered a real ping: its counter says so (the telnet list is a
    // snapshot up to a second old, so wait for one taken after the probe).
    common::telnet_until(telnet, "the ping counted", |t| t.contains("pings=1"));

    // The table shows the RTT and pilot columns.
    let o = lobby(
        &[
            "fg",
            "servers",
            "--nameserver",
            &ns,
            "--domain",
            "fg.test",
            "--probe",
            "--telnet-port",
            &tport,
            "--timeout",
            "3",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = text(&o.stdout);
    assert!(out.contains("RTT") && out.contains("PILOTS"), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("mpserver01.fg.test"))
        .unwrap_or_else(|| panic!("no row:\n{out}"));
    assert!(row.contains(" ms"), "{row}");
}

fn terrasync(ns: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let args = [
        &["fg", "terrasync", "--nameserver", ns, "--domain", "fg.test"][..],
        extra,
    ]
    .concat();
    lobby(&args, env)
}

fn url_line(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", describe(o));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "just the URL line: {out:?}");
    lines[0].to_string()
}

#[test]
fn terrasync_picks_as_simgear_does() {
    let nsd = Nsd::start(&[("fg.test", zone(5000, 5001))]);
    let ns = nsd.addr();

    // Every pick is among the lowest order and the lowest well-formed preference.
    let mut seen = HashSet::new();
    for seed in 0..24 {
        let s = seed.to_string();
        let o = terrasync(&ns, &["--seed", &s], &[]);
        let url = url_line(&o);
        assert!(ALLOWED.contains(&url.as_str()), "seed {seed}: {url}");
        seen.insert(url);
        // The malformed lowest-preference regexp is skipped with a warning.
        let err = text(&o.stderr);
        assert!(
            err.contains("warning") && err.contains("evil.example.org"),
            "{err}"
        );
    }
    assert_eq!(seen.len(), 2, "both allowed URLs picked: {seen:?}");

    // The same seed, the same pick.
    let a = url_line(&terrasync(&ns, &["--seed", "7"], &[]));
    assert_eq!(a, url_line(&terrasync(&ns, &["--seed", "7"], &[])));

    // --all: the shuffled candidate list, the pick first.
    let o = terrasync(&ns, &["--seed", "7", "--all"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], a);
    assert_eq!(
        lines.iter().copied().collect::<HashSet<_>>(),
        ALLOWED.into_iter().collect::<HashSet<_>>()
    );

    // JSON carries the records, the skipped entry and the source.
    let o = terrasync(&ns, &["--seed", "7", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let v = json(&o);
    assert_eq!(v["url"], a.as_str());
    assert_eq!(v["source"], "dns");
    assert_eq!(v["query"], "terrasync.fg.test.");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(7), "{v:#}");
    let skipped = v["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), 1, "{v:#}");
    assert!(skipped[0]["regexp"]
        .as_str()
        .is_some_and(|r| r.contains("evil")));

    // Another service.
    let o = terrasync(&ns, &["--service", "o2c"], &[]);
    assert_eq!(url_line(&o), "https://o2c.example.org/o2c");
}

#[test]
fn terrasync_overrides_follow_simgear_order() {
    let nsd = Nsd::start(&[("fg.test", zone(5000, 5001))]);
    let ns = nsd.addr();
    let var = "SIMGEAR_TERRASYNC_SERVER_ws20";

    // The environment variable replaces the DNS pick...
    let o = terrasync(&ns, &[], &[(var, "https://env.example.org/ws2")]);
    assert_eq!(url_line(&o), "https://env.example.org/ws2");
    let o = terrasync(&ns, &["--json"], &[(var, "https://env.example.org/ws2")]);
    let v = json(&o);
    assert_eq!(v["source"], "environment");
    assert!(
        ALLOWED.contains(&v["dns_pick"].as_str().unwrap_or("")),
        "{v:#}"
    );
    // ... only for its service.
    let o = terrasync(
        &ns,
        &["--service", "o2c"],
        &[(var, "https://env.example.org/ws2")],
    );
    assert_eq!(url_line(&o), "https://o2c.example.org/o2c");

    // --override wins over both and skips DNS (the domain has no NAPTR at all).
    let o = lobby(
        &[
            "fg",
            "terrasync",
            "--nameserver",
            &ns,
            "--domain",
            "nope.fg.test",
            "--override",
            "https://mine.example.org/scenery",
        ],
        &[(var, "https://env.example.org/ws2")],
    );
    assert_eq!(url_line(&o), "https://mine.example.org/scenery");

    // As in SimGear, the variable does not rescue a failed lookup.
    let o = lobby(
        &[
            "fg",
            "terrasync",
            "--nameserver",
            &ns,
            "--domain",
            "nope.fg.test",
        ],
        &[(var, "https://env.example.org/ws2")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(text(&o.stderr).contains(var), "{}", describe(&o));
}

#[test]
fn terrasync_failures_are_clear_errors() {
    let nsd = Nsd::start(&[("fg.test", zone(5000, 5001))]);
    let ns = nsd.addr();
    let run = |domain: &str, extra: &[&str]| {
        let args = [
            &["fg", "terrasync", "--nameserver", &ns, "--domain", domain][..],
            extra,
        ]
        .concat();
        lobby(&args, &[])
    };
    let check = |o: Output, needles: &[&str]| {
        assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
        assert!(o.stdout.is_empty(), "{}", describe(&o));
        let err = text(&o.stderr);
        for n in needles {
            assert!(err.contains(n), "{n:?} missing: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    };
    // The name does not exist.
    check(
        run("nope.fg.test", &[]),
        &["terrasync.nope.fg.test.", "NXDOMAIN", &ns],
    );
    // The name exists without NAPTR.
    check(
        run("empty.fg.test", &[]),
        &["terrasync.empty.fg.test.", "NODATA"],
    );
    // No record for the service.
    check(run("fg.test", &["--service", "ws30"]), &["ws30"]);
    // Every lowest-order regexp malformed: SimGear would throw; we say why.
    check(run("bad.fg.test", &[]), &["unsupported regexp", "!bad!"]);
}
