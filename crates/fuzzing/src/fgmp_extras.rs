//! The extras decoder (`fgmp::extras`: chat, radio, transponder, protocol) and the
//! relay's chat fingerprint on any datagram: never panics; the fingerprint is 0
//! exactly when the decoder finds no chat line; the text it returns is clean (no control character) and
//! bounded; the protocol is 1 or 2; the ATC rule holds on any callsign and model.

use fgmp::extras::{clean_text, is_atc, Extras, MAX_CHAT_CHARS, MAX_LIVERY_CHARS};

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let print = fgmp::extras::chat_fingerprint(data);
    if let Some(x) = Extras::decode(data) {
        // A line that cleans to nothing (controls only) still has a fingerprint.
        if print == 0 {
            assert!(x.chat.is_none());
        }
        assert!(x.protocol == 1 || x.protocol == 2);
        for (t, max) in [(&x.chat, MAX_CHAT_CHARS), (&x.livery, MAX_LIVERY_CHARS)] {
            if let Some(t) = t {
                assert!(!t.is_empty() && t.chars().count() <= max);
                assert!(!t.chars().any(char::is_control));
                assert_eq!(&clean_text(t.as_bytes(), max), t, "cleaning is idempotent");
            }
        }
        assert!(x.frequency_hz.is_none_or(|f| f > 0));
    }
    let s = String::from_utf8_lossy(data);
    let (cs, model) = s.split_once('\n').unwrap_or((&s, ""));
    if is_atc(cs, model) {
        assert!(cs.len() >= 3 && (model == "OpenRadar" || model.contains("ATC")));
    }
    if let Some(a) = fgmp::extras::atc_airport(cs) {
        assert!((3..=4).contains(&a.len()));
    }
}
