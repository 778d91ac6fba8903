//! The relay state machine: validation, the pilot table, who receives what,
//! relay links (LazyRelay, hub), crossfeed, and expiry.

use crate::config::Config;
use crate::expiry::{Entry, ExpiryQueue};
use crate::sessions::{EndReason, LocalPosition, SessionEvent, SessionLog};
use crate::spatial::{Placement, SpatialIndex};
use crate::stats::{add, set, DropReason, Stats};
use crate::thinning::{self, ChatSeen, GateBudget, Gates, Offer, Pass, SWEEP_EVERY, TIME_OFFSET};
use crate::tiers::MAX_TIERS;
use fgmp::header::RangeWord;
use fgmp::message::{RoutingInfo, RANGE_OFFSET};
use fgmp::{Callsign, Magic, MsgId};
use sansio::{Outbox, Over, SourceQuota};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Positions farther than this from the Earth's centre (metres: 100,000 km, a
/// quarter of the way to the Moon) are not physical and are dropped.
pub const MAX_POSITION_M: f64 = 1.0e8;

/// Where a pilot's traffic comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A FlightGear client talking to this relay directly.
    Local,
    /// A pilot behind the configured relay with this index.
    Relay(usize),
    /// A pilot sent by a whitelisted address that is not a configured relay.
    Whitelisted,
}

#[derive(Debug)]
struct Pilot {
    callsign: Callsign,
    addr: SocketAddr,
    origin: Origin,
    pos: [f64; 3],
    orientation: [f32; 3],
    velocity: [f32; 3],
    model: Vec<u8>,
    range_nm: f64,
    placement: Placement,
    last_seen: Instant,
    joined: Instant,
    last_lazy_relay: Option<Instant>,
    /// Unique per admitted pilot: tells its expiry entry from a stale one.
    serial: u64,
    /// Bytes the relay may still send this (local) pilot: each datagram it sends
    /// adds `reply_ratio` times its length, up to [`REPLY_CREDIT_INPUT`] datagrams'
    /// worth; each copy sent takes its length ([`Engine::forward`]).
    credit: u64,
    /// Its last position datagram as received (at most [`fgmp::MAX_DATAGRAM`] bytes;
    /// the buffer is reused, so keeping it costs a copy): the HTTP API decodes chat,
    /// radio and the rest from it off the forwarding path.
    last: Vec<u8>,
    /// Datagrams accepted from it since it joined.
    datagrams: u64,
    /// As a sender: new with every admission and callsign change, so a receiver's
    /// gate for its slot tells it from an earlier pilot's ([`thinning`]).
    pair_id: u64,
    /// As a sender: the `time` of its last position datagram (its clock).
    last_time: f64,
    /// As a sender: its chat line as last seen by a thinned pair.
    chat: ChatSeen,
    /// As a receiver: its gates, one per sender it gets a thinned stream of.
    gates: Gates,
}

/// Keeps `datagram` (capped at [`fgmp::MAX_DATAGRAM`] bytes) in `last`, reusing its buffer.
fn keep(last: &mut Vec<u8>, datagram: &[u8]) {
    last.clear();
    last.extend_from_slice(&datagram[..datagram.len().min(fgmp::MAX_DATAGRAM)]);
}

/// A pilot's reply credit after it sent `len` bytes: `ratio` bytes more per byte,
/// capped (see [`REPLY_CREDIT_INPUT`]).
fn earn(credit: u64, len: usize, ratio: u32) -> u64 {
    let ratio = u64::from(ratio);
    (credit + len as u64 * ratio).min(REPLY_CREDIT_INPUT * ratio)
}

/// A pilot's reply credit holds at most `reply_ratio` times this many bytes of its
/// own (about a second of a busy client's traffic).
pub const REPLY_CREDIT_INPUT: u64 = 16 * 1024;

/// A read-only view of one pilot, for the telnet list and the HTTP API.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotView {
    /// Callsign.
    pub callsign: Callsign,
    /// `LOCAL`, or the relay's label / the sender's IP for remote pilots.
    pub origin: String,
    /// Whether the pilot talks to this relay directly.
    pub local: bool,
    /// Source address.
    pub addr: SocketAddr,
    /// ECEF metres.
    pub position: [f64; 3],
    /// Angle-axis orientation as sent.
    pub orientation: [f32; 3],
    /// Linear velocity as sent (body frame, m/s).
    pub velocity: [f32; 3],
    /// Model path.
    pub model: String,
    /// Effective receive range, nm.
    pub range_nm: f64,
    /// Time since the pilot joined.
    pub online_for: Duration,
    /// Time since its last datagram.
    pub silent_for: Duration,
    /// Its last position datagram, as received (at most [`fgmp::MAX_DATAGRAM`]
    /// bytes), from [`Engine::pilots_with_datagrams`]; empty from [`Engine::pilots`].
    pub last_datagram: Vec<u8>,
    /// Datagrams accepted from it since it joined.
    pub datagrams: u64,
}

/// Traffic on one relay link or crossfeed target, kept across reconfigurations
/// while the address stays configured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Datagrams sent to it.
    pub datagrams_out: u64,
    /// Bytes sent to it.
    pub bytes_out: u64,
    /// Datagrams accepted from it.
    pub datagrams_in: u64,
    /// Bytes accepted from it.
    pub bytes_in: u64,
    /// When a datagram from it was last accepted.
    pub last_in: Option<Instant>,
}

/// What kind of peer a [`LinkView`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A relay link (traffic both ways, `SFGF`).
    Relay,
    /// A crossfeed target (a copy of every valid datagram, one way).
    Crossfeed,
}

/// A read-only view of one configured peer and its traffic, for the HTTP API.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkView {
    /// Relay or crossfeed.
    pub kind: LinkKind,
    /// The relay's label (its configured name); a crossfeed's address.
    pub label: String,
    /// Where it is sent.
    pub addr: SocketAddr,
    /// Its traffic.
    pub counters: LinkCounters,
}

/// The relay engine. See the crate docs.
#[derive(Debug)]
pub struct Engine {
    config: Config,
    stats: Arc<Stats>,
    slots: Vec<Option<Pilot>>,
    free: Vec<u32>,
    by_callsign: HashMap<Callsign, u32>,
    /// Local pilots by source address: one per address (a client sends one callsign
    /// per socket), so its length is the number of local pilots.
    by_addr: HashMap<SocketAddr, u32>,
    /// Local pilots per source IPv4 address or IPv6 /64, and per wider network.
    per_source: SourceQuota,
    /// Pilots per relay link (by link index, as `config.relays`).
    relay_pilots: Vec<usize>,
    index: SpatialIndex,
    expiry: ExpiryQueue,
    next_serial: u64,
    relay_by_addr: HashMap<SocketAddr, usize>,
    relay_by_ip: HashMap<IpAddr, Vec<usize>>,
    /// Relay and crossfeed addresses: a client datagram from one of them is refused.
    peer_addrs: HashSet<SocketAddr>,
    /// Per relay: it is also a crossfeed target, so it already gets every datagram.
    relay_is_crossfeed: Vec<bool>,
    /// Per configured relay, same order as `config.relays`.
    relay_links: Vec<LinkCounters>,
    /// Per crossfeed target, same order as `config.crossfeeds`.
    crossfeed_links: Vec<LinkCounters>,
    /// Local pilots' sessions, when someone takes them (tracker, flight log).
    sessions: Option<SessionLog>,
    // Scratch buffers reused across datagrams.
    candidates: Vec<u32>,
    relay_wants: Vec<bool>,
    due: Vec<Entry>,
    /// Within this squared distance (metres²) every datagram goes; -1: none.
    full_rate_m2: f64,
    /// When stale gates are next dropped, while there are any.
    next_sweep: Option<Instant>,
    /// Gates held and their caps.
    gate_budget: GateBudget,
}

impl Engine {
    /// A new engine with `config`, counting into `stats`.
    pub fn new(config: Config, stats: Arc<Stats>) -> Engine {
        let mut e = Engine {
            config: Config::default(),
            stats,
            slots: Vec::new(),
            free: Vec::new(),
            by_callsign: HashMap::new(),
            by_addr: HashMap::new(),
            per_source: SourceQuota::new(config.max_pilots_per_ip),
            relay_pilots: Vec::new(),
            index: SpatialIndex::new(),
            expiry: ExpiryQueue::new(),
            next_serial: 0,
            relay_by_addr: HashMap::new(),
            relay_by_ip: HashMap::new(),
            peer_addrs: HashSet::new(),
            relay_is_crossfeed: Vec::new(),
            relay_links: Vec::new(),
            crossfeed_links: Vec::new(),
            sessions: None,
            candidates: Vec::new(),
            relay_wants: Vec::new(),
            due: Vec::new(),
            full_rate_m2: -1.0,
            next_sweep: None,
            gate_budget: GateBudget::default(),
        };
        e.reconfigure(config);
        e
    }

    /// Applies a new configuration (SIGHUP) and keeps the pilots. Remote pilots
    /// of relays that are gone are dropped, and so are local pilots whose address
    /// is now a relay's or a crossfeed target's. A relay or crossfeed target listed
    /// twice is used once.
    pub fn reconfigure(&mut self, mut config: Config) {
        let mut seen = HashSet::new();
        config.relays.retain(|r| seen.insert(r.addr));
        let mut seen = HashSet::new();
        config.crossfeeds.retain(|a| seen.insert(*a));
        self.relay_by_addr.clear();
        self.relay_by_ip.clear();
        for (i, r) in config.relays.iter().enumerate() {
            self.relay_by_addr.insert(r.addr, i);
            self.relay_by_ip.entry(r.addr.ip()).or_default().push(i);
        }
        self.peer_addrs = config.relays.iter().map(|r| r.addr).collect();
        self.peer_addrs.extend(config.crossfeeds.iter().copied());
        self.relay_is_crossfeed = config
            .relays
            .iter()
            .map(|r| config.crossfeeds.contains(&r.addr))
            .collect();
        let old_relays = std::mem::take(&mut self.config.relays);
        let old_links: HashMap<SocketAddr, LinkCounters> = old_relays
            .iter()
            .map(|r| r.addr)
            .zip(self.relay_links.iter().copied())
            .collect();
        self.relay_links = config
            .relays
            .iter()
            .map(|r| old_links.get(&r.addr).copied().unwrap_or_default())
            .collect();
        let old_cf: HashMap<SocketAddr, LinkCounters> = self
            .config
            .crossfeeds
            .iter()
            .copied()
            .zip(self.crossfeed_links.iter().copied())
            .collect();
        self.crossfeed_links = config
            .crossfeeds
            .iter()
            .map(|a| old_cf.get(a).copied().unwrap_or_default())
            .collect();
        let expiry_changed = config.player_expiry != self.config.player_expiry;
        if config.tiers != self.config.tiers {
            // A gate's tier is an index into the tiers it was made with.
            for p in self.slots.iter_mut().flatten() {
                p.gates = Gates::default();
            }
            self.next_sweep = None;
            self.gate_budget.held = 0;
        }
        self.full_rate_m2 = config
            .tiers
            .full_rate_within_nm()
            .map_or(-1.0, |nm| (nm * fgmp::METRES_PER_NM).powi(2));
        self.per_source.set_per_source(config.max_pilots_per_ip);
        self.config = config;
        // Re-point remote pilots at the new relay indices; note those to drop.
        let mut stale = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(p) = slot else { continue };
            let keep = match p.origin {
                Origin::Relay(r) => match old_relays
                    .get(r)
                    .and_then(|x| self.relay_by_addr.get(&x.addr))
                {
                    Some(&n) => {
                        p.origin = Origin::Relay(n);
                        true
                    }
                    None => false,
                },
                Origin::Local => !self.peer_addrs.contains(&p.addr),
                Origin::Whitelisted => true,
            };
            if keep {
                p.range_nm = p.range_nm.min(self.config.max_radar_range_nm);
            } else {
                stale.push(i as u32);
            }
        }
        self.relay_pilots = vec![0; self.config.relays.len()];
        for id in stale {
            self.remove(id, EndReason::Removed);
        }
        for p in self.slots.iter().flatten() {
            if let Origin::Relay(k) = p.origin {
                self.relay_pilots[k] += 1;
            }
        }
        if expiry_changed {
            // Deadlines were filed with the old period: file every pilot again.
            self.expiry.clear();
            for (i, p) in self.slots.iter().enumerate() {
                if let Some(p) = p {
                    let e = Entry {
                        slot: i as u32,
                        serial: p.serial,
                    };
                    self.expiry
                        .schedule(e, p.last_seen + self.config.player_expiry);
                }
            }
        }
        self.relay_wants = vec![false; self.config.relays.len()];
        self.publish_counts();
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// Handles one received datagram, appending what to send to `out`.
    pub fn handle(&mut self, datagram: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        add(&self.stats.packets_in, 1);
        add(&self.stats.bytes_in, datagram.len() as u64);
        if self.config.blacklist.iter().any(|n| n.contains(&from.ip())) {
            return self.stats.count_drop(DropReason::Blacklisted);
        }
        let info = match RoutingInfo::parse(datagram) {
            Ok(i) => i,
            Err(e) => return self.stats.count_drop(DropReason::from_error(&e)),
        };
        if let Some([x, y, z]) = info.position {
            if x * x + y * y + z * z > MAX_POSITION_M * MAX_POSITION_M {
                return self.stats.count_drop(DropReason::PositionOutOfRange);
            }
        }
        // Who sent it: a client, a configured relay, or a whitelisted peer.
        let origin = match info.magic {
            Magic::Client => Origin::Local,
            Magic::Relay => match self.relay_index(from) {
                Some(r) => Origin::Relay(r),
                None if self.config.whitelist.iter().any(|n| n.contains(&from.ip())) => {
                    Origin::Whitelisted
                }
                None => return self.stats.count_drop(DropReason::UnknownRelay),
            },
        };
        match info.msg_id {
            MsgId::Ping => {
                add(&self.stats.pings, 1);
                let pong = out.payload(datagram);
                fgmp::message::ping_to_pong(out.payload_mut(pong));
                out.send(pong, from);
                self.count_out(datagram.len(), 1);
                return;
            }
            MsgId::Pong => {
                add(&self.stats.pongs, 1);
                return;
            }
            MsgId::Position | MsgId::Chat => {}
            _ => return self.stats.count_drop(DropReason::UnsupportedMsgId),
        }
        let Some(id) = self.admit(&info, datagram, origin, from, now) else {
            return;
        };
        if origin != Origin::Local {
            add(&self.stats.from_relays, 1);
        }
        if let Origin::Relay(k) = origin {
            if let Some(l) = self.relay_links.get_mut(k) {
                l.datagrams_in += 1;
                l.bytes_in += datagram.len() as u64;
                l.last_in = Some(now);
            }
        }
        if info.msg_id == MsgId::Position {
            add(&self.stats.positions, 1);
        } else {
            add(&self.stats.chats, 1);
        }
        // Crossfeed: an SFGF copy of every valid datagram.
        if !self.config.crossfeeds.is_empty() {
            let cf = out.payload(datagram);
            out.payload_mut(cf)[0..4].copy_from_slice(&Magic::Relay.bytes());
            let mut n = 0;
            for (k, &t) in self.config.crossfeeds.iter().enumerate() {
                if t == from {
                    continue;
                }
                out.send(cf, t);
                n += 1;
                let l = &mut self.crossfeed_links[k];
                l.datagrams_out += 1;
                l.bytes_out += datagram.len() as u64;
            }
            add(&self.stats.to_crossfeeds, n as u64);
            self.count_out(datagram.len(), n);
        }
        if info.callsign.is_observer() {
            return; // observers receive, they are never forwarded.
        }
        self.forward(id, &info, datagram, origin, from, now, out);
    }

    /// Looks up or creates the sender's pilot entry; returns its slot if the
    /// datagram may be forwarded.
    fn admit(
        &mut self,
        info: &RoutingInfo,
        datagram: &[u8],
        origin: Origin,
        from: SocketAddr,
        now: Instant,
    ) -> Option<u32> {
        let requested = RangeWord::from_wire(info.range_word).nm();
        let resolve = |old: Option<f64>, cfg: &Config| match requested {
            Some(nm) => f64::from(nm).min(cfg.max_radar_range_nm),
            None => old.unwrap_or(cfg.out_of_reach_nm),
        };
        if origin == Origin::Local && self.peer_addrs.contains(&from) {
            // A client at a relay's or crossfeed target's address would get their copies twice.
            self.stats.count_drop(DropReason::PeerAddress);
            return None;
        }
        if let Some(&id) = self.by_callsign.get(&info.callsign) {
            let p = self.slots[id as usize].as_mut()?;
            if p.addr != from {
                self.stats.count_drop(DropReason::AddressMismatch);
                return None;
            }
            p.last_seen = now;
            p.datagrams += 1;
            p.credit = earn(p.credit, datagram.len(), self.config.reply_ratio);
            if let Some(pos) = info.position {
                keep(&mut p.last, datagram);
                p.pos = pos;
                p.range_nm = resolve(Some(p.range_nm), &self.config);
                p.orientation = read_orientation(datagram);
                p.velocity = read_velocity(datagram);
                let model = read_model(datagram);
                if model != p.model.as_slice() {
                    let old = std::mem::replace(&mut p.model, model.to_vec());
                    if let (Some(log), Origin::Local) = (&mut self.sessions, p.origin) {
                        // A flight ends when its model changes: one session per model.
                        log.push(SessionEvent::Ended {
                            callsign: p.callsign,
                            model: String::from_utf8_lossy(&old).into_owned(),
                            at: now,
                            why: EndReason::ModelChanged,
                        });
                        log.push(SessionEvent::Began {
                            callsign: p.callsign,
                            model: String::from_utf8_lossy(&p.model).into_owned(),
                            addr: p.addr,
                            at: now,
                        });
                    }
                }
                let new = SpatialIndex::placement(p.pos, p.range_nm);
                p.placement = self.index.update(id, p.placement, new);
            }
            return Some(id);
        }
        let Some(pos) = info.position else {
            self.stats.count_drop(DropReason::UnknownSender);
            return None;
        };
        let range_nm = resolve(None, &self.config);
        let placement = SpatialIndex::placement(pos, range_nm);
        if origin == Origin::Local {
            if let Some(&id) = self.by_addr.get(&from) {
                // One callsign per socket: the client changed its callsign.
                let p = self.slots[id as usize].as_mut()?;
                if let Some(log) = &mut self.sessions {
                    log.push(SessionEvent::Ended {
                        callsign: p.callsign,
                        model: String::from_utf8_lossy(&p.model).into_owned(),
                        at: p.last_seen,
                        why: EndReason::Replaced,
                    });
                }
                self.by_callsign.remove(&p.callsign);
                self.by_callsign.insert(info.callsign, id);
                p.callsign = info.callsign;
                p.pos = pos;
                p.orientation = read_orientation(datagram);
                p.velocity = read_velocity(datagram);
                p.model = read_model(datagram).to_vec();
                p.range_nm = range_nm;
                p.placement = self.index.update(id, p.placement, placement);
                p.last_seen = now;
                p.joined = now;
                p.datagrams = 1;
                keep(&mut p.last, datagram);
                p.last_lazy_relay = None;
                // A new aircraft to every receiver: its first datagram passes.
                p.pair_id = self.next_serial;
                self.next_serial += 1;
                p.chat = ChatSeen::default();
                p.credit = earn(p.credit, datagram.len(), self.config.reply_ratio);
                if let Some(log) = &mut self.sessions {
                    log.push(SessionEvent::Began {
                        callsign: p.callsign,
                        model: String::from_utf8_lossy(&p.model).into_owned(),
                        addr: from,
                        at: now,
                    });
                }
                add(&self.stats.pilots_replaced, 1);
                add(&self.stats.pilots_joined, 1);
                return Some(id);
            }
            match self.per_source.check(from.ip()) {
                Ok(()) => {}
                Err(Over::Source) => {
                    self.stats.count_drop(DropReason::PerIpLimit);
                    return None;
                }
                Err(Over::Network(_)) => {
                    self.stats.count_drop(DropReason::PerNetworkLimit);
                    return None;
                }
            }
        }
        if let Origin::Relay(k) = origin {
            if self.relay_pilots.get(k).copied().unwrap_or(0) >= self.config.max_pilots_per_relay {
                self.stats.count_drop(DropReason::PerRelayLimit);
                return None;
            }
        }
        if self.by_callsign.len() >= self.config.max_pilots {
            self.stats.count_drop(DropReason::TableFull);
            return None;
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        let pilot = Pilot {
            callsign: info.callsign,
            addr: from,
            origin,
            pos,
            orientation: read_orientation(datagram),
            velocity: read_velocity(datagram),
            model: read_model(datagram).to_vec(),
            range_nm,
            placement,
            last_seen: now,
            joined: now,
            last_lazy_relay: None,
            serial,
            credit: earn(0, datagram.len(), self.config.reply_ratio),
            last: datagram[..datagram.len().min(fgmp::MAX_DATAGRAM)].to_vec(),
            datagrams: 1,
            pair_id: serial,
            last_time: f64::NAN,
            chat: ChatSeen::default(),
            gates: Gates::default(),
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(pilot);
                id
            }
            None => {
                self.slots.push(Some(pilot));
                (self.slots.len() - 1) as u32
            }
        };
        self.by_callsign.insert(info.callsign, id);
        if let Origin::Relay(k) = origin {
            if let Some(n) = self.relay_pilots.get_mut(k) {
                *n += 1;
            }
        }
        if origin == Origin::Local {
            self.by_addr.insert(from, id);
            self.per_source.add(from.ip());
            if let Some(log) = &mut self.sessions {
                log.push(SessionEvent::Began {
                    callsign: info.callsign,
                    model: String::from_utf8_lossy(read_model(datagram)).into_owned(),
                    addr: from,
                    at: now,
                });
            }
        }
        self.index.insert(id, placement);
        self.expiry
            .schedule(Entry { slot: id, serial }, now + self.config.player_expiry);
        add(&self.stats.pilots_joined, 1);
        self.publish_counts();
        Some(id)
    }

    #[allow(clippy::too_many_arguments)]
    fn forward(
        &mut self,
        sender: u32,
        info: &RoutingInfo,
        datagram: &[u8],
        origin: Origin,
        from: SocketAddr,
        now: Instant,
        out: &mut Outbox,
    ) {
        let Some(sp) = self.slots[sender as usize].as_mut() else {
            return;
        };
        let sender_pos = sp.pos;
        // Distance tiers thin position datagrams (never chat, never relay links).
        let thin = info.msg_id == MsgId::Position && !self.config.tiers.is_off();
        let time = if thin {
            wire::f64_be_at(datagram, TIME_OFFSET).unwrap_or(f64::NAN)
        } else {
            f64::NAN
        };
        let period = time - sp.last_time;
        if thin {
            sp.last_time = time;
        }
        let offer = Offer {
            tiers: &self.config.tiers,
            full_rate_m2: self.full_rate_m2,
            sender,
            pair_id: sp.pair_id,
            time,
            period,
            datagram,
        };
        let mut chat = sp.chat.next();
        let mut thinned = [0u64; MAX_TIERS];
        let mut gated = false;
        // Local receivers whose own range covers the sender; note relays with a pilot in range.
        self.candidates.clear();
        let cands = &mut self.candidates;
        self.index.candidates(sender_pos, |id| cands.push(id));
        self.relay_wants.iter_mut().for_each(|w| *w = false);
        let mut to_clients = None;
        let mut n_clients = 0;
        let mut withheld = 0u64;
        for &id in &self.candidates {
            if id == sender {
                continue;
            }
            let Some(r) = self.slots[id as usize].as_mut() else {
                continue;
            };
            // Squared ECEF distance in metres against the receiver's range: no sqrt.
            let d = [
                r.pos[0] - sender_pos[0],
                r.pos[1] - sender_pos[1],
                r.pos[2] - sender_pos[2],
            ];
            let range_m = r.range_nm * fgmp::METRES_PER_NM;
            let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if d2 >= range_m * range_m {
                continue;
            }
            match r.origin {
                // Never back to the source address (a relay matched by IP alone may
                // send from the socket of a local pilot).
                Origin::Local if r.addr == from => {}
                Origin::Local => {
                    // Farther than the full-rate tier (or leaving it): the pair's gate says.
                    if thin && (d2 > offer.full_rate_m2 || !r.gates.is_empty()) {
                        let budget = &mut self.gate_budget;
                        match thinning::pass(&offer, &mut r.gates, d2, &mut chat, budget) {
                            Pass::Sent(made) => gated |= made,
                            Pass::Thinned(tier) => {
                                thinned[tier] += 1;
                                continue;
                            }
                        }
                    }
                    if r.credit < datagram.len() as u64 {
                        withheld += 1;
                        continue;
                    }
                    r.credit -= datagram.len() as u64;
                    let pl = *to_clients.get_or_insert_with(|| {
                        let pl = out.payload(datagram);
                        client_form(out.payload_mut(pl), info.range_word);
                        pl
                    });
                    out.send(pl, r.addr);
                    n_clients += 1;
                }
                Origin::Relay(k) => {
                    if let Some(w) = self.relay_wants.get_mut(k) {
                        *w = true;
                    }
                }
                Origin::Whitelisted => {}
            }
        }
        self.count_out(datagram.len(), n_clients);
        if withheld > 0 {
            add(&self.stats.copies_withheld, withheld);
        }
        if thin {
            if chat.checked {
                if let Some(sp) = self.slots[sender as usize].as_mut() {
                    sp.chat = chat;
                }
            }
            self.stats.count_thinned(&thinned, datagram.len());
            if gated && self.next_sweep.is_none() {
                self.next_sweep = Some(now + SWEEP_EVERY);
            }
        }
        // Relays: local senders always, relay traffic only in hub mode, never back.
        if self.config.relays.is_empty() || (origin != Origin::Local && !self.config.hub) {
            return;
        }
        let interval = self.config.lazy_relay_interval;
        let Some(sp) = self.slots[sender as usize].as_mut() else {
            return;
        };
        let lazy_due = sp
            .last_lazy_relay
            .is_none_or(|t| now.saturating_duration_since(t) >= interval);
        if lazy_due {
            sp.last_lazy_relay = Some(now);
        }
        let mut to_relays = None;
        let mut n = 0;
        for (k, peer) in self.config.relays.iter().enumerate() {
            if peer.addr == from || origin == Origin::Relay(k) {
                continue;
            }
            if !(lazy_due || self.relay_wants[k]) || self.relay_is_crossfeed[k] {
                continue; // (a crossfeed target already has its copy)
            }
            let pl = *to_relays.get_or_insert_with(|| {
                let pl = out.payload(datagram);
                out.payload_mut(pl)[0..4].copy_from_slice(&Magic::Relay.bytes());
                pl
            });
            out.send(pl, peer.addr);
            n += 1;
            let l = &mut self.relay_links[k];
            l.datagrams_out += 1;
            l.bytes_out += datagram.len() as u64;
        }
        add(&self.stats.to_relays, n as u64);
        self.count_out(datagram.len(), n);
    }

    fn count_out(&self, len: usize, n: usize) {
        add(&self.stats.packets_out, n as u64);
        add(&self.stats.bytes_out, (len * n) as u64);
    }

    fn relay_index(&self, from: SocketAddr) -> Option<usize> {
        if let Some(&i) = self.relay_by_addr.get(&from) {
            return Some(i);
        }
        // fgms peers are matched by IP, as fgms does, when that IP is unambiguous.
        match self.relay_by_ip.get(&from.ip()) {
            Some(v) if v.len() == 1 => Some(v[0]),
            _ => None,
        }
    }

    /// When [`Engine::handle_timeout`] should next be called, if at all.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.expiry.next_due(), self.next_sweep) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Drops pilots silent for longer than `player_expiry` (nothing is sent; `out` is
    /// the shared engine interface's). Only the pilots whose deadline has come are
    /// looked at: the cost is per due pilot, not per pilot in the table.
    pub fn handle_timeout(&mut self, now: Instant, _out: &mut Outbox) {
        if self.next_sweep.is_some_and(|t| now >= t) {
            self.sweep_gates(now);
        }
        if self.expiry.next_due().is_none_or(|t| now < t) {
            return;
        }
        let expiry = self.config.player_expiry;
        let mut due = std::mem::take(&mut self.due);
        self.expiry.take_due(now, &mut due);
        for e in due.drain(..) {
            let Some(p) = self.slots.get(e.slot as usize).and_then(Option::as_ref) else {
                continue;
            };
            if p.serial != e.serial {
                continue; // the pilot it was filed for is gone.
            }
            if now.saturating_duration_since(p.last_seen) > expiry {
                self.remove(e.slot, EndReason::Expired);
                add(&self.stats.pilots_expired, 1);
            } else {
                // Heard from since: look again when it would expire (always a later second).
                let at = (p.last_seen + expiry).max(now + Duration::from_millis(1));
                self.expiry.schedule(e, at);
            }
        }
        self.due = due;
    }

    /// Drops the gates of senders gone, replaced or out of their receiver's range
    /// (the cost is one look per gate, every [`SWEEP_EVERY`] while any are held).
    fn sweep_gates(&mut self, now: Instant) {
        let mut left = 0;
        for id in 0..self.slots.len() {
            let Some(r) = self.slots[id].as_mut() else {
                continue;
            };
            if r.gates.is_empty() {
                continue;
            }
            let mut gates = std::mem::take(&mut r.gates);
            let (pos, range_m) = (r.pos, r.range_nm * fgmp::METRES_PER_NM);
            let slots = &self.slots;
            left += thinning::sweep(&mut gates, |slot, pair_id| {
                slots
                    .get(slot as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|s| {
                        let d: f64 = (0..3).map(|k| (s.pos[k] - pos[k]).powi(2)).sum();
                        s.pair_id == pair_id && d < range_m * range_m
                    })
            });
            if let Some(r) = self.slots[id].as_mut() {
                r.gates = gates;
            }
        }
        self.gate_budget.held = left;
        self.next_sweep = (left > 0).then(|| now + SWEEP_EVERY);
    }

    fn remove(&mut self, id: u32, why: EndReason) {
        if let Some(p) = self.slots.get_mut(id as usize).and_then(Option::take) {
            self.by_callsign.remove(&p.callsign);
            if let Origin::Relay(k) = p.origin {
                if let Some(n) = self.relay_pilots.get_mut(k) {
                    *n = n.saturating_sub(1);
                }
            }
            if p.origin == Origin::Local {
                if let Some(log) = &mut self.sessions {
                    log.push(SessionEvent::Ended {
                        callsign: p.callsign,
                        model: String::from_utf8_lossy(&p.model).into_owned(),
                        at: p.last_seen,
                        why,
                    });
                }
                if self.by_addr.get(&p.addr) == Some(&id) {
                    self.by_addr.remove(&p.addr);
                }
                self.per_source.remove(p.addr.ip());
            }
            self.index.remove(id, p.placement);
            self.gate_budget.held -= p.gates.len();
            self.free.push(id);
        }
        self.publish_counts();
    }

    fn publish_counts(&self) {
        let total = self.by_callsign.len();
        let local = self.by_addr.len();
        set(&self.stats.pilots_local, local as u64);
        set(&self.stats.pilots_remote, (total - local) as u64);
    }

    /// Per-pair gates held for distance-tiered forwarding, over every receiver
    /// (one per receiver and sender it gets a thinned stream of).
    pub fn gate_count(&self) -> usize {
        debug_assert_eq!(
            self.gate_budget.held,
            self.slots
                .iter()
                .flatten()
                .map(|p| p.gates.len())
                .sum::<usize>()
        );
        self.gate_budget.held
    }

    /// Sets the caps on gates (tests show them binding with small ones).
    pub fn set_gate_caps(&mut self, total: usize, per_receiver: usize) {
        self.gate_budget.total = total;
        self.gate_budget.per_receiver = per_receiver;
    }

    /// Number of pilots known (local and remote, observers included), as fgms counts "N pilot(s) online".
    pub fn pilot_count(&self) -> usize {
        self.by_callsign.len()
    }

    /// Every configured relay link, then every crossfeed target, with its traffic.
    pub fn links(&self) -> Vec<LinkView> {
        let relays = self
            .config
            .relays
            .iter()
            .zip(&self.relay_links)
            .map(|(r, c)| LinkView {
                kind: LinkKind::Relay,
                label: r.label.clone(),
                addr: r.addr,
                counters: *c,
            });
        let crossfeeds = self
            .config
            .crossfeeds
            .iter()
            .zip(&self.crossfeed_links)
            .map(|(a, c)| LinkView {
                kind: LinkKind::Crossfeed,
                label: a.to_string(),
                addr: *a,
                counters: *c,
            });
        relays.chain(crossfeeds).collect()
    }

    /// Starts (or, with `None`, stops) logging local pilots' sessions, holding at most
    /// `cap` untaken events. Pilots already in the table begin their sessions now.
    pub fn record_sessions(&mut self, cap: Option<usize>, now: Instant) {
        self.sessions = cap.map(SessionLog::new);
        if let Some(log) = &mut self.sessions {
            for p in self.slots.iter().flatten() {
                if p.origin == Origin::Local {
                    log.push(SessionEvent::Began {
                        callsign: p.callsign,
                        model: String::from_utf8_lossy(&p.model).into_owned(),
                        addr: p.addr,
                        at: now,
                    });
                }
            }
        }
    }

    /// Moves the sessions' events logged since the last call into `out` (oldest
    /// first); nothing when not logging.
    pub fn take_sessions(&mut self, out: &mut Vec<SessionEvent>) {
        if let Some(log) = &mut self.sessions {
            log.drain_into(out);
            set(&self.stats.session_events_dropped, log.dropped());
        }
    }

    /// Every local pilot's latest position, for the tracker and the flight log.
    pub fn local_positions(&self, out: &mut Vec<LocalPosition>) {
        out.extend(
            self.by_addr
                .values()
                .filter_map(|&id| self.slots.get(id as usize)?.as_ref())
                .map(|p| LocalPosition {
                    callsign: p.callsign,
                    model: String::from_utf8_lossy(&p.model).into_owned(),
                    position: p.pos,
                    orientation: p.orientation,
                    velocity: p.velocity,
                    seen: p.last_seen,
                }),
        );
    }

    /// Every pilot, ordered by join time, without its last datagram
    /// (`last_datagram` empty): what the telnet list and the admin API read.
    pub fn pilots(&self, now: Instant) -> Vec<PilotView> {
        self.views(now, false)
    }

    /// Every pilot, ordered by join time, each with a copy of its last position
    /// datagram (at most [`fgmp::MAX_DATAGRAM`] bytes): what the API's snapshot
    /// decodes chat, radio and transponder from, outside the engine's lock.
    pub fn pilots_with_datagrams(&self, now: Instant) -> Vec<PilotView> {
        self.views(now, true)
    }

    fn views(&self, now: Instant, datagrams: bool) -> Vec<PilotView> {
        let mut v: Vec<(&Pilot, PilotView)> = self
            .slots
            .iter()
            .flatten()
            .map(|p| {
                let origin = match p.origin {
                    Origin::Local => "LOCAL".to_string(),
                    Origin::Relay(k) => self
                        .config
                        .relays
                        .get(k)
                        .map(|r| r.label.clone())
                        .unwrap_or_else(|| p.addr.ip().to_string()),
                    Origin::Whitelisted => p.addr.ip().to_string(),
                };
                (
                    p,
                    PilotView {
                        callsign: p.callsign,
                        origin,
                        local: p.origin == Origin::Local,
                        addr: p.addr,
                        position: p.pos,
                        orientation: p.orientation,
                        velocity: p.velocity,
                        model: String::from_utf8_lossy(&p.model).into_owned(),
                        range_nm: p.range_nm,
                        online_for: now.saturating_duration_since(p.joined),
                        silent_for: now.saturating_duration_since(p.last_seen),
                        last_datagram: if datagrams {
                            p.last.clone()
                        } else {
                            Vec::new()
                        },
                        datagrams: p.datagrams,
                    },
                )
            })
            .collect();
        v.sort_by_key(|(p, _)| (p.joined, p.callsign));
        v.into_iter().map(|(_, view)| view).collect()
    }
}

/// Rewrites a datagram into the form a FlightGear client expects: `FGFS` magic, and
/// a range word an fgms hop byte-swapped turned back into the client's own form.
fn client_form(buf: &mut [u8], range_word: u32) {
    buf[0..4].copy_from_slice(&Magic::Client.bytes());
    if let RangeWord::Swapped(nm) = RangeWord::from_wire(range_word) {
        buf[RANGE_OFFSET..RANGE_OFFSET + 4].copy_from_slice(&u32::from(nm).to_be_bytes());
    }
}

/// Three big-endian `f32`s at `off` (zeros where the datagram is too short).
fn read_f32x3(d: &[u8], off: usize) -> [f32; 3] {
    let f = |at: usize| wire::u32_be_at(d, at).map(f32::from_bits).unwrap_or(0.0);
    [f(off), f(off + 4), f(off + 8)]
}

/// The angle-axis orientation of a position datagram.
fn read_orientation(d: &[u8]) -> [f32; 3] {
    read_f32x3(d, 168)
}

/// The linear velocity (body frame, m/s) after the orientation.
fn read_velocity(d: &[u8]) -> [f32; 3] {
    read_f32x3(d, 180)
}

fn read_model(d: &[u8]) -> &[u8] {
    let field = d.get(32..128).unwrap_or(&[]);
    let n = field
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(field.len().min(95));
    &field[..n]
}

impl sansio::Engine for Engine {
    fn handle(&mut self, datagram: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        Engine::handle(self, datagram, from, now, out);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Engine::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        Engine::handle_timeout(self, now, out);
    }
}
