//! `lobby load fg`: simulated FlightGear pilots against a relay.
//!
//! Every pilot has its own UDP socket (distinct source port) and sends a real
//! 892-byte v2 position datagram at `--hz`, with its callsign, range, position and
//! a measurement stamp rewritten. The generator receives on every socket, checks
//! each forwarded datagram against the exact set of receivers the fgms range rule
//! gives (notes 2.5), and reports delivery, latency and the target's CPU time.
//!
//! Timeline: sockets are set up; from t0 every pilot sends at `--hz` (evenly
//! spread over each 1/hz period). The first `--warmup` seconds of rounds (at
//! least one) let the server learn every pilot and are not measured; the next
//! `--seconds` of rounds are. Receiving stops `--drain` seconds after the measured
//! window ends. Sends and time are both bounded: at most pilots × hz × (warmup +
//! seconds) datagrams, and a sender that falls behind stops at the window's end.

use crate::histogram::Histogram;
use crate::layout::{fanout, place, receives, Layout};
use crate::packet::{callsign, read_stamp, Datagram};
use crate::procstat;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use udp::time::{realtime_ns, ts_ns};
use udp::{enable_timestamps, BindOptions, RecvBatch, Wake};

/// Flags of `lobby load fg`.
#[derive(Args, Debug, Clone)]
pub struct FgArgs {
    /// UDP address of the server under test (HOST:PORT), e.g. a relay's listen address.
    #[arg(long, value_name = "HOST:PORT")]
    pub target: String,
    /// Number of simulated pilots, each with its own UDP socket and callsign.
    #[arg(long, default_value_t = 100, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=50_000))]
    pub pilots: u32,
    /// Position datagrams per second per pilot (FlightGear sends 10).
    #[arg(long, default_value_t = 10.0, value_name = "HZ")]
    pub hz: f64,
    /// Length of the measured window in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    pub seconds: f64,
    /// Where the pilots fly: `cluster` (all near BIKF, everyone sees everyone) or
    /// `world` (30 airports, each pilot sees those at its own airport).
    #[arg(long, value_enum, default_value_t = Layout::Cluster)]
    pub layout: Layout,
    /// Receive range every pilot requests, in nm (the receiver's range decides who gets what).
    #[arg(long, default_value_t = 100, value_name = "NM",
          value_parser = clap::value_parser!(u16).range(1..=2000))]
    pub range: u16,
    /// Radius around each airport in nm [default: 2 for cluster, 5 for world].
    #[arg(long, value_name = "NM")]
    pub spread: Option<f64>,
    /// PID of the server process; its CPU time over the measured window is reported.
    #[arg(long, value_name = "PID")]
    pub target_pid: Option<u32>,
    /// Print one JSON object instead of the human-readable table.
    #[arg(long)]
    pub json: bool,
    /// Seconds of unmeasured traffic first, so the server learns every pilot (at least one round).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub warmup: f64,
    /// Seconds to keep receiving after the measured window.
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub drain: f64,
    /// Receive threads (each polls its share of the pilot sockets with epoll).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16))]
    pub recv_threads: u32,
    /// Local IP for the pilot sockets [default: the loopback address of the target's
    /// family if the target is on loopback, otherwise the unspecified address].
    #[arg(long, value_name = "IP")]
    pub bind: Option<IpAddr>,
}

/// Latency percentiles in microseconds: from the send stamp (taken just before
/// the generator's `send`) to the kernel's receive timestamp on the pilot socket
/// (`SO_TIMESTAMPNS`), both `CLOCK_REALTIME`. So it covers the target's queueing
/// and processing and the loopback path, not the generator's own read delay.
#[derive(Debug, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Largest.
    pub max_us: u64,
    /// Smallest.
    pub min_us: u64,
    /// Number of samples (= received).
    pub samples: u64,
    /// Mean.
    pub mean_us: f64,
}

/// Everything a run measured (the `--json` object).
#[derive(Debug, Serialize)]
pub struct Report {
    /// Resolved target address.
    pub target: String,
    /// Simulated pilots.
    pub pilots: u32,
    /// Layout name.
    pub layout: Layout,
    /// Airports used (ICAO codes).
    pub airports: Vec<&'static str>,
    /// Radius around each airport, nm.
    pub spread_nm: f64,
    /// Range every pilot requests, nm.
    pub range_nm: u16,
    /// Datagrams per second per pilot.
    pub hz: f64,
    /// Measured window, seconds.
    pub seconds: f64,
    /// Unmeasured rounds sent before the window.
    pub warmup_rounds: u64,
    /// Receivers per datagram, averaged over pilots.
    pub mean_fanout: f64,
    /// Datagrams sent in the measured window (= datagrams offered to the server).
    pub sent: u64,
    /// Measured datagrams not sent because the sender ran out of time.
    pub unsent: u64,
    /// Datagrams sent during warmup.
    pub warmup_sent: u64,
    /// Failed send calls.
    pub send_errors: u64,
    /// Deliveries the range rule calls for, for the datagrams actually sent.
    pub expected: u64,
    /// Measured datagrams received from the server.
    pub received: u64,
    /// received / expected.
    pub delivery_ratio: f64,
    /// Throughput: datagrams (measured or warmup) that arrived at the pilots during
    /// the measured window, per second. Unlike `received` this still counts when an
    /// overloaded server is working through a backlog of older datagrams.
    pub forwarded_per_s: f64,
    /// Datagrams that arrived from the window's start to the end of the drain (the CPU window).
    pub forwarded_in_cpu_window: u64,
    /// Received datagrams the range rule says should not have arrived (own echo, out of range).
    pub unexpected: u64,
    /// Received datagrams that were not this generator's stamped positions.
    pub malformed: u64,
    /// Warmup datagrams received (not measured).
    pub warmup_received: u64,
    /// Latency from send to receive.
    pub latency: Latency,
    /// pilots × hz.
    pub requested_send_rate: f64,
    /// sent / seconds.
    pub achieved_send_rate: f64,
    /// The sender thread's ceiling: measured sends per CPU second the send thread
    /// used in the window (what one core could send if it did nothing else).
    pub max_send_rate: f64,
    /// Share of the wall time the sender spent in bursts of send calls (including
    /// time it was preempted there).
    pub send_busy_fraction: f64,
    /// Latest a send went out after its scheduled time, ms.
    pub send_late_max_ms: f64,
    /// Wall time over which CPU was measured (window start to end of drain), seconds.
    pub cpu_window_s: f64,
    /// Target's CPU seconds (user + system) over the CPU window.
    pub target_cpu_s: Option<f64>,
    /// Target CPU seconds per million forwarded datagrams (arrivals at the pilots in the CPU window).
    pub target_cpu_s_per_m_forwarded: Option<f64>,
    /// Target CPU seconds per million datagrams offered to it (= sent in the window).
    pub target_cpu_s_per_m_received: Option<f64>,
    /// Target CPU seconds per million datagrams it actually read: sent minus the
    /// kernel's drops at its socket (`None` unless the target is on this host's loopback).
    pub target_cpu_s_per_m_processed: Option<f64>,
    /// Target CPU seconds per thread over the window (`tid name`).
    pub target_threads_cpu_s: Option<BTreeMap<String, f64>>,
    /// Datagrams the kernel dropped at the target's socket(s) (its UDP port) over the window.
    pub target_socket_drops: Option<u64>,
    /// Datagrams the kernel dropped at the pilots' sockets over the window.
    pub generator_socket_drops: u64,
    /// This generator's CPU seconds over the window.
    pub generator_cpu_s: Option<f64>,
    /// CPU seconds of the generator's send and receive threads over the window.
    pub generator_threads_cpu_s: BTreeMap<String, f64>,
    /// Busy CPU seconds of the whole machine over the CPU window.
    pub machine_busy_cpu_s: Option<f64>,
    /// Machine busy CPU minus the target's and this generator's: other processes
    /// competing for the cores (plus kernel work not charged to either). A large
    /// value means the run was disturbed.
    pub other_cpu_s: Option<f64>,
    /// Ctrl-C / SIGTERM cut the run short.
    pub interrupted: bool,
    /// Problems with the measurement itself.
    pub warnings: Vec<String>,
}

/// Counters of one receive thread.
struct RecvResult {
    /// CPU seconds this thread used from the window's start to its end.
    cpu_s: f64,
    hist: Histogram,
    received: u64,
    warmup_received: u64,
    unexpected: u64,
    malformed: u64,
    /// Datagrams without a kernel timestamp (latency from the read time instead).
    no_timestamp: u64,
    /// ICMP "port unreachable" reports from the target.
    refused: u64,
    /// Valid datagrams (warmup or measured) that arrived in the measured window.
    window_arrivals: u64,
    /// Valid datagrams that arrived from the window's start to the end of the drain.
    cpu_window_arrivals: u64,
    any: u64,
}

/// Counters of the sender thread.
struct SendResult {
    /// CPU seconds this thread used from the window's start to its end.
    cpu_s: f64,
    per_pilot: Vec<u32>,
    sent: u64,
    warmup_sent: u64,
    unsent: u64,
    errors: u64,
    busy: Duration,
    wall: Duration,
    late_max: Duration,
}

/// Progress counters read once per second.
#[derive(Default)]
struct Live {
    sent: AtomicU64,
    received: AtomicU64,
}

/// The fixed plan of a run.
struct Plan {
    n: usize,
    range: f64,
    pos: Vec<[f64; 3]>,
    /// Unmeasured rounds first.
    warmup_rounds: u64,
    /// Measured rounds.
    rounds: u64,
    /// Seconds between two consecutive sends (of different pilots).
    dt: f64,
    /// Start of sending, seconds after `start`.
    t0: f64,
    /// Start of the measured window.
    t_measure: f64,
    /// End of the measured window (sender deadline).
    t_window_end: f64,
    /// End of receiving.
    t_end: f64,
    /// `CLOCK_REALTIME` at the start, ns: the zero of the send stamps.
    base_ns: i64,
}

fn validate(a: &FgArgs) -> Result<()> {
    if !(a.hz.is_finite() && a.hz > 0.0 && a.hz <= 1000.0) {
        bail!("--hz must be above 0 and at most 1000");
    }
    if !(a.seconds.is_finite() && a.seconds > 0.0 && a.seconds <= 3600.0) {
        bail!("--seconds must be above 0 and at most 3600");
    }
    if !(a.warmup.is_finite() && (0.0..=600.0).contains(&a.warmup)) {
        bail!("--warmup must be between 0 and 600");
    }
    if !(a.drain.is_finite() && (0.0..=600.0).contains(&a.drain)) {
        bail!("--drain must be between 0 and 600");
    }
    if let Some(s) = a.spread {
        if !(s.is_finite() && (0.0..=600.0).contains(&s)) {
            bail!("--spread must be between 0 and 600 nm");
        }
    }
    Ok(())
}

fn resolve_target(s: &str) -> Result<SocketAddr> {
    let addrs: Vec<SocketAddr> = s
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve target {s:?} (expected HOST:PORT)"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .with_context(|| format!("target {s:?} resolves to no address"))
}

fn open_sockets(n: usize, bind: IpAddr, target: SocketAddr) -> Result<Vec<UdpSocket>> {
    // Room for bursts without letting 10,000 sockets pin gigabytes: 512 MB shared, 256 KB-2 MB each.
    let rcvbuf = ((512usize << 20) / n.max(1)).clamp(256 << 10, 2 << 20);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let options = BindOptions {
            reuse_port: false,
            recv_buffer: rcvbuf,
            send_buffer: 0,
            pmtu_probe: false,
        };
        let s = udp::bind(SocketAddr::new(bind, 0), options)
            .with_context(|| format!("cannot bind pilot socket {i} to {bind}:0"))?;
        s.connect(target)
            .with_context(|| format!("cannot connect a UDP socket to {target}"))?;
        enable_timestamps(&s).context("cannot enable SO_TIMESTAMPNS")?;
        out.push(s);
    }
    Ok(out)
}

fn secs(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Seconds of `CLOCK_REALTIME` since `base_ns`: the clock of the embedded send
/// stamps and of the kernel's receive timestamps, so the two can be subtracted.
fn stamp_now(base_ns: i64) -> f64 {
    (realtime_ns() - base_ns) as f64 * 1e-9
}

/// The shortest sleep between two bursts of sends: sends due within it go out together.
const SEND_QUANTUM: f64 = 250e-6;

fn sender(
    socks: &[UdpSocket],
    plan: &Plan,
    range_nm: u16,
    start: Instant,
    stop: &Wake,
    live: &Live,
) -> SendResult {
    let n = plan.n as u64;
    let total = n * (plan.warmup_rounds + plan.rounds);
    let measured_from = n * plan.warmup_rounds;
    let callsigns: Vec<[u8; 8]> = (0..plan.n as u32).map(callsign).collect();
    let mut dg = Datagram::new();
    let mut cpu_at_window: Option<f64> = None;
    let mut r = SendResult {
        cpu_s: 0.0,
        per_pilot: vec![0; plan.n],
        sent: 0,
        warmup_sent: 0,
        unsent: 0,
        errors: 0,
        busy: Duration::ZERO,
        wall: Duration::ZERO,
        late_max: Duration::ZERO,
    };
    let began = Instant::now();
    let mut j: u64 = 0;
    'outer: while j < total && !stop.is_raised() {
        let now = secs(start);
        // Number of sends due by now.
        let due = (((now - plan.t0) / plan.dt).floor() as i64 + 1).clamp(0, total as i64) as u64;
        if due <= j {
            // Sleep until the next send is due (at least a quantum, at most 50 ms so a
            // stop request is seen soon). No spinning: the CPU is shared with the target.
            let wait = plan.t0 + j as f64 * plan.dt - now;
            std::thread::sleep(Duration::from_secs_f64(wait.clamp(SEND_QUANTUM, 0.05)));
            continue;
        }
        if cpu_at_window.is_none() && j >= measured_from {
            cpu_at_window = Some(procstat::this_thread_cpu_s());
        }
        let late = now - (plan.t0 + j as f64 * plan.dt);
        if late > SEND_QUANTUM {
            r.late_max = r.late_max.max(Duration::from_secs_f64(late - SEND_QUANTUM));
        }
        let burst = Instant::now();
        while j < due {
            if j >= measured_from && secs(start) >= plan.t_window_end {
                r.unsent = total - j;
                r.busy += burst.elapsed();
                break 'outer;
            }
            let i = (j % n) as usize;
            let round = j / n;
            dg.set_pilot(&callsigns[i], range_nm, plan.pos[i]);
            dg.set_stamp(stamp_now(plan.base_ns), i as u32, round as u32);
            match socks[i].send(dg.bytes()) {
                Ok(_) if j >= measured_from => {
                    r.per_pilot[i] += 1;
                    r.sent += 1;
                }
                Ok(_) => r.warmup_sent += 1,
                Err(_) => r.errors += 1,
            }
            j += 1;
        }
        r.busy += burst.elapsed();
        live.sent.store(r.sent + r.warmup_sent, Relaxed);
    }
    if j < total && r.unsent == 0 {
        r.unsent = total - j.max(measured_from);
    }
    r.wall = began.elapsed();
    r.cpu_s = cpu_at_window.map_or(0.0, |c| procstat::this_thread_cpu_s() - c);
    r
}

/// Datagrams per `recvmmsg` call.
const RECV_BATCH: usize = 32;
/// After a poll round that found fewer datagrams than this, the receiver sleeps
/// [`RECV_NAP`] so the next round finds more per system call. Latency does not
/// suffer: it is measured with the kernel's receive timestamp, not the read time.
const RECV_LIGHT: u64 = 256;
const RECV_NAP: Duration = Duration::from_micros(500);

fn receiver(
    socks: &[UdpSocket],
    mine: Vec<usize>,
    plan: &Plan,
    start: Instant,
    stop: &Wake,
    live: &Live,
) -> Result<RecvResult> {
    // SAFETY: epoll_create1 has no memory preconditions; the fd is owned below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(std::io::Error::last_os_error()).context("epoll_create1");
    }
    // SAFETY: `ep` is a fresh descriptor nobody else owns.
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    for &i in &mine {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: i as u64,
        };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event.
        let rc = unsafe {
            libc::epoll_ctl(
                ep.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                socks[i].as_raw_fd(),
                &mut ev,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("epoll_ctl");
        }
    }
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut batch = RecvBatch::with_options(RECV_BATCH, false, true);
    let mut ready: Vec<usize> = Vec::with_capacity(events.len());
    let mut carry: Vec<usize> = Vec::new();
    let mut cpu_at_window: Option<f64> = None;
    let mut r = RecvResult {
        cpu_s: 0.0,
        hist: Histogram::new(),
        received: 0,
        warmup_received: 0,
        unexpected: 0,
        malformed: 0,
        no_timestamp: 0,
        refused: 0,
        window_arrivals: 0,
        cpu_window_arrivals: 0,
        any: 0,
    };
    let n = plan.n;
    loop {
        let now = secs(start);
        if now >= plan.t_end || stop.is_raised() {
            break;
        }
        if cpu_at_window.is_none() && now >= plan.t_measure {
            cpu_at_window = Some(procstat::this_thread_cpu_s());
        }
        // Sockets left with data last round are read again without waiting.
        let timeout_ms = if carry.is_empty() {
            (((plan.t_end - now) * 1000.0).ceil() as i32).clamp(1, 50)
        } else {
            0
        };
        // SAFETY: `events` has room for events.len() entries.
        let k = unsafe {
            libc::epoll_wait(
                ep.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                timeout_ms,
            )
        };
        if k < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e).context("epoll_wait");
        }
        ready.clear();
        ready.append(&mut carry);
        ready.extend(
            events[..(k as usize).min(events.len())]
                .iter()
                .map(|ev| ev.u64 as usize),
        );
        let mut got = 0u64;
        for &me in &ready {
            let Some(sock) = socks.get(me) else { continue };
            // Edge-triggered: read until a short batch says the queue is empty, but at
            // most a few batches per round so every socket gets its turn.
            let mut drained = false;
            for _ in 0..4 {
                let m = match batch.recv(sock, false) {
                    Ok(m) => m,
                    // Empty queue, or an ICMP error (target not listening): nothing to read.
                    Err(e) => {
                        if e.raw_os_error() == Some(libc::ECONNREFUSED) {
                            r.refused += 1;
                        }
                        drained = true;
                        break;
                    }
                };
                got += m as u64;
                let mut read_time = None;
                for d in 0..m {
                    let stamp = if batch.truncated(d) {
                        None
                    } else {
                        read_stamp(batch.datagram(d))
                    };
                    let Some(s) = stamp else {
                        r.malformed += 1;
                        continue;
                    };
                    let from = s.sender as usize;
                    if from >= n
                        || from == me
                        || !receives(plan.pos[me], plan.range, plan.pos[from])
                    {
                        r.unexpected += 1;
                        continue;
                    }
                    let arrived = match batch.kernel_time(d) {
                        Some(ts) => (ts_ns(ts) - plan.base_ns) as f64 * 1e-9,
                        None => {
                            r.no_timestamp += 1;
                            *read_time.get_or_insert_with(|| stamp_now(plan.base_ns))
                        }
                    };
                    if arrived >= plan.t_measure {
                        r.cpu_window_arrivals += 1;
                        if arrived < plan.t_window_end {
                            r.window_arrivals += 1;
                        }
                    }
                    if u64::from(s.seq) < plan.warmup_rounds {
                        r.warmup_received += 1;
                        continue;
                    }
                    r.received += 1;
                    r.hist.record(((arrived - s.sent_s) * 1e6).max(0.0) as u64);
                }
                if m < RECV_BATCH {
                    drained = true;
                    break;
                }
            }
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

/// Runs `lobby load fg` (blocking): measures, prints the table or the JSON object
/// on standard output, and returns the exit status (0 when the run completed, 1 when
/// the target never sent anything back). Raising `stop` ends the run early; the
/// report then says `interrupted`.
pub fn run(args: FgArgs, stop: Arc<Wake>) -> Result<ExitCode> {
    validate(&args)?;
    let target = resolve_target(&args.target)?;
    let bind = args
        .bind
        .unwrap_or(match (target.ip().is_loopback(), target.is_ipv4()) {
            (true, true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (true, false) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (false, true) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (false, false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        });
    if bind.is_ipv4() != target.is_ipv4() {
        bail!("--bind {bind} and target {target} are of different address families");
    }
    let n = args.pilots as usize;
    let limit = crate::limits::raise_nofile();
    if (n as u64) + 64 > limit {
        bail!("{n} pilots need {} open files; the limit is {limit} (raise the hard limit, ulimit -Hn)", n + 64);
    }
    let spread = args.spread.unwrap_or(args.layout.default_spread_nm());
    let placement = place(args.layout.airports(), n, spread);
    let range = f64::from(args.range);
    let fan = fanout(&placement, &vec![range; n]);
    let socks = Arc::new(open_sockets(n, bind, target)?);
    let ports: Vec<u16> = socks
        .iter()
        .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
        .collect();

    let start = Instant::now();
    let base_ns = realtime_ns();
    let warmup_rounds = ((args.warmup * args.hz).ceil() as u64).max(1);
    let rounds = ((args.seconds * args.hz).round() as u64).max(1);
    let t0 = 0.05;
    let t_measure = t0 + warmup_rounds as f64 / args.hz;
    let t_window_end = t_measure + rounds as f64 / args.hz;
    let plan = Arc::new(Plan {
        n,
        range,
        pos: placement.pos.clone(),
        warmup_rounds,
        rounds,
        dt: 1.0 / (n as f64 * args.hz),
        t0,
        t_measure,
        t_window_end,
        t_end: t_window_end + args.drain,
        base_ns,
    });
    let live = Arc::new(Live::default());

    let mut receivers = Vec::new();
    let threads = args.recv_threads as usize;
    for t in 0..threads {
        let mine: Vec<usize> = (t..n).step_by(threads).collect();
        let (socks, plan, stop, live) = (socks.clone(), plan.clone(), stop.clone(), live.clone());
        receivers.push(
            std::thread::Builder::new()
                .name(format!("load-recv-{t}"))
                .spawn(move || receiver(&socks, mine, &plan, start, &stop, &live))
                .context("cannot start a receive thread")?,
        );
    }
    let send_thread = {
        let (socks, plan, stop, live) = (socks.clone(), plan.clone(), stop.clone(), live.clone());
        let range_nm = args.range;
        std::thread::Builder::new()
            .name("load-send".into())
            .spawn(move || sender(&socks, &plan, range_nm, start, &stop, &live))
            .context("cannot start the send thread")?
    };

    // Progress, and CPU snapshots at the window's start and at the end of the drain.
    let progress = std::io::stderr().is_terminal();
    let mut tick = 1.0;
    let mut last = (0u64, 0u64);
    let mut before = None;
    while !stop.is_raised() && !receivers.iter().all(|h| h.is_finished()) {
        let now = secs(start);
        if before.is_none() && now >= t_measure {
            before = Some(snapshot(args.target_pid));
        }
        if now >= tick {
            if progress {
                let (s, r) = (live.sent.load(Relaxed), live.received.load(Relaxed));
                eprint!(
                    "\r{now:5.1} s  sent {s:>10} ({:>8}/s)  received {r:>11} ({:>9}/s)   ",
                    s - last.0,
                    r - last.1
                );
                let _ = std::io::stderr().flush();
                last = (s, r);
            }
            tick += 1.0;
        }
        let next = if before.is_none() {
            tick.min(t_measure)
        } else {
            tick
        };
        std::thread::sleep(Duration::from_secs_f64(
            (next - secs(start)).clamp(0.001, 0.1),
        ));
    }
    let before = before.unwrap_or_else(|| snapshot(args.target_pid));
    let sent = send_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the send thread panicked"))?;
    let mut thread_cpu = BTreeMap::new();
    thread_cpu.insert("load-send".to_string(), sent.cpu_s);
    let mut recv = RecvResult {
        cpu_s: 0.0,
        hist: Histogram::new(),
        received: 0,
        warmup_received: 0,
        unexpected: 0,
        malformed: 0,
        no_timestamp: 0,
        refused: 0,
        window_arrivals: 0,
        cpu_window_arrivals: 0,
        any: 0,
    };
    for (k, h) in receivers.into_iter().enumerate() {
        let r = h
            .join()
            .map_err(|_| anyhow::anyhow!("a receive thread panicked"))??;
        thread_cpu.insert(format!("load-recv-{k}"), r.cpu_s);
        recv.hist.merge(&r.hist);
        recv.received += r.received;
        recv.warmup_received += r.warmup_received;
        recv.unexpected += r.unexpected;
        recv.malformed += r.malformed;
        recv.no_timestamp += r.no_timestamp;
        recv.refused += r.refused;
        recv.window_arrivals += r.window_arrivals;
        recv.cpu_window_arrivals += r.cpu_window_arrivals;
        recv.any += r.any;
    }
    let after = snapshot(args.target_pid);
    if progress {
        eprintln!();
    }
    let interrupted = stop.is_raised();

    let expected: u64 = sent
        .per_pilot
        .iter()
        .zip(&fan)
        .map(|(&s, &f)| u64::from(s) * f)
        .sum();
    let window = after.at - before.at;
    let target_cpu = match (before.target_cpu, after.target_cpu) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let per_m =
        |cpu: Option<f64>, count: u64| cpu.filter(|_| count > 0).map(|c| c / (count as f64 / 1e6));
    let requested = n as f64 * args.hz;
    let achieved = sent.sent as f64 / args.seconds;
    let generator_cpu = match (before.self_cpu, after.self_cpu) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let machine_busy = match (before.machine_busy, after.machine_busy) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let mut warnings = Vec::new();
    if achieved < 0.99 * requested && !interrupted {
        warnings.push(format!(
            "the generator sent {achieved:.0}/s, below 99% of the requested {requested:.0}/s: it is the bottleneck"
        ));
    }
    if sent.late_max > Duration::from_millis(50) {
        warnings.push(format!(
            "sends went out up to {:.0} ms late (the generator was starved of CPU)",
            sent.late_max.as_secs_f64() * 1e3
        ));
    }
    let other = machine_busy
        .map(|m| (m - target_cpu.unwrap_or(0.0) - generator_cpu.unwrap_or(0.0)).max(0.0));
    if let Some(o) = other.filter(|&o| window > 0.0 && o > 0.1 * window) {
        warnings.push(format!(
            "other processes used {o:.2} CPU s during the {window:.1} s window: the run was disturbed"
        ));
    }
    if recv.refused > 0 {
        warnings.push(format!(
            "the target answered {} datagrams with ICMP port unreachable: is a server listening on {target}?",
            recv.refused
        ));
    }
    if recv.no_timestamp > 0 {
        warnings.push(format!(
            "{} datagrams had no kernel receive timestamp; their latency includes the generator's read delay",
            recv.no_timestamp
        ));
    }
    if sent.errors > 0 {
        warnings.push(format!("{} send calls failed", sent.errors));
    }
    if recv.unexpected > 0 {
        warnings.push(format!(
            "{} datagrams arrived that the range rule excludes (own echo or out of range)",
            recv.unexpected
        ));
    }
    if args.target_pid.is_some() && target_cpu.is_none() {
        warnings.push("cannot read the target's CPU time from /proc".into());
    }
    let generator_drops: u64 = ports
        .iter()
        .map(|p| {
            after
                .drops
                .get(p)
                .copied()
                .unwrap_or(0)
                .saturating_sub(before.drops.get(p).copied().unwrap_or(0))
        })
        .sum();
    let target_drops = match (
        before.drops.get(&target.port()),
        after.drops.get(&target.port()),
    ) {
        (Some(a), Some(b)) if target.ip().is_loopback() => Some(b.saturating_sub(*a)),
        _ => None,
    };
    let h = &recv.hist;
    let report = Report {
        target: target.to_string(),
        pilots: args.pilots,
        layout: args.layout,
        airports: args.layout.airports().iter().map(|a| a.icao).collect(),
        spread_nm: spread,
        range_nm: args.range,
        hz: args.hz,
        seconds: args.seconds,
        warmup_rounds,
        mean_fanout: fan.iter().sum::<u64>() as f64 / n as f64,
        sent: sent.sent,
        unsent: sent.unsent,
        warmup_sent: sent.warmup_sent,
        send_errors: sent.errors,
        expected,
        received: recv.received,
        delivery_ratio: if expected > 0 {
            recv.received as f64 / expected as f64
        } else {
            1.0
        },
        forwarded_per_s: recv.window_arrivals as f64 / args.seconds,
        forwarded_in_cpu_window: recv.cpu_window_arrivals,
        unexpected: recv.unexpected,
        malformed: recv.malformed,
        warmup_received: recv.warmup_received,
        latency: Latency {
            p50_us: h.percentile(50.0),
            p90_us: h.percentile(90.0),
            p99_us: h.percentile(99.0),
            p999_us: h.percentile(99.9),
            max_us: h.max(),
            min_us: h.min(),
            samples: h.count(),
            mean_us: h.mean(),
        },
        requested_send_rate: requested,
        achieved_send_rate: achieved,
        max_send_rate: if sent.cpu_s > 0.0 {
            sent.sent as f64 / sent.cpu_s
        } else {
            0.0
        },
        send_busy_fraction: if sent.wall > Duration::ZERO {
            sent.busy.as_secs_f64() / sent.wall.as_secs_f64()
        } else {
            0.0
        },
        send_late_max_ms: sent.late_max.as_secs_f64() * 1e3,
        cpu_window_s: window,
        target_cpu_s: target_cpu,
        target_cpu_s_per_m_forwarded: per_m(target_cpu, recv.cpu_window_arrivals),
        target_cpu_s_per_m_received: per_m(target_cpu, sent.sent),
        target_cpu_s_per_m_processed: target_drops
            .and_then(|d| per_m(target_cpu, sent.sent.saturating_sub(d))),
        target_threads_cpu_s: args
            .target_pid
            .map(|_| procstat::thread_delta(&before.target_threads, &after.target_threads)),
        target_socket_drops: target_drops,
        generator_socket_drops: generator_drops,
        generator_cpu_s: generator_cpu,
        generator_threads_cpu_s: thread_cpu,
        machine_busy_cpu_s: machine_busy,
        other_cpu_s: other,
        interrupted,
        warnings,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_table(&mut out, &report)?;
    }
    out.flush()?;
    Ok(if recv.any == 0 && expected > 0 {
        eprintln!("lobby load fg: the target {target} never sent anything back");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// CPU and drop counters at one instant.
struct Snapshot {
    at: f64,
    target_cpu: Option<f64>,
    target_threads: BTreeMap<String, f64>,
    self_cpu: Option<f64>,
    machine_busy: Option<f64>,
    drops: std::collections::HashMap<u16, u64>,
}

fn snapshot(pid: Option<u32>) -> Snapshot {
    let clock = Instant::now();
    let s = Snapshot {
        at: 0.0,
        target_cpu: pid.and_then(|p| procstat::process_cpu_s(p).ok()),
        target_threads: pid.map(procstat::thread_cpu_s).unwrap_or_default(),
        self_cpu: procstat::self_cpu_s(),
        machine_busy: procstat::machine_busy_s(),
        drops: procstat::udp_drops_by_port(),
    };
    Snapshot {
        at: epoch_secs(clock),
        ..s
    }
}

/// Seconds since a process-wide reference, for window lengths between snapshots.
fn epoch_secs(t: Instant) -> f64 {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    t.saturating_duration_since(base).as_secs_f64()
}

fn write_table(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let opt = |v: Option<f64>, prec: usize| match v {
        Some(v) => format!("{v:.prec$}"),
        None => "-".into(),
    };
    writeln!(out, "target                  {}", r.target)?;
    writeln!(
        out,
        "pilots                  {} ({:?} around {}, spread {} nm, range {} nm)",
        r.pilots,
        r.layout,
        if r.airports.len() <= 3 {
            r.airports.join(", ")
        } else {
            format!("{} airports", r.airports.len())
        },
        r.spread_nm,
        r.range_nm
    )?;
    writeln!(
        out,
        "rate                    {} Hz for {} s (after {} warmup round(s))",
        r.hz, r.seconds, r.warmup_rounds
    )?;
    writeln!(
        out,
        "mean fan-out            {:.1} receivers per datagram",
        r.mean_fanout
    )?;
    writeln!(
        out,
        "sent                    {} (unsent {}, send errors {})",
        r.sent, r.unsent, r.send_errors
    )?;
    writeln!(out, "expected deliveries     {}", r.expected)?;
    writeln!(
        out,
        "received                {} measured; throughput {:.0}/s forwarded during the window",
        r.received, r.forwarded_per_s
    )?;
    writeln!(
        out,
        "delivery ratio          {:.4}%",
        r.delivery_ratio * 100.0
    )?;
    if r.unexpected + r.malformed > 0 {
        writeln!(
            out,
            "unexpected / malformed  {} / {}",
            r.unexpected, r.malformed
        )?;
    }
    let l = &r.latency;
    writeln!(
        out,
        "latency us              p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {:.0}",
        l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us, l.mean_us
    )?;
    writeln!(
        out,
        "send rate               requested {:.0}/s, achieved {:.0}/s, sender ceiling {:.0}/s (busy {:.1}%, latest {:.1} ms late)",
        r.requested_send_rate,
        r.achieved_send_rate,
        r.max_send_rate,
        r.send_busy_fraction * 100.0,
        r.send_late_max_ms
    )?;
    writeln!(
        out,
        "cpu window              {:.2} s; generator cpu {} s; machine busy {} s, of which other processes {} s",
        r.cpu_window_s,
        opt(r.generator_cpu_s, 2),
        opt(r.machine_busy_cpu_s, 2),
        opt(r.other_cpu_s, 2)
    )?;
    if r.target_cpu_s.is_some() {
        writeln!(
            out,
            "target cpu              {} s; per M forwarded {} s, per M offered {} s, per M read {} s",
            opt(r.target_cpu_s, 2),
            opt(r.target_cpu_s_per_m_forwarded, 3),
            opt(r.target_cpu_s_per_m_received, 3),
            opt(r.target_cpu_s_per_m_processed, 3)
        )?;
        if let Some(t) = &r.target_threads_cpu_s {
            for (k, v) in t.iter().filter(|(_, v)| **v >= 0.01) {
                writeln!(out, "  thread {k:<24} {v:.2} s")?;
            }
        }
    }
    writeln!(
        out,
        "kernel socket drops     target {}, pilots {}",
        r.target_socket_drops
            .map(|d| d.to_string())
            .unwrap_or_else(|| "-".into()),
        r.generator_socket_drops
    )?;
    if r.interrupted {
        writeln!(out, "interrupted             yes")?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
