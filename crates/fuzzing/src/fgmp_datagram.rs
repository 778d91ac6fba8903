//! Strict whole-datagram decoding: never panics; what decodes re-encodes to something
//! that decodes to the same body.
/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    if let Ok(m) = fgmp::Message::decode(data) {
        if let Ok(bytes) = fgmp::message::to_bytes(&m) {
            let again = fgmp::Message::decode(&bytes).expect("re-encoded datagram decodes");
            assert_eq!(again.body, m.body);
        }
    }
}
