//! Xash3D FWGS (protocol 49) and GoldSrc connectionless messages.
//!
//! Pure protocol code: every message is a type with `decode(&[u8])` and
//! `encode(&mut Vec<u8>)`; no sockets, no clock. Byte layouts follow
//! `docs/notes/xash3d-master-and-queries.md`, which records what the real engine
//! and the reference master put on the wire (and wins over the old protocol doc).
//!
//! Integers are little-endian unless a field says otherwise (ports in server-list
//! records are big-endian).

pub mod a2s;
pub mod admin;
pub mod error;
pub mod filter;
pub mod handshake;
pub mod info;
pub mod master;
pub mod split;
pub mod text;

pub use error::Error;
pub use info::InfoString;

/// The out-of-band prefix `FF FF FF FF` of connectionless packets.
pub const OOB: [u8; 4] = [0xff; 4];
/// Xash3D FWGS network protocol version.
pub const PROTOCOL_VERSION: u8 = 49;
/// The engine version string servers and clients report.
pub const ENGINE_VERSION: &str = "0.21";

/// Strips the `FF FF FF FF` prefix, if present.
pub fn strip_oob(packet: &[u8]) -> Option<&[u8]> {
    packet.strip_prefix(&OOB[..])
}
