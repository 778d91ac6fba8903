//! The master engine driven directly: no sockets, time passed in.

use master::challenge::admin_hash;
use master::{AdminUser, Config, Counter, Engine, Outbox, Stats};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xash::admin::{AdminChallengeReply, AdminCommand, AdminReply};
use xash::master::{ChallengeReply, NatConnect, ServerListPage};
use xash::text::InfoReply;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// One datagram the engine queued, copied out of its outbox.
#[derive(Debug, Clone)]
struct Sent {
    to: SocketAddr,
    payload: Vec<u8>,
}

struct Rig {
    e: Engine,
    now: Instant,
}

impl Rig {
    fn new(config: Config) -> Rig {
        let t0 = Instant::now();
        let mut e = Engine::new(config, Arc::new(Stats::default()), [42; 32], t0);
        e.set_local_addrs(vec![addr("127.0.0.1:27010"), addr("[::1]:27010")]);
        Rig { e, now: t0 }
    }
    fn send(&mut self, p: &[u8], from: SocketAddr) -> Vec<Sent> {
        let mut out = Outbox::new();
        self.e.handle(p, from, self.now, &mut out);
        out.drain_owned()
            .into_iter()
            .map(|(to, payload)| Sent { to, payload })
            .collect()
    }
    fn advance(&mut self, d: Duration) {
        self.now += d;
        self.e.handle_timeout(self.now, &mut Outbox::new());
    }
    fn count(&self, c: Counter) -> u64 {
        self.e.stats().get(c)
    }
    /// The full handshake; returns whether the server is listed afterwards.
    fn register(&mut self, from: SocketAddr, info: &str) {
        let hb = [0x71, 0xff, 1, 2, 3, 4];
        let out = self.send(&hb, from);
        assert_eq!(out.len(), 1, "challenge reply");
        assert_eq!(out[0].to, from);
        let c = ChallengeReply::decode(out[0].payload.as_slice()).unwrap();
        assert_eq!(c.echo, Some(0x0403_0201));
        let mut p = b"0\n".to_vec();
        p.extend_from_slice(
            format!("\\protocol\\49\\challenge\\{}{}", c.master_challenge, info).as_bytes(),
        );
        assert!(self.send(&p, from).is_empty());
    }
    fn scan(&mut self, from: SocketAddr, filter: &str) -> (Vec<SocketAddr>, Vec<Sent>) {
        let mut p = b"1\xff0.0.0.0:0\0".to_vec();
        p.extend_from_slice(filter.as_bytes());
        p.push(0);
        let out = self.send(&p, from);
        let mut servers = Vec::new();
        for t in out.iter().filter(|t| t.to == from) {
            let page = ServerListPage::decode(
                t.payload.as_slice(),
                from.is_ipv6(),
                filter.contains("\\key\\"),
            )
            .unwrap();
            assert!(page.terminated, "every page ends with a terminator");
            servers.extend(page.servers);
        }
        (servers, out)
    }
}

const INFO: &str = "\\players\\0\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\0\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";
const CLIENT: &str = "198.51.100.7:27005";
const SCAN: &str = "\\gamedir\\valve\\clver\\0.21\\nat\\0\\key\\1";

#[test]
fn heartbeat_challenge_info_registers() {
    let mut r = Rig::new(Config::default());
    let s = addr("192.0.2.10:27015");
    r.register(s, INFO);
    assert_eq!(r.count(Counter::ServersAdded), 1);
    let (list, _) = r.scan(addr(CLIENT), SCAN);
    assert_eq!(list, vec![s]);
    // Again: a refresh, not a second entry.
    r.register(s, INFO);
    assert_eq!(r.count(Counter::ServersRefreshed), 1);
    assert_eq!(r.e.table().len(), 1);
}

#[test]
fn the_real_engine_exchange_registers() {
    // The captured heartbeat and info of a real Xash3D FWGS server; only the challenge
    // value (chosen by the master) differs from the capture.
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/xash3d/heartbeat/"
    );
    let hb = std::fs::read(format!("{dir}1_server_to_master_heartbeat.bin")).unwrap();
    let info = std::fs::read(format!("{dir}3_server_to_master_info.bin")).unwrap();
    let mut r = Rig::new(Config::default());
    let s = addr("127.0.0.1:27915");
    let out = r.send(&hb, s);
    let reply = out[0].payload.as_slice();
    assert_eq!(reply.len(), 14);
    assert_eq!(&reply[..6], b"\xff\xff\xff\xffs\n");
    assert_eq!(
        &reply[10..14],
        &hb[2..6],
        "the heartbeat challenge is echoed"
    );
    let ours = u32::from_le_bytes(reply[6..10].try_into().unwrap());
    let text = String::from_utf8(info.clone())
        .unwrap()
        .replace("3237998081", &ours.to_string());
    assert!(r.send(text.as_bytes(), s).is_empty());
    assert_eq!(r.e.table().len(), 1);
    // The capture as sent (the fake master's challenge) is refused.
    let mut r2 = Rig::new(Config::default());
    r2.send(&hb, s);
    r2.send(&info, s);
    assert_eq!(r2.e.table().len(), 0);
    assert_eq!(r2.count(Counter::DropBadChallenge), 1);
    // Shutdown is ignored.
    let bye = std::fs::read(format!("{dir}4_server_to_master_shutdown.bin")).unwrap();
    r.send(&bye, s);
    assert_eq!(r.e.table().len(), 1);
    assert_eq!(r.count(Counter::ShutdownsIgnored), 1);
}

#[test]
fn only_a_valid_challenge_from_the_same_address_registers() {
    let mut r = Rig::new(Config::default());
    let s = addr("192.0.2.10:27015");
    let out = r.send(b"q\xff", s);
    assert_eq!(
        out[0].payload.as_slice().len(),
        10,
        "legacy heartbeat gets 10 bytes"
    );
    let c = ChallengeReply::decode(out[0].payload.as_slice())
        .unwrap()
        .master_challenge;
    let info = |ch: String| format!("0\n\\protocol\\49\\challenge\\{ch}{INFO}").into_bytes();
    r.send(&info((c ^ 1).to_string()), s);
    r.send(&info(c.to_string()), addr("192.0.2.10:27016"));
    r.send(&info(c.to_string()), addr("192.0.2.11:27015"));
    r.send(format!("0\n\\protocol\\49{INFO}").as_bytes(), s);
    assert_eq!(r.e.table().len(), 0);
    assert_eq!(r.count(Counter::DropBadChallenge), 3);
    assert_eq!(r.count(Counter::DropBadInfo), 1, "missing challenge");
    // Expired: two windows later.
    r.advance(Duration::from_secs(125));
    r.send(&info(c.to_string()), s);
    assert_eq!(r.e.table().len(), 0);
    // A server below the minimum version is refused even with a good challenge.
    let c = ChallengeReply::decode(r.send(b"q\xff", s)[0].payload.as_slice())
        .unwrap()
        .master_challenge;
    r.send(
        format!("0\n\\challenge\\{c}\\version\\0.19.4\\gamedir\\valve").as_bytes(),
        s,
    );
    assert_eq!(r.count(Counter::DropOldServer), 1);
    r.send(&info(c.to_string()), s);
    assert_eq!(r.e.table().len(), 1);
}

#[test]
fn every_filter_key() {
    let mut r = Rig::new(Config::default());
    let reg = |r: &mut Rig, ip: &str, info: &str| r.register(addr(ip), info);
    reg(
        &mut r,
        "192.0.2.1:1",
        "\\gamedir\\valve\\map\\crossfire\\version\\0.21\\type\\d\\players\\0\\max\\8",
    );
    reg(
        &mut r,
        "192.0.2.2:1",
        "\\gamedir\\cstrike\\map\\de_dust\\version\\0.21\\type\\l\\players\\8\\max\\8\\password\\1",
    );
    reg(
        &mut r,
        "192.0.2.3:1",
        "\\gamedir\\valve\\map\\stalkyard\\version\\0.21\\players\\2\\max\\8\\secure\\1\\bots\\3",
    );
    reg(
        &mut r,
        "192.0.2.4:1",
        "\\gamedir\\valve\\map\\crossfire\\version\\0.21\\lan\\1\\nat\\1\\players\\1\\max\\8",
    );
    let c = addr(CLIENT);
    let cases: &[(&str, &[&str])] = &[
        (
            "",
            &["192.0.2.1:1", "192.0.2.2:1", "192.0.2.3:1", "192.0.2.4:1"],
        ),
        (
            "\\gamedir\\valve",
            &["192.0.2.1:1", "192.0.2.3:1", "192.0.2.4:1"],
        ),
        ("\\gamedir\\Valve", &[]),
        ("\\map\\crossfire", &["192.0.2.1:1", "192.0.2.4:1"]),
        (
            "\\protocol\\49",
            &["192.0.2.1:1", "192.0.2.2:1", "192.0.2.3:1", "192.0.2.4:1"],
        ),
        ("\\protocol\\48", &[]),
        ("\\dedicated\\1", &["192.0.2.1:1"]),
        ("\\password\\1", &["192.0.2.2:1"]),
        ("\\secure\\1", &["192.0.2.3:1"]),
        ("\\bots\\1", &["192.0.2.3:1"]),
        ("\\lan\\1", &["192.0.2.4:1"]),
        ("\\empty\\1", &["192.0.2.1:1"]),
        ("\\noplayers\\1", &["192.0.2.1:1"]),
        ("\\full\\1", &["192.0.2.2:1"]),
        ("\\full\\0\\empty\\0", &["192.0.2.3:1", "192.0.2.4:1"]),
        ("\\nat\\1", &["192.0.2.4:1"]),
        ("\\nat\\0", &["192.0.2.1:1", "192.0.2.2:1", "192.0.2.3:1"]),
        (
            "\\os\\linux\\arch\\amd64\\commit\\x\\branch\\master\\unknownkey\\1",
            &["192.0.2.1:1", "192.0.2.2:1", "192.0.2.3:1", "192.0.2.4:1"],
        ),
    ];
    for (i, (f, want)) in cases.iter().enumerate() {
        // Distinct client addresses so the rate limiter stays out of the way.
        let client = SocketAddr::new(format!("198.51.100.{}", i + 1).parse().unwrap(), c.port());
        let (mut got, _) = r.scan(client, &format!("{f}\\clver\\0.21"));
        got.sort();
        let want: Vec<SocketAddr> = want.iter().map(|s| addr(s)).collect();
        assert_eq!(got, want, "filter {f:?}");
    }
}

#[test]
fn bad_filter_values_get_no_reply() {
    let mut r = Rig::new(Config::default());
    r.register(addr("192.0.2.1:1"), INFO);
    for (i, f) in [
        "\\nat\\yes",
        "\\full\\2",
        "\\protocol\\x",
        "\\clver\\abc",
        "\\key\\zz",
        "\\nat",
    ]
    .iter()
    .enumerate()
    {
        let client = SocketAddr::new(format!("198.51.100.{}", i + 1).parse().unwrap(), 1);
        let (_, out) = r.scan(client, f);
        assert!(out.is_empty(), "{f}");
    }
    assert_eq!(
        r.count(Counter::DropBadFilter) + r.count(Counter::DropBadScan),
        6
    );
}

#[test]
fn paging_with_1400_and_512_byte_pages() {
    for (page, per_page) in [(1400usize, 230usize), (512, 82)] {
        let mut r = Rig::new(Config {
            page_size: page,
            max_servers_per_source: 1000,
            ..Config::default()
        });
        for i in 0..500u32 {
            let a = SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 27015));
            r.register(a, INFO);
        }
        let (list, out) = r.scan(addr(CLIENT), SCAN);
        assert_eq!(list.len(), 500);
        let mut dedup = list.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), 500);
        assert_eq!(out.len(), 500usize.div_ceil(per_page), "page size {page}");
        assert!(out.iter().all(|t| t.payload.as_slice().len() <= page));
        assert_eq!(out[0].payload.as_slice().len(), 6 + 6 + per_page * 6 + 6);
        // The same scan again comes from the page cache.
        let before = r.count(Counter::CachedPages);
        let (again, _) = r.scan(addr("198.51.100.8:1"), SCAN);
        assert_eq!(again, list);
        assert_eq!(r.count(Counter::CachedPages) - before, out.len() as u64);
    }
}

#[test]
fn nat_announce_semantics() {
    let mut r = Rig::new(Config::default());
    let direct = addr("192.0.2.1:1");
    let natted = addr("192.0.2.2:1");
    r.register(direct, INFO);
    r.register(natted, &INFO.replace("\\nat\\0", "\\nat\\1"));
    let announced = |out: &[Sent], client: SocketAddr| -> Vec<SocketAddr> {
        out.iter()
            .filter(|t| t.to != client)
            .map(|t| {
                assert_eq!(
                    NatConnect::decode(t.payload.as_slice()).unwrap().client,
                    client
                );
                t.to
            })
            .collect()
    };
    let c1 = addr("198.51.100.1:5");
    let (list, out) = r.scan(c1, "\\clver\\0.21");
    assert_eq!(list.len(), 2);
    assert_eq!(
        announced(&out, c1),
        vec![natted],
        "no nat key: all listed, NAT servers told"
    );
    let c2 = addr("198.51.100.2:5");
    let (list, out) = r.scan(c2, "\\clver\\0.21\\nat\\1");
    assert_eq!(list, vec![natted]);
    assert_eq!(announced(&out, c2), vec![natted]);
    let c3 = addr("198.51.100.3:5");
    let (list, out) = r.scan(c3, "\\clver\\0.21\\nat\\0");
    assert_eq!(list, vec![direct]);
    assert!(announced(&out, c3).is_empty());
}

#[test]
fn outdated_clients_get_the_update_entry_and_the_fake_info() {
    let mut r = Rig::new(Config {
        update_addr_v4: Some(addr("203.0.113.5:27010")),
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    let c = addr(CLIENT);
    let (list, _) = r.scan(c, "\\gamedir\\cstrike\\clver\\0.19\\key\\1");
    assert_eq!(list, vec![addr("203.0.113.5:27010")]);
    let out = r.send(b"\xff\xff\xff\xffinfo 48", c);
    assert_eq!(
        out[0].payload.as_slice(),
        b"\xff\xff\xff\xffinfo\n\\map\\Update please\\dm\\1\\team\\0\\coop\\0\\numcl\\0\\maxcl\\32\\gamedir\\cstrike\\password\\0\\dedicated\\0\\host\\https://github.com/FWGS/xash3d-fwgs",
        "the bytes observed from xash3d-master"
    );
    let out = r.send(b"\xff\xff\xff\xffinfo 49", addr("198.51.100.99:1"));
    let InfoReply::Info(i) = InfoReply::decode(out[0].payload.as_slice()).unwrap() else {
        panic!()
    };
    assert_eq!(i.get("p"), Some(&b"49"[..]));
    assert_eq!(i.get("gamedir"), Some(&b"valve"[..]));
    // Build-number gating.
    let mut r = Rig::new(Config {
        min_engine_buildnum: 4000,
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    assert_eq!(
        r.scan(addr("198.51.100.1:1"), "\\clver\\0.21\\buildnum\\3999")
            .0,
        vec![addr("127.0.0.1:27010")]
    );
    assert_eq!(
        r.scan(addr("198.51.100.2:1"), "\\clver\\0.21").0,
        vec![addr("127.0.0.1:27010")],
        "buildnum missing"
    );
    assert_eq!(
        r.scan(addr("198.51.100.3:1"), "\\clver\\0.21\\buildnum\\4000")
            .0,
        vec![addr("192.0.2.1:1")]
    );
    // A tool (no clver at all, like qstat) gets the real list by default.
    assert_eq!(
        r.scan(addr("198.51.100.4:1"), "").0,
        vec![addr("192.0.2.1:1")]
    );
    let out = r.send(b"1\xff0.0.0.0:0\0\0", addr("198.51.100.5:1"));
    assert_eq!(
        ServerListPage::decode(out[0].payload.as_slice(), false, false)
            .unwrap()
            .servers,
        vec![addr("192.0.2.1:1")]
    );
    // Unless the operator asks for xash3d-master's rule.
    let mut r = Rig::new(Config {
        require_clver: true,
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    assert_eq!(
        r.scan(addr("198.51.100.4:1"), "").0,
        vec![addr("127.0.0.1:27010")]
    );
}

#[test]
fn tools_get_valve_style_pages_and_fetch_the_rest_by_last_address() {
    let mut r = Rig::new(Config {
        max_servers_per_source: 1000,
        ..Config::default()
    });
    let mut all = Vec::new();
    for i in 0..500u32 {
        let a = SocketAddr::from(([10, 2, (i >> 8) as u8, i as u8], 27015));
        r.register(a, INFO);
        all.push(a);
    }
    all.sort();
    // qstat's first request: no clver, no key; one page, no terminator while more follow.
    let c = addr(CLIENT);
    let mut got = Vec::new();
    let mut req = b"1\xff0.0.0.0:0\0\0".to_vec();
    for round in 0.. {
        let out = r.send(&req, c);
        assert_eq!(out.len(), 1, "one datagram per request");
        let p = ServerListPage::decode(out[0].payload.as_slice(), false, false).unwrap();
        got.extend(p.servers.iter().copied());
        if p.terminated {
            break;
        }
        assert_eq!(p.servers.len(), 231, "1400-byte pages without key block");
        // qstat's follow-up: the last address, no NUL, a stray byte.
        let last = p.servers.last().unwrap().to_string();
        req = vec![b'1', 0xff];
        req.extend_from_slice(last.as_bytes());
        req.push(0x01);
        req.push(0);
        assert!(round < 5);
    }
    assert_eq!(got, all, "every server once, in order");
}

#[test]
fn qstat_second_page_request_is_answered_after_the_last_address() {
    let mut r = Rig::new(Config {
        max_servers_per_source: 100,
        ..Config::default()
    });
    for i in 1..=5u8 {
        r.register(SocketAddr::from(([10, 0, 0, i], 27015)), INFO);
    }
    let out = r.send(b"1\xff10.0.0.3:27015\x01\0", addr(CLIENT));
    let page = ServerListPage::decode(out[0].payload.as_slice(), false, false).unwrap();
    assert_eq!(
        page.servers,
        vec![addr("10.0.0.4:27015"), addr("10.0.0.5:27015")]
    );
}

#[test]
fn ipv4_clients_get_ipv4_lists_and_ipv6_clients_ipv6_lists() {
    let mut r = Rig::new(Config::default());
    r.register(addr("192.0.2.1:1"), INFO);
    r.register(addr("[2001:db8::1]:27015"), INFO);
    assert_eq!(r.scan(addr(CLIENT), SCAN).0, vec![addr("192.0.2.1:1")]);
    assert_eq!(
        r.scan(addr("[2001:db8:1::9]:5"), SCAN).0,
        vec![addr("[2001:db8::1]:27015")]
    );
}

#[test]
fn quotas_are_exact_and_the_table_is_capped() {
    let mut r = Rig::new(Config {
        max_servers_per_source: 14,
        max_servers: 20,
        ..Config::default()
    });
    for port in 0..16u16 {
        r.register(SocketAddr::from(([127, 0, 2, 1], 27000 + port)), INFO);
    }
    assert_eq!(
        r.e.table().len(),
        14,
        "exactly 14, not 15 as in xash3d-master"
    );
    assert_eq!(r.count(Counter::DropQuotaSource), 2);
    for i in 0..10u8 {
        r.register(SocketAddr::from(([127, 0, 3, i], 27000)), INFO);
    }
    assert_eq!(r.e.table().len(), 20);
    assert_eq!(r.count(Counter::DropQuotaGlobal), 4);
    // IPv6: one /64 is one source.
    let mut r = Rig::new(Config {
        max_servers_per_source: 2,
        ..Config::default()
    });
    for i in 1..=4 {
        r.register(addr(&format!("[2001:db8::{i}]:27015")), INFO);
    }
    assert_eq!(r.e.table().len(), 2);
}

#[test]
fn requests_are_rate_limited_with_decay() {
    let mut r = Rig::new(Config {
        rate_burst: 5.0,
        rate_decay: Duration::from_secs(3),
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    let c = addr(CLIENT);
    let answered = |r: &mut Rig| !r.scan(c, SCAN).1.is_empty();
    for _ in 0..5 {
        assert!(answered(&mut r));
    }
    assert!(!answered(&mut r), "the 6th quick scan gets nothing");
    assert_eq!(r.count(Counter::DropRateLimited), 1);
    r.now += Duration::from_secs(3);
    assert!(answered(&mut r), "one more after the decay");
    assert!(!answered(&mut r));
    assert!(
        !r.scan(addr("198.51.100.200:1"), SCAN).1.is_empty(),
        "other clients unaffected"
    );
}

#[test]
fn servers_expire_after_the_ttl() {
    let mut r = Rig::new(Config {
        server_ttl: Duration::from_secs(900),
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    r.advance(Duration::from_secs(899));
    assert_eq!(r.e.table().len(), 1);
    r.advance(Duration::from_secs(2));
    assert_eq!(r.e.table().len(), 0);
    assert_eq!(r.count(Counter::ServersExpired), 1);
    assert_eq!(r.count(Counter::Servers), 0);
}

#[test]
fn export_and_import_keep_servers_and_bans() {
    let mut r = Rig::new(Config::default());
    r.register(addr("192.0.2.1:1"), INFO);
    r.register(
        addr("[2001:db8::1]:27015"),
        &INFO.replace("valve", "cstrike"),
    );
    let saved = r.e.export(r.now);
    let json = serde_json::to_string(&saved).unwrap();
    let back: master::state::SavedState = serde_json::from_str(&json).unwrap();
    let mut r2 = Rig::new(Config::default());
    assert_eq!(r2.e.import(&back, r2.now), 2);
    assert_eq!(r2.scan(addr(CLIENT), SCAN).0, vec![addr("192.0.2.1:1")]);
    assert_eq!(r2.e.export(r2.now).servers, saved.servers);
}

fn admin_rig() -> Rig {
    Rig::new(Config {
        admins: vec![AdminUser {
            name: "gordon".into(),
            password: "crowbar".into(),
        }],
        admin_allow: vec![
            "192.0.2.0/24".parse().unwrap(),
            "2001:db8::/32".parse().unwrap(),
        ],
        ..Config::default()
    })
}

/// An `admin` datagram with a made-up challenge (what a spoofer can send).
fn garbage_admin(challenge: u32) -> Vec<u8> {
    let mut p = Vec::new();
    AdminCommand {
        master_challenge: challenge,
        hash: vec![0x55; 64],
        command: "list".into(),
    }
    .encode(&mut p);
    p
}

fn admin(r: &mut Rig, from: SocketAddr, password: &str, command: &str) -> Option<AdminReply> {
    let out = r.send(b"adminchallenge", from);
    let c = AdminChallengeReply::decode(out.first()?.payload.as_slice()).unwrap();
    let hash = admin_hash(password, c.hash_challenge, 64, "Half-Life", "Freeman");
    let mut p = Vec::new();
    AdminCommand {
        master_challenge: c.master_challenge,
        hash,
        command: command.into(),
    }
    .encode(&mut p);
    let out = r.send(&p, from);
    out.first()
        .map(|t| AdminReply::decode(t.payload.as_slice()).unwrap())
}

#[test]
fn admin_ban_unban_list_are_acknowledged() {
    let mut r = admin_rig();
    let op = addr("192.0.2.200:4000");
    r.register(addr("192.0.2.1:1"), INFO);
    r.register(addr("192.0.2.1:2"), INFO);
    let reply = admin(&mut r, op, "crowbar", "ban 192.0.2.1").unwrap();
    assert!(reply.ok, "{reply:?}");
    assert!(reply.text.contains("2 servers removed"), "{}", reply.text);
    assert_eq!(r.e.table().len(), 0);
    // A banned IP gets silence and cannot register.
    assert!(r.send(b"q\xff", addr("192.0.2.1:1")).is_empty());
    assert_eq!(r.count(Counter::DropBanned), 1);
    let list = admin(&mut r, op, "crowbar", "list").unwrap();
    assert!(list.text.contains("192.0.2.1"), "{}", list.text);
    assert!(admin(&mut r, op, "crowbar", "unban 192.0.2.1").unwrap().ok);
    r.register(addr("192.0.2.1:1"), INFO);
    assert_eq!(r.e.table().len(), 1);
    let bad = admin(&mut r, op, "crowbar", "ban not-an-ip").unwrap();
    assert!(!bad.ok);
    assert!(!admin(&mut r, op, "crowbar", "frobnicate").unwrap().ok);
}

#[test]
fn a_wrong_admin_password_locks_the_ip_out() {
    let mut r = admin_rig();
    let op = addr("192.0.2.200:4000");
    assert!(
        admin(&mut r, op, "wrong", "ban 192.0.2.1").is_none(),
        "no reply to a bad hash"
    );
    assert_eq!(r.count(Counter::DropAdminAuth), 1);
    assert!(admin(&mut r, op, "crowbar", "list").is_none(), "locked out");
    r.advance(Duration::from_secs(11));
    assert!(admin(&mut r, op, "crowbar", "list").unwrap().ok);
    // No admins configured: no challenge either.
    let mut r = Rig::new(Config::default());
    assert!(r.send(b"adminchallenge", op).is_empty());
}

#[test]
fn bad_input_changes_nothing_and_scans_still_work() {
    let mut r = Rig::new(Config {
        rate_burst: 1e9,
        ..Config::default()
    });
    r.register(addr("192.0.2.1:1"), INFO);
    let src = addr("192.0.2.66:1");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut junk: Vec<Vec<u8>> = (0..2000)
        .map(|i| {
            (0..(rnd() as usize % 1500))
                .map(|_| rnd() as u8)
                .collect::<Vec<u8>>()
                .into_iter()
                .take(i % 1500)
                .collect()
        })
        .collect();
    // Truncated and hostile versions of every message.
    for p in [
        &b"q\xff\x01"[..],
        b"q\xff\x01\x02\x03\x04\x05",
        b"0\n",
        b"0\n\\challenge",
        b"0\n\\challenge\\1\0\\x\\y",
        b"0\n\\challenge\\1\\nat\\2",
        b"0\n\\challenge\\1\\region\\9",
        b"1",
        b"1\xff",
        b"1\xff0.0.0.0",
        b"1\x090.0.0.0:0\0",
        b"1\xff0.0.0.0:0\0\\gamedir\\va\0lve\0",
        b"admin",
        b"adminchallengeX",
        b"\xff\xff\xff\xffinfo xx",
    ] {
        junk.push(p.to_vec());
    }
    junk.push(vec![b'1'; 70_000]);
    for p in &junk {
        let out = r.send(p, src);
        assert!(out.iter().all(|t| t.payload.as_slice().len() <= 1400));
    }
    assert_eq!(r.e.table().len(), 1, "nothing registered or removed");
    assert_eq!(r.scan(addr(CLIENT), SCAN).0, vec![addr("192.0.2.1:1")]);
    let dropped: u64 = Counter::ALL
        .iter()
        .filter(|c| c.name().starts_with("drop_"))
        .map(|&c| r.count(c))
        .sum();
    assert!(dropped > 0);
}

#[test]
fn garbage_admin_commands_neither_lock_out_nor_fill_the_lockout_table() {
    // Issue 9, item 7. Before: any decodable `admin` datagram created a lockout entry,
    // so a spoofed one locked the real admin out, and 4,096 of them disabled lockout.
    let mut r = admin_rig();
    let op = addr("192.0.2.200:4000");
    assert!(r.send(&garbage_admin(7), op).is_empty());
    assert_eq!(r.count(Counter::DropAdminBadChallenge), 1);
    assert_eq!(r.count(Counter::DropAdminAuth), 0);
    assert!(
        admin(&mut r, op, "crowbar", "list").unwrap().ok,
        "a spoofed datagram does not lock the admin out"
    );
    // Garbage from 5,000 sources (IPv6 /64s of the allowed /32), a few per second.
    for i in 0..5000u32 {
        let from: SocketAddr = format!("[2001:db8:{:x}:{:x}::1]:1", i >> 8, i & 0xff)
            .parse()
            .unwrap();
        r.send(&garbage_admin(i), from);
        if i % 16 == 0 {
            r.advance(Duration::from_millis(10));
        }
    }
    // A real wrong-password attempt still locks its source out.
    let x = addr("192.0.2.201:4000");
    assert!(admin(&mut r, x, "wrong", "list").is_none());
    assert_eq!(r.count(Counter::DropAdminAuth), 1);
    assert!(
        admin(&mut r, x, "crowbar", "list").is_none(),
        "locked out despite the garbage"
    );
}

#[test]
fn lockout_covers_the_ipv6_64_and_admin_allow_is_enforced() {
    let mut r = admin_rig();
    assert!(admin(&mut r, addr("[2001:db8:1:2::1]:5"), "wrong", "list").is_none());
    assert!(
        admin(&mut r, addr("[2001:db8:1:2::99]:5"), "crowbar", "list").is_none(),
        "another address of the same /64 is locked out too"
    );
    assert!(
        admin(&mut r, addr("[2001:db8:1:3::1]:5"), "crowbar", "list")
            .unwrap()
            .ok
    );
    // Outside admin_allow: no challenge, counted.
    assert!(r.send(b"adminchallenge", addr("198.51.100.1:5")).is_empty());
    assert!(r.send(&garbage_admin(1), addr("198.51.100.1:5")).is_empty());
    assert_eq!(r.count(Counter::DropAdminNotAllowed), 2);
    // The default allows loopback only.
    let mut d = Rig::new(Config {
        admins: vec![AdminUser {
            name: "gordon".into(),
            password: "crowbar".into(),
        }],
        ..Config::default()
    });
    assert!(admin(&mut d, addr("192.0.2.200:1"), "crowbar", "list").is_none());
    assert!(
        admin(&mut d, addr("127.0.0.1:1"), "crowbar", "list")
            .unwrap()
            .ok
    );
    assert!(
        admin(&mut d, addr("[::1]:1"), "crowbar", "list")
            .unwrap()
            .ok
    );
}

#[test]
fn admin_messages_are_rate_limited_per_source() {
    let mut r = admin_rig();
    let op = addr("192.0.2.200:4000");
    let answered = (0..40)
        .filter(|_| !r.send(b"adminchallenge", op).is_empty())
        .count();
    assert_eq!(answered, 16, "a burst of 16");
    assert_eq!(r.count(Counter::DropAdminRateLimited), 24);
    r.now += Duration::from_secs(2);
    assert!(admin(&mut r, op, "crowbar", "list").unwrap().ok);
}

#[test]
fn bans_take_networks_and_ipv6_64s_and_call_the_hook() {
    let mut r = admin_rig();
    let changes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = changes.clone();
    r.e.on_bans_changed(move || {
        c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let op = addr("192.0.2.200:4000");
    r.register(addr("198.51.100.5:1"), INFO);
    r.register(addr("198.51.100.6:1"), INFO);
    r.register(addr("[2001:db8:5:5::1]:1"), INFO);
    r.register(addr("203.0.113.1:1"), INFO);
    let reply = admin(
        &mut r,
        op,
        "crowbar",
        "ban 198.51.100.0/24 2001:db8:5:5::77",
    )
    .unwrap();
    assert!(reply.ok, "{reply:?}");
    assert!(
        reply
            .text
            .contains("198.51.100.0/24 2001:db8:5:5::/64 (3 servers removed)"),
        "{}",
        reply.text
    );
    assert_eq!(changes.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(r.e.table().len(), 1);
    assert!(r
        .send(b"q\xff\x01\x02\x03\x04", addr("198.51.100.77:1"))
        .is_empty());
    assert!(r
        .send(b"q\xff\x01\x02\x03\x04", addr("[2001:db8:5:5::abcd]:1"))
        .is_empty());
    assert_eq!(r.count(Counter::DropBanned), 2);
    // Saved and restored as networks; an older file's plain address is read too.
    let saved = r.e.export(r.now);
    let json = serde_json::to_string(&saved).unwrap();
    assert!(json.contains("\"198.51.100.0/24\""), "{json}");
    let old: master::state::SavedState =
        serde_json::from_str(r#"{"version":1,"servers":[],"bans":["192.0.2.9","2001:db8::1"]}"#)
            .unwrap();
    let mut r2 = Rig::new(Config::default());
    r2.e.import(&old, r2.now);
    assert!(r2.e.bans().contains("192.0.2.9".parse().unwrap()));
    assert!(r2.e.bans().contains("2001:db8::ffff".parse().unwrap()));
    // Repeating a ban changes nothing (no save), an unban does.
    admin(&mut r, op, "crowbar", "ban 198.51.100.0/24").unwrap();
    assert_eq!(changes.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        admin(&mut r, op, "crowbar", "unban 198.51.100.0/24")
            .unwrap()
            .ok
    );
    assert_eq!(changes.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert!(!admin(&mut r, op, "crowbar", "ban 10.0.0.0/40").unwrap().ok);
}

#[test]
fn a_full_rate_table_still_answers_new_servers_and_clients() {
    // Issue 9, item 6. Before: with the table full, every new source rebuilt the map
    // and was refused, heartbeats of new game servers included.
    let mut r = Rig::new(Config {
        rate_table_size: 64,
        rate_decay: Duration::from_secs(3600),
        ..Config::default()
    });
    for i in 0..5000u32 {
        let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i);
        r.send(b"q\xff\x01\x02\x03\x04", SocketAddr::from((ip, 9)));
        r.send(
            b"1\xff0.0.0.0:0\0\\clver\\0.21\0",
            SocketAddr::from((std::net::Ipv4Addr::from(0x0b00_0000 + i), 9)),
        );
    }
    r.register(addr("192.0.2.10:27015"), INFO);
    assert_eq!(r.e.table().len(), 1, "a new server registers");
    assert_eq!(
        r.scan(addr(CLIENT), SCAN).0.len(),
        1,
        "a new client is answered"
    );
    r.advance(Duration::from_secs(1));
    assert!(r.count(Counter::RateEvictions) > 0);
}

#[test]
fn replies_to_one_client_keep_to_its_byte_budget() {
    let mut r = Rig::new(Config {
        rate_burst: 1e9,
        scan_reply_bytes_per_sec: 2000,
        ..Config::default()
    });
    for i in 0..200u16 {
        r.register(
            SocketAddr::from(([10, 0, (i / 20) as u8, 1], 27000 + i)),
            INFO,
        );
    }
    let c = addr(CLIENT);
    // 200 servers: 1,226 bytes in one page. The first fits, the second does not.
    let (list, out) = r.scan(c, "\\clver\\0.21");
    assert_eq!(list.len(), 200);
    let bytes: usize = out.iter().map(|t| t.payload.len()).sum();
    assert!(bytes <= 2000, "{bytes}");
    assert!(r.scan(c, "\\clver\\0.21").1.is_empty());
    assert_eq!(r.count(Counter::DropReplyBudget), 1);
    r.now += Duration::from_millis(700);
    assert!(!r.scan(c, "\\clver\\0.21").1.is_empty(), "paid off");
    assert!(
        !r.scan(addr("198.51.100.8:1"), "\\clver\\0.21").1.is_empty(),
        "other clients unaffected"
    );
    // 0 turns the budget off.
    let mut u = Rig::new(Config {
        rate_burst: 1e9,
        scan_reply_bytes_per_sec: 0,
        ..Config::default()
    });
    u.register(addr("192.0.2.1:1"), INFO);
    for _ in 0..100 {
        assert!(!u.scan(c, SCAN).1.is_empty());
    }
}

#[test]
fn nat_announces_are_bounded_per_client_and_taken_in_turn() {
    let mut r = Rig::new(Config {
        rate_burst: 1e9,
        nat_announces_per_sec: 4,
        ..Config::default()
    });
    let nat_info = INFO.replace("\\nat\\0", "\\nat\\1");
    let servers: Vec<SocketAddr> = (0..10u16)
        .map(|i| SocketAddr::from(([10, 1, 0, 1], 27000 + i)))
        .collect();
    for &s in &servers {
        r.register(s, &nat_info);
    }
    let c = addr(CLIENT);
    let announced = |out: &[Sent]| -> Vec<SocketAddr> {
        out.iter().filter(|t| t.to != c).map(|t| t.to).collect()
    };
    let (list, out) = r.scan(c, "\\clver\\0.21\\nat\\1");
    assert_eq!(list.len(), 10, "the whole list");
    let first = announced(&out);
    assert_eq!(first.len(), 4, "4 announces per second");
    assert_eq!(r.count(Counter::NatAnnouncesLimited), 6);
    assert!(announced(&r.scan(c, "\\clver\\0.21\\nat\\1").1).is_empty());
    r.now += Duration::from_secs(1);
    let second = announced(&r.scan(c, "\\clver\\0.21\\nat\\1").1);
    assert_eq!(second.len(), 4);
    assert!(
        second.iter().all(|s| !first.contains(s)),
        "the next ones in turn"
    );
    // Another client has its own allowance.
    let other = addr("198.51.100.9:1");
    let (_, out) = r.scan(other, "\\clver\\0.21\\nat\\1");
    assert_eq!(out.iter().filter(|t| t.to != other).count(), 4);
}

#[test]
fn a_server_keeps_its_registration_time_across_heartbeats_and_a_restart() {
    let mut r = Rig::new(Config::default());
    let t0 = r.now;
    let s = addr("192.0.2.1:1");
    r.register(s, INFO);
    r.advance(Duration::from_secs(100));
    r.register(s, INFO); // a refresh
    let l = r.e.table().listed().next().unwrap();
    assert_eq!(l.since, t0);
    assert_eq!(l.heartbeat, t0 + Duration::from_secs(100));
    // Saved 20 s later and restored: listed for 120 s, not since the restart.
    r.advance(Duration::from_secs(20));
    let saved = r.e.export(r.now);
    assert_eq!(saved.servers[0].listed_secs, 120);
    let mut r2 = Rig::new(Config::default());
    r2.e.import(&saved, r2.now);
    let l = r2.e.table().listed().next().unwrap();
    assert_eq!(r2.now.duration_since(l.since), Duration::from_secs(120));
    assert_eq!(l.heartbeat, r2.now);
    // A state file written before `listed_secs` existed still loads.
    let mut old = serde_json::to_value(&saved).unwrap();
    old["servers"][0]
        .as_object_mut()
        .unwrap()
        .remove("listed_secs");
    let old: master::state::SavedState = serde_json::from_value(old).unwrap();
    assert_eq!(old.servers[0].listed_secs, 0);
}

#[test]
fn a_ban_past_the_cap_is_refused_with_its_message_and_changes_nothing() {
    let mut r = Rig::new(Config::default());
    let net: ipnet::IpNet = "192.0.2.0/24".parse().unwrap();
    let too_many = vec![net; master::bans::MAX_BANS + 1];
    let e = r.e.change_bans(true, &too_many).unwrap_err();
    assert_eq!(e, master::BanListFull);
    assert_eq!(
        e.to_string(),
        format!("the ban list is full ({} networks)", master::bans::MAX_BANS)
    );
    assert_eq!(r.e.bans().len(), 0);
    assert_eq!(r.e.change_bans(true, &[net]), Ok(0));
}

#[test]
fn config_errors_name_the_setting() {
    let c = Config {
        max_servers: 0,
        ..Config::default()
    };
    assert_eq!(c.validate(), Err(master::ConfigError::MaxServers));
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "max_servers_per_source and max_servers must be at least 1"
    );
    let c = Config {
        page_size: 10,
        ..Config::default()
    };
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("page_size must be between "));
}

#[test]
fn heartbeats_have_a_burst_of_twice_the_server_quota_per_source_then_one_per_decay() {
    let mut r = Rig::new(Config {
        max_servers_per_source: 3,
        rate_burst: 2.0,
        rate_decay: Duration::from_secs(2),
        ..Config::default()
    });
    let host = addr("192.0.2.10:27015");
    let hb = [0x71, 0xff, 1, 2, 3, 4];
    let answered = (0..10).filter(|_| !r.send(&hb, host).is_empty()).count();
    assert_eq!(answered, 6, "a burst of 2 × max_servers_per_source");
    assert_eq!(r.count(Counter::DropRateLimited), 4);
    assert_eq!(r.count(Counter::Heartbeats), 6);
    // Another port of the same address shares the budget; another address has its own.
    assert!(r.send(&hb, addr("192.0.2.10:27016")).is_empty());
    assert_eq!(r.send(&hb, addr("192.0.2.11:27015")).len(), 1);
    // A budget of its own: the client budget (a burst of 2) is untouched.
    let c = addr(CLIENT);
    assert!(!r.scan(c, SCAN).1.is_empty());
    r.now += Duration::from_secs(2);
    assert_eq!(r.send(&hb, host).len(), 1, "one more after rate_decay");
    assert!(r.send(&hb, host).is_empty());
}

#[test]
fn outdated_clients_are_remembered_for_five_seconds_and_at_most_4096() {
    let mut r = Rig::new(Config::default());
    let gamedir_of = |r: &mut Rig, c: SocketAddr| {
        let out = r.send(b"\xff\xff\xff\xffinfo 49", c);
        let InfoReply::Info(i) = InfoReply::decode(out[0].payload.as_slice()).unwrap() else {
            panic!("an info reply")
        };
        String::from_utf8(i.get("gamedir").unwrap().to_vec()).unwrap()
    };
    // Each in its own /24 (a /24 has a budget of its own too).
    let client =
        |i: u32| SocketAddr::from(([10 + (i >> 16) as u8, (i >> 8) as u8, i as u8, 1], 27005));
    for i in 0..4097 {
        r.scan(client(i), "\\gamedir\\cstrike\\clver\\0.19\\key\\1");
    }
    assert_eq!(r.count(Counter::FakeLists), 4097);
    assert_eq!(gamedir_of(&mut r, client(0)), "cstrike");
    assert_eq!(gamedir_of(&mut r, client(4095)), "cstrike");
    assert_eq!(
        gamedir_of(&mut r, client(4096)),
        "valve",
        "the 4,097th outdated client is not remembered"
    );
    r.advance(Duration::from_millis(4_900));
    assert_eq!(gamedir_of(&mut r, client(1)), "cstrike");
    r.advance(Duration::from_millis(100));
    assert_eq!(
        gamedir_of(&mut r, client(1)),
        "valve",
        "forgotten after 5 s"
    );
    // Swept (once a second): room again for a new one.
    r.advance(Duration::from_secs(1));
    r.scan(client(5000), "\\gamedir\\cstrike\\clver\\0.19\\key\\1");
    assert_eq!(gamedir_of(&mut r, client(5000)), "cstrike");
}

/// Counts the warn events the engine logs, and the `suppressed` field of the last.
#[derive(Default)]
struct WarnCounter {
    lines: std::sync::atomic::AtomicU64,
    last_suppressed: std::sync::atomic::AtomicU64,
}

struct Counting(Arc<WarnCounter>);

impl tracing::Subscriber for Counting {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        use std::sync::atomic::Ordering::Relaxed;
        struct Suppressed<'a>(&'a std::sync::atomic::AtomicU64);
        impl tracing::field::Visit for Suppressed<'_> {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "suppressed" {
                    self.0.store(value, Relaxed);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        if *event.metadata().level() == tracing::Level::WARN {
            self.0.lines.fetch_add(1, Relaxed);
            event.record(&mut Suppressed(&self.0.last_suppressed));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn refused_admin_messages_are_logged_at_most_20_a_second_and_the_rest_counted() {
    use std::sync::atomic::Ordering::Relaxed;
    let mut r = admin_rig();
    let warns = Arc::new(WarnCounter::default());
    tracing::subscriber::with_default(Counting(warns.clone()), || {
        for i in 0..100u8 {
            let stranger = SocketAddr::from(([198, 51, 100, i], 5));
            assert!(r.send(&garbage_admin(1), stranger).is_empty());
        }
        assert_eq!(r.count(Counter::DropAdminNotAllowed), 100, "all counted");
        assert_eq!(warns.lines.load(Relaxed), 20, "twenty lines at once");
        r.now += Duration::from_secs(1);
        r.send(&garbage_admin(1), addr("198.51.100.200:5"));
        assert_eq!(warns.lines.load(Relaxed), 21);
        assert_eq!(
            warns.last_suppressed.load(Relaxed),
            80,
            "the next line says how many were held back"
        );
    });
}
