//! The fgms tracker protocol, both ends: the server FlightGear relays report to
//! ([`server`]) and the relay's own report link ([`client`]).

pub mod client;
pub mod server;
