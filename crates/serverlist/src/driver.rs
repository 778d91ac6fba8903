//! The tokio side: the [`Prober`] over one UDP socket per address family, the host
//! name resolver, and the one-shot probe of `lobby master probe`. Thin: the
//! decisions are the catalog's and the prober's.

use crate::catalog::{Catalog, ProbeInfo};
use crate::prober::{Event, Prober, ProberConfig, ProberCounts};
use crate::registration::{Pending, Refused};
use crate::sources::{self, Files};
use crate::stats::ListStats;
use std::collections::HashSet;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;
use tokio::sync::Notify;

/// How the live list runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The sources directory, if any.
    pub sources: Option<PathBuf>,
    /// The prober's pacing.
    pub prober: ProberConfig,
    /// Seconds a silent server stays published after its last answer.
    pub grace: i64,
    /// Seconds an entry in no source is kept after its last answer.
    pub prune_after: i64,
    /// How often a players sample is taken (and the state pruned).
    pub sample_every: Duration,
    /// How often host names are resolved again.
    pub resolve_every: Duration,
    /// Self-registration's caps; `None`: registration is off.
    pub registration: Option<crate::registration::Limits>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sources: None,
            prober: ProberConfig::default(),
            grace: 172_800,
            prune_after: 30 * 86_400,
            sample_every: Duration::from_secs(600),
            resolve_every: Duration::from_secs(300),
            registration: None,
        }
    }
}

/// What the list's tasks and its readers share.
#[derive(Debug, Default)]
pub struct Shared {
    /// The catalog.
    pub catalog: Mutex<Catalog>,
    /// The sources as last read well.
    pub files: Mutex<Files>,
    /// The counters (`/stats` → `list`).
    pub stats: crate::stats::ListStats,
    /// The options (replaced on reload).
    pub options: Mutex<Options>,
    /// Self-registrations, pending and admitted.
    pub registrations: Mutex<crate::registration::Registrations>,
    /// Wakes the prober (sources reloaded).
    pub wake: Notify,
    /// Wakes the resolver (sources reloaded).
    pub wake_resolver: Notify,
    /// Wakes whoever saves the registrations (one asked, admitted, approved,
    /// removed or expired): a SIGKILL then loses none of them.
    pub registrations_changed: Notify,
}

/// Locks `m`, going on with the data if a holder panicked (every update here
/// leaves the data consistent).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// A list with these options and nothing read yet.
    pub fn new(options: Options) -> Shared {
        Shared {
            options: Mutex::new(options),
            ..Shared::default()
        }
    }

    /// (Re)reads the sources directory: files in error keep their previous copy,
    /// bad entries are skipped; both are returned, one line each, for the log (with
    /// the warnings). Err when the directory itself cannot be read or the sources
    /// are too many (the catalog is then unchanged).
    pub fn reload_sources(&self) -> Result<(usize, sources::Loaded), sources::SourcesError> {
        let Some(dir) = lock(&self.options).sources.clone() else {
            return Ok((0, sources::Loaded::default()));
        };
        let previous = lock(&self.files).clone();
        let mut loaded = sources::load_dir(&dir, &previous)?;
        crate::stats::ListStats::set(&self.stats.sources_refused, loaded.errors.len());
        crate::stats::ListStats::set(&self.stats.sources_skipped, loaded.skipped());
        lock(&self.catalog).set_curated(&loaded.files)?;
        let n = loaded.files.values().map(Vec::len).sum();
        *lock(&self.files) = std::mem::take(&mut loaded.files);
        self.wake.notify_one();
        self.wake_resolver.notify_one();
        Ok((n, loaded))
    }
}

impl Shared {
    /// [`Shared::reload_sources`], logged: each file refused, entry skipped and
    /// warning at warn (naming the file, the line and the key), the totals at info.
    pub fn read_sources_logged(&self) -> Result<(), sources::SourcesError> {
        let (n, loaded) = self.reload_sources()?;
        for e in &loaded.errors {
            tracing::warn!("server list source refused: {e}");
        }
        for i in &loaded.issues {
            tracing::warn!("server list source {i}");
        }
        let gamedirs = lock(&self.files).len();
        tracing::info!(
            servers = n,
            gamedirs,
            refused = loaded.errors.len(),
            skipped = loaded.skipped(),
            warnings = loaded.warnings(),
            "server list sources read"
        );
        Ok(())
    }

    /// A SIGHUP: new options, the sources read again (a file in error keeps its
    /// previous copy; a directory that cannot be read keeps everything). A sources
    /// directory named or removed only now takes effect at the next start (the tasks
    /// run only when there were sources at start).
    pub fn reload(&self, opts: Options) {
        let had = lock(&self.options).sources.is_some();
        let has = opts.sources.is_some();
        *lock(&self.options) = opts;
        if had != has {
            tracing::warn!(
                "master.sources was added or removed: restart lobby for it to take effect"
            );
        }
        if has {
            if let Err(e) = self.read_sources_logged() {
                tracing::error!("server list: {e} (the sources read before are kept)");
            }
        }
    }
}

impl Shared {
    /// A registration request from `from` (`POST /api/servers/register`): `Err(None)`
    /// when registration is off. `elsewhere` refuses what the caller knows (the
    /// master's table, its bans); the catalog's own sources are checked here.
    pub fn register(
        &self,
        from: std::net::IpAddr,
        address: &str,
        gamedir: &str,
        contact: &str,
        elsewhere: impl Fn(&str, SocketAddr) -> Option<Refused>,
    ) -> Result<Pending, Option<Refused>> {
        let Some(limits) = lock(&self.options).registration else {
            return Err(None);
        };
        let now = udp::time::unix_secs();
        let listed = |g: &str, a: SocketAddr| {
            let known = lock(&self.catalog)
                .get(g, &a.to_string())
                .is_some_and(|e| e.sources & crate::catalog::source::CURATED != 0);
            if known {
                return Some(Refused::Exists(format!("{a} is listed for {g} already")));
            }
            elsewhere(g, a)
        };
        let token: [u8; 12] = rand::random();
        let r = lock(&self.registrations)
            .request(&limits, from, address, gamedir, contact, listed, now, token)
            .cloned();
        // At debug, accepted or not: a request is a stranger's, and each is counted.
        let answer = match &r {
            Ok(p) => {
                tracing::debug!(peer = %p.address, gamedir, from = p.from, "registration pending: waiting for the server to show its token");
                self.registrations_changed.notify_one();
                &self.stats.register_accepted
            }
            Err(e) => {
                tracing::debug!(%from, address, "registration refused: {e}");
                match e {
                    Refused::Invalid(_) => &self.stats.register_invalid,
                    Refused::Exists(_) => &self.stats.register_exists,
                    Refused::Banned(_) => &self.stats.register_banned,
                    Refused::TooMany(_) => &self.stats.register_limited,
                }
            }
        };
        ListStats::add(answer, 1);
        self.count_registrations();
        r.map_err(Some)
    }
}

impl Shared {
    /// An operator admits the pending `token` without proof (`by`: the admin).
    pub fn approve(&self, token: &str, by: &str) -> Option<crate::registration::Registered> {
        let (r, superseded) = {
            let mut regs = lock(&self.registrations);
            let before = regs.pending.len();
            let r = regs.approve(token, by, udp::time::unix_secs())?;
            (r, before - regs.pending.len() - 1)
        };
        ListStats::add(&self.stats.registrations_superseded, superseded);
        tracing::info!(peer = %r.address, gamedir = r.gamedir, by, "registration approved by an admin");
        self.sync_registered();
        Some(r)
    }

    /// Removes every registration (pending or admitted) of an address `within`
    /// says yes to; returns how many.
    pub fn unregister(&self, within: impl Fn(std::net::IpAddr, u16) -> bool) -> usize {
        let gone: Vec<SocketAddr> = {
            let r = lock(&self.registrations);
            let p = r.pending.values().map(|p| p.address);
            let a = r.registered.values().map(|r| r.address);
            p.chain(a).filter(|a| within(a.ip(), a.port())).collect()
        };
        let n: usize = gone
            .iter()
            .map(|a| lock(&self.registrations).remove(*a))
            .sum();
        if n > 0 {
            self.sync_registered();
        }
        n
    }

    /// Sets the pending and registered gauges.
    pub fn count_registrations(&self) {
        let r = lock(&self.registrations);
        ListStats::set(&self.stats.registrations_pending, r.pending.len());
        ListStats::set(&self.stats.registrations_registered, r.registered.len());
    }

    fn sync_registered(&self) {
        self.count_registrations();
        let listed = lock(&self.registrations).listed();
        lock(&self.catalog).set_registered(&listed);
        self.wake.notify_one();
        self.registrations_changed.notify_one();
    }
}

/// One socket per family (the IPv6 one only where the system has IPv6), and their
/// receive buffers.
struct Sockets {
    v4: UdpSocket,
    v6: Option<UdpSocket>,
    b4: Vec<u8>,
    b6: Vec<u8>,
}

impl Sockets {
    fn bind() -> std::io::Result<Sockets> {
        Ok(Sockets {
            v4: query::client_socket::bind_any(false)?,
            v6: query::client_socket::bind_any(true).ok(),
            b4: vec![0u8; 65536],
            b6: vec![0u8; 65536],
        })
    }

    fn send(&self, out: &mut Vec<(SocketAddr, Vec<u8>)>) {
        for (to, d) in out.drain(..) {
            let s = if to.is_ipv6() {
                self.v6.as_ref()
            } else {
                Some(&self.v4)
            };
            // A full buffer or an unreachable address ends as a silent probe.
            if let Some(s) = s {
                let _ = s.try_send_to(&d, to);
            }
        }
    }

    /// The next datagram on either socket, to `prober`; what it answers is sent.
    async fn receive(&mut self, prober: &mut Prober, events: &mut Vec<Event>) {
        let Sockets { v4, v6, b4, b6 } = self;
        let got = tokio::select! {
            r = v4.recv_from(b4) => r.ok().map(|(n, a)| (&b4[..n], a)),
            r = async {
                match v6 {
                    Some(s) => s.recv_from(b6).await,
                    None => std::future::pending().await,
                }
            } => r.ok().map(|(n, a)| (&b6[..n], a)),
        };
        if let Some((d, from)) = got {
            let mut out = Vec::new();
            prober.handle(from, d, Instant::now(), &mut out, events);
            self.send(&mut out);
        }
    }
}

/// Records ended probes in the catalog at `wall`; returns how many answers named
/// another gamedir than a registered entry was admitted for (not counted as seen).
fn apply(catalog: &Mutex<Catalog>, events: &mut Vec<Event>, wall: i64) -> usize {
    let mut other_game = 0;
    if events.is_empty() {
        return other_game;
    }
    let mut c = lock(catalog);
    for e in events.drain(..) {
        let (addr, answer): (SocketAddr, Option<(ProbeInfo, u32)>) = match e {
            Event::Answered {
                addr,
                info,
                ping_us,
            } => (addr, Some((info, ping_us))),
            Event::Silent { addr, why } => {
                tracing::debug!(peer = %addr, why, "probe unanswered");
                (addr, None)
            }
        };
        let n = c.record_probe(addr, answer, wall);
        if n > 0 {
            tracing::debug!(peer = %addr, "a registered server answered as another game");
        }
        other_game += n;
    }
    other_game
}

/// Probes the catalog's targets until `stop`: every `refresh` the targets are taken
/// again (and at once when sources are reloaded), with the servers `heartbeats`
/// returns (gamedir, address, players: the master's table) counting as seen and not
/// probed, and in the players samples.
pub async fn run<H, S>(shared: Arc<Shared>, heartbeats: H, stop: S) -> std::io::Result<()>
where
    H: Fn() -> Vec<(String, SocketAddr, u32)> + Send,
    S: Future<Output = ()>,
{
    let mut sockets = Sockets::bind()?;
    let seed = udp::time::since_epoch().as_nanos() as u64;
    let mut prober = Prober::new(lock(&shared.options).prober, Instant::now(), seed);
    let refresh = Duration::from_secs(5);
    let mut next_refresh = Instant::now();
    let mut next_sample = Instant::now() + lock(&shared.options).sample_every;
    let (mut out, mut events) = (Vec::new(), Vec::new());
    let mut hb = Vec::new();
    tokio::pin!(stop);
    loop {
        let now = Instant::now();
        let wall = udp::time::unix_secs();
        if now >= next_refresh {
            let opts = lock(&shared.options).clone();
            prober.reconfigure(opts.prober);
            hb = heartbeats();
            let targets = {
                let mut c = lock(&shared.catalog);
                for (g, a, _) in &hb {
                    c.record_heartbeat(g, *a, wall);
                }
                let proven: HashSet<SocketAddr> = hb.iter().map(|(_, a, _)| *a).collect();
                c.targets(&proven)
            };
            prober.set_targets(&targets, now);
            next_refresh = now + refresh;
            let (entries, published) = {
                let c = lock(&shared.catalog);
                let grace = lock(&shared.options).grace;
                (c.entries().count(), c.published_len(wall, grace))
            };
            crate::stats::ListStats::set(&shared.stats.entries, entries);
            crate::stats::ListStats::set(&shared.stats.published, published);
        }
        if now >= next_sample {
            let opts = lock(&shared.options).clone();
            let fresh = (opts.prober.interval.as_secs() as i64).saturating_mul(2) + 30;
            let mut c = lock(&shared.catalog);
            c.take_sample(wall, fresh, &hb);
            let pruned = c.prune(wall, opts.prune_after);
            if pruned > 0 {
                tracing::info!(
                    pruned,
                    "entries in no source unseen for prune_after dropped"
                );
            }
            next_sample = now + opts.sample_every;
        }
        prober.poll(now, &mut out, &mut events);
        sockets.send(&mut out);
        let other_game = apply(&shared.catalog, &mut events, wall);
        ListStats::add(&shared.stats.registered_other_game, other_game);
        shared.stats.set_prober(&prober.counts());
        let wake_at = prober
            .poll_timeout()
            .map_or(next_refresh, |t| t.min(next_refresh))
            .min(next_sample)
            .max(now + Duration::from_millis(1));
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = shared.wake.notified() => next_refresh = Instant::now(),
            _ = tokio::time::sleep_until(wake_at.into()) => {}
            _ = sockets.receive(&mut prober, &mut events) => {
                let other_game = apply(&shared.catalog, &mut events, udp::time::unix_secs());
                ListStats::add(&shared.stats.registered_other_game, other_game);
            }
        }
    }
}

/// Resolves the catalog's host names every `resolve_every` (each lookup bounded by
/// 5 s; a failure keeps the last good address) until `stop`.
pub async fn resolve_loop<S: Future<Output = ()>>(shared: Arc<Shared>, stop: S) {
    tokio::pin!(stop);
    loop {
        let failed = resolve_once(&shared.catalog).await;
        if !failed.is_empty() {
            tracing::warn!(names = ?failed, "source host names that do not resolve (the last good address, if any, is kept)");
        }
        crate::stats::ListStats::set(&shared.stats.unresolved, failed.len());
        let every = lock(&shared.options).resolve_every;
        tokio::select! {
            _ = &mut stop => return,
            _ = shared.wake_resolver.notified() => {}
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Resolves every host name of the catalog once (each lookup bounded by 5 s; the
/// first IPv4 address wins, as the engine's resolver picks); returns the names that
/// did not resolve (each keeps its last good address).
pub async fn resolve_once(catalog: &Mutex<Catalog>) -> Vec<String> {
    let names = lock(catalog).host_names();
    let mut failed = Vec::new();
    for name in names {
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::lookup_host(name.clone()),
        )
        .await;
        let addr = match r {
            Ok(Ok(it)) => {
                let all: Vec<SocketAddr> = it.collect();
                all.iter().find(|a| a.is_ipv4()).or(all.first()).copied()
            }
            _ => None,
        };
        if addr.is_none() {
            failed.push(name.clone());
        }
        lock(catalog).set_resolved(&name, addr);
    }
    failed
}

/// Probes every target of the catalog once (`lobby master probe`), as the rate and
/// concurrency of `cfg` allow; `progress(done, total)` after each ends.
pub async fn probe_once(
    catalog: &Mutex<Catalog>,
    cfg: ProberConfig,
    mut progress: impl FnMut(usize, usize),
) -> std::io::Result<ProberCounts> {
    let mut sockets = Sockets::bind()?;
    let targets = lock(catalog).targets(&HashSet::new());
    let total = targets.len();
    let cfg = ProberConfig {
        // Once each: never due again within this run.
        interval: Duration::from_secs(86_400 * 365),
        ..cfg
    };
    let mut prober = Prober::new(cfg, Instant::now(), 1);
    prober.set_targets(&targets, Instant::now());
    let (mut out, mut events) = (Vec::new(), Vec::new());
    let mut done = 0;
    while done < total {
        let now = Instant::now();
        prober.poll(now, &mut out, &mut events);
        sockets.send(&mut out);
        done += events.len();
        if !events.is_empty() {
            apply(catalog, &mut events, udp::time::unix_secs());
            progress(done, total);
        }
        if done >= total {
            break;
        }
        let wake_at = prober
            .poll_timeout()
            .unwrap_or(now + Duration::from_secs(1));
        tokio::select! {
            _ = tokio::time::sleep_until(wake_at.into()) => {}
            _ = sockets.receive(&mut prober, &mut events) => {
                done += events.len();
                if !events.is_empty() {
                    apply(catalog, &mut events, udp::time::unix_secs());
                    progress(done, total);
                }
            }
        }
    }
    Ok(prober.counts())
}

/// Checks pending registrations every 5 s until `stop`: each due address is asked its
/// info (its host name) and, when the token is not in it, its rules; an address that
/// shows its token is admitted and probed like the curated ones. Expired tokens are
/// dropped, and admitted servers unseen for `prune_after` lose their registration.
pub async fn registration_loop<S: Future<Output = ()>>(shared: Arc<Shared>, stop: S) {
    use crate::masterlist::Directive;
    use query::{Dialect, Kind, Outcome, QueryOptions};
    tokio::pin!(stop);
    let opts = QueryOptions {
        timeout: Duration::from_secs(2),
        retries: 1,
        concurrency: 32,
        deadline: None,
    };
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
        let now = udp::time::unix_secs();
        let prune_after = lock(&shared.options).prune_after;
        let due = {
            let mut r = lock(&shared.registrations);
            let expired = r.expire(now);
            ListStats::add(&shared.stats.registrations_expired, expired.len());
            if !expired.is_empty() {
                shared.registrations_changed.notify_one();
            }
            for p in expired {
                // One a registration at most, which the caps bound; at debug, as a
                // stranger may ask for as many as the caps allow.
                tracing::debug!(peer = %p.address, gamedir = p.gamedir, from = p.from, checks = p.checks, last = p.last_result, "registration expired without proof");
            }
            r.due(now, 32)
        };
        shared.count_registrations();
        let stale = forget_unseen(&shared, now, prune_after);
        if due.is_empty() {
            if stale > 0 {
                shared.sync_registered();
            }
            continue;
        }
        let addrs: Vec<SocketAddr> = due.iter().map(|(a, _)| *a).collect();
        ListStats::add(&shared.stats.registration_checks, addrs.len());
        let Ok(infos) = query::run_many(Kind::Info, &addrs, &opts, |_| {}).await else {
            continue;
        };
        // Per address: (host name, gamedir) if it answered, and how.
        let mut answers: Vec<(Option<(String, String)>, Directive)> = Vec::new();
        for (addr, _) in &due {
            let info = infos.iter().find(|(a, _)| a == addr).map(|(_, o)| o);
            answers.push(match info {
                Some(Outcome::Info { info, .. }) => {
                    let gs = matches!(info.dialect, Dialect::Source | Dialect::GoldSrc)
                        && info.protocol == 48;
                    (
                        Some((info.name.clone(), info.gamedir.clone())),
                        if gs { Directive::Gs } else { Directive::Ip },
                    )
                }
                _ => (None, Directive::Ip),
            });
        }
        // Rules only from an address that answered without any of its tokens in
        // its host name.
        let need: Vec<SocketAddr> = due
            .iter()
            .zip(&answers)
            .filter(|((_, tokens), (info, _))| {
                info.as_ref()
                    .is_some_and(|(n, _)| !tokens.iter().any(|t| n.contains(t.as_str())))
            })
            .map(|((a, _), _)| *a)
            .collect();
        let rules = if need.is_empty() {
            Vec::new()
        } else {
            query::run_many(Kind::Rules, &need, &opts, |_| {})
                .await
                .unwrap_or_default()
        };
        let mut admitted = Vec::new();
        let superseded = {
            let mut r = lock(&shared.registrations);
            let before = r.pending.len();
            for ((addr, tokens), (info, directive)) in due.iter().zip(&answers) {
                let rules = rules.iter().find_map(|(a, o)| match o {
                    Outcome::Rules { rules } if a == addr => Some(rules.as_slice()),
                    _ => None,
                });
                let info = info.as_ref().map(|(n, g)| (n.as_str(), g.as_str()));
                for token in tokens {
                    if let Some(reg) = r.check(token, info, rules, *directive, now) {
                        admitted.push(reg);
                    }
                }
            }
            (before - r.pending.len()).saturating_sub(admitted.len())
        };
        ListStats::add(&shared.stats.registrations_admitted, admitted.len());
        ListStats::add(&shared.stats.registrations_superseded, superseded);
        for reg in &admitted {
            tracing::info!(peer = %reg.address, gamedir = reg.gamedir, from = reg.from, "server registered: it showed its token");
        }
        if !admitted.is_empty() || stale > 0 {
            shared.sync_registered();
        }
    }
}

/// Drops registrations whose server has not answered for `prune_after` seconds (or
/// never did, that long after it was admitted); returns how many.
fn forget_unseen(shared: &Shared, now: i64, prune_after: i64) -> usize {
    let stale: Vec<SocketAddr> = {
        let r = lock(&shared.registrations);
        let c = lock(&shared.catalog);
        r.registered
            .values()
            .filter(|reg| {
                let seen = c
                    .get(&reg.gamedir, &reg.address.to_string())
                    .and_then(|e| e.last_seen)
                    .unwrap_or(reg.since);
                now - seen.max(reg.since) > prune_after
            })
            .map(|reg| reg.address)
            .collect()
    };
    let mut r = lock(&shared.registrations);
    for a in &stale {
        r.remove(*a);
        tracing::info!(peer = %a, "registration dropped: unseen for prune_after");
    }
    stale.len()
}
