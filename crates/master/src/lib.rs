//! The Xash3D master server engine.
//!
//! [`Engine`] is a pure state machine: [`Engine::handle`] takes `(packet, from, now)`
//! and appends the datagrams to send; [`Engine::handle_timeout`] expires servers and
//! bookkeeping when [`Engine::poll_timeout`] says so. It holds no socket and reads no
//! clock, so tests drive it directly.
//!
//! What it fixes compared with xash3d-master (see the notes): quotas are exact
//! (IPv4 per address, IPv6 per /64), there is a global cap, requests are rate
//! limited with decay (dpmaster's model), the table and bans can be exported and
//! imported (state file), admin commands are acknowledged and hashes compared in
//! constant time, and encoded list pages are cached until the table changes.

pub mod bans;
pub mod challenge;
pub mod config;
pub mod engine;
pub mod ratelimit;
pub mod state;
pub mod stats;
pub mod table;

pub use config::{AdminUser, Config, ConfigError};
pub use engine::{BanListFull, Engine};
pub use sansio::{Outbox, Transmit};
pub use stats::{Counter, Stats};
