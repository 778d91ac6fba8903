//! Every counter of the master in one place: per message type, per drop reason,
//! traffic totals and table gauges. Atomic so HTTP and metrics can read them live.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

macro_rules! counters {
    ($($name:ident => $text:literal, $doc:literal;)*) => {
        /// A counter of the master.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Counter { $(#[doc = $doc] $name,)* }

        impl Counter {
            /// Every counter, in display order.
            pub const ALL: &'static [Counter] = &[$(Counter::$name,)*];

            /// Stable snake_case name for logs, HTTP and metrics.
            pub fn name(self) -> &'static str {
                match self { $(Counter::$name => $text,)* }
            }
        }
    };
}

counters! {
    PacketsIn => "packets_in", "Datagrams received.";
    BytesIn => "bytes_in", "Bytes received.";
    PacketsOut => "packets_out", "Datagrams sent.";
    BytesOut => "bytes_out", "Bytes sent.";
    Heartbeats => "heartbeats", "Heartbeats answered with a challenge.";
    ServersAdded => "servers_added", "New servers registered.";
    ServersRefreshed => "servers_refreshed", "Known servers refreshed by a valid info.";
    ServersExpired => "servers_expired", "Servers dropped after server_ttl without a valid info.";
    ShutdownsIgnored => "shutdowns_ignored", "Shutdown messages (spoofable, ignored).";
    Scans => "scans", "Scan requests answered.";
    ListPages => "list_pages", "Server-list datagrams sent.";
    CachedPages => "cached_pages", "Server-list datagrams served from the page cache.";
    FakeLists => "fake_lists", "Outdated clients sent the please-update entry.";
    NatAnnounces => "nat_announces", "NAT connect messages sent to servers.";
    InfoQueries => "info_queries", "info queries answered with the update entry.";
    AdminChallenges => "admin_challenges", "Admin challenges sent.";
    AdminCommands => "admin_commands", "Authenticated admin commands.";
    DropBanned => "drop_banned", "Dropped: the source IP is banned.";
    DropUnknown => "drop_unknown", "Dropped: not a master message.";
    DropBadHeartbeat => "drop_bad_heartbeat", "Dropped: malformed heartbeat.";
    DropBadInfo => "drop_bad_info", "Dropped: malformed server info.";
    DropOldServer => "drop_old_server", "Dropped: server version below the minimum.";
    DropBadChallenge => "drop_bad_challenge", "Dropped: server info with a wrong or expired challenge.";
    DropQuotaSource => "drop_quota_source", "Dropped: the source address has its quota of servers.";
    DropQuotaGlobal => "drop_quota_global", "Dropped: the table is full.";
    DropWrongFamily => "drop_wrong_family", "Dropped: server info whose address family the master does not list.";
    DropBadScan => "drop_bad_scan", "Dropped: malformed scan request.";
    DropBadFilter => "drop_bad_filter", "Dropped: scan with a malformed filter value.";
    DropRateLimited => "drop_rate_limited", "Dropped: the client is over its request allowance.";
    RateEvictions => "rate_evictions", "Per-source entries evicted (while still owing) to make room for a new source.";
    DropReplyBudget => "drop_reply_budget", "Dropped: the reply would exceed the client's reply byte budget.";
    NatAnnouncesLimited => "nat_announces_limited", "NAT announces not sent: the client is over its NAT announces per second.";
    DropBadQuery => "drop_bad_query", "Dropped: malformed info query.";
    DropBadAdmin => "drop_bad_admin", "Dropped: malformed admin message.";
    DropAdminAuth => "drop_admin_auth", "Dropped: admin command with a valid challenge and a wrong hash (the source is locked out), or no admins configured.";
    DropAdminLocked => "drop_admin_locked", "Dropped: admin message from a locked-out IPv4 address or IPv6 /64.";
    DropAdminNotAllowed => "drop_admin_not_allowed", "Dropped: admin message from outside admin_allow.";
    DropAdminRateLimited => "drop_admin_rate_limited", "Dropped: admin message over the source's admin allowance.";
    DropAdminBadChallenge => "drop_admin_bad_challenge", "Dropped: admin command without a valid challenge for its source (not counted as an attempt).";
    BanChanges => "ban_changes", "Admin commands that changed the ban list.";
    Servers => "servers", "Servers registered now (gauge).";
}

/// The counters.
#[derive(Debug)]
pub struct Stats {
    values: Vec<AtomicU64>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            values: Counter::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Stats {
    fn slot(&self, c: Counter) -> &AtomicU64 {
        // ALL lists every variant in declaration order, so the discriminant indexes it.
        &self.values[c as usize]
    }

    /// Adds `n`.
    pub fn add(&self, c: Counter, n: u64) {
        self.slot(c).fetch_add(n, Relaxed);
    }

    /// Adds one.
    pub fn inc(&self, c: Counter) {
        self.add(c, 1);
    }

    /// Sets a gauge.
    pub fn set(&self, c: Counter, v: u64) {
        self.slot(c).store(v, Relaxed);
    }

    /// Reads one counter.
    pub fn get(&self, c: Counter) -> u64 {
        self.slot(c).load(Relaxed)
    }

    /// (name, value) of every counter.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        Counter::ALL
            .iter()
            .map(|&c| (c.name(), self.get(c)))
            .collect()
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
}
