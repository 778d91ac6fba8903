//! The admin API's state: who may use it (tokens, allowed sources), the lists in
//! force (the configuration file with the run-time changes over it, saved in the
//! state file) and how a change is checked, saved and applied. The handlers are
//! `http::admin`'s; this state is held by `http::state`, which they read.

use crate::http::reply::{error, ApiError};
use crate::services::relay::RelayControl;
use anyhow::Result;
use api::admin::{ChangeBody, DeletedEntry, ListBody, ListEntry};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use config::admin::Access;
use config::overlay::{
    canonical, canonical_file, check_entry, file_list, overlaid, parse_list, relay_config, Change,
    List, Outcome, Overlay,
};
use config::tokens::who;
use config::AdminSection;
use lifecycle::{lock, Tasks};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::SystemTime;

/// The token of an `Authorization: Bearer TOKEN` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The admin API's Prometheus families, in `/metrics` and docs order.
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// Every family of the admin API.
        pub const FAMILIES;
        REQUESTS = Family::counter(
            "lobby_admin_requests_total",
            "Admin API requests answered after authentication.",
        );
        CHANGES = Family::counter(
            "lobby_admin_changes_total",
            "List changes applied through the admin API.",
        );
        REFUSED = Family::counter(
            "lobby_admin_refused_total",
            "Admin API requests refused, by reason (source, token).",
        )
        .label("reason");
        SAVE_FAILURES = Family::counter(
            "lobby_admin_save_failures_total",
            "Admin changes not made because the state file could not be written.",
        );
    }
}

telemetry::fields! {
    /// The admin API's counters (`/stats` → `admin`, `/metrics`).
    pub struct AdminStats in families::FAMILIES {
        /// Requests answered after authentication.
        pub requests => families::REQUESTS;
        /// List changes applied.
        pub changes => families::CHANGES;
        /// Requests from a source outside `[admin] allow`.
        pub refused_source => families::REFUSED["source"];
        /// Requests without a valid token.
        pub refused_token => families::REFUSED["token"];
        /// Changes refused because the state file could not be written.
        pub save_failures => families::SAVE_FAILURES;
    }
}

/// The configuration as the file says and the run-time changes over it.
struct Lists {
    /// The file as last read (start or SIGHUP), flags applied, before the overlay.
    file: config::File,
    overlay: Overlay,
    /// Where the overlay is saved; `None` while the API is off or nothing is kept.
    state_file: Option<PathBuf>,
}

/// The admin API's state, shared by the handlers and the reload path.
pub struct Admin {
    access: RwLock<Access>,
    lists: Mutex<Lists>,
    /// Held across a change (save, then apply) and a reload, so the relay is always
    /// reconfigured from the latest file and overlay, in order.
    gate: tokio::sync::Mutex<()>,
    relay: OnceLock<(RelayControl, Tasks)>,
    /// When the process started.
    pub started: SystemTime,
    /// SIGHUPs applied.
    pub reloads: AtomicU64,
    /// Refusals reach the log at warn at most once a second.
    refusal_log: telemetry::LogGate,
    /// Counters.
    pub stats: Arc<AdminStats>,
}

/// `[admin]`'s access, with a warning when the tokens file is readable by others.
fn read_access(s: &AdminSection) -> Result<Access> {
    let access = s.read_access()?;
    if access.readable_by_others {
        tracing::warn!(file = %s.tokens_file, "admin tokens file is readable by others; chmod o-rwx it");
    }
    Ok(access)
}

impl Admin {
    /// Reads `[admin]` (the tokens and, when the API is on, the saved run-time
    /// changes) and the file they apply to.
    pub fn load(f: &config::File) -> Result<Arc<Admin>> {
        let access = read_access(&f.admin)?;
        let on = !access.tokens.is_empty();
        let (state_file, overlay) = f.admin.read_changes(on)?;
        if on {
            tracing::info!(
                admins = access.tokens.len(),
                allow = ?f.admin.allow,
                changes = overlay.changes.len(),
                "admin API on"
            );
            if state_file.is_none() {
                tracing::warn!("admin.state_file is empty: run-time changes end with the process");
            }
        }
        Ok(Arc::new(Admin {
            access: RwLock::new(access),
            lists: Mutex::new(Lists {
                file: canonical_file(f),
                overlay,
                state_file,
            }),
            gate: tokio::sync::Mutex::new(()),
            relay: OnceLock::new(),
            started: SystemTime::now(),
            reloads: AtomicU64::new(0),
            refusal_log: telemetry::LogGate::new(),
            stats: Arc::default(),
        }))
    }

    /// Whether the admin API is on.
    pub fn is_on(&self) -> bool {
        !self
            .access
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .tokens
            .is_empty()
    }

    /// The configuration the parts run with: the file and the run-time changes.
    pub fn effective(&self) -> config::File {
        let l = lock(&self.lists);
        overlaid(&l.file, &l.overlay)
    }

    /// The running relay, once started: changes are applied to it, each in a task
    /// of `tasks` (see [`Admin::change`]).
    pub fn attach_relay(&self, relay: RelayControl, tasks: Tasks) {
        let _ = self.relay.set((relay, tasks));
    }

    /// A SIGHUP: takes the new file, the tokens it names and the saved run-time
    /// changes (read again: every change is saved before it applies, so they are the
    /// ones in force, unless `[admin]` now names another file or turns the API off),
    /// then runs `apply` with the effective configuration while no change can
    /// interleave. On an error nothing changes.
    pub async fn reload(
        &self,
        f: config::File,
        apply: impl FnOnce(&config::File) -> Result<()>,
    ) -> Result<()> {
        let _gate = self.gate.lock().await;
        let access = read_access(&f.admin)?;
        let on = !access.tokens.is_empty();
        let f = canonical_file(&f);
        let kept_in_memory = {
            let l = lock(&self.lists);
            (on && self.is_on() && l.state_file.is_none() && f.admin.state_file.is_empty())
                .then(|| l.overlay.clone())
        };
        let (state_file, overlay) = match kept_in_memory {
            // Nothing is saved: the changes last as long as the process.
            Some(o) => (None, o),
            None => f.admin.read_changes(on)?,
        };
        apply(&overlaid(&f, &overlay))?;
        *lock(&self.lists) = Lists {
            file: f,
            overlay,
            state_file,
        };
        *self.access.write().unwrap_or_else(|p| p.into_inner()) = access;
        self.reloads.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Logs a refusal at warn at most once a second (a flood of them would flood the
    /// log; the counters count every one), else at debug.
    fn log_refusal(&self, peer: Option<SocketAddr>, reason: &str) {
        if self.refusal_log.warn_at(udp::time::unix_secs() as u64) {
            tracing::warn!(peer = %peer_text(peer), reason, "admin request refused");
        } else {
            tracing::debug!(peer = %peer_text(peer), reason, "admin request refused");
        }
    }

    /// Checks the source and the token; the admin's name, or the refusal to send.
    #[allow(clippy::result_large_err)] // the refusal is the handler's answer, sent at once
    pub fn authorize(
        &self,
        peer: Option<SocketAddr>,
        headers: &HeaderMap,
    ) -> Result<String, Response> {
        let access = self.access.read().unwrap_or_else(|p| p.into_inner());
        if access.tokens.is_empty() {
            return Err(error(
                StatusCode::NOT_FOUND,
                "the admin API is off ([admin] tokens_file)",
            ));
        }
        let ip = peer.map(|p| p.ip().to_canonical());
        if !ip.is_some_and(|ip| access.allow.iter().any(|n| n.contains(&ip))) {
            self.stats.refused_source.fetch_add(1, Relaxed);
            self.log_refusal(peer, "source not in [admin] allow");
            return Err(error(
                StatusCode::FORBIDDEN,
                "the admin API is not open to this address ([admin] allow)",
            ));
        }
        let name = bearer(headers).and_then(|t| who(&access.tokens, t));
        match name {
            Some(n) => {
                self.stats.requests.fetch_add(1, Relaxed);
                Ok(n.to_string())
            }
            None => {
                self.stats.refused_token.fetch_add(1, Relaxed);
                let why = if bearer(headers).is_some() {
                    "unknown token"
                } else {
                    "no bearer token"
                };
                self.log_refusal(peer, why);
                let mut r = error(
                    StatusCode::UNAUTHORIZED,
                    format!("{why}: send Authorization: Bearer TOKEN"),
                );
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer realm=\"lobby admin\""),
                );
                Err(r)
            }
        }
    }

    /// Adds or deletes `entry` of `list`: checked, saved, applied, logged. The work
    /// runs in a task of its own that holds the gate, so a client that goes away or
    /// a request timeout cannot stop a change between its save and its application.
    pub async fn change(
        self: &Arc<Self>,
        list: List,
        entry: &str,
        added: bool,
        by: &str,
        peer: Option<SocketAddr>,
    ) -> Result<ChangeBody, ApiError> {
        let entry = entry.trim();
        check_entry(list, entry).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let entry = canonical(list, entry);
        let Some((_, tasks)) = self.relay.get() else {
            return Err(ApiError::not_running("relay"));
        };
        let (this, by) = (self.clone(), by.to_string());
        tasks
            .spawn(async move { this.change_now(list, entry, added, by, peer).await })
            .await
            .unwrap_or_else(|e| {
                Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("the change failed: {e}"),
                ))
            })
    }

    async fn change_now(
        &self,
        list: List,
        entry: String,
        added: bool,
        by: String,
        peer: Option<SocketAddr>,
    ) -> Result<ChangeBody, ApiError> {
        let (entry, by) = (entry.as_str(), by.as_str());
        let Some((relay, _)) = self.relay.get() else {
            return Err(ApiError::not_running("relay"));
        };
        let _gate = self.gate.lock().await;
        if !added {
            let l = lock(&self.lists);
            if !l
                .overlay
                .apply(list, file_list(&l.file, list))
                .iter()
                .any(|e| e == entry)
            {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("{entry} is not in the {} list in force", list.name()),
                ));
            }
        }
        let at = udp::time::unix_secs();
        let change = Change {
            list,
            value: entry.to_string(),
            added,
            by: by.to_string(),
            at,
        };
        let (overlay, outcome, effective) = {
            let l = lock(&self.lists);
            let mut o = l.overlay.clone();
            let outcome = o.record(change, file_list(&l.file, list));
            let max = l.file.admin.max_changes;
            if o.changes.len() > max {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    format!("{max} run-time changes are held already ([admin] max_changes): write them into the configuration file, stop lobby and remove the state file"),
                ));
            }
            let effective = overlaid(&l.file, &o);
            (o, outcome, effective)
        };
        let (cfg, peers) =
            relay_config(&effective).map_err(|e| ApiError::bad_request(format!("{e:#}")))?;
        let state_file = lock(&self.lists).state_file.clone();
        if let Some(path) = state_file {
            let (file, text) = (path.display().to_string(), overlay.to_json());
            let saved =
                tokio::task::spawn_blocking(move || udp::atomic_write(&path, text.as_bytes()))
                    .await
                    .map_err(std::io::Error::other)
                    .and_then(|r| r);
            if let Err(e) = saved {
                self.stats.save_failures.fetch_add(1, Relaxed);
                tracing::error!(%file, error = %e, "admin change not made: the state file cannot be written");
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("the change was not made: cannot save the admin state file: {e}"),
                ));
            }
        }
        let in_force = overlay.apply(list, file_list(&lock(&self.lists).file, list));
        lock(&self.lists).overlay = overlay;
        relay.reconfigure(cfg, peers);
        self.stats.changes.fetch_add(1, Relaxed);
        let action = if added { "add" } else { "delete" };
        let changed = outcome == Outcome::Changed;
        tracing::info!(admin = by, peer = %peer_text(peer), list = list.name(), entry, action, changed, "admin change applied");
        Ok(ChangeBody {
            list: list.name().to_string(),
            entry: entry.to_string(),
            action: action.to_string(),
            changed,
            by: by.to_string(),
            at,
            in_force,
        })
    }

    /// A list in force with where each entry comes from.
    pub fn list_body(&self, list: &str, links: &[api::relays::Link]) -> Option<ListBody> {
        let l = lock(&self.lists);
        let (entries, file, changes): (Vec<String>, Vec<String>, Vec<&Change>) = match list {
            "whitelist" => (
                l.file.relay.whitelist.clone(),
                l.file.relay.whitelist.clone(),
                Vec::new(),
            ),
            _ => {
                let list = parse_list(list)?;
                let file = file_list(&l.file, list).to_vec();
                (
                    l.overlay.apply(list, &file),
                    file,
                    l.overlay.of(list).collect(),
                )
            }
        };
        let entries = entries
            .into_iter()
            .map(|e| {
                let added = changes.iter().find(|c| c.added && c.value == e);
                let from_file = file.contains(&e) && added.is_none();
                ListEntry {
                    source: if from_file { "file" } else { "admin" }.into(),
                    by: added.map(|c| c.by.clone()),
                    at: added.map(|c| c.at),
                    link: links.iter().find(|k| k.name == e).cloned(),
                    entry: e,
                }
            })
            .collect();
        let deleted = changes
            .iter()
            .filter(|c| !c.added)
            .map(|c| DeletedEntry {
                entry: c.value.clone(),
                by: c.by.clone(),
                at: c.at,
            })
            .collect();
        Some(ListBody {
            list: parse_list(list).map_or("whitelist", List::name).to_string(),
            entries,
            deleted,
        })
    }

    /// The settings in force, secrets left out.
    pub fn settings(&self, parts: Vec<&'static str>) -> serde_json::Value {
        let f = self.effective();
        let mut history = f.history.clone();
        history.database_url = flightlog::store::redact(&history.database_url);
        let mut relay = f.relay.clone();
        if !relay.tracker_secret.is_empty() {
            relay.tracker_secret = "***".into();
        }
        serde_json::json!({
            "parts": parts,
            "relay": relay,
            "http": f.http,
            "history": history,
            "admin": {
                "tokens_file": f.admin.tokens_file,
                "allow": f.admin.allow,
                "state_file": f.admin.state_file,
                "run_time_changes": lock(&self.lists).overlay.changes.len(),
            },
        })
    }
}

/// The peer in a log line.
pub fn peer_text(p: Option<SocketAddr>) -> String {
    p.map_or_else(|| "unknown".into(), |a| a.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers_are_read_case_insensitively() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }
}
