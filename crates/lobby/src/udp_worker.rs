//! The thin socket loop every UDP part shares (relay, master): SO_REUSEPORT worker
//! sockets per listen address, each on its own thread. A worker blocks in `recvmmsg`
//! until the earlier of its next datagrams and the engine's
//! [`sansio::Engine::poll_timeout`] (one system call per batch, busy or idle; see
//! [`udp::RecvBatch::recv_until`]), feeds the batch to the engine under its
//! lock, and sends the engine's output with one `sendmmsg` outside the lock. The stop
//! signal wakes it by shutting its socket down for reading.
//!
//! Timers: each worker re-reads the engine's deadline after every call it makes, so
//! whichever worker changed the deadline waits for it; a worker woken for a deadline
//! another one already served finds nothing due and reads the next.

use anyhow::{Context, Result};
use lifecycle::{injected_panic, listening, lock, Supervisor};
use sansio::{Engine, Outbox};
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use udp::{BindOptions, Ready, RecvBatch, SendBatch};

/// Datagrams taken per receive call.
const BATCH: usize = 64;

/// What a worker records for each datagram it hands to the engine: how many
/// datagrams the engine queued in reply (the relay's fan-out, the master's list
/// pages). Recorded after the engine's lock is released.
#[derive(Clone)]
pub struct Replies {
    histogram: metrics::Histogram,
    of: fn(&[u8]) -> bool,
}

impl Replies {
    /// Records into the histogram `name` the replies to the datagrams `of` accepts;
    /// `None` when no metrics recorder runs (nothing would be recorded).
    pub fn new(name: &'static str, of: fn(&[u8]) -> bool) -> Option<Replies> {
        crate::recorder::installed().then(|| Replies {
            histogram: metrics::histogram!(name),
            of,
        })
    }
}

/// How a part's UDP sockets are served.
#[derive(Clone)]
pub struct Workers {
    /// Sockets (and threads) per listen address; more than one shares the port.
    pub per_addr: usize,
    /// SCHED_FIFO priority of the worker threads, 0 = normal scheduling.
    pub realtime_priority: u8,
    /// Reply counts to record, if any.
    pub replies: Option<Replies>,
}

/// Binds `workers.per_addr` sockets per address, prints `listening <part> udp ADDR` for
/// each address, and serves `engine` on them through `sup` (a panicking worker is
/// restarted on its socket). Returns the bound addresses, in `listen` order.
pub fn serve<E: Engine + Send + 'static>(
    sup: &Supervisor,
    part: &'static str,
    engine: Arc<Mutex<E>>,
    listen: &[SocketAddr],
    workers: Workers,
) -> Result<Vec<SocketAddr>> {
    let per_addr = workers.per_addr.max(1);
    let options = BindOptions {
        reuse_port: per_addr > 1,
        ..BindOptions::default()
    };
    let mut sockets = Vec::new();
    let mut addrs = Vec::new();
    for &a in listen {
        let first = udp::bind(a, options)?;
        let bound = first.local_addr()?;
        addrs.push(bound);
        sockets.push(Arc::new(first));
        for _ in 1..per_addr {
            sockets.push(Arc::new(udp::bind(bound, options)?));
        }
    }
    for a in &addrs {
        listening(part, "udp", *a);
    }
    let mut all = Vec::new();
    for s in &sockets {
        all.push((s.local_addr()?.is_ipv4(), s.clone()));
    }
    let all = Arc::new(all);
    for sock in sockets {
        // Raising the stop signal shuts the socket down for reading, which wakes a
        // worker blocked in its receive.
        sup.stop().wake().watch(sock.clone());
        let (engine, all, stop) = (engine.clone(), all.clone(), sup.stop().clone());
        let point = format!("{part}-udp");
        let prio = workers.realtime_priority;
        let replies = workers.replies.clone();
        sup.spawn_thread(&point.clone(), move || {
            if prio > 0 {
                if let Err(e) = udp::set_realtime_priority(prio) {
                    tracing::warn!(error = %e, "cannot give the worker real-time priority (needs CAP_SYS_NICE); running at normal priority");
                }
            }
            worker(&sock, &all, &*engine, &stop, &point, replies.as_ref());
        })
        .context("cannot start the UDP workers")?;
    }
    Ok(addrs)
}

fn worker<E: Engine>(
    sock: &UdpSocket,
    all: &[(bool, Arc<UdpSocket>)],
    engine: &Mutex<E>,
    stop: &lifecycle::Stop,
    point: &str,
    replies: Option<&Replies>,
) {
    let mut rx = RecvBatch::new(BATCH);
    let mut counts: Vec<usize> = Vec::with_capacity(BATCH);
    let mut tx = SendBatch::new();
    let mut out = Outbox::new();
    let own_v4 = sock.local_addr().map(|a| a.is_ipv4()).unwrap_or(true);
    let mut deadline = lock(engine).poll_timeout();
    loop {
        match rx.recv_until(sock, deadline, stop.wake()) {
            Ok(Ready::Woken) => return,
            Ok(Ready::Datagrams(_)) => {
                let now = Instant::now();
                let mut e = lock(engine);
                injected_panic(point);
                for (d, from) in rx.iter() {
                    let before = out.len();
                    e.handle(d, from, now, &mut out);
                    if replies.is_some_and(|r| (r.of)(d)) {
                        counts.push(out.len() - before);
                    }
                }
                if deadline.is_some_and(|t| t <= now) {
                    e.handle_timeout(now, &mut out);
                }
                deadline = e.poll_timeout();
            }
            Ok(Ready::Deadline) => {
                let mut e = lock(engine);
                e.handle_timeout(Instant::now(), &mut out);
                deadline = e.poll_timeout();
            }
            Err(e) => {
                // ICMP errors from earlier sends surface here; keep serving.
                tracing::debug!(error = %e, "receive error");
                continue;
            }
        }
        if let Some(r) = replies {
            for n in counts.drain(..) {
                r.histogram.record(n as f64);
            }
        }
        flush(sock, own_v4, all, &mut tx, &mut out);
    }
}

/// Sends the queued datagrams: same-family ones from this worker's socket in one
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
    let mut other = false;
    tx.send(
        own,
        out.iter()
            .filter(|t| {
                let same = t.to.is_ipv4() == own_v4;
                other |= !same;
                same
            })
            .map(|t| (t.payload, t.to)),
    );
    if other {
        match all.iter().find(|(v4, _)| *v4 != own_v4) {
            Some((_, s)) => {
                tx.send(
                    &**s,
                    out.iter()
                        .filter(|t| t.to.is_ipv4() != own_v4)
                        .map(|t| (t.payload, t.to)),
                );
            }
            None => tracing::debug!("no socket of the other address family to send from"),
        }
    }
    out.clear();
}
