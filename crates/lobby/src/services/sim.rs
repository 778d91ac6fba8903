//! The simulated-servers part: a fleet of [`sim::Server`]s in one process, each on its
//! own UDP port, registered with the given masters. The protocol lives in the pure
//! state machine; this is the thin tokio socket loop around it, one task per server
//! under the supervisor.

use anyhow::{Context, Result};
use lifecycle::{listening, Stop, Supervisor};
pub use sim::FleetSpec;
use sim::{Outbox, Server};
use std::net::SocketAddr;
use std::time::Instant;
use tokio::net::UdpSocket;

/// A running fleet of simulated servers.
pub struct Fleet {
    addrs: Vec<SocketAddr>,
}

impl Fleet {
    /// Binds every server's socket, prints one `listening sim udp ADDR` line per
    /// server, and starts serving under `sup` (the first heartbeats go out at once).
    /// Every server stops with the supervisor's stop signal, sending the shutdown
    /// message `b\n` to its masters first.
    pub async fn start(sup: &Supervisor, spec: FleetSpec) -> Result<Fleet> {
        let mut configs = spec.configs()?;
        let v4 = spec.listen_ip.is_ipv4();
        for c in &mut configs {
            c.masters.retain(|m| {
                let same = m.is_ipv4() == v4;
                if !same {
                    tracing::warn!(master = %m, listen = %spec.listen_ip, "master of the other address family skipped");
                }
                same
            });
        }
        let mut sockets = Vec::with_capacity(configs.len());
        for i in 0..spec.count {
            let a = spec.addr(i);
            let s = UdpSocket::bind(a)
                .await
                .with_context(|| format!("cannot bind UDP {a} for simulated server {}", i + 1))?;
            sockets.push(s);
        }
        let now = Instant::now();
        let mut addrs = Vec::with_capacity(sockets.len());
        for (sock, config) in sockets.into_iter().zip(configs) {
            let addr = sock.local_addr()?;
            tracing::info!(
                %addr,
                name = %config.hostname,
                map = %config.map,
                players = config.players.len(),
                bots = config.bots.len(),
                max = config.max_players,
                "simulated server"
            );
            let mut server = Server::new(config, now)?;
            server.set_local_addr(addr);
            listening("sim", "udp", addr);
            addrs.push(addr);
            sup.spawn_task("sim", serve(sock, server, sup.stop().clone()));
        }
        Ok(Fleet { addrs })
    }

    /// The bound address of every server, in order.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

/// Sleeps until `t`, or forever without one.
async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
        None => std::future::pending().await,
    }
}

async fn send_all(sock: &UdpSocket, out: &mut Outbox) {
    for t in out.iter() {
        if let Err(e) = sock.send_to(t.payload, t.to).await {
            tracing::debug!(to = %t.to, error = %e, "send failed");
        }
    }
    out.clear();
}

/// One server's loop: datagrams and timers into the engine, its output onto the wire.
async fn serve(sock: UdpSocket, mut server: Server, stop: Stop) -> Result<()> {
    let mut buf = vec![0u8; 65536];
    let mut out = Outbox::new();
    loop {
        let wake = server.poll_timeout();
        tokio::select! {
            r = sock.recv_from(&mut buf) => match r {
                Ok((n, from)) => server.handle(&buf[..n], from, Instant::now(), &mut out),
                Err(e) => {
                    // ICMP errors from earlier sends surface here; keep serving.
                    tracing::debug!(error = %e, "receive error");
                    continue;
                }
            },
            _ = sleep_until(wake) => server.handle_timeout(Instant::now(), &mut out),
            _ = stop.stopped() => break,
        };
        send_all(&sock, &mut out).await;
    }
    server.shutdown(&mut out);
    send_all(&sock, &mut out).await;
    tracing::debug!(stats = ?server.stats(), "simulated server stopped");
    Ok(())
}
