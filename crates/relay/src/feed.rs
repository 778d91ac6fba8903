//! What the relay's local pilots did, as the recorders take it (the tracker link,
//! the flight log): sessions that began or ended and every local pilot's fix, with
//! wall-clock times and geodetic positions computed once for all of them. Pure: the
//! binary's feed task takes the engine's events and positions and the clocks.

use crate::{LocalPosition, SessionEvent};
use std::time::Instant;

/// A session began or ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// True: began; false: ended.
    pub began: bool,
    /// Callsign.
    pub callsign: String,
    /// Model path as sent.
    pub model: String,
    /// When, Unix seconds.
    pub at: i64,
    /// Its source (an IPv4 address or IPv6 /64) when it began.
    pub source: Option<String>,
}

/// Where a local pilot is.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotFix {
    /// Callsign.
    pub callsign: String,
    /// Model path as sent.
    pub model: String,
    /// Degrees north.
    pub lat: f64,
    /// Degrees east.
    pub lon: f64,
    /// Feet.
    pub alt_ft: f64,
    /// Degrees true.
    pub heading: f64,
    /// Degrees, nose up.
    pub pitch: f64,
    /// Degrees, right wing down.
    pub roll: f64,
    /// Its last datagram, Unix seconds.
    pub at: i64,
}

/// One take.
#[derive(Debug, Default, PartialEq)]
pub struct Batch {
    /// Sessions that began or ended, oldest first.
    pub sessions: Vec<Session>,
    /// Every local pilot's position, on the 10 s takes.
    pub positions: Option<Vec<PilotFix>>,
}

/// Unix seconds of `at`, given the wall clock and the monotonic clock read together.
pub fn unix_at(at: Instant, now: Instant, unix_now: f64) -> i64 {
    let ago = now.saturating_duration_since(at).as_secs_f64();
    (unix_now - ago).floor() as i64
}

/// The session of one engine event.
pub fn session(e: &SessionEvent, now: Instant, unix: f64) -> Session {
    match e {
        SessionEvent::Began {
            callsign,
            model,
            at,
            addr,
        } => Session {
            began: true,
            callsign: callsign.to_string(),
            model: model.clone(),
            at: unix_at(*at, now, unix),
            source: Some(sansio::source_key(addr.ip()).to_string()),
        },
        SessionEvent::Ended {
            callsign,
            model,
            at,
            ..
        } => Session {
            began: false,
            callsign: callsign.to_string(),
            model: model.clone(),
            at: unix_at(*at, now, unix),
            source: None,
        },
    }
}

/// The fix of one local pilot: geodetic position, and heading/pitch/roll from its
/// own orientation (fgms used the previous position's frame: a bug not copied).
pub fn fix(p: &LocalPosition, now: Instant, unix: f64) -> PilotFix {
    let g = fgmp::geo::from_ecef(p.position);
    let a = fgmp::attitude::attitude(p.position, p.orientation);
    PilotFix {
        callsign: p.callsign.to_string(),
        model: p.model.clone(),
        lat: g.lat_deg,
        lon: g.lon_deg,
        alt_ft: g.alt_m * fgmp::geo::FEET_PER_METRE,
        heading: a.heading_deg,
        pitch: a.pitch_deg,
        roll: a.roll_deg,
        at: unix_at(p.seen, now, unix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn instants_become_unix_seconds_against_the_clocks_read_together() {
        let now = Instant::now();
        let unix = 1_796_155_200.75;
        assert_eq!(unix_at(now, now, unix), 1_796_155_200);
        let ten_ago = now.checked_sub(Duration::from_millis(10_500)).unwrap();
        assert_eq!(unix_at(ten_ago, now, unix), 1_796_155_190);
        // A time after `now` (taken before the clocks were read) is `now`.
        assert_eq!(
            unix_at(now + Duration::from_secs(5), now, unix),
            1_796_155_200
        );
    }
}
