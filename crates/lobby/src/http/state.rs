//! The one state every HTTP handler shares.

use crate::http::admin_state::Admin;
use crate::http::conn::HttpStats;
use crate::http::snapshot::Publisher;
use crate::http::sources::Sources;
use serverlist::beside_master::ListCache;
use std::sync::Arc;

/// What the handlers share (cheap to clone: every field is shared).
#[derive(Clone)]
pub struct AppState {
    /// What this process runs.
    pub sources: Sources,
    /// The HTTP server's counters.
    pub stats: Arc<HttpStats>,
    /// The `/v1/servers/<gamedir>` bodies.
    pub lists: Arc<ListCache>,
    /// Listed servers' details, asked for the page.
    pub details: Arc<serverlist::details::DetailsCache>,
    /// The API's snapshots and the pilot stream.
    pub publisher: Arc<Publisher>,
    /// The admin API, when configured (its paths answer 404 while it is off).
    pub admin: Option<Arc<Admin>>,
}
