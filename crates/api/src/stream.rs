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
    /// Pilots (whole) whose protocol, ATC status, frequency, transponder, livery or
    /// variant changed; their position is in `moved` if it changed too.
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

/// The fields whose change puts a pilot in [`Update::changed`].
type Radio = (
    u8,
    bool,
    Option<f64>,
    Option<crate::pilots::Transponder>,
    Option<String>,
    Option<i32>,
);

fn radio(p: &Pilot) -> Radio {
    (
        p.protocol,
        p.atc,
        p.frequency_mhz,
        p.transponder,
        p.livery.clone(),
        p.variant,
    )
}

/// What a stream remembers of the last snapshot it sent, per callsign: the model,
/// the compact position and the radio fields.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    by_callsign: HashMap<String, (String, Moved, Radio)>,
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
                        (p.model.clone(), Moved::of(p), radio(p)),
                    )
                })
                .collect(),
        }
    }

    /// The update that takes this state to `pilots`, and the state after it.
    /// `left` is sorted; `joined` and `moved` follow `pilots`' order.
    pub fn diff(&self, pilots: &[Pilot], generated_at: u64) -> (Update, Sent) {
        let next = Sent::of(pilots);
        let mut u = Update {
            generated_at,
            online: pilots.len(),
            ..Update::default()
        };
        for p in pilots {
            let Some((model, now, r)) = next.by_callsign.get(&p.callsign) else {
                continue;
            };
            match self.by_callsign.get(&p.callsign) {
                None => u.joined.push(p.clone()),
                Some((m, _, _)) if m != model => {
                    u.left.push(p.callsign.clone());
                    u.joined.push(p.clone());
                }
                Some((_, before, r0)) => {
                    if !before.same_place(now) {
                        u.moved.push(now.clone());
                    }
                    if r0 != r {
                        u.changed.push(p.clone());
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
