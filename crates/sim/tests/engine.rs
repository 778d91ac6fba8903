//! The simulated server driven directly: no sockets, time passed in.

use proptest::prelude::*;
mod common;

use common::{sent, Sent};
use sim::{Config, FleetSpec, OccupantKind, Player, Protocol, Server};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use xash::a2s::{self, InfoRequest, PlayersReply, PlayersRequest, RulesReply, RulesRequest};
use xash::handshake::{
    BandwidthTest, ChallengeResponse, ClientConnect, Connect, ConnectProtInfo, Disconnect,
    GetChallenge, Reject, TestPacket,
};
use xash::info::InfoString;
use xash::master::{ChallengeReply, Heartbeat, NatConnect, ServerAdd, ServerInfo, ServerType};
use xash::split::{Fragment, Reassembler, ReassemblyLimits, SplitForm};
use xash::text::InfoReply;

const M1: &str = "127.0.0.1:27010";
const M2: &str = "127.0.0.2:27010";
const CLIENT: &str = "198.51.100.7:27005";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn player(name: &str, frags: i32) -> Player {
    Player {
        name: name.into(),
        frags,
        connected_for: Duration::from_secs(100),
    }
}

fn config() -> Config {
    Config {
        hostname: "Test server".into(),
        map: "crossfire".into(),
        max_players: 4,
        masters: vec![addr(M1)],
        secret: 42,
        rules: vec![
            ("mp_timelimit".into(), "20".into()),
            ("sv_gravity".into(), "800".into()),
        ],
        ..Config::default()
    }
}

struct Rig {
    s: Server,
    t0: Instant,
    now: Instant,
}

impl Rig {
    fn new(c: Config) -> Rig {
        let t0 = Instant::now();
        Rig {
            s: Server::new(c, t0).unwrap(),
            t0,
            now: t0,
        }
    }
    fn at(&mut self, after_start: Duration) -> Vec<Sent> {
        self.now = self.t0 + after_start;
        sent(|o| self.s.handle_timeout(self.now, o))
    }
    fn send(&mut self, p: &[u8], from: &str) -> Vec<Sent> {
        sent(|o| self.s.handle(p, addr(from), self.now, o))
    }
    /// The heartbeat challenge sent to `master` in `out`.
    fn hb(out: &[Sent], master: &str) -> u32 {
        let t = out
            .iter()
            .find(|t| t.to == addr(master))
            .unwrap_or_else(|| panic!("no heartbeat to {master} in {out:?}"));
        assert_eq!(t.payload.len(), 6);
        Heartbeat::decode(&t.payload).unwrap().challenge.unwrap()
    }
    fn challenge_reply(master_challenge: u32, echo: u32) -> Vec<u8> {
        let mut b = Vec::new();
        ChallengeReply {
            master_challenge,
            echo: Some(echo),
        }
        .encode(&mut b);
        b
    }
    fn query_challenge(&mut self, from: &str) -> i32 {
        let mut b = Vec::new();
        PlayersRequest {
            challenge: a2s::NO_CHALLENGE,
        }
        .encode(&mut b);
        let out = self.send(&b, from);
        assert_eq!(out.len(), 1);
        a2s::ChallengeReply::decode(&out[0].payload)
            .unwrap()
            .challenge
    }
}

fn heartbeats(out: &[Sent]) -> usize {
    out.iter()
        .filter(|t| Heartbeat::decode(&t.payload).is_ok())
        .count()
}

fn enc<F: FnOnce(&mut Vec<u8>)>(f: F) -> Vec<u8> {
    let mut b = Vec::new();
    f(&mut b);
    b
}

// ---------------------------------------------------------------- heartbeats

#[test]
fn heartbeats_at_start_then_every_300_s() {
    let mut r = Rig::new(config());
    assert_eq!(r.s.poll_timeout(), Some(r.t0));
    let out = r.at(Duration::ZERO);
    assert_eq!(heartbeats(&out), 1);
    assert_eq!(out[0].to, addr(M1));
    assert_eq!(&out[0].payload[..2], b"q\xff");
    assert_eq!(r.s.poll_timeout(), Some(r.t0 + secs(300.0)));
    assert!(r.at(secs(299.9)).is_empty());
    let out = r.at(secs(300.0));
    assert_eq!(heartbeats(&out), 1);
    assert_eq!(r.s.poll_timeout(), Some(r.t0 + secs(600.0)));
}

#[test]
fn nat_servers_heartbeat_every_60_s() {
    let mut r = Rig::new(Config {
        nat: true,
        ..config()
    });
    assert_eq!(heartbeats(&r.at(Duration::ZERO)), 1);
    assert_eq!(r.s.poll_timeout(), Some(r.t0 + secs(60.0)));
    assert!(r.at(secs(59.0)).is_empty());
    assert_eq!(heartbeats(&r.at(secs(60.0))), 1);
    assert_eq!(heartbeats(&r.at(secs(120.0))), 1);
}

#[test]
fn every_master_gets_its_own_fresh_challenge() {
    let mut r = Rig::new(Config {
        masters: vec![addr(M1), addr(M2)],
        ..config()
    });
    let out = r.at(Duration::ZERO);
    assert_eq!(heartbeats(&out), 2);
    let (a, b) = (Rig::hb(&out, M1), Rig::hb(&out, M2));
    assert_ne!(a, b);
    let out = r.at(secs(300.0));
    assert_ne!(Rig::hb(&out, M1), a, "new challenge on every heartbeat");
    assert!(Rig::hb(&out, M1) <= i32::MAX as u32);
}

#[test]
fn no_heartbeats_without_masters_or_as_single_player() {
    let mut r = Rig::new(Config {
        masters: vec![],
        ..config()
    });
    assert_eq!(r.s.poll_timeout(), None);
    assert!(r.at(secs(1000.0)).is_empty());
    assert!(sent(|o| r.s.shutdown(o)).is_empty());
    let mut r = Rig::new(Config {
        max_players: 1,
        ..config()
    });
    assert_eq!(r.s.poll_timeout(), None);
    assert!(sent(|o| r.s.shutdown(o)).is_empty());
    // A single-player server does not answer `info` either.
    assert!(r.send(b"\xff\xff\xff\xffinfo 49", CLIENT).is_empty());
}

#[test]
fn shutdown_says_b_newline_to_every_master() {
    let mut r = Rig::new(Config {
        masters: vec![addr(M1), addr(M2)],
        ..config()
    });
    let out = sent(|o| r.s.shutdown(o));
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|t| t.payload == b"b\n"));
    assert_eq!(out[0].to, addr(M1));
    assert_eq!(out[1].to, addr(M2));
}

// ---------------------------------------------------------------- master challenge

#[test]
fn master_challenge_accepted_once_with_the_info_in_engine_order() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 3), player("bob", 1)],
        bots: vec![player("[BOT] gman", 0)],
        password: Some("pw".into()),
        ..config()
    });
    let hb = Rig::hb(&r.at(Duration::ZERO), M1);
    r.now = r.t0 + secs(1.0);
    let out = r.send(&Rig::challenge_reply(777, hb), M1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, addr(M1));
    let info = ServerInfo::decode(&out[0].payload).unwrap();
    assert!(!info.trailing_newline);
    let keys: Vec<&[u8]> = info.info.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "protocol",
            "challenge",
            "players",
            "max",
            "bots",
            "gamedir",
            "map",
            "type",
            "password",
            "os",
            "secure",
            "lan",
            "version",
            "region",
            "product",
            "nat"
        ]
        .map(str::as_bytes)
    );
    let add = ServerAdd::from_info(&info.info).unwrap();
    assert_eq!(add.protocol, 49);
    assert_eq!(add.challenge, 777);
    assert_eq!(
        (add.players, add.max, add.bots),
        (2, 4, 1),
        "players without bots"
    );
    assert_eq!(add.gamedir, b"valve");
    assert_eq!(add.map, b"crossfire");
    assert_eq!(add.server_type, ServerType::Dedicated);
    assert!(!add.password, "inverted: 0 means a password is set");
    assert_eq!(info.info.get("os"), Some(&b"w"[..]));
    assert_eq!(info.info.get("version"), Some(&b"0.21"[..]));
    assert_eq!(info.info.get("region"), Some(&b"255"[..]));
    assert_eq!(info.info.get("product"), Some(&b"valve"[..]));
    assert_eq!(info.info.get("nat"), Some(&b"0"[..]));
    // Only once per heartbeat.
    assert!(r.send(&Rig::challenge_reply(777, hb), M1).is_empty());
    assert_eq!(r.s.stats().challenge_unexpected, 1);
    assert_eq!(r.s.stats().master_infos, 1);
}

#[test]
fn master_challenge_only_from_that_master() {
    let mut r = Rig::new(Config {
        masters: vec![addr(M1), addr(M2)],
        ..config()
    });
    let out = r.at(Duration::ZERO);
    let (h1, h2) = (Rig::hb(&out, M1), Rig::hb(&out, M2));
    // From a stranger, with a perfectly valid echo: ignored.
    assert!(r.send(&Rig::challenge_reply(5, h1), CLIENT).is_empty());
    assert!(r
        .send(&Rig::challenge_reply(5, h1), "127.0.0.1:27011")
        .is_empty());
    assert_eq!(r.s.stats().challenge_not_from_master, 2);
    // From the other master, echoing the first master's challenge: ignored.
    assert!(r.send(&Rig::challenge_reply(5, h1), M2).is_empty());
    assert_eq!(r.s.stats().challenge_wrong_echo, 1);
    // Each master with its own echo: accepted.
    assert_eq!(r.send(&Rig::challenge_reply(5, h1), M1).len(), 1);
    assert_eq!(r.send(&Rig::challenge_reply(6, h2), M2).len(), 1);
}

#[test]
fn master_challenge_needs_the_right_echo() {
    let mut r = Rig::new(config());
    let hb = Rig::hb(&r.at(Duration::ZERO), M1);
    assert!(r.send(&Rig::challenge_reply(5, hb ^ 1), M1).is_empty());
    // The 10-byte form (no echo) does not match a 6-byte heartbeat.
    let legacy = enc(|b| {
        ChallengeReply {
            master_challenge: 5,
            echo: None,
        }
        .encode(b)
    });
    assert!(r.send(&legacy, M1).is_empty());
    assert_eq!(r.s.stats().challenge_wrong_echo, 2);
    // Garbage with the header is dropped.
    assert!(r.send(b"\xff\xff\xff\xffs\n\x01", M1).is_empty());
    // The right one still works.
    assert_eq!(r.send(&Rig::challenge_reply(5, hb), M1).len(), 1);
}

#[test]
fn master_challenge_only_within_4_s() {
    let mut r = Rig::new(config());
    let hb = Rig::hb(&r.at(Duration::ZERO), M1);
    r.now = r.t0 + secs(4.001);
    assert!(r.send(&Rig::challenge_reply(5, hb), M1).is_empty());
    assert_eq!(r.s.stats().challenge_too_late, 1);
    // At the next heartbeat, exactly 4 s later is still in time.
    let hb = Rig::hb(&r.at(secs(300.0)), M1);
    r.now = r.t0 + secs(304.0);
    assert_eq!(r.send(&Rig::challenge_reply(5, hb), M1).len(), 1);
}

#[test]
fn packets_from_a_master_are_only_challenges_and_nat_connects() {
    let mut r = Rig::new(config());
    assert!(r.send(b"\xff\xff\xff\xffping", M1).is_empty());
    assert!(r.send(b"\xff\xff\xff\xffinfo 49", M1).is_empty());
    assert_eq!(r.s.stats().master_other, 2);
}

// ---------------------------------------------------------------- NAT

fn nat_connect(client: &str) -> Vec<u8> {
    enc(|b| {
        NatConnect {
            client: addr(client),
        }
        .encode(b)
    })
}

#[test]
fn nat_connect_sends_the_info_reply_to_the_client() {
    let mut r = Rig::new(Config {
        nat: true,
        ..config()
    });
    let out = r.send(&nat_connect(CLIENT), M1);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, addr(CLIENT), "to the client, not the master");
    let InfoReply::Info(info) = InfoReply::decode(&out[0].payload).unwrap() else {
        panic!("not an info string")
    };
    assert!(out[0]
        .payload
        .starts_with(b"\xff\xff\xff\xffinfo\n\\p\\49\\"));
    assert_eq!(info.get("host"), Some(&b"Test server"[..]));
    // Not from a stranger.
    assert!(r.send(&nat_connect(CLIENT), "203.0.113.9:27010").is_empty());
    // Not for private or loopback clients (engine NET_IsReservedAdr)...
    assert!(r.send(&nat_connect("192.168.1.10:27005"), M1).is_empty());
    assert!(r.send(&nat_connect("127.0.0.1:27005"), M1).is_empty());
    assert_eq!(r.s.stats().nat_ignored, 3);
    assert_eq!(r.s.stats().nat_connects, 1);
    // ...unless allowed.
    let mut r = Rig::new(Config {
        nat: true,
        nat_allow_private: true,
        ..config()
    });
    assert_eq!(
        r.send(&nat_connect("127.0.0.1:27005"), M1)[0].to,
        addr("127.0.0.1:27005")
    );
}

#[test]
fn nat_connect_ignored_without_nat() {
    let mut r = Rig::new(config());
    assert!(r.send(&nat_connect(CLIENT), M1).is_empty());
    assert_eq!(r.s.stats().nat_ignored, 1);
}

#[test]
fn nat_flag_in_the_master_info() {
    let mut r = Rig::new(Config {
        nat: true,
        ..config()
    });
    let hb = Rig::hb(&r.at(Duration::ZERO), M1);
    let out = r.send(&Rig::challenge_reply(1, hb), M1);
    let info = ServerInfo::decode(&out[0].payload).unwrap();
    assert_eq!(info.info.get("nat"), Some(&b"1"[..]));
    assert_eq!(
        info.info.get("password"),
        Some(&b"1"[..]),
        "1 = no password"
    );
}

// ---------------------------------------------------------------- queries

#[test]
fn ping_and_i() {
    let mut r = Rig::new(config());
    assert_eq!(
        r.send(b"\xff\xff\xff\xffping", CLIENT)[0].payload,
        b"\xff\xff\xff\xffack"
    );
    assert_eq!(
        r.send(b"\xff\xff\xff\xffi", CLIENT)[0].payload,
        b"\xff\xff\xff\xffj"
    );
    assert!(r.send(b"\xff\xff\xff\xffack", CLIENT).is_empty());
    assert!(r.send(b"\xff\xff\xff\xffj", CLIENT).is_empty());
    assert_eq!(r.s.stats().pings, 2);
    assert_eq!(r.s.stats().acks, 2);
}

#[test]
fn info_49_and_other_versions() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 1)],
        bots: vec![player("bot", 0)],
        ..config()
    });
    let out = r.send(b"\xff\xff\xff\xffinfo 49", CLIENT);
    let InfoReply::Info(info) = InfoReply::decode(&out[0].payload).unwrap() else {
        panic!()
    };
    assert_eq!(info.get("numcl"), Some(&b"1"[..]), "without bots");
    assert_eq!(info.get("maxcl"), Some(&b"4"[..]));
    assert_eq!(info.get("map"), Some(&b"crossfire"[..]));
    assert_eq!(info.get("password"), Some(&b"0"[..]));
    assert_eq!(info.iter().last().unwrap().0, b"host");
    for req in [&b"info 48"[..], b"info", b"info abc", b"info 490"] {
        let p = [&b"\xff\xff\xff\xff"[..], req].concat();
        let out = r.send(&p, CLIENT);
        assert_eq!(
            out[0].payload,
            b"\xff\xff\xff\xffinfo\nTest server: wrong version\n",
            "{}",
            String::from_utf8_lossy(req)
        );
    }
}

#[test]
fn a2s_info_is_never_challenged_and_counts_bots() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 1)],
        bots: vec![player("bot", 0)],
        password: Some("x".into()),
        ..config()
    });
    let bare = enc(|b| InfoRequest { challenge: None }.encode(b));
    let with = enc(|b| {
        InfoRequest {
            challenge: Some(-1),
        }
        .encode(b)
    });
    let other = enc(|b| {
        InfoRequest {
            challenge: Some(0x1234),
        }
        .encode(b)
    });
    let first = r.send(&bare, CLIENT);
    assert_eq!(first.len(), 1);
    for p in [&with, &other] {
        assert_eq!(r.send(p, CLIENT), first, "a challenge appended is ignored");
    }
    let info = a2s::InfoReply::decode(&first[0].payload).unwrap();
    assert_eq!(info.protocol, 49);
    assert_eq!(info.name, b"Test server");
    assert_eq!((info.players, info.max_players, info.bots), (2, 4, 1));
    assert!(info.password);
    assert_eq!(info.game, b"Half-Life");
    assert_eq!(info.version, b"0.21");
    assert_eq!(info.extra, None);
}

fn players_req(c: i32) -> Vec<u8> {
    enc(|b| PlayersRequest { challenge: c }.encode(b))
}

fn rules_req(c: i32) -> Vec<u8> {
    enc(|b| RulesRequest { challenge: c }.encode(b))
}

#[test]
fn a2s_players_and_rules_need_the_challenge() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 7), player("bob", -1)],
        bots: vec![player("[BOT] gman", 2)],
        ..config()
    });
    // -1, 0 (python-a2s), a random value, or no challenge at all: `A` + challenge.
    let mut seen = Vec::new();
    for p in [
        players_req(-1),
        players_req(0),
        players_req(12345),
        rules_req(-1),
        rules_req(0),
        b"\xff\xff\xff\xffU".to_vec(),
        b"\xff\xff\xff\xffV\x01\x02".to_vec(),
    ] {
        let out = r.send(&p, CLIENT);
        assert_eq!(out.len(), 1, "{p:?}");
        let c = a2s::ChallengeReply::decode(&out[0].payload)
            .unwrap()
            .challenge;
        assert!(c != -1 && c != 0);
        seen.push(c);
    }
    assert!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "stateless: same IP, same window"
    );
    let c = seen[0];
    let out = r.send(&players_req(c), CLIENT);
    let players = PlayersReply::decode(&out[0].payload).unwrap().players;
    let names: Vec<&[u8]> = players.iter().map(|p| p.name.as_slice()).collect();
    assert_eq!(names, [&b"alice"[..], b"bob", b"[BOT] gman"]);
    assert_eq!(
        players.iter().map(|p| p.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(players[0].frags, 7);
    assert_eq!(players[1].frags, -1);
    assert!((players[0].duration - 100.0).abs() < 0.01);
    assert_eq!(players[2].duration, -1.0, "bots report -1");
    let out = r.send(&rules_req(c), CLIENT);
    let rules = RulesReply::decode(&out[0].payload).unwrap();
    assert_eq!(rules.get(b"mp_timelimit"), Some(&b"20"[..]));
    assert_eq!(rules.rules.len(), 2);
    assert_eq!(r.s.stats().a2s_challenges, 7);
}

#[test]
fn query_challenge_window_is_5_s_current_and_previous() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 0)],
        ..config()
    });
    r.now = r.t0 + secs(1.0);
    let c = r.query_challenge(CLIENT);
    // Same window, and the next one: accepted.
    for t in [1.0, 4.9, 5.1, 9.9] {
        r.now = r.t0 + secs(t);
        let out = r.send(&players_req(c), CLIENT);
        assert!(PlayersReply::decode(&out[0].payload).is_ok(), "at {t} s");
    }
    // Two windows later: a fresh challenge instead.
    r.now = r.t0 + secs(10.1);
    let out = r.send(&players_req(c), CLIENT);
    let fresh = a2s::ChallengeReply::decode(&out[0].payload)
        .unwrap()
        .challenge;
    assert_ne!(fresh, c);
    // Not bound to the port, bound to the IP.
    let other_port = r.query_challenge("198.51.100.7:1");
    assert_eq!(other_port, fresh);
    let other_ip = r.query_challenge("198.51.100.8:27005");
    assert_ne!(other_ip, fresh);
}

#[test]
fn no_players_reply_when_empty_or_password_protected() {
    let mut r = Rig::new(config());
    let c = r.query_challenge(CLIENT);
    assert!(
        r.send(&players_req(c), CLIENT).is_empty(),
        "nobody connected"
    );
    let mut r = Rig::new(Config {
        players: vec![player("alice", 0)],
        password: Some("pw".into()),
        ..config()
    });
    let c = r.query_challenge(CLIENT);
    assert!(r.send(&players_req(c), CLIENT).is_empty(), "password set");
    let mut r = Rig::new(Config {
        players: vec![player("alice", 0)],
        expose_players: false,
        ..config()
    });
    let c = r.query_challenge(CLIENT);
    assert!(
        r.send(&players_req(c), CLIENT).is_empty(),
        "sv_expose_player_list 0"
    );
    let mut r = Rig::new(Config {
        rules: vec![],
        ..config()
    });
    let c = r.query_challenge(CLIENT);
    assert!(r.send(&rules_req(c), CLIENT).is_empty(), "no rules");
}

#[test]
fn big_rules_are_split_in_the_goldsrc_form() {
    let spec = FleetSpec {
        big_rules: true,
        players: Some(1),
        ..FleetSpec::default()
    };
    let cfg = spec.config(0).unwrap();
    let mut r = Rig::new(cfg.clone());
    let whole = r.s.a2s_rules().unwrap();
    assert!(whole.len() > 1400, "{} bytes", whole.len());
    let c = r.query_challenge(CLIENT);
    let out = r.send(&rules_req(c), CLIENT);
    assert!(out.len() >= 2 && out.len() <= 5, "{} fragments", out.len());
    let mut ra = Reassembler::new(ReassemblyLimits::goldsrc(secs(3.0)));
    let mut done = None;
    for (i, t) in out.iter().enumerate().rev() {
        assert!(t.payload.len() <= 1400);
        if i + 1 < out.len() {
            assert_eq!(t.payload.len(), 1400, "all but the last are full");
        }
        let f = Fragment::decode_as(&t.payload, SplitForm::GoldSrc).unwrap();
        assert_eq!(usize::from(f.total), out.len());
        assert_eq!(Fragment::detect(&t.payload).unwrap(), SplitForm::GoldSrc);
        if let Some(m) = ra.push(f, r.now).unwrap() {
            done = Some(m);
        }
    }
    let message = done.expect("reassembled");
    assert_eq!(message, whole);
    let rules = RulesReply::decode(&message).unwrap();
    assert_eq!(rules.rules.len(), cfg.rules.len());
    for (k, v) in &cfg.rules {
        assert_eq!(rules.get(k.as_bytes()), Some(v.as_bytes()));
    }
    // A second reply uses a new sequence number.
    let again = r.send(&rules_req(c), CLIENT);
    let s1 = Fragment::decode_as(&out[0].payload, SplitForm::GoldSrc)
        .unwrap()
        .sequence;
    let s2 = Fragment::decode_as(&again[0].payload, SplitForm::GoldSrc)
        .unwrap()
        .sequence;
    assert_ne!(s1, s2);
}

#[test]
fn old_goldsrc_text_queries_are_ignored_by_default() {
    let mut r = Rig::new(Config {
        players: vec![player("alice", 0)],
        ..config()
    });
    for q in ["details", "players", "rules", "infostring"] {
        let p = [&b"\xff\xff\xff\xff"[..], q.as_bytes()].concat();
        assert!(r.send(&p, CLIENT).is_empty(), "{q}");
    }
    assert_eq!(r.s.stats().legacy_ignored, 4);
    let mut r = Rig::new(Config {
        players: vec![player("alice", 0)],
        legacy_queries: true,
        ..config()
    });
    r.s.set_local_addr(addr("192.0.2.1:27015"));
    let out = r.send(b"\xff\xff\xff\xffdetails", CLIENT);
    let d = a2s::LegacyInfoReply::decode(&out[0].payload).unwrap();
    assert_eq!(d.address, b"192.0.2.1:27015");
    assert_eq!(d.name, b"Test server");
    let out = r.send(b"\xff\xff\xff\xffplayers", CLIENT);
    assert_eq!(
        PlayersReply::decode(&out[0].payload).unwrap().players.len(),
        1
    );
    let out = r.send(b"\xff\xff\xff\xffrules", CLIENT);
    assert!(RulesReply::decode(&out[0].payload).is_ok());
}

// ---------------------------------------------------------------- handshake

fn getchallenge(r: &mut Rig, from: &str) -> (i32, Option<bool>) {
    let out = r.send(&enc(|b| GetChallenge::default().encode(b)), from);
    assert_eq!(out.len(), 1);
    match ChallengeResponse::decode(&out[0].payload).unwrap() {
        ChallengeResponse::Xash {
            challenge,
            bandwidth_test,
        } => (challenge, bandwidth_test),
        other => panic!("{other:?}"),
    }
}

fn uuid(n: u8) -> String {
    format!("{:032x}", u128::from(n) * 0x1111)
}

fn connect(
    protocol: i32,
    challenge: i32,
    qport: u16,
    name: &str,
    password: Option<&str>,
) -> Vec<u8> {
    let prot = ConnectProtInfo {
        uuid: uuid(qport as u8),
        qport,
        ext: 3,
        cookie: Some("0123456789abcdef".into()),
    }
    .to_info()
    .unwrap();
    let mut user = InfoString::new()
        .with("name", name)
        .unwrap()
        .with("model", "gordon")
        .unwrap();
    if let Some(p) = password {
        user.set("password", p).unwrap();
    }
    enc(|b| {
        Connect {
            protocol,
            challenge,
            protinfo: prot,
            userinfo: user,
        }
        .encode(b)
    })
}

fn reject_reason(out: &[Sent]) -> String {
    assert_eq!(out.len(), 3, "three datagrams: {out:?}");
    let a = Reject::decode(&out[0].payload).unwrap();
    let b = Reject::decode(&out[1].payload).unwrap();
    assert!(out[0].payload.starts_with(b"\xff\xff\xff\xfferrormsg\n"));
    assert!(out[1].payload.starts_with(b"\xff\xff\xff\xffprint\n"));
    assert_eq!(a, b);
    assert!(Disconnect::decode(&out[2].payload).is_ok());
    assert_eq!(out[2].payload, b"\xff\xff\xff\xffdisconnect\n");
    String::from_utf8(a.reason).unwrap()
}

#[test]
fn getchallenge_offers_the_bandwidth_test() {
    let mut r = Rig::new(config());
    let (c, bw) = getchallenge(&mut r, CLIENT);
    assert_eq!(bw, Some(true));
    assert_eq!(c, r.s.challenge(addr(CLIENT).ip(), r.now));
    // The bare form of the capture works too.
    assert_eq!(r.send(b"\xff\xff\xff\xffgetchallenge", CLIENT).len(), 1);
    let mut r = Rig::new(Config {
        bandwidth_test: false,
        ..config()
    });
    assert_eq!(getchallenge(&mut r, CLIENT).1, Some(false));
}

fn bandwidth(protocol: i32, size: u32, challenge: Option<i32>) -> Vec<u8> {
    enc(|b| {
        BandwidthTest {
            protocol,
            size,
            challenge,
        }
        .encode(b)
    })
}

#[test]
fn bandwidth_test_sends_exactly_the_size_asked() {
    let mut r = Rig::new(config());
    let (c, _) = getchallenge(&mut r, CLIENT);
    for size in BandwidthTest::CLIENT_SIZES
        .into_iter()
        .filter(|&s| s > 508)
        .chain([509, 1399])
    {
        let out = r.send(&bandwidth(49, size, Some(c)), CLIENT);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload.len(), size as usize);
        let t = TestPacket::decode(&out[0].payload).unwrap();
        assert!(t.crc_matches(), "size {size}");
    }
    assert_eq!(r.s.stats().test_packets, 6);
}

#[test]
fn bandwidth_test_skipped_gets_challenge_0() {
    let mut r = Rig::new(config());
    let (c, _) = getchallenge(&mut r, CLIENT);
    let skipped = |out: Vec<Sent>| {
        assert_eq!(out.len(), 1);
        match ChallengeResponse::decode(&out[0].payload).unwrap() {
            ChallengeResponse::Xash {
                challenge,
                bandwidth_test: Some(false),
            } => challenge,
            other => panic!("{other:?}"),
        }
    };
    for size in [508, 100, 1401, 65535] {
        assert_eq!(
            skipped(r.send(&bandwidth(49, size, Some(c)), CLIENT)),
            c,
            "{size}"
        );
    }
    assert_eq!(
        skipped(r.send(&bandwidth(49, 1400, None), CLIENT)),
        c,
        "no challenge"
    );
    let mut r = Rig::new(Config {
        bandwidth_test: false,
        ..config()
    });
    let (c, _) = getchallenge(&mut r, CLIENT);
    assert_eq!(
        skipped(r.send(&bandwidth(49, 1400, Some(c)), CLIENT)),
        c,
        "disabled"
    );
}

#[test]
fn bandwidth_test_rejects_wrong_protocol_and_bad_challenge() {
    let mut r = Rig::new(config());
    let (c, _) = getchallenge(&mut r, CLIENT);
    assert_eq!(
        reject_reason(&r.send(&bandwidth(48, 1400, Some(c)), CLIENT)),
        "unsupported protocol (48 should be 49)\n"
    );
    assert_eq!(
        reject_reason(&r.send(&bandwidth(49, 1400, Some(c ^ 0x55)), CLIENT)),
        "no challenge for your address\n"
    );
}

#[test]
fn connect_accepted_then_disconnect() {
    let mut r = Rig::new(config());
    r.at(Duration::ZERO);
    let (c, _) = getchallenge(&mut r, CLIENT);
    let out = r.send(&connect(49, c, 1111, "freeman", None), CLIENT);
    let reply = out
        .iter()
        .find(|t| t.to == addr(CLIENT))
        .expect("client_connect");
    let cc = ClientConnect::decode(&reply.payload).unwrap();
    let prot = cc.prot().unwrap();
    assert_eq!(prot.ext, 1, "only NET_EXT_SPLITSIZE is granted");
    assert!(!prot.cheats);
    assert_eq!(prot.challenge, Some(c));
    assert_eq!(prot.cookie, None);
    assert!(reply
        .payload
        .starts_with(b"\xff\xff\xff\xffclient_connect \\ext\\1\\cheats\\0\\challenge\\"));
    assert_eq!(r.s.human_count(), 1);
    let names: Vec<&str> = r.s.occupants().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["freeman"]);
    // The client appears in A2S_PLAYER.
    let qc = r.query_challenge("203.0.113.1:5000");
    let out = r.send(&players_req(qc), "203.0.113.1:5000");
    assert_eq!(
        PlayersReply::decode(&out[0].payload).unwrap().players[0].name,
        b"freeman"
    );
    // disconnect frees the slot.
    r.send(b"\xff\xff\xff\xffdisconnect\n", CLIENT);
    assert_eq!(r.s.human_count(), 0);
    assert_eq!(r.s.stats().disconnects, 1);
}

#[test]
fn connect_when_full_is_rejected() {
    let mut r = Rig::new(Config {
        max_players: 3,
        players: vec![player("alice", 0)],
        bots: vec![player("bot", 0)],
        ..config()
    });
    let (c, _) = getchallenge(&mut r, CLIENT);
    let out = r.send(&connect(49, c, 1, "a", None), CLIENT);
    assert!(out
        .iter()
        .any(|t| ClientConnect::decode(&t.payload).is_ok()));
    let other = "198.51.100.7:27006";
    let out = r.send(&connect(49, c, 2, "b", None), other);
    assert_eq!(reject_reason(&out), "server is full\n");
    // The same client reconnecting (same IP and qport) reuses its slot.
    let out = r.send(&connect(49, c, 1, "a", None), "198.51.100.7:30000");
    assert!(out
        .iter()
        .any(|t| ClientConnect::decode(&t.payload).is_ok()));
    assert_eq!(r.s.occupants().count(), 3);
}

#[test]
fn connect_rejects_in_the_engine_order_with_its_words() {
    let mut r = Rig::new(Config {
        password: Some("Secret".into()),
        ..config()
    });
    let (c, _) = getchallenge(&mut r, CLIENT);
    assert_eq!(
        reject_reason(&r.send(&connect(48, c ^ 1, 1, "a", None), CLIENT)),
        "unsupported protocol (48 should be 49)\n",
        "protocol is checked before the challenge"
    );
    assert_eq!(
        reject_reason(&r.send(&connect(49, c ^ 1, 1, "a", None), CLIENT)),
        "no challenge for your address\n"
    );
    assert_eq!(
        reject_reason(&r.send(&connect(49, c, 1, "a", Some("wrong")), CLIENT)),
        "invalid password\n"
    );
    assert_eq!(
        reject_reason(&r.send(&connect(49, c, 1, "a", None), CLIENT)),
        "invalid password\n"
    );
    // Case-insensitive, as Q_stricmp.
    let out = r.send(&connect(49, c, 1, "a", Some("secret")), CLIENT);
    assert!(out
        .iter()
        .any(|t| ClientConnect::decode(&t.payload).is_ok()));
    let short = format!("connect 49 {c} \"\\uuid\\{}\\qport\\1\"", uuid(1));
    assert_eq!(
        reject_reason(&r.send(
            &[&b"\xff\xff\xff\xff"[..], short.as_bytes()].concat(),
            CLIENT
        )),
        "insufficient connection info\n"
    );
    let bad_uuid = format!("connect 49 {c} \"\\uuid\\XYZ\\qport\\1\" \"\\name\\a\"");
    assert_eq!(
        reject_reason(&r.send(
            &[&b"\xff\xff\xff\xff"[..], bad_uuid.as_bytes()].concat(),
            CLIENT
        )),
        "invalid authentication certificate\n"
    );
    let bad_prot = format!("connect 49 {c} \"\\uuid\" \"\\name\\a\"");
    assert_eq!(
        reject_reason(&r.send(
            &[&b"\xff\xff\xff\xff"[..], bad_prot.as_bytes()].concat(),
            CLIENT
        )),
        "invalid protinfo in connect command\n"
    );
    let bad_user = format!("connect 49 {c} \"\\uuid\\{}\\qport\\1\" \"name\"", uuid(1));
    assert_eq!(
        reject_reason(&r.send(
            &[&b"\xff\xff\xff\xff"[..], bad_user.as_bytes()].concat(),
            CLIENT
        )),
        "invalid userinfo in connect command\n"
    );
    // Extra arguments are ignored, as in the engine.
    let extra = format!(
        "connect 49 {c} \"\\uuid\\{}\\qport\\9\" \"\\name\\z\\password\\SECRET\" extra",
        uuid(2)
    );
    let out = r.send(
        &[&b"\xff\xff\xff\xff"[..], extra.as_bytes()].concat(),
        "198.51.100.7:1",
    );
    assert!(
        out.iter()
            .any(|t| ClientConnect::decode(&t.payload).is_ok()),
        "{out:?}"
    );
}

#[test]
fn the_challenge_from_an_a2s_query_also_works_for_connect() {
    let mut r = Rig::new(config());
    let c = r.query_challenge(CLIENT);
    let out = r.send(&connect(49, c, 1, "a", None), CLIENT);
    assert!(out
        .iter()
        .any(|t| ClientConnect::decode(&t.payload).is_ok()));
}

#[test]
fn clients_time_out_after_30_s_of_silence() {
    let mut r = Rig::new(config());
    r.at(Duration::ZERO);
    let (c, _) = getchallenge(&mut r, CLIENT);
    r.send(&connect(49, c, 1, "a", None), CLIENT);
    assert_eq!(r.s.poll_timeout(), Some(r.t0 + secs(30.0)));
    // Netchan traffic keeps the slot.
    r.now = r.t0 + secs(20.0);
    r.send(b"\x01\x00\x00\x00\x01\x00\x00\x00", CLIENT);
    assert_eq!(r.s.stats().client_traffic, 1);
    assert!(r.at(secs(49.0)).is_empty());
    assert_eq!(r.s.human_count(), 1);
    let out = r.at(secs(50.0));
    assert_eq!(r.s.human_count(), 0);
    assert_eq!(r.s.stats().client_timeouts, 1);
    assert_eq!(heartbeats(&out), 1, "the server became empty");
}

// ---------------------------------------------------------------- player-count heartbeats

#[test]
fn heartbeat_at_once_when_the_first_client_comes_the_server_fills_or_empties() {
    let mut r = Rig::new(Config {
        max_players: 3,
        ..config()
    });
    r.at(Duration::ZERO);
    r.now = r.t0 + secs(10.0);
    let (c, _) = getchallenge(&mut r, CLIENT);
    let first = r.send(&connect(49, c, 1, "a", None), CLIENT);
    assert_eq!(heartbeats(&first), 1, "first client");
    assert_eq!(r.s.poll_timeout(), Some(r.now + secs(30.0)));
    // The master info after it counts the client.
    let hb = Rig::hb(&first, M1);
    let info = r.send(&Rig::challenge_reply(9, hb), M1);
    let add = ServerAdd::from_info(&ServerInfo::decode(&info[0].payload).unwrap().info).unwrap();
    assert_eq!(add.players, 1);
    let second = r.send(&connect(49, c, 2, "b", None), "198.51.100.7:2");
    assert_eq!(heartbeats(&second), 0, "neither first nor full");
    let third = r.send(&connect(49, c, 3, "c", None), "198.51.100.7:3");
    assert_eq!(heartbeats(&third), 1, "full");
    assert!(r
        .send(b"\xff\xff\xff\xffdisconnect", "198.51.100.7:3")
        .is_empty());
    assert!(r
        .send(b"\xff\xff\xff\xffdisconnect", "198.51.100.7:2")
        .is_empty());
    let last = r.send(b"\xff\xff\xff\xffdisconnect", CLIENT);
    assert_eq!(heartbeats(&last), 1, "empty");
    // The regular schedule restarts from the last heartbeat.
    assert_eq!(r.s.poll_timeout(), Some(r.now + secs(300.0)));
    assert!(r
        .s
        .occupants()
        .all(|o| !matches!(o.kind, OccupantKind::Client { .. })));
}

// ---------------------------------------------------------------- robustness

#[test]
fn config_is_validated() {
    let t0 = Instant::now();
    for bad in [
        Config {
            hostname: "a\\b".into(),
            ..config()
        },
        Config {
            map: String::new(),
            ..config()
        },
        Config {
            max_players: 0,
            ..config()
        },
        Config {
            max_players: 33,
            ..config()
        },
        Config {
            max_players: 1,
            players: vec![player("a", 0), player("b", 0)],
            ..config()
        },
        Config {
            rules: (0..400)
                .map(|i| (format!("rule{i}"), "x".repeat(100)))
                .collect(),
            ..config()
        },
    ] {
        assert!(Server::new(bad, t0).is_err());
    }
}

#[test]
fn fleets_are_deterministic_and_varied() {
    let spec = FleetSpec {
        count: 20,
        seed: 7,
        ..FleetSpec::default()
    };
    let a = spec.configs().unwrap();
    assert_eq!(a, spec.configs().unwrap());
    let names: std::collections::HashSet<_> = a.iter().map(|c| c.hostname.clone()).collect();
    assert_eq!(names.len(), 20, "unique names");
    let maps: std::collections::HashSet<_> = a.iter().map(|c| c.map.clone()).collect();
    assert!(maps.len() > 3, "{maps:?}");
    let counts: std::collections::HashSet<_> = a.iter().map(|c| c.players.len()).collect();
    assert!(counts.len() > 2, "{counts:?}");
    for c in &a {
        let names: std::collections::HashSet<_> = c.players.iter().map(|p| &p.name).collect();
        assert_eq!(
            names.len(),
            c.players.len(),
            "unique player names per server"
        );
    }
    let other = FleetSpec {
        seed: 8,
        ..spec.clone()
    }
    .configs()
    .unwrap();
    assert_ne!(a, other);
    let fixed = FleetSpec {
        count: 3,
        players: Some(5),
        bots: 2,
        max_players: Some(10),
        hostname: Some("Mine".into()),
        map: Some("datacore".into()),
        gamedir: "cstrike".into(),
        ..FleetSpec::default()
    };
    for (i, c) in fixed.configs().unwrap().iter().enumerate() {
        assert_eq!(c.hostname, format!("Mine #{}", i + 1));
        assert_eq!((c.players.len(), c.bots.len(), c.max_players), (5, 2, 10));
        assert_eq!(c.map, "datacore");
        assert_eq!(c.game, "Counter-Strike");
    }
}

// ---------------------------------------------------------------- GoldSrc (48)

fn goldsrc() -> Config {
    Config {
        protocol: Protocol::GoldSrc,
        players: vec![player("alice", 3)],
        bots: vec![player("[BOT] gman", 1)],
        ..config()
    }
}

#[test]
fn protocol_numbers_parse_and_print() {
    assert_eq!("49".parse::<Protocol>(), Ok(Protocol::Xash));
    assert_eq!("48".parse::<Protocol>(), Ok(Protocol::GoldSrc));
    assert_eq!(Protocol::default(), Protocol::Xash);
    assert_eq!(Protocol::GoldSrc.to_string(), "48");
    assert_eq!(Protocol::Xash.number(), 49);
    for bad in ["47", "17", "", "goldsrc", "-48", "304"] {
        let e = bad.parse::<Protocol>().unwrap_err().to_string();
        assert!(e.contains("49 = Xash3D FWGS, 48 = GoldSrc"), "{bad}: {e}");
    }
}

#[test]
fn goldsrc_server_answers_a2s_info_with_protocol_48() {
    let mut r = Rig::new(goldsrc());
    let out = r.send(&enc(|b| InfoRequest { challenge: None }.encode(b)), CLIENT);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, addr(CLIENT));
    let info = a2s::InfoReply::decode(&out[0].payload).unwrap();
    assert_eq!(info.protocol, 48);
    assert_eq!(info.name, b"Test server");
    assert_eq!(info.folder, b"valve");
    assert_eq!((info.players, info.max_players, info.bots), (2, 4, 1));
    assert_eq!(info.app_id, 70);
    assert_eq!(info.version, b"1.1.2.7/Stdio");
    assert_eq!(r.s.stats().a2s_info, 1);
    let mut r = Rig::new(Config {
        gamedir: "cstrike".into(),
        ..goldsrc()
    });
    let out = r.send(b"\xff\xff\xff\xffTSource Engine Query\0", CLIENT);
    assert_eq!(a2s::InfoReply::decode(&out[0].payload).unwrap().app_id, 10);
}

#[test]
fn goldsrc_server_ignores_xash_text_queries_and_the_handshake() {
    let mut r = Rig::new(Config {
        nat: true,
        nat_allow_private: true,
        ..goldsrc()
    });
    let c = r.s.challenge(addr(CLIENT).ip(), r.now);
    let requests = [
        b"\xff\xff\xff\xffinfo 49".to_vec(),
        b"\xff\xff\xff\xffinfo 48".to_vec(),
        b"\xff\xff\xff\xffinfo".to_vec(),
        b"\xff\xff\xff\xffping".to_vec(),
        b"\xff\xff\xff\xffi".to_vec(),
        b"\xff\xff\xff\xffnetinfo 49 0 4".to_vec(),
        enc(|b| GetChallenge::default().encode(b)),
        bandwidth(49, 1400, Some(c)),
        connect(49, c, 1, "a", None),
        nat_connect(CLIENT),
        Rig::challenge_reply(1, 2),
    ];
    for p in &requests {
        assert!(
            r.send(p, CLIENT).is_empty(),
            "{}",
            String::from_utf8_lossy(p)
        );
    }
    assert_eq!(r.s.stats().goldsrc_ignored, requests.len() as u64);
    assert_eq!(r.s.stats().info_queries + r.s.stats().pings, 0);
    assert_eq!(r.s.human_count(), 1, "nobody connected");
}

#[test]
fn goldsrc_server_answers_players_and_rules_after_the_challenge() {
    let mut r = Rig::new(goldsrc());
    let c = r.query_challenge(CLIENT);
    let out = r.send(&players_req(c), CLIENT);
    let players = PlayersReply::decode(&out[0].payload).unwrap().players;
    let names: Vec<&[u8]> = players.iter().map(|p| p.name.as_slice()).collect();
    assert_eq!(names, [&b"alice"[..], b"[BOT] gman"]);
    assert_eq!(players[0].frags, 3);
    let out = r.send(&rules_req(c), CLIENT);
    let rules = RulesReply::decode(&out[0].payload).unwrap();
    assert_eq!(rules.get(b"mp_timelimit"), Some(&b"20"[..]));
    assert!(r.send(&players_req(c ^ 1), CLIENT).len() == 1);
    assert_eq!(r.s.stats().a2s_challenges, 2);
    assert_eq!((r.s.stats().a2s_players, r.s.stats().a2s_rules), (1, 1));
}

#[test]
fn goldsrc_server_never_heartbeats_even_with_masters() {
    let mut r = Rig::new(Config {
        masters: vec![addr(M1), addr(M2)],
        ..goldsrc()
    });
    assert_eq!(r.s.poll_timeout(), None);
    for t in [0.0, 60.0, 300.0, 3600.0] {
        assert!(r.at(secs(t)).is_empty(), "at {t} s");
    }
    // A master is just another client: its queries are answered, its `s\n` ignored.
    let out = r.send(b"\xff\xff\xff\xffTSource Engine Query\0", M1);
    assert_eq!(
        a2s::InfoReply::decode(&out[0].payload).unwrap().protocol,
        48
    );
    assert!(r.send(&Rig::challenge_reply(1, 2), M1).is_empty());
    assert!(r.send(&nat_connect(CLIENT), M1).is_empty());
    assert!(sent(|o| r.s.shutdown(o)).is_empty(), "no b\\n either");
    let st = r.s.stats();
    assert_eq!((st.heartbeats, st.master_infos, st.nat_connects), (0, 0, 0));
    // The same server as 49 heartbeats to both masters at once.
    let mut r = Rig::new(Config {
        masters: vec![addr(M1), addr(M2)],
        protocol: Protocol::Xash,
        ..goldsrc()
    });
    assert_eq!(heartbeats(&r.at(Duration::ZERO)), 2);
}

#[test]
fn goldsrc_fleets_keep_everything_else_from_the_seed() {
    let xash = FleetSpec {
        count: 3,
        masters: vec![addr(M1)],
        ..FleetSpec::default()
    };
    let gs = FleetSpec {
        protocol: Protocol::GoldSrc,
        ..xash.clone()
    };
    for (a, b) in xash
        .configs()
        .unwrap()
        .into_iter()
        .zip(gs.configs().unwrap())
    {
        assert_eq!(a.protocol, Protocol::Xash);
        assert_eq!(b.protocol, Protocol::GoldSrc);
        assert_eq!(
            Config {
                protocol: Protocol::Xash,
                ..b
            },
            a
        );
    }
}

proptest! {
    #[test]
    fn random_datagrams_never_panic(p in proptest::collection::vec(any::<u8>(), 0..1500), port in 1u16..) {
        let mut r = Rig::new(Config { players: vec![player("a", 1)], ..config() });
        let from = SocketAddr::new(addr(CLIENT).ip(), port);
        let _ = r.send(&p, &from.to_string());
        let _ = r.send(&p, M1);
        let mut oob = b"\xff\xff\xff\xff".to_vec();
        oob.extend_from_slice(&p);
        let _ = r.send(&oob, &from.to_string());
        let _ = r.send(&oob, M1);
        let mut g = Rig::new(Config { protocol: Protocol::GoldSrc, ..config() });
        let _ = g.send(&oob, &from.to_string());
        let _ = g.send(&oob, M1);
        let _ = g.send(&p, M1);
    }

    #[test]
    fn mangled_requests_never_panic(
        which in 0usize..8,
        cut in 0usize..200,
        junk in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut r = Rig::new(Config { players: vec![player("a", 1)], nat: true, ..config() });
        let c = r.s.challenge(addr(CLIENT).ip(), r.now);
        let base = match which {
            0 => connect(49, c, 1, "a", None),
            1 => bandwidth(49, 1400, Some(c)),
            2 => enc(|b| GetChallenge::default().encode(b)),
            3 => players_req(c),
            4 => rules_req(c),
            5 => b"\xff\xff\xff\xffinfo 49".to_vec(),
            6 => nat_connect(CLIENT),
            _ => Rig::challenge_reply(1, 2),
        };
        let mut p = base[..cut.min(base.len())].to_vec();
        p.extend_from_slice(&junk);
        let _ = r.send(&p, CLIENT);
        let _ = r.send(&p, M1);
        let _ = r.at(Duration::from_secs(31));
    }
}
