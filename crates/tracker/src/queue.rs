//! The client's queue file (fgms's `queue_file`): the messages not yet acknowledged
//! when the relay stopped, read back at its next start. One message per record,
//! records separated by NUL bytes (a message may hold newlines, never a NUL: the
//! wire's own terminator).

/// The file's bytes for `msgs`.
pub fn encode(msgs: &[String]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(msgs.iter().map(|m| m.len() + 1).sum());
    for m in msgs {
        bytes.extend_from_slice(m.as_bytes());
        bytes.push(b'\0');
    }
    bytes
}

/// The messages of a file's bytes: empty records are skipped, bytes that are not
/// UTF-8 replaced (a damaged file still yields its good messages).
pub fn decode(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == b'\0')
        .filter(|r| !r.is_empty())
        .map(|r| String::from_utf8_lossy(r).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn messages_with_newlines_come_back_whole() {
        let msgs = vec![
            "CONNECT A test c172p 2026-12-02 10:00:00".to_string(),
            "POSITION a\nPOSITION b".to_string(),
        ];
        let bytes = encode(&msgs);
        assert_eq!(bytes.iter().filter(|&&b| b == 0).count(), 2);
        assert_eq!(decode(&bytes), msgs);
        assert!(decode(b"").is_empty(), "an empty file: no backlog");
        assert_eq!(decode(b"\0\0A\0\0B"), ["A", "B"], "empty records skipped");
    }

    proptest! {
        #[test]
        fn any_messages_without_nul_round_trip(
            msgs in proptest::collection::vec("[^\u{0}]{1,40}", 0..20)
        ) {
            prop_assert_eq!(decode(&encode(&msgs)), msgs);
        }

        #[test]
        fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let msgs = decode(&bytes);
            prop_assert!(msgs.iter().all(|m| !m.is_empty() && !m.contains('\0')));
        }
    }
}
