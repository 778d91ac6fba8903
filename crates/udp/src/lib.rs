//! The only socket layer in lobby (the role quinn-udp plays for quinn): everything
//! that touches a UDP socket below the level of "datagram in, datagram out".
//!
//! - [`options`]: binding with the options every lobby socket uses (SO_REUSEPORT,
//!   IPV6_V6ONLY, the PMTU probe, buffer sizes), the TCP listeners too (IPv6-only on
//!   their IPv6 side), kernel timestamps, and real-time priority for worker threads.
//! - [`recv`]: [`RecvBatch`], batched receive with `recvmmsg(2)`, source addresses,
//!   truncation and kernel receive timestamps, and waiting for the earlier of the next
//!   datagrams, a deadline and a [`Wake`], blocked in the receive itself (one system
//!   call per batch, busy or idle).
//! - [`send`]: one `sendmmsg(2)` path for "many datagrams" ([`SendBatch`]) and "one
//!   datagram to many destinations" ([`Destinations`]).
//! - [`wake`]: [`Wake`], raised once to wake every thread waiting on a socket it
//!   watches (a read shutdown of the socket), so a stop never waits for a read timeout.
//!
//! - [`limit`]: [`ConnLimiter`], the cap on open connections per source and in
//!   total that every TCP listener uses.
//! - [`file`]: [`atomic_write`], how every state file is replaced.
//! - [`time`]: the wall clock (kernel timestamps, Unix seconds).
//!
//! Linux only (the servers' deployment target); where the batched calls are missing
//! the code falls back to one `recvfrom`/`sendto` per datagram.

pub mod addr;
pub mod file;
pub mod limit;
pub mod options;
pub mod recv;
pub mod send;
pub mod time;
pub mod wake;

pub use file::atomic_write;
pub use limit::{raise_nofile, ConnLimiter, Place, Refusal, Slot, Waiting};
pub use options::{bind, bind_tcp, enable_timestamps, set_realtime_priority, BindOptions};
pub use recv::{Ready, RecvBatch, SLOT_SIZE};
pub use send::{Destinations, SendBatch};
pub use wake::Wake;
