//! Who came and went: a bounded log of local pilots' sessions, for the tracker
//! link and the flight log. A session is one callsign flying one model from one
//! address; it ends when the pilot goes silent, is replaced by a new callsign from
//! its address, changes model, or is dropped by a reconfiguration (its address
//! became a relay's). Off unless [`crate::Engine::record_sessions`] turned it on,
//! so a relay without a tracker pays nothing.

use fgmp::Callsign;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// Silent for the player expiry.
    Expired,
    /// Its address sent a new callsign (the simulator's callsign changed).
    Replaced,
    /// It started sending another model.
    ModelChanged,
    /// A reconfiguration removed it.
    Removed,
}

/// One session event of a local pilot.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// A session began.
    Began {
        /// Callsign.
        callsign: Callsign,
        /// Model path as sent.
        model: String,
        /// Source address.
        addr: SocketAddr,
        /// Its first datagram.
        at: Instant,
    },
    /// A session ended.
    Ended {
        /// Callsign.
        callsign: Callsign,
        /// Model path as sent.
        model: String,
        /// Its last datagram.
        at: Instant,
        /// Why it ended.
        why: EndReason,
    },
}

/// The events not yet taken, at most `cap` of them (later ones are counted and
/// dropped, so a reader that stopped cannot make the relay hold more).
#[derive(Debug)]
pub struct SessionLog {
    events: VecDeque<SessionEvent>,
    cap: usize,
    dropped: u64,
}

impl SessionLog {
    /// A log holding at most `cap` events.
    pub fn new(cap: usize) -> SessionLog {
        SessionLog {
            events: VecDeque::new(),
            cap,
            dropped: 0,
        }
    }

    /// Adds one event; false when full (it was dropped).
    pub fn push(&mut self, e: SessionEvent) -> bool {
        if self.events.len() >= self.cap {
            self.dropped += 1;
            return false;
        }
        self.events.push_back(e);
        true
    }

    /// Moves every event into `out`, oldest first.
    pub fn drain_into(&mut self, out: &mut Vec<SessionEvent>) {
        out.extend(self.events.drain(..));
    }

    /// Events dropped because the log was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// A local pilot's position at one moment, for the tracker's POSITION lines and
/// the flight log's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalPosition {
    /// Callsign.
    pub callsign: Callsign,
    /// Model path as sent.
    pub model: String,
    /// ECEF metres.
    pub position: [f64; 3],
    /// Angle-axis orientation as sent.
    pub orientation: [f32; 3],
    /// Linear velocity as sent (body frame, m/s).
    pub velocity: [f32; 3],
    /// Its last datagram.
    pub seen: Instant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_drops_and_counts_the_newest() {
        let mut l = SessionLog::new(2);
        let at = Instant::now();
        let ev = |cs: &str| SessionEvent::Ended {
            callsign: Callsign::new(cs).unwrap(),
            model: "m".into(),
            at,
            why: EndReason::Expired,
        };
        assert!(l.push(ev("A")));
        assert!(l.push(ev("B")));
        assert!(!l.push(ev("C")));
        assert_eq!(l.dropped(), 1);
        let mut out = Vec::new();
        l.drain_into(&mut out);
        assert_eq!(out, vec![ev("A"), ev("B")]);
        assert!(l.push(ev("D")), "room again once taken");
    }
}
