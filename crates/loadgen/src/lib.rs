//! Load generators that measure whole servers, and the bare UDP ceilings they are
//! compared with. The `lobby load` commands are thin wrappers around this crate.
//!
//! * [`fg`]: simulated FlightGear pilots against a relay (delivery, latency, CPU).
//! * [`master`]: simulated Xash3D servers registered with a master, then scans.
//! * [`reflector`]: a bare UDP fan-out server, the ceiling a relay is compared with.
//! * [`echo`]: a bare UDP echo answering with N datagrams, the ceiling for a master.
//!
//! The crate installs no signal handlers and prints no `listening` lines: the caller
//! owns the process. [`fg::run`] takes a [`udp::Wake`] that ends the run early (it
//! still reports); [`master::run`] is bounded in count and time and runs to its end;
//! the servers ([`reflector::Reflector`], [`echo::Echo`]) start, report their bound
//! address and serve until [`reflector::Reflector::shutdown`] / [`echo::Echo::shutdown`].

pub mod echo;
pub mod fg;
pub mod fly;
mod histogram;
mod layout;
pub mod master;
mod packet;
mod procstat;
pub mod reflector;

pub use histogram::Histogram;
pub use layout::Layout;

/// Addresses a relay or master counts in one IPv4 /24 at most (its /24 holds 8
/// sources' worth: `sansio::quota`).
const ADDRESSES_PER_24: u32 = 8;

/// The `k`-th loopback source address from `base`: [`ADDRESSES_PER_24`] consecutive
/// addresses, then the next /24, so simulated clients never fill a /24's share.
/// `k` wraps so the addresses stay within `base`'s /9.
pub(crate) fn spread_v4(base: std::net::Ipv4Addr, k: u64) -> std::net::Ipv4Addr {
    let k = (k % (1 << 18)) as u32;
    let per = ADDRESSES_PER_24;
    std::net::Ipv4Addr::from(u32::from(base) + (k / per) * 256 + k % per)
}

/// Locks, ignoring poison: a thread that panicked while holding one of these tables
/// (members, outstanding scans) leaves it consistent, and the run goes on.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
