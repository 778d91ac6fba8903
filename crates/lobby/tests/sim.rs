//! `lobby sim` as a real process on 127.0.0.1 port 0: registered with a real
//! `lobby master`, and read by real third-party clients (Debian's qstat, PyPI's
//! python-a2s). What they parse must equal what the simulator was configured with;
//! the expected values come from the same seeded generator (`sim::FleetSpec`).

mod common;

use common::*;
use sim::{Config, FleetSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::time::{Duration, Instant};
use xash::info::InfoString;
use xash::master::{
    ChallengeReply, Heartbeat, ScanRequest, ServerAdd, ServerInfo, ServerListPage, Shutdown,
};

const INSTALL: &str = "run scripts/ci-deps to install the test dependencies";

/// The fleet `lobby sim` builds from `args` (the same seeded generator).
fn expected(spec: FleetSpec) -> Vec<Config> {
    spec.configs().expect("valid fleet")
}

fn sim(args: &[&str], count: usize) -> Lobby {
    let mut all = vec!["sim", "--listen-ip", "127.0.0.1"];
    all.extend_from_slice(args);
    let s = Lobby::start(&all, count);
    let addrs = s.addrs("sim", "udp");
    assert_eq!(addrs.len(), count);
    assert!(
        addrs.iter().all(|a| a.ip().is_loopback() && a.port() != 0),
        "{addrs:?}"
    );
    s
}

fn scan(c: &UdpSocket, master: SocketAddr) -> Vec<SocketAddr> {
    let filter = InfoString::new()
        .with("gamedir", "valve")
        .and_then(|f| f.with("clver", "0.21"))
        .and_then(|f| f.with("key", "1"))
        .unwrap();
    let mut p = Vec::new();
    ScanRequest {
        region: 0xff,
        last: None,
        filter,
        final_nul: true,
        malformed_last: false,
    }
    .encode(&mut p);
    c.send_to(&p, master).unwrap();
    let mut servers = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok((n, from)) = c.recv_from(&mut buf) {
        assert_eq!(from, master);
        let page = ServerListPage::decode(&buf[..n], false, true).unwrap();
        assert!(page.terminated);
        servers.extend(page.servers);
    }
    servers
}

#[test]
fn sim_fleet_registers_with_a_real_master_and_says_goodbye() {
    let master = Lobby::start(
        &[
            "master",
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--workers",
            "1",
        ],
        2,
    );
    let m = master.addr("master", "udp");
    // A second, fake master in the test: it sees the exact heartbeat exchange.
    let fake = UdpSocket::bind("127.0.0.1:0").unwrap();
    fake.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let fake_addr = fake.local_addr().unwrap();
    let count = 4;
    let s = sim(
        &[
            "--master",
            &m.to_string(),
            "--master",
            &fake_addr.to_string(),
            "--count",
            "4",
            "--seed",
            "3",
            "--bots",
            "1",
        ],
        count,
    );
    let sims: BTreeSet<SocketAddr> = s.addrs("sim", "udp").into_iter().collect();
    let configs = expected(FleetSpec {
        count: 4,
        seed: 3,
        bots: 1,
        ..FleetSpec::default()
    });

    // The real master lists every simulated server.
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed: BTreeSet<SocketAddr> = scan(&c, m).into_iter().collect();
        if listed == sims {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "master lists {listed:?}, want {sims:?}\nsim stderr:\n{}",
            s.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = http_get(master.addr("http", "tcp"), "/v1/servers/valve");
    assert_eq!(status, 200);
    let http: BTreeSet<String> = common::engine_entries(&body).into_iter().collect();
    assert_eq!(http, sims.iter().map(|a| format!("ip {a}")).collect());

    // The fake master sees each server's heartbeat, answers it, and gets its info.
    let mut buf = [0u8; 2048];
    let mut registered = BTreeMap::new();
    while registered.len() < count {
        let (n, from) = fake
            .recv_from(&mut buf)
            .expect("a heartbeat from every server");
        assert!(sims.contains(&from), "{from}");
        if let Ok(hb) = Heartbeat::decode(&buf[..n]) {
            assert_eq!(n, 6);
            let mut reply = Vec::new();
            ChallengeReply {
                master_challenge: 0xc0ff_ee01,
                echo: hb.challenge,
            }
            .encode(&mut reply);
            fake.send_to(&reply, from).unwrap();
        } else {
            let info = ServerInfo::decode(&buf[..n]).expect("info after the challenge");
            assert!(!info.trailing_newline);
            let add = ServerAdd::from_info(&info.info).unwrap();
            registered.insert(from, add);
        }
    }
    let addrs = s.addrs("sim", "udp");
    for (i, cfg) in configs.iter().enumerate() {
        let add = &registered[&addrs[i]];
        assert_eq!(add.challenge, 0xc0ff_ee01);
        assert_eq!(add.protocol, 49);
        assert_eq!(add.map, cfg.map.as_bytes());
        assert_eq!(add.gamedir, b"valve");
        assert_eq!(usize::from(add.players), cfg.players.len());
        assert_eq!(add.bots, 1);
        assert_eq!(add.max, cfg.max_players);
    }

    // SIGTERM: every server sends `b\n` to every master.
    let status = s.stop();
    assert!(status.success(), "{status:?}");
    let mut goodbyes = BTreeSet::new();
    while goodbyes.len() < count {
        let (n, from) = fake.recv_from(&mut buf).expect("b\\n from every server");
        if Shutdown::decode(&buf[..n]).is_ok() {
            goodbyes.insert(from);
        }
    }
    assert_eq!(goodbyes, sims);
    drop(master);
}

// ---------------------------------------------------------------- qstat

/// Debian installs qstat as `quakestat`; elsewhere it may be `qstat` (not to be
/// confused with the batch-queue tool of the same name).
fn qstat_binary() -> String {
    for bin in ["quakestat", "qstat"] {
        if let Ok(out) = Command::new(bin).arg("--help").output() {
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            if text.contains("-a2s") {
                return bin.to_string();
            }
        }
    }
    panic!("qstat (Debian package qstat, binary quakestat) is not installed: {INSTALL}");
}

/// The text of the first `<tag>…</tag>` in `xml`, XML entities decoded.
fn tag(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))? + start;
    Some(unescape(&xml[start..end]))
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// What qstat's XML says about one server.
#[derive(Debug)]
struct QstatServer {
    status: String,
    name: String,
    map: String,
    game: String,
    players: usize,
    max: usize,
    rules: BTreeMap<String, String>,
    player_list: BTreeMap<String, i32>,
}

fn parse_qstat(xml: &str) -> QstatServer {
    let status = xml
        .split("status=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_default()
        .to_string();
    let num = |t: &str| {
        tag(xml, t)
            .and_then(|v| v.parse().ok())
            .unwrap_or(usize::MAX)
    };
    let mut rules = BTreeMap::new();
    for part in xml.split("<rule name=\"").skip(1) {
        if let Some((k, rest)) = part.split_once("\">") {
            if let Some((v, _)) = rest.split_once("</rule>") {
                rules.insert(unescape(k), unescape(v));
            }
        }
    }
    let mut player_list = BTreeMap::new();
    for p in xml.split("<player>").skip(1) {
        let name = tag(p, "name").unwrap_or_default();
        let score = tag(p, "score")
            .and_then(|s| s.parse().ok())
            .unwrap_or(i32::MIN);
        player_list.insert(name, score);
    }
    QstatServer {
        status,
        name: tag(xml, "name").unwrap_or_default(),
        map: tag(xml, "map").unwrap_or_default(),
        game: tag(xml, "gametype").unwrap_or_default(),
        players: num("numplayers"),
        max: num("maxplayers"),
        rules,
        player_list,
    }
}

fn qstat(bin: &str, kind: &str, addr: SocketAddr) -> QstatServer {
    let out = Command::new(bin)
        .args([kind, &addr.to_string(), "-P", "-R", "-xml", "-timeout", "5"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"));
    let xml = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{bin} {kind} failed: {xml}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_qstat(&xml)
}

fn check_against_config(q: &QstatServer, cfg: &Config, what: &str) {
    assert_eq!(q.status, "UP", "{what}: {q:?}");
    assert_eq!(q.name, cfg.hostname, "{what}");
    assert_eq!(q.map, cfg.map, "{what}");
    assert_eq!(q.game, cfg.gamedir, "{what}");
    assert_eq!(
        q.players,
        cfg.players.len() + cfg.bots.len(),
        "{what}: A2S counts bots"
    );
    assert_eq!(q.max, usize::from(cfg.max_players), "{what}");
    let want: BTreeMap<String, i32> = cfg
        .players
        .iter()
        .chain(&cfg.bots)
        .map(|p| (p.name.clone(), p.frags))
        .collect();
    assert_eq!(q.player_list, want, "{what}: player names and scores");
    for (k, v) in &cfg.rules {
        assert_eq!(q.rules.get(k), Some(v), "{what}: rule {k}");
    }
    assert_eq!(
        q.rules.get("gamename").map(String::as_str),
        Some(cfg.game.as_str())
    );
    assert_eq!(q.rules.get("version").map(String::as_str), Some("0.21"));
    assert_eq!(q.rules.get("bots"), Some(&cfg.bots.len().to_string()));
}

#[test]
fn qstat_reads_what_the_sim_was_configured_with() {
    let bin = qstat_binary();
    // --big-rules: the rules reply comes in GoldSrc split packets, which qstat reassembles.
    let s = sim(
        &[
            "--count",
            "2",
            "--seed",
            "11",
            "--players",
            "3",
            "--bots",
            "1",
            "--big-rules",
        ],
        2,
    );
    let configs = expected(FleetSpec {
        count: 2,
        seed: 11,
        players: Some(3),
        bots: 1,
        big_rules: true,
        ..FleetSpec::default()
    });
    assert!(configs[0].rules.len() > 40);
    for (addr, cfg) in s.addrs("sim", "udp").into_iter().zip(&configs) {
        // qstat's A2S type, and its Half-Life (A2S) type.
        for kind in ["-a2s", "-hla2s"] {
            let q = qstat(&bin, kind, addr);
            check_against_config(&q, cfg, &format!("{bin} {kind} {addr}"));
        }
    }
    assert!(s.stop().success());
}

#[test]
fn qstat_reads_a_small_fleet_with_a_fixed_name() {
    let bin = qstat_binary();
    let s = sim(
        &[
            "--seed",
            "5",
            "--players",
            "2",
            "--hostname",
            "Lobby <test> & co",
            "--map",
            "datacore",
        ],
        1,
    );
    let cfg = &expected(FleetSpec {
        seed: 5,
        players: Some(2),
        hostname: Some("Lobby <test> & co".into()),
        map: Some("datacore".into()),
        ..FleetSpec::default()
    })[0];
    assert_eq!(cfg.hostname, "Lobby <test> & co");
    let q = qstat(&bin, "-a2s", s.addr("sim", "udp"));
    check_against_config(&q, cfg, "qstat -a2s");
    assert!(s.stop().success());
}

// ---------------------------------------------------------------- python-a2s

const PY: &str = r#"
import json, sys
import a2s
addr = (sys.argv[1], int(sys.argv[2]))
i = a2s.info(addr, timeout=5)
p = a2s.players(addr, timeout=5)
r = a2s.rules(addr, timeout=5)
print(json.dumps({
    "info": {
        "protocol": i.protocol, "server_name": i.server_name, "map_name": i.map_name,
        "folder": i.folder, "game": i.game, "app_id": i.app_id,
        "player_count": i.player_count, "max_players": i.max_players,
        "bot_count": i.bot_count, "server_type": i.server_type, "platform": i.platform,
        "password_protected": i.password_protected, "vac_enabled": i.vac_enabled,
        "version": i.version,
    },
    "players": [{"index": x.index, "name": x.name, "score": x.score, "duration": x.duration} for x in p],
    "rules": r,
}))
"#;

fn python_a2s() {
    let ok = Command::new("python3")
        .args(["-c", "import a2s"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "python3 with python-a2s (import a2s) is not available: {INSTALL}"
    );
}

#[test]
fn python_a2s_reads_what_the_sim_was_configured_with() {
    python_a2s();
    // No --big-rules here: python-a2s only reassembles Source-style split packets,
    // not the GoldSrc form a Xash server would use.
    let s = sim(
        &[
            "--seed",
            "9",
            "--players",
            "4",
            "--bots",
            "2",
            "--max-players",
            "12",
        ],
        1,
    );
    let cfg = &expected(FleetSpec {
        seed: 9,
        players: Some(4),
        bots: 2,
        max_players: Some(12),
        ..FleetSpec::default()
    })[0];
    let addr = s.addr("sim", "udp");
    let out = Command::new("python3")
        .args(["-c", PY, &addr.ip().to_string(), &addr.port().to_string()])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python-a2s failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let info = &v["info"];
    assert_eq!(info["protocol"], 49);
    assert_eq!(info["server_name"], cfg.hostname.as_str());
    assert_eq!(info["map_name"], cfg.map.as_str());
    assert_eq!(info["folder"], "valve");
    assert_eq!(info["game"], "Half-Life");
    assert_eq!(info["app_id"], 0);
    assert_eq!(info["player_count"], 6);
    assert_eq!(info["max_players"], 12);
    assert_eq!(info["bot_count"], 2);
    assert_eq!(info["server_type"], "d");
    assert_eq!(info["platform"], "l");
    assert_eq!(info["password_protected"], false);
    assert_eq!(info["vac_enabled"], false);
    assert_eq!(info["version"], "0.21");

    let players = v["players"].as_array().expect("players");
    let want: Vec<_> = cfg.players.iter().chain(&cfg.bots).collect();
    assert_eq!(players.len(), want.len());
    for (i, (got, p)) in players.iter().zip(&want).enumerate() {
        assert_eq!(got["index"], i, "index from 0 in slot order");
        assert_eq!(got["name"], p.name.as_str());
        assert_eq!(got["score"], p.frags);
        let d = got["duration"].as_f64().unwrap();
        if i < cfg.players.len() {
            let base = p.connected_for.as_secs_f64();
            assert!(d >= base && d < base + 60.0, "{} connected {d} s", p.name);
        } else {
            assert_eq!(d, -1.0, "bots report -1");
        }
    }

    let rules = v["rules"].as_object().expect("rules");
    assert_eq!(rules.len(), cfg.rules.len());
    for (k, val) in &cfg.rules {
        assert_eq!(
            rules.get(k).and_then(|x| x.as_str()),
            Some(val.as_str()),
            "rule {k}"
        );
    }
    assert!(s.stop().success());
}

/// A test tool that answers anyone with multi-datagram replies listens on
/// loopback unless told otherwise (issue 9, item 11).
#[test]
fn lobby_sim_listens_on_loopback_by_default() {
    let s = Lobby::start(&["sim", "--count", "2"], 2);
    let addrs = s.addrs("sim", "udp");
    assert!(
        addrs
            .iter()
            .all(|a| a.ip() == std::net::Ipv4Addr::LOCALHOST),
        "{addrs:?}"
    );
    // Still answers on loopback.
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        c.send_to(b"\xff\xff\xff\xffTSource Engine Query\0", addrs[0])
            .unwrap();
        if c.recv_from(&mut buf).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "no answer on loopback");
    }
    // A master elsewhere needs an explicit address, and nothing starts without one.
    let out = Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(["sim", "--master", "192.0.2.1:27010"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen-ip"));
}

#[test]
fn lobby_sim_protocol_48_answers_a2s_only_and_registers_nowhere() {
    // A fake master: a GoldSrc server sends it nothing, not even at shutdown.
    let fake = UdpSocket::bind("127.0.0.1:0").unwrap();
    let fake_addr = fake.local_addr().unwrap();
    let s = sim(
        &[
            "--protocol",
            "48",
            "--master",
            &fake_addr.to_string(),
            "--players",
            "2",
            "--gamedir",
            "cstrike",
        ],
        1,
    );
    let a = s.addr("sim", "udp");
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let ask = |p: &[u8], buf: &mut [u8]| -> Option<Vec<u8>> {
        c.send_to(p, a).unwrap();
        c.recv_from(buf).ok().map(|(n, _)| buf[..n].to_vec())
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let info = loop {
        if let Some(r) = ask(b"\xff\xff\xff\xffTSource Engine Query\0", &mut buf) {
            break xash::a2s::InfoReply::decode(&r).unwrap();
        }
        assert!(Instant::now() < deadline, "no A2S_INFO answer");
    };
    assert_eq!(info.protocol, 48);
    assert_eq!(info.folder, b"cstrike");
    assert_eq!(info.players, 2);
    // A2S_PLAYER after the challenge.
    let r = ask(b"\xff\xff\xff\xffU\xff\xff\xff\xff", &mut buf).expect("challenge");
    let challenge = xash::a2s::ChallengeReply::decode(&r).unwrap().challenge;
    let mut p = b"\xff\xff\xff\xffU".to_vec();
    p.extend_from_slice(&challenge.to_le_bytes());
    let r = ask(&p, &mut buf).expect("players");
    assert_eq!(
        xash::a2s::PlayersReply::decode(&r).unwrap().players.len(),
        2
    );
    // The Xash text queries get nothing.
    for q in [&b"info 49"[..], b"info 48", b"ping"] {
        let p = [&b"\xff\xff\xff\xff"[..], q].concat();
        assert_eq!(ask(&p, &mut buf), None, "{}", String::from_utf8_lossy(q));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !s.stderr().contains("--master is ignored") {
        assert!(Instant::now() < deadline, "no warning: {}", s.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(s.stop().success());
    fake.set_nonblocking(true).unwrap();
    assert!(
        fake.recv_from(&mut buf).is_err(),
        "no heartbeat and no b\\n to the master"
    );
}
