//! `GET /api/pilots/stream`: what changed between two pilot snapshots, compactly.

use crate::pilots::Pilot;
use crate::round;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use utoipa::ToSchema;

/// A moved pilot: `[callsign, lat, lon, alt_ft, heading, ground_speed_kt]`, latitude
/// and longitude to 5 decimals (about 1 m), the others whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moved(pub String, pub f64, pub f64, pub i64, pub i64, pub i64);

impl Moved {
    /// The compact form of `p`.
    pub fn of(p: &Pilot) -> Moved {
        Moved(
            p.callsign.clone(),
            round(p.lat, 5),
            round(p.lon, 5),
            p.alt_ft.round() as i64,
            // 359.6 rounds to 360: keep it below.
            (p.heading.round() as i64) % 360,
            p.ground_speed_kt.round() as i64,
        )
    }

    fn same_place(&self, o: &Moved) -> bool {
        (self.1, self.2, self.3, self.4, self.5) == (o.1, o.2, o.3, o.4, o.5)
    }
}

/// The data of one `update` event: the previous event's state taken to this one's.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct Update {
    /// When the new snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// Pilots known now (observers excluded).
    pub online: usize,
    /// New pilots, and pilots whose model changed (also listed in `left`).
    pub joined: Vec<Pilot>,
    /// `[callsign, lat, lon, alt_ft, heading, ground_speed_kt]` per pilot whose
    /// compact form changed.
    #[schema(value_type = Vec<Vec<serde_json::Value>>)]
    pub moved: Vec<Moved>,
    /// Callsigns that are gone (or whose model changed).
    pub left: Vec<String>,
    /// Pilots (whole) whose protocol, ATC status, frequency, transponder, livery,
    /// variant or chat changed, or whose packet rate moved by 2 Hz and a fifth or
    /// clock rate by half (not the `lag` field alone: `lobby load` stamps a sequence
    /// number there, and any client may vary it at will);
    /// their position is in `moved` if it changed too.
    #[serde(default)]
    pub changed: Vec<Pilot>,
}

impl Update {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.joined.is_empty()
            && self.moved.is_empty()
            && self.left.is_empty()
            && self.changed.is_empty()
    }
}

/// The fields whose change puts a pilot in [`Update::changed`] (the packet rate
/// apart: see [`rate_moved`]).
type Radio = (
    u8,
    bool,
    Option<f64>,
    Option<crate::pilots::Transponder>,
    Option<String>,
    Option<i32>,
    Option<String>,
);

fn radio(p: &Pilot) -> Radio {
    (
        p.protocol,
        p.atc,
        p.frequency_mhz,
        p.transponder,
        p.livery.clone(),
        p.variant,
        p.chat.clone(),
    )
}

/// Whether the packet rate moved enough from the one last sent to send it again:
/// from or to unknown, or by 2 Hz and a fifth of the last. A 10 Hz client counted
/// over one-second snapshots reads 9, 10 or 11 from one second to the next; sending
/// each of those would put every pilot in `changed` every second.
pub fn rate_moved(sent: Option<f64>, now: Option<f64>) -> bool {
    match (sent, now) {
        (Some(a), Some(b)) => (a - b).abs() >= (0.2 * a).max(2.0),
        (a, b) => a.is_some() != b.is_some(),
    }
}

/// Whether the clock rate moved enough from the one last sent to send it again:
/// from or to unknown, or by half (a pause, a time acceleration; not the jitter of
/// arrival times over a second).
pub fn clock_moved(sent: Option<f64>, now: Option<f64>) -> bool {
    match (sent, now) {
        (Some(a), Some(b)) => (a - b).abs() >= 0.5,
        (a, b) => a.is_some() != b.is_some(),
    }
}

/// The packet rate and the clock rate last sent.
type Rates = (Option<f64>, Option<f64>);

/// What a stream remembers of the last snapshot it sent, per callsign: the model,
/// the compact position and the radio fields.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    by_callsign: HashMap<String, (String, Moved, Radio, Rates)>,
}

impl Sent {
    /// The state after sending `pilots` whole.
    pub fn of(pilots: &[Pilot]) -> Sent {
        Sent {
            by_callsign: pilots
                .iter()
                .map(|p| {
                    (
                        p.callsign.clone(),
                        (
                            p.model.clone(),
                            Moved::of(p),
                            radio(p),
                            (p.rate_hz, p.clock_rate),
                        ),
                    )
                })
                .collect(),
        }
    }

    /// The update that takes this state to `pilots`, and the state after it.
    /// `left` is sorted; `joined` and `moved` follow `pilots`' order.
    pub fn diff(&self, pilots: &[Pilot], generated_at: u64) -> (Update, Sent) {
        let mut next = Sent::of(pilots);
        let mut u = Update {
            generated_at,
            online: pilots.len(),
            ..Update::default()
        };
        for p in pilots {
            let Some((model, now, r, rate)) = next.by_callsign.get_mut(&p.callsign) else {
                continue;
            };
            match self.by_callsign.get(&p.callsign) {
                None => u.joined.push(p.clone()),
                Some((m, _, _, _)) if m != model => {
                    u.left.push(p.callsign.clone());
                    u.joined.push(p.clone());
                }
                Some((_, before, r0, rate0)) => {
                    if !before.same_place(now) {
                        u.moved.push(now.clone());
                    }
                    if r0 != r || rate_moved(rate0.0, rate.0) || clock_moved(rate0.1, rate.1) {
                        u.changed.push(p.clone());
                    } else {
                        *rate = *rate0; // what the client holds stays the reference
                    }
                }
            }
        }
        let mut gone: Vec<String> = self
            .by_callsign
            .keys()
            .filter(|c| !next.by_callsign.contains_key(*c))
            .cloned()
            .collect();
        u.left.append(&mut gone);
        u.left.sort();
        (u, next)
    }
}
