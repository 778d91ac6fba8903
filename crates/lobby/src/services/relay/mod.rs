//! The relay part: [`relay::Engine`] served over UDP, and the telnet pilot list.

pub mod peers;
mod telnet;

use crate::services::relay::peers::{resolve_loop, PeerState};
use crate::udp_worker::{self, Workers};
use anyhow::Result;
use config::{PeerOptions, TelnetOptions};
use lifecycle::{listening, lock, tcp_listener, Supervisor};
use relay::peers::Peers;
use relay::{Engine, Stats};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
        let list = Arc::new(telnet::TelnetList::new(engine.clone(), &telnet));
        let mut bound = Vec::new();
        for l in listeners {
            let a = l.local_addr()?;
            listening("relay", "telnet", a);
            bound.push(a);
            sup.spawn_task(
                "relay-telnet",
                telnet::serve(
                    l,
                    list.clone(),
                    sup.tasks("relay-telnet"),
                    sup.stop().clone(),
                ),
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
