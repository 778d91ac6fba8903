//! The engine's side of distance-tiered forwarding ([`crate::tiers`] decides one
//! pair): the gates a receiver keeps, one per sender it is sent a thinned stream
//! of, and the decision for one (sender, receiver) pair on the forwarding path.
//!
//! - A pair **without a gate** is in the full-rate first tier: where everyone is
//!   near nothing is stored and the forwarding path costs one comparison more.
//!   A pair gets a gate when it moves out past the first bound and the hysteresis
//!   (or when it first appears farther out); that datagram passes, as a pair's
//!   first must (it carries the model). Back inside the first bound, the gate goes.
//! - A gate is keyed by the sender's slot and remembers the sender's pair id (new
//!   with every admission and every callsign change), so a slot used again by
//!   another pilot is a new pair, whose first datagram passes.
//! - **Bounded**: one gate per (receiver, far sender in its range), at most
//!   [`MAX_GATES_PER_RECEIVER`] per receiver and [`MAX_GATES`] in all; past a cap a
//!   far pair without a gate is decided by [`stateless`] (the sender's own clock
//!   crossing the tier's grid: even spacing without per-pair state, only the
//!   hysteresis and the first-datagram rule lost). A receiver's gates go with it,
//!   and [`sweep`] drops, every [`SWEEP_EVERY`], the gates of senders gone,
//!   replaced or out of the receiver's range.

use crate::tiers::{Gate, Tiers};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

/// Byte offset of the position message's `time` field (the sender's MP clock,
/// an XDR double after the 32-byte header and the 96-byte model name).
pub const TIME_OFFSET: usize = 128;

/// How often stale gates are dropped.
pub const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// Hashes a pilot slot (a small integer the engine hands out; a sender never
/// chooses it) with one multiplication.
#[derive(Debug, Default, Clone, Copy)]
pub struct SlotHasher(u64);

impl Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One receiver's gates, by sender slot.
pub type Gates = HashMap<u32, PairGate, BuildHasherDefault<SlotHasher>>;

/// What a receiver was last sent of one sender's thinned stream. 32 bytes.
#[derive(Debug, Clone, Copy)]
pub struct PairGate {
    /// The sender's pair id when the gate was made.
    pub pair_id: u64,
    /// The tier and the `time` of the last datagram sent.
    pub gate: Gate,
    /// The sender's chat version last sent ([`ChatSeen`]).
    pub chat: u32,
}

/// A sender's chat line as last seen on the forwarding path: a fingerprint of the
/// text and a version that grows when a new non-empty line appears. Read from the
/// datagram only when a thinned pair needs it, at most once per datagram.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatSeen {
    /// [`fgmp::extras::chat_fingerprint`] of the last line seen (0: none).
    pub print: u64,
    /// Grows by one with each new non-empty line.
    pub version: u32,
    /// Whether this datagram was read already.
    pub checked: bool,
    /// Whether this datagram's line is new (it grew the version).
    pub fresh: bool,
}

impl ChatSeen {
    /// The sender's chat version with this datagram's line counted.
    pub fn version(&mut self, datagram: &[u8]) -> u32 {
        if !self.checked {
            self.checked = true;
            let print = fgmp::extras::chat_fingerprint(datagram);
            if print != self.print {
                self.print = print;
                if print != 0 {
                    self.version = self.version.wrapping_add(1);
                    self.fresh = true;
                }
            }
        }
        self.version
    }
}

/// One position datagram of a sender, as the pairs see it.
#[derive(Debug)]
pub struct Offer<'a> {
    /// The tiers in force.
    pub tiers: &'a Tiers,
    /// The squared distance within which every datagram goes, metres² (-1: none).
    pub full_rate_m2: f64,
    /// The sender's slot.
    pub sender: u32,
    /// The sender's pair id.
    pub pair_id: u64,
    /// The datagram's `time`.
    pub time: f64,
    /// The gap to the sender's datagram before, its clock.
    pub period: f64,
    /// The datagram.
    pub datagram: &'a [u8],
}

impl ChatSeen {
    /// The sender's chat state before a new datagram is read.
    pub fn next(self) -> ChatSeen {
        ChatSeen {
            checked: false,
            fresh: false,
            ..self
        }
    }
}

/// What happened to one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Sent; `true` when a gate was made (the caller schedules a sweep).
    Sent(bool),
    /// Thinned, in this tier.
    Thinned(usize),
}

/// Gates held over every receiver, and the caps: past either, a far pair gets no
/// gate of its own and the stateless rule ([`stateless`]) decides for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateBudget {
    /// Gates held now, over every receiver.
    pub held: usize,
    /// Most gates over every receiver.
    pub total: usize,
    /// Most gates one receiver holds.
    pub per_receiver: usize,
}

/// Most gates over every receiver: about 40 bytes each, so 2 million is about
/// 80 MB, room for a fly-in of 1,400 pilots all in range of each other.
pub const MAX_GATES: usize = 2_000_000;
/// Most gates one receiver holds (far senders in its range).
pub const MAX_GATES_PER_RECEIVER: usize = 4_096;

impl Default for GateBudget {
    fn default() -> Self {
        GateBudget {
            held: 0,
            total: MAX_GATES,
            per_receiver: MAX_GATES_PER_RECEIVER,
        }
    }
}

/// Whether the offered datagram goes to a receiver `d2` (squared ECEF metres)
/// away holding `gates`; updates them and the budget.
pub fn pass(
    offer: &Offer<'_>,
    gates: &mut Gates,
    d2: f64,
    chat: &mut ChatSeen,
    budget: &mut GateBudget,
) -> Pass {
    if d2 <= offer.full_rate_m2 {
        if !gates.is_empty() && gates.remove(&offer.sender).is_some() {
            budget.held -= 1;
        }
        return Pass::Sent(false);
    }
    let nm = d2.sqrt() / fgmp::METRES_PER_NM;
    let at_cap = budget.held >= budget.total || gates.len() >= budget.per_receiver;
    match gates.entry(offer.sender) {
        Entry::Occupied(mut e) if e.get().pair_id == offer.pair_id => {
            let g = e.get_mut();
            let version = chat.version(offer.datagram);
            // A clock that did not move (a client that stamps every datagram alike)
            // cannot be thinned by it: such a sender is forwarded as fgms would.
            let must = version != g.chat || offer.period.is_nan() || offer.period <= 0.0;
            if g.gate
                .offer(offer.tiers, nm, offer.time, offer.period, must)
            {
                g.chat = version;
                Pass::Sent(false)
            } else {
                Pass::Thinned(g.gate.tier())
            }
        }
        entry => {
            let gate = Gate::first(offer.tiers, nm, offer.time);
            let new = matches!(entry, Entry::Vacant(_));
            if offer.full_rate_m2 >= 0.0 && gate.tier() == 0 {
                // Still within the hysteresis of the full-rate tier.
                if let Entry::Occupied(e) = entry {
                    e.remove();
                    budget.held -= 1;
                }
                return Pass::Sent(false);
            }
            if new && at_cap {
                return stateless(offer, nm, chat);
            }
            let g = PairGate {
                pair_id: offer.pair_id,
                gate,
                chat: chat.version(offer.datagram),
            };
            match entry {
                Entry::Occupied(mut e) => {
                    e.insert(g);
                }
                Entry::Vacant(e) => {
                    e.insert(g);
                    budget.held += 1;
                }
            }
            Pass::Sent(true)
        }
    }
}

/// The decision for a far pair without a gate (the caps are reached): the
/// datagram goes when the sender's clock crosses a multiple of the tier's
/// interval since its datagram before (evenly spaced on its own grid, no state
/// per pair), or when it carries a new chat line; tiers without hysteresis.
pub fn stateless(offer: &Offer<'_>, nm: f64, chat: &mut ChatSeen) -> Pass {
    let tier = offer.tiers.tier_of(nm);
    let interval = offer.tiers.tiers().get(tier).map_or(0.0, |t| t.interval_s);
    chat.version(offer.datagram);
    let new_line = chat.fresh;
    let (now, prev) = (offer.time, offer.time - offer.period);
    let crossed = interval == 0.0
        || offer.period.is_nan()
        || offer.period <= 0.0
        || (now / interval).floor() != (prev / interval).floor();
    if crossed || new_line {
        Pass::Sent(false)
    } else {
        Pass::Thinned(tier)
    }
}

/// Keeps the gates whose sender is `alive` (its slot holds the same pair id and is
/// still within the receiver's range); returns how many are left.
pub fn sweep(gates: &mut Gates, mut alive: impl FnMut(u32, u64) -> bool) -> usize {
    gates.retain(|&slot, g| alive(slot, g.pair_id));
    if gates.capacity() > 4 * gates.len().max(8) {
        gates.shrink_to_fit();
    }
    gates.len()
}
