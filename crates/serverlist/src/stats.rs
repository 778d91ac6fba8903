//! The server list's counters (`/stats` → `list`, `/metrics` `lobby_list_*`),
//! declared once (`telemetry`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The list's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family of the server list.
        pub const FAMILIES;
        PROBES = Family::counter(
            "lobby_list_probes_total",
            "Probes of listed servers ended, by result (answered, silent: no valid answer within the probe's tries).",
        )
        .label("result");
        DATAGRAMS = Family::counter("lobby_list_probe_datagrams_total", "Datagrams the prober sent.");
        BYTES = Family::counter("lobby_list_probe_bytes_total", "Bytes the prober sent.");
        DROPPED = Family::counter(
            "lobby_list_dropped_total",
            "Datagrams the prober dropped, by reason (unsolicited: from an address with no probe in flight).",
        )
        .label("reason");
        DEFERRED = Family::counter(
            "lobby_list_probes_deferred_total",
            "Times a due probe waited for the probe rate or the in-flight cap.",
        );
        ENTRIES = Family::gauge("lobby_list_entries", "Entries the list knows (curated, and kept until pruned).");
        PUBLISHED = Family::gauge("lobby_list_published", "Curated addresses published now.");
        UNRESOLVED = Family::gauge("lobby_list_unresolved", "Source host names that did not resolve at the last try.");
        REFUSED = Family::gauge("lobby_list_sources_refused", "Source files refused at the last reading (each keeps its previous copy).");
        SKIPPED = Family::gauge("lobby_list_sources_skipped", "Source entries skipped at the last reading (each named in the log; the rest of its file is read).");
        REG_REQUESTS = Family::counter(
            "lobby_list_registration_requests_total",
            "Self-registration requests (POST /api/servers/register), by answer (accepted: 202, pending, and a token; invalid: 400; exists: 409; banned: 403; limited: 429, a cap of the asking network, the address, its IP or the tables).",
        )
        .label("answer");
        REG_CHECKS = Family::counter(
            "lobby_list_registration_checks_total",
            "Pending addresses asked for their token: one check per address every 15 s however many registrations name it.",
        );
        REG_ENDED = Family::counter(
            "lobby_list_registrations_ended_total",
            "Pending registrations ended, by how (admitted: the server showed its token; expired: not within 10 minutes; superseded: another registration of its address and gamedir was admitted).",
        )
        .label("how");
        REG_OTHER_GAME = Family::counter(
            "lobby_list_registered_other_game_total",
            "Probe answers from a self-registered address naming another gamedir than it was admitted for: not counted as seen, so it leaves that game's list after the grace.",
        );
        REG_HELD = Family::gauge("lobby_list_registrations", "Self-registrations held now, by state (pending, registered).")
            .label("state");
    }
}

telemetry::fields! {
    /// The list's counters.
    pub struct ListStats in families::FAMILIES {
        /// Probes answered.
        pub answered => families::PROBES["answered"];
        /// Probes silent.
        pub silent => families::PROBES["silent"];
        /// Datagrams sent.
        pub datagrams_out => families::DATAGRAMS;
        /// Bytes sent.
        pub bytes_out => families::BYTES;
        /// Datagrams from addresses not probed.
        pub unsolicited => families::DROPPED["unsolicited"];
        /// Due probes that waited.
        pub deferred => families::DEFERRED;
        /// Entries known.
        pub entries => families::ENTRIES;
        /// Addresses published.
        pub published => families::PUBLISHED;
        /// Names unresolved.
        pub unresolved => families::UNRESOLVED;
        /// Files refused.
        pub sources_refused => families::REFUSED;
        /// Entries skipped.
        pub sources_skipped => families::SKIPPED;
        /// Registration requests answered 202.
        pub register_accepted => families::REG_REQUESTS["accepted"];
        /// Registration requests answered 400.
        pub register_invalid => families::REG_REQUESTS["invalid"];
        /// Registration requests answered 409.
        pub register_exists => families::REG_REQUESTS["exists"];
        /// Registration requests answered 403.
        pub register_banned => families::REG_REQUESTS["banned"];
        /// Registration requests answered 429.
        pub register_limited => families::REG_REQUESTS["limited"];
        /// Pending addresses checked.
        pub registration_checks => families::REG_CHECKS;
        /// Pending registrations admitted by proof.
        pub registrations_admitted => families::REG_ENDED["admitted"];
        /// Pending registrations expired.
        pub registrations_expired => families::REG_ENDED["expired"];
        /// Pending registrations ended by another's admission.
        pub registrations_superseded => families::REG_ENDED["superseded"];
        /// Answers from registered addresses naming another game.
        pub registered_other_game => families::REG_OTHER_GAME;
        /// Registrations pending now.
        pub registrations_pending => families::REG_HELD["pending"];
        /// Servers registered now.
        pub registrations_registered => families::REG_HELD["registered"];
    }
}

impl ListStats {
    /// Copies the prober's running counts.
    pub fn set_prober(&self, c: &crate::prober::ProberCounts) {
        self.answered.store(c.answered, Relaxed);
        self.silent.store(c.silent, Relaxed);
        self.datagrams_out.store(c.datagrams_out, Relaxed);
        self.bytes_out.store(c.bytes_out, Relaxed);
        self.unsolicited.store(c.unsolicited, Relaxed);
        self.deferred.store(c.deferred, Relaxed);
    }

    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Relaxed);
    }

    /// Sets a gauge.
    pub fn set(gauge: &AtomicU64, v: usize) {
        gauge.store(v as u64, Relaxed);
    }
}
