//! The property list after the 200-byte position body: protocol v1 and v2 ("MP2017").
//!
//! Layout follows the notes, section 1.7, which describe what FlightGear 2020-2023 sends
//! and how its receiver walks the list:
//!
//! * An id word with a non-zero high half is a packed v2 item: id = high half, value =
//!   signed low half; for a STRING id the low half is the length of the raw bytes that
//!   follow, unpadded ([`Wire::Packed`], [`Wire::StringV2`]).
//! * Otherwise the word is a v1 id followed by a value word ([`Wire::Plain`]), or for a
//!   STRING a length word plus one word per character plus pad words ([`Wire::StringV1`]),
//!   or for a BOOL id from 11000 to 11080 a 31-bool mask ([`Wire::BoolBlock`]).
//! * An unknown id ends the walk: its length cannot be known.
//!
//! Decoding needs no protocol flag. [`PropertyList::decode`] never fails: it records why
//! it stopped ([`Stop`]) and keeps the unread bytes, so [`PropertyList::encode`] of a
//! decoded list always reproduces its input byte for byte. That lets a relay inspect
//! (e.g. read chat, id 10002) and still forward exactly what the sender wrote.
//!
//! Building lists goes through [`PropertyList::push`] and the `push_*` builders, which
//! mirror FlightGear's sender for protocol v1 or v2 and only accept items that decode back
//! to themselves.
//!
//! ```
//! use fgmp::props::{PropertyList, Protocol, Stop, Value, CHAT_ID};
//!
//! let mut list = PropertyList::new();
//! list.push_int(10, 2, Protocol::V2)?
//!     .push_float(100, 0.5, Protocol::V2)? // TT_SHORT_FLOAT_NORM: one word
//!     .push_string(CHAT_ID, b"Hello", Protocol::V2)?;
//! let bytes = list.to_bytes();
//! assert_eq!(&bytes[..4], &[0x00, 0x0a, 0x00, 0x02]);
//! assert_eq!(bytes.len(), 4 + 4 + 4 + 5);
//!
//! let back = PropertyList::decode(&bytes);
//! assert_eq!(back, list);
//! assert_eq!(back.text(CHAT_ID).as_deref(), Some(&b"Hello"[..]));
//! assert_eq!(back.value(10), Some(Value::Int(2)));
//!
//! // Garbage after the list: the walk stops, and the bytes are kept.
//! let mut noisy = bytes.clone();
//! noisy.extend_from_slice(&[0, 0, 0, 0, 0xde, 0xad]);
//! let back = PropertyList::decode(&noisy);
//! assert_eq!(back.stop, Some(Stop::UnknownId { offset: 17, id: 0 }));
//! assert_eq!(back.to_bytes(), noisy);
//! # Ok::<(), fgmp::props::PropError>(())
//! ```

mod decode;
mod list;
mod table;
mod value;

pub use decode::Stop;
pub use list::{PropertyList, Protocol};
pub use table::{lookup, table, PropDef, PropType, V2Encoding, TABLE_LEN};
pub use value::{
    block_members, clamp16, launchbar_state_name, launchbar_state_value, scaled_short, unscale,
    v1_char_word, Property, Value, Wire, LAUNCHBAR_STATES,
};

/// FlightGear's `MAX_TEXT_SIZE`: the receiver accepts strings of at most 768 bytes
/// (clamping a longer v1 length, stopping at a longer v2 length).
pub const MAX_TEXT_SIZE: usize = 768;
/// The sender truncates strings to `MAX_TEXT_SIZE - 1` = 767 bytes.
pub const MAX_SEND_TEXT: usize = MAX_TEXT_SIZE - 1;
/// Id 10, `sim/multiplay/protocol-version`: the first item of a v2 list, absent in v1.
pub const PROTOCOL_VERSION_ID: u32 = 10;
/// Id 108, `gear/launchbar/state` (STRING); v2 sends it as a packed id 120.
pub const LAUNCHBAR_STATE_ID: u32 = 108;
/// Id 120, `gear/launchbar/state-value`: the packed launchbar state, received into id 108.
pub const LAUNCHBAR_VALUE_ID: u32 = 120;
/// Id 10002, `sim/multiplay/chat`: chat travels in this property.
pub const CHAT_ID: u32 = 10002;
/// Id 13000, `sim/model/fallback-model-index`: the receiver picks a fallback model by it.
pub const FALLBACK_MODEL_ID: u32 = 13000;
/// The table `version` of id 10 (`V2_PROP_ID_PROTOCOL`): left out of v1 packets.
pub const V2_PROP_ID_PROTOCOL: u32 = 0x1_0001;
/// Bool block bases a sender uses (`BOOLARRAY_BASE_1/2/3`).
pub const BOOL_BLOCK_BASES: [u32; 3] = [11000, 11040, 11080];
/// Id distance between bool blocks (`BOOLARRAY_BLOCKSIZE`).
pub const BOOL_BLOCK_SIZE: u32 = 40;
/// Bools per block (bits 0-30 of the mask).
pub const BOOL_BLOCK_BITS: u32 = 31;
/// First id the receiver reads as a bool block (`BOOLARRAY_START_ID`).
pub const BOOL_BLOCK_RECEIVE_FIRST: u32 = 11000;
/// Last id the receiver reads as a bool block (`BOOLARRAY_END_ID`, inclusive).
pub const BOOL_BLOCK_RECEIVE_LAST: u32 = 11080;

/// Why a property item cannot be built (or, for [`PropError::Stopped`], why a strict
/// decode failed).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PropError {
    /// The id is not in FlightGear's table; a receiver would stop at it.
    #[error("unknown property id {0}")]
    UnknownId(u32),
    /// A builder was given a value of another type than the id declares.
    #[error("property {id} is declared {declared:?}, not {given:?}")]
    WrongKind {
        /// The id.
        id: u32,
        /// Its declared type.
        declared: PropType,
        /// The type of the value given.
        given: PropType,
    },
    /// The wire form would not decode back to the same item.
    #[error("property {id}: a {form} {reason}")]
    BadWire {
        /// The id.
        id: u32,
        /// The wire form ([`Wire::form_name`]).
        form: &'static str,
        /// Why it does not fit.
        reason: &'static str,
    },
    /// A string longer than the receiver accepts.
    #[error("property {id}: string of {len} bytes, at most {max}")]
    StringTooLong {
        /// The id.
        id: u32,
        /// The string length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The id is `TT_NOSEND`: a v2 sender never transmits it.
    #[error("property {0} is never sent in protocol v2 (TT_NOSEND)")]
    NotSent(u32),
    /// [`PropertyList::decode_strict`] met a [`Stop`].
    #[error("property list: {0}")]
    Stopped(Stop),
}
