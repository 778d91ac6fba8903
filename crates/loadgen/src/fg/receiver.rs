//! The receive threads: each polls its share of the pilot sockets with epoll and
//! checks every forwarded datagram against the fgms range rule.

use super::{secs, stamp_now, Live, Plan};
use crate::histogram::Histogram;
use crate::layout::receives;
use crate::packet::read_stamp;
use crate::procstat;
use anyhow::{Context, Result};
use fgmp::geo::chord_nm;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use udp::time::ts_ns;
use udp::{RecvBatch, Wake};

/// Datagrams per `recvmmsg` call.
const RECV_BATCH: usize = 32;
/// After a poll round that found fewer datagrams than this, the receiver sleeps
/// [`RECV_NAP`] so the next round finds more per system call. Latency does not
/// suffer: it is measured with the kernel's receive timestamp, not the read time.
const RECV_LIGHT: u64 = 256;
const RECV_NAP: Duration = Duration::from_micros(500);
/// Batches read from one socket per poll round, so every socket gets its turn.
const BATCHES_PER_TURN: usize = 4;

/// Counters of one receive thread.
#[derive(Default)]
pub(super) struct RecvResult {
    /// CPU seconds this thread used from the window's start to its end.
    pub cpu_s: f64,
    pub hist: Histogram,
    pub received: u64,
    /// Of `received`, those from pilots within the full-rate distance.
    pub received_near: u64,
    pub warmup_received: u64,
    pub unexpected: u64,
    pub malformed: u64,
    /// Datagrams without a kernel timestamp (latency from the read time instead).
    pub no_timestamp: u64,
    /// ICMP "port unreachable" reports from the target.
    pub refused: u64,
    /// Valid datagrams (warmup or measured) that arrived in the measured window.
    pub window_arrivals: u64,
    /// Valid datagrams that arrived from the window's start to the end of the drain.
    pub cpu_window_arrivals: u64,
    /// Every datagram read, valid or not.
    pub any: u64,
    /// Largest gap between consecutive arrivals at one pilot in the window, s.
    pub max_gap_s: f64,
    /// Last arrival in the window per pilot (indexed by pilot; 0 = none yet).
    last_arrival: Vec<f64>,
}

impl RecvResult {
    /// Adds another thread's counters (not its CPU time).
    pub(crate) fn merge(&mut self, r: &RecvResult) {
        self.hist.merge(&r.hist);
        self.received += r.received;
        self.received_near += r.received_near;
        self.warmup_received += r.warmup_received;
        self.unexpected += r.unexpected;
        self.malformed += r.malformed;
        self.no_timestamp += r.no_timestamp;
        self.refused += r.refused;
        self.window_arrivals += r.window_arrivals;
        self.cpu_window_arrivals += r.cpu_window_arrivals;
        self.any += r.any;
        self.max_gap_s = self.max_gap_s.max(r.max_gap_s);
    }

    /// Checks and counts the first `m` datagrams of `batch`, read on pilot `me`'s socket.
    fn tally(&mut self, batch: &RecvBatch, m: usize, me: usize, plan: &Plan) {
        // One read time for the whole batch, taken only if a datagram lacks a timestamp.
        let mut read_time = None;
        for d in 0..m {
            let stamp = if batch.truncated(d) {
                None
            } else {
                read_stamp(batch.datagram(d))
            };
            let Some(s) = stamp else {
                self.malformed += 1;
                continue;
            };
            let from = s.sender as usize;
            if from >= plan.n || from == me || !receives(plan.pos[me], plan.range, plan.pos[from]) {
                self.unexpected += 1;
                continue;
            }
            let arrived = match batch.kernel_time(d) {
                Some(ts) => (ts_ns(ts) - plan.base_ns) as f64 * 1e-9,
                None => {
                    self.no_timestamp += 1;
                    *read_time.get_or_insert_with(|| stamp_now(plan.base_ns))
                }
            };
            if arrived >= plan.t_measure {
                self.cpu_window_arrivals += 1;
                if arrived < plan.t_window_end {
                    self.window_arrivals += 1;
                    if self.last_arrival.len() <= me {
                        self.last_arrival.resize(me + 1, 0.0);
                    }
                    let last = &mut self.last_arrival[me];
                    if *last > 0.0 {
                        self.max_gap_s = self.max_gap_s.max(arrived - *last);
                    }
                    *last = last.max(arrived);
                }
            }
            if u64::from(s.seq) < plan.warmup_rounds {
                self.warmup_received += 1;
                continue;
            }
            self.received += 1;
            self.received_near += u64::from(chord_nm(plan.pos[me], plan.pos[from]) <= plan.near_nm);
            self.hist
                .record(((arrived - s.sent_s) * 1e6).max(0.0) as u64);
        }
    }
}

/// An edge-triggered epoll set over some of the pilot sockets; an event's data is
/// the pilot's index.
struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// A set watching `socks[i]` for every `i` in `mine`.
    fn new(socks: &[UdpSocket], mine: &[usize]) -> Result<Epoll> {
        // SAFETY: epoll_create1 has no memory preconditions; the fd is owned below.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(std::io::Error::last_os_error()).context("epoll_create1");
        }
        // SAFETY: `ep` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(ep) };
        for &i in mine {
            let mut ev = libc::epoll_event {
                events: (libc::EPOLLIN | libc::EPOLLET) as u32,
                u64: i as u64,
            };
            // SAFETY: both descriptors are open; `ev` is a valid epoll_event.
            let rc = unsafe {
                libc::epoll_ctl(
                    fd.as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    socks[i].as_raw_fd(),
                    &mut ev,
                )
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error()).context("epoll_ctl");
            }
        }
        let events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
        Ok(Epoll { fd, events })
    }

    /// Waits up to `timeout_ms` and returns the indices of the pilots whose sockets
    /// became readable.
    fn wait(&mut self, timeout_ms: i32) -> std::io::Result<impl Iterator<Item = usize> + '_> {
        // SAFETY: `events` has room for events.len() entries.
        let k = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                timeout_ms,
            )
        };
        if k < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let k = (k as usize).min(self.events.len());
        Ok(self.events[..k].iter().map(|ev| ev.u64 as usize))
    }
}

/// Reads pilot `me`'s socket: until a short batch says the queue is empty (it is
/// edge-triggered), but at most [`BATCHES_PER_TURN`] batches. Returns the datagrams
/// read and whether the queue was drained.
fn read_turn(
    sock: &UdpSocket,
    me: usize,
    batch: &mut RecvBatch,
    plan: &Plan,
    r: &mut RecvResult,
) -> (u64, bool) {
    let mut got = 0u64;
    for _ in 0..BATCHES_PER_TURN {
        let m = match batch.recv(sock, false) {
            Ok(m) => m,
            // Empty queue, or an ICMP error (target not listening): nothing to read.
            Err(e) => {
                if e.raw_os_error() == Some(libc::ECONNREFUSED) {
                    r.refused += 1;
                }
                return (got, true);
            }
        };
        got += m as u64;
        r.tally(batch, m, me, plan);
        if m < RECV_BATCH {
            return (got, true);
        }
    }
    (got, false)
}

/// One receive thread over the pilots in `mine`, until the end of the drain or `stop`.
pub(super) fn receiver(
    socks: &[UdpSocket],
    mine: Vec<usize>,
    plan: &Plan,
    start: Instant,
    stop: &Wake,
    live: &Live,
) -> Result<RecvResult> {
    let mut ep = Epoll::new(socks, &mine)?;
    let mut batch = RecvBatch::with_options(RECV_BATCH, false, true);
    let mut ready: Vec<usize> = Vec::with_capacity(ep.events.len());
    // Sockets left with data last round; they are read again without waiting.
    let mut carry: Vec<usize> = Vec::new();
    let mut cpu_at_window: Option<f64> = None;
    let mut r = RecvResult::default();
    loop {
        let now = secs(start);
        if now >= plan.t_end || stop.is_raised() {
            break;
        }
        if cpu_at_window.is_none() && now >= plan.t_measure {
            cpu_at_window = Some(procstat::this_thread_cpu_s());
        }
        let timeout_ms = if carry.is_empty() {
            (((plan.t_end - now) * 1000.0).ceil() as i32).clamp(1, 50)
        } else {
            0
        };
        let woken = match ep.wait(timeout_ms) {
            Ok(woken) => woken,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("epoll_wait"),
        };
        ready.clear();
        ready.append(&mut carry);
        ready.extend(woken);
        let mut got = 0u64;
        for &me in &ready {
            let Some(sock) = socks.get(me) else { continue };
            let (m, drained) = read_turn(sock, me, &mut batch, plan, &mut r);
            got += m;
            if !drained {
                carry.push(me);
            }
        }
        if got > 0 {
            r.any += got;
            live.received.fetch_add(got, Relaxed);
        }
        if got < RECV_LIGHT && carry.is_empty() {
            std::thread::sleep(RECV_NAP);
        }
    }
    r.cpu_s = cpu_at_window.map_or(0.0, |c| procstat::this_thread_cpu_s() - c);
    Ok(r)
}
