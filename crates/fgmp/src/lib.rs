//! FlightGear multiplayer protocol (the wire format FlightGear 2017+ and fgms 0.13 speak).
//!
//! Pure protocol code: bytes in, typed values out, and back. No sockets, no clock.
//! Every layout follows `docs/notes/flightgear-multiplayer.md` (copied from the
//! project's shared notes), which wins over the old wiki text where they differ:
//! MsgLen counts the whole datagram in bytes, the range word carries the requested
//! range in its low 16 bits, callsigns hold at most 7 characters, and so on.

pub mod aircraft;
pub mod attitude;
pub mod error;
pub mod extras;
pub mod geo;
pub mod header;
pub mod message;
pub mod props;

pub use error::Error;
pub use header::{Callsign, Header, Magic, MsgId};
pub use message::{Chat, Message, Position, RoutingInfo};

/// `FGFS`: the magic a FlightGear client puts on every datagram.
pub const MAGIC_CLIENT: u32 = 0x4647_4653;
/// `SFGF`: the magic fgms uses between relays and towards crossfeed targets.
pub const MAGIC_RELAY: u32 = 0x5346_4746;
/// Protocol version 1.1; FlightGear drops anything else.
pub const VERSION: u32 = 0x0001_0001;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 32;
/// Size of the fixed position body (model .. pad) after the header.
pub const POSITION_BODY_LEN: usize = 200;
/// Smallest valid position datagram: header + body, no properties.
pub const POSITION_MIN_LEN: usize = HEADER_LEN + POSITION_BODY_LEN;
/// FlightGear's receive buffer; longer datagrams are truncated and then dropped.
pub const MAX_DATAGRAM: usize = 1200;
/// Pad word value that marks a protocol-v2 ("MP2017") position message.
pub const V2_PAD_MAGIC: u32 = 0x1fac_e002;
/// Size of the chat message: header + `char[256]`.
pub const CHAT_LEN: usize = HEADER_LEN + 256;
/// Metres per nautical mile, as fgms divides ECEF distances.
pub const METRES_PER_NM: f64 = 1852.0;
