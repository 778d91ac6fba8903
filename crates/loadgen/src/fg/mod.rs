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

mod churn;
mod receiver;
mod report;
mod sender;

pub use churn::ChurnReport;
pub use report::{Latency, Report};

use crate::layout::{fanout_tiered, place, Layout};
use anyhow::{bail, Context, Result};
use clap::Args;
use receiver::{receiver, RecvResult};
use report::{snapshot, write_table, Measured, Snapshot};
use sender::{sender, SendResult};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use udp::time::realtime_ns;
use udp::{enable_timestamps, BindOptions, Wake};

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
    /// family if the target is on loopback, otherwise the unspecified address]. On
    /// IPv4 loopback without `--bind` the pilots are spread over 127.0.0.0/8, 16 per
    /// address and 8 addresses per /24, so they fit a relay's default
    /// `max_pilots_per_ip` and its /24 share; on ::1 or with
    /// `--bind` they share one address (raise the relay's cap).
    #[arg(long, value_name = "IP")]
    pub bind: Option<IpAddr>,
    /// Churn: this many extra pilots per second join (out of everyone's range, over
    /// Antarctica), fly `--churn-life` seconds at 1 Hz, and go silent, so the relay
    /// keeps admitting and expiring pilots while the measured ones fly.
    #[arg(long, default_value_t = 0.0, value_name = "PER_S")]
    pub churn: f64,
    /// Seconds each churn pilot flies before going silent.
    #[arg(long, default_value_t = 3.0, value_name = "S")]
    pub churn_life: f64,
    /// The relay's player expiry (for the report: when the burst is due to expire).
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    pub churn_expiry: f64,
    /// This many extra pilots fly through the warmup and all go silent when the
    /// measured window starts, so the relay expires them at once inside the window
    /// (make the window longer than `--churn-expiry`); the report's `max_gap_ms`
    /// shows what the measured pilots felt.
    #[arg(long, default_value_t = 0, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=i64::from(churn::MAX_BURST)))]
    pub expire_burst: u32,
    /// Every pilot flies at this ground speed in knots, each on its own great circle
    /// from its place (0: they hold still). Delivery is still judged from the start
    /// positions, so keep `speed × seconds` small next to `--range` when it matters.
    #[arg(long = "move", default_value_t = 0.0, value_name = "KT")]
    pub move_kt: f64,
    /// The target's distance tiers (lobby relay's `--tiers`, e.g. "full@10,2hz@40,1hz";
    /// "off" for fgms or `--tiers off`): what each pilot should receive of each other
    /// pilot. The report then also counts the near pairs (full rate) on their own.
    #[arg(long, default_value = "off", value_name = "TIERS")]
    pub tiers: String,
    /// The target's tier hysteresis, nm (lobby relay's `[relay] tier_hysteresis`):
    /// a pair first seen within this of a tier's outer bound keeps the nearer tier.
    #[arg(long, default_value_t = relay::tiers::DEFAULT_HYSTERESIS_NM, value_name = "NM")]
    pub tier_hysteresis: f64,
}

impl FgArgs {
    fn churn_args(&self) -> churn::ChurnArgs {
        churn::ChurnArgs {
            rate: self.churn,
            life: self.churn_life,
            expiry: self.churn_expiry,
            burst: self.expire_burst,
        }
    }
}
/// Progress counters read once per second.
#[derive(Default)]
struct Live {
    sent: AtomicU64,
    received: AtomicU64,
}

/// The fixed plan of a run, shared by the threads.
struct Plan {
    n: usize,
    range: f64,
    pos: Vec<[f64; 3]>,
    /// Pairs this close (nm) get every datagram under the target's tiers.
    near_nm: f64,
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
    /// How the pilots move, if they do.
    motion: Option<Motion>,
}

/// Pilots flying great circles at one speed: each from its start along its course.
struct Motion {
    /// (latitude, longitude, altitude m, course) of each pilot at the start.
    start: Vec<(f64, f64, f64, f64)>,
    /// Nautical miles per second.
    nm_per_s: f64,
}

impl Motion {
    /// Courses spread by the golden angle, so neighbours fly different ways.
    fn new(pos: &[[f64; 3]], kt: f64) -> Motion {
        let start = pos
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let g = fgmp::geo::from_ecef(p);
                let course = (i as f64 * 137.507_764).rem_euclid(360.0);
                (g.lat_deg, g.lon_deg, g.alt_m, course)
            })
            .collect();
        Motion {
            start,
            nm_per_s: kt / 3600.0,
        }
    }

    /// Pilot `i`'s position `t` seconds after the start.
    fn at(&self, i: usize, t: f64) -> [f64; 3] {
        let (lat, lon, alt_m, course) = self.start[i];
        let (lat_deg, lon_deg) = fgmp::geo::destination(lat, lon, course, self.nm_per_s * t);
        fgmp::geo::to_ecef(fgmp::geo::Geodetic {
            lat_deg,
            lon_deg,
            alt_m,
        })
    }
}

impl Plan {
    /// Pilot `i`'s position `t` seconds after the start.
    fn position(&self, i: usize, t: f64) -> [f64; 3] {
        match &self.motion {
            Some(m) => m.at(i, t),
            None => self.pos[i],
        }
    }

    /// The timeline of `args` for pilots at `pos`; `base_ns` is `CLOCK_REALTIME` at the start.
    fn new(args: &FgArgs, pos: Vec<[f64; 3]>, near_nm: f64, base_ns: i64) -> Plan {
        let n = pos.len();
        let warmup_rounds = ((args.warmup * args.hz).ceil() as u64).max(1);
        let rounds = ((args.seconds * args.hz).round() as u64).max(1);
        let t0 = 0.05;
        let t_measure = t0 + warmup_rounds as f64 / args.hz;
        let t_window_end = t_measure + rounds as f64 / args.hz;
        let motion = (args.move_kt > 0.0).then(|| Motion::new(&pos, args.move_kt));
        Plan {
            n,
            range: f64::from(args.range),
            pos,
            near_nm,
            warmup_rounds,
            rounds,
            dt: 1.0 / (n as f64 * args.hz),
            t0,
            t_measure,
            t_window_end,
            t_end: t_window_end + args.drain,
            base_ns,
            motion,
        }
    }
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
    if !(a.move_kt.is_finite() && (0.0..=2000.0).contains(&a.move_kt)) {
        bail!("--move must be between 0 and 2000 kt");
    }
    relay::Tiers::parse(&a.tiers, a.tier_hysteresis).context("--tiers")?;
    a.churn_args().validate()
}

/// The target, preferring IPv4 when a name has both (port 5000 when none is given).
fn resolve_target(s: &str) -> Result<SocketAddr> {
    let addrs = udp::addr::resolve_all(s, 5000)
        .with_context(|| format!("cannot resolve target {s:?} (expected HOST:PORT)"))?;
    Ok(*addrs.iter().find(|a| a.is_ipv4()).unwrap_or(&addrs[0]))
}

/// The pilots' local address: `--bind`, or loopback of the target's family when the
/// target is on loopback, otherwise the unspecified address.
fn bind_address(bind: Option<IpAddr>, target: SocketAddr) -> Result<IpAddr> {
    let bind = bind.unwrap_or(match (target.ip().is_loopback(), target.is_ipv4()) {
        (true, true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (true, false) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        (false, true) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        (false, false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    });
    if bind.is_ipv4() != target.is_ipv4() {
        bail!("--bind {bind} and target {target} are of different address families");
    }
    Ok(bind)
}

/// The local address of pilot socket `i`: `bind`, or on IPv4 loopback when no
/// `--bind` was given, 16 pilots per address from 127.0.0.1, eight addresses per /24
/// (a relay's default shares per source and per /24).
fn pilot_ip(bind: IpAddr, spread: bool, i: usize) -> IpAddr {
    match bind {
        IpAddr::V4(a) if spread && a.is_loopback() => IpAddr::V4(crate::spread_v4(
            a,
            i as u64 / u64::from(churn::PER_ADDRESS),
        )),
        other => other,
    }
}

fn open_sockets(
    n: usize,
    bind: IpAddr,
    spread: bool,
    target: SocketAddr,
) -> Result<Vec<UdpSocket>> {
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
        let ip = pilot_ip(bind, spread, i);
        let s = udp::bind(SocketAddr::new(ip, 0), options)
            .with_context(|| format!("cannot bind pilot socket {i} to {ip}:0"))?;
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

/// Runs `lobby load fg` (blocking): measures, prints the table or the JSON object
/// on standard output, and returns the exit status (0 when the run completed, 1 when
/// the target never sent anything back). Raising `stop` ends the run early; the
/// report then says `interrupted`.
pub fn run(args: FgArgs, stop: Arc<Wake>) -> Result<ExitCode> {
    validate(&args)?;
    let target = resolve_target(&args.target)?;
    let bind = bind_address(args.bind, target)?;
    let n = args.pilots as usize;
    let churn_args = args.churn_args();
    let extra = churn_args.sockets() + 16;
    let limit = udp::raise_nofile();
    if ((n + extra) as u64) + 64 > limit {
        bail!(
            "{n} pilots and {extra} churn sockets need {} open files; the limit is {limit} (raise the hard limit, ulimit -Hn)",
            n + extra + 64
        );
    }
    let spread = args.spread.unwrap_or(args.layout.default_spread_nm());
    let placement = place(args.layout.airports(), n, spread);
    let tiers = relay::Tiers::parse(&args.tiers, args.tier_hysteresis)?;
    let fan = fanout_tiered(&placement, &vec![f64::from(args.range); n], &tiers, args.hz);
    let socks = Arc::new(open_sockets(n, bind, args.bind.is_none(), target)?);
    let ports: Vec<u16> = socks
        .iter()
        .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
        .collect();

    let start = Instant::now();
    let near_nm = tiers.full_rate_within_nm().unwrap_or(-1.0);
    let plan = Arc::new(Plan::new(&args, placement.pos, near_nm, realtime_ns()));
    let live = Arc::new(Live::default());
    let threads = Threads::spawn(&args, &socks, (bind, target), &plan, start, &stop, &live)?;
    let progress = std::io::stderr().is_terminal();
    let before = watch(
        &threads,
        &plan,
        args.target_pid,
        start,
        &stop,
        &live,
        progress,
    );
    let (sent, recv, churned, thread_cpu) = threads.join()?;
    let after = snapshot(args.target_pid);
    if progress {
        eprintln!();
    }
    let report = Report::build(Measured {
        args: &args,
        target,
        spread,
        warmup_rounds: plan.warmup_rounds,
        fan: &fan,
        ports: &ports,
        sent: &sent,
        recv: &recv,
        thread_cpu,
        churn: churn_args.any().then_some(churned),
        before: &before,
        after: &after,
        interrupted: stop.is_raised(),
    });
    print(&report, args.json)?;
    Ok(if recv.any == 0 && report.expected > 0 {
        eprintln!("lobby load fg: the target {target} never sent anything back");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The send thread and the receive threads of a run.
struct Threads {
    send: JoinHandle<SendResult>,
    recv: Vec<JoinHandle<Result<RecvResult>>>,
    churn: Option<JoinHandle<ChurnReport>>,
}

impl Threads {
    /// Starts `--recv-threads` receive threads (each with every k-th pilot), then the sender.
    fn spawn(
        args: &FgArgs,
        socks: &Arc<Vec<UdpSocket>>,
        (bind, target): (IpAddr, SocketAddr),
        plan: &Arc<Plan>,
        start: Instant,
        stop: &Arc<Wake>,
        live: &Arc<Live>,
    ) -> Result<Threads> {
        let mut recv = Vec::new();
        let count = args.recv_threads as usize;
        for t in 0..count {
            let mine: Vec<usize> = (t..plan.n).step_by(count).collect();
            let (socks, plan, stop, live) =
                (socks.clone(), plan.clone(), stop.clone(), live.clone());
            recv.push(
                std::thread::Builder::new()
                    .name(format!("load-recv-{t}"))
                    .spawn(move || receiver(&socks, mine, &plan, start, &stop, &live))
                    .context("cannot start a receive thread")?,
            );
        }
        let churn_args = args.churn_args();
        let churn = if churn_args.any() {
            let (plan, stop) = (plan.clone(), stop.clone());
            Some(
                std::thread::Builder::new()
                    .name("load-churn".into())
                    .spawn(move || churn::churn(churn_args, bind, target, &plan, start, &stop))
                    .context("cannot start the churn thread")?,
            )
        } else {
            None
        };
        let (socks, plan, stop, live) = (socks.clone(), plan.clone(), stop.clone(), live.clone());
        let range_nm = args.range;
        let send = std::thread::Builder::new()
            .name("load-send".into())
            .spawn(move || sender(&socks, &plan, range_nm, start, &stop, &live))
            .context("cannot start the send thread")?;
        Ok(Threads { send, recv, churn })
    }

    /// Whether every receive thread ended (the drain is over).
    fn receiving(&self) -> bool {
        !self.recv.iter().all(|h| h.is_finished())
    }

    /// Waits for every thread: the sender's counters, the receivers' summed, and
    /// each thread's CPU seconds over the window by thread name.
    fn join(self) -> Result<(SendResult, RecvResult, ChurnReport, BTreeMap<String, f64>)> {
        let sent = self
            .send
            .join()
            .map_err(|_| anyhow::anyhow!("the send thread panicked"))?;
        let mut thread_cpu = BTreeMap::new();
        thread_cpu.insert("load-send".to_string(), sent.cpu_s);
        let mut recv = RecvResult::default();
        for (k, h) in self.recv.into_iter().enumerate() {
            let r = h
                .join()
                .map_err(|_| anyhow::anyhow!("a receive thread panicked"))??;
            thread_cpu.insert(format!("load-recv-{k}"), r.cpu_s);
            recv.merge(&r);
        }
        let churned = match self.churn {
            Some(h) => h
                .join()
                .map_err(|_| anyhow::anyhow!("the churn thread panicked"))?,
            None => ChurnReport::default(),
        };
        Ok((sent, recv, churned, thread_cpu))
    }
}

/// While the threads run: the progress line once a second (when standard error is a
/// terminal), and the CPU snapshot at the window's start, which it returns (taken
/// at the end if the run stopped before the window).
fn watch(
    threads: &Threads,
    plan: &Plan,
    pid: Option<u32>,
    start: Instant,
    stop: &Wake,
    live: &Live,
    progress: bool,
) -> Snapshot {
    let mut tick = 1.0;
    let mut last = (0u64, 0u64);
    let mut before = None;
    while !stop.is_raised() && threads.receiving() {
        let now = secs(start);
        if before.is_none() && now >= plan.t_measure {
            before = Some(snapshot(pid));
        }
        if now >= tick {
            if progress {
                last = print_progress(now, live, last);
            }
            tick += 1.0;
        }
        let next = if before.is_none() {
            tick.min(plan.t_measure)
        } else {
            tick
        };
        std::thread::sleep(Duration::from_secs_f64(
            (next - secs(start)).clamp(0.001, 0.1),
        ));
    }
    before.unwrap_or_else(|| snapshot(pid))
}

/// Rewrites the progress line: totals and the rates since `last` (sent, received),
/// which it returns updated.
fn print_progress(now: f64, live: &Live, last: (u64, u64)) -> (u64, u64) {
    let (s, r) = (live.sent.load(Relaxed), live.received.load(Relaxed));
    eprint!(
        "\r{now:5.1} s  sent {s:>10} ({:>8}/s)  received {r:>11} ({:>9}/s)   ",
        s - last.0,
        r - last.1
    );
    let _ = std::io::stderr().flush();
    (s, r)
}

/// Prints the report on standard output: one JSON object or the table.
fn print(report: &Report, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, report)?;
        writeln!(out)?;
    } else {
        write_table(&mut out, report)?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fgmp::geo::{chord_nm, to_ecef, Geodetic};

    #[test]
    fn moving_pilots_cover_speed_times_time_each_on_its_own_course() {
        let at = |lat_deg, lon_deg| {
            to_ecef(Geodetic {
                lat_deg,
                lon_deg,
                alt_m: 1000.0,
            })
        };
        let pos = vec![at(63.985, -22.605), at(63.985, -22.605), at(-33.9, 151.2)];
        let m = Motion::new(&pos, 360.0); // 0.1 nm/s
        for (i, &p) in pos.iter().enumerate() {
            assert!(chord_nm(m.at(i, 0.0), p) < 0.01);
            let d = chord_nm(m.at(i, 60.0), p);
            assert!((d - 6.0).abs() < 0.05, "pilot {i}: {d} nm in 60 s");
            let alt = fgmp::geo::from_ecef(m.at(i, 60.0)).alt_m;
            assert!((alt - 1000.0).abs() < 1.0, "altitude kept: {alt}");
        }
        // Two pilots at one place part ways.
        assert!(chord_nm(m.at(0, 60.0), m.at(1, 60.0)) > 1.0);
    }
}
