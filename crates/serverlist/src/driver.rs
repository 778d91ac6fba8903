//! The tokio side: the [`Prober`] over one UDP socket per address family, the host
//! name resolver, and the one-shot probe of `lobby master probe`. Thin: the
//! decisions are the catalog's and the prober's.

use crate::catalog::{Catalog, ProbeInfo};
use crate::prober::{Event, Prober, ProberConfig, ProberCounts};
use crate::sources::{self, Files};
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
    /// Host names that did not resolve at the last try.
    pub unresolved: Mutex<Vec<String>>,
    /// Wakes the prober (sources reloaded).
    pub wake: Notify,
    /// Wakes the resolver (sources reloaded).
    pub wake_resolver: Notify,
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

    /// (Re)reads the sources directory: files in error keep their previous copy and
    /// are returned, one line each, for the log. Err when the directory itself
    /// cannot be read or the sources are too many (the catalog is then unchanged).
    pub fn reload_sources(&self) -> Result<(usize, Vec<String>), String> {
        let Some(dir) = lock(&self.options).sources.clone() else {
            return Ok((0, Vec::new()));
        };
        let previous = lock(&self.files).clone();
        let loaded = sources::load_dir(&dir, &previous)?;
        crate::stats::ListStats::set(&self.stats.sources_refused, loaded.errors.len());
        lock(&self.catalog).set_curated(&loaded.files)?;
        let n = loaded.files.values().map(Vec::len).sum();
        *lock(&self.files) = loaded.files;
        self.wake.notify_one();
        self.wake_resolver.notify_one();
        Ok((n, loaded.errors))
    }
}

impl Shared {
    /// [`Shared::reload_sources`], logged: each file refused at warn (naming the
    /// file, the line and the key), the totals at info.
    pub fn read_sources_logged(&self) -> Result<(), String> {
        let (n, errors) = self.reload_sources()?;
        for e in &errors {
            tracing::warn!("server list source refused: {e}");
        }
        let gamedirs = lock(&self.files).len();
        tracing::info!(
            servers = n,
            gamedirs,
            refused = errors.len(),
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

/// One socket per family; the IPv6 one only where the system has IPv6.
struct Sockets {
    v4: UdpSocket,
    v6: Option<UdpSocket>,
}

impl Sockets {
    fn bind() -> std::io::Result<Sockets> {
        Ok(Sockets {
            v4: query::client_socket::bind_any(false)?,
            v6: query::client_socket::bind_any(true).ok(),
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

    async fn recv(&self, b4: &mut [u8], b6: &mut [u8]) -> Option<(usize, SocketAddr, bool)> {
        tokio::select! {
            r = self.v4.recv_from(b4) => r.ok().map(|(n, a)| (n, a, false)),
            r = async {
                match &self.v6 {
                    Some(s) => s.recv_from(b6).await,
                    None => std::future::pending().await,
                }
            } => r.ok().map(|(n, a)| (n, a, true)),
        }
    }
}

/// Records ended probes in the catalog at `wall`.
fn apply(catalog: &Mutex<Catalog>, events: &mut Vec<Event>, wall: i64) {
    if events.is_empty() {
        return;
    }
    let mut c = lock(catalog);
    for e in events.drain(..) {
        let (addr, answer): (SocketAddr, Option<(ProbeInfo, u32)>) = match e {
            Event::Answered {
                addr,
                info,
                ping_ms,
            } => (addr, Some((info, ping_ms))),
            Event::Silent { addr, why } => {
                tracing::debug!(peer = %addr, why, "probe unanswered");
                (addr, None)
            }
        };
        c.record_probe(addr, answer, wall);
    }
}

/// Probes the catalog's targets until `stop`: every `refresh` the targets are taken
/// again (and at once when sources are reloaded), with the servers `heartbeats`
/// returns (gamedir, address: the master's table) counting as seen and not probed.
pub async fn run<H, S>(shared: Arc<Shared>, heartbeats: H, stop: S) -> std::io::Result<()>
where
    H: Fn() -> Vec<(String, SocketAddr)> + Send,
    S: Future<Output = ()>,
{
    let sockets = Sockets::bind()?;
    let (mut b4, mut b6) = (vec![0u8; 65536], vec![0u8; 65536]);
    let seed = udp::time::since_epoch().as_nanos() as u64;
    let mut prober = Prober::new(lock(&shared.options).prober, Instant::now(), seed);
    let refresh = Duration::from_secs(5);
    let mut next_refresh = Instant::now();
    let mut next_sample = Instant::now() + lock(&shared.options).sample_every;
    let (mut out, mut events) = (Vec::new(), Vec::new());
    tokio::pin!(stop);
    loop {
        let now = Instant::now();
        let wall = udp::time::unix_secs();
        if now >= next_refresh {
            let opts = lock(&shared.options).clone();
            prober.reconfigure(opts.prober);
            let hb = heartbeats();
            let targets = {
                let mut c = lock(&shared.catalog);
                for (g, a) in &hb {
                    c.record_heartbeat(g, *a, wall);
                }
                let proven: HashSet<SocketAddr> = hb.iter().map(|(_, a)| *a).collect();
                c.targets(&proven)
            };
            prober.set_targets(&targets, now);
            next_refresh = now + refresh;
            let (entries, published) = {
                let c = lock(&shared.catalog);
                let grace = lock(&shared.options).grace;
                (c.entries().count(), c.published(wall, grace).len())
            };
            crate::stats::ListStats::set(&shared.stats.entries, entries);
            crate::stats::ListStats::set(&shared.stats.published, published);
        }
        if now >= next_sample {
            let opts = lock(&shared.options).clone();
            let fresh = (opts.prober.interval.as_secs() as i64).saturating_mul(2) + 30;
            let mut c = lock(&shared.catalog);
            c.take_sample(wall, fresh);
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
        apply(&shared.catalog, &mut events, wall);
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
            r = sockets.recv(&mut b4, &mut b6) => {
                if let Some((n, from, v6)) = r {
                    let d = if v6 { &b6[..n] } else { &b4[..n] };
                    prober.handle(from, d, Instant::now(), &mut out, &mut events);
                    sockets.send(&mut out);
                    apply(&shared.catalog, &mut events, udp::time::unix_secs());
                }
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
        *lock(&shared.unresolved) = failed;
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
    let sockets = Sockets::bind()?;
    let (mut b4, mut b6) = (vec![0u8; 65536], vec![0u8; 65536]);
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
            r = sockets.recv(&mut b4, &mut b6) => {
                if let Some((n, from, v6)) = r {
                    let d = if v6 { &b6[..n] } else { &b4[..n] };
                    prober.handle(from, d, Instant::now(), &mut out, &mut events);
                    sockets.send(&mut out);
                    done += events.len();
                    if !events.is_empty() {
                        apply(catalog, &mut events, udp::time::unix_secs());
                        progress(done, total);
                    }
                }
            }
        }
    }
    Ok(prober.counts())
}
