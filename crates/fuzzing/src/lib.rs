//! The bodies of the fuzz targets in `fuzz/` (cargo-fuzz): each takes arbitrary
//! bytes, must never panic, and checks its invariants with assertions. They live
//! in a normal crate so that the test suite replays the committed corpora
//! (`fuzz/corpus/<target>/`) through the same code on every run
//! (`tests/corpus.rs`), without nightly Rust or libFuzzer.

pub mod airports_query;
pub mod directory_txt;
pub mod fgmp_datagram;
pub mod fgmp_extras;
pub mod fgmp_props;
pub mod fgmp_routing;
pub mod fgms_conf;
pub mod flightlog_reports;
pub mod query_session;
pub mod relay_engine;
pub mod serverlist_curated;
pub mod serverlist_state;
pub mod serverlist_static;
pub mod telnet_render;
pub mod tracker_client;
pub mod tracker_server;
pub mod xash_master;
pub mod xash_queries;

/// A target's body.
pub type Target = fn(&[u8]);

/// Every target by its cargo-fuzz name.
pub const TARGETS: &[(&str, Target)] = &[
    ("airports_query", airports_query::run),
    ("directory_txt", directory_txt::run),
    ("fgmp_datagram", fgmp_datagram::run),
    ("fgmp_extras", fgmp_extras::run),
    ("fgmp_props", fgmp_props::run),
    ("fgmp_routing", fgmp_routing::run),
    ("fgms_conf", fgms_conf::run),
    ("flightlog_reports", flightlog_reports::run),
    ("query_session", query_session::run),
    ("serverlist_curated", serverlist_curated::run),
    ("serverlist_state", serverlist_state::run),
    ("serverlist_static", serverlist_static::run),
    ("relay_engine", relay_engine::run),
    ("telnet_render", telnet_render::run),
    ("tracker_client", tracker_client::run),
    ("tracker_server", tracker_server::run),
    ("xash_master", xash_master::run),
    ("xash_queries", xash_queries::run),
];

/// Parses the embedded airport table (`airports::table()`, once per process): the
/// targets that read it call this before their first input, so that input's time is
/// its own.
pub fn warm_airports() {
    let _ = airports::table();
}
