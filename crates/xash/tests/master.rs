//! Master messages: the real engine's bytes as fixed vectors, round-trip and
//! never-panic property tests.

use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use xash::admin::{AdminChallengeReply, AdminCommand, AdminReply};
use xash::filter::Filter;
use xash::info::InfoString;
use xash::master::{
    encode_pages, ChallengeReply, Heartbeat, NatConnect, ScanRequest, ServerAdd, ServerInfo,
    ServerListPage,
};
use xash::text::{InfoQuery, InfoReply};

fn capture(rel: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../../testdata/xash3d/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn the_real_heartbeat_exchange() {
    let hb = Heartbeat::decode(&capture("heartbeat/1_server_to_master_heartbeat.bin")).unwrap();
    assert_eq!(hb.challenge, Some(0x1b7e_e364));
    let reply = ChallengeReply::decode(&capture(
        "heartbeat/2_master_to_server_challenge_REPLY_FROM_FAKE_MASTER.bin",
    ))
    .unwrap();
    assert_eq!(
        reply,
        ChallengeReply {
            master_challenge: 0xc0ff_ee01,
            echo: Some(0x1b7e_e364)
        }
    );
    let mut b = Vec::new();
    reply.encode(&mut b);
    assert_eq!(
        b,
        capture("heartbeat/2_master_to_server_challenge_REPLY_FROM_FAKE_MASTER.bin")
    );
    let raw = capture("heartbeat/3_server_to_master_info.bin");
    let info = ServerInfo::decode(&raw).unwrap();
    assert!(
        !info.trailing_newline,
        "the engine sends no trailing newline"
    );
    let mut b = Vec::new();
    info.encode(&mut b);
    assert_eq!(b, raw);
    let add = ServerAdd::from_info(&info.info).unwrap();
    assert_eq!(add.challenge, 3_237_998_081);
    assert_eq!(add.protocol, 49);
    assert_eq!((add.players, add.max, add.bots), (0, 4, 0));
    assert_eq!(add.gamedir, b"valve");
    assert_eq!(add.map, b"tiny");
    assert!(
        add.password,
        "the literal key value (inverted by the engine: 1 = no password)"
    );
    assert_eq!(add.version.to_string(), "0.21");
    assert_eq!(add.region, 255);
    assert!(!add.nat);
    let stream = capture("heartbeat/stream.lpf");
    let mut i = 0;
    let mut n = 0;
    while i + 4 <= stream.len() {
        let len = u32::from_be_bytes(stream[i..i + 4].try_into().unwrap()) as usize;
        let d = &stream[i + 4..i + 4 + len];
        assert!(
            Heartbeat::decode(d).is_ok()
                || ServerInfo::decode(d).is_ok()
                || xash::master::Shutdown::decode(d).is_ok()
        );
        i += 4 + len;
        n += 1;
    }
    assert_eq!(n, 3);
}

#[test]
fn server_info_with_the_goldsrc_newline_and_bad_values() {
    let i = ServerInfo::decode(b"0\n\\challenge\\5\\gamedir\\valve\n").unwrap();
    assert!(i.trailing_newline);
    assert!(ServerAdd::from_info(&i.info).is_ok());
    assert!(
        ServerInfo::decode(b"0\n\\challenge\\5\0\\gamedir\\valve").is_err(),
        "NUL inside"
    );
    for bad in [
        "\\challenge\\5\\nat\\2",
        "\\challenge\\5\\region\\8",
        "\\challenge\\x",
        "\\challenge\\5\\players\\300",
        "\\challenge\\5\\version\\new",
        "\\gamedir\\valve",
    ] {
        let info = InfoString::parse(bad.as_bytes()).unwrap();
        assert!(ServerAdd::from_info(&info).is_err(), "{bad}");
    }
}

fn addr_v4() -> impl Strategy<Value = SocketAddr> {
    (any::<u32>(), 1u16..)
        .prop_map(|(ip, port)| SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip.max(1))), port))
}

fn addr_v6() -> impl Strategy<Value = SocketAddr> {
    (any::<u128>(), 1u16..)
        .prop_map(|(ip, port)| SocketAddr::new(IpAddr::V6(Ipv6Addr::from(ip.max(1))), port))
}

fn info_string() -> impl Strategy<Value = InfoString> {
    prop::collection::vec(("[a-z]{1,12}", "[ -\\[\\]-~&&[^\"]]{0,20}"), 0..10).prop_map(|pairs| {
        let mut s = InfoString::new();
        for (k, v) in pairs {
            let _ = s.set(&k, v);
        }
        s
    })
}

proptest! {
    #[test]
    fn heartbeat_round_trip(c in proptest::option::of(any::<u32>())) {
        let h = Heartbeat { challenge: c };
        let mut b = Vec::new();
        h.encode(&mut b);
        prop_assert_eq!(Heartbeat::decode(&b).unwrap(), h);
    }

    #[test]
    fn challenge_round_trip(m in any::<u32>(), e in proptest::option::of(any::<u32>())) {
        let c = ChallengeReply { master_challenge: m, echo: e };
        let mut b = Vec::new();
        c.encode(&mut b);
        prop_assert_eq!(b.len(), if e.is_some() { 14 } else { 10 });
        prop_assert_eq!(ChallengeReply::decode(&b).unwrap(), c);
    }

    #[test]
    fn info_round_trip(info in info_string(), nl in any::<bool>()) {
        let i = ServerInfo { info, trailing_newline: nl };
        let mut b = Vec::new();
        i.encode(&mut b);
        prop_assert_eq!(ServerInfo::decode(&b).unwrap(), i);
    }

    #[test]
    fn scan_round_trip(info in info_string(), region in prop_oneof![Just(0xffu8), 0u8..8], nul in any::<bool>(), last in proptest::option::of(addr_v4())) {
        let r = ScanRequest { region, last, filter: info, final_nul: nul, malformed_last: false };
        let mut b = Vec::new();
        r.encode(&mut b);
        prop_assert_eq!(ScanRequest::decode(&b).unwrap(), r);
    }

    #[test]
    fn list_pages_round_trip(v4 in prop::collection::vec(addr_v4(), 0..600), v6 in prop::collection::vec(addr_v6(), 0..200), key in proptest::option::of(any::<u32>()), page in 60usize..2000) {
        for (servers, is6) in [(&v4, false), (&v6, true)] {
            let pages = encode_pages(key, servers, is6, page);
            let mut back = Vec::new();
            for p in &pages {
                prop_assert!(p.len() <= page.max(6 + 6 + 18 * 2));
                let d = ServerListPage::decode(p, is6, key.is_some()).unwrap();
                prop_assert!(d.terminated);
                prop_assert_eq!(d.key, key);
                back.extend(d.servers);
            }
            prop_assert_eq!(&back, servers);
        }
    }

    #[test]
    fn nat_connect_round_trip(a in prop_oneof![addr_v4(), addr_v6()]) {
        let n = NatConnect { client: a };
        let mut b = Vec::new();
        n.encode(&mut b);
        prop_assert_eq!(NatConnect::decode(&b).unwrap(), n);
    }

    #[test]
    fn text_and_admin_round_trip(p in 0u32..100_000, info in info_string(), m in any::<u32>(), h in any::<u32>(), hash in prop::collection::vec(any::<u8>(), 64), cmd in "[ -~]{0,40}", ok in any::<bool>()) {
        let q = InfoQuery { protocol: p };
        let mut b = Vec::new();
        q.encode(&mut b);
        prop_assert_eq!(InfoQuery::decode(&b).unwrap(), q);
        let r = InfoReply::Info(info);
        let mut b = Vec::new();
        r.encode(&mut b);
        prop_assert_eq!(InfoReply::decode(&b).unwrap(), r);
        let c = AdminChallengeReply { master_challenge: m, hash_challenge: h };
        let mut b = Vec::new();
        c.encode(&mut b);
        prop_assert_eq!(AdminChallengeReply::decode(&b).unwrap(), c);
        let a = AdminCommand { master_challenge: m, hash, command: cmd.clone() };
        let mut b = Vec::new();
        a.encode(&mut b);
        prop_assert_eq!(AdminCommand::decode(&b, 64).unwrap(), a);
        let r = AdminReply { ok, text: cmd };
        let mut b = Vec::new();
        r.encode(&mut b);
        prop_assert_eq!(AdminReply::decode(&b).unwrap(), r);
    }

    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1500), hl in 0usize..80) {
        let _ = Heartbeat::decode(&bytes);
        let _ = ChallengeReply::decode(&bytes);
        if let Ok(i) = ServerInfo::decode(&bytes) {
            let _ = ServerAdd::from_info(&i.info);
        }
        if let Ok(r) = ScanRequest::decode(&bytes) {
            let _ = Filter::from_info(&r.filter);
        }
        let _ = ServerListPage::decode(&bytes, false, true);
        let _ = ServerListPage::decode(&bytes, true, false);
        let _ = NatConnect::decode(&bytes);
        let _ = InfoQuery::decode(&bytes);
        let _ = InfoReply::decode(&bytes);
        let _ = AdminCommand::decode(&bytes, hl);
        let _ = AdminReply::decode(&bytes);
        let _ = InfoString::parse(&bytes);
    }

    #[test]
    fn prefixed_garbage_never_panics(tail in prop::collection::vec(any::<u8>(), 0..600), which in 0usize..6) {
        let prefix: &[u8] = [&b"q\xff"[..], b"0\n", b"1\xff", b"1\xff0.0.0.0:0\0", b"\xff\xff\xff\xfff\n", b"admin"][which];
        let mut p = prefix.to_vec();
        p.extend_from_slice(&tail);
        let _ = Heartbeat::decode(&p);
        let _ = ServerInfo::decode(&p).map(|i| ServerAdd::from_info(&i.info));
        let _ = ScanRequest::decode(&p).map(|r| Filter::from_info(&r.filter));
        let _ = ServerListPage::decode(&p, false, true);
        let _ = AdminCommand::decode(&p, 64);
    }
}
