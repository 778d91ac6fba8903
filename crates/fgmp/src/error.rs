//! Typed decode errors: one variant per way a datagram can be malformed.

/// Why a datagram or a part of it could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A field needs more bytes than the buffer holds.
    #[error("truncated at byte {offset}: needed {needed}, {available} left")]
    Truncated {
        /// Where the field starts.
        offset: usize,
        /// How many bytes it needs.
        needed: usize,
        /// How many bytes were left.
        available: usize,
    },
    /// The datagram is shorter than the 32-byte header.
    #[error("runt datagram: {0} bytes, the header alone is 32")]
    Runt(usize),
    /// Neither `FGFS` nor `SFGF`.
    #[error("bad magic 0x{0:08x}")]
    BadMagic(u32),
    /// Not exactly 0x00010001 (fgms checks only the low half; FlightGear checks all of it).
    #[error("bad version 0x{0:08x}")]
    BadVersion(u32),
    /// MsgLen does not equal the datagram size; FlightGear drops such datagrams.
    #[error("MsgLen {msg_len} but the datagram has {actual} bytes")]
    LengthMismatch {
        /// The header's MsgLen.
        msg_len: u32,
        /// The datagram's real size.
        actual: usize,
    },
    /// Over FlightGear's 1200-byte receive buffer.
    #[error("datagram of {0} bytes exceeds the 1200-byte limit")]
    Oversize(usize),
    /// A position message shorter than header + 200-byte body.
    #[error("position message of {0} bytes, at least 232 needed")]
    PositionTooShort(usize),
    /// A chat message shorter than header + 1 byte.
    #[error("chat message of {0} bytes, at least 33 needed")]
    ChatTooShort(usize),
    /// The callsign field is empty (first byte NUL).
    #[error("empty callsign")]
    EmptyCallsign,
    /// A callsign longer than 7 characters or containing a NUL.
    #[error("invalid callsign")]
    BadCallsign,
    /// A model path of 96 bytes or more (it must fit with its NUL).
    #[error("model path too long: {0} bytes, at most 95")]
    ModelTooLong(usize),
    /// A chat text of 256 bytes or more.
    #[error("chat text too long: {0} bytes, at most 255")]
    ChatTooLong(usize),
    /// NaN or infinity in the position, which FlightGear rejects.
    #[error("position is not finite")]
    NonFinitePosition,
    /// Position (0, 0, 0): not settled, never routed.
    #[error("position is all zero")]
    ZeroPosition,
    /// A property item is malformed (see [`crate::props::PropError`]).
    #[error("property: {0}")]
    Property(#[from] crate::props::PropError),
}

impl From<wire::Truncated> for Error {
    fn from(t: wire::Truncated) -> Self {
        Error::Truncated {
            offset: t.offset,
            needed: t.needed,
            available: t.available,
        }
    }
}
