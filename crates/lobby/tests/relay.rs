//! `lobby relay` as a real process on 127.0.0.1 port 0, spoken to over UDP and TCP.

mod common;

use common::*;
use std::time::Duration;

fn relay(extra: &[&str]) -> Lobby {
    let mut args = vec!["--name", "testrelay"];
    args.extend_from_slice(extra);
    start_relay(&args)
}

#[test]
fn two_pilots_see_each_other_and_the_telnet_list_shows_them() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let (a, b) = (client(false), client(false));
    let da = pos("ALPHA", BIKF, 100);
    let db = pos("BRAVO", north(BIKF, 5.0), 100);
    a.send_to(&da, udp).unwrap();
    let got = send_until_seen(&b, &db, udp, &a, "BRAVO");
    assert_eq!(got, db, "forwarded byte for byte");
    let got = send_until_seen(&a, &da, udp, &b, "ALPHA");
    assert_eq!(got, da);
    // Nobody gets their own datagrams back.
    a.send_to(&da, udp).unwrap();
    assert!(drain(&a, Duration::from_millis(300))
        .iter()
        .all(|d| callsign_of(d) != "ALPHA"));

    let t = telnet_until(r.addr("relay", "telnet"), "2 pilots", |t| {
        t.contains("# 2 pilot(s) online")
    });
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "# This is testrelay");
    assert!(
        lines[1].starts_with("# FlightGear Multiplayer Server v0.13.10"),
        "{t}"
    );
    assert_eq!(
        lines[2],
        "# using protocol version v1.1 (LazyRelay enabled)"
    );
    let alpha = lines
        .iter()
        .find(|l| l.starts_with("ALPHA@LOCAL: "))
        .expect(&t);
    let fields: Vec<&str> = alpha.split(' ').collect();
    assert_eq!(fields.len(), 11, "{alpha}");
    let lat: f64 = fields[4].parse().unwrap();
    let lon: f64 = fields[5].parse().unwrap();
    let alt_ft: f64 = fields[6].parse().unwrap();
    assert!(
        (lat - BIKF.0).abs() < 1e-5 && (lon - BIKF.1).abs() < 1e-5,
        "{alpha}"
    );
    assert!(
        (alt_ft - 3280.839895).abs() < 0.01,
        "altitude in feet: {alpha}"
    );
    assert_eq!(fields[4].split('.').nth(1).unwrap().len(), 6, "6 decimals");
    assert_eq!(fields[7], "0", "exact zero prints as 0");
    assert_eq!(fields[10], "Aircraft/c172p/Models/c172p.xml");
    assert!(t.contains("BRAVO@LOCAL: "));
    r.stop();
}

#[test]
fn real_flightgear_captures_are_relayed_verbatim() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let lpf = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/fg/c172p_TEST1_400.lpf"
    ))
    .unwrap();
    let mut captures = Vec::new();
    let mut i = 0;
    while i + 4 <= lpf.len() {
        let n = u32::from_be_bytes(lpf[i..i + 4].try_into().unwrap()) as usize;
        captures.push(lpf[i + 4..i + 4 + n].to_vec());
        i += 4 + n;
    }
    assert_eq!(captures.len(), 400);
    let (fg, watcher) = (client(false), client(false));
    // A watcher near Keflavik, where TEST1 flies.
    watcher.send_to(&pos("WATCH", BIKF, 100), udp).unwrap();
    send_until_seen(&fg, &captures[0], udp, &watcher, "TEST1");
    std::thread::sleep(Duration::from_millis(100));
    drain(&watcher, Duration::from_millis(100));
    for c in &captures[1..50] {
        fg.send_to(c, udp).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let got = drain(&watcher, Duration::from_millis(500));
    assert_eq!(got.len(), 49);
    assert_eq!(got.as_slice(), &captures[1..50], "same bytes, same order");
}

#[test]
fn bad_input_of_every_kind_is_dropped_and_valid_traffic_still_flows() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let (a, bad) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), udp).unwrap();
    let good = pos("GOOD", north(BIKF, 1.0), 100);
    send_until_seen(&bad, &good, udp, &a, "GOOD");
    let m = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut d = pos("EVIL", north(BIKF, 1.0), 100);
        f(&mut d);
        d
    };
    let len = good.len();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("bad_magic", m(&|d| d[0..4].copy_from_slice(b"xV4\x12"))),
        (
            "bad_version",
            m(&|d| d[4..8].copy_from_slice(&0x0002_0001u32.to_be_bytes())),
        ),
        (
            "length_mismatch",
            m(&|d| d[12..16].copy_from_slice(&999u32.to_be_bytes())),
        ),
        (
            "position_too_short",
            m(&|d| {
                d.truncate(200);
                d[12..16].copy_from_slice(&200u32.to_be_bytes());
            }),
        ),
        (
            "oversize",
            m(&|d| {
                d.resize(1300, 7);
                d[12..16].copy_from_slice(&1300u32.to_be_bytes());
            }),
        ),
        (
            "non_finite_position",
            m(&|d| d[152..160].copy_from_slice(&f64::NAN.to_bits().to_be_bytes())),
        ),
        ("zero_position", m(&|d| d[144..168].fill(0))),
        ("runt", m(&|d| d.truncate(20))),
        ("empty_callsign", m(&|d| d[24..32].fill(0))),
    ];
    assert!(len < 1200);
    for (_, d) in &cases {
        bad.send_to(d, udp).unwrap();
    }
    // Random garbage too.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for n in 0..200 {
        let junk: Vec<u8> = (0..(n * 7 % 1500))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        bad.send_to(&junk, udp).unwrap();
    }
    // Valid traffic still flows, and nothing bad arrived.
    let got = send_until_seen(&bad, &good, udp, &a, "GOOD");
    assert_eq!(got, good);
    let seen = drain(&a, Duration::from_millis(200));
    assert!(seen.iter().all(|d| callsign_of(d) != "EVIL"));
    let t = telnet_until(r.addr("relay", "telnet"), "every drop counter", |t| {
        cases
            .iter()
            .all(|(name, _)| t.contains(&format!(" {name}=")))
    });
    assert!(
        t.contains("# 2 pilot(s) online"),
        "bad datagrams created no pilot:\n{t}"
    );
    assert!(!t.contains("EVIL"));
}

#[test]
fn ping_is_answered_with_pong() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let c = client(false);
    let ping = fgmp::message::to_bytes(&fgmp::Message::ping(fgmp::Callsign::new("probe").unwrap()))
        .unwrap();
    c.send_to(&ping, udp).unwrap();
    let got = drain(&c, Duration::from_millis(500));
    let mut pong = ping.clone();
    pong[8..12].copy_from_slice(&10u32.to_be_bytes());
    assert_eq!(got, vec![pong]);
}

#[test]
fn ipv4_and_ipv6_pilots_meet() {
    let r = Lobby::start(
        &[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--listen",
            "[::1]:0",
            "--telnet",
            "off",
        ],
        2,
    );
    let udp = r.addrs("relay", "udp");
    let v4 = udp.iter().find(|a| a.is_ipv4()).copied().unwrap();
    let v6 = udp.iter().find(|a| a.is_ipv6()).copied().unwrap();
    let (a, b) = (client(false), client(true));
    a.send_to(&pos("FOUR", BIKF, 100), v4).unwrap();
    send_until_seen(&b, &pos("SIX", BIKF, 100), v6, &a, "SIX");
    send_until_seen(&a, &pos("FOUR", BIKF, 100), v4, &b, "FOUR");
}

#[test]
fn silent_pilots_expire_without_traffic() {
    let r = relay(&["--player-expiry", "1"]);
    let udp = r.addr("relay", "udp");
    let a = client(false);
    a.send_to(&pos("ALPHA", BIKF, 100), udp).unwrap();
    // Joined (the list is a snapshot up to a second old, and under load ALPHA may
    // already have expired when the first one is taken: a full local run failed
    // waiting for "1 pilot", so the counters say it joined).
    telnet_until(r.addr("relay", "telnet"), "ALPHA joined", |t| {
        telnet_stat(t, "pilots_joined") == 1
    });
    // No datagram at all from now on: only the timer can drop ALPHA.
    telnet_until(r.addr("relay", "telnet"), "0 pilots", |t| {
        t.contains("# 0 pilot(s) online") && telnet_stat(t, "pilots_expired") == 1
    });
}

#[test]
fn observers_are_hidden_but_counted() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let (o, a) = (client(false), client(false));
    o.send_to(&pos("obs01", BIKF, 100), udp).unwrap();
    let got = send_until_seen(&a, &pos("ALPHA", BIKF, 100), udp, &o, "ALPHA");
    assert_eq!(callsign_of(&got), "ALPHA");
    o.send_to(&pos("obs01", BIKF, 100), udp).unwrap();
    assert!(drain(&a, Duration::from_millis(300))
        .iter()
        .all(|d| callsign_of(d) != "obs01"));
    let t = telnet(r.addr("relay", "telnet"));
    assert!(t.contains("# 2 pilot(s) online"), "{t}");
    assert!(!t.contains("obs01"), "{t}");
}

#[test]
fn crossfeed_and_blacklist() {
    let cf = client(false);
    let cf_addr = cf.local_addr().unwrap().to_string();
    let r = relay(&["--crossfeed", &cf_addr, "--blacklist", "127.0.0.2/32"]);
    let udp = r.addr("relay", "udp");
    let a = client(false);
    let d = pos("ALPHA", BIKF, 100);
    a.send_to(&d, udp).unwrap();
    let got = drain(&cf, Duration::from_millis(400));
    let mut want = d.clone();
    want[0..4].copy_from_slice(b"SFGF");
    assert_eq!(got, vec![want]);
    let banned = client_on("127.0.0.2");
    banned.send_to(&pos("BANNED", BIKF, 100), udp).unwrap();
    let t = telnet_until(r.addr("relay", "telnet"), "blacklist drop", |t| {
        t.contains(" blacklisted=1")
    });
    assert!(!t.contains("BANNED"));
    assert!(
        drain(&cf, Duration::from_millis(200)).is_empty(),
        "blacklisted traffic is not crossfed"
    );
}

#[test]
fn an_unknown_config_key_is_an_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("lobby-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(
        &f,
        "[relay]\nlisten = [\"127.0.0.1:0\"]\nplayer_expiri = 5\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(["relay", "--config", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("player_expiri"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn an_fgms_conf_is_read() {
    let dir = std::env::temp_dir().join(format!("lobby-fgms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("fgms.conf");
    std::fs::write(
        &f,
        "# an fgms 0.13 file\nserver.name = oldfgms\nserver.address = 127.0.0.1\nserver.port = 0\nserver.telnet_port = 0\nserver.out_of_reach = 20\nserver.admin_cli = false\n",
    )
    .unwrap();
    let r = Lobby::start(
        &[
            "relay",
            "--fgms-config",
            f.to_str().unwrap(),
            "--telnet",
            "127.0.0.1:0",
        ],
        2,
    );
    let udp = r.addr("relay", "udp");
    let (a, b) = (client(false), client(false));
    // out_of_reach 20 nm from the fgms.conf: a pilot 30 nm away (range word 0 = default) is not served.
    let mut quiet = pos("QUIET", BIKF, 0);
    quiet[16..20].fill(0);
    a.send_to(&quiet, udp).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    b.send_to(&pos("FAR", north(BIKF, 30.0), 100), udp).unwrap();
    assert!(drain(&a, Duration::from_millis(300)).is_empty());
    let t = telnet_until(r.addr("relay", "telnet"), "name", |t| {
        t.contains("# 2 pilot(s)")
    });
    assert!(t.starts_with("# This is oldfgms\n"), "{t}");
}

#[test]
fn sigterm_stops_cleanly() {
    let r = relay(&[]);
    let status = r.stop();
    assert!(status.success(), "{status:?}");
}

#[test]
fn help_documents_every_flag() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(["relay", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let h = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--listen",
        "--telnet",
        "--name",
        "--relay",
        "--hub",
        "--crossfeed",
        "--whitelist",
        "--blacklist",
        "--fgms-config",
        "--config",
        "--out-of-reach",
        "--max-radar-range",
        "--player-expiry",
        "--max-pilots",
        "--workers",
        "--realtime-priority",
    ] {
        assert!(h.contains(flag), "{flag} missing from relay --help");
    }
}

#[test]
fn realtime_workers_still_relay() {
    // As root (CI) the workers run under SCHED_FIFO; without the capability the relay
    // logs a warning and runs at normal priority. Either way traffic must flow.
    let r = relay(&["--realtime-priority", "1", "--workers", "2"]);
    let udp = r.addr("relay", "udp");
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), udp).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), udp, &a, "BRAVO");
    assert!(r.stop().success());
}

/// A position datagram of `cs` at `at` stamped `time` (its MP clock).
fn pos_at(cs: &str, at: (f64, f64), time: f64) -> Vec<u8> {
    let mut p = fgmp::message::Position::at("Aircraft/c172p/Models/c172p.xml", ecef(at.0, at.1));
    p.time = time;
    let m = fgmp::message::Message::position(fgmp::Callsign::new(cs).unwrap(), 100, p);
    fgmp::message::to_bytes(&m).unwrap()
}

/// Two pilots 30 nm apart, each sending 10 Hz for 3 s: what each got of the other.
fn thirty_nm_apart(r: &Lobby) -> (usize, usize) {
    let udp = r.addr("relay", "udp");
    let (a, b) = (client(false), client(false));
    a.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
    b.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
    let (mut got_a, mut got_b) = (0, 0);
    for k in 0..30 {
        let t = 500.0 + 0.1 * f64::from(k);
        a.send_to(&pos_at("ALPHA", BIKF, t), udp).unwrap();
        b.send_to(&pos_at("BRAVO", north(BIKF, 30.0), t + 0.03), udp)
            .unwrap();
        let until = std::time::Instant::now() + Duration::from_millis(100);
        while std::time::Instant::now() < until {
            got_a += drain(&a, Duration::from_millis(5)).len();
            got_b += drain(&b, Duration::from_millis(5)).len();
        }
    }
    got_a += drain(&a, Duration::from_millis(200)).len();
    got_b += drain(&b, Duration::from_millis(200)).len();
    (got_a, got_b)
}

#[test]
fn distance_tiers_thin_by_default_and_tiers_off_forwards_everything() {
    // The default: 2 Hz at 30 nm: a pilot's first datagram and every fifth after it,
    // about 6 of 30.
    let r = relay(&[]);
    let (to_a, to_b) = thirty_nm_apart(&r);
    assert!((5..=8).contains(&to_a), "ALPHA got {to_a} of BRAVO's 30");
    assert!((5..=8).contains(&to_b), "BRAVO got {to_b} of ALPHA's 29");
    let t = telnet(r.addr("relay", "telnet"));
    let thinned = telnet_stat(&t, "thinned_tier1");
    assert!(thinned >= 45, "{thinned} thinned in tier 1:\n{t}");
    r.stop();

    let r = relay(&["--tiers", "off"]);
    let (to_a, to_b) = thirty_nm_apart(&r);
    // Every datagram, as fgms, but the very first of whichever pilot the relay
    // heard first (its receive workers may take the two sockets in either order).
    assert_eq!(to_a + to_b, 59, "every datagram, as fgms: {to_a} + {to_b}");
    r.stop();

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args([
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--tiers",
            "full@10,0.1hz",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("relay.tiers") && err.contains("1.5 s"),
        "{err}"
    );
}

#[test]
fn the_telnet_list_is_rendered_at_most_once_a_second_for_every_reader() {
    // A pilot moving every 50 ms and the list read every 20 ms for 2 s: the same
    // rendering is sent until it is a second old, so 3 different lists (the one
    // before, one a second; 4 allowed for a slow machine), not one per reader.
    let r = start_relay(&[]);
    let (udp, tel) = (r.addr("relay", "udp"), r.addr("relay", "telnet"));
    let pilot = client(false);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let lists = std::thread::scope(|s| {
        s.spawn(|| {
            let mut at = BIKF;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                at = north(at, 0.01);
                pilot.send_to(&pos("MOVER", at, 100), udp).unwrap();
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        telnet_until(tel, "MOVER", |t| t.contains("MOVER"));
        let mut lists = std::collections::BTreeSet::new();
        let (t, mut reads) = (std::time::Instant::now(), 0);
        while t.elapsed() < Duration::from_secs(2) {
            lists.insert(telnet(tel));
            reads += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reads > 30, "{reads} reads");
        lists
    });
    assert!(
        (2..=4).contains(&lists.len()),
        "{} different lists in 2 s",
        lists.len()
    );
}
