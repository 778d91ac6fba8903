//! Whole-datagram codec: fixed vectors from the notes, the real FlightGear captures,
//! and round-trip property tests.

use fgmp::geo::{from_ecef, FEET_PER_METRE};
use fgmp::header::{MsgId, RangeWord};
use fgmp::message::{to_bytes, Body, Chat, Message, Position, RoutingInfo};
use fgmp::{Callsign, Error, Header, Magic};
use proptest::prelude::*;

fn data(rel: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../../testdata/fg/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn captures() -> Vec<Vec<u8>> {
    let b = data("c172p_TEST1_400.lpf");
    let mut out = Vec::new();
    let mut i = 0;
    while i + 4 <= b.len() {
        let n = u32::from_be_bytes(b[i..i + 4].try_into().unwrap()) as usize;
        out.push(b[i + 4..i + 4 + n].to_vec());
        i += 4 + n;
    }
    out
}

fn samples() -> Vec<(String, Vec<u8>)> {
    let dir = format!("{}/../../testdata/fg/samples", env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn header_layout_from_the_notes() {
    // magic FGFS, version 1.1, msgid 9 (ping), MsgLen 32, range 100 in the low half, port 0, "TEST1".
    let bytes: [u8; 32] = [
        0x46, 0x47, 0x46, 0x53, 0, 1, 0, 1, 0, 0, 0, 9, 0, 0, 0, 32, 0, 0, 0, 100, 0, 0, 0, 0,
        b'T', b'E', b'S', b'T', b'1', 0, 0, 0,
    ];
    let h = Header::decode(&bytes).unwrap();
    assert_eq!(h.magic, Magic::Client);
    assert_eq!(h.version, 0x0001_0001);
    assert_eq!(h.msg_id, MsgId::Ping);
    assert_eq!(h.msg_len, 32);
    assert_eq!(h.range(), RangeWord::Plain(100));
    assert_eq!(h.callsign.as_bytes(), b"TEST1");
    let mut out = Vec::new();
    h.encode(&mut out);
    assert_eq!(out, bytes);
    let mut relay = bytes;
    relay[0..4].copy_from_slice(b"SFGF");
    assert_eq!(Header::decode(&relay).unwrap().magic, Magic::Relay);
    assert_eq!(Header::decode(&bytes[..31]), Err(Error::Runt(31)));
}

#[test]
fn old_message_ids_are_recognised() {
    for (id, want) in [
        (1, MsgId::Chat),
        (2, MsgId::Legacy(2)),
        (6, MsgId::Legacy(6)),
        (7, MsgId::Position),
        (8, MsgId::Mp2017),
        (9, MsgId::Ping),
        (10, MsgId::Pong),
        (11, MsgId::Unknown(11)),
    ] {
        assert_eq!(MsgId::from_wire(id), want);
        assert_eq!(want.to_wire(), id);
    }
}

#[test]
fn every_capture_decodes_and_reencodes_to_the_same_bytes() {
    let caps = captures();
    assert_eq!(caps.len(), 400);
    let index = String::from_utf8(data("c172p_TEST1_400.index.tsv")).unwrap();
    let lens: Vec<usize> = index
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(lens.len(), 400);
    for (i, d) in caps.iter().enumerate() {
        assert_eq!(d.len(), lens[i], "datagram {}", i + 1);
        let m = Message::decode(d).unwrap_or_else(|e| panic!("datagram {}: {e}", i + 1));
        assert_eq!(m.header.callsign.as_bytes(), b"TEST1");
        assert_eq!(m.header.msg_id, MsgId::Position);
        assert_eq!(m.header.msg_len as usize, d.len());
        assert_eq!(m.header.range(), RangeWord::Plain(100));
        let Body::Position(p) = &m.body else {
            panic!("not a position")
        };
        assert_eq!(p.model, b"Aircraft/c172p/Models/c172p.xml");
        assert!(p.is_v2());
        assert_eq!(
            to_bytes(&m).unwrap(),
            *d,
            "datagram {} re-encodes byte for byte",
            i + 1
        );
        let r = RoutingInfo::parse(d).unwrap();
        assert_eq!(r.position, Some(p.position));
    }
    for (name, d) in samples() {
        let m = Message::decode(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_bytes(&m).unwrap(), d, "{name}");
        assert!(RoutingInfo::parse(&d).is_ok(), "{name}");
    }
}

#[test]
fn first_capture_position_matches_the_readme() {
    let d = data("samples/c172p_TEST1_first_datagram.bin");
    assert_eq!(d.len(), 893);
    let Body::Position(p) = Message::decode(&d).unwrap().body else {
        panic!()
    };
    let g = from_ecef(p.position);
    assert!((g.lat_deg - 63.983133).abs() < 1e-6, "{}", g.lat_deg);
    assert!((g.lon_deg - -22.59145).abs() < 1e-5, "{}", g.lon_deg);
    assert!((g.alt_m - 914.4).abs() < 0.05, "{}", g.alt_m);
    assert_eq!(p.linear_vel, [0.0; 3]);
    assert_eq!(p.lag, 0.1);
    assert_eq!(d.len() - 232, 661, "661 property bytes");
    // The aircraft on the ground before scenery loaded reports -9999 ft.
    let d = data("samples/c172p_TEST1_onground_before_scenery_-9999ft.bin");
    let Body::Position(p) = Message::decode(&d).unwrap().body else {
        panic!()
    };
    let alt_ft = from_ecef(p.position).alt_m * FEET_PER_METRE;
    assert!((alt_ft - -9999.0).abs() < 1.0, "{alt_ft}");
}

#[test]
fn chat_message_is_288_bytes() {
    let m = Message::chat(Callsign::new("TEST1").unwrap(), b"Hello");
    let b = to_bytes(&m).unwrap();
    assert_eq!(b.len(), 288);
    assert_eq!(&b[12..16], &288u32.to_be_bytes());
    assert_eq!(&b[32..38], b"Hello\0");
    assert_eq!(
        Message::decode(&b).unwrap(),
        Message {
            header: Header {
                msg_len: 288,
                ..m.header
            },
            ..m
        }
    );
    assert!(Chat {
        text: vec![b'x'; 256]
    }
    .encode(&mut Vec::new())
    .is_err());
}

#[test]
fn strict_decoding_rejects_what_flightgear_drops() {
    let good = data("samples/c172p_TEST1_position.bin");
    let mut v = good.clone();
    v[4..8].copy_from_slice(&0x0002_0001u32.to_be_bytes());
    assert_eq!(Message::decode(&v), Err(Error::BadVersion(0x0002_0001)));
    assert_eq!(
        RoutingInfo::parse(&v).unwrap_err(),
        Error::BadVersion(0x0002_0001)
    );
    let mut v = good.clone();
    v[12..16].copy_from_slice(&999u32.to_be_bytes());
    assert!(matches!(
        RoutingInfo::parse(&v),
        Err(Error::LengthMismatch { msg_len: 999, .. })
    ));
    let mut v = good.clone();
    v.resize(1201, 0);
    v[12..16].copy_from_slice(&1201u32.to_be_bytes());
    assert_eq!(RoutingInfo::parse(&v), Err(Error::Oversize(1201)));
    let mut v = good[..231].to_vec();
    v[12..16].copy_from_slice(&231u32.to_be_bytes());
    assert_eq!(RoutingInfo::parse(&v), Err(Error::PositionTooShort(231)));
    let mut v = good.clone();
    v[144..152].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
    assert_eq!(RoutingInfo::parse(&v), Err(Error::NonFinitePosition));
    let mut v = good.clone();
    v[144..168].fill(0);
    assert_eq!(RoutingInfo::parse(&v), Err(Error::ZeroPosition));
    let mut v = good;
    v[0] = b'X';
    assert!(matches!(RoutingInfo::parse(&v), Err(Error::BadMagic(_))));
}

fn callsign() -> impl Strategy<Value = Callsign> {
    "[A-Za-z0-9_-]{1,7}".prop_map(|s| Callsign::new(&s).unwrap())
}

fn vec3f() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(-1e6f32..1e6)
}

fn position() -> impl Strategy<Value = Position> {
    (
        "[ -~]{0,95}",
        prop::num::f64::NORMAL,
        prop::num::f64::NORMAL,
        prop::array::uniform3(-7e6f64..7e6),
        (vec3f(), vec3f(), vec3f(), vec3f(), vec3f()),
        prop_oneof![Just(0u32), Just(fgmp::V2_PAD_MAGIC)],
    )
        .prop_map(
            |(model, time, lag, position, (o, lv, av, la, aa), pad)| Position {
                model: model.into_bytes(),
                time,
                lag,
                position,
                orientation: o,
                linear_vel: lv,
                angular_vel: av,
                linear_accel: la,
                angular_accel: aa,
                pad,
                properties: Default::default(),
            },
        )
}

proptest! {
    #[test]
    fn header_round_trip(cs in callsign(), id in any::<u32>(), len in any::<u32>(), range in any::<u32>(), port in any::<u32>(), relay in any::<bool>()) {
        let h = Header {
            magic: if relay { Magic::Relay } else { Magic::Client },
            version: fgmp::VERSION,
            msg_id: MsgId::from_wire(id),
            msg_len: len,
            range_word: range,
            reply_port: port,
            callsign: cs,
        };
        let mut b = Vec::new();
        h.encode(&mut b);
        prop_assert_eq!(b.len(), 32);
        prop_assert_eq!(Header::decode(&b).unwrap(), h);
    }

    #[test]
    fn position_round_trip(cs in callsign(), range in any::<u16>(), p in position()) {
        let m = Message::position(cs, range, p);
        let b = to_bytes(&m).unwrap();
        prop_assert_eq!(b.len(), 232);
        let back = Message::decode(&b).unwrap();
        prop_assert_eq!(back.header.msg_len as usize, b.len());
        prop_assert_eq!(&back.body, &m.body);
        prop_assert_eq!(to_bytes(&back).unwrap(), b);
    }

    #[test]
    fn chat_round_trip(cs in callsign(), text in "[ -~]{0,255}") {
        let m = Message::chat(cs, text.as_bytes());
        let b = to_bytes(&m).unwrap();
        let back = Message::decode(&b).unwrap();
        prop_assert_eq!(back.body, Body::Chat(Chat { text: text.into_bytes() }));
    }

    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1400)) {
        let _ = RoutingInfo::parse(&bytes);
        if let Ok(m) = Message::decode(&bytes) {
            // Whatever decodes strictly re-encodes to a datagram that decodes the same.
            if let Ok(b) = to_bytes(&m) {
                prop_assert_eq!(Message::decode(&b).map(|x| x.body), Ok(m.body));
            }
        }
    }

    #[test]
    fn mutated_captures_never_panic(i in 0usize..400, flips in prop::collection::vec((0usize..1000, any::<u8>()), 1..8)) {
        let mut d = captures().swap_remove(i);
        for (at, v) in flips {
            let n = d.len();
            d[at % n] = v;
        }
        let _ = RoutingInfo::parse(&d);
        let _ = Message::decode(&d);
    }
}
