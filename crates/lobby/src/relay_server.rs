//! The relay part: [`relay::Engine`] served over UDP, and the telnet pilot list.

use crate::listening;
use crate::udp_service::{lock, Service, UdpServer};
use anyhow::{Context, Result};
use relay::{Engine, Outbox, Stats};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

impl Service for Engine {
    type Out = Outbox;
    fn handle(&mut self, d: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        Engine::handle(self, d, from, now, out);
    }
    fn timeout(&mut self, now: Instant) {
        self.handle_timeout(now);
    }
    fn sends(out: &Outbox) -> impl Iterator<Item = (&[u8], SocketAddr)> {
        out.iter()
    }
    fn clear(out: &mut Outbox) {
        out.clear();
    }
}

/// A running relay.
pub struct RelayServer {
    engine: Arc<Mutex<Engine>>,
    udp: UdpServer,
    /// Bound telnet addresses.
    pub telnet: Vec<SocketAddr>,
    telnet_tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl RelayServer {
    /// Binds every listener, prints the `listening ...` lines and starts serving.
    pub async fn start(
        config: relay::Config,
        listen: &[SocketAddr],
        telnet: &[SocketAddr],
        workers: usize,
        realtime_priority: u8,
    ) -> Result<RelayServer> {
        let engine = Arc::new(Mutex::new(Engine::new(config, Arc::new(Stats::default()))));
        let mut listeners = Vec::new();
        for &a in telnet {
            let l = TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot bind telnet TCP {a}"))?;
            listeners.push(l);
        }
        let udp = UdpServer::start("relay", engine.clone(), listen, workers, realtime_priority)?;
        let mut telnet = Vec::new();
        for l in &listeners {
            let a = l.local_addr()?;
            listening("relay", "telnet", a);
            telnet.push(a);
        }
        let telnet_tasks = listeners
            .into_iter()
            .map(|l| tokio::spawn(telnet_loop(l, engine.clone())))
            .collect();
        Ok(RelayServer {
            engine,
            udp,
            telnet,
            telnet_tasks,
        })
    }

    /// Bound UDP addresses.
    pub fn udp_addrs(&self) -> &[SocketAddr] {
        &self.udp.addrs
    }

    /// The engine, for reloads and readers (HTTP, metrics).
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// Applies a new configuration and keeps the pilots (SIGHUP).
    pub fn reconfigure(&self, config: relay::Config) {
        lock(&self.engine).reconfigure(config);
    }

    /// Stops every thread and task.
    pub fn shutdown(self) {
        for t in self.telnet_tasks {
            t.abort();
        }
        self.udp.shutdown();
    }
}

async fn telnet_loop(listener: TcpListener, engine: Arc<Mutex<Engine>>) {
    loop {
        let (mut conn, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "telnet accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let text = {
            let e = lock(&engine);
            relay::telnet::render(&e.config().name, &e.pilots(Instant::now()), e.stats())
        };
        tokio::spawn(async move {
            tracing::debug!(%peer, "telnet pilot list");
            let write = async {
                conn.write_all(text.as_bytes()).await?;
                conn.shutdown().await
            };
            if tokio::time::timeout(Duration::from_secs(10), write)
                .await
                .is_err()
            {
                tracing::debug!(%peer, "telnet client too slow");
            }
        });
    }
}
