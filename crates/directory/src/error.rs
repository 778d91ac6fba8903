//! Why the directory's model could not be built, or a record not produced.

use crate::mpserver::TxtError;

/// Every way the directory's configuration or records can be wrong. The messages
/// name the offending value, so an operator can find it in the configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A DNS name that hickory does not accept (or that does not fit under the zone).
    #[error("{what}: invalid DNS name {name:?}: {reason}")]
    InvalidName {
        /// Which setting: `zone`, `ns`, `hostmaster`, `relay host`.
        what: &'static str,
        /// The text as configured.
        name: String,
        /// hickory's explanation.
        reason: String,
    },
    /// A relay's TXT record cannot be built (too long, most often).
    #[error("relay {host}: {source}")]
    Txt {
        /// The relay's host as configured.
        host: String,
        /// Why.
        source: TxtError,
    },
    /// A scenery URL that cannot be carried in a NAPTR regexp (empty, `!`, whitespace).
    #[error("invalid scenery URL {0:?}")]
    SceneryUrl(String),
    /// A scenery URL that is not http(s).
    #[error("scenery URL {0:?} must start with http:// or https://")]
    SceneryScheme(String),
    /// A NAPTR service other than letters, digits and `+`.
    #[error("invalid scenery service {0:?}")]
    SceneryService(String),
    /// No NAPTR record has flags `U` and the service asked for.
    #[error("no NAPTR record with flags \"U\" and service {service:?}")]
    NoNaptr {
        /// The service asked for.
        service: String,
    },
    /// Every matching record of the lowest order has a regexp SimGear cannot use.
    #[error("every {service:?} record of the lowest order ({order}) has an unsupported regexp")]
    UnsupportedRegexps {
        /// The service asked for.
        service: String,
        /// The lowest order among the matching records.
        order: u16,
    },
    /// The probe's PING cannot be encoded (a callsign fgmp refuses).
    #[error("probe PING: {0}")]
    Ping(#[from] fgmp::Error),
}
