//! What a run measured: the report (the `--json` object), its construction from the
//! threads' counters and the CPU snapshots, and the human-readable table.

use super::churn::ChurnReport;
use super::receiver::RecvResult;
use super::sender::SendResult;
use super::FgArgs;
use crate::histogram::Histogram;
use crate::layout::Layout;
use crate::procstat;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

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
    /// The target's distance tiers, as given (`off`: every datagram to everyone in range).
    pub tiers: String,
    /// Receivers per datagram, averaged over pilots.
    pub mean_fanout: f64,
    /// Of those, receivers within the full-rate distance (all of them with tiers off).
    pub mean_near_fanout: f64,
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
    /// Deliveries from pilots within the full-rate distance (every datagram).
    pub expected_near: u64,
    /// Measured datagrams received from pilots within the full-rate distance.
    pub received_near: u64,
    /// received_near / expected_near: the near pilots' share of what they sent.
    pub near_delivery_ratio: f64,
    /// Throughput: datagrams (measured or warmup) that arrived at the pilots during
    /// the measured window, per second. Unlike `received` this still counts when an
    /// overloaded server is working through a backlog of older datagrams.
    pub forwarded_per_s: f64,
    /// Bytes per second of `forwarded_per_s` (every datagram is the 892-byte template).
    pub forwarded_bytes_per_s: f64,
    /// What one pilot received per second, on average: `forwarded_per_s` / pilots.
    pub per_pilot_received_per_s: f64,
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
    /// Largest time between two consecutive datagrams arriving at one measured
    /// pilot within the window, ms (a stall of the server shows here).
    pub max_gap_ms: f64,
    /// The churn and expiry burst, when asked for.
    pub churn: Option<ChurnReport>,
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

/// What a run collected, for [`Report::build`].
pub(super) struct Measured<'a> {
    pub args: &'a FgArgs,
    pub target: SocketAddr,
    /// Radius around each airport, nm.
    pub spread: f64,
    pub warmup_rounds: u64,
    /// Receivers per datagram of each pilot.
    pub fan: &'a crate::layout::Fan,
    /// The pilot sockets' local ports.
    pub ports: &'a [u16],
    pub sent: &'a SendResult,
    pub recv: &'a RecvResult,
    /// CPU seconds per generator thread over the window.
    pub thread_cpu: BTreeMap<String, f64>,
    pub churn: Option<ChurnReport>,
    /// At the window's start.
    pub before: &'a Snapshot,
    /// At the end of the drain.
    pub after: &'a Snapshot,
    pub interrupted: bool,
}

impl Report {
    /// Derives every figure from what the run collected.
    pub(super) fn build(m: Measured) -> Report {
        let (args, sent, recv) = (m.args, m.sent, m.recv);
        let n = m.fan.in_range.len();
        let expected = sent
            .per_pilot
            .iter()
            .zip(&m.fan.expected)
            .map(|(&s, &f)| f64::from(s) * f)
            .sum::<f64>()
            .round() as u64;
        let expected_near: u64 = sent
            .per_pilot
            .iter()
            .zip(&m.fan.near)
            .map(|(&s, &f)| u64::from(s) * f)
            .sum();
        let forwarded_per_s = recv.window_arrivals as f64 / args.seconds;
        let cpu = Cpu::between(m.before, m.after);
        let requested = n as f64 * args.hz;
        let achieved = sent.sent as f64 / args.seconds;
        let warnings = warnings(&m, &cpu, requested, achieved);
        let target_drops = target_drops(m.target, m.before, m.after);
        Report {
            target: m.target.to_string(),
            pilots: args.pilots,
            layout: args.layout,
            airports: args.layout.airports().iter().map(|a| a.icao).collect(),
            spread_nm: m.spread,
            range_nm: args.range,
            hz: args.hz,
            seconds: args.seconds,
            warmup_rounds: m.warmup_rounds,
            tiers: args.tiers.clone(),
            mean_fanout: m.fan.in_range.iter().sum::<u64>() as f64 / n as f64,
            mean_near_fanout: m.fan.near.iter().sum::<u64>() as f64 / n as f64,
            sent: sent.sent,
            unsent: sent.unsent,
            warmup_sent: sent.warmup_sent,
            send_errors: sent.errors,
            expected,
            received: recv.received,
            delivery_ratio: ratio(recv.received as f64, expected as f64, 1.0),
            expected_near,
            received_near: recv.received_near,
            near_delivery_ratio: ratio(recv.received_near as f64, expected_near as f64, 1.0),
            forwarded_per_s,
            forwarded_bytes_per_s: forwarded_per_s * crate::packet::TEMPLATE.len() as f64,
            per_pilot_received_per_s: forwarded_per_s / n as f64,
            forwarded_in_cpu_window: recv.cpu_window_arrivals,
            unexpected: recv.unexpected,
            malformed: recv.malformed,
            warmup_received: recv.warmup_received,
            latency: Latency::of(&recv.hist),
            max_gap_ms: recv.max_gap_s * 1e3,
            churn: m.churn,
            requested_send_rate: requested,
            achieved_send_rate: achieved,
            max_send_rate: ratio(sent.sent as f64, sent.cpu_s, 0.0),
            send_busy_fraction: ratio(sent.busy.as_secs_f64(), sent.wall.as_secs_f64(), 0.0),
            send_late_max_ms: sent.late_max.as_secs_f64() * 1e3,
            cpu_window_s: cpu.window,
            target_cpu_s: cpu.target,
            target_cpu_s_per_m_forwarded: per_million(cpu.target, recv.cpu_window_arrivals),
            target_cpu_s_per_m_received: per_million(cpu.target, sent.sent),
            target_cpu_s_per_m_processed: target_drops
                .and_then(|d| per_million(cpu.target, sent.sent.saturating_sub(d))),
            target_threads_cpu_s: args
                .target_pid
                .map(|_| procstat::thread_delta(&m.before.target_threads, &m.after.target_threads)),
            target_socket_drops: target_drops,
            generator_socket_drops: generator_drops(m.ports, m.before, m.after),
            generator_cpu_s: cpu.generator,
            generator_threads_cpu_s: m.thread_cpu,
            machine_busy_cpu_s: cpu.machine_busy,
            other_cpu_s: cpu.other,
            interrupted: m.interrupted,
            warnings,
        }
    }
}

impl Latency {
    fn of(h: &Histogram) -> Latency {
        Latency {
            p50_us: h.percentile(50.0),
            p90_us: h.percentile(90.0),
            p99_us: h.percentile(99.0),
            p999_us: h.percentile(99.9),
            max_us: h.max(),
            min_us: h.min(),
            samples: h.count(),
            mean_us: h.mean(),
        }
    }
}

/// `num / den`, or `otherwise` when `den` is not positive.
fn ratio(num: f64, den: f64, otherwise: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        otherwise
    }
}

/// CPU seconds per million of `count`, when both are known and `count` is not zero.
fn per_million(cpu: Option<f64>, count: u64) -> Option<f64> {
    cpu.filter(|_| count > 0).map(|c| c / (count as f64 / 1e6))
}

/// CPU seconds over the window between two snapshots.
struct Cpu {
    /// Wall seconds between the snapshots.
    window: f64,
    target: Option<f64>,
    generator: Option<f64>,
    machine_busy: Option<f64>,
    /// Machine busy minus the target's and the generator's.
    other: Option<f64>,
}

impl Cpu {
    fn between(before: &Snapshot, after: &Snapshot) -> Cpu {
        let delta = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| b - a);
        let target = delta(before.target_cpu, after.target_cpu);
        let generator = delta(before.self_cpu, after.self_cpu);
        let machine_busy = delta(before.machine_busy, after.machine_busy);
        let other =
            machine_busy.map(|m| (m - target.unwrap_or(0.0) - generator.unwrap_or(0.0)).max(0.0));
        Cpu {
            window: after.at - before.at,
            target,
            generator,
            machine_busy,
            other,
        }
    }
}

/// Problems with the measurement itself, in the report's order.
fn warnings(m: &Measured, cpu: &Cpu, requested: f64, achieved: f64) -> Vec<String> {
    let (sent, recv) = (m.sent, m.recv);
    let mut warnings = Vec::new();
    if achieved < 0.99 * requested && !m.interrupted {
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
    let window = cpu.window;
    if let Some(o) = cpu.other.filter(|&o| window > 0.0 && o > 0.1 * window) {
        warnings.push(format!(
            "other processes used {o:.2} CPU s during the {window:.1} s window: the run was disturbed"
        ));
    }
    if recv.refused > 0 {
        warnings.push(format!(
            "the target answered {} datagrams with ICMP port unreachable: is a server listening on {}?",
            recv.refused, m.target
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
    if m.args.target_pid.is_some() && cpu.target.is_none() {
        warnings.push("cannot read the target's CPU time from /proc".into());
    }
    warnings
}

/// Datagrams the kernel dropped at the pilots' sockets between the snapshots.
fn generator_drops(ports: &[u16], before: &Snapshot, after: &Snapshot) -> u64 {
    let at = |s: &Snapshot, p: &u16| s.drops.get(p).copied().unwrap_or(0);
    ports
        .iter()
        .map(|p| at(after, p).saturating_sub(at(before, p)))
        .sum()
}

/// Datagrams the kernel dropped at the target's port between the snapshots, when
/// the target is on this host's loopback.
fn target_drops(target: SocketAddr, before: &Snapshot, after: &Snapshot) -> Option<u64> {
    match (
        before.drops.get(&target.port()),
        after.drops.get(&target.port()),
    ) {
        (Some(a), Some(b)) if target.ip().is_loopback() => Some(b.saturating_sub(*a)),
        _ => None,
    }
}

/// CPU and drop counters at one instant.
pub(super) struct Snapshot {
    at: f64,
    target_cpu: Option<f64>,
    target_threads: BTreeMap<String, f64>,
    self_cpu: Option<f64>,
    machine_busy: Option<f64>,
    drops: HashMap<u16, u64>,
}

/// Reads the counters now (the target's only if `pid` is given).
pub(super) fn snapshot(pid: Option<u32>) -> Snapshot {
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

/// Writes the human-readable table: what was sent and received, then the costs.
pub(super) fn write_table(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
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
        "mean fan-out            {:.1} receivers per datagram ({:.1} within full rate; tiers {})",
        r.mean_fanout, r.mean_near_fanout, r.tiers
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
        "delivery ratio          {:.4}% (near pilots: {:.4}% of {})",
        r.delivery_ratio * 100.0,
        r.near_delivery_ratio * 100.0,
        r.expected_near
    )?;
    writeln!(
        out,
        "one pilot receives      {:.1} datagrams/s ({:.0} kB/s); all: {:.1} MB/s",
        r.per_pilot_received_per_s,
        r.per_pilot_received_per_s * crate::packet::TEMPLATE.len() as f64 / 1e3,
        r.forwarded_bytes_per_s / 1e6
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
        "largest gap             {:.1} ms between two arrivals at one pilot",
        r.max_gap_ms
    )?;
    if let Some(c) = &r.churn {
        writeln!(
            out,
            "churn                   {} joined at {}/s, {} s each ({} datagrams, {} send errors)",
            c.joined, c.rate, c.life_s, c.sent, c.send_errors
        )?;
        if let (Some(s), Some(e)) = (c.burst_silent_at_s, c.burst_expires_at_s) {
            writeln!(
                out,
                "expiry burst            {} pilots silent at {s:.2} s, due to expire at {e:.2} s",
                c.burst
            )?;
        }
    }
    write_costs(out, r)
}

/// The table's second half: send rate, CPU, kernel drops, warnings.
fn write_costs(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let opt = |v: Option<f64>, prec: usize| match v {
        Some(v) => format!("{v:.prec$}"),
        None => "-".into(),
    };
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
