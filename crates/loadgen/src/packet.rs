//! The datagrams the simulated pilots send: a real FlightGear 2020.3 capture
//! with the callsign, range, position and a measurement stamp rewritten.
//!
//! The stamp lives in the position body's `time` (send time, seconds since the
//! run's start) and `lag` (sender index × 2^24 + sequence number, an exact
//! integer in a double) fields. A relay forwards those bytes verbatim.

use fgmp::message::{POSITION_OFFSET, RANGE_OFFSET};

/// A real 892-byte v2 position datagram (c172p, TEST1, BIKF).
pub(crate) const TEMPLATE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/fg/samples/c172p_TEST1_position.bin"
));

/// Offset of the `time` double in a position datagram.
pub(crate) const TIME_OFFSET: usize = 128;
/// Offset of the `lag` double in a position datagram.
pub(crate) const LAG_OFFSET: usize = 136;
const CALLSIGN_OFFSET: usize = 24;
const MSG_LEN_OFFSET: usize = 12;
/// Sequence numbers wrap below this (2^24 datagrams: 19 days at 10 Hz).
const SEQ_SPAN: f64 = 16_777_216.0;

/// The callsign of pilot `i`: `L` and `i` in base 36, NUL-padded (at most 7 characters).
pub(crate) fn callsign(i: u32) -> [u8; 8] {
    callsign_prefixed(b'L', i)
}

/// `prefix` and `i` in base 36 (the last 6 digits), NUL-padded.
pub(crate) fn callsign_prefixed(prefix: u8, i: u32) -> [u8; 8] {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = [0u8; 7];
    let mut n = 0;
    let mut v = i;
    loop {
        digits[n] = DIGITS[(v % 36) as usize].to_ascii_uppercase();
        n += 1;
        v /= 36;
        if v == 0 || n == 6 {
            break;
        }
    }
    let mut out = [0u8; 8];
    out[0] = prefix;
    for k in 0..n {
        out[1 + k] = digits[n - 1 - k];
    }
    out
}

/// A buffer holding the template, rewritten per send.
#[derive(Debug, Clone)]
pub(crate) struct Datagram {
    buf: Vec<u8>,
}

impl Default for Datagram {
    fn default() -> Self {
        Datagram::new()
    }
}

impl Datagram {
    /// A copy of the template with MsgLen checked against its size.
    pub(crate) fn new() -> Datagram {
        let mut buf = TEMPLATE.to_vec();
        let len = buf.len() as u32;
        buf[MSG_LEN_OFFSET..MSG_LEN_OFFSET + 4].copy_from_slice(&len.to_be_bytes());
        Datagram { buf }
    }

    /// Rewrites the pilot fields: callsign, range (plain low-16-bit form) and ECEF position.
    pub(crate) fn set_pilot(&mut self, callsign: &[u8; 8], range_nm: u16, pos: [f64; 3]) {
        self.buf[CALLSIGN_OFFSET..CALLSIGN_OFFSET + 8].copy_from_slice(callsign);
        self.buf[RANGE_OFFSET..RANGE_OFFSET + 4]
            .copy_from_slice(&u32::from(range_nm).to_be_bytes());
        for (k, v) in pos.iter().enumerate() {
            let o = POSITION_OFFSET + 8 * k;
            self.buf[o..o + 8].copy_from_slice(&v.to_be_bytes());
        }
    }

    /// Writes the measurement stamp.
    pub(crate) fn set_stamp(&mut self, sent_s: f64, sender: u32, seq: u32) {
        let lag = f64::from(sender) * SEQ_SPAN + f64::from(seq) % SEQ_SPAN;
        self.buf[TIME_OFFSET..TIME_OFFSET + 8].copy_from_slice(&sent_s.to_be_bytes());
        self.buf[LAG_OFFSET..LAG_OFFSET + 8].copy_from_slice(&lag.to_be_bytes());
    }

    /// The datagram bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// A stamp read back from a received datagram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stamp {
    /// Send time, seconds since the run's start.
    pub sent_s: f64,
    /// Sender index.
    pub sender: u32,
    /// Sender's sequence number.
    pub seq: u32,
}

/// Reads the stamp of a datagram this generator sent; `None` if it is not one.
pub(crate) fn read_stamp(d: &[u8]) -> Option<Stamp> {
    let f = |o: usize| -> Option<f64> {
        let b: [u8; 8] = d.get(o..o + 8)?.try_into().ok()?;
        Some(f64::from_be_bytes(b))
    };
    if d.len() != TEMPLATE.len() || d.get(8..12) != Some(&[0, 0, 0, 7]) {
        return None;
    }
    let sent_s = f(TIME_OFFSET)?;
    let lag = f(LAG_OFFSET)?;
    if !sent_s.is_finite() || !lag.is_finite() || lag < 0.0 || lag >= 2f64.powi(53) {
        return None;
    }
    let sender = (lag / SEQ_SPAN).floor();
    let seq = lag - sender * SEQ_SPAN;
    if sender > f64::from(u32::MAX) || seq.fract() != 0.0 {
        return None;
    }
    Some(Stamp {
        sent_s,
        sender: sender as u32,
        seq: seq as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fgmp::message::RoutingInfo;

    #[test]
    fn callsigns_are_short_and_distinct() {
        assert_eq!(&callsign(0), b"L0\0\0\0\0\0\0");
        assert_eq!(&callsign(35), b"LZ\0\0\0\0\0\0");
        assert_eq!(&callsign(36), b"L10\0\0\0\0\0");
        let all: std::collections::HashSet<_> = (0..50_000).map(callsign).collect();
        assert_eq!(all.len(), 50_000);
        assert!(callsign(u32::MAX).iter().filter(|&&b| b != 0).count() <= 7);
    }

    #[test]
    fn rewritten_datagram_routes_and_stamps_round_trip() {
        let mut d = Datagram::new();
        assert_eq!(d.bytes().len(), 892);
        d.set_pilot(&callsign(1234), 42, [1.0e6, -2.0e6, 6.0e6]);
        d.set_stamp(12.345678, 9_999, 77);
        let info = RoutingInfo::parse(d.bytes()).expect("valid datagram");
        assert_eq!(info.callsign.to_string(), "LYA");
        assert_eq!(info.range_word, 42);
        assert_eq!(info.position, Some([1.0e6, -2.0e6, 6.0e6]));
        let s = read_stamp(d.bytes()).expect("stamp");
        assert_eq!(
            s,
            Stamp {
                sent_s: 12.345678,
                sender: 9_999,
                seq: 77
            }
        );
        // The rest of the capture is untouched.
        assert_eq!(&d.bytes()[168..], &TEMPLATE[168..]);
        assert!(read_stamp(&d.bytes()[..500]).is_none());
    }
}
