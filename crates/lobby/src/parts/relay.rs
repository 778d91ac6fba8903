//! The relay part: [`relay::Engine`] served over UDP, and the telnet pilot list.

use crate::lifecycle::{listening, lock, tcp_listener, Stop, Supervisor};
use crate::udp_worker::{self, Workers};
use anyhow::Result;
use relay::{Engine, Stats};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A running relay.
pub struct RelayServer {
    engine: Arc<Mutex<Engine>>,
    udp: Vec<SocketAddr>,
    /// Bound telnet addresses.
    pub telnet: Vec<SocketAddr>,
}

impl RelayServer {
    /// Binds every listener, prints the `listening ...` lines and starts serving
    /// under `sup`.
    pub async fn start(
        sup: &Supervisor,
        config: relay::Config,
        listen: &[SocketAddr],
        telnet: &[SocketAddr],
        workers: Workers,
    ) -> Result<RelayServer> {
        let engine = Arc::new(Mutex::new(Engine::new(config, Arc::new(Stats::default()))));
        let mut listeners = Vec::new();
        for &a in telnet {
            listeners.push(tcp_listener(a, "telnet")?);
        }
        let udp = udp_worker::serve(sup, "relay", engine.clone(), listen, workers)?;
        let mut telnet = Vec::new();
        for l in listeners {
            let a = l.local_addr()?;
            listening("relay", "telnet", a);
            telnet.push(a);
            sup.spawn_task(
                "relay-telnet",
                telnet_loop(l, engine.clone(), sup.stop().clone()),
            );
        }
        Ok(RelayServer {
            engine,
            udp,
            telnet,
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

    /// Applies a new configuration and keeps the pilots (SIGHUP).
    pub fn reconfigure(&self, config: relay::Config) {
        lock(&self.engine).reconfigure(config);
    }
}

/// Accepts telnet connections until the stop signal; each gets the pilot list.
async fn telnet_loop(listener: TcpListener, engine: Arc<Mutex<Engine>>, stop: Stop) -> Result<()> {
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
