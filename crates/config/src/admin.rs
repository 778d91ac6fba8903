//! `[admin]`: the authenticated admin API on the HTTP listener.
use serde::{Deserialize, Serialize};

/// The `[admin]` table: fgms's admin CLI as an authenticated HTTP API (`/api/admin/`),
/// off unless `tokens_file` is set.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdminSection {
    /// File of bearer tokens, one `NAME TOKEN` per line (`#` comments); the name is
    /// who made a change in the logs. Empty: no admin API.
    pub tokens_file: String,
    /// Source networks allowed to use the admin API (IPs or CIDRs).
    pub allow: Vec<String>,
    /// Where run-time changes of the lists are kept across restarts (JSON, written
    /// atomically at every change); empty: they last until the process stops.
    pub state_file: String,
    /// Run-time changes held at most (one per entry); past it a change is refused
    /// until they are written into this file.
    pub max_changes: usize,
}

impl Default for AdminSection {
    fn default() -> Self {
        AdminSection {
            tokens_file: String::new(),
            allow: vec!["127.0.0.0/8".into(), "::1/128".into()],
            state_file: "lobby-admin.json".into(),
            max_changes: 4096,
        }
    }
}
