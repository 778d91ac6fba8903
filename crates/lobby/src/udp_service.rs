//! The thin socket loop shared by every UDP part: SO_REUSEPORT worker sockets per
//! listen address, batched receive, the engine under a lock for the batch, batched
//! send outside the lock. Engines plug in through [`Service`].

use crate::listening;
use crate::udp_batch::{RecvBatch, SendBatch};
use anyhow::{Context, Result};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a receive waits before the loop looks at timers and the stop flag.
const TICK: Duration = Duration::from_millis(100);
/// Datagrams taken per receive call.
const BATCH: usize = 64;

/// A state machine served over UDP.
pub trait Service: Send + 'static {
    /// Reusable output buffer.
    type Out: Default + Send;
    /// Handles one datagram.
    fn handle(&mut self, d: &[u8], from: SocketAddr, now: Instant, out: &mut Self::Out);
    /// Runs timers that are due.
    fn timeout(&mut self, now: Instant);
    /// The queued datagrams.
    fn sends(out: &Self::Out) -> impl Iterator<Item = (&[u8], SocketAddr)>;
    /// Empties the buffer, keeping its capacity.
    fn clear(out: &mut Self::Out);
}

/// Locks, ignoring poison: a panic in one thread must not stop the server.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Binds a UDP socket; IPv6 sockets are IPv6-only so IPv4 and IPv6 can share a
/// port. With `shared`, SO_REUSEPORT lets several worker sockets bind the port.
pub fn bind_udp(addr: SocketAddr, shared: bool) -> Result<UdpSocket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    if shared {
        sock.set_reuse_port(true)?;
    }
    // Don't fragment, and skip the per-datagram IP ID bookkeeping that costs about
    // 10% of each send on Linux (IP_PMTUDISC_PROBE); datagrams here fit one packet.
    set_pmtudisc_probe(&sock, addr.is_ipv6());
    // Bursts arrive together; give the kernel room.
    let _ = sock.set_recv_buffer_size(8 << 20);
    let _ = sock.set_send_buffer_size(8 << 20);
    sock.bind(&addr.into())
        .with_context(|| format!("cannot bind UDP {addr} (is another server using it?)"))?;
    Ok(sock.into())
}

/// Puts the calling thread under SCHED_FIFO at `priority` (1-99), so a worker woken by
/// a datagram runs at once instead of waiting for a CPU slice behind other processes:
/// on a busy 2-core machine this took the relay's p99 from 3-4 ms to about 1 ms. The
/// workers block in `recvmmsg`, and the kernel's RT throttling keeps 5% of each second
/// for everything else even under a flood. Needs CAP_SYS_NICE (or root); without it a
/// warning is logged and the worker runs at normal priority.
fn set_realtime(priority: u8) {
    let param = libc::sched_param {
        sched_priority: i32::from(priority.min(99)),
    };
    // SAFETY: pid 0 = the calling thread; param is a valid struct for the call.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r != 0 {
        tracing::warn!(
            error = %std::io::Error::last_os_error(),
            "cannot give the worker real-time priority (needs CAP_SYS_NICE); running at normal priority"
        );
    }
}

fn set_pmtudisc_probe(sock: &Socket, v6: bool) {
    use std::os::fd::AsRawFd;
    let (level, name, value) = if v6 {
        (
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_PROBE,
        )
    } else {
        (
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
        )
    };
    // SAFETY: a plain int option on a socket we own; failure only loses the optimisation.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Running worker threads of one part.
pub struct UdpServer {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Bound addresses, one per listen address.
    pub addrs: Vec<SocketAddr>,
}

impl UdpServer {
    /// Binds `workers` sockets per address, prints `listening <part> udp ADDR`, starts serving.
    pub fn start<S: Service>(
        part: &str,
        service: Arc<Mutex<S>>,
        listen: &[SocketAddr],
        workers: usize,
        realtime_priority: u8,
    ) -> Result<UdpServer> {
        let workers = workers.max(1);
        let mut sockets = Vec::new();
        let mut addrs = Vec::new();
        for &a in listen {
            let first = bind_udp(a, workers > 1)?;
            let bound = first.local_addr()?;
            addrs.push(bound);
            sockets.push(Arc::new(first));
            for _ in 1..workers {
                sockets.push(Arc::new(bind_udp(bound, true)?));
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
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for s in sockets {
            s.set_read_timeout(Some(TICK))?;
            let (service, stop, all) = (service.clone(), stop.clone(), all.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("{part}-udp"))
                    .spawn(move || {
                        if realtime_priority > 0 {
                            set_realtime(realtime_priority);
                        }
                        worker(&s, &all, &*service, &stop)
                    })?,
            );
        }
        Ok(UdpServer {
            stop,
            threads,
            addrs,
        })
    }

    /// Stops and joins the workers.
    pub fn shutdown(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn worker<S: Service>(
    sock: &UdpSocket,
    all: &[(bool, Arc<UdpSocket>)],
    service: &Mutex<S>,
    stop: &AtomicBool,
) {
    let mut rx = RecvBatch::new(BATCH);
    let mut tx = SendBatch::new();
    let mut out = S::Out::default();
    let own_v4 = sock.local_addr().map(|a| a.is_ipv4()).unwrap_or(true);
    while !stop.load(Ordering::Relaxed) {
        match rx.recv(sock) {
            Ok(_) => {
                let now = Instant::now();
                {
                    let mut s = lock(service);
                    for (d, from) in rx.iter() {
                        s.handle(d, from, now, &mut out);
                    }
                    s.timeout(now);
                }
                flush::<S>(sock, own_v4, all, &mut tx, &mut out);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                lock(service).timeout(Instant::now());
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                // ICMP errors from earlier sends surface here; keep serving.
                tracing::debug!(error = %e, "receive error");
            }
        }
    }
}

/// Sends the queued datagrams: same-family ones from this worker's socket in one
/// batch, the others from a socket of the other family.
fn flush<S: Service>(
    own: &UdpSocket,
    own_v4: bool,
    all: &[(bool, Arc<UdpSocket>)],
    tx: &mut SendBatch,
    out: &mut S::Out,
) {
    let mut other = false;
    tx.send(
        own,
        S::sends(out).filter(|(_, to)| {
            let same = to.is_ipv4() == own_v4;
            other |= !same;
            same
        }),
    );
    if other {
        match all.iter().find(|(v4, _)| *v4 != own_v4) {
            Some((_, s)) => {
                tx.send(s, S::sends(out).filter(|(_, to)| to.is_ipv4() != own_v4));
            }
            None => tracing::debug!("no socket of the other address family to send from"),
        }
    }
    S::clear(out);
}
