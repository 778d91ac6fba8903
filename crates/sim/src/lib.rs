//! Simulated Xash3D FWGS game servers, for tests and load.
//!
//! [`Server`] is the server half of the Xash3D protocol as the real engine speaks
//! it (FWGS `633203e`; `docs/notes/xash3d-master-and-queries.md` sections 1.1-1.3,
//! 1.6 and 2, and the captures in `testdata/xash3d/`), as a pure state machine:
//!
//! - heartbeats (`q\xff` + random u32) to every master at start, every 300 s (60 s
//!   with NAT) and at once when the first client connects, the server fills up or
//!   it empties; the master's `s\n` challenge is accepted only from that master,
//!   with the echoed value, within 4 s, and answered with the `0\n` info in the
//!   engine's key order;
//! - `ping`/`i`, `info 49` (and `wrong version` for other protocols), A2S_INFO
//!   (never challenged), A2S_PLAYER and A2S_RULES with the engine's stateless 5 s
//!   challenge (long rules replies split in the GoldSrc form);
//! - NAT connect requests from masters;
//! - the connect handshake (`getchallenge`, `bandwidth`, `connect`) with the
//!   engine's reject texts; a connected client holds its slot until it sends
//!   `disconnect` or is silent for 30 s;
//! - `b\n` to every master on shutdown.
//!
//! With [`Protocol::GoldSrc`] (`Config::protocol`) the server is a GoldSrc (48)
//! server instead: A2S_INFO (protocol 48), A2S_PLAYER and A2S_RULES only, no
//! heartbeats, no Xash text queries, no handshake, so `gs` entries can be tested.
//!
//! It reads no clock and owns no socket: the caller passes `now` and sends what it
//! returns. [`fleet::FleetSpec`] generates plausible, varied servers from a seed.

pub mod config;
pub mod fleet;
pub mod server;

pub use config::{Config, ConfigError, Player, Protocol, ProtocolError};
pub use fleet::FleetSpec;
pub use sansio::{Outbox, Transmit};
pub use server::{Occupant, OccupantKind, Server, Stats};
