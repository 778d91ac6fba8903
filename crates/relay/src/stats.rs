//! Counters: one per drop reason, plus traffic totals. Atomic so the telnet,
//! HTTP and metrics readers can look at them while the engine runs.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Why a datagram was not relayed. Every variant has its own counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Source IP is blacklisted.
    Blacklisted,
    /// Shorter than the 32-byte header.
    Runt,
    /// Over 1200 bytes.
    Oversize,
    /// Neither `FGFS` nor `SFGF`.
    BadMagic,
    /// Version is not exactly 0x00010001.
    BadVersion,
    /// MsgLen differs from the datagram size.
    LengthMismatch,
    /// Position message under 232 bytes.
    PositionTooShort,
    /// Chat message under 33 bytes.
    ChatTooShort,
    /// Empty callsign field.
    EmptyCallsign,
    /// NaN or infinite position.
    NonFinitePosition,
    /// Position (0, 0, 0).
    ZeroPosition,
    /// `SFGF` from an address that is neither a relay nor whitelisted.
    UnknownRelay,
    /// Known callsign from another source address.
    AddressMismatch,
    /// Chat (or other non-position) from a callsign never seen with a position.
    UnknownSender,
    /// Message ids a relay does not forward (2-6, 8, unknown).
    UnsupportedMsgId,
    /// The pilot table is full.
    TableFull,
    /// A new callsign from a source IPv4 address or IPv6 /64 that already has
    /// `max_pilots_per_ip` local pilots.
    PerIpLimit,
    /// A client (`FGFS`) datagram from the address of a configured relay or
    /// crossfeed target (it would be sent their copies twice).
    PeerAddress,
    /// Position more than 100,000 km from the Earth's centre.
    PositionOutOfRange,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 19] = [
        DropReason::Blacklisted,
        DropReason::Runt,
        DropReason::Oversize,
        DropReason::BadMagic,
        DropReason::BadVersion,
        DropReason::LengthMismatch,
        DropReason::PositionTooShort,
        DropReason::ChatTooShort,
        DropReason::EmptyCallsign,
        DropReason::NonFinitePosition,
        DropReason::ZeroPosition,
        DropReason::UnknownRelay,
        DropReason::AddressMismatch,
        DropReason::UnknownSender,
        DropReason::UnsupportedMsgId,
        DropReason::TableFull,
        DropReason::PerIpLimit,
        DropReason::PeerAddress,
        DropReason::PositionOutOfRange,
    ];

    /// Stable snake_case name for logs, telnet and metrics.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Blacklisted => "blacklisted",
            DropReason::Runt => "runt",
            DropReason::Oversize => "oversize",
            DropReason::BadMagic => "bad_magic",
            DropReason::BadVersion => "bad_version",
            DropReason::LengthMismatch => "length_mismatch",
            DropReason::PositionTooShort => "position_too_short",
            DropReason::ChatTooShort => "chat_too_short",
            DropReason::EmptyCallsign => "empty_callsign",
            DropReason::NonFinitePosition => "non_finite_position",
            DropReason::ZeroPosition => "zero_position",
            DropReason::UnknownRelay => "unknown_relay",
            DropReason::AddressMismatch => "address_mismatch",
            DropReason::UnknownSender => "unknown_sender",
            DropReason::UnsupportedMsgId => "unsupported_msg_id",
            DropReason::TableFull => "table_full",
            DropReason::PerIpLimit => "per_ip_limit",
            DropReason::PeerAddress => "peer_address",
            DropReason::PositionOutOfRange => "position_out_of_range",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|&r| r == self).unwrap_or(0)
    }

    /// The reason for a codec error.
    pub fn from_error(e: &fgmp::Error) -> DropReason {
        use fgmp::Error as E;
        match e {
            E::Runt(_) | E::Truncated { .. } => DropReason::Runt,
            E::Oversize(_) => DropReason::Oversize,
            E::BadMagic(_) => DropReason::BadMagic,
            E::BadVersion(_) => DropReason::BadVersion,
            E::LengthMismatch { .. } => DropReason::LengthMismatch,
            E::PositionTooShort(_) => DropReason::PositionTooShort,
            E::ChatTooShort(_) => DropReason::ChatTooShort,
            E::EmptyCallsign | E::BadCallsign => DropReason::EmptyCallsign,
            E::NonFinitePosition => DropReason::NonFinitePosition,
            E::ZeroPosition => DropReason::ZeroPosition,
            E::ModelTooLong(_) | E::ChatTooLong(_) | E::Property(_) => DropReason::Runt,
        }
    }
}

/// All relay counters in one place.
#[derive(Debug, Default)]
pub struct Stats {
    /// Datagrams received.
    pub packets_in: AtomicU64,
    /// Bytes received.
    pub bytes_in: AtomicU64,
    /// Datagrams queued for sending.
    pub packets_out: AtomicU64,
    /// Bytes queued for sending.
    pub bytes_out: AtomicU64,
    /// Position datagrams accepted.
    pub positions: AtomicU64,
    /// Chat datagrams accepted.
    pub chats: AtomicU64,
    /// Pings answered.
    pub pings: AtomicU64,
    /// Pongs received (counted and dropped).
    pub pongs: AtomicU64,
    /// Datagrams accepted from relays.
    pub from_relays: AtomicU64,
    /// Datagrams sent to relays.
    pub to_relays: AtomicU64,
    /// Datagrams sent to crossfeed targets.
    pub to_crossfeeds: AtomicU64,
    /// Pilots that joined.
    pub pilots_joined: AtomicU64,
    /// Pilots dropped after going silent.
    pub pilots_expired: AtomicU64,
    /// Pilots replaced by a new callsign from the same address (also counted as joined).
    pub pilots_replaced: AtomicU64,
    /// Local pilots right now.
    pub pilots_local: AtomicU64,
    /// Remote pilots (learned from relays) right now.
    pub pilots_remote: AtomicU64,
    /// Relay peer or crossfeed names that did not resolve (counted by the resolver).
    pub peer_resolve_failures: AtomicU64,
    /// Relay peer or crossfeed names resolved to a first or a new address.
    pub peer_address_changes: AtomicU64,
    /// Telnet pilot lists sent (counted by the telnet listener).
    pub telnet_served: AtomicU64,
    /// Telnet connections closed unserved: their source had too many open.
    pub telnet_refused_per_ip: AtomicU64,
    /// Telnet connections closed unserved: too many open in total.
    pub telnet_refused_total: AtomicU64,
    /// Session events (for the tracker and the flight log) dropped: their reader
    /// fell behind and the log was full.
    pub session_events_dropped: AtomicU64,
    /// Pilot feed batches (sessions and positions for the tracker and the flight
    /// log) a subscriber that fell behind did not get.
    pub feed_batches_dropped: AtomicU64,
    /// Tracker messages queued (counted by the tracker link).
    pub tracker_queued: AtomicU64,
    /// Tracker messages the tracker acknowledged.
    pub tracker_acked: AtomicU64,
    /// Tracker messages dropped: the queue was full.
    pub tracker_dropped: AtomicU64,
    /// Tracker connections lost or refused (reconnects).
    pub tracker_reconnects: AtomicU64,
    /// Tracker messages waiting or unacknowledged now (gauge).
    pub tracker_backlog: AtomicU64,
    /// 1 while the tracker has identified the relay (gauge).
    pub tracker_connected: AtomicU64,
    drops: [AtomicU64; DropReason::ALL.len()],
}

impl Stats {
    /// Counts one dropped datagram.
    pub fn count_drop(&self, reason: DropReason) {
        self.drops[reason.index()].fetch_add(1, Relaxed);
    }

    /// Datagrams dropped for `reason` so far.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()].load(Relaxed)
    }

    /// All dropped datagrams.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// (name, value) for every counter, for telnet, HTTP and metrics exporters.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        let g = |c: &AtomicU64| c.load(Relaxed);
        let mut v = vec![
            ("packets_in", g(&self.packets_in)),
            ("bytes_in", g(&self.bytes_in)),
            ("packets_out", g(&self.packets_out)),
            ("bytes_out", g(&self.bytes_out)),
            ("positions", g(&self.positions)),
            ("chats", g(&self.chats)),
            ("pings", g(&self.pings)),
            ("pongs", g(&self.pongs)),
            ("from_relays", g(&self.from_relays)),
            ("to_relays", g(&self.to_relays)),
            ("to_crossfeeds", g(&self.to_crossfeeds)),
            ("pilots_joined", g(&self.pilots_joined)),
            ("pilots_expired", g(&self.pilots_expired)),
            ("pilots_replaced", g(&self.pilots_replaced)),
            ("pilots_local", g(&self.pilots_local)),
            ("pilots_remote", g(&self.pilots_remote)),
            ("peer_resolve_failures", g(&self.peer_resolve_failures)),
            ("peer_address_changes", g(&self.peer_address_changes)),
            ("telnet_served", g(&self.telnet_served)),
            ("telnet_refused_per_ip", g(&self.telnet_refused_per_ip)),
            ("telnet_refused_total", g(&self.telnet_refused_total)),
            ("session_events_dropped", g(&self.session_events_dropped)),
            ("feed_batches_dropped", g(&self.feed_batches_dropped)),
            ("tracker_queued", g(&self.tracker_queued)),
            ("tracker_acked", g(&self.tracker_acked)),
            ("tracker_dropped", g(&self.tracker_dropped)),
            ("tracker_reconnects", g(&self.tracker_reconnects)),
            ("tracker_backlog", g(&self.tracker_backlog)),
            ("tracker_connected", g(&self.tracker_connected)),
        ];
        for r in DropReason::ALL {
            v.push((r.name(), self.dropped(r)));
        }
        v
    }
}

/// Adds `n` to a counter.
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

pub(crate) fn set(c: &AtomicU64, n: u64) {
    c.store(n, Relaxed);
}
