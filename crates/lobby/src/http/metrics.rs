//! `GET /metrics`: the Prometheus text exposition (format 0.0.4) through `metrics` and
//! `metrics-exporter-prometheus`.
//!
//! - **Counters** are the engines' own atomic counters (the ones `/stats` and the
//!   telnet `# stats:` line carry), set absolutely at scrape time: the engines stay
//!   free of any metrics code and keep one source of truth.
//! - **Gauges** (pilots local/remote, servers per gamedir, relays up/down, open
//!   connections and streams) are set at scrape time from the same counters and from
//!   the API's snapshot (at most a second old).
//! - **Histograms** are recorded where the event happens: the UDP workers (relay
//!   fan-out per datagram, master scan reply pages), the DNS prober (probe round
//!   trip) and the HTTP stack (request time).
//!
//! Every family, its type and its help text is listed once in [`FAMILIES`]; the
//! mapping from `/stats` keys to families is [`relay_series`], [`master_series`],
//! [`dns_series`] and [`http_series`], and a test checks that every key has one.

use crate::http::Sources;
use crate::lifecycle::lock;
use crate::recorder::{DNS_PROBE_RTT, HTTP_REQUEST_TIME, MASTER_SCAN_PAGES, RELAY_FANOUT};
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use std::collections::HashMap;

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (name ends in `_total`).
    Counter,
    /// Goes up and down.
    Gauge,
    /// Observations in buckets.
    Histogram,
}

/// One metric family: name, type, help text.
pub struct Family {
    /// The exposed name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// `# HELP` text.
    pub help: &'static str,
}

const fn fam(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

use Kind::{Counter as C, Gauge as G, Histogram as H};

/// Every family `/metrics` exposes.
pub const FAMILIES: &[Family] = &[
    fam(
        "lobby_build_info",
        G,
        "Always 1; the version of the running lobby as a label.",
    ),
    // relay
    fam(
        "lobby_relay_received_datagrams_total",
        C,
        "Datagrams the relay received.",
    ),
    fam(
        "lobby_relay_received_bytes_total",
        C,
        "Bytes the relay received.",
    ),
    fam(
        "lobby_relay_sent_datagrams_total",
        C,
        "Datagrams the relay queued for sending.",
    ),
    fam(
        "lobby_relay_sent_bytes_total",
        C,
        "Bytes the relay queued for sending.",
    ),
    fam(
        "lobby_relay_accepted_datagrams_total",
        C,
        "Datagrams the relay accepted, by kind (position, chat, ping answered, pong).",
    ),
    fam(
        "lobby_relay_link_received_datagrams_total",
        C,
        "Datagrams accepted from linked relays.",
    ),
    fam(
        "lobby_relay_link_sent_datagrams_total",
        C,
        "Datagrams sent to linked relays.",
    ),
    fam(
        "lobby_relay_crossfeed_sent_datagrams_total",
        C,
        "Datagrams sent to crossfeed targets.",
    ),
    fam(
        "lobby_relay_pilots_joined_total",
        C,
        "Pilots that joined the relay.",
    ),
    fam(
        "lobby_relay_pilots_expired_total",
        C,
        "Pilots dropped after going silent.",
    ),
    fam(
        "lobby_relay_pilots_replaced_total",
        C,
        "Pilots replaced by a new callsign from the same address.",
    ),
    fam(
        "lobby_relay_pilots",
        G,
        "Pilots in the relay's table now, local or remote (learned from linked relays).",
    ),
    fam(
        "lobby_relay_peer_resolve_failures_total",
        C,
        "Relay peer or crossfeed names that did not resolve.",
    ),
    fam(
        "lobby_relay_peer_address_changes_total",
        C,
        "Relay peer or crossfeed names resolved to a first or a new address.",
    ),
    fam(
        "lobby_relay_telnet_lists_served_total",
        C,
        "Telnet pilot lists sent.",
    ),
    fam(
        "lobby_relay_telnet_refused_total",
        C,
        "Telnet connections closed unserved, by cap (per_ip_cap, connection_cap).",
    ),
    fam("lobby_relay_feed_batches_dropped_total", C, "Pilot feed batches (for the tracker and the flight log) a subscriber that fell behind did not get."),
    fam("lobby_relay_tracker_messages_queued_total", C, "Messages queued for the tracker (CONNECT, DISCONNECT, POSITION)."),
    fam("lobby_relay_tracker_messages_acked_total", C, "Tracker messages the tracker acknowledged."),
    fam("lobby_relay_tracker_messages_dropped_total", C, "Tracker messages dropped because the queue was full."),
    fam("lobby_relay_tracker_reconnects_total", C, "Tracker connections lost or refused."),
    fam("lobby_relay_tracker_backlog_messages", G, "Tracker messages waiting or unacknowledged now."),
    fam("lobby_relay_tracker_connected", G, "1 while the tracker has identified this relay."),
    fam(
        "lobby_relay_session_events_dropped_total",
        C,
        "Pilot session events (for the tracker and the flight log) dropped because their reader fell behind.",
    ),
    fam(
        "lobby_relay_datagrams_dropped_total",
        C,
        "Datagrams the relay dropped, by reason.",
    ),
    fam(
        RELAY_FANOUT,
        H,
        "Datagrams the relay sent for each datagram it received.",
    ),
    // master
    fam(
        "lobby_master_received_datagrams_total",
        C,
        "Datagrams the master received.",
    ),
    fam(
        "lobby_master_received_bytes_total",
        C,
        "Bytes the master received.",
    ),
    fam(
        "lobby_master_sent_datagrams_total",
        C,
        "Datagrams the master sent.",
    ),
    fam("lobby_master_sent_bytes_total", C, "Bytes the master sent."),
    fam(
        "lobby_master_heartbeats_total",
        C,
        "Heartbeats answered with a challenge.",
    ),
    fam(
        "lobby_master_servers_added_total",
        C,
        "New servers registered.",
    ),
    fam(
        "lobby_master_servers_refreshed_total",
        C,
        "Known servers refreshed by a valid info.",
    ),
    fam(
        "lobby_master_servers_expired_total",
        C,
        "Servers dropped after server_ttl without a valid info.",
    ),
    fam(
        "lobby_master_shutdowns_ignored_total",
        C,
        "Shutdown messages (spoofable, ignored).",
    ),
    fam("lobby_master_scans_total", C, "Scan requests answered."),
    fam(
        "lobby_master_list_pages_total",
        C,
        "Server-list datagrams sent.",
    ),
    fam(
        "lobby_master_cached_pages_total",
        C,
        "Server-list datagrams served from the page cache.",
    ),
    fam(
        "lobby_master_fake_lists_total",
        C,
        "Outdated clients sent the please-update entry.",
    ),
    fam(
        "lobby_master_nat_announces_total",
        C,
        "NAT connect messages sent to servers.",
    ),
    fam(
        "lobby_master_nat_announces_limited_total",
        C,
        "NAT announces not sent: the client was over its announces per second.",
    ),
    fam(
        "lobby_master_info_queries_total",
        C,
        "info queries answered with the update entry.",
    ),
    fam(
        "lobby_master_admin_challenges_total",
        C,
        "Admin challenges sent.",
    ),
    fam(
        "lobby_master_admin_commands_total",
        C,
        "Authenticated admin commands.",
    ),
    fam(
        "lobby_master_ban_changes_total",
        C,
        "Admin commands that changed the ban list.",
    ),
    fam(
        "lobby_master_rate_evictions_total",
        C,
        "Per-source rate entries evicted to make room for a new source.",
    ),
    fam(
        "lobby_master_datagrams_dropped_total",
        C,
        "Datagrams the master dropped, by reason.",
    ),
    fam(
        "lobby_master_servers_registered",
        G,
        "Servers in the master's table now, every gamedir.",
    ),
    fam(
        "lobby_master_servers",
        G,
        "Servers listed now, by gamedir (the 20 largest; the rest summed as (other)).",
    ),
    fam(
        MASTER_SCAN_PAGES,
        H,
        "Reply datagrams (list pages) per scan request.",
    ),
    // dns
    fam(
        "lobby_dns_probes_failed_total",
        C,
        "Relay probes that got no answer.",
    ),
    fam(
        "lobby_dns_pushes_total",
        C,
        "RFC 2136 updates sent to the primary, by result (acked, refused, unanswered, bad_reply).",
    ),
    fam(
        "lobby_dns_pushes_over_tcp_total",
        C,
        "Updates sent over TCP because they do not fit a UDP message.",
    ),
    fam(
        "lobby_dns_push_retries_total",
        C,
        "Retries after a failed push.",
    ),
    fam(
        "lobby_dns_push_refresh_mismatches_total",
        C,
        "Refreshes that found the primary's records differing from the published ones.",
    ),
    fam(
        "lobby_dns_push_refresh_failures_total",
        C,
        "Refreshes that could not read the primary's records.",
    ),
    fam(
        "lobby_dns_resolve_failures_total",
        C,
        "Host names that did not resolve, by target (push, relay).",
    ),
    fam(
        "lobby_dns_zone_transfers_total",
        C,
        "Zone transfer requests, by result (allowed, refused_unsigned, refused_bad_tsig).",
    ),
    fam(
        "lobby_dns_relays",
        G,
        "Published relays by health (up, down).",
    ),
    fam("lobby_dns_zone_serial", G, "The SOA serial served now."),
    fam(
        DNS_PROBE_RTT,
        H,
        "Round trip of the directory's probe to a relay that answered.",
    ),
    // http
    fam(
        "lobby_http_connections_total",
        C,
        "HTTP connections accepted.",
    ),
    fam(
        "lobby_http_open_connections",
        G,
        "HTTP connections open now.",
    ),
    fam(
        "lobby_http_open_streams",
        G,
        "Pilot streams (Server-Sent Events) open now.",
    ),
    fam("lobby_http_requests_total", C, "HTTP requests answered."),
    fam(
        "lobby_http_connections_refused_total",
        C,
        "HTTP connections refused at accept, by cap (connection_cap, per_ip_cap).",
    ),
    fam(
        "lobby_http_accept_errors_total",
        C,
        "Failed accepts (descriptor table full, reset before accept).",
    ),
    fam(
        "lobby_http_timeouts_total",
        C,
        "HTTP connections or requests cut off, by timer (header, idle, connection, request).",
    ),
    fam(
        "lobby_http_rejected_requests_total",
        C,
        "HTTP requests refused, by reason (body_too_large, headers_too_large, bad_request).",
    ),
    fam(
        HTTP_REQUEST_TIME,
        H,
        "Time from a request to its response head, by status code.",
    ),
    // history
    fam("lobby_history_dropped_total", C, "Flight log inputs dropped because the writer's queue was full, by what (report, server_sample)."),
    fam("lobby_history_rows_written_total", C, "Flight log database operations written."),
    fam("lobby_history_write_errors_total", C, "Flight log batches the database refused (their operations lost)."),
    fam("lobby_history_flights_open", G, "Flights open in the flight log now."),
    fam("lobby_history_flights_over_cap_total", C, "Flights not recorded: too many open at once."),
    fam("lobby_history_flights_pruned_total", C, "Flights deleted by retention."),
    // tracker server
    fam("lobby_tracker_connections_total", C, "Tracker connections accepted."),
    fam("lobby_tracker_refused_total", C, "Tracker connections refused, by reason (connection_cap, not_allowed)."),
    fam("lobby_tracker_messages_total", C, "Tracker messages acknowledged."),
    fam("lobby_tracker_lines_total", C, "Tracker lines recorded."),
    fam("lobby_tracker_fatal_closes_total", C, "Tracker connections closed on a line fgtracker treats as fatal."),
    fam("lobby_tracker_relays_connected", G, "Relays identified and connected to the tracker now."),
    // admin API
    fam("lobby_admin_requests_total", C, "Admin API requests answered after authentication."),
    fam("lobby_admin_changes_total", C, "List changes applied through the admin API."),
    fam("lobby_admin_refused_total", C, "Admin API requests refused, by reason (source, token)."),
    fam("lobby_admin_save_failures_total", C, "Admin changes not made because the state file could not be written."),
    // process
    fam(
        "lobby_worker_restarts_total",
        C,
        "UDP worker threads restarted after a panic, by part.",
    ),
];

/// One series: family, and at most one label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Series {
    /// Family name (in [`FAMILIES`]).
    pub family: &'static str,
    /// (label, value), if the family has a label.
    pub label: Option<(&'static str, &'static str)>,
}

const fn plain(family: &'static str) -> Series {
    Series {
        family,
        label: None,
    }
}

const fn labelled(family: &'static str, label: &'static str, value: &'static str) -> Series {
    Series {
        family,
        label: Some((label, value)),
    }
}

/// The series of a relay counter (`relay::Stats::snapshot` key).
pub fn relay_series(key: &'static str) -> Series {
    let accepted = |k| labelled("lobby_relay_accepted_datagrams_total", "kind", k);
    match key {
        "packets_in" => plain("lobby_relay_received_datagrams_total"),
        "bytes_in" => plain("lobby_relay_received_bytes_total"),
        "packets_out" => plain("lobby_relay_sent_datagrams_total"),
        "bytes_out" => plain("lobby_relay_sent_bytes_total"),
        "positions" => accepted("position"),
        "chats" => accepted("chat"),
        "pings" => accepted("ping"),
        "pongs" => accepted("pong"),
        "from_relays" => plain("lobby_relay_link_received_datagrams_total"),
        "to_relays" => plain("lobby_relay_link_sent_datagrams_total"),
        "to_crossfeeds" => plain("lobby_relay_crossfeed_sent_datagrams_total"),
        "pilots_joined" => plain("lobby_relay_pilots_joined_total"),
        "pilots_expired" => plain("lobby_relay_pilots_expired_total"),
        "pilots_replaced" => plain("lobby_relay_pilots_replaced_total"),
        "pilots_local" => labelled("lobby_relay_pilots", "origin", "local"),
        "pilots_remote" => labelled("lobby_relay_pilots", "origin", "remote"),
        "peer_resolve_failures" => plain("lobby_relay_peer_resolve_failures_total"),
        "peer_address_changes" => plain("lobby_relay_peer_address_changes_total"),
        "telnet_served" => plain("lobby_relay_telnet_lists_served_total"),
        "telnet_refused_per_ip" => {
            labelled("lobby_relay_telnet_refused_total", "reason", "per_ip_cap")
        }
        "session_events_dropped" => plain("lobby_relay_session_events_dropped_total"),
        "feed_batches_dropped" => plain("lobby_relay_feed_batches_dropped_total"),
        "tracker_queued" => plain("lobby_relay_tracker_messages_queued_total"),
        "tracker_acked" => plain("lobby_relay_tracker_messages_acked_total"),
        "tracker_dropped" => plain("lobby_relay_tracker_messages_dropped_total"),
        "tracker_reconnects" => plain("lobby_relay_tracker_reconnects_total"),
        "tracker_backlog" => plain("lobby_relay_tracker_backlog_messages"),
        "tracker_connected" => plain("lobby_relay_tracker_connected"),
        "telnet_refused_total" => labelled(
            "lobby_relay_telnet_refused_total",
            "reason",
            "connection_cap",
        ),
        // Every other key is a drop reason.
        reason => labelled("lobby_relay_datagrams_dropped_total", "reason", reason),
    }
}

/// The series of a master counter (`master::Counter` name).
pub fn master_series(key: &'static str) -> Series {
    match key {
        "packets_in" => plain("lobby_master_received_datagrams_total"),
        "bytes_in" => plain("lobby_master_received_bytes_total"),
        "packets_out" => plain("lobby_master_sent_datagrams_total"),
        "bytes_out" => plain("lobby_master_sent_bytes_total"),
        "heartbeats" => plain("lobby_master_heartbeats_total"),
        "servers_added" => plain("lobby_master_servers_added_total"),
        "servers_refreshed" => plain("lobby_master_servers_refreshed_total"),
        "servers_expired" => plain("lobby_master_servers_expired_total"),
        "shutdowns_ignored" => plain("lobby_master_shutdowns_ignored_total"),
        "scans" => plain("lobby_master_scans_total"),
        "list_pages" => plain("lobby_master_list_pages_total"),
        "cached_pages" => plain("lobby_master_cached_pages_total"),
        "fake_lists" => plain("lobby_master_fake_lists_total"),
        "nat_announces" => plain("lobby_master_nat_announces_total"),
        "nat_announces_limited" => plain("lobby_master_nat_announces_limited_total"),
        "info_queries" => plain("lobby_master_info_queries_total"),
        "admin_challenges" => plain("lobby_master_admin_challenges_total"),
        "admin_commands" => plain("lobby_master_admin_commands_total"),
        "ban_changes" => plain("lobby_master_ban_changes_total"),
        "rate_evictions" => plain("lobby_master_rate_evictions_total"),
        // The total; the per-gamedir gauge comes from the snapshot.
        "servers" => plain("lobby_master_servers_registered"),
        other => match other.strip_prefix("drop_") {
            Some(reason) => labelled("lobby_master_datagrams_dropped_total", "reason", reason),
            None => plain("lobby_master_unmapped"),
        },
    }
}

/// The series of a directory counter (`directory::Counter` name).
pub fn dns_series(key: &'static str) -> Series {
    match key {
        "probe_failed" => plain("lobby_dns_probes_failed_total"),
        "push_acked" => labelled("lobby_dns_pushes_total", "result", "acked"),
        "push_refused" => labelled("lobby_dns_pushes_total", "result", "refused"),
        "push_unanswered" => labelled("lobby_dns_pushes_total", "result", "unanswered"),
        "push_bad_reply" => labelled("lobby_dns_pushes_total", "result", "bad_reply"),
        "push_tcp" => plain("lobby_dns_pushes_over_tcp_total"),
        "push_retry" => plain("lobby_dns_push_retries_total"),
        "push_refresh_mismatch" => plain("lobby_dns_push_refresh_mismatches_total"),
        "push_refresh_failed" => plain("lobby_dns_push_refresh_failures_total"),
        "push_resolve_failed" => labelled("lobby_dns_resolve_failures_total", "target", "push"),
        "relay_resolve_failed" => labelled("lobby_dns_resolve_failures_total", "target", "relay"),
        "axfr_allowed" => labelled("lobby_dns_zone_transfers_total", "result", "allowed"),
        "axfr_refused_unsigned" => labelled(
            "lobby_dns_zone_transfers_total",
            "result",
            "refused_unsigned",
        ),
        "axfr_refused_bad_tsig" => labelled(
            "lobby_dns_zone_transfers_total",
            "result",
            "refused_bad_tsig",
        ),
        _ => plain("lobby_dns_unmapped"),
    }
}

/// The series of a flight log counter (`/stats` key under `history`).
pub fn history_series(key: &'static str) -> Series {
    match key {
        "reports_dropped" => labelled("lobby_history_dropped_total", "what", "report"),
        "server_samples_dropped" => {
            labelled("lobby_history_dropped_total", "what", "server_sample")
        }
        "rows_written" => plain("lobby_history_rows_written_total"),
        "write_errors" => plain("lobby_history_write_errors_total"),
        "flights_open" => plain("lobby_history_flights_open"),
        "flights_over_cap" => plain("lobby_history_flights_over_cap_total"),
        "pruned" => plain("lobby_history_flights_pruned_total"),
        _ => plain("lobby_history_unmapped"),
    }
}

/// The series of a tracker server counter (`/stats` key under `tracker`).
pub fn tracker_series(key: &'static str) -> Series {
    match key {
        "connections" => plain("lobby_tracker_connections_total"),
        "refused_cap" => labelled("lobby_tracker_refused_total", "reason", "connection_cap"),
        "refused_ident" => labelled("lobby_tracker_refused_total", "reason", "not_allowed"),
        "messages" => plain("lobby_tracker_messages_total"),
        "lines" => plain("lobby_tracker_lines_total"),
        "fatal" => plain("lobby_tracker_fatal_closes_total"),
        "relays_connected" => plain("lobby_tracker_relays_connected"),
        _ => plain("lobby_tracker_unmapped"),
    }
}

/// The series of an admin API counter (`/stats` key under `admin`).
pub fn admin_series(key: &'static str) -> Series {
    match key {
        "requests" => plain("lobby_admin_requests_total"),
        "changes" => plain("lobby_admin_changes_total"),
        "refused_source" => labelled("lobby_admin_refused_total", "reason", "source"),
        "refused_token" => labelled("lobby_admin_refused_total", "reason", "token"),
        "save_failures" => plain("lobby_admin_save_failures_total"),
        _ => plain("lobby_admin_unmapped"),
    }
}

/// The series of an HTTP counter (`/stats` key under `http`).
pub fn http_series(key: &'static str) -> Series {
    let timeout = |t| labelled("lobby_http_timeouts_total", "timer", t);
    let rejected = |r| labelled("lobby_http_rejected_requests_total", "reason", r);
    match key {
        "connections" => plain("lobby_http_connections_total"),
        "open" => plain("lobby_http_open_connections"),
        "requests" => plain("lobby_http_requests_total"),
        "refused_connection_cap" => labelled(
            "lobby_http_connections_refused_total",
            "reason",
            "connection_cap",
        ),
        "refused_per_ip_cap" => labelled(
            "lobby_http_connections_refused_total",
            "reason",
            "per_ip_cap",
        ),
        "accept_errors" => plain("lobby_http_accept_errors_total"),
        "header_timeouts" => timeout("header"),
        "idle_timeouts" => timeout("idle"),
        "connection_timeouts" => timeout("connection"),
        "request_timeouts" => timeout("request"),
        "body_too_large" => rejected("body_too_large"),
        "headers_too_large" => rejected("headers_too_large"),
        "bad_requests" => rejected("bad_request"),
        _ => plain("lobby_http_unmapped"),
    }
}

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// Describes every family to the recorder (once: the first scrape does it).
fn describe() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        for f in FAMILIES {
            let unit = f.name.ends_with("_seconds").then_some(Unit::Seconds);
            match (f.kind, unit) {
                (Kind::Counter, _) => describe_counter!(f.name, f.help),
                (Kind::Gauge, _) => describe_gauge!(f.name, f.help),
                (Kind::Histogram, Some(u)) => describe_histogram!(f.name, u, f.help),
                (Kind::Histogram, None) => describe_histogram!(f.name, f.help),
            }
        }
    });
}

/// Sets one series to `value`.
fn set(s: Series, value: u64) {
    let kind = family(s.family).map(|f| f.kind);
    match (kind, s.label) {
        (Some(Kind::Counter), None) => metrics::counter!(s.family).absolute(value),
        (Some(Kind::Counter), Some((k, v))) => metrics::counter!(s.family, k => v).absolute(value),
        (Some(Kind::Gauge), None) => metrics::gauge!(s.family).set(value as f64),
        (Some(Kind::Gauge), Some((k, v))) => metrics::gauge!(s.family, k => v).set(value as f64),
        // A key without a family is a bug the unit test catches; never exposed.
        _ => {}
    }
}

/// What a scrape reads besides the engines' counters.
pub struct Scrape<'a> {
    /// The HTTP server's counters (`/stats` → `http`).
    pub http: Vec<(&'static str, u64)>,
    /// Pilot streams open now.
    pub open_streams: usize,
    /// Servers listed now, by gamedir (from the API snapshot).
    pub gamedirs: Option<Vec<&'a str>>,
    /// Published relays' health (from the API snapshot).
    pub relays_up: Option<(usize, usize)>,
}

/// Gamedirs exposed one by one; the rest are summed under `(other)`.
const MAX_GAMEDIRS: usize = 20;

/// The largest `MAX_GAMEDIRS` gamedirs by servers (ties by name), then `(other)`.
/// Gamedirs are chosen by whoever registers a server: without the cap, strangers
/// could create a series each.
pub fn top_gamedirs<'a>(gamedirs: &[&'a str]) -> Vec<(String, u64)> {
    let mut n: HashMap<&'a str, u64> = HashMap::new();
    for g in gamedirs {
        *n.entry(g).or_default() += 1;
    }
    let mut v: Vec<(&str, u64)> = n.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let rest: u64 = v.iter().skip(MAX_GAMEDIRS).map(|x| x.1).sum();
    let mut out: Vec<(String, u64)> = v
        .into_iter()
        .take(MAX_GAMEDIRS)
        .map(|(g, c)| (g.to_string(), c))
        .collect();
    if rest > 0 {
        out.push(("(other)".into(), rest));
    }
    out
}

/// Sets every counter and gauge from the engines and `scrape`, then renders the
/// exposition. `None`: no recorder (another one was installed).
pub fn render(sources: &Sources, scrape: Scrape<'_>) -> Option<String> {
    let h = crate::recorder::install()?;
    describe();
    metrics::gauge!("lobby_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    if let Some(r) = &sources.relay {
        let stats = lock(r).stats().clone();
        for (k, v) in stats.snapshot() {
            set(relay_series(k), v);
        }
    }
    if let Some(m) = &sources.master {
        let stats = lock(m).stats().clone();
        for (k, v) in stats.snapshot() {
            set(master_series(k), v);
        }
    }
    if let Some(g) = &scrape.gamedirs {
        for (gamedir, n) in top_gamedirs(g) {
            metrics::gauge!("lobby_master_servers", "gamedir" => gamedir).set(n as f64);
        }
    }
    if let Some(d) = &sources.directory {
        let (stats, serial) = {
            let d = lock(d);
            (d.stats().clone(), d.serial())
        };
        for (k, v) in stats.snapshot() {
            set(dns_series(k), v);
        }
        metrics::gauge!("lobby_dns_zone_serial").set(f64::from(serial));
    }
    if let Some((up, down)) = scrape.relays_up {
        metrics::gauge!("lobby_dns_relays", "state" => "up").set(up as f64);
        metrics::gauge!("lobby_dns_relays", "state" => "down").set(down as f64);
    }
    if let Some(h) = &sources.history {
        for (k, v) in h.stats.snapshot() {
            set(history_series(k), v);
        }
    }
    if let Some(t) = &sources.tracker {
        for (k, v) in t.snapshot() {
            set(tracker_series(k), v);
        }
    }
    if let Some(a) = sources.admin.as_ref().filter(|a| a.is_on()) {
        for (k, v) in a.stats.snapshot() {
            set(admin_series(k), v);
        }
    }
    for (k, v) in scrape.http {
        set(http_series(k), v);
    }
    metrics::gauge!("lobby_http_open_streams").set(scrape.open_streams as f64);
    if let Some(r) = &sources.restarts {
        for (part, n) in lock(r).iter() {
            metrics::counter!("lobby_worker_restarts_total", "part" => part.clone()).absolute(*n);
        }
    }
    h.run_upkeep();
    Some(h.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stats_key_has_a_family_and_a_series_of_its_own() {
        let mut seen = std::collections::HashSet::new();
        let relay_keys = relay::Stats::default().snapshot();
        let master_keys = master::Stats::default().snapshot();
        let dns_keys = directory::stats::Stats::default().snapshot();
        let history_keys = crate::services::history::HistoryStats::default().snapshot();
        let tracker_keys = crate::services::tracker::server::TrackerStats::default().snapshot();
        let admin_keys = crate::http::admin::AdminStats::default().snapshot();
        let all = relay_keys
            .iter()
            .map(|(k, _)| relay_series(k))
            .chain(master_keys.iter().map(|(k, _)| master_series(k)))
            .chain(dns_keys.iter().map(|(k, _)| dns_series(k)))
            .chain(history_keys.iter().map(|(k, _)| history_series(k)))
            .chain(tracker_keys.iter().map(|(k, _)| tracker_series(k)))
            .chain(admin_keys.iter().map(|(k, _)| admin_series(k)));
        for s in all {
            let f = family(s.family).unwrap_or_else(|| panic!("no family {}", s.family));
            assert_ne!(f.kind, Kind::Histogram);
            assert!(seen.insert(s), "two keys map to {s:?}");
        }
    }

    #[test]
    fn names_follow_prometheus_rules() {
        let mut names = std::collections::HashSet::new();
        for f in FAMILIES {
            assert!(names.insert(f.name), "{} twice", f.name);
            assert!(f.name.starts_with("lobby_"), "{}", f.name);
            assert!(
                f.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                f.name
            );
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
            assert!(!f.help.is_empty());
        }
        for (name, bounds) in crate::recorder::BUCKETS {
            assert_eq!(
                family(name).map(|f| f.kind),
                Some(Kind::Histogram),
                "{name}"
            );
            assert!(bounds.windows(2).all(|w| w[0] < w[1]), "{name}");
        }
    }

    #[test]
    fn every_family_is_documented_in_the_api_document() {
        let doc = include_str!("../../../../docs/API.md");
        let section = &doc[doc.find("## `GET /metrics`").expect("a metrics section")..];
        for f in FAMILIES {
            let kind = match f.kind {
                Kind::Counter => "counter",
                Kind::Gauge => "gauge",
                Kind::Histogram => "histogram",
            };
            assert!(
                section.contains(&format!("| `{}` | {kind} |", f.name)),
                "docs/API.md has no row for {} ({kind})",
                f.name
            );
        }
    }

    #[test]
    fn stranger_chosen_gamedirs_are_capped() {
        let mut dirs: Vec<String> = (0..100).map(|i| format!("mod{i}")).collect();
        dirs.extend(std::iter::repeat_n("valve".to_string(), 5));
        let refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        let top = top_gamedirs(&refs);
        assert_eq!(top.len(), MAX_GAMEDIRS + 1);
        assert_eq!(top[0], ("valve".to_string(), 5));
        assert_eq!(top.last().unwrap(), &("(other)".to_string(), 81));
        assert_eq!(top.iter().map(|x| x.1).sum::<u64>(), 105);
        assert!(top_gamedirs(&[]).is_empty());
    }
}
