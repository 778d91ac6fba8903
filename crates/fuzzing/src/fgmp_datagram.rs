//! Strict whole-datagram decoding: never panics; what decodes re-encodes to bytes
//! that decode and re-encode to the same bytes again (compared as bytes, not as
//! values: a NaN in a float field is kept bit for bit but is not equal to itself).

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    if let Ok(m) = fgmp::Message::decode(data) {
        if let Ok(bytes) = fgmp::message::to_bytes(&m) {
            let again = fgmp::Message::decode(&bytes).expect("re-encoded datagram decodes");
            let twice = fgmp::message::to_bytes(&again).expect("re-decoded datagram encodes");
            assert_eq!(
                twice, bytes,
                "encode(decode(encode(decode(x)))) == encode(decode(x))"
            );
        }
    }
}
