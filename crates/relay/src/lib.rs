//! The FlightGear relay engine, a drop-in for fgms 0.13.
//!
//! [`Engine`] is a pure state machine: feed it `(datagram, from, now)` with
//! [`Engine::handle`], it fills an [`Outbox`] with the datagrams to send; call
//! [`Engine::handle_timeout`] when [`Engine::poll_timeout`] says so to expire silent
//! pilots. It never touches a socket or a clock, so tests drive it directly. It
//! implements [`sansio::Engine`], the interface every lobby engine shares.

pub mod config;
pub mod engine;
pub mod expiry;
pub mod feed;
pub mod peers;
pub mod sessions;
pub mod spatial;
pub mod stats;
pub mod telnet;
pub mod thinning;
pub mod tiers;

pub use config::{source_key, Config, RelayPeer};
pub use engine::{Engine, LinkCounters, LinkKind, LinkView, Origin, PilotView};
pub use sansio::{Outbox, Transmit};
pub use sessions::{EndReason, LocalPosition, SessionEvent};
pub use stats::{DropReason, Stats};
pub use tiers::{Tier, Tiers};
