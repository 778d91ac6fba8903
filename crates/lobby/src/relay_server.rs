//! The thin socket loop around [`relay::Engine`]: UDP sockets (IPv4 and IPv6),
//! one receive thread per socket, and the telnet pilot list.

use crate::listening;
use crate::udp_batch::{RecvBatch, SendBatch};
use anyhow::{Context, Result};
use relay::{Engine, Outbox, Stats};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// How long a receive waits before the loop looks at timers and the stop flag.
const TICK: Duration = Duration::from_millis(100);

/// A running relay.
pub struct RelayServer {
    engine: Arc<Mutex<Engine>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Bound UDP addresses.
    pub udp: Vec<SocketAddr>,
    /// Bound telnet addresses.
    pub telnet: Vec<SocketAddr>,
    telnet_tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Binds a UDP socket; IPv6 sockets are IPv6-only so IPv4 and IPv6 can share a port.
#[allow(dead_code)] // used by the load tools
pub fn bind_udp(addr: SocketAddr) -> Result<UdpSocket> {
    bind_udp_shared(addr, false)
}

/// Like [`bind_udp`]; with `shared`, sets SO_REUSEPORT so several worker sockets
/// can bind the same port and the kernel spreads clients over them.
pub fn bind_udp_shared(addr: SocketAddr, shared: bool) -> Result<UdpSocket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    if shared {
        sock.set_reuse_port(true)?;
    }
    // Bursts of 10 Hz × hundreds of pilots arrive together; give the kernel room.
    let _ = sock.set_recv_buffer_size(8 << 20);
    let _ = sock.set_send_buffer_size(8 << 20);
    sock.bind(&addr.into())
        .with_context(|| format!("cannot bind UDP {addr} (is another server using it?)"))?;
    Ok(sock.into())
}

impl RelayServer {
    /// Binds every listener, prints the `listening ...` lines and starts serving.
    pub async fn start(
        config: relay::Config,
        listen: &[SocketAddr],
        telnet: &[SocketAddr],
        workers: usize,
    ) -> Result<RelayServer> {
        let stats = Arc::new(Stats::default());
        let engine = Arc::new(Mutex::new(Engine::new(config, stats)));
        // One socket per worker thread and listen address, sharing the port.
        let workers = workers.max(1);
        let mut sockets = Vec::new();
        let mut udp = Vec::new();
        for &a in listen {
            let first = bind_udp_shared(a, workers > 1)?;
            let bound = first.local_addr()?;
            udp.push(bound);
            sockets.push(Arc::new(first));
            for _ in 1..workers {
                sockets.push(Arc::new(bind_udp_shared(bound, true)?));
            }
        }
        let mut listeners = Vec::new();
        for &a in telnet {
            let l = TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot bind telnet TCP {a}"))?;
            listeners.push(l);
        }
        let telnet: Vec<SocketAddr> = listeners
            .iter()
            .map(|l| l.local_addr())
            .collect::<Result<_, _>>()?;
        for a in &udp {
            listening("relay", "udp", *a);
        }
        for a in &telnet {
            listening("relay", "telnet", *a);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut all = Vec::new();
        for s in &sockets {
            all.push((s.local_addr()?.is_ipv4(), s.clone()));
        }
        let all = Arc::new(all);
        let mut threads = Vec::new();
        for s in sockets {
            s.set_read_timeout(Some(TICK))?;
            let (engine, stop, all) = (engine.clone(), stop.clone(), all.clone());
            let name = format!("relay-udp-{}", s.local_addr()?);
            threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || udp_loop(&s, &all, &engine, &stop))?,
            );
        }
        let telnet_tasks = listeners
            .into_iter()
            .map(|l| tokio::spawn(telnet_loop(l, engine.clone())))
            .collect();
        Ok(RelayServer {
            engine,
            stop,
            threads,
            udp,
            telnet,
            telnet_tasks,
        })
    }

    /// The engine, for reloads and readers (HTTP, metrics).
    #[allow(dead_code)] // read by the HTTP API (issue 3 onwards)
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// Applies a new configuration and keeps the pilots (SIGHUP).
    pub fn reconfigure(&self, config: relay::Config) {
        lock(&self.engine).reconfigure(config);
    }

    /// Stops every thread and task and waits for the UDP threads.
    pub fn shutdown(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.telnet_tasks {
            t.abort();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Locks the engine; a panic elsewhere must not stop the relay, so poison is ignored.
pub fn lock(engine: &Mutex<Engine>) -> std::sync::MutexGuard<'_, Engine> {
    engine.lock().unwrap_or_else(|p| p.into_inner())
}

/// Datagrams taken per receive call.
const BATCH: usize = 64;

fn udp_loop(
    sock: &UdpSocket,
    all: &[(bool, Arc<UdpSocket>)],
    engine: &Mutex<Engine>,
    stop: &AtomicBool,
) {
    let mut rx = RecvBatch::new(BATCH);
    let mut tx = SendBatch::new();
    let mut out = Outbox::new();
    let own_v4 = sock.local_addr().map(|a| a.is_ipv4()).unwrap_or(true);
    while !stop.load(Ordering::Relaxed) {
        match rx.recv(sock) {
            Ok(_) => {
                let now = Instant::now();
                {
                    let mut e = lock(engine);
                    for (d, from) in rx.iter() {
                        e.handle(d, from, now, &mut out);
                    }
                    e.handle_timeout(now);
                }
                flush(sock, own_v4, all, &mut tx, &mut out);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                lock(engine).handle_timeout(Instant::now());
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                // ICMP errors from earlier sends surface here on some systems; keep serving.
                tracing::debug!(error = %e, "relay receive error");
            }
        }
    }
}

/// Sends the outbox: same-family datagrams from this worker's own socket in one
/// batch, the others from a socket of the other family.
fn flush(
    own: &UdpSocket,
    own_v4: bool,
    all: &[(bool, Arc<UdpSocket>)],
    tx: &mut SendBatch,
    out: &mut Outbox,
) {
    if out.is_empty() {
        return;
    }
    tx.send(own, out.iter().filter(|(_, to)| to.is_ipv4() == own_v4));
    if out.iter().any(|(_, to)| to.is_ipv4() != own_v4) {
        match all.iter().find(|(v4, _)| *v4 != own_v4) {
            Some((_, other)) => {
                tx.send(other, out.iter().filter(|(_, to)| to.is_ipv4() != own_v4));
            }
            None => tracing::debug!("no socket of the other address family to send from"),
        }
    }
    out.clear();
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
            if let Err(e) = tokio::time::timeout(Duration::from_secs(10), write).await {
                tracing::debug!(%peer, error = %e, "telnet client too slow");
            }
        });
    }
}
