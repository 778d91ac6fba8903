//! Churn for `lobby load fg`: pilots that join, fly briefly and go silent, so the
//! relay keeps admitting and expiring pilots while the measured pilots fly; and an
//! expiry burst: many pilots that all go silent at the same moment, so the relay
//! expires them together inside the measured window.
//!
//! Churn pilots fly over Antarctica (latitudes 70°S to 85°S) with a 1 nm range on
//! a grid 6 nm apart: they see nobody and nobody at the layout's airports sees
//! them, so they cost the relay admission and expiry, not forwarding. Each has its
//! own socket, open only while it flies, and on IPv4 loopback its own source
//! address (burst pilots in 127.64.0.0/10, churn pilots in 127.128.0.0/9), so
//! every join is a real join, never a replacement, and no per-address cap applies.
//! Elsewhere they share the bind address (raise the relay's `max_pilots_per_ip`).

use super::{secs, Plan};
use crate::packet::{callsign_prefixed, Datagram};
use anyhow::{bail, Result};
use fgmp::geo::{to_ecef, Geodetic};
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};
use udp::{BindOptions, Wake};

/// Churn pilots send this often while they fly.
const CHURN_HZ: f64 = 1.0;
/// Burst pilots are sent in slices this big, with a short pause between slices,
/// so the relay's receive buffer takes them all.
const BURST_SLICE: usize = 500;
const BURST_PAUSE: Duration = Duration::from_millis(5);
/// Sockets per source address of the measured pilots on IPv4 loopback (a relay's
/// default per-address cap).
pub(super) const PER_ADDRESS: u32 = 16;

/// What churn to add to a run (from the command line).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ChurnArgs {
    /// New pilots per second.
    pub rate: f64,
    /// Seconds each churn pilot flies (sending at 1 Hz) before it goes silent.
    pub life: f64,
    /// The relay's player expiry, seconds (only reported: when the burst is due).
    pub expiry: f64,
    /// Pilots that fly during the warmup and all go silent when the window starts.
    pub burst: u32,
}

/// Most burst pilots (the part of the Antarctic grid they have to themselves).
pub(super) const MAX_BURST: u32 = 24_000;
/// Grid cells the continuous churn cycles through (the burst has the rest).
const CHURN_SPOTS: u64 = 30_000;

/// What the churn thread did (part of the `--json` report).
#[derive(Debug, Default, Serialize)]
pub struct ChurnReport {
    /// New pilots per second requested.
    pub rate: f64,
    /// Seconds each churn pilot flew.
    pub life_s: f64,
    /// Churn pilots that joined (sent their first datagram).
    pub joined: u64,
    /// Datagrams the churn pilots sent.
    pub sent: u64,
    /// Failed sends.
    pub send_errors: u64,
    /// Burst pilots.
    pub burst: u32,
    /// When the burst pilots sent their last datagram, seconds after the start
    /// (the measured window starts at `burst_silent_at_s`).
    pub burst_silent_at_s: Option<f64>,
    /// When the relay should drop them all: that plus its player expiry.
    pub burst_expires_at_s: Option<f64>,
}

impl ChurnArgs {
    /// Whether there is any churn to run.
    pub(crate) fn any(&self) -> bool {
        self.rate > 0.0 || self.burst > 0
    }

    /// Sockets open at once at most (the churn pilots flying at the same time).
    pub(crate) fn sockets(&self) -> usize {
        (self.rate * (self.life + 1.0)).ceil() as usize
    }

    /// Checks the values.
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.rate.is_finite() && (0.0..=100_000.0).contains(&self.rate)) {
            bail!("--churn must be between 0 and 100000 pilots per second");
        }
        if !(self.life.is_finite() && (0.0..=3600.0).contains(&self.life)) {
            bail!("--churn-life must be between 0 and 3600 seconds");
        }
        if !(self.expiry.is_finite() && (0.0..=3600.0).contains(&self.expiry)) {
            bail!("--churn-expiry must be between 0 and 3600 seconds");
        }
        Ok(())
    }
}

/// Where churn pilot `k` flies: a cell of the Antarctic grid.
fn spot(k: u64) -> [f64; 3] {
    let col = (k % 360) as f64; // 150 rows × 360 columns = 54,000 cells
    let row = ((k / 360) % 150) as f64;
    to_ecef(Geodetic {
        lat_deg: -70.0 - row * 0.1,
        lon_deg: -180.0 + col,
        alt_m: 3000.0,
    })
}

/// A socket for churn pilot `k` of a series starting at `base` (a distinct
/// loopback address per pilot on IPv4 loopback, otherwise `bind`), connected to `target`.
fn open(bind: IpAddr, base: Ipv4Addr, k: u64, target: SocketAddr) -> std::io::Result<UdpSocket> {
    let ip = match bind {
        IpAddr::V4(a) if a.is_loopback() => IpAddr::V4(crate::spread_v4(base, k)),
        other => other,
    };
    let options = BindOptions {
        reuse_port: false,
        recv_buffer: 0,
        send_buffer: 0,
        pmtu_probe: false,
    };
    let s = udp::bind(SocketAddr::new(ip, 0), options)?;
    s.connect(target)?;
    Ok(s)
}

/// One flying churn pilot.
struct Flying {
    socket: UdpSocket,
    callsign: [u8; 8],
    at: [f64; 3],
    next_send: f64,
    sends_left: u32,
}

/// Runs the churn until the measured window ends or `stop` is raised.
pub(super) fn churn(
    args: ChurnArgs,
    bind: IpAddr,
    target: SocketAddr,
    plan: &Plan,
    start: Instant,
    stop: &Wake,
) -> ChurnReport {
    let mut r = ChurnReport {
        rate: args.rate,
        life_s: args.life,
        burst: args.burst,
        ..ChurnReport::default()
    };
    let mut dg = Datagram::new();
    let send = |dg: &Datagram, s: std::io::Result<&UdpSocket>, r: &mut ChurnReport| match s
        .and_then(|s| s.send(dg.bytes()))
    {
        Ok(_) => r.sent += 1,
        Err(_) => r.send_errors += 1,
    };
    // The burst: every pilot joins with one datagram in the last second of the
    // warmup, so they all go silent together as the window starts.
    if args.burst > 0 {
        let wait = plan.t_measure - 0.9 - secs(start);
        if wait > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
        let base = Ipv4Addr::new(127, 64, 0, 1);
        for i in 0..args.burst {
            if stop.is_raised() {
                return r;
            }
            dg.set_pilot(
                &callsign_prefixed(b'X', i),
                1,
                spot(CHURN_SPOTS + u64::from(i)),
            );
            let socket = open(bind, base, u64::from(i), target);
            send(
                &dg,
                socket
                    .as_ref()
                    .map_err(|e| std::io::Error::new(e.kind(), "bind")),
                &mut r,
            );
            if i as usize % BURST_SLICE == BURST_SLICE - 1 {
                std::thread::sleep(BURST_PAUSE);
            }
        }
        let t = secs(start);
        r.burst_silent_at_s = Some(t);
        r.burst_expires_at_s = Some(t + args.expiry);
    }
    if args.rate <= 0.0 {
        return r;
    }
    let base = Ipv4Addr::new(127, 128, 0, 1);
    let sends_per_life = ((args.life * CHURN_HZ).ceil() as u32).max(1);
    let mut flying: Vec<Flying> = Vec::new();
    let mut next_join = 0u64;
    let t_first = secs(start);
    while !stop.is_raised() {
        let now = secs(start);
        if now >= plan.t_window_end {
            break;
        }
        // Joins due by now.
        while t_first + next_join as f64 / args.rate <= now {
            let k = next_join;
            next_join += 1;
            match open(bind, base, k, target) {
                Ok(socket) => {
                    flying.push(Flying {
                        socket,
                        callsign: callsign_prefixed(b'C', k as u32),
                        at: spot(k % CHURN_SPOTS),
                        next_send: now,
                        sends_left: sends_per_life,
                    });
                    r.joined += 1;
                }
                Err(_) => r.send_errors += 1,
            }
        }
        // Sends due by now (a scan: at most rate × life pilots fly at once); a
        // pilot's socket closes after its last send.
        for f in flying.iter_mut().filter(|f| f.next_send <= now) {
            dg.set_pilot(&f.callsign, 1, f.at);
            send(&dg, Ok(&f.socket), &mut r);
            f.sends_left -= 1;
            f.next_send += 1.0 / CHURN_HZ;
        }
        flying.retain(|f| f.sends_left > 0);
        let next = flying
            .iter()
            .map(|f| f.next_send)
            .fold(t_first + next_join as f64 / args.rate, f64::min);
        let wait = (next - secs(start)).clamp(0.0005, 0.02);
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::WORLD_AIRPORTS;
    use fgmp::geo::chord_nm;

    #[test]
    fn churn_spots_see_nobody_and_are_seen_by_nobody() {
        // Neighbours on the grid are farther apart than two 1 nm ranges.
        for k in [0u64, 359, 360, 53_999, 12_345] {
            for d in [1u64, 360] {
                if k + d < 54_000 && (d != 1 || (k + 1) % 360 != 0) {
                    assert!(chord_nm(spot(k), spot(k + d)) > 2.0, "{k} and {}", k + d);
                }
            }
        }
        // Every airport pilot (range up to 1000 nm) is out of reach.
        for a in WORLD_AIRPORTS
            .iter()
            .chain([crate::layout::CLUSTER_AIRPORT].iter())
        {
            let p = to_ecef(Geodetic {
                lat_deg: a.lat,
                lon_deg: a.lon,
                alt_m: 0.0,
            });
            for k in (0..54_000).step_by(97) {
                assert!(chord_nm(p, spot(k)) > 1000.0, "{} sees spot {k}", a.icao);
            }
        }
    }

    #[test]
    fn churn_sockets_bind_one_loopback_address_each() {
        let target: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let bind = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let base = Ipv4Addr::new(127, 128, 0, 1);
        let a = open(bind, base, 0, target).unwrap().local_addr().unwrap();
        let b = open(bind, base, 1, target).unwrap().local_addr().unwrap();
        assert_eq!(a.ip(), IpAddr::V4(base));
        assert_eq!(b.ip().to_string(), "127.128.0.2");
        // Eight addresses per /24 (its share is eight sources' worth), then the next.
        let c = open(bind, base, 8, target).unwrap().local_addr().unwrap();
        assert_eq!(c.ip().to_string(), "127.128.1.1");
    }
}
