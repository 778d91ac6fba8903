//! The 32-byte header every FlightGear multiplayer datagram starts with.

use crate::{Error, HEADER_LEN, MAGIC_CLIENT, MAGIC_RELAY};
use std::fmt;
use wire::{put_u32_be, Cursor};

/// Which magic a datagram carries: a client's `FGFS` or a relay's `SFGF`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Magic {
    /// `FGFS`, sent by FlightGear clients and delivered to them.
    Client,
    /// `SFGF`, used by fgms on relay links and towards crossfeed targets.
    Relay,
}

impl Magic {
    /// The magic from its wire value.
    pub fn from_wire(v: u32) -> Result<Magic, Error> {
        match v {
            MAGIC_CLIENT => Ok(Magic::Client),
            MAGIC_RELAY => Ok(Magic::Relay),
            other => Err(Error::BadMagic(other)),
        }
    }

    /// The wire value.
    pub fn to_wire(self) -> u32 {
        match self {
            Magic::Client => MAGIC_CLIENT,
            Magic::Relay => MAGIC_RELAY,
        }
    }

    /// The 4 wire bytes, for rewriting a datagram in place.
    pub fn bytes(self) -> [u8; 4] {
        self.to_wire().to_be_bytes()
    }
}

/// Message ids, as FlightGear and fgms number them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsgId {
    /// 1: the old chat message (`char[256]`); FlightGear still receives it, nothing sends it.
    Chat,
    /// 2-6: legacy ids FlightGear ignores (unusable/old position, old property, reset).
    Legacy(u32),
    /// 7: position data, v1 and v2; the only message FlightGear sends.
    Position,
    /// 8: MP_2017_DATA_ID, defined and never sent.
    Mp2017,
    /// 9: fgms's ping; answered with the same datagram as id 10.
    Ping,
    /// 10: fgms's pong.
    Pong,
    /// Anything else.
    Unknown(u32),
}

impl MsgId {
    /// The id from its wire value.
    pub fn from_wire(v: u32) -> MsgId {
        match v {
            1 => MsgId::Chat,
            2..=6 => MsgId::Legacy(v),
            7 => MsgId::Position,
            8 => MsgId::Mp2017,
            9 => MsgId::Ping,
            10 => MsgId::Pong,
            other => MsgId::Unknown(other),
        }
    }

    /// The wire value.
    pub fn to_wire(self) -> u32 {
        match self {
            MsgId::Chat => 1,
            MsgId::Legacy(v) | MsgId::Unknown(v) => v,
            MsgId::Position => 7,
            MsgId::Mp2017 => 8,
            MsgId::Ping => 9,
            MsgId::Pong => 10,
        }
    }
}

/// A callsign: 1 to 7 bytes, no NUL. Stored as the 8-byte wire field, zero-filled,
/// so it is `Copy` and cheap to hash.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Callsign([u8; 8]);

impl Callsign {
    /// At most this many characters travel on the wire (byte 7 is forced to NUL).
    pub const MAX_LEN: usize = 7;

    /// A validated callsign from text.
    pub fn new(s: &str) -> Result<Callsign, Error> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(Error::EmptyCallsign);
        }
        if b.len() > Self::MAX_LEN || b.contains(&0) {
            return Err(Error::BadCallsign);
        }
        let mut raw = [0u8; 8];
        raw[..b.len()].copy_from_slice(b);
        Ok(Callsign(raw))
    }

    /// The callsign as the receiver reads it: up to the first NUL, with byte 7
    /// forced to NUL, so bytes after the terminator never leak in. May be empty.
    pub fn from_wire(field: [u8; 8]) -> Callsign {
        let mut raw = [0u8; 8];
        for (i, &b) in field.iter().take(Self::MAX_LEN).enumerate() {
            if b == 0 {
                break;
            }
            raw[i] = b;
        }
        Callsign(raw)
    }

    /// The callsign bytes without padding.
    pub fn as_bytes(&self) -> &[u8] {
        let n = self.0.iter().position(|&b| b == 0).unwrap_or(8);
        &self.0[..n]
    }

    /// The 8-byte wire field (zero-padded).
    pub fn wire(&self) -> [u8; 8] {
        self.0
    }

    /// Whether the field held no characters.
    pub fn is_empty(&self) -> bool {
        self.0[0] == 0
    }

    /// `obs*` callsigns are observers: they receive traffic but are never forwarded.
    pub fn is_observer(&self) -> bool {
        self.as_bytes().starts_with(b"obs")
    }
}

impl fmt::Display for Callsign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Non-UTF-8 bytes are shown escaped so a hostile callsign cannot forge log lines.
        for &b in self.as_bytes() {
            if b.is_ascii_graphic() {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Callsign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Callsign({self})")
    }
}

/// Where in the range word the requested range was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeWord {
    /// The FlightGear form: range in the low 16 bits, high bits 0.
    Plain(u16),
    /// The byte-swapped form an fgms hop leaves behind (`0x00000064` becomes `0x64000000`).
    Swapped(u16),
    /// Zero, or both halves set: no usable range; use the server default.
    Unset,
}

impl RangeWord {
    /// Classifies a header word 16 value.
    pub fn from_wire(word: u32) -> RangeWord {
        let (hi, lo) = (word >> 16, word & 0xffff);
        if hi == 0 && lo != 0 {
            RangeWord::Plain(lo as u16)
        } else if lo == 0 && hi != 0 {
            RangeWord::Swapped(word.swap_bytes() as u16)
        } else {
            RangeWord::Unset
        }
    }

    /// The range in nautical miles, if one was requested.
    pub fn nm(self) -> Option<u16> {
        match self {
            RangeWord::Plain(nm) | RangeWord::Swapped(nm) => Some(nm),
            RangeWord::Unset => None,
        }
    }
}

/// The decoded 32-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `FGFS` or `SFGF`.
    pub magic: Magic,
    /// Protocol version word (0x00010001 on valid traffic).
    pub version: u32,
    /// What the body holds.
    pub msg_id: MsgId,
    /// The whole datagram length in bytes, header included.
    pub msg_len: u32,
    /// Word 16: requested range (nm) in the low 16 bits; see [`RangeWord`].
    pub range_word: u32,
    /// Deprecated reply port; FlightGear sends 0.
    pub reply_port: u32,
    /// Sender's callsign.
    pub callsign: Callsign,
}

impl Header {
    /// Decodes the header fields. Checks only the magic; version and length
    /// policy are for the caller (see [`crate::message::RoutingInfo::parse`]).
    pub fn decode(buf: &[u8]) -> Result<Header, Error> {
        if buf.len() < HEADER_LEN {
            return Err(Error::Runt(buf.len()));
        }
        let mut c = Cursor::new(buf);
        let magic = Magic::from_wire(c.u32_be()?)?;
        let version = c.u32_be()?;
        let msg_id = MsgId::from_wire(c.u32_be()?);
        let msg_len = c.u32_be()?;
        let range_word = c.u32_be()?;
        let reply_port = c.u32_be()?;
        let callsign = Callsign::from_wire(c.array()?);
        Ok(Header {
            magic,
            version,
            msg_id,
            msg_len,
            range_word,
            reply_port,
            callsign,
        })
    }

    /// Appends the 32 header bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u32_be(out, self.magic.to_wire());
        put_u32_be(out, self.version);
        put_u32_be(out, self.msg_id.to_wire());
        put_u32_be(out, self.msg_len);
        put_u32_be(out, self.range_word);
        put_u32_be(out, self.reply_port);
        out.extend_from_slice(&self.callsign.wire());
    }

    /// The requested range as sent.
    pub fn range(&self) -> RangeWord {
        RangeWord::from_wire(self.range_word)
    }

    /// The range word FlightGear would send for `nm`: `shortints32(0, nm)`.
    pub fn range_word_for(nm: u16) -> u32 {
        u32::from(nm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callsign_limits() {
        assert!(Callsign::new("TEST1").is_ok());
        assert!(Callsign::new("ABCDEFG").is_ok());
        assert_eq!(Callsign::new("ABCDEFGH"), Err(Error::BadCallsign));
        assert_eq!(Callsign::new(""), Err(Error::EmptyCallsign));
        assert_eq!(Callsign::new("A\0B"), Err(Error::BadCallsign));
    }

    #[test]
    fn callsign_reads_to_first_nul_and_forces_byte_7() {
        let c = Callsign::from_wire(*b"TEST1\0XY");
        assert_eq!(c.as_bytes(), b"TEST1");
        assert_eq!(c, Callsign::new("TEST1").unwrap());
        let c = Callsign::from_wire(*b"ABCDEFGH");
        assert_eq!(c.as_bytes(), b"ABCDEFG");
        assert!(Callsign::from_wire([0; 8]).is_empty());
    }

    #[test]
    fn observers() {
        assert!(Callsign::new("obs01").unwrap().is_observer());
        assert!(!Callsign::new("OBS01").unwrap().is_observer());
        assert!(!Callsign::new("TEST1").unwrap().is_observer());
    }

    #[test]
    fn range_word_forms_from_the_notes() {
        assert_eq!(RangeWord::from_wire(0x0000_0064), RangeWord::Plain(100));
        // fgms's in-place byte swap turns 0x00000064 into 0x64000000.
        assert_eq!(RangeWord::from_wire(0x6400_0000), RangeWord::Swapped(100));
        assert_eq!(RangeWord::from_wire(0xd007_0000), RangeWord::Swapped(2000));
        assert_eq!(RangeWord::from_wire(0), RangeWord::Unset);
        assert_eq!(RangeWord::from_wire(0x0001_0001), RangeWord::Unset);
    }

    #[test]
    fn display_escapes_control_bytes() {
        let c = Callsign::from_wire(*b"A\nB\0\0\0\0\0");
        assert_eq!(c.to_string(), "A\\x0aB");
    }
}
