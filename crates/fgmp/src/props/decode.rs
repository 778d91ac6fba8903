//! The receiver's walk over a property area, one item at a time.
//!
//! Mirrors FlightGear's `ProcessPosMsg` (FG23 l.2317+) with FG-new's v2 string-length
//! check, but never reads past the end of the buffer: where FlightGear would read stale
//! bytes beyond the datagram, this decoder stops with [`Stop::Truncated`].

use super::table::{lookup, PropType};
use super::value::{round_up4, v1_char_word, Property, Wire};
use super::{LAUNCHBAR_VALUE_ID, MAX_TEXT_SIZE};

/// Why decoding stopped before the end of the property bytes. The bytes from `offset`
/// on are kept verbatim in [`super::PropertyList::trailing`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Stop {
    /// An id FlightGear does not know. Its length cannot be known, so FlightGear (and this
    /// decoder) ignores the rest of the packet.
    #[error("unknown property id {id} at byte {offset}")]
    UnknownId {
        /// Offset of the item in the property bytes.
        offset: usize,
        /// The id (high half of a packed word, or the whole v1 id word).
        id: u32,
    },
    /// The item needs more bytes than are left.
    #[error("property item at byte {offset} truncated: needs {needed} bytes, {available} left")]
    Truncated {
        /// Offset of the item in the property bytes.
        offset: usize,
        /// The id, when at least the id word was present.
        id: Option<u32>,
        /// Bytes the item needs from its offset.
        needed: usize,
        /// Bytes left from its offset.
        available: usize,
    },
    /// A string length FlightGear rejects: a v2 length that is negative (bit 15 set),
    /// over 768 or longer than the bytes left (FG-new's check, FlightGear issue #3472).
    #[error("property {id} at byte {offset}: bad string length {len} ({available} bytes left)")]
    BadStringLength {
        /// Offset of the item in the property bytes.
        offset: usize,
        /// The string property's id.
        id: u32,
        /// The length as FlightGear reads it (sign-extended for v2).
        len: i64,
        /// Bytes left after the length.
        available: usize,
    },
    /// A form FlightGear's receiver would consume differently from any [`Wire`] form, so it
    /// cannot be both decoded and re-encoded exactly: a packed word for a bool-block id
    /// (FlightGear reads the next word as the mask and drops the low half) or a v1 id word
    /// 120 (FlightGear reads it as a single word). No FlightGear sender writes these.
    #[error("property {id} at byte {offset}: {reason}")]
    NonCanonical {
        /// Offset of the item in the property bytes.
        offset: usize,
        /// The id.
        id: u32,
        /// What is odd about it.
        reason: &'static str,
    },
}

impl Stop {
    /// Offset (in the property bytes) of the item that stopped the walk.
    pub fn offset(&self) -> usize {
        match self {
            Stop::UnknownId { offset, .. }
            | Stop::Truncated { offset, .. }
            | Stop::BadStringLength { offset, .. }
            | Stop::NonCanonical { offset, .. } => *offset,
        }
    }
}

/// Reads the big-endian word at `off`, if four bytes are there.
fn word_at(buf: &[u8], off: usize) -> Option<u32> {
    buf.get(off..)?
        .first_chunk::<4>()
        .map(|b| u32::from_be_bytes(*b))
}

/// Decodes the item at `offset`, returning it and its length, or why the walk stops.
pub(crate) fn decode_item(buf: &[u8], offset: usize) -> Result<(Property, usize), Stop> {
    let rest = buf.get(offset..).unwrap_or(&[]);
    let available = rest.len();
    let truncated = |id: Option<u32>, needed: usize| Stop::Truncated {
        offset,
        id,
        needed,
        available,
    };
    let word = word_at(rest, 0).ok_or_else(|| truncated(None, 4))?;
    let hi = word >> 16;

    if hi != 0 {
        // Packed v2 item: id in the high half, signed value (or string length) in the low.
        let id = hi;
        let value = word as u16 as i16;
        let def = lookup(id).ok_or(Stop::UnknownId { offset, id })?;
        if def.kind == PropType::String {
            let bytes_left = available - 4;
            let len = i64::from(value);
            let n = usize::try_from(value)
                .ok()
                .filter(|&n| n <= MAX_TEXT_SIZE && n <= bytes_left)
                .ok_or(Stop::BadStringLength {
                    offset,
                    id,
                    len,
                    available: bytes_left,
                })?;
            // In bounds: n <= bytes_left checked above.
            let text = rest.get(4..4 + n).unwrap_or_default().to_vec();
            return Ok((
                Property {
                    id,
                    wire: Wire::StringV2(text),
                },
                4 + n,
            ));
        }
        if def.reads_as_bool_block() {
            return Err(Stop::NonCanonical {
                offset,
                id,
                reason: "packed id word for a bool block (FlightGear would read the next word as the mask)",
            });
        }
        return Ok((
            Property {
                id,
                wire: Wire::Packed(value),
            },
            4,
        ));
    }

    // v1-style item: the whole word is the id.
    let id = word;
    let def = lookup(id).ok_or(Stop::UnknownId { offset, id })?;
    if id == LAUNCHBAR_VALUE_ID {
        return Err(Stop::NonCanonical {
            offset,
            id,
            reason: "v1 id word 120 (FlightGear's launchbar decoder reads it as one word)",
        });
    }
    let second = word_at(rest, 4).ok_or_else(|| truncated(Some(id), 8))?;

    if def.kind == PropType::String {
        let len = second;
        // FlightGear clamps the length to 768 and reads that many character words, then
        // pads the count to a multiple of 4.
        let chars = (len as usize).min(MAX_TEXT_SIZE);
        let nwords = round_up4(chars);
        let needed = 8 + 4 * nwords;
        if needed > available {
            return Err(truncated(Some(id), needed));
        }
        let words: Vec<u32> = rest[8..needed]
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let canonical = len as usize <= MAX_TEXT_SIZE
            && words[..chars].iter().all(|&w| w == v1_char_word(w as u8))
            && words[chars..].iter().all(|&w| w == 0);
        let wire = if canonical {
            Wire::StringV1(words[..chars].iter().map(|&w| w as u8).collect())
        } else {
            Wire::StringV1Raw { len, words }
        };
        return Ok((Property { id, wire }, needed));
    }

    let wire = if def.reads_as_bool_block() {
        Wire::BoolBlock(second)
    } else {
        Wire::Plain(second)
    };
    Ok((Property { id, wire }, 8))
}
