//! The admin API's bodies (`/api/admin/...`): what fgms's admin CLI shows (`show
//! stats|settings|version|uptime|whitelist|blacklist|crossfeeds|relays|tracker|users`)
//! and the answer to a change of a list (`blacklist|relay|crossfeed add|delete`).

use crate::pilots::Pilot;
use crate::relays::Link;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of a change: `POST /api/admin/{list}` adds `entry`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChangeRequest {
    /// The entry as the configuration writes it: an IP or CIDR for the blacklist,
    /// `host:port` for relays and crossfeeds.
    pub entry: String,
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChangeBody {
    /// `blacklist`, `relays` or `crossfeeds`.
    pub list: String,
    /// The entry, as given.
    pub entry: String,
    /// `add` or `delete`.
    pub action: String,
    /// Whether the list in force changed (false: it already was so; the change is
    /// recorded anyway, so a later edit of the file does not undo it).
    pub changed: bool,
    /// The admin who made it (the token's name).
    pub by: String,
    /// When, Unix seconds.
    pub at: i64,
    /// The list in force after the change.
    pub in_force: Vec<String>,
}

/// One entry of a list in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ListEntry {
    /// The entry.
    pub entry: String,
    /// `file` (the configuration) or `admin` (added at run time).
    pub source: String,
    /// For an entry added at run time: who added it.
    pub by: Option<String>,
    /// For an entry added at run time: when, Unix seconds.
    pub at: Option<i64>,
    /// For a relay or crossfeed target: its address and traffic (`null` for the
    /// blacklist and whitelist, or while the relay does not run).
    pub link: Option<Link>,
}

/// An entry of the file deleted at run time (it stays deleted across reloads until
/// it is added again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DeletedEntry {
    /// The entry.
    pub entry: String,
    /// Who deleted it.
    pub by: String,
    /// When, Unix seconds.
    pub at: i64,
}

/// The body of `GET /api/admin/{list}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ListBody {
    /// `whitelist`, `blacklist`, `relays` or `crossfeeds`.
    pub list: String,
    /// The list in force: the file's entries, then those added at run time.
    pub entries: Vec<ListEntry>,
    /// Run-time deletions in force (entries the file may list that do not apply).
    pub deleted: Vec<DeletedEntry>,
}

/// One pilot as the admin sees it: the public form plus its source address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct User {
    /// What `/api/pilots` shows.
    #[serde(flatten)]
    pub pilot: Pilot,
    /// Its source address (a local pilot's client; a remote pilot's relay).
    pub address: String,
    /// Its receive range, nautical miles.
    pub range_nm: f64,
}

/// The body of `GET /api/admin/users`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsersBody {
    /// Pilots known, observers included (fgms's count).
    pub online: usize,
    /// Every pilot, by join time; observers included.
    pub users: Vec<User>,
}

/// The body of `GET /api/admin/version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct VersionBody {
    /// lobby's version.
    pub version: String,
    /// The FlightGear multiplayer protocol version spoken (`1.1`).
    pub fgmp_protocol: String,
    /// The tracker protocol version spoken (`V20151207`).
    pub tracker_protocol: String,
}

/// The body of `GET /api/admin/uptime`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UptimeBody {
    /// When the process started serving, Unix seconds.
    pub started: u64,
    /// Seconds since.
    pub uptime_s: u64,
    /// Configuration reloads (SIGHUP) applied since.
    pub reloads: u64,
}

/// The body of `GET /api/admin/tracker`: the relay's link to its tracker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TrackerBody {
    /// The tracker, `host:port`; `null` when the relay reports to none.
    pub server: Option<String>,
    /// Whether the tracker has identified the relay now.
    pub connected: bool,
    /// Messages queued so far (CONNECT, DISCONNECT, POSITION).
    pub queued: u64,
    /// Messages the tracker acknowledged.
    pub acked: u64,
    /// Messages dropped because the queue was full.
    pub dropped: u64,
    /// Messages waiting or unacknowledged now.
    pub backlog: u64,
    /// Connections lost or refused.
    pub reconnects: u64,
}
