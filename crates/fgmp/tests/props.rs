//! Property codec: the table, fixed vectors from the notes (section 1.7), the receiver's
//! stop rules, the sender mirrors, and property-based round trips.

use fgmp::props::*;
use proptest::prelude::*;
use std::collections::HashMap;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

fn built(
    f: impl FnOnce(&mut PropertyList) -> Result<&mut PropertyList, PropError>,
) -> PropertyList {
    let mut list = PropertyList::new();
    f(&mut list).expect("builder accepted the item");
    list
}

/// Decoding `bytes` gives back exactly `bytes` and the same list again.
fn assert_round_trip(bytes: &[u8]) -> PropertyList {
    let list = PropertyList::decode(bytes);
    assert_eq!(list.to_bytes(), bytes, "re-encoding must be byte-exact");
    assert_eq!(list.encoded_len(), bytes.len());
    assert_eq!(PropertyList::decode(&list.to_bytes()), list);
    list
}

// ---------------------------------------------------------------- table

#[test]
fn table_has_421_sorted_unique_rows() {
    let t = table();
    assert_eq!(t.len(), 421);
    assert_eq!(TABLE_LEN, 421);
    assert!(
        t.windows(2).all(|w| w[0].id < w[1].id),
        "sorted by id, no duplicates"
    );
    for d in t {
        assert_eq!(lookup(d.id), Some(d), "lookup({}) finds its own row", d.id);
    }
    for missing in [
        0,
        1,
        9,
        11,
        99,
        113,
        119,
        121,
        11031,
        11039,
        11111,
        13004,
        65535,
        u32::MAX,
    ] {
        assert_eq!(lookup(missing), None, "id {missing} is not in the table");
    }
    assert_eq!(t.first().map(|d| d.id), Some(10));
    assert_eq!(t.last().map(|d| d.id), Some(13003));
}

#[test]
fn table_counts_by_type_and_encoding_match_the_notes() {
    use PropType as T;
    use V2Encoding as E;
    let mut got: HashMap<(PropType, V2Encoding), usize> = HashMap::new();
    for d in table() {
        *got.entry((d.kind, d.v2)).or_default() += 1;
    }
    let want: HashMap<(PropType, V2Encoding), usize> = [
        ((T::Bool, E::BoolArray), 93),
        ((T::Bool, E::ShortInt), 3),
        ((T::Bool, E::AsIs), 3),
        ((T::Float, E::AsIs), 52),
        ((T::Float, E::ShortFloat1), 32),
        ((T::Float, E::ShortFloat3), 11),
        ((T::Float, E::ShortFloat4), 5),
        ((T::Float, E::ShortFloatNorm), 22),
        ((T::Int, E::ShortInt), 118),
        ((T::Int, E::AsIs), 22),
        ((T::Int, E::Int), 1),
        ((T::Int, E::ShortFloatNorm), 1),
        ((T::Int, E::NoSend), 1),
        ((T::String, E::AsIs), 56),
        ((T::String, E::NoSend), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);

    let count = |k| table().iter().filter(|d| d.kind == k).count();
    assert_eq!(
        [
            count(T::Bool),
            count(T::Float),
            count(T::Int),
            count(T::String)
        ],
        [99, 122, 143, 57]
    );
    let by_version = |v| table().iter().filter(|d| d.min_protocol == v).count();
    assert_eq!(
        [by_version(1), by_version(2), by_version(0x10001)],
        [152, 268, 1]
    );
}

#[test]
fn table_spot_checks() {
    let chat = lookup(10002).expect("chat");
    assert_eq!(chat.name, "sim/multiplay/chat");
    assert_eq!(chat.kind, PropType::String);
    assert_eq!(chat.v2, V2Encoding::AsIs);
    assert_eq!(
        lookup(906).map(|d| d.name),
        Some("sim/hitches/aerotow/tow/break-force")
    );
    let v = lookup(10).expect("protocol version");
    assert_eq!(
        (v.kind, v.v2, v.min_protocol),
        (PropType::Int, V2Encoding::ShortInt, 0x10001)
    );
    assert!(!v.sent_in_v1());
    assert_eq!(v.partition(), 1);
    assert_eq!(lookup(120).map(|d| d.v2), Some(V2Encoding::NoSend));
    assert_eq!(lookup(108).map(|d| d.kind), Some(PropType::String));
    assert_eq!(lookup(13001).map(|d| d.v2), Some(V2Encoding::Int));
    assert_eq!(
        lookup(11051).map(|d| d.name),
        Some("sim/multiplay/generic/bool[91]")
    );
    assert_eq!(
        lookup(11091).map(|d| d.name),
        Some("sim/multiplay/generic/bool[92]")
    );
    // The receiver reads BOOL ids 11000..=11080 as blocks, not 11081..=11110.
    assert!(lookup(11080).is_some_and(|d| d.reads_as_bool_block()));
    assert!(lookup(11081).is_some_and(|d| !d.reads_as_bool_block()));
    assert!(lookup(904).is_some_and(|d| !d.reads_as_bool_block()));
    let blocks = table().iter().filter(|d| d.reads_as_bool_block()).count();
    assert_eq!(blocks, 31 + 31 + 1);
    assert_eq!(V2Encoding::ShortFloatNorm.scale(), Some(32767.0));
    assert_eq!(V2Encoding::ShortFloat2.scale(), Some(100.0));
    assert_eq!(V2Encoding::ShortInt.scale(), None);
    assert!(V2Encoding::ShortInt.is_packed() && !V2Encoding::BoolArray.is_packed());
}

// ---------------------------------------------------------------- fixed vectors

#[test]
fn v1_string_ab_is_24_bytes() {
    let list = built(|l| l.push_string(CHAT_ID, b"ab", Protocol::V1));
    let want = words(&[10002, 2, 0x61, 0x62, 0, 0]);
    assert_eq!(want.len(), 24);
    assert_eq!(hex(&list.to_bytes()), hex(&want));
    assert_eq!(list.encoded_len(), 24);
    let back = assert_round_trip(&want);
    assert_eq!(back.stop, None);
    assert_eq!(back.items()[0].wire, Wire::StringV1(b"ab".to_vec()));
    assert_eq!(back.value(CHAT_ID), Some(Value::String(b"ab".to_vec())));
}

#[test]
fn v1_string_padding_follows_the_char_count() {
    for (len, total) in [(0, 8), (1, 24), (3, 24), (4, 24), (5, 40), (8, 40), (9, 56)] {
        let text = vec![b'x'; len];
        let list = built(|l| l.push_string(10100, &text, Protocol::V1));
        assert_eq!(list.encoded_len(), total, "v1 string of {len} chars");
        assert_eq!(list.to_bytes().len(), total);
        assert_eq!(PropertyList::decode(&list.to_bytes()), list);
    }
}

#[test]
fn v2_chat_hello_then_empty_string_as_in_the_first_capture() {
    let list = built(|l| {
        l.push_string(CHAT_ID, b"Hello", Protocol::V2)?
            .push_string(10100, b"", Protocol::V2)
    });
    let want = [
        0x27, 0x12, 0x00, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f, // chat "Hello", v2
        0x00, 0x00, 0x27, 0x74, 0x00, 0x00, 0x00, 0x00, // string[0] "", v1 form, unaligned
    ];
    assert_eq!(hex(&list.to_bytes()), hex(&want));
    let back = assert_round_trip(&want);
    assert_eq!(back.stop, None);
    assert_eq!(back.items()[0].wire, Wire::StringV2(b"Hello".to_vec()));
    assert_eq!(
        back.items()[1],
        Property {
            id: 10100,
            wire: Wire::StringV1(vec![])
        }
    );
    assert_eq!(back.text(CHAT_ID).as_deref(), Some(&b"Hello"[..]));
}

#[test]
fn empty_string_is_the_v1_form_in_both_protocols() {
    let want = [0x00, 0x00, 0x27, 0x12, 0x00, 0x00, 0x00, 0x00];
    for proto in [Protocol::V1, Protocol::V2] {
        let list = built(|l| l.push_string(CHAT_ID, b"", proto));
        assert_eq!(list.to_bytes(), want, "{proto:?}");
    }
    let back = assert_round_trip(&want);
    assert_eq!(back.value(CHAT_ID), Some(Value::String(vec![])));
    // A packed zero-length v2 string is a different (valid) wire form.
    let packed = [0x27, 0x12, 0x00, 0x00];
    let back = assert_round_trip(&packed);
    assert_eq!(back.items()[0].wire, Wire::StringV2(vec![]));
}

#[test]
fn protocol_version_is_packed_word_000a0002() {
    let list = built(|l| l.push_int(PROTOCOL_VERSION_ID, 2, Protocol::V2));
    assert_eq!(list.to_bytes(), [0x00, 0x0a, 0x00, 0x02]);
    let back = assert_round_trip(&[0x00, 0x0a, 0x00, 0x02]);
    assert_eq!(
        back.items(),
        &[Property {
            id: 10,
            wire: Wire::Packed(2)
        }]
    );
    assert_eq!(back.value(10), Some(Value::Int(2)));
    // v1 form of the same id: id word then value word.
    let v1 = built(|l| l.push_int(PROTOCOL_VERSION_ID, 2, Protocol::V1));
    assert_eq!(v1.to_bytes(), words(&[10, 2]));
}

#[test]
fn launchbar_state_goes_as_packed_120_in_v2() {
    for (i, name) in LAUNCHBAR_STATES.iter().enumerate() {
        let list = built(|l| l.push_string(LAUNCHBAR_STATE_ID, name.as_bytes(), Protocol::V2));
        assert_eq!(list.to_bytes(), words(&[(120 << 16) | i as u32]), "{name}");
        let back = assert_round_trip(&list.to_bytes());
        let p = &back.items()[0];
        assert_eq!((p.id, p.target_id()), (120, 108));
        assert_eq!(p.value(), Value::String(name.as_bytes().to_vec()));
        assert_eq!(launchbar_state_value(name.as_bytes()), Some(i as i16));
        assert_eq!(launchbar_state_name(i as i16), Some(*name));
    }
    // Any other string: FlightGear's encoder sends nothing for 108 in v2.
    let list = built(|l| l.push_string(LAUNCHBAR_STATE_ID, b"Stowed", Protocol::V2));
    assert!(list.is_empty());
    assert_eq!(launchbar_state_value(b"engaged"), None);
    // v1 sends the string itself under 108.
    let v1 = built(|l| l.push_string(LAUNCHBAR_STATE_ID, b"Engaged", Protocol::V1));
    assert_eq!(
        v1.items()[0],
        Property {
            id: 108,
            wire: Wire::StringV1(b"Engaged".to_vec())
        }
    );
    // A received packed 120 outside 0..=3 sets 108 to the empty string.
    for v in [4i16, -1, 32767] {
        let p = Property {
            id: 120,
            wire: Wire::Packed(v),
        };
        assert_eq!(p.value(), Value::String(vec![]));
    }
    // 120 itself is TT_NOSEND: never sent from its own slot in v2.
    assert_eq!(
        PropertyList::new()
            .push_int(120, 1, Protocol::V2)
            .map(|_| ()),
        Err(PropError::NotSent(120))
    );
}

#[test]
fn v1_word_120_is_non_canonical() {
    let bytes = words(&[120, 0]);
    let list = assert_round_trip(&bytes);
    assert!(list.is_empty());
    assert!(matches!(
        list.stop,
        Some(Stop::NonCanonical {
            offset: 0,
            id: 120,
            ..
        })
    ));
    assert!(PropertyList::new().push_int(120, 1, Protocol::V1).is_err());
}

// ---------------------------------------------------------------- scalar conversions

#[test]
fn scaled_short_multiplies_clamps_and_truncates() {
    use V2Encoding::*;
    let cases: &[(f32, V2Encoding, i16)] = &[
        (0.0, ShortFloatNorm, 0),
        (0.5, ShortFloatNorm, 16383), // 16383.5 truncated
        (-0.5, ShortFloatNorm, -16383),
        (1.0, ShortFloatNorm, 32767),
        (2.0, ShortFloatNorm, 32767),
        (-1.0, ShortFloatNorm, -32767),
        (-5.0, ShortFloatNorm, -32767),
        (100.07, ShortFloat1, 1000),
        (-0.99, ShortFloat1, -9),
        (3276.7, ShortFloat1, 32767),
        (1.23456, ShortFloat4, 12345),
        (12.3456, ShortFloat3, 12345),
        (-1.9999, ShortFloat2, -199),
        (f32::NAN, ShortFloat1, 0),
        (f32::INFINITY, ShortFloat1, 32767),
        (f32::NEG_INFINITY, ShortFloat1, -32767),
        (7.9, ShortInt, 7), // no scale: factor 1
    ];
    for &(v, enc, want) in cases {
        assert_eq!(scaled_short(v, enc), want, "scaled_short({v}, {enc:?})");
    }
    assert_eq!(
        unscale(16383, ShortFloatNorm),
        (16383.0f64 / 32767.0) as f32
    );
    assert_eq!(unscale(-5, ShortFloat1), -0.5);
    assert_eq!(unscale(12345, ShortFloat4), 1.2345);
    assert_eq!(clamp16(40000), 32767);
    assert_eq!(clamp16(-40000), -32767);
    assert_eq!(clamp16(-32768), -32767);
    assert_eq!(clamp16(-12), -12);
    assert_eq!(v1_char_word(b'a'), 0x61);
    assert_eq!(
        v1_char_word(0xe9),
        0xffff_ffe9,
        "XDR_encode_int8 sign-extends"
    );
}

#[test]
fn v2_builders_follow_the_transmit_type() {
    // FLOAT, TT_SHORT_FLOAT_NORM
    let l = built(|l| l.push_float(100, 0.5, Protocol::V2));
    assert_eq!(l.items()[0].wire, Wire::Packed(16383));
    assert_eq!(
        l.value(100),
        Some(Value::Float((16383.0f64 / 32767.0) as f32))
    );
    // FLOAT, TT_SHORT_FLOAT_1 (engine rpm)
    let l = built(|l| l.push_float(302, 2400.55, Protocol::V2));
    assert_eq!(l.items()[0].wire, Wire::Packed(24005));
    // FLOAT as-is: plain IEEE-754 word in both protocols
    for proto in [Protocol::V1, Protocol::V2] {
        let l = built(|l| l.push_float(10200, 1.5, proto));
        assert_eq!(l.to_bytes(), words(&[10200, 1.5f32.to_bits()]));
        assert_eq!(l.value(10200), Some(Value::Float(1.5)));
    }
    // v1 always sends a plain float, whatever the v2 encoding
    let l = built(|l| l.push_float(100, 0.5, Protocol::V1));
    assert_eq!(l.to_bytes(), words(&[100, 0.5f32.to_bits()]));
    // INT, TT_SHORTINT: clamped
    let l = built(|l| l.push_int(10500, 100_000, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[(10500 << 16) | 32767]));
    let l = built(|l| l.push_int(10500, -3, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[(10500 << 16) | 0xfffd]));
    assert_eq!(l.value(10500), Some(Value::Int(-3)));
    // INT, TT_INT (13001): plain 8 bytes even in v2
    let l = built(|l| l.push_int(13001, 118_000_000, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[13001, 118_000_000]));
    // INT as-is, negative
    let l = built(|l| l.push_int(10300, -1, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[10300, 0xffff_ffff]));
    assert_eq!(l.value(10300), Some(Value::Int(-1)));
    // INT 13002 with TT_SHORT_FLOAT_NORM: FlightGear scales the int's bits read as a float.
    let l = built(|l| l.push_int(13002, 1, Protocol::V2));
    assert_eq!(l.items()[0].wire, Wire::Packed(0));
    let l = built(|l| l.push_int(13002, 1.0f32.to_bits() as i32, Protocol::V2));
    assert_eq!(l.items()[0].wire, Wire::Packed(32767));
    assert_eq!(
        l.value(13002),
        Some(Value::Int(32767)),
        "received as a raw INT"
    );
    // BOOL, TT_SHORTINT (1006) and as-is (904)
    let l = built(|l| l.push_bool(1006, true, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[(1006 << 16) | 1]));
    assert_eq!(l.value(1006), Some(Value::Bool(true)));
    let l = built(|l| l.push_bool(904, true, Protocol::V2));
    assert_eq!(l.to_bytes(), words(&[904, 1]));
    assert_eq!(l.value(904), Some(Value::Bool(true)));
    // A packed FLOAT without a scaled encoding is left at 0.0 by FlightGear.
    let p = Property {
        id: 900,
        wire: Wire::Packed(123),
    };
    assert_eq!(p.value(), Value::Float(0.0));
}

#[test]
fn bool_arrays_pack_31_per_block_in_v1_and_v2() {
    for proto in [Protocol::V1, Protocol::V2] {
        let l = built(|l| {
            l.push_bool(11000, true, proto)?
                .push_bool(11005, true, proto)?
                .push_bool(11001, false, proto)?
                .push_bool(11051, true, proto)? // bool[91] lives in block 2, bit 11
                .push_bool(11110, true, proto)
        });
        assert_eq!(
            l.to_bytes(),
            words(&[11000, 0b10_0001, 11040, 1 << 11, 11080, 1 << 30]),
            "{proto:?}"
        );
        let back = assert_round_trip(&l.to_bytes());
        assert_eq!(back, l);
        assert_eq!(
            back.value(11000),
            Some(Value::Bools {
                base: 11000,
                mask: 0x21
            })
        );
    }
    // Setting false clears a bit set earlier.
    let l = built(|l| {
        l.push_bool(11003, true, Protocol::V2)?
            .push_bool(11003, false, Protocol::V2)
    });
    assert_eq!(
        l.items(),
        &[Property {
            id: 11000,
            wire: Wire::BoolBlock(0)
        }]
    );

    let members: Vec<(u32, bool)> = block_members(11000, 0x21).collect();
    assert_eq!(members.len(), 31);
    assert_eq!(
        members
            .iter()
            .filter(|m| m.1)
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        [11000, 11005]
    );
    // Ids missing from the table (11031..=11039) are skipped, like FlightGear does:
    // a block based at 11010 reaches 11010..=11030 and 11040.
    assert_eq!(block_members(11010, u32::MAX).count(), 22);
    // Any BOOL id from 11000 to 11080 read in v1 form is a block base.
    let back = assert_round_trip(&words(&[11007, 0xffff_ffff]));
    assert_eq!(back.items()[0].wire, Wire::BoolBlock(0xffff_ffff));
    // 11081..=11110 are ordinary BOOL items.
    let back = assert_round_trip(&words(&[11081, 1]));
    assert_eq!(back.items()[0].wire, Wire::Plain(1));
    assert_eq!(back.value(11081), Some(Value::Bool(true)));
}

// ---------------------------------------------------------------- receiver stop rules

#[test]
fn unknown_id_stops_and_keeps_the_rest() {
    let mut bytes = words(&[(10 << 16) | 2, 10300, 7]);
    let rest = words(&[11031, 1, (100 << 16) | 5]);
    bytes.extend_from_slice(&rest);
    let list = assert_round_trip(&bytes);
    assert_eq!(list.len(), 2);
    assert_eq!(
        list.stop,
        Some(Stop::UnknownId {
            offset: 12,
            id: 11031
        })
    );
    assert_eq!(list.trailing, rest);
    assert_eq!(list.stop.as_ref().map(Stop::offset), Some(12));
    // Zero padding after the list is id 0: unknown.
    let list = assert_round_trip(&[0x00, 0x0a, 0x00, 0x02, 0, 0, 0, 0]);
    assert_eq!(list.stop, Some(Stop::UnknownId { offset: 4, id: 0 }));
    // Packed unknown id (high half 0x7fff).
    let list = assert_round_trip(&words(&[0x7fff_0001]));
    assert_eq!(
        list.stop,
        Some(Stop::UnknownId {
            offset: 0,
            id: 0x7fff
        })
    );
    assert!(matches!(
        PropertyList::decode_strict(&words(&[0])),
        Err(PropError::Stopped(Stop::UnknownId { id: 0, .. }))
    ));
    assert!(PropertyList::decode_strict(&words(&[(10 << 16) | 2])).is_ok());
}

#[test]
fn truncated_items_stop() {
    let cases: &[(&[u8], Stop)] = &[
        (
            &[0x00, 0x0a, 0x00],
            Stop::Truncated {
                offset: 0,
                id: None,
                needed: 4,
                available: 3,
            },
        ),
        (
            &[0, 0, 0x28, 0x3c],
            Stop::Truncated {
                offset: 0,
                id: Some(10300),
                needed: 8,
                available: 4,
            },
        ),
        (
            &[0, 0, 0x28, 0x3c, 0, 0, 0],
            Stop::Truncated {
                offset: 0,
                id: Some(10300),
                needed: 8,
                available: 7,
            },
        ),
    ];
    for (bytes, stop) in cases {
        let list = assert_round_trip(bytes);
        assert_eq!(list.stop.as_ref(), Some(stop), "{}", hex(bytes));
        assert_eq!(list.trailing, *bytes);
    }
    // v1 string whose characters are missing.
    let bytes = words(&[10002, 5, 0x61, 0x62]);
    let list = assert_round_trip(&bytes);
    assert_eq!(
        list.stop,
        Some(Stop::Truncated {
            offset: 0,
            id: Some(10002),
            needed: 8 + 32,
            available: 16
        })
    );
    // v1 string with a huge length: FlightGear clamps to 768 words, which are not there.
    let bytes = words(&[10002, u32::MAX, 0x61]);
    let list = assert_round_trip(&bytes);
    assert!(matches!(
        list.stop,
        Some(Stop::Truncated { needed: 3080, .. })
    ));
}

#[test]
fn v2_string_length_check_as_fg_new() {
    // Negative (bit 15 set), over 768, and longer than the bytes left.
    let mut over = words(&[(10002 << 16) | 769]);
    over.extend(std::iter::repeat_n(b'a', 769));
    let cases: Vec<(Vec<u8>, i64, usize)> = vec![
        (words(&[(10002 << 16) | 0x8000]), -32768, 0),
        (over, 769, 769),
        (
            [0x27, 0x12, 0x00, 0x0a, b'H', b'e', b'l', b'l', b'o'].to_vec(),
            10,
            5,
        ),
    ];
    for (bytes, len, available) in cases {
        let list = assert_round_trip(&bytes);
        assert_eq!(
            list.stop,
            Some(Stop::BadStringLength {
                offset: 0,
                id: 10002,
                len,
                available
            }),
            "{}",
            hex(&bytes[..8.min(bytes.len())])
        );
    }
    // Exactly 768 bytes is accepted.
    let mut ok = words(&[(10002 << 16) | 768]);
    ok.extend(std::iter::repeat_n(b'z', 768));
    let list = assert_round_trip(&ok);
    assert_eq!(list.stop, None);
    assert_eq!(list.text(10002).map(|t| t.len()), Some(768));
}

#[test]
fn non_canonical_v1_strings_are_kept_word_by_word() {
    // Sign-extended high bytes are what FlightGear writes for bytes >= 0x80.
    let fg = built(|l| l.push_string(10002, &[0xc3, 0xa9], Protocol::V1));
    assert_eq!(
        fg.to_bytes(),
        words(&[10002, 2, 0xffff_ffc3, 0xffff_ffa9, 0, 0])
    );
    assert_eq!(PropertyList::decode(&fg.to_bytes()), fg);

    // Zero-extended characters, junk in a pad word, junk in a char word's high bytes.
    for ws in [
        vec![10002, 2, 0xc3, 0xa9, 0, 0],
        vec![10002, 1, 0x61, 0, 0, 7],
        vec![10002, 1, 0x1234_5661, 0, 0, 0],
    ] {
        let bytes = words(&ws);
        let list = assert_round_trip(&bytes);
        assert_eq!(list.stop, None);
        assert!(matches!(list.items()[0].wire, Wire::StringV1Raw { .. }));
        let want: Vec<u8> = ws[2..2 + ws[1] as usize].iter().map(|&w| w as u8).collect();
        assert_eq!(list.value(10002), Some(Value::String(want)));
    }

    // A length over 768 with 768 character words present: FlightGear reads 768 chars.
    let mut ws = vec![10002, 1000];
    ws.extend(std::iter::repeat_n(u32::from(b'q'), 768));
    ws.push((10 << 16) | 2);
    let list = assert_round_trip(&words(&ws));
    assert_eq!(list.stop, None);
    assert_eq!(list.len(), 2);
    assert_eq!(list.value(10002), Some(Value::String(vec![b'q'; 768])));
    assert_eq!(list.value(10), Some(Value::Int(2)));
}

#[test]
fn packed_bool_block_id_is_non_canonical() {
    let bytes = words(&[(11000 << 16) | 1, 0xff]);
    let list = assert_round_trip(&bytes);
    assert!(matches!(
        list.stop,
        Some(Stop::NonCanonical {
            offset: 0,
            id: 11000,
            ..
        })
    ));
    assert!(list.is_empty());
}

#[test]
fn packed_and_plain_values_are_typed_by_the_table() {
    let bytes = words(&[
        (100 << 16) | 0x8001, // NORM, -32767
        (302 << 16) | 25,     // FLOAT_1, 2.5
        (1502 << 16) | 2,     // BOOL via SHORTINT, non-zero
        10300,
        0xffff_fffe, // INT -2
        10200,
        (-0.25f32).to_bits(), // FLOAT
        904,
        0, // BOOL false
    ]);
    let list = assert_round_trip(&bytes);
    let vals: Vec<Value> = list.items().iter().map(Property::value).collect();
    assert_eq!(
        vals,
        [
            Value::Float(-1.0),
            Value::Float(2.5),
            Value::Bool(true),
            Value::Int(-2),
            Value::Float(-0.25),
            Value::Bool(false),
        ]
    );
}

// ---------------------------------------------------------------- builders: validation

#[test]
fn push_rejects_items_that_would_not_decode_back() {
    let p = |id, wire| Property { id, wire };
    let mut l = PropertyList::new();
    assert_eq!(
        l.push(p(11, Wire::Plain(0))).err(),
        Some(PropError::UnknownId(11))
    );
    for bad in [
        p(10002, Wire::Plain(1)),
        p(10002, Wire::Packed(1)),
        p(11000, Wire::Plain(1)),
        p(11040, Wire::Packed(1)),
        p(120, Wire::Plain(1)),
        p(904, Wire::BoolBlock(1)),
        p(11081, Wire::BoolBlock(1)),
        p(100, Wire::StringV2(b"x".to_vec())),
        p(
            10002,
            Wire::StringV1Raw {
                len: 1,
                words: vec![0x61, 0, 0, 0],
            },
        ), // canonical
        p(
            10002,
            Wire::StringV1Raw {
                len: 2,
                words: vec![0x61, 0, 0],
            },
        ), // wrong count
    ] {
        assert!(
            matches!(l.push(bad.clone()), Err(PropError::BadWire { .. })),
            "{bad:?} must be rejected"
        );
    }
    assert_eq!(
        l.push(p(10002, Wire::StringV2(vec![b'a'; 769]))).err(),
        Some(PropError::StringTooLong {
            id: 10002,
            len: 769,
            max: 768
        })
    );
    assert_eq!(
        l.push(p(10002, Wire::StringV1(vec![b'a'; 769]))).err(),
        Some(PropError::StringTooLong {
            id: 10002,
            len: 769,
            max: 768
        })
    );
    assert_eq!(
        l.push_float(10300, 1.0, Protocol::V2).err(),
        Some(PropError::WrongKind {
            id: 10300,
            declared: PropType::Int,
            given: PropType::Float
        })
    );
    assert!(matches!(
        l.push_string(100, b"x", Protocol::V1),
        Err(PropError::WrongKind { .. })
    ));
    assert!(matches!(
        l.push_int(904, 1, Protocol::V1),
        Err(PropError::WrongKind { .. })
    ));
    assert_eq!(
        l.push_string(10001, b"x", Protocol::V2).err(),
        Some(PropError::NotSent(10001))
    );
    assert!(l.is_empty(), "nothing was pushed");
    // TT_NOSEND is honoured only in v2: v1 sends 10001 as a normal string.
    assert!(l.push_string(10001, b"118.5", Protocol::V1).is_ok());
    // Errors display something useful.
    let msg = PropError::Stopped(Stop::UnknownId { offset: 4, id: 9 }).to_string();
    assert!(msg.contains("unknown property id 9"), "{msg}");
}

#[test]
fn string_builders_truncate_like_the_sender() {
    let long = vec![b'a'; 1000];
    for proto in [Protocol::V1, Protocol::V2] {
        let l = built(|l| l.push_string(10002, &long, proto));
        assert_eq!(
            l.text(10002).map(|t| t.len()),
            Some(MAX_SEND_TEXT),
            "{proto:?}"
        );
        let l = built(|l| l.push_string(10002, b"ab\0cd", proto));
        assert_eq!(
            l.text(10002).as_deref(),
            Some(&b"ab"[..]),
            "strlen stops at NUL"
        );
    }
    let l = built(|l| l.push_string(10002, &long, Protocol::V1));
    assert_eq!(l.encoded_len(), 8 + 4 * 768);
}

#[test]
fn list_helpers() {
    let mut l = built(|l| {
        l.push_int(10, 2, Protocol::V2)?
            .push_string(CHAT_ID, b"hi", Protocol::V2)?
            .push_float(10200, 3.0, Protocol::V2)
    });
    assert_eq!(l.len(), 3);
    assert_eq!(l.get(CHAT_ID).map(|p| p.encoded_len()), Some(6));
    assert_eq!(l.get(99), None);
    l.retain(|p| p.id != CHAT_ID);
    assert_eq!(l.len(), 2);
    let again = PropertyList::from_items(l.clone().into_items()).expect("valid");
    assert_eq!(again, l);
    assert!(PropertyList::from_items([Property {
        id: 5,
        wire: Wire::Packed(0)
    }])
    .is_err());
    assert_eq!(PropertyList::decode(&[]), PropertyList::default());
}

// ---------------------------------------------------------------- property-based

/// Any wire form, valid or not, for an id from the table (or any id).
fn any_wire() -> impl Strategy<Value = Wire> {
    prop_oneof![
        any::<i16>().prop_map(Wire::Packed),
        any::<u32>().prop_map(Wire::Plain),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Wire::StringV1),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Wire::StringV2),
        (0u32..12, prop::collection::vec(any::<u32>(), 0..16))
            .prop_map(|(len, words)| Wire::StringV1Raw { len, words }),
        any::<u32>().prop_map(Wire::BoolBlock),
    ]
}

fn table_id() -> impl Strategy<Value = u32> {
    (0..table().len()).prop_map(|i| table()[i].id)
}

fn ids_of(pred: fn(&PropDef) -> bool) -> Vec<u32> {
    table().iter().filter(|d| pred(d)).map(|d| d.id).collect()
}

/// A valid property of every wire form the decoder produces, for a matching id.
fn valid_property() -> impl Strategy<Value = Property> {
    let strings = ids_of(|d| d.kind == PropType::String);
    let blocks = ids_of(|d| d.reads_as_bool_block());
    let scalars = ids_of(|d| d.kind != PropType::String && !d.reads_as_bool_block());
    let plain = ids_of(|d| {
        d.kind != PropType::String && !d.reads_as_bool_block() && d.id != LAUNCHBAR_VALUE_ID
    });
    let text = || prop::collection::vec(any::<u8>(), 0..=MAX_TEXT_SIZE);
    let short_text = || prop::collection::vec(any::<u8>(), 0..24);
    prop_oneof![
        3 => (prop::sample::select(scalars), any::<i16>())
            .prop_map(|(id, v)| Property { id, wire: Wire::Packed(v) }),
        3 => (prop::sample::select(plain), any::<u32>())
            .prop_map(|(id, v)| Property { id, wire: Wire::Plain(v) }),
        1 => (prop::sample::select(blocks), any::<u32>())
            .prop_map(|(id, m)| Property { id, wire: Wire::BoolBlock(m) }),
        2 => (prop::sample::select(strings.clone()), prop_oneof![short_text(), text()])
            .prop_map(|(id, s)| Property { id, wire: Wire::StringV1(s) }),
        2 => (prop::sample::select(strings.clone()), prop_oneof![short_text(), text()])
            .prop_map(|(id, s)| Property { id, wire: Wire::StringV2(s) }),
        1 => (prop::sample::select(strings), 0u32..1000, any::<u32>())
            .prop_map(|(id, len, seed)| {
                let n = (len as usize).min(MAX_TEXT_SIZE).div_ceil(4) * 4;
                let words = (0..n as u32).map(|i| seed.wrapping_mul(i + 7) ^ (i << 9)).collect();
                Property { id, wire: Wire::StringV1Raw { len, words } }
            })
            .prop_filter("non-canonical", |p| PropertyList::new().push(p.clone()).is_ok()),
    ]
}

proptest! {
    #[test]
    fn valid_lists_round_trip(items in prop::collection::vec(valid_property(), 0..12)) {
        let list = PropertyList::from_items(items.clone()).expect("every generated item is valid");
        let bytes = list.to_bytes();
        prop_assert_eq!(bytes.len(), list.encoded_len());
        let back = PropertyList::decode(&bytes);
        prop_assert_eq!(&back.stop, &None);
        prop_assert!(back.trailing.is_empty());
        prop_assert_eq!(back.items(), &items[..]);
        prop_assert_eq!(back, list);
    }

    #[test]
    fn accepted_items_always_decode_back(id in prop_oneof![table_id(), any::<u32>()], wire in any_wire()) {
        let p = Property { id, wire };
        let mut list = PropertyList::new();
        if list.push(p.clone()).is_ok() {
            let bytes = list.to_bytes();
            prop_assert_eq!(bytes.len(), p.encoded_len());
            let back = PropertyList::decode(&bytes);
            prop_assert_eq!(&back.stop, &None);
            prop_assert_eq!(back.items(), &[p][..]);
        }
    }

    #[test]
    fn arbitrary_bytes_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..1300)) {
        let list = PropertyList::decode(&bytes);
        prop_assert_eq!(list.to_bytes(), bytes.clone());
        prop_assert_eq!(list.encoded_len(), bytes.len());
        prop_assert_eq!(list.stop.is_none(), list.trailing.is_empty());
        prop_assert_eq!(PropertyList::decode(&list.to_bytes()), list);
    }

    #[test]
    fn mutated_valid_lists_never_panic_and_round_trip(
        items in prop::collection::vec(valid_property(), 1..8),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = PropertyList::from_items(items).expect("valid").to_bytes();
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        let n = cut.index(bytes.len() + 1);
        for input in [&bytes[..], &bytes[..n]] {
            let list = PropertyList::decode(input);
            prop_assert_eq!(list.to_bytes(), input.to_vec());
            for p in list.items() {
                let _ = p.value();
                let _ = p.text();
            }
        }
    }

    #[test]
    fn scaled_floats_round_trip_within_one_quantum(
        id in prop::sample::select(ids_of(|d| d.kind == PropType::Float && d.v2.scale().is_some())),
        unit in -1.0f32..=1.0,
    ) {
        let def = lookup(id).expect("table id");
        let scale = def.v2.scale().expect("scaled") as f32;
        let v = unit * 32767.0 / scale;
        let list = built(|l| l.push_float(id, v, Protocol::V2));
        prop_assert_eq!(list.encoded_len(), 4);
        let back = PropertyList::decode(&list.to_bytes());
        let Some(Value::Float(got)) = back.value(id) else {
            return Err(TestCaseError::fail("not a float"));
        };
        let quantum = 1.0 / scale;
        prop_assert!((got - v).abs() <= quantum * 1.0001, "{} -> {} (quantum {})", v, got, quantum);
    }

    #[test]
    fn builders_round_trip_every_value_kind(
        idx in any::<prop::sample::Index>(),
        int in any::<i32>(),
        float in any::<f32>(),
        flag in any::<bool>(),
        text in prop::collection::vec(any::<u8>(), 0..40),
        v2 in any::<bool>(),
    ) {
        let def = &table()[idx.index(table().len())];
        let proto = if v2 { Protocol::V2 } else { Protocol::V1 };
        let mut list = PropertyList::new();
        let res = match def.kind {
            PropType::Int => list.push_int(def.id, int, proto).map(|_| ()),
            PropType::Bool => list.push_bool(def.id, flag, proto).map(|_| ()),
            PropType::Float => list.push_float(def.id, float, proto).map(|_| ()),
            PropType::String => list.push_string(def.id, &text, proto).map(|_| ()),
        };
        match res {
            Ok(()) => {
                let back = PropertyList::decode(&list.to_bytes());
                prop_assert_eq!(&back, &list);
                if let Some(p) = back.items().first() {
                    match (def.kind, p.value()) {
                        (PropType::Int, Value::Int(got)) => match p.wire {
                            Wire::Plain(_) => prop_assert_eq!(got, int),
                            _ if def.v2 == V2Encoding::ShortInt => prop_assert_eq!(got, i32::from(clamp16(int))),
                            _ => {}
                        },
                        (PropType::Bool, Value::Bool(got)) => prop_assert_eq!(got, flag),
                        (PropType::Bool, Value::Bools { base, mask }) => {
                            prop_assert_eq!(mask & (1 << (def.id - base)) != 0, flag);
                        }
                        (PropType::Float, Value::Float(got)) => match p.wire {
                            Wire::Plain(_) => prop_assert_eq!(got.to_bits(), float.to_bits()),
                            _ => prop_assert!(got.is_finite()),
                        },
                        (PropType::String, Value::String(got)) => {
                            // Cut at the first NUL (the sender's strlen); a v2 launchbar
                            // state comes back from packed 120 as the same string.
                            let n = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                            prop_assert_eq!(got, text[..n].to_vec());
                        }
                        (k, v) => return Err(TestCaseError::fail(format!("{k:?} gave {v:?}"))),
                    }
                } else {
                    prop_assert!(def.id == LAUNCHBAR_STATE_ID && v2, "only 108 may send nothing");
                }
            }
            Err(PropError::NotSent(id)) => prop_assert!(v2 && def.v2 == V2Encoding::NoSend && id == def.id),
            Err(PropError::BadWire { id, .. }) => prop_assert!(id == LAUNCHBAR_VALUE_ID && !v2),
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        }
    }
}
