//! The send thread: every pilot's position datagram at `--hz`, evenly spread over
//! each period, stamped for the latency measurement.

use super::{secs, stamp_now, Live, Plan};
use crate::packet::{callsign, Datagram};
use crate::procstat;
use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use udp::Wake;

/// The shortest sleep between two bursts of sends: sends due within it go out together.
const SEND_QUANTUM: f64 = 250e-6;

/// Counters of the sender thread.
#[derive(Default)]
pub(super) struct SendResult {
    /// CPU seconds this thread used from the window's start to its end.
    pub cpu_s: f64,
    pub per_pilot: Vec<u32>,
    pub sent: u64,
    pub warmup_sent: u64,
    pub unsent: u64,
    pub errors: u64,
    pub busy: Duration,
    pub wall: Duration,
    pub late_max: Duration,
}

/// What the sender sends, and where it is in the schedule.
struct Schedule<'a> {
    socks: &'a [UdpSocket],
    plan: &'a Plan,
    range_nm: u16,
    callsigns: Vec<[u8; 8]>,
    dg: Datagram,
    /// Sends in the whole run (warmup and measured).
    total: u64,
    /// The first measured send.
    measured_from: u64,
    /// The next send.
    j: u64,
}

impl Schedule<'_> {
    /// Sends every datagram due before send `due`. Returns false when the measured
    /// window ended first (the rest is counted as unsent).
    fn burst(&mut self, due: u64, start: Instant, r: &mut SendResult) -> bool {
        let n = self.plan.n as u64;
        while self.j < due {
            let j = self.j;
            if j >= self.measured_from && secs(start) >= self.plan.t_window_end {
                r.unsent = self.total - j;
                return false;
            }
            let i = (j % n) as usize;
            let round = j / n;
            let pos = self.plan.position(i, secs(start));
            self.dg.set_pilot(&self.callsigns[i], self.range_nm, pos);
            self.dg
                .set_stamp(stamp_now(self.plan.base_ns), i as u32, round as u32);
            match self.socks[i].send(self.dg.bytes()) {
                Ok(_) if j >= self.measured_from => {
                    r.per_pilot[i] += 1;
                    r.sent += 1;
                }
                Ok(_) => r.warmup_sent += 1,
                Err(_) => r.errors += 1,
            }
            self.j += 1;
        }
        true
    }
}

/// Runs the schedule until every send went out, the window ended, or `stop` was raised.
pub(super) fn sender(
    socks: &[UdpSocket],
    plan: &Plan,
    range_nm: u16,
    start: Instant,
    stop: &Wake,
    live: &Live,
) -> SendResult {
    let n = plan.n as u64;
    let total = n * (plan.warmup_rounds + plan.rounds);
    let mut s = Schedule {
        socks,
        plan,
        range_nm,
        callsigns: (0..plan.n as u32).map(callsign).collect(),
        dg: Datagram::new(),
        total,
        measured_from: n * plan.warmup_rounds,
        j: 0,
    };
    let mut cpu_at_window: Option<f64> = None;
    let mut r = SendResult {
        per_pilot: vec![0; plan.n],
        ..SendResult::default()
    };
    let began = Instant::now();
    while s.j < total && !stop.is_raised() {
        let now = secs(start);
        // Number of sends due by now.
        let due = (((now - plan.t0) / plan.dt).floor() as i64 + 1).clamp(0, total as i64) as u64;
        let scheduled = plan.t0 + s.j as f64 * plan.dt;
        if due <= s.j {
            // Sleep until the next send is due (at least a quantum, at most 50 ms so a
            // stop request is seen soon). No spinning: the CPU is shared with the target.
            let wait = scheduled - now;
            std::thread::sleep(Duration::from_secs_f64(wait.clamp(SEND_QUANTUM, 0.05)));
            continue;
        }
        if cpu_at_window.is_none() && s.j >= s.measured_from {
            cpu_at_window = Some(procstat::this_thread_cpu_s());
        }
        let late = now - scheduled;
        if late > SEND_QUANTUM {
            r.late_max = r.late_max.max(Duration::from_secs_f64(late - SEND_QUANTUM));
        }
        let burst = Instant::now();
        let in_window = s.burst(due, start, &mut r);
        r.busy += burst.elapsed();
        if !in_window {
            break;
        }
        live.sent.store(r.sent + r.warmup_sent, Relaxed);
    }
    if s.j < total && r.unsent == 0 {
        r.unsent = total - s.j.max(s.measured_from);
    }
    r.wall = began.elapsed();
    r.cpu_s = cpu_at_window.map_or(0.0, |c| procstat::this_thread_cpu_s() - c);
    r
}
