//! One property item: its exact wire form ([`Wire`]), its meaning ([`Value`]) and the
//! scalar conversions FlightGear's sender and receiver apply.

use super::table::{lookup, PropDef, PropType, V2Encoding};
use super::{LAUNCHBAR_STATE_ID, LAUNCHBAR_VALUE_ID, MAX_TEXT_SIZE};
use std::borrow::Cow;

/// The exact wire form of one item, so that re-encoding a decoded list gives back the
/// received bytes. The id itself lives in [`Property::id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Wire {
    /// v2 packed word `(id << 16) | (value & 0xffff)`; 4 bytes. The value is the signed
    /// low half (a short int, a scaled float, or the launchbar state for id 120).
    Packed(i16),
    /// v1-style item: a u32 id word (high half 0) and a 4-byte value word; 8 bytes.
    /// An INT/BOOL value is the word as `i32`, a FLOAT value its IEEE-754 bits.
    Plain(u32),
    /// v1 string: id word, length word, one 4-byte word per character (the byte
    /// sign-extended, as FlightGear's `XDR_encode_int8` writes it), then zero words until
    /// the character-word count is a multiple of 4. At most [`MAX_TEXT_SIZE`] bytes.
    StringV1(Vec<u8>),
    /// A v1 string FlightGear's receiver accepts but its sender never writes: a length
    /// over 768 (read as 768 characters), character words whose upper bytes are not the
    /// sign extension of the character, or non-zero pad words. Kept word by word so the
    /// item re-encodes exactly; `words` holds `roundup4(min(len, 768))` words.
    StringV1Raw {
        /// The length word as received.
        len: u32,
        /// The character and pad words as received.
        words: Vec<u32>,
    },
    /// v2 string: `(id << 16) | len`, then exactly `len` raw bytes, no padding (the next
    /// item may be unaligned). At most [`MAX_TEXT_SIZE`] bytes.
    StringV2(Vec<u8>),
    /// Bool block: the id word (a BOOL id from 11000 to 11080; senders use 11000, 11040
    /// or 11080) and a u32 mask whose bit `i` is the bool with id `id + i`.
    BoolBlock(u32),
}

impl Wire {
    /// A short name for diagnostics.
    pub fn form_name(&self) -> &'static str {
        match self {
            Wire::Packed(_) => "packed v2 word",
            Wire::Plain(_) => "plain 8-byte item",
            Wire::StringV1(_) => "v1 string",
            Wire::StringV1Raw { .. } => "raw v1 string",
            Wire::StringV2(_) => "v2 string",
            Wire::BoolBlock(_) => "bool block",
        }
    }
}

/// What a received item means, from the declared type and v2 encoding in the table.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An INT (packed values sign-extended from 16 bits).
    Int(i32),
    /// A BOOL outside the block range (any non-zero value is true).
    Bool(bool),
    /// A FLOAT (packed values divided by their scale).
    Float(f32),
    /// A STRING's bytes (no terminator; may contain anything the sender put there).
    String(Vec<u8>),
    /// A bool block: bit `i` of `mask` is the bool with id `base + i` (see [`block_members`]).
    Bools {
        /// The block's id word.
        base: u32,
        /// The 32-bit mask; FlightGear uses bits 0-30.
        mask: u32,
    },
}

/// One property item: the id and its exact wire form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Property {
    /// The wire id (120 for a v2 launchbar state, which means id 108).
    pub id: u32,
    /// The exact wire form.
    pub wire: Wire,
}

impl Property {
    /// The table row for this id, if FlightGear knows it.
    pub fn def(&self) -> Option<&'static PropDef> {
        lookup(self.id)
    }

    /// The id whose property this item sets: 108 (`gear/launchbar/state`) for a packed
    /// 120, otherwise the id itself. FlightGear's receiver does this remapping.
    pub fn target_id(&self) -> u32 {
        if self.id == LAUNCHBAR_VALUE_ID {
            LAUNCHBAR_STATE_ID
        } else {
            self.id
        }
    }

    /// The value as FlightGear's receiver interprets it.
    ///
    /// * strings → [`Value::String`]; bool blocks → [`Value::Bools`];
    /// * id 120 → [`Value::String`] "Engaged"/"Launching"/"Completed"/"Disengaged" for
    ///   0..=3 and the empty string otherwise (it sets id 108);
    /// * INT → [`Value::Int`]; BOOL → [`Value::Bool`] (non-zero is true);
    /// * FLOAT: a plain word is the f32 bits; a packed value is divided by the id's
    ///   `TT_SHORT_FLOAT_*` scale. A packed FLOAT whose table encoding is not a scaled float
    ///   is left at 0.0 by FlightGear, and so here;
    /// * an id missing from the table (only possible for hand-built items) reads packed
    ///   and plain words as [`Value::Int`].
    pub fn value(&self) -> Value {
        let def = self.def();
        let kind = def.map(|d| d.kind);
        match &self.wire {
            Wire::StringV1(s) | Wire::StringV2(s) => Value::String(s.clone()),
            Wire::StringV1Raw { len, words } => Value::String(raw_v1_text(*len, words)),
            Wire::BoolBlock(mask) => Value::Bools {
                base: self.id,
                mask: *mask,
            },
            Wire::Packed(v) if self.id == LAUNCHBAR_VALUE_ID => {
                Value::String(launchbar_state_name(*v).unwrap_or("").as_bytes().to_vec())
            }
            Wire::Packed(v) => match (kind, def) {
                (Some(PropType::Bool), _) => Value::Bool(*v != 0),
                (Some(PropType::Float), Some(d)) => Value::Float(match d.v2.scale() {
                    Some(_) => unscale(*v, d.v2),
                    None => 0.0,
                }),
                _ => Value::Int(i32::from(*v)),
            },
            Wire::Plain(w) => match kind {
                Some(PropType::Bool) => Value::Bool(*w != 0),
                Some(PropType::Float) => Value::Float(f32::from_bits(*w)),
                _ => Value::Int(*w as i32),
            },
        }
    }

    /// The string bytes, borrowed when the wire form holds them as-is; `None` for a
    /// non-string item. (A launchbar 120 is not a string on the wire; use [`Property::value`].)
    pub fn text(&self) -> Option<Cow<'_, [u8]>> {
        match &self.wire {
            Wire::StringV1(s) | Wire::StringV2(s) => Some(Cow::Borrowed(s)),
            Wire::StringV1Raw { len, words } => Some(Cow::Owned(raw_v1_text(*len, words))),
            _ => None,
        }
    }

    /// Bytes this item takes on the wire.
    pub fn encoded_len(&self) -> usize {
        match &self.wire {
            Wire::Packed(_) => 4,
            Wire::Plain(_) | Wire::BoolBlock(_) => 8,
            Wire::StringV1(s) => 8 + 4 * round_up4(s.len()),
            Wire::StringV1Raw { words, .. } => 8 + 4 * words.len(),
            Wire::StringV2(s) => 4 + s.len(),
        }
    }

    /// Appends the item's wire bytes.
    ///
    /// Encoding never fails: a packed form writes the low 16 bits of the id in the high
    /// half and a v2 string the low 16 bits of its length. Use
    /// [`super::PropertyList::push`] to check that an item decodes back to itself.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, w: u32| out.extend_from_slice(&w.to_be_bytes());
        match &self.wire {
            Wire::Packed(v) => put(out, packed_word(self.id, *v)),
            Wire::Plain(w) | Wire::BoolBlock(w) => {
                put(out, self.id);
                put(out, *w);
            }
            Wire::StringV1(s) => {
                put(out, self.id);
                put(out, s.len() as u32);
                for &b in s {
                    put(out, v1_char_word(b));
                }
                for _ in s.len()..round_up4(s.len()) {
                    put(out, 0);
                }
            }
            Wire::StringV1Raw { len, words } => {
                put(out, self.id);
                put(out, *len);
                for &w in words {
                    put(out, w);
                }
            }
            Wire::StringV2(s) => {
                put(out, packed_word(self.id, s.len() as u16 as i16));
                out.extend_from_slice(s);
            }
        }
    }
}

/// `(id << 16) | (value & 0xffff)`, FlightGear's `XDR_encode_shortints32` without the clamp.
pub(crate) fn packed_word(id: u32, v: i16) -> u32 {
    ((id & 0xffff) << 16) | u32::from(v as u16)
}

/// The word FlightGear's `XDR_encode_int8` writes for one v1 string character: the byte
/// as a signed char, sign-extended to 32 bits (so 0x80..=0xff become 0xffffff80..).
pub fn v1_char_word(b: u8) -> u32 {
    i32::from(b as i8) as u32
}

/// `n` rounded up to a multiple of 4.
pub(crate) fn round_up4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// The characters FlightGear's receiver takes from a raw v1 string: the low byte of each of
/// the first `min(len, 768)` words.
fn raw_v1_text(len: u32, words: &[u32]) -> Vec<u8> {
    let n = (len as usize).min(MAX_TEXT_SIZE);
    words.iter().take(n).map(|&w| w as u8).collect()
}

/// FlightGear's `get_scaled_short`: multiply by the encoding's scale (in single
/// precision, as FlightGear stores the product in a `float`), clamp to ±32767, truncate
/// toward zero. NaN gives 0. Encodings without a scale use factor 1.
pub fn scaled_short(v: f32, enc: V2Encoding) -> i16 {
    let scale = enc.scale().unwrap_or(1.0);
    let nv = (f64::from(v) * scale) as f32;
    if nv >= 32767.0 {
        32767
    } else if nv <= -32767.0 {
        -32767
    } else {
        // In range (or NaN, which `as` maps to 0 like x86's cvttss2si truncated to 16 bits).
        nv as i16
    }
}

/// What FlightGear's receiver makes of a packed scaled float: `raw / scale` in double
/// precision, stored as f32. Encodings without a scale divide by 1.
pub fn unscale(raw: i16, enc: V2Encoding) -> f32 {
    (f64::from(raw) / enc.scale().unwrap_or(1.0)) as f32
}

/// `clamp16` of `XDR_encode_shortints32`: limits an int to ±32767 for a packed word.
pub fn clamp16(v: i32) -> i16 {
    v.clamp(-32767, 32767) as i16
}

/// The launchbar states FlightGear's custom encoder knows, by their packed value.
pub const LAUNCHBAR_STATES: [&str; 4] = ["Engaged", "Launching", "Completed", "Disengaged"];

/// The id-108 string a packed id-120 value stands for (0..=3), or `None`.
pub fn launchbar_state_name(v: i16) -> Option<&'static str> {
    usize::try_from(v)
        .ok()
        .and_then(|i| LAUNCHBAR_STATES.get(i))
        .copied()
}

/// The packed id-120 value for a launchbar state string, or `None` for any other string
/// (FlightGear's v2 encoder then sends nothing for id 108).
pub fn launchbar_state_value(state: &[u8]) -> Option<i16> {
    LAUNCHBAR_STATES
        .iter()
        .position(|s| s.as_bytes() == state)
        .and_then(|i| i16::try_from(i).ok())
}

/// The bools a block sets, as FlightGear's receiver applies them: for bits 0-30, every
/// `base + bit` id that is in the table, with its bit of `mask`.
pub fn block_members(base: u32, mask: u32) -> impl Iterator<Item = (u32, bool)> {
    (0..31u32).filter_map(move |bit| {
        let id = base.checked_add(bit)?;
        lookup(id).map(|_| (id, mask & (1 << bit) != 0))
    })
}
