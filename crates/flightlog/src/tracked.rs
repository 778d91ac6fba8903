//! What a relay reports through the tracker protocol becomes the same reports the
//! local relay feeds ([`Report`]): CONNECT begins a flight, POSITION samples it,
//! DISCONNECT ends it, each at its own time kept near its arrival
//! ([`tracker::admission::clamp_time`]).

use crate::flights::{Fix, Report};
use tracker::admission::clamp_time;
use tracker::message::Line;

/// The flight log report of one tracker line from relay `relay`, received at `now`
/// (Unix seconds).
pub fn report(line: Line, relay: &str, now: i64) -> Report {
    match line {
        Line::Connect {
            callsign,
            model,
            time,
            ..
        } => Report::Began {
            callsign,
            model,
            relay: relay.to_string(),
            at: clamp_time(time, now),
            source: None,
        },
        Line::Disconnect { callsign, time, .. } => Report::Ended {
            callsign,
            relay: relay.to_string(),
            at: clamp_time(time, now),
        },
        Line::Position {
            callsign,
            lat,
            lon,
            alt_ft,
            heading,
            time,
            ..
        } => Report::Position {
            callsign,
            relay: relay.to_string(),
            at: clamp_time(time, now),
            fix: Fix {
                lat,
                lon,
                alt_ft,
                heading,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(time: i64) -> Line {
        Line::Position {
            callsign: "TEST1".into(),
            passwd: "test".into(),
            lat: 63.9,
            lon: -22.6,
            alt_ft: 1000.0,
            heading: 280.0,
            pitch: 0.0,
            roll: 0.0,
            time,
        }
    }

    #[test]
    fn lines_become_reports_of_the_identified_relay() {
        match report(position(1_796_155_200), "mpserver01", 1_796_155_210) {
            Report::Position {
                callsign,
                relay,
                at,
                fix,
            } => {
                assert_eq!(
                    (callsign.as_str(), relay.as_str(), at),
                    ("TEST1", "mpserver01", 1_796_155_200)
                );
                assert_eq!((fix.lat, fix.heading), (63.9, 280.0));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_line_kind_has_its_time_clamped() {
        let now = 1_796_155_200;
        let at = |r: Report| match r {
            Report::Began { at, .. } | Report::Ended { at, .. } | Report::Position { at, .. } => at,
        };
        let far = now + 86_400;
        assert_eq!(at(report(position(far), "r", now)), now + 60);
        let connect = Line::session(true, "A".into(), "test".into(), "c172p".into(), far);
        assert_eq!(at(report(connect, "r", now)), now + 60);
        let disconnect = Line::session(false, "A".into(), "test".into(), "c172p".into(), 0);
        assert_eq!(at(report(disconnect, "r", now)), now - 6 * 3600);
    }
}
