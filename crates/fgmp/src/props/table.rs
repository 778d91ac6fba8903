//! The property table: which ids exist, their declared type and their v2 encoding.
//!
//! Generated at build time from `data/fg_properties.tsv` (FlightGear's `sIdPropertyList`,
//! 421 rows). The receiver needs it to know how long an item is, so an id missing from
//! the table ends the parse, exactly as in FlightGear.

use super::{BOOL_BLOCK_RECEIVE_FIRST, BOOL_BLOCK_RECEIVE_LAST};

/// The property type FlightGear declares for an id (`simgear::props::Type`).
///
/// The declared type, not the wire form, decides what a received value means: a packed
/// 16-bit value of a FLOAT id is scaled, of an INT id it is a plain integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PropType {
    /// `BOOL`: 0 / non-zero; ids 11000-11080 are read as 31-bit blocks.
    Bool,
    /// `INT`: a signed 32-bit integer.
    Int,
    /// `FLOAT`: IEEE-754 binary32.
    Float,
    /// `STRING`: bytes, v1 one char per word, v2 raw.
    String,
}

/// FlightGear's `TransmissionType`: how protocol v2 puts the value on the wire.
///
/// Protocol v1 ignores it except for [`V2Encoding::BoolArray`], which is always packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum V2Encoding {
    /// `TT_ASIS` (blank in the TSV): as declared, an 8-byte item or a string.
    AsIs,
    /// `TT_BOOL`: an explicit plain bool item (declared but unused by the table).
    Bool,
    /// `TT_INT`: an explicit plain 8-byte int item (id 13001).
    Int,
    /// `TT_FLOAT`: an explicit plain float item (declared but unused).
    Float,
    /// `TT_STRING`: an explicit string (declared but unused).
    String,
    /// `TT_SHORTINT`: one word `(id << 16) | clamp16(int)`.
    ShortInt,
    /// `TT_SHORT_FLOAT_NORM`: one word, value × 32767 (range ±1).
    ShortFloatNorm,
    /// `TT_SHORT_FLOAT_1`: one word, value × 10 (range ±3276.7).
    ShortFloat1,
    /// `TT_SHORT_FLOAT_2`: one word, value × 100 (range ±327.67); no id uses it.
    ShortFloat2,
    /// `TT_SHORT_FLOAT_3`: one word, value × 1000 (range ±32.767).
    ShortFloat3,
    /// `TT_SHORT_FLOAT_4`: one word, value × 10000 (range ±3.2767).
    ShortFloat4,
    /// `TT_BOOLARRAY`: member of a 31-bool block sent as base id + bitmask (v1 too).
    BoolArray,
    /// `TT_CHAR`: declared by FlightGear, used by no property.
    Char,
    /// `TT_NOSEND`: never sent from its own slot when the protocol is v2.
    NoSend,
}

impl V2Encoding {
    /// The factor a `TT_SHORT_FLOAT_*` encoding multiplies by before truncating to 16 bits.
    ///
    /// `None` for every encoding that is not a scaled float.
    pub fn scale(self) -> Option<f64> {
        match self {
            V2Encoding::ShortFloatNorm => Some(32767.0),
            V2Encoding::ShortFloat1 => Some(10.0),
            V2Encoding::ShortFloat2 => Some(100.0),
            V2Encoding::ShortFloat3 => Some(1000.0),
            V2Encoding::ShortFloat4 => Some(10000.0),
            _ => None,
        }
    }

    /// Whether a v2 sender packs this encoding into a single `(id << 16) | value` word.
    pub fn is_packed(self) -> bool {
        self == V2Encoding::ShortInt || self.scale().is_some()
    }
}

/// One row of the property table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PropDef {
    /// The wire id.
    pub id: u32,
    /// The declared type; it gives a received value its meaning.
    pub kind: PropType,
    /// The property path relative to the aircraft root (e.g. `sim/multiplay/chat`).
    pub name: &'static str,
    /// How protocol v2 transmits it.
    pub v2: V2Encoding,
    /// FlightGear's `version` field: 1 (`V1_1_PROP_ID`), 2 (`V1_1_2_PROP_ID`) or
    /// 0x10001 (`V2_PROP_ID_PROTOCOL`, id 10 only). The low 16 bits are the partition.
    pub min_protocol: u32,
}

impl PropDef {
    /// The send partition (low 16 bits of `min_protocol`): v2 writes partition 1, then 2.
    pub fn partition(&self) -> u32 {
        self.min_protocol & 0xffff
    }

    /// Whether a v1 sender includes it: everything except the protocol-version id 10.
    pub fn sent_in_v1(&self) -> bool {
        self.min_protocol != super::V2_PROP_ID_PROTOCOL
    }

    /// Whether a v1-form item with this id is a bool block (id word + 32-bit mask), as
    /// FlightGear's receiver reads every BOOL id from 11000 to 11080 inclusive.
    pub fn reads_as_bool_block(&self) -> bool {
        self.kind == PropType::Bool
            && (BOOL_BLOCK_RECEIVE_FIRST..=BOOL_BLOCK_RECEIVE_LAST).contains(&self.id)
    }
}

include!(concat!(env!("OUT_DIR"), "/prop_table.rs"));

/// The whole table, sorted by id.
pub fn table() -> &'static [PropDef] {
    &PROPERTIES
}

/// The table row for `id` (binary search), or `None` for an id FlightGear does not know.
pub fn lookup(id: u32) -> Option<&'static PropDef> {
    PROPERTIES
        .binary_search_by_key(&id, |d| d.id)
        .ok()
        .and_then(|i| PROPERTIES.get(i))
}
