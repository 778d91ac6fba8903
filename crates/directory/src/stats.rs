//! The directory's counters: probes, pushes to the primary server (by outcome and
//! reason), resolution of names, refused zone transfers, and DNS over TCP's
//! refusals and early closes. Atomic, so the DNS
//! listeners, the prober, the pusher and `/stats` share one set without a lock.

/// The directory's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family the directory's counters feed.
        pub const FAMILIES;
        PROBES_FAILED = Family::counter(
            "lobby_dns_probes_failed_total",
            "Relay probes that got no answer.",
        );
        PUSHES = Family::counter(
            "lobby_dns_pushes_total",
            "RFC 2136 updates sent to the primary, by result (acked, refused, unanswered, bad_reply).",
        )
        .label("result");
        PUSHES_OVER_TCP = Family::counter(
            "lobby_dns_pushes_over_tcp_total",
            "Updates sent over TCP because they do not fit a UDP message.",
        );
        PUSH_RETRIES = Family::counter(
            "lobby_dns_push_retries_total",
            "Retries after a failed push.",
        );
        PUSH_REFRESH_MISMATCHES = Family::counter(
            "lobby_dns_push_refresh_mismatches_total",
            "Refreshes that found the primary's records differing from the published ones.",
        );
        PUSH_REFRESH_FAILURES = Family::counter(
            "lobby_dns_push_refresh_failures_total",
            "Refreshes that could not read the primary's records.",
        );
        RESOLVE_FAILURES = Family::counter(
            "lobby_dns_resolve_failures_total",
            "Host names that did not resolve, by target (push, relay).",
        )
        .label("target");
        ZONE_TRANSFERS = Family::counter(
            "lobby_dns_zone_transfers_total",
            "Zone transfer requests, by result (allowed, refused_unsigned, refused_bad_tsig).",
        )
        .label("result");
        TCP_CONNECTIONS = Family::counter(
            "lobby_dns_tcp_connections_total",
            "DNS TCP connections accepted within the caps.",
        );
        TCP_REFUSED = Family::counter(
            "lobby_dns_tcp_refused_total",
            "DNS TCP connections closed at accept, by cap (connection_cap, per_ip_cap).",
        )
        .label("reason");
        TCP_ACCEPT_ERRORS = Family::counter(
            "lobby_dns_tcp_accept_errors_total",
            "Failed DNS TCP accepts (descriptor table full, reset before accept).",
        );
        TCP_CLOSED = Family::counter(
            "lobby_dns_tcp_closed_total",
            "DNS TCP connections closed by lobby, by reason (idle, read_timeout, write_timeout, query_cap, malformed, evicted).",
        )
        .label("reason");
        UDP_OVER_BUDGET = Family::counter(
            "lobby_dns_udp_over_budget_total",
            "DNS queries over UDP past their source's budget (udp_rate, udp_burst), by what was sent back (dropped: nothing; truncated: an empty answer with TC set, every second one, so a resolver sharing the address retries over TCP).",
        )
        .label("answer");
        // Set by the binary from its snapshot, and recorded by its prober.
        RELAYS = Family::gauge("lobby_dns_relays", "Published relays by health (up, down).")
            .label("state")
            .label_doc("`state`: up, down")
            .elsewhere();
        ZONE_SERIAL = Family::gauge("lobby_dns_zone_serial", "The SOA serial served now.")
            .elsewhere();
        PROBE_RTT = Family::histogram(
            "lobby_dns_probe_rtt_seconds",
            "Round trip of the directory's probe to a relay that answered.",
        );
    }
}

use families::*;

telemetry::counters! {
    /// What is counted. Every variant has its own counter in `/stats`.
    pub enum Counter;
    /// The counters.
    pub struct Stats in FAMILIES;
    /// A relay did not answer a probe.
    ProbeFailed => "probe_failed", PROBES_FAILED;
    /// An RFC 2136 UPDATE the primary acknowledged (NOERROR, signature valid).
    PushAcked => "push_acked", PUSHES["acked"];
    /// An UPDATE the primary answered with an error RCODE (NOTAUTH, REFUSED, ...).
    PushRefused => "push_refused", PUSHES["refused"];
    /// An UPDATE that got no answer (timeout, unreachable, connection failed).
    PushUnanswered => "push_unanswered", PUSHES["unanswered"];
    /// An answer that was not a valid reply (bad TSIG on a NOERROR, garbage).
    PushBadReply => "push_bad_reply", PUSHES["bad_reply"];
    /// An UPDATE sent over TCP because it does not fit a UDP message.
    PushTcp => "push_tcp", PUSHES_OVER_TCP;
    /// A retry after a failed push.
    PushRetry => "push_retry", PUSH_RETRIES;
    /// A refresh found the primary's records differing from the published ones.
    PushRefreshMismatch => "push_refresh_mismatch", PUSH_REFRESH_MISMATCHES;
    /// A refresh could not read the primary's records.
    PushRefreshFailed => "push_refresh_failed", PUSH_REFRESH_FAILURES;
    /// The push target's host name did not resolve.
    PushResolveFailed => "push_resolve_failed", RESOLVE_FAILURES["push"];
    /// A relay's host name (to probe) did not resolve.
    RelayResolveFailed => "relay_resolve_failed", RESOLVE_FAILURES["relay"];
    /// A zone transfer that was allowed (listed source or valid TSIG).
    AxfrAllowed => "axfr_allowed", ZONE_TRANSFERS["allowed"];
    /// A zone transfer refused: unsigned, from a source not on the allow list.
    AxfrRefusedUnsigned => "axfr_refused_unsigned", ZONE_TRANSFERS["refused_unsigned"];
    /// A zone transfer refused: TSIG with an unknown key, a bad MAC or a bad time.
    AxfrRefusedBadTsig => "axfr_refused_bad_tsig", ZONE_TRANSFERS["refused_bad_tsig"];
    /// A DNS TCP connection accepted within the caps.
    TcpAccepted => "tcp_accepted", TCP_CONNECTIONS;
    /// A DNS TCP connection closed at accept: `max_tcp_connections` are open.
    TcpRefusedTotal => "tcp_refused_connection_cap", TCP_REFUSED["connection_cap"];
    /// A DNS TCP connection closed at accept: its source has `max_tcp_per_ip` open.
    TcpRefusedPerIp => "tcp_refused_per_ip_cap", TCP_REFUSED["per_ip_cap"];
    /// A DNS TCP accept failed.
    TcpAcceptErrors => "tcp_accept_errors", TCP_ACCEPT_ERRORS;
    /// No query began within `tcp_idle_timeout`.
    TcpIdleTimeout => "tcp_idle_timeouts", TCP_CLOSED["idle"];
    /// A query, once begun, did not arrive whole within `tcp_idle_timeout`.
    TcpReadTimeout => "tcp_read_timeouts", TCP_CLOSED["read_timeout"];
    /// An answer could not be written within `tcp_idle_timeout`.
    TcpWriteTimeout => "tcp_write_timeouts", TCP_CLOSED["write_timeout"];
    /// The connection carried its most queries (`tcp::MAX_QUERIES_PER_CONNECTION`).
    TcpQueryCap => "tcp_query_cap", TCP_CLOSED["query_cap"];
    /// A message that does not decode (answered FORMERR when it has a header).
    TcpMalformed => "tcp_malformed", TCP_CLOSED["malformed"];
    /// Closed while waiting for a query, for a new connection at `max_tcp_connections`.
    TcpEvicted => "tcp_evicted", TCP_CLOSED["evicted"];
    /// A UDP query past its source's budget, not answered.
    UdpDropped => "udp_over_budget_dropped", UDP_OVER_BUDGET["dropped"];
    /// A UDP query past its source's budget, answered empty with TC set.
    UdpTruncated => "udp_over_budget_truncated", UDP_OVER_BUDGET["truncated"];
}

impl Stats {
    /// Adds one to `c` (the same as `incr`).
    pub fn count(&self, c: Counter) {
        self.incr(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_its_own_slot_and_name() {
        let s = Stats::default();
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            for _ in 0..=i {
                s.count(*c);
            }
        }
        let snap = s.snapshot();
        let mut names: Vec<_> = snap.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Counter::ALL.len());
        for (i, (_, v)) in snap.iter().enumerate() {
            assert_eq!(*v, i as u64 + 1);
        }
    }

    /// The families and series lobby exposed before the counters were declared
    /// through `telemetry` (from `crates/lobby/src/parts/metrics.rs`): a change to a
    /// name, help text, label or `/stats` key shows up here.
    #[test]
    fn families_and_series_match_the_frozen_copy() {
        assert_eq!(Stats::TABLE.summary(), include_str!("stats.frozen"));
    }
}
