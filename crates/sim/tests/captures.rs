//! The simulator against a real Xash3D FWGS server's datagrams
//! (`testdata/xash3d/`): configured like the captured server, its replies are
//! byte-identical; where a value is random or configuration-dependent, both sides
//! are decoded with the xash crate and every other field is compared.

mod common;

use common::{sent, Sent};
use sim::{Config, Server};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use xash::a2s;
use xash::handshake::ChallengeResponse;
use xash::info::InfoString;
use xash::master::{ChallengeReply, Heartbeat, ServerInfo, Shutdown};
use xash::text::{Ack, InfoReply};

fn capture(path: &str) -> Vec<u8> {
    let p = format!(
        "{}/../../testdata/xash3d/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The captured server's master (a test listener on 127.0.0.1:27910).
const MASTER: &str = "127.0.0.1:27910";
const CLIENT: &str = "127.0.0.1:40000";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Configured as the captured server: `+hostname "Xash loopback test" +map tiny`,
/// valve, 4 players, nobody connected, no password, Linux build.
fn captured_config() -> Config {
    Config {
        hostname: "Xash loopback test".into(),
        map: "tiny".into(),
        gamedir: "valve".into(),
        game: "Half-Life".into(),
        max_players: 4,
        masters: vec![addr(MASTER)],
        ..Config::default()
    }
}

fn one(out: Vec<Sent>, to: &str) -> Vec<u8> {
    assert_eq!(out.len(), 1, "expected one datagram, got {out:?}");
    assert_eq!(out[0].to, addr(to));
    out[0].payload.clone()
}

fn ask(s: &mut Server, req: &[u8], now: Instant) -> Vec<u8> {
    one(sent(|o| s.handle(req, addr(CLIENT), now, o)), CLIENT)
}

#[test]
fn query_replies_are_byte_identical_to_the_real_server() {
    let t0 = Instant::now();
    let mut s = Server::new(captured_config(), t0).unwrap();
    for name in [
        "00_a2s_info",
        "09_xash_info_49",
        "10_xash_info_48",
        "11_ping",
        "12_goldsrc_ping_i",
    ] {
        let req = capture(&format!("probe/{name}.req.bin"));
        let want = capture(&format!("probe/{name}.resp0.bin"));
        let got = ask(&mut s, &req, t0);
        assert_eq!(
            got,
            want,
            "{name}: sim {:?} vs real {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
    }
}

#[test]
fn a2s_info_fields_match_the_capture_field_for_field() {
    let t0 = Instant::now();
    let mut cfg = captured_config();
    cfg.hostname = "Another name".into();
    cfg.map = "crossfire".into();
    cfg.max_players = 16;
    cfg.bots = vec![sim::Player {
        name: "bot".into(),
        frags: 0,
        connected_for: Duration::ZERO,
    }];
    let mut s = Server::new(cfg, t0).unwrap();
    let real = a2s::InfoReply::decode(&capture("probe/00_a2s_info.resp0.bin")).unwrap();
    let sim =
        a2s::InfoReply::decode(&ask(&mut s, &capture("probe/00_a2s_info.req.bin"), t0)).unwrap();
    // Configuration-dependent fields.
    assert_eq!(sim.name, b"Another name");
    assert_eq!(sim.map, b"crossfire");
    assert_eq!((sim.players, sim.max_players, sim.bots), (1, 16, 1));
    // Everything else as the engine sends it.
    assert_eq!(sim.protocol, real.protocol);
    assert_eq!(sim.folder, real.folder);
    assert_eq!(sim.game, real.game);
    assert_eq!(sim.app_id, real.app_id);
    assert_eq!(sim.server_type, real.server_type);
    assert_eq!(sim.environment, real.environment);
    assert_eq!(sim.password, real.password);
    assert_eq!(sim.secure, real.secure);
    assert_eq!(sim.version, real.version);
    assert_eq!(sim.extra, real.extra);
}

#[test]
fn info_49_keys_match_the_capture_in_order() {
    let t0 = Instant::now();
    let mut cfg = captured_config();
    cfg.hostname = "Elsewhere".into();
    cfg.password = Some("secret".into());
    let mut s = Server::new(cfg, t0).unwrap();
    let InfoReply::Info(real) =
        InfoReply::decode(&capture("probe/09_xash_info_49.resp0.bin")).unwrap()
    else {
        panic!("capture is not an info reply")
    };
    let InfoReply::Info(sim) =
        InfoReply::decode(&ask(&mut s, &capture("probe/09_xash_info_49.req.bin"), t0)).unwrap()
    else {
        panic!("sim sent no info string")
    };
    let keys = |i: &InfoString| i.iter().map(|(k, _)| k.to_vec()).collect::<Vec<_>>();
    assert_eq!(keys(&sim), keys(&real), "same keys, same order (host last)");
    for (k, v) in real.iter() {
        let mine = sim.get(std::str::from_utf8(k).unwrap()).unwrap();
        match k {
            b"host" => assert_eq!(mine, b"Elsewhere"),
            // Not inverted here (only the master info is).
            b"password" => assert_eq!(mine, b"1"),
            _ => assert_eq!(mine, v, "key {}", String::from_utf8_lossy(k)),
        }
    }
}

#[test]
fn heartbeat_exchange_matches_the_capture() {
    let t0 = Instant::now();
    let mut s = Server::new(captured_config(), t0).unwrap();
    assert_eq!(
        s.poll_timeout(),
        Some(t0),
        "first heartbeat right after the map loads"
    );
    let hb = one(sent(|o| s.handle_timeout(t0, o)), MASTER);
    let real_hb = capture("heartbeat/1_server_to_master_heartbeat.bin");
    assert_eq!(hb.len(), real_hb.len(), "6 bytes");
    assert_eq!(&hb[..2], &real_hb[..2], "q\\xff, no FF×4 prefix");
    let mine = Heartbeat::decode(&hb).unwrap().challenge.unwrap();
    assert!(mine <= i32::MAX as u32, "COM_RandomLong(0, INT_MAX)");
    assert!(Heartbeat::decode(&real_hb).unwrap().challenge.is_some());

    // The captured master reply echoes the real server's challenge, not ours: refused.
    let real_reply = capture("heartbeat/2_master_to_server_challenge_REPLY_FROM_FAKE_MASTER.bin");
    let decoded = ChallengeReply::decode(&real_reply).unwrap();
    assert!(sent(|o| s.handle(&real_reply, addr(MASTER), t0, o)).is_empty());
    assert_eq!(s.stats().challenge_wrong_echo, 1);

    // The same reply echoing ours gets the captured info, byte for byte.
    let mut reply = Vec::new();
    ChallengeReply {
        master_challenge: decoded.master_challenge,
        echo: Some(mine),
    }
    .encode(&mut reply);
    assert_eq!(reply.len(), real_reply.len());
    let info = one(
        sent(|o| s.handle(&reply, addr(MASTER), t0 + Duration::from_millis(52), o)),
        MASTER,
    );
    let want = capture("heartbeat/3_server_to_master_info.bin");
    assert_eq!(
        info,
        want,
        "sim {:?}\nreal {:?}",
        String::from_utf8_lossy(&info),
        String::from_utf8_lossy(&want)
    );
    let parsed = ServerInfo::decode(&info).unwrap();
    assert!(!parsed.trailing_newline);
    assert!(!info.contains(&0), "no NUL");

    let bye = one(sent(|o| s.shutdown(o)), MASTER);
    assert_eq!(bye, capture("heartbeat/4_server_to_master_shutdown.bin"));
    assert!(Shutdown::decode(&bye).is_ok());
}

#[test]
fn getchallenge_reply_has_the_captured_layout() {
    let t0 = Instant::now();
    let mut cfg = captured_config();
    cfg.bandwidth_test = false; // as the captured server answered (second field 0)
    let mut s = Server::new(cfg, t0).unwrap();
    let got = ask(&mut s, &capture("probe/13_getchallenge.req.bin"), t0);
    let real = capture("probe/13_getchallenge.resp0.bin");
    let ChallengeResponse::Xash {
        challenge,
        bandwidth_test,
    } = ChallengeResponse::decode(&got).unwrap()
    else {
        panic!("not a Xash challenge")
    };
    let ChallengeResponse::Xash {
        challenge: real_challenge,
        bandwidth_test: real_bw,
    } = ChallengeResponse::decode(&real).unwrap()
    else {
        panic!("capture is not a Xash challenge")
    };
    assert_eq!(bandwidth_test, real_bw);
    // The same text with the challenge value swapped.
    let swapped =
        String::from_utf8_lossy(&real).replace(&real_challenge.to_string(), &challenge.to_string());
    assert_eq!(String::from_utf8_lossy(&got), swapped);
    assert_eq!(challenge, s.challenge(addr(CLIENT).ip(), t0));
    // With the bandwidth test on (the default), the second field is 1.
    let mut s = Server::new(captured_config(), t0).unwrap();
    let got = ask(&mut s, &capture("probe/13_getchallenge.req.bin"), t0);
    assert!(matches!(
        ChallengeResponse::decode(&got).unwrap(),
        ChallengeResponse::Xash {
            bandwidth_test: Some(true),
            ..
        }
    ));
}

#[test]
fn ping_replies_decode_like_the_captures() {
    let t0 = Instant::now();
    let mut s = Server::new(captured_config(), t0).unwrap();
    let ack = ask(&mut s, &capture("probe/11_ping.req.bin"), t0);
    assert_eq!(Ack::decode(&ack).unwrap(), Ack::Xash);
    let j = ask(&mut s, &capture("probe/12_goldsrc_ping_i.req.bin"), t0);
    assert_eq!(Ack::decode(&j).unwrap(), Ack::GoldSrc);
}
