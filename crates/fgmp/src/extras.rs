//! What a position datagram carries beyond model and position: the protocol version,
//! the sender's clock and lag, chat (id 10002), the radio (13001) and transponder
//! (1500-1505), livery (1101) and variant (1100); and the fgms rule that tells an
//! ATC station from a pilot.
//!
//! Pure: bytes in, typed values out. Meant for a reader off the forwarding path (the
//! HTTP API's snapshot), never for the relay's per-datagram work.
//!
//! ```
//! use fgmp::extras::{clean_text, is_atc, Extras};
//! assert_eq!(clean_text(b"hi\x07 there\n", 64), "hi there");
//! assert!(is_atc("EDDF_TW", "OpenRadar"));
//! assert!(!is_atc("EDDF_TW", "Aircraft/c172p/Models/c172p.xml"));
//! assert!(Extras::decode(b"short").is_none());
//! ```

use crate::message::Position;
use crate::props::{PropertyList, Value, CHAT_ID};
use crate::{HEADER_LEN, POSITION_MIN_LEN};

/// Id 1100, `sim/model/variant` (INT).
pub const VARIANT_ID: u32 = 1100;
/// Id 1101, `sim/model/livery/file` (STRING).
pub const LIVERY_ID: u32 = 1101;
/// Id 1500, `instrumentation/transponder/transmitted-id` (the squawk code).
pub const TRANSPONDER_CODE_ID: u32 = 1500;
/// Id 1501, `instrumentation/transponder/altitude` (feet, as the transponder reports).
pub const TRANSPONDER_ALT_ID: u32 = 1501;
/// Id 1502, `instrumentation/transponder/ident` (BOOL).
pub const TRANSPONDER_IDENT_ID: u32 = 1502;
/// Id 1503, `instrumentation/transponder/inputs/mode` (INT knob position).
pub const TRANSPONDER_MODE_ID: u32 = 1503;
/// Id 13001, `sim/multiplay/comm-transmit-frequency-hz` (INT, sent as a plain 8-byte item).
pub const FREQUENCY_ID: u32 = 13001;
/// Longest chat line kept, in characters (FlightGear's old chat message held 255).
pub const MAX_CHAT_CHARS: usize = 255;
/// Longest livery name kept, in characters.
pub const MAX_LIVERY_CHARS: usize = 96;
/// The callsign endings fgms reads as ATC (the notes, section 2.5).
pub const ATC_SUFFIXES: [&str; 6] = ["_DL", "_GN", "_TW", "_AP", "_DE", "_CT"];

/// The transponder as the aircraft sends it; each part only when sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transponder {
    /// The transmitted code (squawk), e.g. 7000; -9999 means off in FlightGear.
    pub code: Option<i32>,
    /// Pressure altitude the transponder reports, feet.
    pub altitude_ft: Option<i32>,
    /// Whether IDENT is pressed.
    pub ident: Option<bool>,
    /// The mode knob (FlightGear's KT76C: 0 off, 1 standby, 2 test, 3 ground, 4 on, 5 alt).
    pub mode: Option<i32>,
}

impl Transponder {
    /// Whether nothing was sent.
    pub fn is_empty(&self) -> bool {
        *self == Transponder::default()
    }
}

/// What one position datagram says beyond model and position.
#[derive(Debug, Clone, PartialEq)]
pub struct Extras {
    /// 2 when the pad word is `0x1face002` (or id 10 says 2), else 1.
    pub protocol: u8,
    /// The sender's MP clock, seconds (header body field `time`).
    pub time: f64,
    /// The sender's `lag` field, seconds (1 / its send rate: 0.1 at 10 Hz).
    pub lag: f64,
    /// The chat property, cleaned ([`clean_text`]); `None` when absent or empty.
    pub chat: Option<String>,
    /// The transmit frequency, Hz (id 13001), when sent and positive.
    pub frequency_hz: Option<u32>,
    /// The transponder, when any of its ids was sent.
    pub transponder: Option<Transponder>,
    /// The livery file (id 1101), cleaned; `None` when absent or empty.
    pub livery: Option<String>,
    /// The model variant (id 1100).
    pub variant: Option<i32>,
}

impl Extras {
    /// Decodes a whole position datagram (header included); `None` if it is too
    /// short to hold a position body. Never panics; unknown or broken properties end
    /// the list as FlightGear's receiver does, keeping what came before.
    pub fn decode(datagram: &[u8]) -> Option<Extras> {
        if datagram.len() < POSITION_MIN_LEN {
            return None;
        }
        let body = Position::decode(&datagram[HEADER_LEN..]).ok()?;
        Some(Extras::from_position(&body))
    }

    /// The extras of a decoded position body.
    pub fn from_position(p: &Position) -> Extras {
        let props = &p.properties;
        let int = |id| match props.value(id) {
            Some(Value::Int(v)) => Some(v),
            Some(Value::Bool(b)) => Some(i32::from(b)),
            _ => None,
        };
        let protocol = if p.is_v2() || int(crate::props::PROTOCOL_VERSION_ID) == Some(2) {
            2
        } else {
            1
        };
        let transponder = Transponder {
            code: int(TRANSPONDER_CODE_ID),
            altitude_ft: int(TRANSPONDER_ALT_ID),
            ident: int(TRANSPONDER_IDENT_ID).map(|v| v != 0),
            mode: int(TRANSPONDER_MODE_ID),
        };
        Extras {
            protocol,
            time: p.time,
            lag: p.lag,
            chat: text(props, CHAT_ID, MAX_CHAT_CHARS),
            frequency_hz: int(FREQUENCY_ID)
                .filter(|&f| f > 0)
                .and_then(|f| u32::try_from(f).ok()),
            transponder: (!transponder.is_empty()).then_some(transponder),
            livery: text(props, LIVERY_ID, MAX_LIVERY_CHARS),
            variant: int(VARIANT_ID),
        }
    }
}

/// A 64-bit fingerprint (FNV-1a) of the chat line (id 10002) a position datagram
/// carries, header included; 0 when it carries none or an empty one. For the relay
/// to tell a new chat line from the one it already forwarded (a line rides in every
/// datagram for 10 s) without keeping the text. Decodes the property list: call it
/// once per datagram at most, and only when the answer matters.
pub fn chat_fingerprint(datagram: &[u8]) -> u64 {
    let Some(props) = datagram.get(POSITION_MIN_LEN..) else {
        return 0;
    };
    match PropertyList::decode(props).text(CHAT_ID) {
        Some(t) if !t.is_empty() => t.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        }),
        _ => 0,
    }
}

fn text(props: &PropertyList, id: u32, max: usize) -> Option<String> {
    let t = props.text(id)?;
    let s = clean_text(&t, max);
    (!s.is_empty()).then_some(s)
}

/// A string property as text for people: invalid UTF-8 replaced, control
/// characters (C0, DEL, C1, and the bidirectional overrides) dropped, runs of
/// whitespace made one space, trimmed, and cut to `max` characters.
pub fn clean_text(bytes: &[u8], max: usize) -> String {
    let lossy = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut n = 0;
    let mut space = false;
    for c in lossy.chars() {
        if n >= max {
            break;
        }
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_bidi_control(c) {
            continue;
        }
        if space {
            out.push(' ');
            n += 1;
            space = false;
            if n >= max {
                break;
            }
        }
        out.push(c);
        n += 1;
    }
    out.truncate(out.trim_end().len());
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// fgms's ATC rule (the notes, section 2.5): a callsign ending in
/// `_DL`, `_GN`, `_TW`, `_AP`, `_DE` or `_CT` (case as sent) whose model is exactly
/// `OpenRadar` or contains `ATC`. Both parts must hold: a pilot named `X_TW` in a
/// Cessna is a pilot.
pub fn is_atc(callsign: &str, model: &str) -> bool {
    ATC_SUFFIXES.iter().any(|s| callsign.ends_with(s))
        && (model == "OpenRadar" || model.contains("ATC"))
}

/// The airport part of an ATC callsign: `EDDF` for `EDDF_TW` (the text before the
/// last `_`), when it is 3 or 4 letters or digits.
pub fn atc_airport(callsign: &str) -> Option<&str> {
    let (head, _) = callsign.rsplit_once('_')?;
    ((3..=4).contains(&head.len()) && head.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_drops_controls_and_caps() {
        assert_eq!(clean_text(b"  a\tb\r\n c \x1b[31m", 100), "a b c [31m");
        assert_eq!(clean_text("x\u{202e}y".as_bytes(), 100), "xy");
        assert_eq!(clean_text(b"abcdef", 3), "abc");
        assert_eq!(clean_text(b"ab  cd", 3), "ab");
        assert_eq!(clean_text(b"\xff\xfe", 10), "\u{fffd}\u{fffd}");
        assert_eq!(clean_text(b"", 10), "");
        assert_eq!(clean_text(b"\n\n", 10), "");
    }

    #[test]
    fn atc_rule() {
        for s in ATC_SUFFIXES {
            assert!(is_atc(&format!("EDDF{s}"), "OpenRadar"));
            assert!(is_atc(&format!("EDDF{s}"), "ATC-pie"));
        }
        assert!(!is_atc("EDDF_tw", "OpenRadar"));
        assert!(!is_atc("EDDF_TWR", "OpenRadar"));
        assert!(!is_atc("EDDF_TW", "openradar"));
        assert!(!is_atc("TEST1", "OpenRadar"));
        assert_eq!(atc_airport("EDDF_TW"), Some("EDDF"));
        assert_eq!(atc_airport("X_TW"), None);
        assert_eq!(atc_airport("TW"), None);
    }
}
