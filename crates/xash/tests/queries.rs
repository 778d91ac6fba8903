//! A2S queries, split packets and the connect handshake: real captures, fixed
//! vectors from `docs/notes/xash3d-master-and-queries.md`, round-trip and
//! never-panic property tests, and the reassembler's state machine.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use xash::a2s::{
    ChallengeReply, ExtraData, InfoReply, InfoRequest, LegacyInfoReply, ModInfo, Player,
    PlayersReply, PlayersRequest, Reply, Request, RulesReply, RulesRequest, NO_CHALLENGE,
};
use xash::handshake::{
    crc32, crc32_update, testpacket_crc, tokenize, BandwidthTest, ChallengeResponse, ClientConnect,
    Connect, ConnectProtInfo, Disconnect, ErrorMsg, GetChallenge, HandshakeReply, HandshakeRequest,
    Print, Reject, ServerProtInfo, TestPacket, EXT_NETCHAN_COOKIE, EXT_SPLITSIZE,
};
use xash::split::{
    split, Fragment, Reassembler, ReassemblyLimits, SplitForm, GOLDSRC_MAX_FRAGMENTS,
    GOLDSRC_SPLIT_SIZE, XASH_MAX_FRAGMENTS,
};
use xash::{Error, InfoString};

macro_rules! capture {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/xash3d/probe/",
            $name
        ))
        .as_slice()
    };
}

/// Encodes anything with an `encode(&self, &mut Vec<u8>)`.
macro_rules! enc {
    ($v:expr) => {{
        let mut out = Vec::new();
        $v.encode(&mut out);
        out
    }};
}

// ---------------------------------------------------------------------------
// Captures from the real server
// ---------------------------------------------------------------------------

#[test]
fn capture_a2s_info_request() {
    let req = capture!("00_a2s_info.req.bin");
    let d = InfoRequest::decode(req).unwrap();
    assert_eq!(d, InfoRequest { challenge: None });
    assert_eq!(enc!(d), req);
    assert_eq!(Request::decode(req).unwrap(), Request::Info(d));
}

#[test]
fn capture_a2s_info_reply() {
    let resp = capture!("00_a2s_info.resp0.bin");
    assert_eq!(resp.len(), 60);
    let d = InfoReply::decode(resp).unwrap();
    assert_eq!(
        d,
        InfoReply {
            protocol: 49,
            name: b"Xash loopback test".to_vec(),
            map: b"tiny".to_vec(),
            folder: b"valve".to_vec(),
            game: b"Half-Life".to_vec(),
            app_id: 0,
            players: 0,
            max_players: 4,
            bots: 0,
            server_type: b'd',
            environment: b'l',
            password: false,
            secure: false,
            version: b"0.21".to_vec(),
            extra: None,
        }
    );
    assert_eq!(enc!(d), resp);
    assert_eq!(Reply::decode(resp).unwrap(), Reply::Info(d));
}

#[test]
fn capture_getchallenge_request() {
    let req = capture!("13_getchallenge.req.bin");
    let d = GetChallenge::decode(req).unwrap();
    assert_eq!(
        d,
        GetChallenge {
            steam: false,
            newline: false
        }
    );
    assert_eq!(enc!(d), req);
    assert_eq!(
        HandshakeRequest::decode(req).unwrap(),
        HandshakeRequest::GetChallenge(d)
    );
}

#[test]
fn capture_getchallenge_reply() {
    let resp = capture!("13_getchallenge.resp0.bin");
    let d = ChallengeResponse::decode(resp).unwrap();
    assert_eq!(
        d,
        ChallengeResponse::Xash {
            challenge: -1257230617,
            bandwidth_test: Some(false)
        }
    );
    assert_eq!(d.challenge(), -1257230617);
    assert_eq!(enc!(d), resp);
    assert_eq!(
        HandshakeReply::decode(resp).unwrap(),
        HandshakeReply::Challenge(d)
    );
}

#[test]
fn other_captures_are_not_mistaken_for_these_messages() {
    for packet in [
        capture!("09_xash_info_49.resp0.bin"),
        capture!("10_xash_info_48.resp0.bin"),
        capture!("11_ping.resp0.bin"),
        capture!("12_goldsrc_ping_i.resp0.bin"),
        capture!("09_xash_info_49.req.bin"),
        capture!("11_ping.req.bin"),
        capture!("12_goldsrc_ping_i.req.bin"),
    ] {
        assert_eq!(Reply::decode(packet), Err(Error::WrongHeader));
        assert_eq!(Request::decode(packet), Err(Error::WrongHeader));
        assert_eq!(HandshakeReply::decode(packet), Err(Error::WrongHeader));
        assert_eq!(HandshakeRequest::decode(packet), Err(Error::WrongHeader));
    }
}

// ---------------------------------------------------------------------------
// Fixed vectors: A2S
// ---------------------------------------------------------------------------

#[test]
fn info_request_with_challenge() {
    let mut bytes = b"\xff\xff\xff\xffTSource Engine Query\0".to_vec();
    bytes.extend_from_slice(&0x1234_5678i32.to_le_bytes());
    let d = InfoRequest::decode(&bytes).unwrap();
    assert_eq!(d.challenge, Some(0x1234_5678));
    assert_eq!(enc!(d), bytes);
    // A partial challenge or extra bytes are errors.
    assert!(matches!(
        InfoRequest::decode(&bytes[..bytes.len() - 1]),
        Err(Error::Truncated { .. })
    ));
    bytes.push(0);
    assert_eq!(InfoRequest::decode(&bytes), Err(Error::Trailing(1)));
    assert_eq!(
        InfoRequest::decode(b"\xff\xff\xff\xffTSource Engine Quer"),
        Err(Error::WrongHeader)
    );
}

#[test]
fn info_reply_with_edf() {
    // A Source-style reply with port, steam id, SourceTV, keywords and game id.
    let mut bytes = b"\xff\xff\xff\xffI\x11srv\0de_dust2\0cstrike\0Counter-Strike\0".to_vec();
    bytes.extend_from_slice(&730i16.to_le_bytes());
    bytes.extend_from_slice(&[5, 24, 1, b'd', b'l', 1, 1]);
    bytes.extend_from_slice(b"1.38.0.1\0");
    bytes.push(0xf1);
    bytes.extend_from_slice(&27015u16.to_le_bytes());
    bytes.extend_from_slice(&90071992547409921u64.to_le_bytes());
    bytes.extend_from_slice(&27020u16.to_le_bytes());
    bytes.extend_from_slice(b"tv\0");
    bytes.extend_from_slice(b"secure,valve\0");
    bytes.extend_from_slice(&730u64.to_le_bytes());
    let d = InfoReply::decode(&bytes).unwrap();
    assert_eq!(d.protocol, 17);
    assert!(d.password && d.secure);
    assert_eq!(
        d.extra,
        Some(ExtraData {
            port: Some(27015),
            steam_id: Some(90071992547409921),
            source_tv: Some((27020, b"tv".to_vec())),
            keywords: Some(b"secure,valve".to_vec()),
            game_id: Some(730),
            unknown_flags: 0,
        })
    );
    assert_eq!(enc!(d), bytes);

    // EDF with only unknown bits, then nothing.
    let mut b2 = capture!("00_a2s_info.resp0.bin").to_vec();
    b2.push(0x02);
    let d2 = InfoReply::decode(&b2).unwrap();
    assert_eq!(d2.extra.as_ref().unwrap().unknown_flags, 0x02);
    assert_eq!(enc!(d2), b2);

    // EDF promising a port that is not there.
    let mut b3 = capture!("00_a2s_info.resp0.bin").to_vec();
    b3.push(0x80);
    assert!(matches!(
        InfoReply::decode(&b3),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn legacy_info_reply_with_and_without_mod() {
    let mut bytes =
        b"\xff\xff\xff\xffm194.140.242.2:27025\0HAB Clan\0cs_office\0cstrike\0Counter-Strike\0"
            .to_vec();
    bytes.extend_from_slice(&[1, 11, 47, b'd', b'l', 0, 1]);
    bytes.extend_from_slice(b"www.counter-strike.net\0\0\0");
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&184_000_000u32.to_le_bytes());
    bytes.extend_from_slice(&[1, 1, 1, 0]);
    let d = LegacyInfoReply::decode(&bytes).unwrap();
    assert_eq!(d.address, b"194.140.242.2:27025");
    assert_eq!(d.protocol, 47);
    assert_eq!(
        d.mod_info,
        Some(ModInfo {
            link: b"www.counter-strike.net".to_vec(),
            download_link: Vec::new(),
            version: 1,
            size: 184_000_000,
            multiplayer_only: 1,
            own_dll: 1,
        })
    );
    assert!(d.secure);
    assert_eq!(d.bots, 0);
    assert_eq!(enc!(d), bytes);
    assert_eq!(Reply::decode(&bytes).unwrap(), Reply::LegacyInfo(d));

    let mut plain = b"\xff\xff\xff\xffm127.0.0.1:27015\0hl\0crossfire\0valve\0Half-Life\0".to_vec();
    plain.extend_from_slice(&[2, 16, 48, b'l', b'w', 1, 0, 0, 3]);
    let d = LegacyInfoReply::decode(&plain).unwrap();
    assert_eq!(d.mod_info, None);
    assert!(d.password && !d.secure);
    assert_eq!(d.bots, 3);
    assert_eq!(enc!(d), plain);
}

#[test]
fn players_request_and_challenge_reply() {
    // What xash3d-query sends first: `U` with an all-ones challenge.
    let req = b"\xff\xff\xff\xffU\xff\xff\xff\xff";
    let d = PlayersRequest::decode(req).unwrap();
    assert_eq!(d.challenge, NO_CHALLENGE);
    assert_eq!(enc!(d), req);
    assert!(matches!(
        PlayersRequest::decode(b"\xff\xff\xff\xffU"),
        Err(Error::Truncated { .. })
    ));

    // The 9-byte challenge reply, then the repeated request.
    let ch = b"\xff\xff\xff\xffA\x78\x56\x34\x12";
    let c = ChallengeReply::decode(ch).unwrap();
    assert_eq!(c.challenge, 0x1234_5678);
    assert_eq!(enc!(c), ch);
    assert_eq!(Reply::decode(ch).unwrap(), Reply::Challenge(c));
    let again = PlayersRequest {
        challenge: c.challenge,
    };
    assert_eq!(enc!(again), b"\xff\xff\xff\xffU\x78\x56\x34\x12");

    let rules = RulesRequest { challenge: -1 };
    assert_eq!(enc!(rules), b"\xff\xff\xff\xffV\xff\xff\xff\xff");
    assert_eq!(
        Request::decode(&enc!(rules)).unwrap(),
        Request::Rules(rules)
    );

    // The textual GoldSrc connect challenge shares the 'A' but is not this reply.
    assert!(ChallengeReply::decode(b"\xff\xff\xff\xffA00000000 1 3\n").is_err());
}

#[test]
fn players_reply_vector() {
    let mut bytes = b"\xff\xff\xff\xffD\x02".to_vec();
    bytes.push(0);
    bytes.extend_from_slice(b"^1Gordon\0");
    bytes.extend_from_slice(&12i32.to_le_bytes());
    bytes.extend_from_slice(&93.5f32.to_le_bytes());
    bytes.push(1);
    bytes.extend_from_slice(b"Bot\0");
    bytes.extend_from_slice(&(-2i32).to_le_bytes());
    bytes.extend_from_slice(&(-1.0f32).to_le_bytes());
    let d = PlayersReply::decode(&bytes).unwrap();
    assert_eq!(
        d.players,
        vec![
            Player {
                index: 0,
                name: b"^1Gordon".to_vec(),
                frags: 12,
                duration: 93.5
            },
            Player {
                index: 1,
                name: b"Bot".to_vec(),
                frags: -2,
                duration: -1.0
            },
        ]
    );
    assert_eq!(enc!(d), bytes);

    // Count larger than the bytes can hold.
    let mut lie = bytes.clone();
    lie[5] = 200;
    assert_eq!(
        PlayersReply::decode(&lie),
        Err(Error::BadLength("player count exceeds packet"))
    );
    // Count smaller than the entries: leftover bytes.
    let mut short = bytes.clone();
    short[5] = 1;
    assert!(matches!(
        PlayersReply::decode(&short),
        Err(Error::Trailing(_))
    ));
    // Empty list (other engines send one).
    assert_eq!(
        PlayersReply::decode(b"\xff\xff\xff\xffD\0").unwrap(),
        PlayersReply::default()
    );
}

#[test]
fn rules_reply_vector() {
    let mut bytes = b"\xff\xff\xff\xffE\x03\x00".to_vec();
    bytes.extend_from_slice(b"mp_timelimit\x0030\0sv_password\x000\0coop\x000\0");
    let d = RulesReply::decode(&bytes).unwrap();
    assert_eq!(d.rules.len(), 3);
    assert_eq!(d.get(b"mp_timelimit"), Some(&b"30"[..]));
    assert_eq!(enc!(d), bytes);
    assert_eq!(Reply::decode(&bytes).unwrap(), Reply::Rules(d));

    // A hostile count of 65535 with a tiny body: no allocation, an error.
    let lie = b"\xff\xff\xff\xffE\xff\xffa\0b\0";
    assert_eq!(
        RulesReply::decode(lie),
        Err(Error::BadLength("rule count exceeds packet"))
    );
    // Plausible count, missing terminator.
    assert!(matches!(
        RulesReply::decode(b"\xff\xff\xff\xffE\x01\x00abc\0def"),
        Err(Error::Unterminated(_))
    ));
}

#[test]
fn reply_dispatch_rejects_unknown_and_split() {
    assert_eq!(Reply::decode(b""), Err(Error::WrongHeader));
    assert_eq!(Reply::decode(b"\xff\xff\xff\xff"), Err(Error::WrongHeader));
    assert_eq!(Reply::decode(b"\xff\xff\xff\xffj"), Err(Error::WrongHeader));
    assert_eq!(
        Reply::decode(b"\xfe\xff\xff\xff\x01\0\0\0\x02"),
        Err(Error::WrongHeader)
    );
}

// ---------------------------------------------------------------------------
// Fixed vectors: handshake
// ---------------------------------------------------------------------------

#[test]
fn tokenizer_follows_the_engine() {
    let t = |s: &[u8]| tokenize(s);
    assert_eq!(t(b"connect 49 5"), vec![&b"connect"[..], b"49", b"5"]);
    assert_eq!(t(b"  a\t\rb  "), vec![&b"a"[..], b"b"]);
    assert_eq!(t(b"a \"b c\" \"\""), vec![&b"a"[..], b"b c", b""]);
    // `\"` inside quotes is a quote; a missing closing quote ends at the line end.
    assert_eq!(t(b"\"x\\\"y\" \"open"), vec![&b"x\"y"[..], b"open"]);
    // Single-character tokens outside quotes, kept inside.
    assert_eq!(
        t(b"a,b{c}(d)'e' \"f,g\""),
        vec![
            &b"a"[..],
            b",",
            b"b",
            b"{",
            b"c",
            b"}",
            b"(",
            b"d",
            b")",
            b"'",
            b"e",
            b"'",
            b"f,g"
        ]
    );
    // A comment at the start of a word ends the line; inside a word it does not.
    assert_eq!(t(b"a b//c // d e"), vec![&b"a"[..], b"b//c"]);
    // A quote inside a word is an ordinary character.
    assert_eq!(t(b"ab\"cd"), vec![&b"ab\"cd"[..]]);
    // Bytes above 0x7F are not whitespace.
    assert_eq!(t(b"\xc3\xa9 x"), vec![&b"\xc3\xa9"[..], b"x"]);
    // At most 80 arguments.
    assert_eq!(t("x ".repeat(200).as_bytes()).len(), 80);
}

#[test]
fn getchallenge_forms() {
    let client = GetChallenge::default();
    assert_eq!(enc!(client), b"\xff\xff\xff\xffgetchallenge steam\n");
    assert_eq!(
        GetChallenge::decode(b"\xff\xff\xff\xffgetchallenge steam\n").unwrap(),
        client
    );
    let old = GetChallenge::decode(b"\xff\xff\xff\xffgetchallenge\n").unwrap();
    assert_eq!(
        old,
        GetChallenge {
            steam: false,
            newline: true
        }
    );
    assert_eq!(
        GetChallenge::decode(b"\xff\xff\xff\xffgetchallenge valve\n"),
        Err(Error::InvalidField("getchallenge argument"))
    );
    assert_eq!(
        GetChallenge::decode(b"\xff\xff\xff\xffgetchallenge\nmore"),
        Err(Error::Trailing(4))
    );
    assert_eq!(
        GetChallenge::decode(b"getchallenge steam\n"),
        Err(Error::WrongHeader)
    );
    assert_eq!(
        GetChallenge::decode(b"\xff\xff\xff\xffgetchallenges"),
        Err(Error::WrongHeader)
    );
}

#[test]
fn challenge_response_forms() {
    let x = ChallengeResponse::Xash {
        challenge: 42,
        bandwidth_test: Some(true),
    };
    assert_eq!(enc!(x), b"\xff\xff\xff\xffchallenge 42 1");
    // A trailing newline is tolerated; an old engine's missing flag decodes as None.
    assert_eq!(
        ChallengeResponse::decode(b"\xff\xff\xff\xffchallenge 42 1\n").unwrap(),
        x
    );
    let old = ChallengeResponse::decode(b"\xff\xff\xff\xffchallenge -7").unwrap();
    assert_eq!(
        old,
        ChallengeResponse::Xash {
            challenge: -7,
            bandwidth_test: None
        }
    );
    assert_eq!(enc!(old), b"\xff\xff\xff\xffchallenge -7");
    for bad in [
        &b"\xff\xff\xff\xffchallenge"[..],
        b"\xff\xff\xff\xffchallenge x 0",
        b"\xff\xff\xff\xffchallenge 1 2",
        b"\xff\xff\xff\xffchallenge 1 0 0",
        b"\xff\xff\xff\xffchallenge 99999999999 0",
        b"\xff\xff\xff\xffchallenge +1 0",
    ] {
        assert!(ChallengeResponse::decode(bad).is_err(), "{bad:?}");
    }

    // GoldSrc with Steam auth: server Steam ID and VAC flag.
    let gs = b"\xff\xff\xff\xffA00000000 3735928559 3 90071992547409921 1\n";
    let d = ChallengeResponse::decode(gs).unwrap();
    assert_eq!(
        d,
        ChallengeResponse::GoldSrc {
            challenge: 3735928559,
            auth_protocol: 3,
            steam: Some((90071992547409921, 1)),
        }
    );
    assert_eq!(enc!(d), gs);
    assert_eq!(d.challenge(), 3735928559u32 as i32);
    let gs2 = ChallengeResponse::decode(b"\xff\xff\xff\xffA00000000 12 2").unwrap();
    assert_eq!(
        gs2,
        ChallengeResponse::GoldSrc {
            challenge: 12,
            auth_protocol: 2,
            steam: None
        }
    );
    assert!(ChallengeResponse::decode(b"\xff\xff\xff\xffA00000000 12 3 5").is_err());
    assert_eq!(
        HandshakeReply::decode(gs).unwrap(),
        HandshakeReply::Challenge(d)
    );
}

#[test]
fn bandwidth_request() {
    let b = BandwidthTest {
        protocol: 49,
        size: 1400,
        challenge: Some(-1257230617),
    };
    let bytes = b"\xff\xff\xff\xffbandwidth 49 1400 -1257230617\n";
    assert_eq!(enc!(b), bytes);
    assert_eq!(BandwidthTest::decode(bytes).unwrap(), b);
    assert!(b.size_is_testable());
    let old = BandwidthTest::decode(b"\xff\xff\xff\xffbandwidth 49 508").unwrap();
    assert_eq!(old.challenge, None);
    assert!(!old.size_is_testable());
    assert_eq!(
        BandwidthTest::decode(b"\xff\xff\xff\xffbandwidth 49 -5 1\n"),
        Err(Error::InvalidField("bandwidth size"))
    );
    assert_eq!(
        BandwidthTest::decode(b"\xff\xff\xff\xffbandwidth 49\n"),
        Err(Error::InvalidField("missing arguments"))
    );
}

#[test]
fn crc32_vectors() {
    // Standard CRC-32 check value, and the engine's init-0 variant.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
    assert_eq!(testpacket_crc(b"123456789"), 0x2DFD_2D88);
    assert_eq!(testpacket_crc(b""), 0);
    assert_eq!(
        crc32_update(0, b"1234"),
        crc32_update(crc32_update(0, b"12"), b"34")
    );
}

#[test]
fn test_packet_has_exactly_the_requested_size() {
    let wad = b"WAD3\x03\0\0\0some gfx.wad bytes";
    for size in BandwidthTest::CLIENT_SIZES {
        let t = TestPacket::with_size(size as usize, wad).unwrap();
        let bytes = enc!(t);
        assert_eq!(bytes.len(), size as usize);
        assert_eq!(t.len(), size as usize);
        assert!(bytes.starts_with(b"\xff\xff\xff\xfftestpacket\0"));
        assert_eq!(&bytes[15..19], &testpacket_crc(&bytes[19..]).to_le_bytes());
        let d = TestPacket::decode(&bytes).unwrap();
        assert!(d.crc_matches());
        assert_eq!(d, t);
        assert_eq!(
            HandshakeReply::decode(&bytes).unwrap(),
            HandshakeReply::TestPacket(d)
        );
    }
    assert_eq!(TestPacket::with_size(19, b"").unwrap().len(), 19);
    assert!(TestPacket::with_size(18, wad).is_err());
    assert!(TestPacket::with_size(100, b"").is_err());
    // A corrupted filler still decodes; the CRC says it is bad.
    let mut bytes = enc!(TestPacket::with_size(600, wad).unwrap());
    bytes[300] ^= 1;
    assert!(!TestPacket::decode(&bytes).unwrap().crc_matches());
    assert!(matches!(
        TestPacket::decode(b"\xff\xff\xff\xfftestpacket\0\x01"),
        Err(Error::Truncated { .. })
    ));
}

fn sample_prot() -> ConnectProtInfo {
    ConnectProtInfo {
        uuid: "0123456789abcdef0123456789ABCDEF".into(),
        qport: 27005,
        ext: EXT_SPLITSIZE | EXT_NETCHAN_COOKIE,
        cookie: Some("00112233aabbccdd".into()),
    }
}

#[test]
fn connect_request() {
    let c = Connect {
        protocol: 49,
        challenge: -1257230617,
        protinfo: sample_prot().to_info().unwrap(),
        userinfo: InfoString::parse(b"\\name\\Gordon Freeman\\model\\gordon\\cl_dlmax\\1400")
            .unwrap(),
    };
    let bytes = enc!(c);
    assert_eq!(
        bytes,
        b"\xff\xff\xff\xffconnect 49 -1257230617 \"\\uuid\\0123456789abcdef0123456789ABCDEF\\qport\\27005\\ext\\3\\cookie\\00112233aabbccdd\" \"\\name\\Gordon Freeman\\model\\gordon\\cl_dlmax\\1400\"\n"
    );
    let d = Connect::decode(&bytes).unwrap();
    assert_eq!(d, c);
    assert_eq!(d.prot().unwrap(), sample_prot());
    assert_eq!(d.userinfo.get("name"), Some(&b"Gordon Freeman"[..]));
    assert_eq!(
        HandshakeRequest::decode(&bytes).unwrap(),
        HandshakeRequest::Connect(c.clone())
    );

    // Arguments may also come unquoted; the newline is optional.
    let bare = b"\xff\xff\xff\xffconnect 49 7 \\uuid\\0123456789abcdef0123456789abcdef\\qport\\1\\ext\\0 \\name\\x";
    let d = Connect::decode(bare).unwrap();
    assert_eq!(d.prot().unwrap().ext, 0);

    // What the server rejects as "insufficient connection info", etc.
    assert_eq!(
        Connect::decode(b"\xff\xff\xff\xffconnect 49 7 \"\"\n"),
        Err(Error::InvalidField("missing arguments"))
    );
    assert_eq!(
        Connect::decode(b"\xff\xff\xff\xffconnect x 7 \"\" \"\"\n"),
        Err(Error::InvalidField("connect protocol"))
    );
    assert!(matches!(
        Connect::decode(b"\xff\xff\xff\xffconnect 49 7 \"noslash\" \"\"\n"),
        Err(Error::InvalidInfo(_))
    ));

    // Typed protinfo checks.
    let mut p = sample_prot();
    p.uuid.pop();
    assert!(p.to_info().is_err());
    let short_uuid = InfoString::parse(b"\\uuid\\abc\\qport\\1").unwrap();
    assert_eq!(
        ConnectProtInfo::from_info(&short_uuid),
        Err(Error::InvalidValue { key: "uuid".into() })
    );
    let no_cookie =
        InfoString::parse(b"\\uuid\\0123456789abcdef0123456789abcdef\\qport\\1\\ext\\2").unwrap();
    assert_eq!(
        ConnectProtInfo::from_info(&no_cookie),
        Err(Error::MissingKey("cookie"))
    );
}

#[test]
fn client_connect_reply() {
    let prot = ServerProtInfo {
        ext: 3,
        cheats: false,
        challenge: Some(-1257230617),
        cookie: Some("00112233AABBCCDD".into()),
    };
    let m = ClientConnect {
        protinfo: prot.to_info().unwrap(),
    };
    let bytes = enc!(m);
    assert_eq!(
        bytes,
        b"\xff\xff\xff\xffclient_connect \\ext\\3\\cheats\\0\\challenge\\-1257230617\\cookie\\00112233AABBCCDD"
    );
    let d = ClientConnect::decode(&bytes).unwrap();
    assert_eq!(d, m);
    assert_eq!(d.prot().unwrap(), prot);
    // Old servers: `\ext\1` only, or nothing at all.
    let old = ClientConnect::decode(b"\xff\xff\xff\xffclient_connect \\ext\\1").unwrap();
    assert_eq!(
        old.prot().unwrap(),
        ServerProtInfo {
            ext: 1,
            cheats: false,
            challenge: None,
            cookie: None
        }
    );
    let empty = ClientConnect::decode(b"\xff\xff\xff\xffclient_connect").unwrap();
    assert!(empty.protinfo.is_empty());
    assert_eq!(enc!(empty), b"\xff\xff\xff\xffclient_connect");
    assert_eq!(
        ClientConnect::decode(b"\xff\xff\xff\xffclient_connect \\cheats\\2")
            .unwrap()
            .prot(),
        Err(Error::InvalidValue {
            key: "cheats".into()
        })
    );
}

#[test]
fn reject_is_three_datagrams() {
    let r = Reject::new("server is full\n");
    let [a, b, c] = r.datagrams();
    assert_eq!(
        a,
        b"\xff\xff\xff\xfferrormsg\n^1Server was reject the connection:^7 server is full\n"
    );
    assert_eq!(
        b,
        b"\xff\xff\xff\xffprint\n^1Server was reject the connection:^7 server is full\n"
    );
    assert_eq!(c, b"\xff\xff\xff\xffdisconnect\n");
    assert_eq!(Reject::decode(&a).unwrap(), r);
    assert_eq!(Reject::decode(&b).unwrap(), r);
    assert_eq!(Disconnect::decode(&c).unwrap(), Disconnect);
    assert_eq!(
        Disconnect::decode(b"\xff\xff\xff\xffdisconnect").unwrap(),
        Disconnect
    );
    assert_eq!(
        HandshakeReply::decode(&a).unwrap(),
        HandshakeReply::ErrorMsg(r.to_errormsg())
    );
    assert_eq!(
        HandshakeReply::decode(&b).unwrap(),
        HandshakeReply::Print(r.to_print())
    );
    assert_eq!(
        HandshakeReply::decode(&c).unwrap(),
        HandshakeReply::Disconnect(Disconnect)
    );

    // A kick uses errormsg without the reject prefix.
    let kick = b"\xff\xff\xff\xfferrormsg\nKicked with message:\nafk\n";
    let e = ErrorMsg::decode(kick).unwrap();
    assert_eq!(e.text, b"Kicked with message:\nafk\n");
    assert_eq!(enc!(e), kick);
    assert_eq!(
        Reject::decode(kick),
        Err(Error::InvalidField("not a connection reject"))
    );
    assert_eq!(Reject::decode(&c), Err(Error::WrongHeader));

    // Text runs to a NUL; nothing may follow it.
    assert_eq!(
        Print::decode(b"\xff\xff\xff\xffprint\nhello\0")
            .unwrap()
            .text,
        b"hello"
    );
    assert_eq!(
        Print::decode(b"\xff\xff\xff\xffprint\nhello\0x"),
        Err(Error::Trailing(1))
    );
    assert_eq!(
        Print::decode(b"\xff\xff\xff\xffprint extra\nhello"),
        Err(Error::InvalidField("too many arguments"))
    );
    assert_eq!(
        Disconnect::decode(b"\xff\xff\xff\xffdisconnect now\n"),
        Err(Error::InvalidField("too many arguments"))
    );
}

// ---------------------------------------------------------------------------
// Split packets
// ---------------------------------------------------------------------------

fn t0() -> Instant {
    Instant::now()
}

const TIMEOUT: Duration = Duration::from_secs(3);

/// A rules reply too big for one GoldSrc datagram.
fn big_rules() -> Vec<u8> {
    let rules = RulesReply {
        rules: (0..150)
            .map(|i| {
                (
                    format!("sv_rule_number_{i}").into_bytes(),
                    format!("value {i}").into_bytes(),
                )
            })
            .collect(),
    };
    enc!(rules)
}

fn decoded(packets: &[Vec<u8>], form: SplitForm) -> Vec<Fragment> {
    packets
        .iter()
        .map(|p| Fragment::decode_as(p, form).unwrap())
        .collect()
}

#[test]
fn goldsrc_split_of_a_rules_reply_reassembles_out_of_order() {
    let payload = big_rules();
    assert!(payload.len() > 2 * GOLDSRC_SPLIT_SIZE);
    let packets = split(&payload, SplitForm::GoldSrc, 77, GOLDSRC_SPLIT_SIZE).unwrap();
    assert!(packets.len() >= 3 && packets.len() <= 5);
    for (i, p) in packets.iter().enumerate() {
        assert!(p.len() <= GOLDSRC_SPLIT_SIZE);
        assert_eq!(&p[..4], b"\xfe\xff\xff\xff");
        assert_eq!(&p[4..8], &77i32.to_le_bytes());
        assert_eq!(p[8], ((i as u8) << 4) | packets.len() as u8);
        if i + 1 < packets.len() {
            assert_eq!(p.len(), GOLDSRC_SPLIT_SIZE, "all but the last are full");
        }
        // The guess agrees with what the sender used.
        assert_eq!(Fragment::detect(p).unwrap(), SplitForm::GoldSrc);
    }
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    let now = t0();
    let mut order: Vec<usize> = (0..packets.len()).rev().collect();
    order.swap(0, 1);
    let mut out = None;
    for (n, &i) in order.iter().enumerate() {
        let got = r.push_packet(&packets[i], None, now).unwrap();
        if n + 1 < order.len() {
            assert!(got.is_none());
            assert_eq!(r.pending(), 1);
        } else {
            out = got;
        }
    }
    let out = out.unwrap();
    assert_eq!(out, payload);
    assert_eq!(r.pending(), 0);
    assert_eq!(r.buffered_bytes(), 0);
    let rules = RulesReply::decode(&out).unwrap();
    assert_eq!(rules.rules.len(), 150);
}

#[test]
fn xash_split_form() {
    let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    let packets = split(&payload, SplitForm::Xash, -5, 508).unwrap();
    let n = packets.len();
    assert_eq!(n, payload.len().div_ceil(508 - 10));
    assert_eq!(packets[1][8], n as u8, "low byte: total");
    assert_eq!(packets[1][9], 1, "high byte: index");
    assert!(packets.iter().all(|p| p.len() <= 508));
    let mut r = Reassembler::new(ReassemblyLimits::xash(TIMEOUT));
    let now = t0();
    let mut result = None;
    for p in packets.iter().rev() {
        if let Some(m) = r.push_packet(p, Some(SplitForm::Xash), now).unwrap() {
            result = Some(m);
        }
    }
    assert_eq!(result.unwrap(), payload);
}

#[test]
fn header_form_detection() {
    // First fragments are recognised by the FF×4 that starts the payload.
    let msg = b"\xff\xff\xff\xffEpayload".repeat(300);
    let gs = split(&msg, SplitForm::GoldSrc, 1, 1400).unwrap();
    let xs = split(&msg, SplitForm::Xash, 1, 1400).unwrap();
    assert_eq!(Fragment::detect(&gs[0]).unwrap(), SplitForm::GoldSrc);
    assert_eq!(Fragment::detect(&xs[0]).unwrap(), SplitForm::Xash);
    // Later GoldSrc fragments have a valid nibble id.
    assert_eq!(Fragment::detect(&gs[1]).unwrap(), SplitForm::GoldSrc);
    // A Xash id that is impossible as a GoldSrc id (total 10).
    let x = Fragment {
        form: SplitForm::Xash,
        sequence: 3,
        index: 4,
        total: 10,
        payload: b"netchan".to_vec(),
    };
    let bytes = enc!(x);
    assert_eq!(Fragment::detect(&bytes).unwrap(), SplitForm::Xash);
    assert_eq!(Fragment::decode(&bytes).unwrap(), x);
    // An ambiguous later netchan fragment: the caller must say what it expects.
    let amb = Fragment {
        form: SplitForm::Xash,
        sequence: 3,
        index: 1,
        total: 3,
        payload: b"netchan".to_vec(),
    };
    let bytes = enc!(amb);
    assert_eq!(Fragment::detect(&bytes).unwrap(), SplitForm::GoldSrc);
    assert_eq!(Fragment::decode_as(&bytes, SplitForm::Xash).unwrap(), amb);
    // Neither form fits.
    assert_eq!(
        Fragment::detect(b"\xfe\xff\xff\xff\0\0\0\0\x00\x05"),
        Err(Error::InvalidField("split packet id"))
    );
    assert!(matches!(
        Fragment::detect(b"\xfe\xff\xff\xff\0\0\0\0"),
        Err(Error::Truncated { .. })
    ));
    assert_eq!(
        Fragment::detect(b"\xff\xff\xff\xff\0\0\0\0\x01"),
        Err(Error::WrongHeader)
    );
}

#[test]
fn duplicates_are_ignored() {
    let payload = big_rules();
    let packets = split(&payload, SplitForm::GoldSrc, 9, 1400).unwrap();
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    let now = t0();
    assert_eq!(r.push_packet(&packets[0], None, now).unwrap(), None);
    let before = r.buffered_bytes();
    assert_eq!(r.push_packet(&packets[0], None, now).unwrap(), None);
    assert_eq!(r.buffered_bytes(), before, "duplicate not stored twice");
    let mut out = None;
    for p in &packets[1..] {
        out = r.push_packet(p, None, now).unwrap();
    }
    assert_eq!(out.unwrap(), payload);
    // A late duplicate after completion starts a new (incomplete) set that expires.
    assert_eq!(r.push_packet(&packets[1], None, now).unwrap(), None);
    assert_eq!(r.pending(), 1);
    assert_eq!(r.expire(now + TIMEOUT), 1);
    assert_eq!(r.pending(), 0);
}

#[test]
fn missing_fragment_times_out() {
    let payload = big_rules();
    let packets = split(&payload, SplitForm::GoldSrc, 9, 1400).unwrap();
    let last = packets.len() - 1;
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    let start = t0();
    for p in &packets[..last] {
        assert_eq!(r.push_packet(p, None, start).unwrap(), None);
    }
    assert_eq!(r.expire(start + TIMEOUT - Duration::from_millis(1)), 0);
    assert_eq!(r.pending(), 1);
    // The last fragment arrives too late: the others are gone, nothing completes.
    let late = start + TIMEOUT;
    assert_eq!(r.push_packet(&packets[last], None, late).unwrap(), None);
    assert_eq!(r.pending(), 1);
    assert_eq!(r.buffered_bytes(), packets[last].len() - 9);
    assert_eq!(r.expire(late + TIMEOUT), 1);
}

#[test]
fn lying_counts_are_errors() {
    let now = t0();
    let frag = |index, total, form| Fragment {
        form,
        sequence: 1,
        index,
        total,
        payload: b"x".to_vec(),
    };
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    for (f, e) in [
        (
            frag(0, 0, SplitForm::GoldSrc),
            Error::BadLength("split total is zero"),
        ),
        (
            frag(0, 6, SplitForm::GoldSrc),
            Error::BadLength("split total above the limit"),
        ),
        (
            frag(2, 2, SplitForm::GoldSrc),
            Error::InvalidField("split index not below total"),
        ),
        (
            frag(5, 3, SplitForm::Xash),
            Error::InvalidField("split index not below total"),
        ),
    ] {
        assert_eq!(r.push(f, now), Err(e));
    }
    // The same lies are refused at decode time.
    assert_eq!(
        Fragment::decode_as(b"\xfe\xff\xff\xff\x01\0\0\0\x00x", SplitForm::GoldSrc),
        Err(Error::BadLength("split total is zero"))
    );
    assert_eq!(
        Fragment::decode_as(b"\xfe\xff\xff\xff\x01\0\0\0\x06x", SplitForm::GoldSrc),
        Err(Error::BadLength("split total above the limit"))
    );
    assert_eq!(
        Fragment::decode_as(b"\xfe\xff\xff\xff\x01\0\0\0\x33x", SplitForm::GoldSrc),
        Err(Error::InvalidField("split index not below total"))
    );
    assert_eq!(
        Fragment::decode_as(b"\xfe\xff\xff\xff\x01\0\0\0\xc8\x00x", SplitForm::Xash),
        Err(Error::BadLength("split total above the limit"))
    );
    // The total changes within one sequence: error, and the set is dropped.
    assert_eq!(r.push(frag(0, 3, SplitForm::GoldSrc), now), Ok(None));
    assert_eq!(
        r.push(frag(1, 4, SplitForm::GoldSrc), now),
        Err(Error::InvalidField("split total changed within a sequence"))
    );
    assert_eq!(r.pending(), 0);
    // So does the header form.
    assert_eq!(r.push(frag(0, 3, SplitForm::GoldSrc), now), Ok(None));
    assert!(r.push(frag(1, 3, SplitForm::Xash), now).is_err());
    assert_eq!(r.pending(), 0);
    // Oversized fragment payloads.
    let mut big = frag(0, 2, SplitForm::GoldSrc);
    big.payload = vec![0; GOLDSRC_SPLIT_SIZE + 1];
    assert_eq!(
        r.push(big, now),
        Err(Error::BadLength("fragment payload too large"))
    );
    // A reassembler configured tighter than the form.
    let mut tight = Reassembler::new(ReassemblyLimits {
        max_fragments: 3,
        ..ReassemblyLimits::xash(TIMEOUT)
    });
    assert_eq!(
        tight.push(frag(0, 4, SplitForm::Xash), now),
        Err(Error::BadLength("split total above the limit"))
    );
}

#[test]
fn goldsrc_limit_is_five_fragments() {
    let body = GOLDSRC_SPLIT_SIZE - 9;
    let five = vec![7u8; body * 5];
    let packets = split(&five, SplitForm::GoldSrc, 2, GOLDSRC_SPLIT_SIZE).unwrap();
    assert_eq!(packets.len(), usize::from(GOLDSRC_MAX_FRAGMENTS));
    let six = vec![7u8; body * 5 + 1];
    assert_eq!(
        split(&six, SplitForm::GoldSrc, 2, GOLDSRC_SPLIT_SIZE),
        Err(Error::BadLength("payload needs too many fragments"))
    );
    // The nibble could say 15, the engine accepts 5.
    let f = Fragment {
        form: SplitForm::GoldSrc,
        sequence: 2,
        index: 0,
        total: 15,
        payload: vec![1],
    };
    assert!(Fragment::decode_as(&enc!(f), SplitForm::GoldSrc).is_err());
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    let now = t0();
    let mut out = None;
    for p in &packets {
        out = r.push_packet(p, Some(SplitForm::GoldSrc), now).unwrap();
    }
    assert_eq!(out.unwrap(), five);
    // Xash form: 131 fragments at most.
    let tiny = vec![1u8; usize::from(XASH_MAX_FRAGMENTS) + 1];
    assert!(split(&tiny, SplitForm::Xash, 1, 11).is_err());
    assert_eq!(
        split(&tiny[1..], SplitForm::Xash, 1, 11).unwrap().len(),
        usize::from(XASH_MAX_FRAGMENTS)
    );
    assert!(split(b"abc", SplitForm::Xash, 1, 10).is_err());
}

#[test]
fn new_sequence_restarts_and_memory_is_bounded() {
    let now = t0();
    let frag = |sequence, index| Fragment {
        form: SplitForm::GoldSrc,
        sequence,
        index,
        total: 2,
        payload: vec![sequence as u8; 100],
    };
    // Engine behaviour (one slot): a new sequence drops the old one.
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    assert_eq!(r.push(frag(1, 0), now), Ok(None));
    assert_eq!(r.push(frag(2, 0), now), Ok(None));
    assert_eq!(r.pending(), 1);
    assert_eq!(
        r.push(frag(1, 1), now),
        Ok(None),
        "sequence 1 was restarted"
    );
    assert_eq!(
        r.push(frag(1, 0), now),
        Ok(Some([vec![1u8; 100], vec![1u8; 100]].concat()))
    );

    // Several slots: the oldest is evicted, memory stays under the bound.
    let limits = ReassemblyLimits {
        max_pending: 3,
        ..ReassemblyLimits::goldsrc(TIMEOUT)
    };
    let mut r = Reassembler::new(limits);
    for s in 0..50 {
        r.push(frag(s, 0), now + Duration::from_millis(s as u64))
            .unwrap();
        assert!(r.pending() <= 3);
        assert!(r.buffered_bytes() <= limits.max_buffered_bytes());
    }
    assert_eq!(r.pending(), 3);
    // The three newest survive and complete.
    let late = now + Duration::from_millis(60);
    assert!(r.push(frag(49, 1), late).unwrap().is_some());
    assert!(r.push(frag(10, 1), late).unwrap().is_none());
    r.clear();
    assert_eq!(r.pending(), 0);
    assert_eq!(limits.max_buffered_bytes(), 3 * 5 * 1400);
}

#[test]
fn single_fragment_and_empty_payload() {
    let now = t0();
    let packets = split(b"", SplitForm::GoldSrc, 4, 1400).unwrap();
    assert_eq!(packets, vec![b"\xfe\xff\xff\xff\x04\0\0\0\x01".to_vec()]);
    let mut r = Reassembler::new(ReassemblyLimits::goldsrc(TIMEOUT));
    assert_eq!(
        r.push_packet(&packets[0], None, now).unwrap(),
        Some(Vec::new())
    );
    assert_eq!(r.pending(), 0);
}

// ---------------------------------------------------------------------------
// Property tests: round trips
// ---------------------------------------------------------------------------

fn cstring() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(1u8..=255, 0..24)
}

fn no_nul_text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(1u8..=255, 0..200)
}

fn extra_data() -> impl Strategy<Value = ExtraData> {
    (
        prop::option::of(any::<u16>()),
        prop::option::of(any::<u64>()),
        prop::option::of((any::<u16>(), cstring())),
        prop::option::of(cstring()),
        prop::option::of(any::<u64>()),
        prop::sample::select(vec![0u8, 0x02, 0x04, 0x08, 0x0e]),
    )
        .prop_map(
            |(port, steam_id, source_tv, keywords, game_id, unknown_flags)| ExtraData {
                port,
                steam_id,
                source_tv,
                keywords,
                game_id,
                unknown_flags,
            },
        )
}

fn info_reply() -> impl Strategy<Value = InfoReply> {
    (
        (any::<u8>(), cstring(), cstring(), cstring(), cstring()),
        (any::<i16>(), any::<u8>(), any::<u8>(), any::<u8>()),
        (
            any::<u8>(),
            any::<u8>(),
            any::<bool>(),
            any::<bool>(),
            cstring(),
        ),
        prop::option::of(extra_data()),
    )
        .prop_map(
            |(
                (protocol, name, map, folder, game),
                (app_id, players, max_players, bots),
                (server_type, environment, password, secure, version),
                extra,
            )| InfoReply {
                protocol,
                name,
                map,
                folder,
                game,
                app_id,
                players,
                max_players,
                bots,
                server_type,
                environment,
                password,
                secure,
                version,
                extra,
            },
        )
}

fn legacy_info() -> impl Strategy<Value = LegacyInfoReply> {
    let mod_info = (
        cstring(),
        cstring(),
        any::<u32>(),
        any::<u32>(),
        any::<u8>(),
        any::<u8>(),
    )
        .prop_map(
            |(link, download_link, version, size, multiplayer_only, own_dll)| ModInfo {
                link,
                download_link,
                version,
                size,
                multiplayer_only,
                own_dll,
            },
        );
    (
        (cstring(), cstring(), cstring(), cstring(), cstring()),
        (
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
        ),
        (
            any::<bool>(),
            prop::option::of(mod_info),
            any::<bool>(),
            any::<u8>(),
        ),
    )
        .prop_map(
            |(
                (address, name, map, folder, game),
                (players, max_players, protocol, server_type, environment),
                (password, mod_info, secure, bots),
            )| LegacyInfoReply {
                address,
                name,
                map,
                folder,
                game,
                players,
                max_players,
                protocol,
                server_type,
                environment,
                password,
                mod_info,
                secure,
                bots,
            },
        )
}

fn players() -> impl Strategy<Value = PlayersReply> {
    prop::collection::vec(
        (any::<u8>(), cstring(), any::<i32>(), any::<f32>()).prop_map(
            |(index, name, frags, duration)| Player {
                index,
                name,
                frags,
                duration,
            },
        ),
        0..40,
    )
    .prop_map(|players| PlayersReply { players })
}

/// Info-string bytes: anything but NUL, `\`, `"` and `\n` (which would end the
/// command line before the argument).
fn info_part(min: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        any::<u8>().prop_filter("info byte", |b| !matches!(b, 0 | b'\\' | b'"' | b'\n')),
        min..16,
    )
}

/// A valid info string whose values are non-empty (an empty last value would end
/// the string with `\`, which cannot be quoted; see `tokenize`).
fn info_string() -> impl Strategy<Value = InfoString> {
    prop::collection::vec((info_part(1), info_part(1)), 0..8).prop_map(|pairs| {
        let mut s = InfoString::new();
        for (k, v) in pairs {
            let k = String::from_utf8_lossy(&k).into_owned();
            if k.contains(['\\', '"']) {
                continue;
            }
            let _ = s.set(&k, v);
        }
        s
    })
}

fn hex(n: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(b"0123456789abcdefABCDEF".to_vec()), n)
        .prop_map(|v| String::from_utf8(v).unwrap_or_default())
}

proptest! {
    #[test]
    fn a2s_round_trips(
        info in info_reply(),
        legacy in legacy_info(),
        pl in players(),
        rules in prop::collection::vec((cstring(), cstring()), 0..60),
        ch in any::<i32>(),
        info_ch in prop::option::of(any::<i32>()),
    ) {
        let b = enc!(info);
        prop_assert_eq!(&InfoReply::decode(&b).unwrap(), &info);
        prop_assert_eq!(Reply::decode(&b).unwrap(), Reply::Info(info));

        let b = enc!(legacy);
        prop_assert_eq!(&LegacyInfoReply::decode(&b).unwrap(), &legacy);

        // Floats may be NaN: compare the bytes, then the other fields.
        let b = enc!(pl);
        let d = PlayersReply::decode(&b).unwrap();
        prop_assert_eq!(enc!(d), b);
        prop_assert_eq!(d.players.len(), pl.players.len());
        for (x, y) in d.players.iter().zip(&pl.players) {
            prop_assert_eq!((&x.name, x.index, x.frags), (&y.name, y.index, y.frags));
            prop_assert_eq!(x.duration.to_bits(), y.duration.to_bits());
        }

        let r = RulesReply { rules };
        let b = enc!(r);
        prop_assert_eq!(&RulesReply::decode(&b).unwrap(), &r);

        let c = ChallengeReply { challenge: ch };
        prop_assert_eq!(ChallengeReply::decode(&enc!(c)).unwrap(), c);
        let p = PlayersRequest { challenge: ch };
        prop_assert_eq!(PlayersRequest::decode(&enc!(p)).unwrap(), p);
        let v = RulesRequest { challenge: ch };
        prop_assert_eq!(RulesRequest::decode(&enc!(v)).unwrap(), v);
        let i = InfoRequest { challenge: info_ch };
        prop_assert_eq!(InfoRequest::decode(&enc!(i)).unwrap(), i);
        prop_assert_eq!(Request::decode(&enc!(i)).unwrap(), Request::Info(i));
    }

    #[test]
    fn handshake_round_trips(
        steam in any::<bool>(),
        newline in any::<bool>(),
        chal in any::<i32>(),
        bw in prop::option::of(any::<bool>()),
        gs_chal in any::<u32>(),
        auth in any::<i32>(),
        steam_id in prop::option::of((any::<u64>(), any::<i32>())),
        size in any::<u32>(),
        bw_chal in prop::option::of(any::<i32>()),
        filler in prop::collection::vec(any::<u8>(), 0..1500),
        text in no_nul_text(),
    ) {
        let g = GetChallenge { steam, newline };
        prop_assert_eq!(GetChallenge::decode(&enc!(g)).unwrap(), g);

        for c in [
            ChallengeResponse::Xash { challenge: chal, bandwidth_test: bw },
            ChallengeResponse::GoldSrc { challenge: gs_chal, auth_protocol: auth, steam: steam_id },
        ] {
            prop_assert_eq!(ChallengeResponse::decode(&enc!(c)).unwrap(), c);
            prop_assert_eq!(HandshakeReply::decode(&enc!(c)).unwrap(), HandshakeReply::Challenge(c));
        }

        let b = BandwidthTest { protocol: chal, size, challenge: bw_chal };
        prop_assert_eq!(BandwidthTest::decode(&enc!(b)).unwrap(), b);

        let t = TestPacket::new(filler);
        let bytes = enc!(t);
        prop_assert_eq!(bytes.len(), t.len());
        let d = TestPacket::decode(&bytes).unwrap();
        prop_assert!(d.crc_matches());
        prop_assert_eq!(d, t);

        let e = ErrorMsg { text: text.clone() };
        prop_assert_eq!(ErrorMsg::decode(&enc!(e)).unwrap(), e);
        let p = Print { text: text.clone() };
        prop_assert_eq!(Print::decode(&enc!(p)).unwrap(), p);

        let r = Reject { reason: text };
        let [a, b, c] = r.datagrams();
        prop_assert_eq!(&Reject::decode(&a).unwrap(), &r);
        prop_assert_eq!(&Reject::decode(&b).unwrap(), &r);
        prop_assert_eq!(Disconnect::decode(&c).unwrap(), Disconnect);
    }

    #[test]
    fn connect_round_trips(
        protocol in any::<i32>(),
        challenge in any::<i32>(),
        protinfo in info_string(),
        userinfo in info_string(),
        uuid in hex(32),
        qport in any::<u16>(),
        ext in any::<u32>(),
        cookie in prop::option::of(hex(16)),
        cheats in any::<bool>(),
        srv_chal in prop::option::of(any::<i32>()),
    ) {
        let c = Connect { protocol, challenge, protinfo: protinfo.clone(), userinfo };
        let d = Connect::decode(&enc!(c)).unwrap();
        prop_assert_eq!(&d, &c);
        prop_assert_eq!(HandshakeRequest::decode(&enc!(c)).unwrap(), HandshakeRequest::Connect(c));

        // Arbitrary protinfo in client_connect (quoted when it must be).
        let m = ClientConnect { protinfo };
        prop_assert_eq!(ClientConnect::decode(&enc!(m)).unwrap(), m);

        // Typed views survive the wire.
        let ext = if cookie.is_some() { ext | EXT_NETCHAN_COOKIE } else { ext & !EXT_NETCHAN_COOKIE };
        let cp = ConnectProtInfo { uuid, qport, ext, cookie: cookie.clone() };
        let c = Connect { protocol: 49, challenge, protinfo: cp.to_info().unwrap(), userinfo: InfoString::new() };
        prop_assert_eq!(Connect::decode(&enc!(c)).unwrap().prot().unwrap(), cp);
        let sp = ServerProtInfo { ext, cheats, challenge: srv_chal, cookie };
        let m = ClientConnect { protinfo: sp.to_info().unwrap() };
        prop_assert_eq!(ClientConnect::decode(&enc!(m)).unwrap().prot().unwrap(), sp);
    }

    #[test]
    fn split_round_trips(
        payload in prop::collection::vec(any::<u8>(), 0..2500),
        xash in any::<bool>(),
        sequence in any::<i32>(),
        max_datagram in 40usize..1400,
        perm_seed in any::<u64>(),
    ) {
        let form = if xash { SplitForm::Xash } else { SplitForm::GoldSrc };
        let packets = match split(&payload, form, sequence, max_datagram) {
            Ok(p) => p,
            Err(e) => {
                // Only too many fragments may fail here.
                let body = max_datagram - form.header_len();
                prop_assert!(payload.len().div_ceil(body) > usize::from(form.max_fragments()));
                prop_assert_eq!(e, Error::BadLength("payload needs too many fragments"));
                return Ok(());
            }
        };
        prop_assert!(packets.iter().all(|p| p.len() <= max_datagram));
        for (i, f) in decoded(&packets, form).iter().enumerate() {
            prop_assert_eq!(usize::from(f.index), i);
            prop_assert_eq!(usize::from(f.total), packets.len());
            prop_assert_eq!(f.sequence, sequence);
            prop_assert_eq!(&enc!(f), &packets[i]);
        }
        // Deliver in a pseudo-random order, with one duplicate.
        let mut order: Vec<usize> = (0..packets.len()).collect();
        let mut s = perm_seed | 1;
        for i in (1..order.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            order.swap(i, (s % (i as u64 + 1)) as usize);
        }
        if order.len() > 1 {
            order.insert(1, order[0]);
        }
        let mut r = Reassembler::new(ReassemblyLimits {
            max_fragment_payload: 1400,
            ..ReassemblyLimits::xash(TIMEOUT)
        });
        let now = t0();
        let mut out = None;
        for &i in &order {
            if let Some(m) = r.push_packet(&packets[i], Some(form), now).unwrap() {
                prop_assert!(out.is_none());
                out = Some(m);
            }
        }
        prop_assert_eq!(out, Some(payload));
        prop_assert_eq!(r.pending(), 0);
    }
}

// ---------------------------------------------------------------------------
// Property tests: decoders never panic, and what they accept is stable
// ---------------------------------------------------------------------------

/// If `$t::decode($bytes)` succeeds, encoding and decoding again gives the same
/// bytes.
macro_rules! stable {
    ($t:ty, $bytes:expr) => {{
        if let Ok(v) = <$t>::decode($bytes) {
            let once = enc!(v);
            let again = <$t>::decode(&once).expect(concat!(stringify!($t), " re-decode"));
            assert_eq!(enc!(again), once, "{}", stringify!($t));
        }
    }};
}

/// Ends in `\` where quoting is needed: the one form the command line cannot carry.
fn unquotable(info: &InfoString) -> bool {
    info.to_bytes().ends_with(b"\\")
}

fn run_all_decoders(bytes: &[u8]) {
    stable!(InfoRequest, bytes);
    stable!(InfoReply, bytes);
    stable!(LegacyInfoReply, bytes);
    stable!(PlayersRequest, bytes);
    stable!(PlayersReply, bytes);
    stable!(RulesRequest, bytes);
    stable!(RulesReply, bytes);
    stable!(ChallengeReply, bytes);
    stable!(Request, bytes);
    stable!(Reply, bytes);
    stable!(GetChallenge, bytes);
    stable!(ChallengeResponse, bytes);
    stable!(BandwidthTest, bytes);
    stable!(TestPacket, bytes);
    stable!(ErrorMsg, bytes);
    stable!(Print, bytes);
    stable!(Disconnect, bytes);
    match HandshakeRequest::decode(bytes) {
        Ok(HandshakeRequest::Connect(c)) => {
            let _ = c.prot();
            if !unquotable(&c.protinfo) && !unquotable(&c.userinfo) {
                let once = enc!(c);
                assert_eq!(Connect::decode(&once).expect("connect re-decode"), c);
                assert_eq!(enc!(Connect::decode(&once).unwrap()), once);
            }
        }
        Ok(_) => stable!(HandshakeRequest, bytes),
        Err(_) => {}
    }
    match HandshakeReply::decode(bytes) {
        Ok(HandshakeReply::ClientConnect(m)) => {
            if !unquotable(&m.protinfo) {
                let once = enc!(m);
                assert_eq!(
                    ClientConnect::decode(&once).expect("client_connect re-decode"),
                    m
                );
            }
        }
        Ok(_) => stable!(HandshakeReply, bytes),
        Err(_) => {}
    }
    if let Ok(c) = ClientConnect::decode(bytes) {
        let _ = c.prot();
    }
    if let Ok(r) = Reject::decode(bytes) {
        let [a, b, _] = r.datagrams();
        assert_eq!(Reject::decode(&a).unwrap(), r);
        assert_eq!(Reject::decode(&b).unwrap(), r);
    }
    let _ = tokenize(bytes);
    for f in [
        Fragment::decode(bytes),
        Fragment::decode_as(bytes, SplitForm::GoldSrc),
        Fragment::decode_as(bytes, SplitForm::Xash),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(enc!(f), bytes, "fragments re-encode exactly");
    }
    let _ = Fragment::detect(bytes);
}

fn headers() -> Vec<&'static [u8]> {
    vec![
        &b""[..],
        InfoRequest::HEADER,
        InfoReply::HEADER,
        LegacyInfoReply::HEADER,
        PlayersRequest::HEADER,
        PlayersReply::HEADER,
        RulesRequest::HEADER,
        RulesReply::HEADER,
        ChallengeReply::HEADER,
        GetChallenge::HEADER,
        ChallengeResponse::HEADER,
        ChallengeResponse::GOLDSRC_HEADER,
        BandwidthTest::HEADER,
        TestPacket::HEADER,
        Connect::HEADER,
        ClientConnect::HEADER,
        ErrorMsg::HEADER,
        Print::HEADER,
        Disconnect::HEADER,
        b"\xff\xff\xff\xffconnect 49 ",
        b"\xff\xff\xff\xffclient_connect \\",
        b"\xff\xff\xff\xffchallenge -",
        b"\xfe\xff\xff\xff",
        b"\xfe\xff\xff\xff\x01\x00\x00\x00",
    ]
}

/// Bytes that are often meaningful to these parsers.
fn interesting_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            any::<u8>(),
            prop::sample::select(b"\0\n \"\\,{}()'/-0123456789abcdef\xff\xfe".to_vec()),
        ],
        0..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decoders_never_panic(header in prop::sample::select(headers()), tail in interesting_bytes()) {
        let bytes = [header, &tail[..]].concat();
        run_all_decoders(&bytes);
    }

    #[test]
    fn decoders_never_panic_on_raw_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        run_all_decoders(&bytes);
    }

    #[test]
    fn reassembler_never_panics_and_stays_bounded(
        packets in prop::collection::vec(
            (prop::sample::select(vec![0u8, 1, 2, 3, 0x10, 0x12, 0x21, 0x45, 0x54, 0xff]),
             any::<u8>(), 0i32..4, prop::collection::vec(any::<u8>(), 0..64)),
            0..60),
        max_pending in 0usize..4,
        steps in prop::collection::vec(0u64..2000, 60),
        forced in prop::option::of(any::<bool>()),
    ) {
        let limits = ReassemblyLimits {
            max_fragments: 8,
            max_fragment_payload: 48,
            max_pending,
            timeout: Duration::from_millis(1000),
        };
        let mut r = Reassembler::new(limits);
        let form = forced.map(|x| if x { SplitForm::Xash } else { SplitForm::GoldSrc });
        let mut now = t0();
        for ((b8, b9, seq, payload), step) in packets.into_iter().zip(steps) {
            now += Duration::from_millis(step);
            let mut p = b"\xfe\xff\xff\xff".to_vec();
            p.extend_from_slice(&seq.to_le_bytes());
            p.push(b8);
            p.push(b9);
            p.extend_from_slice(&payload);
            if let Ok(Some(m)) = r.push_packet(&p, form, now) {
                prop_assert!(m.len() <= 8 * (48 + 1));
            }
            prop_assert!(r.pending() <= max_pending);
            prop_assert!(r.buffered_bytes() <= limits.max_buffered_bytes());
        }
    }
}
