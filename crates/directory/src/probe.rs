//! The relay health probe, as fgms's own health checks do it: one 32-byte PING
//! (MsgId 9) carrying our callsign, which a relay echoes as a PONG (MsgId 10).
//!
//! Only the datagrams live here; the socket and the clock are the caller's (one
//! async function in lobby serves both the DNS prober and `lobby fg servers --probe`).

use crate::Error;
use fgmp::{Callsign, Header, Message, MsgId};

/// The callsign the directory's health checks send.
pub const DIRECTORY_CALLSIGN: &str = "lobbyhc";
/// The callsign `lobby fg servers --probe` sends.
pub const CLIENT_CALLSIGN: &str = "probe";

/// One PING and the recogniser of its PONG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    callsign: Callsign,
    datagram: Vec<u8>,
}

impl Ping {
    /// The PING of `callsign` (at most 7 characters, as every fgmp callsign).
    pub fn new(callsign: &str) -> Result<Ping, Error> {
        let callsign = Callsign::new(callsign)?;
        let datagram = fgmp::message::to_bytes(&Message::ping(callsign))?;
        Ok(Ping { callsign, datagram })
    }

    /// The datagram to send.
    pub fn datagram(&self) -> &[u8] {
        &self.datagram
    }

    /// Whether `reply` is the PONG of this PING: a FlightGear header with MsgId 10
    /// and our callsign. Anything else (other traffic, someone else's pong, runts)
    /// is not, and the caller keeps waiting.
    pub fn is_pong(&self, reply: &[u8]) -> bool {
        Header::decode(reply).is_ok_and(|h| h.msg_id == MsgId::Pong && h.callsign == self.callsign)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_echo_is_our_pong() {
        let ping = Ping::new(DIRECTORY_CALLSIGN).unwrap();
        assert_eq!(ping.datagram().len(), fgmp::HEADER_LEN);
        let mut echo = ping.datagram().to_vec();
        assert!(!ping.is_pong(&echo), "the ping itself is not a pong");
        fgmp::message::ping_to_pong(&mut echo);
        assert!(ping.is_pong(&echo));
        // The relay's engine answers the same way.
        let other = Ping::new(CLIENT_CALLSIGN).unwrap();
        assert!(!other.is_pong(&echo), "someone else's pong");
        assert!(!ping.is_pong(&echo[..31]), "runt");
    }

    #[test]
    fn bad_callsigns_are_errors() {
        assert!(matches!(Ping::new("eightchr"), Err(Error::Ping(_))));
        assert!(matches!(Ping::new(""), Err(Error::Ping(_))));
    }
}
