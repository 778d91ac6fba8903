//! The fgms tracker protocol, both ends, as pure code.
//!
//! fgms (the FlightGear multiplayer server) reports its pilots over TCP to a tracker
//! (FlightGear's fgtracker): `CONNECT`, `DISCONNECT` and batched `POSITION` lines in
//! NUL-terminated messages, each acknowledged by one `OK`. lobby is a tracker
//! *client* (its relay reports like fgms 0.13.10) and a tracker *server* (relays
//! report to it), so this crate holds:
//!
//! - [`wire`]: the NUL framing, with a bounded reassembly buffer;
//! - [`message`]: the report lines, their encoding as fgms writes them and their
//!   parsing as fgtracker reads them;
//! - [`control`]: the identification line and the control words both ends exchange;
//! - [`client`]: fgms's tracker client (queue, 25-message window, PING, reconnect),
//!   and [`queue`], its queue file's format;
//! - [`server`]: fgtracker's side of one connection (identification, one database
//!   transaction per message, PING schedule), and [`admission`], who may report to
//!   it and how far a report's time is believed.
//!
//! Nothing here touches a socket, a thread or a clock: the state machines take bytes
//! and `now`, hand back bytes to write, and say when they next need the time
//! (`poll_timeout`/`handle_timeout`), like the rest of lobby's engines.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod admission;
pub mod client;
pub mod control;
pub mod message;
pub mod queue;
pub mod server;
pub mod wire;

pub use client::{Client, ClientConfig, ClientStats};
pub use control::Ident;
pub use message::{Line, Parsed};
pub use server::{Event, ServerConfig, ServerConn};
