//! Counters: one per drop reason, plus traffic totals. Atomic so the telnet,
//! HTTP and metrics readers can look at them while the engine runs. Each is
//! declared once, with its `/stats` key and Prometheus family (`telemetry`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The relay's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family the relay's counters feed.
        pub const FAMILIES;
        RECEIVED_DATAGRAMS = Family::counter(
            "lobby_relay_received_datagrams_total",
            "Datagrams the relay received.",
        );
        RECEIVED_BYTES = Family::counter(
            "lobby_relay_received_bytes_total",
            "Bytes the relay received.",
        );
        SENT_DATAGRAMS = Family::counter(
            "lobby_relay_sent_datagrams_total",
            "Datagrams the relay queued for sending.",
        );
        SENT_BYTES = Family::counter(
            "lobby_relay_sent_bytes_total",
            "Bytes the relay queued for sending.",
        );
        ACCEPTED_DATAGRAMS = Family::counter(
            "lobby_relay_accepted_datagrams_total",
            "Datagrams the relay accepted, by kind (position, chat, ping answered, pong).",
        )
        .label("kind");
        LINK_RECEIVED_DATAGRAMS = Family::counter(
            "lobby_relay_link_received_datagrams_total",
            "Datagrams accepted from linked relays.",
        );
        LINK_SENT_DATAGRAMS = Family::counter(
            "lobby_relay_link_sent_datagrams_total",
            "Datagrams sent to linked relays.",
        );
        CROSSFEED_SENT_DATAGRAMS = Family::counter(
            "lobby_relay_crossfeed_sent_datagrams_total",
            "Datagrams sent to crossfeed targets.",
        );
        PILOTS_JOINED = Family::counter(
            "lobby_relay_pilots_joined_total",
            "Pilots that joined the relay.",
        );
        PILOTS_EXPIRED = Family::counter(
            "lobby_relay_pilots_expired_total",
            "Pilots dropped after going silent.",
        );
        PILOTS_REPLACED = Family::counter(
            "lobby_relay_pilots_replaced_total",
            "Pilots replaced by a new callsign from the same address.",
        );
        PILOTS = Family::gauge(
            "lobby_relay_pilots",
            "Pilots in the relay's table now, local or remote (learned from linked relays).",
        )
        .label("origin");
        PEER_RESOLVE_FAILURES = Family::counter(
            "lobby_relay_peer_resolve_failures_total",
            "Relay peer or crossfeed names that did not resolve.",
        );
        PEER_ADDRESS_CHANGES = Family::counter(
            "lobby_relay_peer_address_changes_total",
            "Relay peer or crossfeed names resolved to a first or a new address.",
        );
        TELNET_LISTS_SERVED = Family::counter(
            "lobby_relay_telnet_lists_served_total",
            "Telnet pilot lists sent.",
        );
        TELNET_REFUSED = Family::counter(
            "lobby_relay_telnet_refused_total",
            "Telnet connections closed unserved, by cap (per_ip_cap, connection_cap).",
        )
        .label("reason");
        FEED_BATCHES_DROPPED = Family::counter(
            "lobby_relay_feed_batches_dropped_total",
            "Pilot feed batches (for the tracker and the flight log) a subscriber that fell behind did not get.",
        );
        TRACKER_MESSAGES_QUEUED = Family::counter(
            "lobby_relay_tracker_messages_queued_total",
            "Messages queued for the tracker (CONNECT, DISCONNECT, POSITION).",
        );
        TRACKER_MESSAGES_ACKED = Family::counter(
            "lobby_relay_tracker_messages_acked_total",
            "Tracker messages the tracker acknowledged.",
        );
        TRACKER_MESSAGES_DROPPED = Family::counter(
            "lobby_relay_tracker_messages_dropped_total",
            "Tracker messages dropped because the queue was full.",
        );
        TRACKER_RECONNECTS = Family::counter(
            "lobby_relay_tracker_reconnects_total",
            "Tracker connections lost or refused.",
        );
        TRACKER_BACKLOG_MESSAGES = Family::gauge(
            "lobby_relay_tracker_backlog_messages",
            "Tracker messages waiting or unacknowledged now.",
        );
        TRACKER_CONNECTED = Family::gauge(
            "lobby_relay_tracker_connected",
            "1 while the tracker has identified this relay.",
        );
        SESSION_EVENTS_DROPPED = Family::counter(
            "lobby_relay_session_events_dropped_total",
            "Pilot session events (for the tracker and the flight log) dropped because their reader fell behind.",
        );
        COPIES_WITHHELD = Family::counter(
            "lobby_relay_copies_withheld_total",
            "Copies not sent to a local pilot that had used its reply budget (reply_ratio bytes per byte it sent).",
        );
        SESSION_EVENTS_SHED = Family::counter(
            "lobby_relay_session_events_shed_total",
            "Pilot session events not passed to the tracker and the flight log: the pilot or its address had begun too many sessions (a model or callsign flip-flop).",
        );
        THINNED_DATAGRAMS = Family::counter(
            "lobby_relay_thinned_datagrams_total",
            "Position datagrams not sent to a local pilot because the sender was in a thinned distance tier (by tier, 0 nearest; [relay] tiers).",
        )
        .label("tier");
        THINNED_BYTES = Family::counter(
            "lobby_relay_thinned_bytes_total",
            "Bytes of the datagrams lobby_relay_thinned_datagrams_total counts, by tier.",
        )
        .label("tier");
        DATAGRAMS_DROPPED = Family::counter(
            "lobby_relay_datagrams_dropped_total",
            "Datagrams the relay dropped, by reason.",
        )
        .label("reason")
        .label_note("every relay drop reason");
        // Recorded by the binary's UDP workers, per datagram received.
        FANOUT = Family::histogram(
            "lobby_relay_fanout_datagrams",
            "Datagrams the relay sent for each datagram it received.",
        );
    }
}

use families::*;

telemetry::counters! {
    /// Why a datagram was not relayed. Every variant has its own counter.
    pub enum DropReason;
    /// The drop counters, one per [`DropReason`] (a part of [`Stats`]).
    pub struct Drops;
    /// Source IP is blacklisted.
    Blacklisted => "blacklisted", DATAGRAMS_DROPPED["blacklisted"];
    /// Shorter than the 32-byte header.
    Runt => "runt", DATAGRAMS_DROPPED["runt"];
    /// Over 1200 bytes.
    Oversize => "oversize", DATAGRAMS_DROPPED["oversize"];
    /// Neither `FGFS` nor `SFGF`.
    BadMagic => "bad_magic", DATAGRAMS_DROPPED["bad_magic"];
    /// Version is not exactly 0x00010001.
    BadVersion => "bad_version", DATAGRAMS_DROPPED["bad_version"];
    /// MsgLen differs from the datagram size.
    LengthMismatch => "length_mismatch", DATAGRAMS_DROPPED["length_mismatch"];
    /// Position message under 232 bytes.
    PositionTooShort => "position_too_short", DATAGRAMS_DROPPED["position_too_short"];
    /// Chat message under 33 bytes.
    ChatTooShort => "chat_too_short", DATAGRAMS_DROPPED["chat_too_short"];
    /// Empty callsign field.
    EmptyCallsign => "empty_callsign", DATAGRAMS_DROPPED["empty_callsign"];
    /// NaN or infinite position.
    NonFinitePosition => "non_finite_position", DATAGRAMS_DROPPED["non_finite_position"];
    /// Position (0, 0, 0).
    ZeroPosition => "zero_position", DATAGRAMS_DROPPED["zero_position"];
    /// `SFGF` from an address that is neither a relay nor whitelisted.
    UnknownRelay => "unknown_relay", DATAGRAMS_DROPPED["unknown_relay"];
    /// Known callsign from another source address.
    AddressMismatch => "address_mismatch", DATAGRAMS_DROPPED["address_mismatch"];
    /// Chat (or other non-position) from a callsign never seen with a position.
    UnknownSender => "unknown_sender", DATAGRAMS_DROPPED["unknown_sender"];
    /// Message ids a relay does not forward (2-6, 8, unknown).
    UnsupportedMsgId => "unsupported_msg_id", DATAGRAMS_DROPPED["unsupported_msg_id"];
    /// The pilot table is full.
    TableFull => "table_full", DATAGRAMS_DROPPED["table_full"];
    /// A new callsign from a source IPv4 address or IPv6 /64 that already has
    /// `max_pilots_per_ip` local pilots.
    PerIpLimit => "per_ip_limit", DATAGRAMS_DROPPED["per_ip_limit"];
    /// A new callsign from a network (IPv6 /56 or /48, IPv4 /24) whose sources
    /// together hold their multiple of `max_pilots_per_ip` ([`sansio::quota`]).
    PerNetworkLimit => "per_network_limit", DATAGRAMS_DROPPED["per_network_limit"];
    /// A new pilot over a relay link that already carries `max_pilots_per_relay`.
    PerRelayLimit => "per_relay_limit", DATAGRAMS_DROPPED["per_relay_limit"];
    /// A client (`FGFS`) datagram from the address of a configured relay or
    /// crossfeed target (it would be sent their copies twice).
    PeerAddress => "peer_address", DATAGRAMS_DROPPED["peer_address"];
    /// Position more than 100,000 km from the Earth's centre.
    PositionOutOfRange => "position_out_of_range", DATAGRAMS_DROPPED["position_out_of_range"];
}

impl DropReason {
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

telemetry::fields! {
    /// All relay counters in one place.
    pub struct Stats in FAMILIES {
        /// Datagrams received.
        pub packets_in => RECEIVED_DATAGRAMS;
        /// Bytes received.
        pub bytes_in => RECEIVED_BYTES;
        /// Datagrams queued for sending.
        pub packets_out => SENT_DATAGRAMS;
        /// Bytes queued for sending.
        pub bytes_out => SENT_BYTES;
        /// Position datagrams accepted.
        pub positions => ACCEPTED_DATAGRAMS["position"];
        /// Chat datagrams accepted.
        pub chats => ACCEPTED_DATAGRAMS["chat"];
        /// Pings answered.
        pub pings => ACCEPTED_DATAGRAMS["ping"];
        /// Pongs received (counted and dropped).
        pub pongs => ACCEPTED_DATAGRAMS["pong"];
        /// Datagrams accepted from relays.
        pub from_relays => LINK_RECEIVED_DATAGRAMS;
        /// Datagrams sent to relays.
        pub to_relays => LINK_SENT_DATAGRAMS;
        /// Datagrams sent to crossfeed targets.
        pub to_crossfeeds => CROSSFEED_SENT_DATAGRAMS;
        /// Pilots that joined.
        pub pilots_joined => PILOTS_JOINED;
        /// Pilots dropped after going silent.
        pub pilots_expired => PILOTS_EXPIRED;
        /// Pilots replaced by a new callsign from the same address (also counted as joined).
        pub pilots_replaced => PILOTS_REPLACED;
        /// Local pilots right now.
        pub pilots_local => PILOTS["local"];
        /// Remote pilots (learned from relays) right now.
        pub pilots_remote => PILOTS["remote"];
        /// Relay peer or crossfeed names that did not resolve (counted by the resolver).
        pub peer_resolve_failures => PEER_RESOLVE_FAILURES;
        /// Relay peer or crossfeed names resolved to a first or a new address.
        pub peer_address_changes => PEER_ADDRESS_CHANGES;
        /// Telnet pilot lists sent (counted by the telnet listener).
        pub telnet_served => TELNET_LISTS_SERVED;
        /// Telnet connections closed unserved: their source had too many open.
        pub telnet_refused_per_ip => TELNET_REFUSED["per_ip_cap"];
        /// Telnet connections closed unserved: too many open in total.
        pub telnet_refused_total => TELNET_REFUSED["connection_cap"];
        /// Session events (for the tracker and the flight log) dropped: their reader
        /// fell behind and the log was full.
        pub session_events_dropped => SESSION_EVENTS_DROPPED;
        /// Pilot feed batches (sessions and positions for the tracker and the flight
        /// log) a subscriber that fell behind did not get.
        pub feed_batches_dropped => FEED_BATCHES_DROPPED;
        /// Tracker messages queued (counted by the tracker link).
        pub tracker_queued => TRACKER_MESSAGES_QUEUED;
        /// Tracker messages the tracker acknowledged.
        pub tracker_acked => TRACKER_MESSAGES_ACKED;
        /// Tracker messages dropped: the queue was full.
        pub tracker_dropped => TRACKER_MESSAGES_DROPPED;
        /// Tracker connections lost or refused (reconnects).
        pub tracker_reconnects => TRACKER_RECONNECTS;
        /// Tracker messages waiting or unacknowledged now (gauge).
        pub tracker_backlog => TRACKER_BACKLOG_MESSAGES;
        /// 1 while the tracker has identified the relay (gauge).
        pub tracker_connected => TRACKER_CONNECTED;
        /// Copies not sent to a local pilot that had used its reply budget.
        pub copies_withheld => COPIES_WITHHELD;
        /// Session events not passed on (counted by the pilot feed): the pilot (its
        /// address and callsign) or its address had used its share of sessions.
        pub session_events_shed => SESSION_EVENTS_SHED;
        /// Position datagrams thinned in tier 0 (the nearest).
        pub thinned_tier0 => THINNED_DATAGRAMS["0"];
        /// Position datagrams thinned in tier 1.
        pub thinned_tier1 => THINNED_DATAGRAMS["1"];
        /// Position datagrams thinned in tier 2.
        pub thinned_tier2 => THINNED_DATAGRAMS["2"];
        /// Position datagrams thinned in tier 3.
        pub thinned_tier3 => THINNED_DATAGRAMS["3"];
        /// Bytes thinned in tier 0.
        pub thinned_bytes_tier0 => THINNED_BYTES["0"];
        /// Bytes thinned in tier 1.
        pub thinned_bytes_tier1 => THINNED_BYTES["1"];
        /// Bytes thinned in tier 2.
        pub thinned_bytes_tier2 => THINNED_BYTES["2"];
        /// Bytes thinned in tier 3.
        pub thinned_bytes_tier3 => THINNED_BYTES["3"];
    }
    tail drops: Drops;
}

impl Stats {
    /// Counts one dropped datagram.
    #[inline]
    pub fn count_drop(&self, reason: DropReason) {
        self.drops.incr(reason);
    }

    /// Counts the copies of one `len`-byte datagram thinned, per tier.
    pub fn count_thinned(&self, per_tier: &[u64; crate::tiers::MAX_TIERS], len: usize) {
        let counters = [
            (&self.thinned_tier0, &self.thinned_bytes_tier0),
            (&self.thinned_tier1, &self.thinned_bytes_tier1),
            (&self.thinned_tier2, &self.thinned_bytes_tier2),
            (&self.thinned_tier3, &self.thinned_bytes_tier3),
        ];
        for (&n, (d, b)) in per_tier.iter().zip(counters) {
            if n > 0 {
                add(d, n);
                add(b, n * len as u64);
            }
        }
    }

    /// Datagrams and bytes thinned so far, per tier (0 nearest).
    pub fn thinned(&self) -> [(u64, u64); crate::tiers::MAX_TIERS] {
        let g = |c: &AtomicU64| c.load(Relaxed);
        [
            (g(&self.thinned_tier0), g(&self.thinned_bytes_tier0)),
            (g(&self.thinned_tier1), g(&self.thinned_bytes_tier1)),
            (g(&self.thinned_tier2), g(&self.thinned_bytes_tier2)),
            (g(&self.thinned_tier3), g(&self.thinned_bytes_tier3)),
        ]
    }

    /// Datagrams dropped for `reason` so far.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops.get(reason)
    }

    /// All dropped datagrams.
    pub fn dropped_total(&self) -> u64 {
        self.drops.total()
    }
}

/// Adds `n` to a counter.
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

pub(crate) fn set(c: &AtomicU64, n: u64) {
    c.store(n, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The families and series lobby exposed before the counters were declared
    /// through `telemetry` (from `crates/lobby/src/parts/metrics.rs`): a change to a
    /// name, help text, label or `/stats` key shows up here.
    #[test]
    fn families_and_series_match_the_frozen_copy() {
        assert_eq!(Stats::TABLE.summary(), include_str!("stats.frozen"));
    }

    #[test]
    fn every_counter_has_its_own_slot() {
        let s = Stats::default();
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            for _ in 0..=i {
                s.count_drop(r);
            }
        }
        add(&s.tracker_connected, 7);
        let snap = s.snapshot();
        assert_eq!(snap.len(), Stats::TABLE.counters.len());
        assert_eq!(snap[28], ("tracker_connected", 7));
        for (i, r) in DropReason::ALL.into_iter().enumerate() {
            assert_eq!(snap[39 + i], (r.name(), i as u64 + 1));
            assert_eq!(s.dropped(r), i as u64 + 1);
        }
        assert_eq!(s.dropped_total(), (1..=21).sum::<u64>());
    }
}
