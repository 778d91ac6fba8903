//! `lobby load reflector`: the bare UDP fan-out ceiling for relay benchmarks.
//!
//! Every source heard from in the last `--expiry` seconds is a member; each
//! datagram goes, unchanged, to every other member. No parsing and no logic, so
//! whatever a relay achieves below this on the same machine is its own cost.
//!
//! I/O is batched with `recvmmsg`/`sendmmsg` through the `udp` crate, the same layer
//! the servers use (it falls back to one call per datagram where those are missing). With `--threads 2` two sockets share the port
//! through `SO_REUSEPORT`; the kernel hashes each source to one of them, so each
//! thread owns the last-heard times of its sources while the member list is shared.

use anyhow::{Context, Result};
use clap::Args;
use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use udp::{BindOptions, Destinations, Ready, RecvBatch, Wake};

/// Flags of `lobby load reflector`.
#[derive(Args, Debug, Clone)]
pub struct ReflectorArgs {
    /// UDP address to listen on (port 0 picks a free port; see the `listening` line).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Datagrams per recvmmsg / sendmmsg call.
    #[arg(long, default_value_t = 64, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch: u32,
    /// Receive/send threads; more than 1 shares the port between sockets with SO_REUSEPORT.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=8))]
    pub threads: u32,
    /// Seconds of silence after which a source stops being a member.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub expiry: f64,
}

/// How often each thread looks for expired members.
const SWEEP: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Members {
    list: Mutex<Vec<SocketAddr>>,
    generation: AtomicU64,
}

#[derive(Default)]
struct Counters {
    received: AtomicU64,
    sent: AtomicU64,
    failed: AtomicU64,
}

/// What a reflector did over its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams sent (fan-out copies).
    pub sent: u64,
    /// Copies whose send failed.
    pub failed: u64,
}

/// A running reflector.
pub struct Reflector {
    addr: SocketAddr,
    stop: Arc<Wake>,
    threads: Vec<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Reflector {
    /// Checks the flags, binds and starts the threads.
    pub fn start(args: &ReflectorArgs) -> Result<Reflector> {
        if !(args.expiry.is_finite() && args.expiry > 0.0 && args.expiry <= 86_400.0) {
            anyhow::bail!("--expiry must be above 0 and at most 86400 seconds");
        }
        let options = BindOptions {
            reuse_port: args.threads > 1,
            ..BindOptions::default()
        };
        let first = udp::bind(args.listen, options)?;
        let addr = first.local_addr()?;
        let mut socks = vec![first];
        for _ in 1..args.threads {
            socks.push(udp::bind(addr, options)?);
        }
        let stop = Arc::new(Wake::new());
        let members = Arc::new(Members::default());
        let counters = Arc::new(Counters::default());
        let expiry = Duration::from_secs_f64(args.expiry);
        let batch = args.batch as usize;
        let mut threads = Vec::new();
        for (k, s) in socks.into_iter().enumerate() {
            let s = Arc::new(s);
            stop.watch(s.clone());
            let (stop, members, counters) = (stop.clone(), members.clone(), counters.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("reflector-{k}"))
                    .spawn(move || serve(&s, batch, expiry, &members, &counters, &stop))
                    .context("cannot start a reflector thread")?,
            );
        }
        Ok(Reflector {
            addr,
            stop,
            threads,
            counters,
        })
    }

    /// The bound address (every thread's socket shares it).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the threads, waits for them, and returns what they did.
    pub fn shutdown(self) -> Totals {
        self.stop.raise();
        for t in self.threads {
            let _ = t.join();
        }
        let c = &self.counters;
        Totals {
            received: c.received.load(Relaxed),
            sent: c.sent.load(Relaxed),
            failed: c.failed.load(Relaxed),
        }
    }
}

/// This thread's view of the members: a copy of the shared list as prepared
/// destinations, and each member's position in it.
struct View {
    generation: u64,
    list: Destinations,
    index: HashMap<SocketAddr, usize>,
}

impl View {
    /// Re-reads the shared list if it changed.
    fn refresh(&mut self, members: &Members) {
        let gen = members.generation.load(Relaxed);
        if gen != self.generation {
            let snapshot = crate::lock(&members.list).clone();
            self.generation = gen;
            self.index = snapshot.iter().enumerate().map(|(i, a)| (*a, i)).collect();
            self.list = Destinations::new(&snapshot);
        }
    }

    /// Sends `payload` to every member but `src`.
    fn fan(
        &mut self,
        sock: &UdpSocket,
        payload: &[u8],
        src: SocketAddr,
        batch: usize,
        c: &Counters,
    ) {
        let sent = match self.index.get(&src) {
            Some(&k) => {
                let mut s = self.list.send(sock, payload, 0..k, batch);
                s += self.list.send(sock, payload, k + 1..self.list.len(), batch);
                s
            }
            None => self.list.send(sock, payload, 0..self.list.len(), batch),
        };
        c.sent.fetch_add(sent.sent, Relaxed);
        if sent.failed > 0 {
            c.failed.fetch_add(sent.failed, Relaxed);
        }
    }
}

/// Notes the sources of a batch; returns the ones not heard before.
fn note_sources(
    rb: &RecvBatch,
    now: Instant,
    heard: &mut HashMap<SocketAddr, Instant>,
) -> Vec<SocketAddr> {
    let mut fresh = Vec::new();
    for i in 0..rb.len() {
        if let Some(src) = rb.addr(i) {
            if heard.insert(src, now).is_none() {
                fresh.push(src);
            }
        }
    }
    fresh
}

/// Forgets sources silent for longer than `expiry`, here and in the shared list.
fn sweep(
    now: Instant,
    expiry: Duration,
    heard: &mut HashMap<SocketAddr, Instant>,
    members: &Members,
) {
    let gone: Vec<SocketAddr> = heard
        .iter()
        .filter(|(_, t)| now.saturating_duration_since(**t) > expiry)
        .map(|(a, _)| *a)
        .collect();
    if !gone.is_empty() {
        for a in &gone {
            heard.remove(a);
        }
        crate::lock(&members.list).retain(|a| !gone.contains(a));
        members.generation.fetch_add(1, Relaxed);
    }
}

/// One thread: receive a batch, fan each datagram out to every other member.
fn serve(
    sock: &UdpSocket,
    batch: usize,
    expiry: Duration,
    members: &Members,
    counters: &Counters,
    stop: &Wake,
) {
    let mut rb = RecvBatch::new(batch);
    // Sources this thread receives from, with when they were last heard.
    let mut heard: HashMap<SocketAddr, Instant> = HashMap::new();
    let mut view = View {
        generation: u64::MAX,
        list: Destinations::new(&[]),
        index: HashMap::new(),
    };
    let mut next_sweep = Instant::now() + SWEEP;
    loop {
        let n = match rb.recv_until(sock, Some(next_sweep), stop) {
            Ok(Ready::Woken) => return,
            Ok(Ready::Datagrams(n)) => n,
            // The sweep is due, or an ICMP error from an earlier send: go on.
            Ok(Ready::Deadline) | Err(_) => 0,
        };
        let now = Instant::now();
        // Learn new sources first, so the member list is current for this batch.
        let fresh = note_sources(&rb, now, &mut heard);
        if !fresh.is_empty() {
            crate::lock(&members.list).extend(fresh);
            members.generation.fetch_add(1, Relaxed);
        }
        if now >= next_sweep {
            next_sweep = now + SWEEP;
            sweep(now, expiry, &mut heard, members);
        }
        view.refresh(members);
        for i in 0..n {
            if let Some(src) = rb.addr(i) {
                view.fan(sock, rb.datagram(i), src, batch, counters);
            }
        }
        if n > 0 {
            counters.received.fetch_add(n as u64, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflects_to_every_other_member_only() -> Result<()> {
        for threads in [1, 2] {
            let r = Reflector::start(&ReflectorArgs {
                listen: "127.0.0.1:0".parse()?,
                batch: 8,
                threads,
                expiry: 10.0,
            })?;
            let peers: Vec<UdpSocket> = (0..3)
                .map(|_| UdpSocket::bind("127.0.0.1:0"))
                .collect::<std::io::Result<_>>()?;
            for p in &peers {
                p.set_read_timeout(Some(Duration::from_millis(500)))?;
                p.send_to(b"hi", r.addr())?;
                // Let the member list settle (with two threads, another thread may hold it).
                std::thread::sleep(Duration::from_millis(30));
            }
            std::thread::sleep(Duration::from_millis(100));
            let mut buf = [0u8; 64];
            // Drain the greetings: peer k heard from the peers after it.
            for p in &peers {
                while p.recv_from(&mut buf).is_ok() {}
            }
            peers[0].send_to(b"one", r.addr())?;
            for p in &peers[1..] {
                let (n, from) = p.recv_from(&mut buf)?;
                assert_eq!((&buf[..n], from), (&b"one"[..], r.addr()));
            }
            assert!(
                peers[0].recv_from(&mut buf).is_err(),
                "no echo to the sender"
            );
            let t = r.shutdown();
            assert_eq!((t.received, t.failed), (4, 0));
            assert_eq!(t.sent, 3 + 2); // greetings: 0 + 1 + 2; "one": 2
        }
        Ok(())
    }
}
