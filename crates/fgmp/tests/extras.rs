//! The extras decoder (chat, radio, transponder, protocol, clock) against the real
//! FlightGear 2020.3.16 captures in `testdata/fg` (see its README), and on any bytes.

use fgmp::extras::{chat_fingerprint, clean_text, Extras, FREQUENCY_ID, MAX_CHAT_CHARS};
use fgmp::message::{Message, Position};
use fgmp::props::{PropertyList, Protocol, CHAT_ID};
use fgmp::Callsign;
use proptest::prelude::*;

mod capture;
use capture::{lpf, read};

#[test]
fn the_captures_chat_lines_protocol_and_clock() {
    let dgrams = lpf("c172p_TEST1_400.lpf");
    let mut lines: Vec<(usize, Option<String>)> = Vec::new();
    let mut last_time = f64::MIN;
    for (i, d) in dgrams.iter().enumerate() {
        let x = Extras::decode(d).expect("a position datagram");
        assert_eq!(x.protocol, 2, "datagram {}", i + 1);
        assert!((x.lag - 0.1).abs() < 1e-9, "lag as sent: {}", x.lag);
        assert!(x.time >= last_time, "the MP clock never goes back");
        last_time = x.time;
        // The c172p sends the transmit frequency as 0 (FlightGear's built-in FGCom
        // creates the 13001 node and sets it only while push-to-talk is held: the
        // note's § 1.7a), which is none; and a transponder only when it has one.
        assert_eq!(x.frequency_hz, None);
        assert!(
            d.windows(8).any(|w| w == [0, 0, 0x32, 0xc9, 0, 0, 0, 0]),
            "13001 sent as 0 in datagram {}",
            i + 1
        );
        if lines.last().map(|l| &l.1) != Some(&x.chat) {
            lines.push((i + 1, x.chat.clone()));
        }
    }
    assert_eq!(
        lines,
        vec![
            (1, Some("Hello".to_string())),
            (201, Some("Hi TEST2, TEST1 (c172p) here".to_string())),
            (303, None),
        ],
        "the README's chat table: three runs, the empty string read as no chat"
    );
}

#[test]
fn the_chat_fingerprint_changes_exactly_where_the_captures_line_does() {
    let dgrams = lpf("c172p_TEST1_400.lpf");
    let mut changes = Vec::new();
    let mut last = None;
    for (i, d) in dgrams.iter().enumerate() {
        let f = chat_fingerprint(d);
        assert_eq!(f == 0, Extras::decode(d).expect("decodes").chat.is_none());
        if last != Some(f) {
            changes.push(i + 1);
            last = Some(f);
        }
    }
    assert_eq!(changes, vec![1, 201, 303], "the README's three chat runs");
    assert_eq!(chat_fingerprint(b"short"), 0);
}

#[test]
fn the_samples() {
    let x = Extras::decode(&read("samples/c172p_TEST1_telnet_chat_run1.bin")).expect("decodes");
    assert_eq!(x.chat.as_deref(), Some("Hello from TEST1 via telnet"));
    let x = Extras::decode(&read("samples/c172p_TEST1_position.bin")).expect("decodes");
    assert_eq!(x.chat, None);
    assert_eq!(x.protocol, 2);
}

fn datagram(props: PropertyList, pad: u32) -> Vec<u8> {
    let mut body = Position::at("Aircraft/c172p/Models/c172p.xml", [6.4e6, 0.0, 0.0]);
    body.pad = pad;
    body.time = 12.5;
    body.properties = props;
    let m = Message::position(Callsign::new("X").expect("callsign"), 100, body);
    let mut out = Vec::new();
    m.encode(&mut out).expect("encodes");
    out
}

#[test]
fn frequency_transponder_livery_variant_v2_and_v1() {
    for (proto, pad) in [(Protocol::V2, fgmp::V2_PAD_MAGIC), (Protocol::V1, 0)] {
        let mut l = PropertyList::new();
        if proto == Protocol::V2 {
            l.push_int(10, 2, proto).expect("10");
        }
        l.push_int(1100, 3, proto)
            .expect("variant")
            .push_string(1101, b"KLM\x01", proto)
            .expect("livery")
            .push_int(1500, 7000, proto)
            .expect("code")
            .push_int(1501, 3500, proto)
            .expect("alt")
            .push_bool(1502, true, proto)
            .expect("ident")
            .push_int(1503, 5, proto)
            .expect("mode")
            .push_string(CHAT_ID, b"EDDF_TW, request taxi", proto)
            .expect("chat")
            .push_int(FREQUENCY_ID, 118_500_000, proto)
            .expect("freq");
        let x = Extras::decode(&datagram(l, pad)).expect("decodes");
        let want_proto = if proto == Protocol::V2 { 2 } else { 1 };
        assert_eq!(x.protocol, want_proto);
        assert_eq!(x.time, 12.5);
        assert_eq!(x.variant, Some(3));
        assert_eq!(x.livery.as_deref(), Some("KLM"));
        let t = x.transponder.expect("transponder");
        assert_eq!(
            (t.code, t.altitude_ft, t.ident, t.mode),
            (Some(7000), Some(3500), Some(true), Some(5))
        );
        assert_eq!(x.chat.as_deref(), Some("EDDF_TW, request taxi"));
        assert_eq!(x.frequency_hz, Some(118_500_000));
    }
}

proptest! {
    /// Any bytes: no panic; whatever is read is clean and bounded.
    #[test]
    fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1300)) {
        let _ = chat_fingerprint(&bytes);
        if let Some(x) = Extras::decode(&bytes) {
            prop_assert!(x.protocol == 1 || x.protocol == 2);
            if let Some(c) = &x.chat {
                prop_assert!(c.chars().count() <= MAX_CHAT_CHARS);
                prop_assert!(!c.chars().any(char::is_control));
            }
        }
    }

    /// A real datagram with its property bytes mangled: no panic, the fixed part stays.
    #[test]
    fn mangled_capture_keeps_the_body(at in 232usize..893, byte in any::<u8>(), cut in 232usize..893) {
        let mut d = read("samples/c172p_TEST1_first_datagram.bin");
        d[at] = byte;
        d.truncate(cut.max(at + 1));
        let x = Extras::decode(&d).expect("the body is intact");
        prop_assert_eq!(x.protocol, 2);
    }

    /// Cleaning is idempotent, bounded and free of control characters.
    #[test]
    fn clean_text_is_clean(s in any::<Vec<u8>>(), max in 0usize..300) {
        let c = clean_text(&s, max);
        prop_assert!(c.chars().count() <= max);
        prop_assert!(!c.chars().any(char::is_control));
        prop_assert_eq!(clean_text(c.as_bytes(), max), c.clone());
    }
}
