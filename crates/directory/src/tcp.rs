//! DNS over TCP as bytes (RFC 1035 4.2.2, RFC 7766): the two-byte length before
//! every message, the FORMERR answer to a query that does not decode, and how many
//! queries one connection carries. The socket loop is the binary's.

/// The most queries one TCP connection carries; it is closed after the last answer.
/// With the idle timeout this bounds how long one connection holds its place.
pub const MAX_QUERIES_PER_CONNECTION: usize = 100;

/// `message` behind its two-byte big-endian length; `None` over 65,535 bytes.
pub fn frame(message: &[u8]) -> Option<Vec<u8>> {
    let len = u16::try_from(message.len()).ok()?;
    let mut out = Vec::with_capacity(message.len() + 2);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(message);
    Some(out)
}

/// The answer to a message whose body does not decode: its ID, opcode and RD bit,
/// QR set, RCODE FORMERR, no records. `None` when there is not even a header (12
/// bytes), or when the message is itself a response (never answered).
pub fn form_error(message: &[u8]) -> Option<[u8; 12]> {
    let head = message.get(..4)?;
    if message.len() < 12 || head[2] & 0x80 != 0 {
        return None;
    }
    let mut out = [0u8; 12];
    out[..2].copy_from_slice(&head[..2]);
    out[2] = 0x80 | (head[2] & 0x79); // QR, the opcode, RD
    out[3] = 1; // FORMERR
    Some(out)
}

#[cfg(all(test, feature = "dns"))]
mod tests {
    use super::*;
    use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};

    #[test]
    fn a_frame_is_the_length_then_the_message() {
        assert_eq!(frame(b"abc").unwrap(), b"\0\x03abc");
        assert_eq!(frame(&[7; 65_535]).unwrap().len(), 65_537);
        assert!(frame(&[7; 65_536]).is_none());
    }

    #[test]
    fn form_error_answers_queries_only() {
        assert_eq!(form_error(&[0; 11]), None, "no header");
        let mut query = [0u8; 12];
        query[..3].copy_from_slice(&[0xab, 0xcd, 0x29]); // opcode 5 (UPDATE), RD
        let m = Message::from_vec(&form_error(&query).unwrap()).unwrap();
        assert_eq!(m.metadata.id, 0xabcd);
        assert_eq!(m.metadata.message_type, MessageType::Response);
        assert_eq!(m.metadata.op_code, OpCode::Update);
        assert!(m.metadata.recursion_desired);
        assert_eq!(m.metadata.response_code, ResponseCode::FormErr);
        query[2] |= 0x80;
        assert_eq!(form_error(&query), None, "a response is not answered");
    }

    proptest::proptest! {
        /// Whatever arrives, the answer (if any) is a FORMERR response with its ID.
        #[test]
        fn form_error_is_always_a_formerr_response(b in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
            if let Some(a) = form_error(&b) {
                let m = Message::from_vec(&a).unwrap();
                proptest::prop_assert_eq!(m.metadata.message_type, MessageType::Response);
                proptest::prop_assert_eq!(m.metadata.response_code, ResponseCode::FormErr);
                proptest::prop_assert_eq!(m.metadata.id, u16::from_be_bytes([b[0], b[1]]));
            }
        }
    }
}
