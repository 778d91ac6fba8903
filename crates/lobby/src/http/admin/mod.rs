//! The admin API (`/api/admin/...`): fgms's admin CLI, done safely, on the HTTP
//! listener.
//!
//! - **Off unless configured**: `[admin] tokens_file` names a file of bearer tokens,
//!   one `NAME TOKEN` per line. Without it every admin path answers 404.
//! - **Who may ask**: a request must come from a source in `[admin] allow` (default
//!   loopback only; else 403) and carry `Authorization: Bearer TOKEN` with a listed
//!   token (else 401). Tokens are at least 16 characters (checked when the file is
//!   read) and compared in constant time. Every refusal is logged with the peer and
//!   the reason, and counted (`/stats` → `admin`).
//! - **What it shows**: `GET /api/admin/{stats|settings|version|uptime|whitelist|
//!   blacklist|crossfeeds|relays|tracker|users}`, as fgms's `show ...`.
//! - **What it changes**: `POST /api/admin/{blacklist|relays|crossfeeds}` with
//!   `{"entry": ...}` adds an entry, `DELETE /api/admin/{list}/{entry}` deletes one,
//!   as fgms's `blacklist|relay|crossfeed add|delete`. A change is saved to
//!   `[admin] state_file` (atomically) *before* it is applied, so an applied change
//!   is never lost; it is applied to the running relay at once (pilots kept) and
//!   logged with the admin's name and the peer.
//! - **The merge rule** (`config::overlay`): the relay runs with *file ∪ added
//!   − deleted*; a SIGHUP re-reads the file and applies the same rule, so neither a
//!   file edit nor a run-time change silently undoes the other.
//!
//! - **The server list**: `registrations` and `bans` ([`listing`]): show, approve,
//!   remove and ban self-registered servers.
//!
//! Files: [`crate::http::admin_state`] (the state: tokens, lists, changes; beside this
//! module, since `http::state` holds it and these handlers read `http::state`),
//! [`auth`] (the layer that authenticates every admin route), [`show`] and [`change`]
//! (the handlers), [`listing`] (the server list's).

pub mod auth;
pub mod change;
pub mod listing;
pub mod show;

use crate::http::state::AppState;
use axum::routing::{delete, get};
use axum::Router;
use std::sync::Arc;

/// The admin routes behind [`auth::require_admin`] (every path answers 404 while the
/// API is off).
pub fn routes(admin: Arc<crate::http::admin_state::Admin>) -> Router<AppState> {
    Router::new()
        .route("/api/admin/{list}", get(show::show).post(change::add))
        .route("/api/admin/{list}/{*entry}", delete(change::delete))
        .route_layer(axum::middleware::from_fn_with_state(
            admin,
            auth::require_admin,
        ))
}
