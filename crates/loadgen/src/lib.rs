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
mod limits;
pub mod master;
mod packet;
mod procstat;
pub mod reflector;

pub use histogram::Histogram;
pub use layout::Layout;

/// Locks, ignoring poison: a thread that panicked while holding one of these tables
/// (members, outstanding scans) leaves it consistent, and the run goes on.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
