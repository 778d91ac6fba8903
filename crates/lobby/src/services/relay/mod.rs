//! The relay part: [`relay::Engine`] served over UDP, and the telnet pilot list.

pub mod peers;

use crate::lifecycle::{listening, lock, tcp_listener, Stop, Supervisor};
use crate::services::relay::peers::{resolve_loop, PeerState, Peers};
use crate::udp_worker::{self, Workers};
use anyhow::Result;
use config::{PeerOptions, TelnetOptions};
use relay::stats::add;
use relay::{Engine, Stats};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// How long one rendered telnet list is served before it is rendered again.
const TELNET_SNAPSHOT_AGE: Duration = Duration::from_secs(1);
/// A telnet client has this long to take the whole list.
const TELNET_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A running relay.
pub struct RelayServer {
    engine: Arc<Mutex<Engine>>,
    peers: Arc<Mutex<PeerState>>,
    peers_changed: Arc<tokio::sync::Notify>,
    udp: Vec<SocketAddr>,
    /// Bound telnet addresses.
    pub telnet: Vec<SocketAddr>,
}

/// Who records the relay's local pilots: the tracker link and the flight log.
#[derive(Default)]
pub struct Recorders {
    /// Report to this tracker, as fgms does.
    pub tracker: Option<config::TrackerOptions>,
    /// Other subscribers of the pilot feed (the flight log).
    pub feeds: Vec<tokio::sync::mpsc::Sender<Arc<crate::services::feed::Batch>>>,
}

impl RelayServer {
    /// Binds every listener, prints the `listening ...` lines and starts serving
    /// under `sup`. Peers given by IP are in use at once, names as they resolve.
    pub async fn start(
        sup: &Supervisor,
        config: relay::Config,
        peers: PeerOptions,
        listen: &[SocketAddr],
        telnet: TelnetOptions,
        workers: Workers,
        recorders: Recorders,
    ) -> Result<RelayServer> {
        let Recorders {
            tracker,
            feeds: mut feed_subscribers,
        } = recorders;
        let state = PeerState {
            peers: Peers::new(peers.names, peers.refresh, None, Instant::now()),
            base: config,
        };
        let engine = Arc::new(Mutex::new(Engine::new(
            state.peers.apply(&state.base),
            Arc::new(Stats::default()),
        )));
        let state = Arc::new(Mutex::new(state));
        if let Some(t) = tracker {
            let (tx, rx) = tokio::sync::mpsc::channel(crate::services::feed::SUBSCRIBER_BACKLOG);
            feed_subscribers.push(tx);
            let stats = lock(&engine).stats().clone();
            let task = crate::services::tracker::client::run(rx, stats, t, sup.stop().clone());
            sup.spawn_task("relay-tracker", task);
        }
        if !feed_subscribers.is_empty() {
            let task =
                crate::services::feed::run(engine.clone(), feed_subscribers, sup.stop().clone());
            sup.spawn_task("relay-feed", task);
        }
        let peers_changed = Arc::new(tokio::sync::Notify::new());
        sup.spawn_task(
            "relay-peers",
            resolve_loop(
                state.clone(),
                engine.clone(),
                peers_changed.clone(),
                sup.stop().clone(),
            ),
        );
        let mut listeners = Vec::new();
        for &a in &telnet.addrs {
            listeners.push(tcp_listener(a, "telnet")?);
        }
        let udp = udp_worker::serve(sup, "relay", engine.clone(), listen, workers)?;
        let list = Arc::new(TelnetList::new(engine.clone(), &telnet));
        let mut bound = Vec::new();
        for l in listeners {
            let a = l.local_addr()?;
            listening("relay", "telnet", a);
            bound.push(a);
            sup.spawn_task(
                "relay-telnet",
                telnet_loop(l, list.clone(), sup.stop().clone()),
            );
        }
        Ok(RelayServer {
            engine,
            peers: state,
            peers_changed,
            udp,
            telnet: bound,
        })
    }

    /// Bound UDP addresses.
    pub fn udp_addrs(&self) -> &[SocketAddr] {
        &self.udp
    }

    /// The engine, for reloads and readers (HTTP, metrics).
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// The configured relay and crossfeed names and their addresses.
    pub fn peers(&self) -> &Arc<Mutex<PeerState>> {
        &self.peers
    }

    /// A handle that reconfigures this relay (SIGHUP, the admin API).
    pub fn control(&self) -> RelayControl {
        RelayControl {
            engine: self.engine.clone(),
            peers: self.peers.clone(),
            peers_changed: self.peers_changed.clone(),
        }
    }
}

/// Changes a running relay's configuration; cheap to clone.
#[derive(Clone)]
pub struct RelayControl {
    engine: Arc<Mutex<Engine>>,
    peers: Arc<Mutex<PeerState>>,
    peers_changed: Arc<tokio::sync::Notify>,
}

impl RelayControl {
    /// Applies a new configuration and keeps the pilots. Peers whose names were
    /// already resolved keep their addresses; new names are resolved now.
    pub fn reconfigure(&self, config: relay::Config, peers: PeerOptions) {
        let mut st = lock(&self.peers);
        st.peers = Peers::new(peers.names, peers.refresh, Some(&st.peers), Instant::now());
        st.base = config;
        let full = st.peers.apply(&st.base);
        drop(st);
        lock(&self.engine).reconfigure(full);
        self.peers_changed.notify_one();
    }
}

/// The telnet pilot list: one rendering shared by every connection for up to
/// [`TELNET_SNAPSHOT_AGE`], and the connection limits.
struct TelnetList {
    engine: Arc<Mutex<Engine>>,
    stats: Arc<Stats>,
    /// The last rendering and when its snapshot was taken. A tokio mutex: one
    /// connection renders while the others wait for its result.
    cached: tokio::sync::Mutex<Option<(Instant, Arc<str>)>>,
    max_connections: usize,
    max_per_ip: usize,
    open: Mutex<OpenConnections>,
}

#[derive(Default)]
struct OpenConnections {
    total: usize,
    per_source: HashMap<IpAddr, usize>,
}

/// Frees a connection's place in the limits when it ends.
struct Admitted {
    list: Arc<TelnetList>,
    source: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = lock(&self.list.open);
        open.total -= 1;
        if let Some(n) = open.per_source.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                open.per_source.remove(&self.source);
            }
        }
    }
}

/// Why a telnet connection was closed unserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    PerIp,
    Total,
}

impl TelnetList {
    fn new(engine: Arc<Mutex<Engine>>, options: &TelnetOptions) -> TelnetList {
        let stats = lock(&engine).stats().clone();
        TelnetList {
            engine,
            stats,
            cached: tokio::sync::Mutex::new(None),
            max_connections: options.max_connections,
            max_per_ip: options.max_per_ip,
            open: Mutex::new(OpenConnections::default()),
        }
    }

    /// Takes a place for a connection from `peer`, or says which limit is reached.
    fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Refusal> {
        let source = relay::source_key(peer);
        let mut open = lock(&self.open);
        if open.total >= self.max_connections {
            return Err(Refusal::Total);
        }
        let n = open.per_source.entry(source).or_default();
        if *n >= self.max_per_ip {
            return Err(Refusal::PerIp);
        }
        *n += 1;
        open.total += 1;
        Ok(Admitted {
            list: self.clone(),
            source,
        })
    }

    /// The list as it is now, rendered at most once per [`TELNET_SNAPSHOT_AGE`].
    /// The engine lock is held only to copy the pilots; rendering happens outside it.
    async fn text(&self) -> Arc<str> {
        let mut cached = self.cached.lock().await;
        if let Some((at, text)) = cached.as_ref() {
            if at.elapsed() < TELNET_SNAPSHOT_AGE {
                return text.clone();
            }
        }
        let taken = Instant::now();
        let (name, pilots, counters) = {
            let e = lock(&self.engine);
            (
                e.config().name.clone(),
                e.pilots(taken),
                e.stats().snapshot(),
            )
        };
        let render = move || Arc::<str>::from(relay::telnet::render(&name, &pilots, &counters));
        let text = match tokio::task::spawn_blocking(render).await {
            Ok(t) => t,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        *cached = Some((taken, text.clone()));
        text
    }
}

/// Accepts telnet connections until the stop signal; each gets the pilot list,
/// within the connection limits.
async fn telnet_loop(listener: TcpListener, list: Arc<TelnetList>, stop: Stop) -> Result<()> {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.stopped() => return Ok(()),
        };
        let (mut conn, peer) = match accepted {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "telnet accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        crate::lifecycle::injected_panic("relay-telnet");
        let admitted = match list.admit(peer.ip()) {
            Ok(a) => a,
            Err(why) => {
                let (counter, reason) = match why {
                    Refusal::PerIp => (
                        &list.stats.telnet_refused_per_ip,
                        "too many from this source",
                    ),
                    Refusal::Total => (&list.stats.telnet_refused_total, "too many in total"),
                };
                add(counter, 1);
                tracing::debug!(%peer, reason, "telnet connection refused");
                drop(conn); // closed at once, nothing sent.
                continue;
            }
        };
        let list = list.clone();
        tokio::spawn(async move {
            let _admitted = admitted;
            let write = async {
                let text = list.text().await;
                conn.write_all(text.as_bytes()).await?;
                conn.shutdown().await
            };
            match tokio::time::timeout(TELNET_WRITE_TIMEOUT, write).await {
                Ok(Ok(())) => {
                    add(&list.stats.telnet_served, 1);
                    tracing::debug!(%peer, "telnet pilot list sent");
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "telnet client went away"),
                Err(_) => tracing::debug!(%peer, "telnet client too slow: closed"),
            }
        });
    }
}
