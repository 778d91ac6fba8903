//! Property decoding of real FlightGear 2020.3.16 datagrams (testdata/fg, see its README):
//! every datagram parses to the end with known ids only and re-encodes byte for byte.

use fgmp::props::*;
use std::fs;

/// Properties start after the 32-byte header and the 200-byte position body.
const PROPS_AT: usize = 232;

mod capture;
use capture::{data_path, lpf, read};

/// Decodes the properties of a datagram and checks the full parse and the exact round trip.
fn decode_props(dgram: &[u8], what: &str) -> PropertyList {
    assert_eq!(
        &dgram[228..232],
        &fgmp::V2_PAD_MAGIC.to_be_bytes(),
        "{what}: v2 pad magic at 228"
    );
    let props = &dgram[PROPS_AT..];
    let list = PropertyList::decode(props);
    assert_eq!(
        list.stop, None,
        "{what}: every id is known and every item complete"
    );
    assert!(list.trailing.is_empty(), "{what}");
    assert_eq!(list.to_bytes(), props, "{what}: re-encoding is byte-exact");
    assert_eq!(list.encoded_len(), props.len(), "{what}");
    list
}

#[test]
fn all_400_datagrams_decode_and_reencode_exactly() {
    let dgrams = lpf("c172p_TEST1_400.lpf");
    assert_eq!(dgrams.len(), 400);
    let index = fs::read_to_string(data_path("c172p_TEST1_400.index.tsv")).expect("index");
    let lens: Vec<usize> = index
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split('\t')
                .nth(4)
                .and_then(|s| s.parse().ok())
                .expect("len column")
        })
        .collect();
    assert_eq!(lens.len(), 400);

    for (i, d) in dgrams.iter().enumerate() {
        let n = i + 1; // datagram numbers in the README are 1-based
        let what = format!("datagram {n}");
        assert_eq!(d.len(), lens[i], "{what}: length from the index");
        let list = decode_props(d, &what);

        // v2: the protocol version comes first.
        assert_eq!(
            list.items()[0],
            Property {
                id: 10,
                wire: Wire::Packed(2)
            },
            "{what}"
        );

        let chat = list
            .get(CHAT_ID)
            .unwrap_or_else(|| panic!("{what}: chat present"));
        let (want, wire): (&[u8], Wire) = match n {
            1..=200 => (b"Hello", Wire::StringV2(b"Hello".to_vec())),
            201..=302 => (
                b"Hi TEST2, TEST1 (c172p) here",
                Wire::StringV2(b"Hi TEST2, TEST1 (c172p) here".to_vec()),
            ),
            _ => (b"", Wire::StringV1(Vec::new())), // the 8-byte `00 00 27 12 00 00 00 00`
        };
        assert_eq!(chat.wire, wire, "{what}");
        assert_eq!(chat.value(), Value::String(want.to_vec()), "{what}");
        assert_eq!(list.text(CHAT_ID).as_deref(), Some(want), "{what}");

        // Every item's id is in the table and each item re-encodes on its own.
        for p in list.items() {
            assert!(p.def().is_some(), "{what}: id {}", p.id);
            let mut one = Vec::new();
            p.encode(&mut one);
            assert_eq!(one.len(), p.encoded_len());
            assert_eq!(PropertyList::decode(&one).items(), std::slice::from_ref(p));
        }
        // The list also passes the builder's validation item by item.
        assert_eq!(
            PropertyList::from_items(list.items().to_vec()).as_ref(),
            Ok(&list),
            "{what}"
        );
    }
}

#[test]
fn first_datagram_details() {
    let dgrams = lpf("c172p_TEST1_400.lpf");
    let d = &dgrams[0];
    assert_eq!(d.len(), 893);
    assert_eq!(d, &read("samples/c172p_TEST1_first_datagram.bin"));
    assert_eq!(d.len() - PROPS_AT, 661, "661 property bytes");
    let props = &d[PROPS_AT..];
    assert_eq!(
        &props[..4],
        &[0x00, 0x0a, 0x00, 0x02],
        "id 10 value 2 first"
    );

    let list = decode_props(d, "first datagram");
    assert_eq!(list.value(10), Some(Value::Int(2)));

    // The chat "Hello" (v2) directly followed by the empty string[0] (v1 form), at an
    // unaligned offset.
    let at = props
        .windows(9)
        .position(|w| w == [0x27, 0x12, 0x00, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f])
        .expect("chat item present");
    assert_eq!(
        &props[at + 9..at + 17],
        &[0x00, 0x00, 0x27, 0x74, 0, 0, 0, 0]
    );
    assert_ne!(
        (PROPS_AT + at + 9) % 4,
        0,
        "the item after a v2 string is unaligned"
    );
    let ids: Vec<u32> = list.items().iter().map(|p| p.id).collect();
    let chat_pos = ids.iter().position(|&id| id == CHAT_ID).expect("chat");
    assert_eq!(ids[chat_pos + 1], 10100);
    assert_eq!(list.items()[chat_pos + 1].wire, Wire::StringV1(vec![]));

    // A few typed values FlightGear put there.
    assert_eq!(list.value(201), Some(Value::Float(1.0)), "gear[0] down");
    assert_eq!(
        list.value(1004),
        Some(Value::Float(1.0)),
        "gear-down control"
    );
    assert_eq!(list.value(1503), Some(Value::Int(1)), "transponder mode");
    assert_eq!(
        list.value(13000),
        Some(Value::Int(1)),
        "fallback model index"
    );
    assert_eq!(
        list.text(1101).as_deref(),
        Some(&b"4X-CHV_HD_livery"[..]),
        "livery (v2 string)"
    );
    assert_eq!(
        list.get(13001).map(|p| &p.wire),
        Some(&Wire::Plain(0)),
        "TT_INT: 8 bytes"
    );
    assert_eq!(list.get(11000).map(|p| &p.wire), Some(&Wire::BoolBlock(0)));
    assert_eq!(
        list.items().last().map(|p| p.id),
        Some(11000),
        "2020.3 appends the bool block"
    );

    // The v2 encoding rebuilt from the decoded values through the sender mirrors
    // gives the same bytes.
    let mut rebuilt = PropertyList::new();
    for p in list.items() {
        let def = p.def().expect("known");
        let r = match (p.value(), def.kind) {
            (Value::Int(v), PropType::Int) => rebuilt.push_int(p.id, v, Protocol::V2),
            (Value::Bool(v), PropType::Bool) => rebuilt.push_bool(p.id, v, Protocol::V2),
            (Value::Float(v), PropType::Float) => rebuilt.push_float(p.id, v, Protocol::V2),
            (Value::String(s), PropType::String) => rebuilt.push_string(p.id, &s, Protocol::V2),
            (Value::Bools { base, mask }, _) => rebuilt.push_bools(base, mask),
            (v, k) => panic!("id {}: {v:?} for {k:?}", p.id),
        };
        r.unwrap_or_else(|e| panic!("id {}: {e}", p.id));
    }
    assert_eq!(rebuilt.to_bytes(), props);
}

#[test]
fn sample_files_decode_and_reencode_exactly() {
    let dgrams = lpf("c172p_TEST1_400.lpf");
    let samples: [(&str, usize, &[u8]); 5] = [
        ("c172p_TEST1_first_datagram.bin", 893, b"Hello"),
        ("c172p_TEST1_chat.bin", 916, b"Hi TEST2, TEST1 (c172p) here"),
        ("c172p_TEST1_position.bin", 892, b""),
        (
            "c172p_TEST1_onground_before_scenery_-9999ft.bin",
            893,
            b"Hello",
        ),
        (
            "c172p_TEST1_telnet_chat_run1.bin",
            915,
            b"Hello from TEST1 via telnet",
        ),
    ];
    let dir = data_path("samples");
    let mut on_disk: Vec<String> = fs::read_dir(&dir)
        .expect("samples dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = samples.iter().map(|s| s.0.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every sample is covered");

    for (name, len, chat) in samples {
        let d = read(&format!("samples/{name}"));
        assert_eq!(d.len(), len, "{name}");
        let list = decode_props(&d, name);
        assert_eq!(list.value(10), Some(Value::Int(2)), "{name}");
        assert_eq!(list.text(CHAT_ID).as_deref(), Some(chat), "{name}");
    }
    assert_eq!(
        dgrams[200],
        read("samples/c172p_TEST1_chat.bin"),
        "datagram 201"
    );
}
