//! The directory: which FlightGear relays and scenery servers exist and whether they
//! are alive, and the pure record logic every publisher and client shares.
//!
//! - [`model`]: the [`Directory`] itself, built from a typed [`Config`]: relays with
//!   their health, scenery servers, and the records derived from them. The DNS
//!   server, the push and the HTTP listener read it; nothing else derives records.
//! - [`probe`]: the fgms PING a relay's health is measured with, and its PONG.
//! - [`push`]: the RFC 2136 UPDATE for an operator's primary, its TSIG, what the
//!   answer means, and the retry/refresh schedule.
//! - [`stats`]: the directory's counters (probes, pushes, resolution, AXFR, TCP).
//! - [`tcp`]: DNS over TCP as bytes: the length prefix, FORMERR, queries per connection.
//! - [`Error`]: every way a configuration or a record can be wrong.
//! - [`mpserver`]: the `flightgear-mpserver=` TXT attribute (base64 of a JSON object of
//!   strings), encoded within the 255-byte limit and decoded with SimGear's tolerance.
//! - [`terrasync`]: NAPTR regexp validation and SimGear's server selection
//!   (flag `U`, service, lowest order, lowest preference, uniform pick).
//! - [`health`]: the up/down state machine of a probed relay.
//! - [`mpservers_xml`]: the launcher's `mpservers.xml`.
//! - [`zone`]: the DNS records (SOA, NS, SRV, TXT, A/AAAA, NAPTR) for a zone.

pub mod error;
pub mod health;
#[cfg(feature = "dns")]
pub mod model;
pub mod mpserver;
pub mod mpservers_xml;
pub mod probe;
#[cfg(feature = "dns")]
pub mod push;
pub mod stats;
pub mod tcp;
pub mod terrasync;
#[cfg(feature = "dns")]
pub mod zone;

pub use error::Error;
#[cfg(feature = "dns")]
pub use model::{Config, Directory, RelayConfig, TrackedRelay, Transition, ZoneConfig, ZoneUpdate};
#[cfg(feature = "dns")]
pub use zone::Scenery;
