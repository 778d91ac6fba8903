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

use crate::http::snapshot::error;
use crate::lifecycle::lock;
use crate::services::relay::RelayControl;
use anyhow::{bail, Context, Result};
use api::admin::{
    ChangeBody, ChangeRequest, DeletedEntry, ListBody, ListEntry, TrackerBody, UptimeBody, User,
    UsersBody, VersionBody,
};
use api::ErrorBody;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use config::overlay::{Change, List, Outcome, Overlay};
use config::AdminSection;
use config::PeerOptions;
use ipnet::IpNet;
use master::challenge::constant_time_eq;
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

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

/// The admin API's counters (`/stats` → `admin`, `/metrics`).
#[derive(Debug, Default)]
pub struct AdminStats {
    /// Requests answered after authentication.
    pub requests: AtomicU64,
    /// List changes applied.
    pub changes: AtomicU64,
    /// Requests from a source outside `[admin] allow`.
    pub refused_source: AtomicU64,
    /// Requests without a valid token.
    pub refused_token: AtomicU64,
    /// Changes refused because the state file could not be written.
    pub save_failures: AtomicU64,
}

impl AdminStats {
    /// (name, value) of every counter.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        let g = |c: &AtomicU64| c.load(Relaxed);
        vec![
            ("requests", g(&self.requests)),
            ("changes", g(&self.changes)),
            ("refused_source", g(&self.refused_source)),
            ("refused_token", g(&self.refused_token)),
            ("save_failures", g(&self.save_failures)),
        ]
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
    relay: OnceLock<RelayControl>,
    started: SystemTime,
    reloads: AtomicU64,
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

    /// The running relay, once started: changes are applied to it.
    pub fn attach_relay(&self, relay: RelayControl) {
        let _ = self.relay.set(relay);
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
    fn authorize(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> Result<String, Response> {
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
    async fn change(
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
        let (this, by) = (self.clone(), by.to_string());
        tokio::spawn(async move { this.change_now(list, entry, added, by, peer).await })
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
        let Some(relay) = self.relay.get() else {
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
    fn list_body(&self, list: &str, links: &[api::relays::Link]) -> Option<ListBody> {
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
    fn settings(&self, parts: Vec<&'static str>) -> serde_json::Value {
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
fn parse_list(s: &str) -> Option<List> {
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

/// What the admin handlers share.
#[derive(Clone)]
pub struct AdminState {
    /// The admin API's state.
    pub admin: Arc<Admin>,
    /// What the process runs.
    pub sources: crate::http::Sources,
    /// The snapshots (relay links).
    pub publisher: Arc<crate::http::snapshot::Publisher>,
    /// `/stats` as JSON, now.
    pub stats: Arc<dyn Fn() -> serde_json::Value + Send + Sync>,
}

type Peer = Option<Extension<ConnectInfo<SocketAddr>>>;

/// The peer in a log line.
fn peer_text(p: Option<SocketAddr>) -> String {
    p.map_or_else(|| "unknown".into(), |a| a.to_string())
}

fn peer_of(p: Peer) -> Option<SocketAddr> {
    p.map(|Extension(ConnectInfo(a))| a)
}

/// fgms's `show TOPIC`: `stats` and `settings` (objects as `/stats` and the
/// configuration write them), `version` (VersionBody), `uptime` (UptimeBody),
/// `whitelist`, `blacklist`, `relays`, `crossfeeds` (ListBody), `tracker` (TrackerBody),
/// `users` (UsersBody).
#[utoipa::path(get, path = "/api/admin/{name}", tag = "admin",
    params(("name" = String, Path, description = "stats, settings, version, uptime, whitelist, blacklist, crossfeeds, relays, tracker or users")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the topic's body (see the description)", body = Object),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such topic, or no relay runs here", body = ErrorBody),
    ))]
pub async fn show(
    State(s): State<AdminState>,
    peer: Peer,
    headers: HeaderMap,
    topic: Result<Path<String>, PathRejection>,
) -> Response {
    let peer = peer_of(peer);
    if let Err(r) = s.admin.authorize(peer, &headers) {
        return r;
    }
    let Path(topic) = match topic {
        Ok(t) => t,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    let src = &s.sources;
    let no_relay = || error(StatusCode::NOT_FOUND, "no relay runs in this process");
    match topic.as_str() {
        "stats" => Json((s.stats)()).into_response(),
        "settings" => {
            let parts = [
                ("relay", src.relay.is_some()),
                ("master", src.master.is_some()),
                ("dns", src.directory.is_some()),
                ("tracker", src.tracker.is_some()),
                ("history", src.history.is_some()),
            ]
            .into_iter()
            .filter_map(|(n, on)| on.then_some(n))
            .collect();
            Json(s.admin.settings(parts)).into_response()
        }
        "version" => Json(VersionBody {
            version: env!("CARGO_PKG_VERSION").into(),
            fgmp_protocol: format!("{}.{}", fgmp::VERSION >> 16, fgmp::VERSION & 0xffff),
            tracker_protocol: tracker::control::V20151207.into(),
        })
        .into_response(),
        "uptime" => {
            let started = s
                .admin
                .started
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Json(UptimeBody {
                started,
                uptime_s: s.admin.started.elapsed().map_or(0, |d| d.as_secs()),
                reloads: s.admin.reloads.load(Relaxed),
            })
            .into_response()
        }
        "whitelist" | "blacklist" | "relays" | "relay" | "crossfeeds" | "crossfeed" => {
            let links = s.publisher.links_now();
            match s.admin.list_body(&topic, &links) {
                Some(b) => Json(b).into_response(),
                None => no_relay(),
            }
        }
        "tracker" => {
            let Some(r) = &src.relay else { return no_relay() };
            let st = lock(r).stats().clone();
            let g = |c: &AtomicU64| c.load(Relaxed);
            let server = s.admin.effective().relay.tracker;
            Json(TrackerBody {
                server: (!server.is_empty()).then_some(server),
                connected: g(&st.tracker_connected) > 0,
                queued: g(&st.tracker_queued),
                acked: g(&st.tracker_acked),
                dropped: g(&st.tracker_dropped),
                backlog: g(&st.tracker_backlog),
                reconnects: g(&st.tracker_reconnects),
            })
            .into_response()
        }
        "users" => {
            let Some(r) = &src.relay else { return no_relay() };
            let now = Instant::now();
            let clock = api::Clock {
                mono: now,
                unix: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default(),
            };
            let views = lock(r).pilots(now);
            let users = views
                .iter()
                .map(|v| User {
                    pilot: api::pilots::pilot(v, &clock),
                    address: v.addr.to_string(),
                    range_nm: v.range_nm,
                })
                .collect();
            Json(UsersBody {
                online: views.len(),
                users,
            })
            .into_response()
        }
        other => error(
            StatusCode::NOT_FOUND,
            format!("no such topic {other:?}: stats, settings, version, uptime, whitelist, blacklist, crossfeeds, relays, tracker, users"),
        ),
    }
}

#[allow(clippy::result_large_err)] // the refusal is the handler's answer, sent at once
fn list_or_404(name: &str) -> Result<List, Response> {
    parse_list(name).ok_or_else(|| {
        error(
            StatusCode::NOT_FOUND,
            format!("{name:?} cannot be changed: blacklist, relays, crossfeeds"),
        )
    })
}

/// fgms's `LIST add ENTRY`: saved, then applied at once, kept across restarts and
/// reloads until deleted.
#[utoipa::path(post, path = "/api/admin/{name}", tag = "admin",
    params(("name" = String, Path, description = "blacklist, relays or crossfeeds")),
    request_body = ChangeRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the change is saved and in force", body = ChangeBody),
        (status = 400, description = "not an entry this list can hold", body = ErrorBody),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such list, or no relay runs here", body = ErrorBody),
        (status = 500, description = "the state file cannot be written: nothing changed", body = ErrorBody),
    ))]
pub async fn add(
    State(s): State<AdminState>,
    peer: Peer,
    headers: HeaderMap,
    list: Result<Path<String>, PathRejection>,
    body: Result<Json<ChangeRequest>, JsonRejection>,
) -> Response {
    let list = list.map(|Path(l)| l).map_err(|e| e.body_text());
    let entry = body.map(|Json(r)| r.entry).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!("expected {{\"entry\": \"...\"}}: {}", e.body_text()),
        )
    });
    change_request(s, peer, headers, list, entry, true).await
}

/// fgms's `LIST delete ENTRY` (the entry percent-encoded; a CIDR's `/` may stay):
/// saved, then applied; an entry of the file stays deleted across reloads until it
/// is added again.
#[utoipa::path(delete, path = "/api/admin/{name}/{entry}", tag = "admin",
    params(
        ("name" = String, Path, description = "blacklist, relays or crossfeeds"),
        ("entry" = String, Path, description = "the entry to delete"),
    ),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the change is saved and in force", body = ChangeBody),
        (status = 400, description = "not an entry this list can hold", body = ErrorBody),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such list, or no relay runs here", body = ErrorBody),
        (status = 500, description = "the state file cannot be written: nothing changed", body = ErrorBody),
    ))]
pub async fn delete(
    State(s): State<AdminState>,
    peer: Peer,
    headers: HeaderMap,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    let (list, entry) = match path {
        Ok(Path((l, e))) => (Ok(l), Ok(e)),
        Err(e) => (Err(e.body_text()), Ok(String::new())),
    };
    change_request(s, peer, headers, list, entry, false).await
}

/// What `add` and `delete` share: authenticate first, then read the list and the
/// entry (their errors come after a refusal), then make the change.
async fn change_request(
    s: AdminState,
    peer: Peer,
    headers: HeaderMap,
    list: Result<String, String>,
    entry: Result<String, Response>,
    added: bool,
) -> Response {
    let peer = peer_of(peer);
    let by = match s.admin.authorize(peer, &headers) {
        Ok(n) => n,
        Err(r) => return r,
    };
    let list = match list {
        Ok(l) => l,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let list = match list_or_404(&list) {
        Ok(l) => l,
        Err(r) => return r,
    };
    let entry = match entry {
        Ok(e) => e,
        Err(r) => return r,
    };
    match s.admin.change(list, &entry, added, &by, peer).await {
        Ok(b) => Json(b).into_response(),
        Err(r) => r,
    }
}

/// The admin routes (answering 404 while the API is off).
pub fn routes(state: AdminState) -> axum::Router {
    use axum::routing::{delete as del, get};
    axum::Router::new()
        .route("/api/admin/{list}", get(show).post(add))
        .route("/api/admin/{list}/{*entry}", del(delete))
        .with_state(state)
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
