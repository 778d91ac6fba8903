//! Typed decode errors.

/// Why a packet could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The packet ended before a field did.
    #[error("truncated at byte {offset}: needed {needed}, {available} left")]
    Truncated {
        /// Where the field starts.
        offset: usize,
        /// How many bytes it needs.
        needed: usize,
        /// How many bytes were left.
        available: usize,
    },
    /// The packet does not start with this message's header.
    #[error("wrong header")]
    WrongHeader,
    /// Bytes left over after a message that must end.
    #[error("{0} unexpected trailing bytes")]
    Trailing(usize),
    /// A string without its NUL terminator.
    #[error("unterminated string at byte {0}")]
    Unterminated(usize),
    /// An info string that breaks the `\key\value` rules.
    #[error("invalid info string: {0}")]
    InvalidInfo(&'static str),
    /// A key with a value of the wrong form.
    #[error("invalid value for key {key:?}")]
    InvalidValue {
        /// The key whose value is wrong.
        key: String,
    },
    /// A required key is missing.
    #[error("missing key {0:?}")]
    MissingKey(&'static str),
    /// Text that should be a number, address or token is not.
    #[error("invalid field: {0}")]
    InvalidField(&'static str),
    /// A count or length field that cannot be true for this packet.
    #[error("implausible length or count: {0}")]
    BadLength(&'static str),
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

impl From<wire::Unterminated> for Error {
    fn from(u: wire::Unterminated) -> Self {
        Error::Unterminated(u.offset)
    }
}

/// A missing prefix is this message's header missing (`Cursor::expect`).
impl From<wire::Mismatch> for Error {
    fn from(_: wire::Mismatch) -> Self {
        Error::WrongHeader
    }
}

impl From<wire::Trailing> for Error {
    fn from(t: wire::Trailing) -> Self {
        Error::Trailing(t.count)
    }
}
