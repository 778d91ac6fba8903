//! Split packets (`FE FF FF FF`): decoding, splitting and reassembly.
//!
//! A message too long for one datagram is sent as fragments, each starting with the
//! split marker `FE FF FF FF` (i32 -2) and a sequence number shared by all fragments
//! of one message. Two header forms exist (engine `net_ws.c`):
//!
//! | form | header | id field | limit |
//! |---|---|---|---|
//! | [`SplitForm::GoldSrc`] (`SPLITPACKETGS`) | `FE FF FF FF` + i32 seq + u8 = 9 bytes | low nibble = total, high nibble = index | [`GOLDSRC_MAX_FRAGMENTS`] (5) fragments, datagrams of [`GOLDSRC_SPLIT_SIZE`] (1400) bytes |
//! | [`SplitForm::Xash`] (`SPLITPACKET`) | `FE FF FF FF` + i32 seq + u16 = 10 bytes | low byte = total, high byte = index | [`XASH_MAX_FRAGMENTS`] (131) fragments |
//!
//! GoldSrc servers use the 9-byte form for query replies that do not fit (usually
//! A2S_RULES); the concatenated payloads form a normal `FF FF FF FF` message, so the
//! first fragment's payload starts with `FF FF FF FF`. This nibble layout is also
//! the pre-Orange-Box Source multi-packet layout. The 10-byte form is what a Xash
//! server's netchan uses towards its connected client; byte for byte it is the old
//! Source layout "u8 total, u8 number" without the later u16 size field. Xash
//! servers never split connectionless replies.
//!
//! # Which form a fragment uses
//!
//! The header does not say. [`Fragment::decode_as`] takes the caller's word, which
//! is always right when the caller knows what it expects (the engine decides by the
//! protocol of the server it talks to). [`Fragment::decode`] guesses, in this order:
//!
//! 1. a GoldSrc *first* fragment: high nibble of byte 8 is 0, low nibble is a valid
//!    total, and the payload (byte 9) starts with `FF FF FF FF`;
//! 2. a Xash *first* fragment: byte 9 (index) is 0, byte 8 (total) is non-zero, and
//!    the payload (byte 10) starts with `FF FF FF FF`;
//!    (1 and 2 exclude each other: byte 9 is `FF` in one and `00` in the other.)
//! 3. otherwise GoldSrc if byte 8 is a valid GoldSrc id (total 1..=5, index < total),
//!    because split connectionless traffic comes from GoldSrc servers;
//! 4. otherwise Xash if bytes 8-9 are a valid Xash id;
//! 5. otherwise [`Error::InvalidField`].
//!
//! Netchan fragments (whose payload does not start with `FF×4`) can look like valid
//! GoldSrc ids, so code reading a Xash netchan must use `decode_as(.., Xash)`.
//!
//! # Reassembly
//!
//! [`Reassembler`] is a pure state machine: it never reads a clock, the caller passes
//! `now`. Its memory is bounded by [`ReassemblyLimits`]. Unlike the engine, which
//! copies fragment `i` to offset `i × (1400 − header)`, it concatenates payloads in
//! index order, so fragments of uneven size still reassemble correctly.

use std::time::{Duration, Instant};

use crate::{Error, OOB};
use wire::Cursor;

/// The split marker: i32 -2, little-endian.
pub const SPLIT_HEADER: [u8; 4] = [0xfe, 0xff, 0xff, 0xff];
/// Header length of the GoldSrc form.
pub const GOLDSRC_HEADER_LEN: usize = 9;
/// Header length of the Xash netchan form.
pub const XASH_HEADER_LEN: usize = 10;
/// Most fragments of one GoldSrc message (engine `NET_MAX_GOLDSRC_FRAGMENTS`).
pub const GOLDSRC_MAX_FRAGMENTS: u8 = 5;
/// Datagram size (header included) GoldSrc fragments use; the engine's GoldSrc
/// reassembly places fragment `i` at `i × (1400 − 9)`, so every fragment but the last
/// must be exactly this long.
pub const GOLDSRC_SPLIT_SIZE: usize = 1400;
/// Most fragments of one Xash netchan message (engine `NET_MAX_FRAGMENTS` =
/// 65535 / (508 − 10)).
pub const XASH_MAX_FRAGMENTS: u8 = 131;

/// Which of the two split headers a fragment uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplitForm {
    /// 9-byte header, nibble-packed id (GoldSrc query replies).
    GoldSrc,
    /// 10-byte header, u16 id (Xash netchan).
    Xash,
}

impl SplitForm {
    /// Bytes before the payload.
    pub fn header_len(self) -> usize {
        match self {
            SplitForm::GoldSrc => GOLDSRC_HEADER_LEN,
            SplitForm::Xash => XASH_HEADER_LEN,
        }
    }

    /// The most fragments a message may have in this form.
    pub fn max_fragments(self) -> u8 {
        match self {
            SplitForm::GoldSrc => GOLDSRC_MAX_FRAGMENTS,
            SplitForm::Xash => XASH_MAX_FRAGMENTS,
        }
    }

    /// Checks `index`/`total` against this form's rules.
    fn check(self, index: u8, total: u8) -> Result<(), Error> {
        if total == 0 {
            return Err(Error::BadLength("split total is zero"));
        }
        if total > self.max_fragments() {
            return Err(Error::BadLength("split total above the limit"));
        }
        if index >= total {
            return Err(Error::InvalidField("split index not below total"));
        }
        Ok(())
    }
}

/// One split-packet datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// Header form.
    pub form: SplitForm,
    /// Sequence number shared by all fragments of one message.
    pub sequence: i32,
    /// This fragment's position, from 0.
    pub index: u8,
    /// Number of fragments in the message (1..=form limit).
    pub total: u8,
    /// This fragment's share of the message.
    pub payload: Vec<u8>,
}

impl Fragment {
    /// The split marker every fragment starts with.
    pub const HEADER: &'static [u8] = &SPLIT_HEADER;

    /// Decodes a fragment, guessing the header form (rules in the module docs).
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let form = Self::detect(packet)?;
        Self::decode_as(packet, form)
    }

    /// Decodes a fragment in the form the caller expects. Fails if the id is
    /// impossible for that form (total 0 or over the limit, index ≥ total).
    pub fn decode_as(packet: &[u8], form: SplitForm) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        c.expect(Self::HEADER)?;
        let sequence = c.i32_le()?;
        let (index, total) = match form {
            SplitForm::GoldSrc => {
                let id = c.u8()?;
                (id >> 4, id & 0x0f)
            }
            SplitForm::Xash => {
                let [total, index] = c.array::<2>()?;
                (index, total)
            }
        };
        form.check(index, total)?;
        Ok(Fragment {
            form,
            sequence,
            index,
            total,
            payload: c.take_rest().to_vec(),
        })
    }

    /// Guesses the header form of a split packet (rules in the module docs).
    pub fn detect(packet: &[u8]) -> Result<SplitForm, Error> {
        let mut c = Cursor::new(packet);
        c.expect(Self::HEADER)?;
        let _sequence = c.i32_le()?;
        let b8 = c.u8()?;
        let rest = c.rest();
        let gs_ok = SplitForm::GoldSrc.check(b8 >> 4, b8 & 0x0f).is_ok();
        let xash_ok = rest
            .first()
            .is_some_and(|&b9| SplitForm::Xash.check(b9, b8).is_ok());
        if gs_ok && b8 >> 4 == 0 && rest.starts_with(&OOB) {
            return Ok(SplitForm::GoldSrc);
        }
        if xash_ok && rest.first() == Some(&0) && rest.get(1..).is_some_and(|r| r.starts_with(&OOB))
        {
            return Ok(SplitForm::Xash);
        }
        if gs_ok {
            return Ok(SplitForm::GoldSrc);
        }
        if xash_ok {
            return Ok(SplitForm::Xash);
        }
        Err(Error::InvalidField("split packet id"))
    }

    /// Appends the fragment. Fields are written as they are (`index`/`total` are
    /// masked to a nibble in the GoldSrc form); [`split`] builds valid ones.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(&self.sequence.to_le_bytes());
        match self.form {
            SplitForm::GoldSrc => out.push((self.index << 4) | (self.total & 0x0f)),
            SplitForm::Xash => {
                out.push(self.total);
                out.push(self.index);
            }
        }
        out.extend_from_slice(&self.payload);
    }
}

/// Splits `payload` into datagrams of at most `max_datagram` bytes (header
/// included), the way `NET_SendLong` does: equal bodies of `max_datagram − header`
/// bytes and a shorter last one. Use [`GOLDSRC_SPLIT_SIZE`] for GoldSrc replies so
/// the Xash client's fixed-offset reassembly works.
///
/// An empty payload gives one empty fragment. A payload needing more fragments than
/// the form allows, or a `max_datagram` not larger than the header, is
/// [`Error::BadLength`].
pub fn split(
    payload: &[u8],
    form: SplitForm,
    sequence: i32,
    max_datagram: usize,
) -> Result<Vec<Vec<u8>>, Error> {
    let body = max_datagram
        .checked_sub(form.header_len())
        .filter(|&b| b > 0)
        .ok_or(Error::BadLength("split size not larger than the header"))?;
    let count = payload.len().div_ceil(body).max(1);
    if count > usize::from(form.max_fragments()) {
        return Err(Error::BadLength("payload needs too many fragments"));
    }
    // count <= max_fragments <= 255, so the cast is exact.
    let total = count as u8;
    let chunks: Vec<&[u8]> = if payload.is_empty() {
        vec![&[][..]]
    } else {
        payload.chunks(body).collect()
    };
    Ok(chunks
        .into_iter()
        .zip(0u8..)
        .map(|(chunk, index)| {
            let mut out = Vec::with_capacity(form.header_len() + chunk.len());
            Fragment {
                form,
                sequence,
                index,
                total,
                payload: chunk.to_vec(),
            }
            .encode(&mut out);
            out
        })
        .collect())
}

/// Bounds for a [`Reassembler`]; together they cap the memory it can hold at
/// `max_pending × max_fragments × max_fragment_payload` bytes of payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Most fragments per message accepted (also capped by the form's own limit).
    pub max_fragments: u8,
    /// Largest fragment payload accepted, in bytes.
    pub max_fragment_payload: usize,
    /// Most messages reassembled at once. A fragment of a new sequence when this
    /// many are pending evicts the oldest. With 1 (the engine's behaviour) a new
    /// sequence restarts reassembly.
    pub max_pending: usize,
    /// How long an incomplete message is kept after its first fragment arrived.
    pub timeout: Duration,
}

impl ReassemblyLimits {
    /// The engine's GoldSrc rules: 5 fragments of up to 1400 bytes, one message at a
    /// time.
    pub fn goldsrc(timeout: Duration) -> Self {
        ReassemblyLimits {
            max_fragments: GOLDSRC_MAX_FRAGMENTS,
            max_fragment_payload: GOLDSRC_SPLIT_SIZE,
            max_pending: 1,
            timeout,
        }
    }

    /// The engine's Xash netchan rules: 131 fragments of up to 1400 bytes (the
    /// largest `cl_dlmax`), one message at a time.
    pub fn xash(timeout: Duration) -> Self {
        ReassemblyLimits {
            max_fragments: XASH_MAX_FRAGMENTS,
            max_fragment_payload: 1400,
            max_pending: 1,
            timeout,
        }
    }

    /// The most payload bytes a reassembler with these limits can hold.
    pub fn max_buffered_bytes(&self) -> usize {
        self.max_pending
            .saturating_mul(usize::from(self.max_fragments))
            .saturating_mul(self.max_fragment_payload)
    }
}

/// A message being put together.
#[derive(Debug)]
struct Pending {
    sequence: i32,
    form: SplitForm,
    total: u8,
    started: Instant,
    parts: Vec<Option<Vec<u8>>>,
    received: usize,
    bytes: usize,
}

/// Puts split messages back together.
///
/// Keep one per peer address: sequence numbers are only unique per sender. Feed it
/// every `FE FF FF FF` datagram from that peer; it returns the whole message
/// (normally starting with `FF FF FF FF`) once every fragment is in. Fragments may
/// arrive in any order; duplicates are ignored; incomplete messages are dropped
/// after [`ReassemblyLimits::timeout`]. A fragment whose id is impossible, whose
/// total or form differs from earlier fragments of its sequence, or whose payload is
/// too large is an error; an inconsistent sequence is dropped.
#[derive(Debug)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    pending: Vec<Pending>,
}

impl Reassembler {
    /// An empty reassembler with these limits.
    pub fn new(limits: ReassemblyLimits) -> Self {
        Reassembler {
            limits,
            pending: Vec::new(),
        }
    }

    /// The limits given at construction.
    pub fn limits(&self) -> &ReassemblyLimits {
        &self.limits
    }

    /// Decodes `packet` (in `form` if given, else guessing, see
    /// [`Fragment::decode`]) and feeds it.
    pub fn push_packet(
        &mut self,
        packet: &[u8],
        form: Option<SplitForm>,
        now: Instant,
    ) -> Result<Option<Vec<u8>>, Error> {
        let fragment = match form {
            Some(f) => Fragment::decode_as(packet, f)?,
            None => Fragment::decode(packet)?,
        };
        self.push(fragment, now)
    }

    /// Feeds one fragment; returns the message when it is complete.
    pub fn push(&mut self, fragment: Fragment, now: Instant) -> Result<Option<Vec<u8>>, Error> {
        self.expire(now);
        let limit = self.limits.max_fragments.min(fragment.form.max_fragments());
        if fragment.total == 0 {
            return Err(Error::BadLength("split total is zero"));
        }
        if fragment.total > limit {
            return Err(Error::BadLength("split total above the limit"));
        }
        if fragment.index >= fragment.total {
            return Err(Error::InvalidField("split index not below total"));
        }
        if fragment.payload.len() > self.limits.max_fragment_payload {
            return Err(Error::BadLength("fragment payload too large"));
        }
        if fragment.total == 1 {
            // A one-fragment message needs no state, but it still ends any pending
            // message with the same sequence number.
            self.pending.retain(|p| p.sequence != fragment.sequence);
            return Ok(Some(fragment.payload));
        }

        let slot = match self
            .pending
            .iter()
            .position(|p| p.sequence == fragment.sequence)
        {
            Some(i) => {
                let p = &self.pending[i];
                if p.total != fragment.total || p.form != fragment.form {
                    self.pending.swap_remove(i);
                    return Err(Error::InvalidField("split total changed within a sequence"));
                }
                i
            }
            None => {
                if self.limits.max_pending == 0 {
                    return Err(Error::BadLength("reassembly disabled (max_pending is 0)"));
                }
                while self.pending.len() >= self.limits.max_pending {
                    self.evict_oldest();
                }
                self.pending.push(Pending {
                    sequence: fragment.sequence,
                    form: fragment.form,
                    total: fragment.total,
                    started: now,
                    parts: vec![None; usize::from(fragment.total)],
                    received: 0,
                    bytes: 0,
                });
                self.pending.len() - 1
            }
        };

        let p = &mut self.pending[slot];
        let part = &mut p.parts[usize::from(fragment.index)];
        if part.is_some() {
            return Ok(None); // duplicate: the first copy wins
        }
        p.bytes += fragment.payload.len();
        p.received += 1;
        *part = Some(fragment.payload);
        if p.received < usize::from(p.total) {
            return Ok(None);
        }

        let done = self.pending.swap_remove(slot);
        let mut message = Vec::with_capacity(done.bytes);
        for part in done.parts.into_iter().flatten() {
            message.extend_from_slice(&part);
        }
        Ok(Some(message))
    }

    /// Drops incomplete messages older than the timeout; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let timeout = self.limits.timeout;
        let before = self.pending.len();
        self.pending
            .retain(|p| now.saturating_duration_since(p.started) < timeout);
        before - self.pending.len()
    }

    /// Messages currently incomplete.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Payload bytes currently held.
    pub fn buffered_bytes(&self) -> usize {
        self.pending.iter().map(|p| p.bytes).sum()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    fn evict_oldest(&mut self) {
        if let Some(i) = self
            .pending
            .iter()
            .enumerate()
            .min_by_key(|(_, p)| p.started)
            .map(|(i, _)| i)
        {
            self.pending.swap_remove(i);
        }
    }
}
