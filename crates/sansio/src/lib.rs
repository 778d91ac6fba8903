//! The one interface between lobby's engines (relay, master, simulated server) and
//! whatever moves their bytes, in the shape of quinn-proto: the engine is fed
//! datagrams and the time, writes what it wants sent into an [`Outbox`], and says when
//! it next needs the time ([`Engine::poll_timeout`]). It never touches a socket or a
//! clock.
//!
//! Two drivers exist: the UDP worker in `lobby` (real sockets, real time) and
//! [`net::Network`] (memory, virtual time), which tests use to step several engines
//! against each other deterministically.
//!
//! Beside the interface, the primitives every engine shares: [`source_key`], the
//! per-source shares of [`quota`] and the token bucket of [`rate`].

pub mod net;
mod outbox;
pub mod quota;
pub mod rate;
mod source;

pub use outbox::{Outbox, PayloadId, Transmit};
pub use quota::{Over, SourceQuota};
pub use source::source_key;

use std::net::SocketAddr;
use std::time::Instant;

/// A sans-IO engine served over UDP.
pub trait Engine {
    /// Handles one datagram that arrived from `from` at `now`; queues replies in `out`.
    fn handle(&mut self, datagram: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox);

    /// When [`Engine::handle_timeout`] must next run, if ever.
    fn poll_timeout(&self) -> Option<Instant>;

    /// Runs whatever is due at `now` (expiries, heartbeats, sweeps); queues datagrams
    /// in `out`. Calling it early is harmless.
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox);
}
