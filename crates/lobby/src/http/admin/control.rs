//! The admin API's state: who may use it (tokens, allowed sources), the lists in
//! force (the configuration file with the run-time changes over it, saved in the
//! state file) and how a change is checked, saved and applied.

use crate::http::reply::error;
use crate::lifecycle::{lock, Tasks};
use crate::services::relay::RelayControl;
use anyhow::{bail, Context, Result};
use api::admin::{ChangeBody, DeletedEntry, ListBody, ListEntry};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use config::overlay::{Change, List, Outcome, Overlay};
use config::AdminSection;
use config::PeerOptions;
use ipnet::IpNet;
use master::challenge::constant_time_eq;
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::SystemTime;

/// Shortest token accepted: guessing one is out of reach.
pub const MIN_TOKEN_LEN: usize = 16;
/// Longest entry a change may carry.
const MAX_ENTRY_LEN: usize = 256;

/// One admin: a name (for the logs) and its bearer token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// Who, in logs and in the change records.
    pub name: String,
    secret: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token({}, <redacted>)", self.name)
    }
}

/// Parses a tokens file: one `NAME TOKEN` per line, blank lines and `#` comments
/// skipped. Errors name the line.
pub fn parse_tokens(text: &str, origin: &str) -> Result<Vec<Token>> {
    let mut out: Vec<Token> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{origin}:{}", i + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, secret] = fields[..] else {
            bail!("{}: expected NAME TOKEN", at());
        };
        if name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
        {
            bail!(
                "{}: admin name {name:?} must be 1-64 letters, digits or ._@-",
                at()
            );
        }
        if secret.len() < MIN_TOKEN_LEN || secret.len() > 256 {
            bail!(
                "{}: the token of {name:?} must be {MIN_TOKEN_LEN}-256 characters (`lobby admin new-token` makes one)",
                at()
            );
        }
        if !secret.chars().all(|c| c.is_ascii_graphic()) {
            bail!("{}: the token of {name:?} must be printable ASCII", at());
        }
        if out.iter().any(|t| t.name == name) {
            bail!("{}: admin {name:?} is listed twice", at());
        }
        if out.iter().any(|t| t.secret == secret) {
            bail!("{}: two admins share one token", at());
        }
        out.push(Token {
            name: name.to_string(),
            secret: secret.to_string(),
        });
    }
    if out.is_empty() {
        bail!("{origin}: no tokens (expected NAME TOKEN lines)");
    }
    Ok(out)
}

/// Whose token this is; every token is compared, whatever matches.
fn who<'a>(tokens: &'a [Token], given: &str) -> Option<&'a str> {
    let mut found = None;
    for t in tokens {
        if constant_time_eq(t.secret.as_bytes(), given.as_bytes()) {
            found = Some(t.name.as_str());
        }
    }
    found
}

/// The token of an `Authorization: Bearer TOKEN` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Who may use the admin API (replaced at every reload).
struct Access {
    /// Empty: the admin API is off.
    tokens: Vec<Token>,
    allow: Vec<IpNet>,
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

/// The saved run-time changes `[admin]` names: none while the API is off (they apply
/// only with it on), none yet when the file does not exist.
fn read_state(s: &AdminSection, on: bool) -> Result<(Option<PathBuf>, Overlay)> {
    let state_file = (on && !s.state_file.is_empty()).then(|| PathBuf::from(&s.state_file));
    let overlay = match &state_file {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(text) => {
                let mut o = Overlay::from_json(&text)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("admin.state_file {}", p.display()))?;
                for c in &mut o.changes {
                    c.value = canonical(c.list, &c.value);
                }
                o
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Overlay::default(),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read admin.state_file {}", p.display()))
            }
        },
        None => Overlay::default(),
    };
    Ok((state_file, overlay))
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
    /// The Unix second of the last refusal logged at warn.
    last_refusal_log: AtomicU64,
    /// Counters.
    pub stats: Arc<AdminStats>,
}

/// The one spelling of an entry, so that one entry written two ways is one entry:
/// an IP (a host network written as its address) or a network with its host bits
/// cleared; `host:port` with the host in lower case (an IP literal as Rust writes it).
/// An entry that does not parse is kept as written (the configuration check names it).
pub fn canonical(list: List, entry: &str) -> String {
    match list {
        List::Blacklist => match config::net(entry) {
            Ok(n) if n.prefix_len() == n.max_prefix_len() => n.addr().to_string(),
            Ok(n) => n.trunc().to_string(),
            Err(_) => entry.to_string(),
        },
        List::Relays | List::Crossfeeds => match entry.parse::<SocketAddr>() {
            Ok(a) => a.to_string(),
            Err(_) => entry.to_ascii_lowercase(),
        },
    }
}

/// The file with its three lists in their canonical spelling.
fn canonical_file(f: &config::File) -> config::File {
    let mut f = f.clone();
    for list in List::ALL {
        let v = match list {
            List::Blacklist => &mut f.relay.blacklist,
            List::Relays => &mut f.relay.relays,
            List::Crossfeeds => &mut f.relay.crossfeeds,
        };
        *v = v.iter().map(|e| canonical(list, e)).collect();
    }
    f
}

/// The file with the overlay's lists in force.
fn overlaid(f: &config::File, o: &Overlay) -> config::File {
    let mut f = f.clone();
    f.relay.blacklist = o.apply(List::Blacklist, &f.relay.blacklist);
    f.relay.relays = o.apply(List::Relays, &f.relay.relays);
    f.relay.crossfeeds = o.apply(List::Crossfeeds, &f.relay.crossfeeds);
    f
}

fn file_list(f: &config::File, list: List) -> &[String] {
    match list {
        List::Blacklist => &f.relay.blacklist,
        List::Relays => &f.relay.relays,
        List::Crossfeeds => &f.relay.crossfeeds,
    }
}

fn read_access(s: &AdminSection) -> Result<Access> {
    let allow = s
        .allow
        .iter()
        .map(|a| config::net(a).with_context(|| "admin.allow"))
        .collect::<Result<Vec<_>>>()?;
    if s.tokens_file.is_empty() {
        return Ok(Access {
            tokens: Vec::new(),
            allow,
        });
    }
    let path = FsPath::new(&s.tokens_file);
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read admin.tokens_file {}", path.display()))?;
    let tokens = parse_tokens(&text, &path.display().to_string())?;
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            if m.permissions().mode() & 0o007 != 0 {
                tracing::warn!(file = %path.display(), "admin tokens file is readable by others; chmod o-rwx it");
            }
        }
    }
    Ok(Access { tokens, allow })
}

impl Admin {
    /// Reads `[admin]` (the tokens and, when the API is on, the saved run-time
    /// changes) and the file they apply to.
    pub fn load(f: &config::File) -> Result<Arc<Admin>> {
        let access = read_access(&f.admin)?;
        let on = !access.tokens.is_empty();
        let (state_file, overlay) = read_state(&f.admin, on)?;
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
            last_refusal_log: AtomicU64::new(0),
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
            None => read_state(&f.admin, on)?,
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
        let now = udp::time::unix_secs() as u64;
        if self.last_refusal_log.swap(now, Relaxed) != now {
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
    #[allow(clippy::result_large_err)] // the refusal is the handler's answer, sent at once
    pub async fn change(
        self: &Arc<Self>,
        list: List,
        entry: &str,
        added: bool,
        by: &str,
        peer: Option<SocketAddr>,
    ) -> Result<ChangeBody, Response> {
        let entry = entry.trim();
        check_entry(list, entry).map_err(|e| error(StatusCode::BAD_REQUEST, e))?;
        let entry = canonical(list, entry);
        let Some((_, tasks)) = self.relay.get() else {
            return Err(error(
                StatusCode::NOT_FOUND,
                "no relay runs in this process",
            ));
        };
        let (this, by) = (self.clone(), by.to_string());
        tasks
            .spawn(async move { this.change_now(list, entry, added, by, peer).await })
            .await
            .unwrap_or_else(|e| {
                Err(error(
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
    ) -> Result<ChangeBody, Response> {
        let (entry, by) = (entry.as_str(), by.as_str());
        let Some((relay, _)) = self.relay.get() else {
            return Err(error(
                StatusCode::NOT_FOUND,
                "no relay runs in this process",
            ));
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
                return Err(error(
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
                return Err(error(
                    StatusCode::CONFLICT,
                    format!("{max} run-time changes are held already ([admin] max_changes): write them into the configuration file, stop lobby and remove the state file"),
                ));
            }
            let effective = overlaid(&l.file, &o);
            (o, outcome, effective)
        };
        let (cfg, peers) = relay_config(&effective)
            .map_err(|e| error(StatusCode::BAD_REQUEST, format!("{e:#}")))?;
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
                return Err(error(
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

/// The relay configuration and peers of an effective file.
fn relay_config(f: &config::File) -> Result<(relay::Config, PeerOptions)> {
    Ok((
        f.relay.engine_config()?,
        PeerOptions {
            names: f.relay.peer_names()?,
            refresh: f.relay.peer_refresh()?,
        },
    ))
}

/// The list a path names (fgms's singular `relay`/`crossfeed` too).
pub fn parse_list(s: &str) -> Option<List> {
    match s {
        "blacklist" => Some(List::Blacklist),
        "relays" | "relay" => Some(List::Relays),
        "crossfeeds" | "crossfeed" => Some(List::Crossfeeds),
        _ => None,
    }
}

/// Whether `entry` is one the list can hold.
fn check_entry(list: List, entry: &str) -> Result<(), String> {
    if entry.is_empty() || entry.len() > MAX_ENTRY_LEN {
        return Err(format!("an entry is 1-{MAX_ENTRY_LEN} characters"));
    }
    if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "entry {entry:?} holds a space or a control character"
        ));
    }
    match list {
        List::Blacklist => config::net(entry).map(|_| ()).map_err(|e| format!("{e:#}")),
        List::Relays | List::Crossfeeds => {
            let kind = if list == List::Relays {
                config::Kind::Relay
            } else {
                config::Kind::Crossfeed
            };
            config::PeerName::parse(entry, kind)
                .map(|_| ())
                .map_err(|e| format!("{e:#}"))
        }
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
    fn token_files_are_checked_line_by_line() {
        let t = parse_tokens(
            "# admins\n\ngordon 0123456789abcdefXYZ\n alyx  fedcba9876543210fedc \n",
            "tokens",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].name, "alyx");
        assert_eq!(who(&t, "fedcba9876543210fedc"), Some("alyx"));
        assert_eq!(who(&t, "fedcba9876543210fedd"), None);
        assert_eq!(who(&t, ""), None);
        for (text, says) in [
            (
                "gordon short\n",
                "tokens:1: the token of \"gordon\" must be 16-256",
            ),
            ("\n\ngordon\n", "tokens:3: expected NAME TOKEN"),
            ("a b c\n", "tokens:1: expected NAME TOKEN"),
            ("gor/don 0123456789abcdef\n", "tokens:1: admin name"),
            (
                "g 0123456789abcdef\ng 0123456789abcdeX\n",
                "tokens:2: admin \"g\" is listed twice",
            ),
            (
                "g 0123456789abcdef\nh 0123456789abcdef\n",
                "tokens:2: two admins share one token",
            ),
            ("# nothing\n", "tokens: no tokens"),
        ] {
            let e = parse_tokens(text, "tokens").unwrap_err().to_string();
            assert!(e.starts_with(says), "{text:?}: {e}");
        }
        // The debug form never shows a token.
        assert!(!format!("{t:?}").contains("0123456789"));
    }

    #[test]
    fn bearer_headers_are_read_case_insensitively() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn entries_are_checked_per_list() {
        assert!(check_entry(List::Blacklist, "192.0.2.0/24").is_ok());
        assert!(check_entry(List::Blacklist, "2001:db8::/32").is_ok());
        assert!(check_entry(List::Blacklist, "mp1.example.org").is_err());
        assert!(check_entry(List::Relays, "mp1.example.org:5000").is_ok());
        assert!(check_entry(List::Relays, "[2001:db8::1]:5000").is_ok());
        assert!(check_entry(List::Crossfeeds, "127.0.0.1").is_err());
        assert!(check_entry(List::Relays, "a b:5000").is_err());
        assert!(check_entry(List::Blacklist, "").is_err());
        assert!(check_entry(List::Blacklist, &"1".repeat(300)).is_err());
    }

    #[test]
    fn one_entry_has_one_spelling() {
        let b = |e| canonical(List::Blacklist, e);
        assert_eq!(b("192.0.2.1"), "192.0.2.1");
        assert_eq!(b("192.0.2.1/32"), "192.0.2.1");
        assert_eq!(b("10.1.2.3/8"), "10.0.0.0/8");
        assert_eq!(b("2001:DB8::1"), "2001:db8::1");
        assert_eq!(b("2001:db8::1/128"), "2001:db8::1");
        assert_eq!(b("not an ip"), "not an ip");
        let r = |e| canonical(List::Relays, e);
        assert_eq!(r("MP1.Example.org:5000"), "mp1.example.org:5000");
        assert_eq!(r("[2001:DB8::1]:5000"), "[2001:db8::1]:5000");
        assert_eq!(r("192.0.2.1:5000"), "192.0.2.1:5000");
    }

    #[test]
    fn the_overlay_replaces_only_the_three_lists() {
        let mut f = config::File::default();
        f.relay.blacklist = vec!["192.0.2.1".into()];
        f.relay.whitelist = vec!["198.51.100.0/24".into()];
        f.relay.name = "mp".into();
        let mut o = Overlay::default();
        o.record(
            Change {
                list: List::Blacklist,
                value: "192.0.2.1".into(),
                added: false,
                by: "g".into(),
                at: 1,
            },
            &f.relay.blacklist,
        );
        o.record(
            Change {
                list: List::Crossfeeds,
                value: "127.0.0.1:5100".into(),
                added: true,
                by: "g".into(),
                at: 2,
            },
            &[],
        );
        let e = overlaid(&f, &o);
        assert!(e.relay.blacklist.is_empty());
        assert_eq!(e.relay.crossfeeds, vec!["127.0.0.1:5100".to_string()]);
        assert_eq!(e.relay.whitelist, f.relay.whitelist);
        assert_eq!(e.relay.name, "mp");
    }
}
