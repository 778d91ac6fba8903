//! `GET /api/pilots`: every pilot the relay knows, with its attitude and speed.

use crate::{round, Clock};
use fgmp::attitude;
use fgmp::extras::{is_atc, Extras};
use relay::PilotView;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use utoipa::{IntoParams, ToSchema};

/// One pilot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Pilot {
    /// Callsign, as FlightGear sends it.
    pub callsign: String,
    /// Model path, as sent (`Aircraft/c172p/Models/c172p.xml`).
    pub model: String,
    /// The model's file name without `.xml` (`c172p`), as fgms's tracker reports it.
    pub aircraft: String,
    /// The aircraft's readable name (`Cessna 172P Skyhawk`) where lobby's table knows
    /// it, else `aircraft`.
    pub aircraft_name: String,
    /// The map symbol's class, from the model by lobby's written table
    /// (`fgmp::aircraft`): `airliner`, `business_jet`, `single_prop`, `twin_prop`,
    /// `helicopter`, `glider`, `military_jet`, `airship`, `ship`, `atc` or `other`.
    pub class: String,
    /// Geodetic latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
    /// Altitude above the WGS84 ellipsoid, feet.
    pub alt_ft: f64,
    /// True heading, degrees, `0 <= heading < 360`.
    pub heading: f64,
    /// Pitch, degrees, nose up positive.
    pub pitch: f64,
    /// Roll, degrees, right wing down positive.
    pub roll: f64,
    /// Horizontal speed over the ground, knots.
    pub ground_speed_kt: f64,
    /// Whether its client talks to this relay.
    pub local: bool,
    /// For a remote pilot, the relay it was learned from (its label, or the sender's
    /// IP for a whitelisted source); `null` for a local pilot.
    pub relay: Option<String>,
    /// When it joined, Unix seconds.
    pub online_since: u64,
    /// When its last datagram arrived, Unix seconds.
    pub last_seen: u64,
    /// The property protocol its client speaks: 1, or 2 ("MP2017": the pad word
    /// `0x1face002`). Pilots on different versions may see each other's properties as
    /// "nil" or broken models.
    pub protocol: u8,
    /// Whether it is an ATC station by fgms's rule: a callsign ending `_DL`, `_GN`,
    /// `_TW`, `_AP`, `_DE` or `_CT` and the model `OpenRadar` or one containing `ATC`.
    pub atc: bool,
    /// The chat line it sends now (property 10002, repeated in every datagram for about
    /// 10 s), cleaned of control characters, at most 255 characters; `null` if none.
    /// Past lines: `GET /api/chat`.
    pub chat: Option<String>,
    /// Radio transmit frequency, MHz (property 13001, Hz; protocol v2 aircraft that set
    /// it); `null` if not sent.
    pub frequency_mhz: Option<f64>,
    /// The transponder (properties 1500-1503), if any part of it is sent.
    pub transponder: Option<Transponder>,
    /// The livery file (property 1101), if sent and not empty.
    pub livery: Option<String>,
    /// The model variant (property 1100), if sent.
    pub variant: Option<i32>,
    /// Datagrams per second it sent over the last snapshot interval (about 10 for
    /// FlightGear's default); `null` on its first snapshot.
    pub rate_hz: Option<f64>,
    /// The `lag` field of its last datagram, seconds, as its client sends it (1 / its
    /// send rate: 0.1 at 10 Hz).
    pub lag_s: f64,
    /// The `time` field of its last datagram: the client's multiplayer clock, seconds.
    pub sim_time: f64,
    /// How fast `sim_time` advanced against the arrival of its datagrams between the
    /// last two snapshots: 1.0 in real time, 0 paused, above 1 under time
    /// acceleration (which FlightGear's multiplayer interpolation does not follow:
    /// the aircraft jumps on others' screens); `null` on its first snapshot.
    pub clock_rate: Option<f64>,
}

/// A transponder as sent; each part `null` when not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Transponder {
    /// The transmitted code (squawk, e.g. 7000; -9999: off).
    pub code: Option<i32>,
    /// The altitude it reports, feet.
    pub altitude_ft: Option<i32>,
    /// Whether IDENT is pressed.
    pub ident: Option<bool>,
    /// The mode knob (FlightGear's KT76C: 0 off, 1 standby, 2 test, 3 ground, 4 on, 5 alt).
    pub mode: Option<i32>,
}

/// The body of `GET /api/pilots`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PilotsBody {
    /// When the snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// Pilots known (observers excluded), before any filter.
    pub online: usize,
    /// The pilots the filters kept, by `online_since` then callsign.
    pub pilots: Vec<Pilot>,
}

/// The model path's file name without `.xml`.
pub fn aircraft(model: &str) -> &str {
    let base = model.rsplit('/').next().unwrap_or(model);
    base.strip_suffix(".xml").unwrap_or(base)
}

/// The API form of one pilot view.
pub fn pilot(v: &PilotView, clock: &Clock) -> Pilot {
    let class = fgmp::aircraft::class(&v.model).as_str();
    pilot_named(v, clock, fgmp::aircraft::name(&v.model), class)
}

/// [`pilot`], with the aircraft's readable name and class already looked up.
fn pilot_named(v: &PilotView, clock: &Clock, aircraft_name: String, class: &str) -> Pilot {
    let g = fgmp::geo::from_ecef(v.position);
    let a = attitude::attitude(v.position, v.orientation);
    let kt = attitude::ground_speed_kt(v.position, v.orientation, v.velocity);
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let callsign = String::from_utf8_lossy(v.callsign.as_bytes()).into_owned();
    let x = Extras::decode(&v.last_datagram);
    Pilot {
        atc: is_atc(&callsign, &v.model),
        callsign,
        aircraft: aircraft(&v.model).to_string(),
        aircraft_name,
        class: class.to_string(),
        model: v.model.clone(),
        lat: round(finite(g.lat_deg), 6),
        lon: round(finite(g.lon_deg), 6),
        alt_ft: round(finite(g.alt_m * fgmp::geo::FEET_PER_METRE), 1),
        // Rounding 359.96 to one decimal gives 360.0: keep heading below 360.
        heading: round(a.heading_deg, 1) % 360.0,
        pitch: round(a.pitch_deg, 1),
        roll: round(a.roll_deg, 1),
        ground_speed_kt: round(finite(kt), 1),
        local: v.local,
        relay: (!v.local).then(|| v.origin.clone()),
        online_since: clock.unix_secs_ago(v.online_for),
        last_seen: clock.unix_secs_ago(v.silent_for),
        protocol: x.as_ref().map_or(1, |x| x.protocol),
        chat: x.as_ref().and_then(|x| x.chat.clone()),
        frequency_mhz: x
            .as_ref()
            .and_then(|x| x.frequency_hz)
            .map(|hz| round(f64::from(hz) / 1e6, 4)),
        transponder: x.as_ref().and_then(|x| x.transponder).map(|t| Transponder {
            code: t.code,
            altitude_ft: t.altitude_ft,
            ident: t.ident,
            mode: t.mode,
        }),
        livery: x.as_ref().and_then(|x| x.livery.clone()),
        variant: x.as_ref().and_then(|x| x.variant),
        rate_hz: None,
        lag_s: x.as_ref().map_or(0.0, |x| round(finite(x.lag), 3)),
        sim_time: x.as_ref().map_or(0.0, |x| round(finite(x.time), 3)),
        clock_rate: None,
    }
}

/// Every non-observer pilot of `views`, in their order (the engine's: join time).
pub fn pilots(views: &[PilotView], clock: &Clock) -> Vec<Pilot> {
    // Pilots share a few hundred models at most: look each up once (an unknown
    // model walks the whole class table, 1.6 µs).
    let mut looked_up: HashMap<&str, (String, &'static str)> = HashMap::new();
    shown(views)
        .map(|v| {
            let (name, class) = looked_up.entry(v.model.as_str()).or_insert_with(|| {
                (
                    fgmp::aircraft::name(&v.model),
                    fgmp::aircraft::class(&v.model).as_str(),
                )
            });
            pilot_named(v, clock, name.clone(), class)
        })
        .collect()
}

/// The views [`pilots`] shows (observers left out), in the same order.
pub fn shown(views: &[PilotView]) -> impl Iterator<Item = &PilotView> {
    views.iter().filter(|v| !v.callsign.is_observer())
}

/// The query of `GET /api/pilots`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PilotFilter {
    /// Only this callsign (exact).
    #[serde(default)]
    pub callsign: Option<String>,
    /// `lat,lon,nm`: only pilots within nm nautical miles of the point (lat
    /// -90..90, lon -180..180, nm >= 0).
    #[serde(default, deserialize_with = "crate::params::near")]
    #[param(value_type = Option<String>, example = "64.0,-22.6,10")]
    pub near: Option<(f64, f64, f64)>,
}

impl crate::params::Bounds for PilotFilter {}

impl PilotFilter {
    /// Whether `p` passes.
    pub fn keeps(&self, p: &Pilot) -> bool {
        if self.callsign.as_ref().is_some_and(|c| *c != p.callsign) {
            return false;
        }
        if let Some((lat, lon, nm)) = self.near {
            if fgmp::geo::great_circle_nm(lat, lon, p.lat, p.lon) > nm {
                return false;
            }
        }
        true
    }

    /// Whether it keeps everything.
    pub fn is_empty(&self) -> bool {
        self.callsign.is_none() && self.near.is_none()
    }
}

/// What [`Rates`] remembers of a pilot from the last snapshot.
#[derive(Debug, Clone, Copy)]
struct Seen {
    datagrams: u64,
    at: std::time::Instant,
    sim_time: f64,
    /// When its last datagram had arrived.
    arrived: std::time::Instant,
    /// Its clock rate at the last snapshot, kept while no new datagram came to
    /// measure another (a 1 Hz sender between two snapshots a second apart).
    clock_rate: Option<f64>,
}

/// Each pilot's datagram count and clock at the last snapshot, to turn counts into
/// rates ([`Pilot::rate_hz`]) and its clock's advance into [`Pilot::clock_rate`].
/// Holds only the pilots of the last snapshot.
#[derive(Debug, Clone, Default)]
pub struct Rates {
    last: HashMap<String, Seen>,
}

impl Rates {
    /// Sets `rate_hz` and `clock_rate` of each pilot from `views` (same order as
    /// `pilots`, observers skipped as [`pilots`] does) against the last call's, and
    /// keeps these readings for the next call.
    pub fn apply(&mut self, views: &[PilotView], pilots: &mut [Pilot], now: std::time::Instant) {
        let mut next = HashMap::with_capacity(pilots.len());
        for (v, p) in shown(views).zip(pilots.iter_mut()) {
            let mut seen = Seen {
                datagrams: v.datagrams,
                at: now,
                sim_time: p.sim_time,
                arrived: now.checked_sub(v.silent_for).unwrap_or(now),
                clock_rate: None,
            };
            // A count lower than the last is a pilot that left and came back: no rate yet.
            if let Some(last) = self.last.get(&p.callsign) {
                let secs = now.saturating_duration_since(last.at).as_secs_f64();
                if secs >= 0.5 && v.datagrams >= last.datagrams {
                    p.rate_hz = Some(round((v.datagrams - last.datagrams) as f64 / secs, 1));
                }
                let wall = seen
                    .arrived
                    .saturating_duration_since(last.arrived)
                    .as_secs_f64();
                let sim = seen.sim_time - last.sim_time;
                if v.datagrams < last.datagrams {
                    p.clock_rate = None; // it left and came back
                } else if wall >= 0.5 && sim.is_finite() {
                    p.clock_rate = Some(round((sim / wall).clamp(-1000.0, 1000.0), 1));
                } else {
                    // Too little came to measure (a 1 Hz sender between two snapshots
                    // a second apart): the last rate stands, and the next is measured
                    // from the datagram this one would have been.
                    p.clock_rate = last.clock_rate;
                    seen.arrived = last.arrived;
                    seen.sim_time = last.sim_time;
                }
                seen.clock_rate = p.clock_rate;
            }
            next.insert(p.callsign.clone(), seen);
        }
        self.last = next;
    }
}
