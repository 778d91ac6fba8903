//! Every counter of the master in one place: per message type, per drop reason,
//! traffic totals and table gauges. Atomic so HTTP and metrics can read them live.

/// The master's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family the master's counters feed.
        pub const FAMILIES;
        RECEIVED_DATAGRAMS = Family::counter(
            "lobby_master_received_datagrams_total",
            "Datagrams the master received.",
        );
        RECEIVED_BYTES = Family::counter(
            "lobby_master_received_bytes_total",
            "Bytes the master received.",
        );
        SENT_DATAGRAMS = Family::counter(
            "lobby_master_sent_datagrams_total",
            "Datagrams the master sent.",
        );
        SENT_BYTES = Family::counter(
            "lobby_master_sent_bytes_total",
            "Bytes the master sent.",
        );
        HEARTBEATS = Family::counter(
            "lobby_master_heartbeats_total",
            "Heartbeats answered with a challenge.",
        );
        SERVERS_ADDED = Family::counter(
            "lobby_master_servers_added_total",
            "New servers registered.",
        );
        SERVERS_REFRESHED = Family::counter(
            "lobby_master_servers_refreshed_total",
            "Known servers refreshed by a valid info.",
        );
        SERVERS_EXPIRED = Family::counter(
            "lobby_master_servers_expired_total",
            "Servers dropped after server_ttl without a valid info.",
        );
        SHUTDOWNS_IGNORED = Family::counter(
            "lobby_master_shutdowns_ignored_total",
            "Shutdown messages (spoofable, ignored).",
        );
        SCANS = Family::counter(
            "lobby_master_scans_total",
            "Scan requests answered.",
        );
        LIST_PAGES = Family::counter(
            "lobby_master_list_pages_total",
            "Server-list datagrams sent.",
        );
        CACHED_PAGES = Family::counter(
            "lobby_master_cached_pages_total",
            "Server-list datagrams served from the page cache.",
        );
        FAKE_LISTS = Family::counter(
            "lobby_master_fake_lists_total",
            "Outdated clients sent the please-update entry.",
        );
        NAT_ANNOUNCES = Family::counter(
            "lobby_master_nat_announces_total",
            "NAT connect messages sent to servers.",
        );
        NAT_ANNOUNCES_LIMITED = Family::counter(
            "lobby_master_nat_announces_limited_total",
            "NAT announces not sent: the client was over its announces per second.",
        );
        INFO_QUERIES = Family::counter(
            "lobby_master_info_queries_total",
            "info queries answered with the update entry.",
        );
        ADMIN_CHALLENGES = Family::counter(
            "lobby_master_admin_challenges_total",
            "Admin challenges sent.",
        );
        ADMIN_COMMANDS = Family::counter(
            "lobby_master_admin_commands_total",
            "Authenticated admin commands.",
        );
        BAN_CHANGES = Family::counter(
            "lobby_master_ban_changes_total",
            "Admin commands that changed the ban list.",
        );
        RATE_EVICTIONS = Family::counter(
            "lobby_master_rate_evictions_total",
            "Per-source rate entries evicted to make room for a new source.",
        );
        DATAGRAMS_DROPPED = Family::counter(
            "lobby_master_datagrams_dropped_total",
            "Datagrams the master dropped, by reason.",
        )
        .label("reason")
        .label_note("each `drop_*` counter of `/stats` without its prefix");
        SERVERS_REGISTERED = Family::gauge(
            "lobby_master_servers_registered",
            "Servers in the master's table now, every gamedir.",
        );
        // Set by the binary from its snapshot of the table, and recorded by its UDP
        // workers per scan.
        SERVERS = Family::gauge(
            "lobby_master_servers",
            "Servers listed now, by gamedir (the 20 largest; the rest summed as (other)).",
        )
        .label("gamedir")
        .label_doc("`gamedir` (at most 20, then `(other)`)")
        .elsewhere();
        SCAN_PAGES = Family::histogram(
            "lobby_master_scan_reply_pages",
            "Reply datagrams (list pages) per scan request.",
        );
    }
}

use families::*;

telemetry::counters! {
    /// A counter of the master.
    pub enum Counter;
    /// The counters.
    pub struct Stats in FAMILIES;
    /// Datagrams received.
    PacketsIn => "packets_in", RECEIVED_DATAGRAMS;
    /// Bytes received.
    BytesIn => "bytes_in", RECEIVED_BYTES;
    /// Datagrams sent.
    PacketsOut => "packets_out", SENT_DATAGRAMS;
    /// Bytes sent.
    BytesOut => "bytes_out", SENT_BYTES;
    /// Heartbeats answered with a challenge.
    Heartbeats => "heartbeats", HEARTBEATS;
    /// New servers registered.
    ServersAdded => "servers_added", SERVERS_ADDED;
    /// Known servers refreshed by a valid info.
    ServersRefreshed => "servers_refreshed", SERVERS_REFRESHED;
    /// Servers dropped after server_ttl without a valid info.
    ServersExpired => "servers_expired", SERVERS_EXPIRED;
    /// Shutdown messages (spoofable, ignored).
    ShutdownsIgnored => "shutdowns_ignored", SHUTDOWNS_IGNORED;
    /// Scan requests answered.
    Scans => "scans", SCANS;
    /// Server-list datagrams sent.
    ListPages => "list_pages", LIST_PAGES;
    /// Server-list datagrams served from the page cache.
    CachedPages => "cached_pages", CACHED_PAGES;
    /// Outdated clients sent the please-update entry.
    FakeLists => "fake_lists", FAKE_LISTS;
    /// NAT connect messages sent to servers.
    NatAnnounces => "nat_announces", NAT_ANNOUNCES;
    /// info queries answered with the update entry.
    InfoQueries => "info_queries", INFO_QUERIES;
    /// Admin challenges sent.
    AdminChallenges => "admin_challenges", ADMIN_CHALLENGES;
    /// Authenticated admin commands.
    AdminCommands => "admin_commands", ADMIN_COMMANDS;
    /// Dropped: the source IP is banned.
    DropBanned => "drop_banned", DATAGRAMS_DROPPED["banned"];
    /// Dropped: not a master message.
    DropUnknown => "drop_unknown", DATAGRAMS_DROPPED["unknown"];
    /// Dropped: malformed heartbeat.
    DropBadHeartbeat => "drop_bad_heartbeat", DATAGRAMS_DROPPED["bad_heartbeat"];
    /// Dropped: malformed server info.
    DropBadInfo => "drop_bad_info", DATAGRAMS_DROPPED["bad_info"];
    /// Dropped: server version below the minimum.
    DropOldServer => "drop_old_server", DATAGRAMS_DROPPED["old_server"];
    /// Dropped: server info with a wrong or expired challenge.
    DropBadChallenge => "drop_bad_challenge", DATAGRAMS_DROPPED["bad_challenge"];
    /// Dropped: the source address has its quota of servers.
    DropQuotaSource => "drop_quota_source", DATAGRAMS_DROPPED["quota_source"];
    /// Dropped: a network around the source (IPv6 /56 or /48, IPv4 /24) has its
    /// multiple of the per-source quota.
    DropQuotaNetwork => "drop_quota_network", DATAGRAMS_DROPPED["quota_network"];
    /// Dropped: the table is full.
    DropQuotaGlobal => "drop_quota_global", DATAGRAMS_DROPPED["quota_global"];
    /// Dropped: server info whose address family the master does not list.
    DropWrongFamily => "drop_wrong_family", DATAGRAMS_DROPPED["wrong_family"];
    /// Dropped: malformed scan request.
    DropBadScan => "drop_bad_scan", DATAGRAMS_DROPPED["bad_scan"];
    /// Dropped: scan with a malformed filter value.
    DropBadFilter => "drop_bad_filter", DATAGRAMS_DROPPED["bad_filter"];
    /// Dropped: the client is over its request allowance.
    DropRateLimited => "drop_rate_limited", DATAGRAMS_DROPPED["rate_limited"];
    /// Per-source entries evicted (while still owing) to make room for a new source.
    RateEvictions => "rate_evictions", RATE_EVICTIONS;
    /// Dropped: the reply would exceed the client's reply byte budget.
    DropReplyBudget => "drop_reply_budget", DATAGRAMS_DROPPED["reply_budget"];
    /// NAT announces not sent: the client is over its NAT announces per second.
    NatAnnouncesLimited => "nat_announces_limited", NAT_ANNOUNCES_LIMITED;
    /// Dropped: malformed info query.
    DropBadQuery => "drop_bad_query", DATAGRAMS_DROPPED["bad_query"];
    /// Dropped: malformed admin message.
    DropBadAdmin => "drop_bad_admin", DATAGRAMS_DROPPED["bad_admin"];
    /// Dropped: admin command with a valid challenge and a wrong hash (the source is locked out), or no admins configured.
    DropAdminAuth => "drop_admin_auth", DATAGRAMS_DROPPED["admin_auth"];
    /// Dropped: admin message from a locked-out IPv4 address or IPv6 /64.
    DropAdminLocked => "drop_admin_locked", DATAGRAMS_DROPPED["admin_locked"];
    /// Dropped: admin message from outside admin_allow.
    DropAdminNotAllowed => "drop_admin_not_allowed", DATAGRAMS_DROPPED["admin_not_allowed"];
    /// Dropped: admin message over the source's admin allowance.
    DropAdminRateLimited => "drop_admin_rate_limited", DATAGRAMS_DROPPED["admin_rate_limited"];
    /// Dropped: admin command without a valid challenge for its source (not counted as an attempt).
    DropAdminBadChallenge => "drop_admin_bad_challenge", DATAGRAMS_DROPPED["admin_bad_challenge"];
    /// Admin commands that changed the ban list.
    BanChanges => "ban_changes", BAN_CHANGES;
    /// Servers registered now (gauge).
    Servers => "servers", SERVERS_REGISTERED;
}

impl Stats {
    /// Adds one (the same as `incr`).
    pub fn inc(&self, c: Counter) {
        self.incr(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_its_own_slot() {
        let s = Stats::default();
        for (i, &c) in Counter::ALL.iter().enumerate() {
            s.add(c, i as u64 + 1);
        }
        for (i, &c) in Counter::ALL.iter().enumerate() {
            assert_eq!(s.get(c), i as u64 + 1, "{}", c.name());
        }
        let names: std::collections::HashSet<_> = Counter::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Counter::ALL.len());
    }

    /// The families and series lobby exposed before the counters were declared
    /// through `telemetry` (from `crates/lobby/src/parts/metrics.rs`): a change to a
    /// name, help text, label or `/stats` key shows up here.
    #[test]
    fn families_and_series_match_the_frozen_copy() {
        assert_eq!(Stats::TABLE.summary(), include_str!("stats.frozen"));
    }
}
