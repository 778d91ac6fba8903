//! `lobby load reflector`: the bare UDP fan-out ceiling for relay benchmarks.
//!
//! Every source heard from in the last `--expiry` seconds is a member; each
//! datagram goes, unchanged, to every other member. No parsing and no logic, so
//! whatever a relay achieves below this on the same machine is its own cost.
//!
//! I/O is batched with `recvmmsg`/`sendmmsg` (falling back to `recv_from`/`sendto`
//! where those are unavailable). With `--threads 2` two sockets share the port
//! through `SO_REUSEPORT`; the kernel hashes each source to one of them, so each
//! thread owns the last-heard times of its sources while the member list is shared.

use super::mmsg::{RecvBatch, SendList};
use anyhow::{Context, Result};
use clap::Args;
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// How often each thread looks at its stop flag and at expired members.
const TICK: Duration = Duration::from_millis(100);

#[derive(Default)]
struct Members {
    list: Mutex<Vec<SocketAddr>>,
    generation: AtomicU64,
}

impl Members {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SocketAddr>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Default)]
struct Counters {
    received: AtomicU64,
    sent: AtomicU64,
    failed: AtomicU64,
}

/// A running reflector.
pub struct Reflector {
    /// Bound address.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    counters: Arc<Counters>,
}

fn bind(addr: SocketAddr, reuse_port: bool) -> Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    if reuse_port {
        s.set_reuse_port(true)?;
    }
    if addr.is_ipv4() {
        // DF on every datagram ("probe": the interface MTU, ignoring learned path
        // MTUs). Besides being right for small datagrams, it spares each send the
        // kernel's shared IP-ID generator (`__ip_select_ident`, ~10% of a send here).
        set_pmtudisc_probe(&s);
    }
    let _ = s.set_recv_buffer_size(8 << 20);
    let _ = s.set_send_buffer_size(8 << 20);
    s.bind(&addr.into())
        .with_context(|| format!("cannot bind UDP {addr}"))?;
    s.set_read_timeout(Some(TICK))?;
    Ok(s.into())
}

fn set_pmtudisc_probe(s: &Socket) {
    let v: libc::c_int = libc::IP_PMTUDISC_PROBE;
    // SAFETY: `v` is a valid c_int for the duration of the call; failure is harmless.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

impl Reflector {
    /// Binds and starts the threads.
    pub fn start(args: &ReflectorArgs) -> Result<Reflector> {
        if !(args.expiry.is_finite() && args.expiry > 0.0 && args.expiry <= 86_400.0) {
            anyhow::bail!("--expiry must be above 0 and at most 86400 seconds");
        }
        let reuse = args.threads > 1;
        let first = bind(args.listen, reuse)?;
        let addr = first.local_addr()?;
        let mut socks = vec![first];
        for _ in 1..args.threads {
            socks.push(bind(addr, true)?);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let members = Arc::new(Members::default());
        let counters = Arc::new(Counters::default());
        let expiry = Duration::from_secs_f64(args.expiry);
        let batch = args.batch as usize;
        let mut threads = Vec::new();
        for (k, s) in socks.into_iter().enumerate() {
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

    /// Stops the threads, waits for them, and returns (received, sent, failed).
    pub fn shutdown(self) -> (u64, u64, u64) {
        self.stop.store(true, Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
        let c = &self.counters;
        (
            c.received.load(Relaxed),
            c.sent.load(Relaxed),
            c.failed.load(Relaxed),
        )
    }
}

/// One thread: receive a batch, fan each datagram out to every other member.
fn serve(
    sock: &UdpSocket,
    batch: usize,
    expiry: Duration,
    members: &Members,
    counters: &Counters,
    stop: &AtomicBool,
) {
    let fd = sock.as_raw_fd();
    let mut rb = RecvBatch::new(batch, true, false);
    let mut use_mmsg = true;
    let mut fallback_buf = vec![0u8; 65536];
    // Sources this thread receives from, with when they were last heard.
    let mut heard: HashMap<SocketAddr, Instant> = HashMap::new();
    // This thread's copy of the member list, and each member's position in it.
    let mut seen_gen = u64::MAX;
    let mut list = SendList::new(&[]);
    let mut index: HashMap<SocketAddr, usize> = HashMap::new();
    let mut next_sweep = Instant::now() + Duration::from_secs(1);
    while !stop.load(Relaxed) {
        let n = if use_mmsg {
            match rb.recv(fd, libc::MSG_WAITFORONE) {
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
                    ) =>
                {
                    tracing::warn!("recvmmsg unavailable ({e}); falling back to recv_from");
                    use_mmsg = false;
                    0
                }
                Err(_) => 0, // timeout, EINTR, ICMP errors: look at the stop flag and go on.
            }
        } else {
            0
        };
        let now = Instant::now();
        // Learn new sources first, so the member list is current for this batch.
        let mut fresh: Vec<SocketAddr> = Vec::new();
        let mut note =
            |src: SocketAddr, heard: &mut HashMap<SocketAddr, Instant>| match heard.get_mut(&src) {
                Some(t) => *t = now,
                None => {
                    heard.insert(src, now);
                    fresh.push(src);
                }
            };
        let mut single: Option<(usize, SocketAddr)> = None;
        if use_mmsg {
            for i in 0..n {
                if let Some(src) = rb.addr(i) {
                    note(src, &mut heard);
                }
            }
        } else {
            match sock.recv_from(&mut fallback_buf) {
                Ok((len, src)) => {
                    note(src, &mut heard);
                    single = Some((len, src));
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(_) => {}
            }
        }
        if !fresh.is_empty() {
            let mut l = members.lock();
            l.extend(fresh.iter().copied());
            members.generation.fetch_add(1, Relaxed);
        }
        if now >= next_sweep {
            next_sweep = now + Duration::from_secs(1);
            let gone: Vec<SocketAddr> = heard
                .iter()
                .filter(|(_, t)| now.saturating_duration_since(**t) > expiry)
                .map(|(a, _)| *a)
                .collect();
            if !gone.is_empty() {
                for a in &gone {
                    heard.remove(a);
                }
                members.lock().retain(|a| !gone.contains(a));
                members.generation.fetch_add(1, Relaxed);
            }
        }
        let gen = members.generation.load(Relaxed);
        if gen != seen_gen {
            let snapshot = members.lock().clone();
            seen_gen = gen;
            index = snapshot.iter().enumerate().map(|(i, a)| (*a, i)).collect();
            list = SendList::new(&snapshot);
        }
        let mut fan = |payload: &[u8], src: SocketAddr| {
            let (a, b) = match index.get(&src) {
                Some(&k) => list.send(fd, payload, 0..k, batch).add(list.send(
                    fd,
                    payload,
                    k + 1..list.len(),
                    batch,
                )),
                None => list.send(fd, payload, 0..list.len(), batch),
            };
            counters.sent.fetch_add(a, Relaxed);
            if b > 0 {
                counters.failed.fetch_add(b, Relaxed);
            }
        };
        if use_mmsg {
            for i in 0..n {
                if let Some(src) = rb.addr(i) {
                    fan(rb.datagram(i), src);
                }
            }
            if n > 0 {
                counters.received.fetch_add(n as u64, Relaxed);
            }
        } else if let Some((len, src)) = single {
            fan(&fallback_buf[..len.min(fallback_buf.len())], src);
            counters.received.fetch_add(1, Relaxed);
        }
    }
}

trait AddPair {
    fn add(self, other: (u64, u64)) -> (u64, u64);
}

impl AddPair for (u64, u64) {
    fn add(self, o: (u64, u64)) -> (u64, u64) {
        (self.0 + o.0, self.1 + o.1)
    }
}

/// Runs `lobby load reflector` until Ctrl-C or SIGTERM.
pub async fn run(args: ReflectorArgs) -> Result<std::process::ExitCode> {
    let r = Reflector::start(&args)?;
    crate::listening("reflector", "udp", r.addr);
    super::wait_for_stop_signal().await;
    let (received, sent, failed) = tokio::task::spawn_blocking(move || r.shutdown()).await?;
    eprintln!("reflector: received {received}, sent {sent}, failed sends {failed}");
    Ok(std::process::ExitCode::SUCCESS)
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
                p.send_to(b"hi", r.addr)?;
                // Let the member list settle (with two threads, another thread may hold it).
                std::thread::sleep(Duration::from_millis(30));
            }
            std::thread::sleep(Duration::from_millis(100));
            let mut buf = [0u8; 64];
            // Drain the greetings: peer k heard from the peers after it.
            for p in &peers {
                while p.recv_from(&mut buf).is_ok() {}
            }
            peers[0].send_to(b"one", r.addr)?;
            for p in &peers[1..] {
                let (n, from) = p.recv_from(&mut buf)?;
                assert_eq!((&buf[..n], from), (&b"one"[..], r.addr));
            }
            assert!(
                peers[0].recv_from(&mut buf).is_err(),
                "no echo to the sender"
            );
            let (received, sent, failed) = r.shutdown();
            assert_eq!((received, failed), (4, 0));
            assert_eq!(sent, 3 + 2); // greetings: 0 + 1 + 2; "one": 2
        }
        Ok(())
    }
}
