//! What the HTTP layer reads: the engines and services this process runs.

use std::sync::{Arc, Mutex};

/// What this process runs: each service the HTTP layer reads, `None` when it does
/// not run here.
#[derive(Clone, Default)]
pub struct Sources {
    /// The master, when this process runs one.
    pub master: Option<Arc<Mutex<master::Engine>>>,
    /// The relay, when this process runs one.
    pub relay: Option<Arc<Mutex<relay::Engine>>>,
    /// The directory, when this process runs one.
    pub directory: Option<Arc<Mutex<directory::Directory>>>,
    /// Worker restarts per part (see `lifecycle`).
    pub restarts: Option<lifecycle::RestartCounts>,
    /// The relay's configured peer names and their addresses.
    pub peers: Option<Arc<Mutex<crate::services::relay::peers::PeerState>>>,
    /// The master's listed servers' names, when it asks for them.
    pub names: Option<crate::services::master::names::Names>,
    /// The HTTP-era server list beside the master.
    pub list: Option<crate::services::master::list::List>,
    /// The flight log, when this process keeps one.
    pub history: Option<crate::services::history::History>,
    /// The tracker server's counters, when it runs here.
    pub tracker: Option<Arc<crate::services::tracker::server::TrackerStats>>,
    /// Each part's readiness (`/readyz`).
    pub ready: lifecycle::Readiness,
}
