//! [`PropertyList`]: decode, encode and build a whole property area.

use super::decode::{decode_item, Stop};
use super::table::{lookup, PropDef, PropType, V2Encoding};
use super::value::{
    clamp16, launchbar_state_value, round_up4, scaled_short, v1_char_word, Property, Value, Wire,
};
use super::{
    PropError, BOOL_BLOCK_RECEIVE_FIRST, BOOL_BLOCK_SIZE, LAUNCHBAR_STATE_ID, LAUNCHBAR_VALUE_ID,
    MAX_SEND_TEXT, MAX_TEXT_SIZE,
};
use std::borrow::Cow;

/// Which property encoding a builder mirrors. Only building needs it: a receiver tells
/// the forms apart by the id word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Protocol 1: 8-byte items, 4 bytes per string character.
    V1,
    /// Protocol 2 ("MP2017"): packed short values, raw strings.
    V2,
}

/// The property area of a position message, as items plus whatever could not be parsed.
///
/// Invariant kept by [`PropertyList::decode`]: `encode` reproduces the decoded bytes
/// exactly, even for garbage, because the unparsed rest is kept in `trailing`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PropertyList {
    items: Vec<Property>,
    /// Why decoding stopped early; `None` when every byte was parsed (and for built lists).
    pub stop: Option<Stop>,
    /// The bytes from the stopping item on, written back verbatim by `encode`.
    pub trailing: Vec<u8>,
}

/// A value as FlightGear's sender holds it before encoding.
///
/// FlightGear keeps it in a C union, so a TransmitAs that disagrees with the declared
/// type reinterprets the bits (e.g. id 13002, an INT sent as `TT_SHORT_FLOAT_NORM`).
#[derive(Clone, Copy)]
enum SendValue<'a> {
    Int(i32),
    Float(f32),
    Str(&'a [u8]),
}

impl SendValue<'_> {
    fn as_int(self) -> i32 {
        match self {
            SendValue::Int(v) => v,
            SendValue::Float(f) => f.to_bits() as i32,
            SendValue::Str(_) => 0,
        }
    }

    fn as_float(self) -> f32 {
        match self {
            SendValue::Int(v) => f32::from_bits(v as u32),
            SendValue::Float(f) => f,
            SendValue::Str(_) => 0.0,
        }
    }
}

/// What FlightGear's sender transmits of a string: up to the first NUL (it uses
/// `strlen`), at most 767 bytes.
fn sender_text(s: &[u8]) -> &[u8] {
    let n = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    &s[..n.min(MAX_SEND_TEXT)]
}

impl PropertyList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Walks the property bytes as FlightGear's receiver does (see the module docs).
    ///
    /// Never fails and never panics: it stops at the first unknown id or malformed or
    /// truncated item, records why in [`PropertyList::stop`] and keeps the rest in
    /// [`PropertyList::trailing`].
    pub fn decode(bytes: &[u8]) -> PropertyList {
        let mut list = PropertyList::default();
        let mut offset = 0;
        while offset < bytes.len() {
            match decode_item(bytes, offset) {
                Ok((item, len)) => {
                    list.items.push(item);
                    offset += len;
                }
                Err(stop) => {
                    list.trailing = bytes.get(offset..).unwrap_or(&[]).to_vec();
                    list.stop = Some(stop);
                    break;
                }
            }
        }
        list
    }

    /// Like [`PropertyList::decode`], but an early stop is an error.
    pub fn decode_strict(bytes: &[u8]) -> Result<PropertyList, PropError> {
        let list = Self::decode(bytes);
        match list.stop {
            Some(stop) => Err(PropError::Stopped(stop)),
            None => Ok(list),
        }
    }

    /// Builds a list from items, checking each as [`PropertyList::push`] does.
    pub fn from_items(items: impl IntoIterator<Item = Property>) -> Result<Self, PropError> {
        let mut list = Self::new();
        for p in items {
            list.push(p)?;
        }
        Ok(list)
    }

    /// Appends the items' wire bytes, then `trailing`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        for p in &self.items {
            p.encode(out);
        }
        out.extend_from_slice(&self.trailing);
    }

    /// The encoded bytes in a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Bytes [`PropertyList::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        self.items.iter().map(Property::encoded_len).sum::<usize>() + self.trailing.len()
    }

    /// The parsed (or pushed) items in wire order.
    pub fn items(&self) -> &[Property] {
        &self.items
    }

    /// The items, consuming the list (trailing bytes are dropped).
    pub fn into_items(self) -> Vec<Property> {
        self.items
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no items (there may still be trailing bytes).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The first item with this wire id (a v2 launchbar state is id 120, not 108).
    pub fn get(&self, id: u32) -> Option<&Property> {
        self.items.iter().find(|p| p.id == id)
    }

    /// The meaning of the first item with this wire id.
    pub fn value(&self, id: u32) -> Option<Value> {
        self.get(id).map(Property::value)
    }

    /// The bytes of the first string item with this id (e.g. [`super::CHAT_ID`]).
    pub fn text(&self, id: u32) -> Option<Cow<'_, [u8]>> {
        self.get(id).and_then(Property::text)
    }

    /// Keeps only the items `keep` accepts; each remaining item stays valid on its own.
    pub fn retain(&mut self, keep: impl FnMut(&Property) -> bool) {
        self.items.retain(keep);
    }

    /// Appends an item after checking that it decodes back to itself: the id is in the
    /// table and the wire form is one a receiver reads as this exact item (e.g. no
    /// [`Wire::Plain`] for a STRING id, strings of at most 768 bytes, [`Wire::BoolBlock`]
    /// only for BOOL ids 11000-11080, [`Wire::StringV1Raw`] only when it is not a plain
    /// [`Wire::StringV1`]).
    pub fn push(&mut self, p: Property) -> Result<&mut Self, PropError> {
        check(&p)?;
        self.items.push(p);
        Ok(self)
    }

    /// Appends a raw packed v2 word `(id << 16) | value` (checked like [`PropertyList::push`]).
    pub fn push_packed(&mut self, id: u32, value: i16) -> Result<&mut Self, PropError> {
        self.push(Property {
            id,
            wire: Wire::Packed(value),
        })
    }

    /// Appends a bool block: `base` (a BOOL id from 11000 to 11080; senders use 11000,
    /// 11040 or 11080) and its mask.
    pub fn push_bools(&mut self, base: u32, mask: u32) -> Result<&mut Self, PropError> {
        self.push(Property {
            id: base,
            wire: Wire::BoolBlock(mask),
        })
    }

    /// Appends an INT as FlightGear's sender encodes it for `proto`: v1 a plain item; v2
    /// by the id's TransmitAs (`TT_SHORTINT` packs the value clamped to ±32767, a scaled
    /// float encoding scales the int's bits read as a float, as FlightGear's union does).
    pub fn push_int(&mut self, id: u32, v: i32, proto: Protocol) -> Result<&mut Self, PropError> {
        let def = def_of_kind(id, PropType::Int)?;
        self.push_sent(def, SendValue::Int(v), proto)
    }

    /// Appends a BOOL as FlightGear's sender encodes it: members of the bool arrays
    /// (`TT_BOOLARRAY`, v1 too) set or clear their bit in the block item for their base,
    /// added if missing; other BOOLs are a plain 0/1 item, or packed in v2 when `TT_SHORTINT`.
    pub fn push_bool(&mut self, id: u32, v: bool, proto: Protocol) -> Result<&mut Self, PropError> {
        let def = def_of_kind(id, PropType::Bool)?;
        if def.v2 != V2Encoding::BoolArray {
            return self.push_sent(def, SendValue::Int(i32::from(v)), proto);
        }
        let base = id
            .checked_sub(BOOL_BLOCK_RECEIVE_FIRST)
            .map(|d| BOOL_BLOCK_RECEIVE_FIRST + d / BOOL_BLOCK_SIZE * BOOL_BLOCK_SIZE)
            .ok_or(PropError::BadWire {
                id,
                form: "bool block",
                reason: "is only for ids from 11000 on",
            })?;
        let bit = 1u32.checked_shl(id - base).ok_or(PropError::BadWire {
            id,
            form: "bool block",
            reason: "has only 32 bits",
        })?;
        if let Some(Wire::BoolBlock(mask)) = self
            .items
            .iter_mut()
            .find(|p| p.id == base && matches!(p.wire, Wire::BoolBlock(_)))
            .map(|p| &mut p.wire)
        {
            if v {
                *mask |= bit;
            } else {
                *mask &= !bit;
            }
            return Ok(self);
        }
        self.push_bools(base, if v { bit } else { 0 })
    }

    /// Appends a FLOAT as FlightGear's sender encodes it: v1 a plain IEEE-754 item; v2 by
    /// the id's TransmitAs (`TT_SHORT_FLOAT_*` packs [`scaled_short`]).
    pub fn push_float(&mut self, id: u32, v: f32, proto: Protocol) -> Result<&mut Self, PropError> {
        let def = def_of_kind(id, PropType::Float)?;
        self.push_sent(def, SendValue::Float(v), proto)
    }

    /// Appends a STRING as FlightGear's sender encodes it: cut at the first NUL and at 767
    /// bytes; v1 one word per character plus padding; v2 raw bytes, except that an empty
    /// string goes in the 8-byte v1 form `id, 0` (as in the captures) and id 108 goes as
    /// packed id 120 for the four launchbar states and is not sent at all otherwise.
    pub fn push_string(
        &mut self,
        id: u32,
        s: &[u8],
        proto: Protocol,
    ) -> Result<&mut Self, PropError> {
        let def = def_of_kind(id, PropType::String)?;
        self.push_sent(def, SendValue::Str(s), proto)
    }

    /// The sender's switch on the transmit type (FG23 `SendMyPosition`).
    fn push_sent(
        &mut self,
        def: &'static PropDef,
        value: SendValue<'_>,
        proto: Protocol,
    ) -> Result<&mut Self, PropError> {
        let id = def.id;
        if proto == Protocol::V2 {
            if id == LAUNCHBAR_STATE_ID {
                // encode_launchbar_state_for_transmission: packed 120 or nothing.
                let SendValue::Str(s) = value else {
                    return Ok(self);
                };
                return match launchbar_state_value(sender_text(s)) {
                    Some(v) => self.push_packed(LAUNCHBAR_VALUE_ID, v),
                    None => Ok(self),
                };
            }
            let packed = match def.v2 {
                V2Encoding::NoSend => return Err(PropError::NotSent(id)),
                V2Encoding::ShortInt => Some(clamp16(value.as_int())),
                enc if enc.scale().is_some() => Some(scaled_short(value.as_float(), enc)),
                _ => None,
            };
            if let Some(v) = packed {
                return self.push_packed(id, v);
            }
        }
        // v2 honours an explicit plain TransmitAs (`TT_INT` for 13001); `TT_CHAR` falls
        // into the sender's default case, which writes the float member.
        let as_kind = match (proto, def.v2) {
            (Protocol::V2, V2Encoding::Int | V2Encoding::Bool) => PropType::Int,
            (Protocol::V2, V2Encoding::Float | V2Encoding::Char) => PropType::Float,
            _ => def.kind,
        };
        let wire = match (as_kind, value) {
            (PropType::String, SendValue::Str(s)) => {
                let text = sender_text(s).to_vec();
                if proto == Protocol::V2 && !text.is_empty() {
                    Wire::StringV2(text)
                } else {
                    Wire::StringV1(text)
                }
            }
            (PropType::Float, v) => Wire::Plain(v.as_float().to_bits()),
            (_, v) => Wire::Plain(v.as_int() as u32),
        };
        self.push(Property { id, wire })
    }
}

/// The table row for `id`, which must declare `kind`.
fn def_of_kind(id: u32, kind: PropType) -> Result<&'static PropDef, PropError> {
    let def = lookup(id).ok_or(PropError::UnknownId(id))?;
    if def.kind != kind {
        return Err(PropError::WrongKind {
            id,
            declared: def.kind,
            given: kind,
        });
    }
    Ok(def)
}

/// Checks that `p` decodes back to itself (see [`PropertyList::push`]).
fn check(p: &Property) -> Result<(), PropError> {
    let id = p.id;
    let def = lookup(id).ok_or(PropError::UnknownId(id))?;
    let form = p.wire.form_name();
    let bad = |reason| Err(PropError::BadWire { id, form, reason });
    let is_string = def.kind == PropType::String;
    let block = def.reads_as_bool_block();
    match &p.wire {
        Wire::Packed(_) | Wire::Plain(_) if is_string => {
            bad("is read as a string length for a STRING id")
        }
        Wire::Packed(_) | Wire::Plain(_) if block => {
            bad("is read as a bool block for BOOL ids 11000-11080")
        }
        Wire::Plain(_) if id == LAUNCHBAR_VALUE_ID => {
            bad("is read as a single word for id 120 (launchbar)")
        }
        Wire::Packed(_) | Wire::Plain(_) => Ok(()),
        Wire::BoolBlock(_) if block => Ok(()),
        Wire::BoolBlock(_) => bad("needs a BOOL id from 11000 to 11080"),
        Wire::StringV1(_) | Wire::StringV1Raw { .. } | Wire::StringV2(_) if !is_string => {
            bad("needs a STRING id")
        }
        Wire::StringV1(s) | Wire::StringV2(s) => {
            if s.len() > MAX_TEXT_SIZE {
                Err(PropError::StringTooLong {
                    id,
                    len: s.len(),
                    max: MAX_TEXT_SIZE,
                })
            } else {
                Ok(())
            }
        }
        Wire::StringV1Raw { len, words } => {
            let chars = (*len as usize).min(MAX_TEXT_SIZE);
            if words.len() != round_up4(chars) {
                return bad("needs roundup4(min(len, 768)) words");
            }
            let canonical = *len as usize <= MAX_TEXT_SIZE
                && words[..chars].iter().all(|&w| w == v1_char_word(w as u8))
                && words[chars..].iter().all(|&w| w == 0);
            if canonical {
                bad("is an ordinary v1 string; use Wire::StringV1")
            } else {
                Ok(())
            }
        }
    }
}
