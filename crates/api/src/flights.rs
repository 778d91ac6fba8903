//! The flight log's bodies: `GET /api/flights`, `/api/flights/{id}` (with its
//! track as GeoJSON), `/api/callsigns/{callsign}`, `/api/servers/{addr}/history`.
//! Built from plain values the binary reads from the store.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Point {
    /// Degrees north.
    pub lat: f64,
    /// Degrees east.
    pub lon: f64,
    /// Feet.
    pub alt_ft: f64,
}

/// One flight: a callsign flying one model on one relay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FlightEntry {
    /// Id, for `/api/flights/{id}` and paging.
    pub id: i64,
    /// Callsign.
    pub callsign: String,
    /// Model as the relay gave it (a path for local pilots, fgms's short name
    /// through the tracker, `unknown` when the start was not seen).
    pub model: String,
    /// The relay it flew on.
    pub relay: String,
    /// Start, Unix seconds.
    pub start: i64,
    /// End, Unix seconds; `null` while flying.
    pub end: Option<i64>,
    /// Seconds from start to end (to `generated_at` while flying).
    pub duration_s: i64,
    /// First position stored.
    pub start_position: Option<Point>,
    /// Last position (when it ended).
    pub end_position: Option<Point>,
    /// Nautical miles flown (between consecutive positions; jumps faster than
    /// 2,000 kt are not counted).
    pub distance_nm: f64,
    /// Highest altitude, feet.
    pub max_alt_ft: Option<f64>,
    /// Positions stored (one every 10 s at most).
    pub samples: i64,
}

/// The body of `GET /api/flights`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FlightsBody {
    /// When it was read, Unix seconds.
    pub generated_at: i64,
    /// The flights, newest first.
    pub flights: Vec<FlightEntry>,
    /// Pass as `before` for the next page; `null` on the last page.
    pub next_before: Option<i64>,
}

/// A GeoJSON LineString geometry: `[lon, lat, altitude in metres]` per position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LineString {
    /// Always `LineString`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Positions, in time order.
    pub coordinates: Vec<[f64; 3]>,
}

/// A GeoJSON Feature holding a flight's track.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TrackFeature {
    /// Always `Feature`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The track.
    pub geometry: LineString,
    /// `times` (Unix seconds) and `headings` (degrees), one per position; `id`,
    /// `callsign`; `positions_stored` (more than the positions here when the track
    /// was downsampled).
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// The body of `GET /api/flights/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FlightBody {
    /// When it was read, Unix seconds.
    pub generated_at: i64,
    /// The flight.
    pub flight: FlightEntry,
    /// Its track, a GeoJSON Feature (RFC 7946).
    pub track: TrackFeature,
}

/// One model a callsign flew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AircraftTotals {
    /// Model.
    pub model: String,
    /// Flights.
    pub flights: i64,
    /// Hours.
    pub hours: f64,
}

/// The body of `GET /api/callsigns/{callsign}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CallsignBody {
    /// When it was read, Unix seconds.
    pub generated_at: i64,
    /// The callsign.
    pub callsign: String,
    /// Flights recorded (within retention).
    pub flights: i64,
    /// Hours flown.
    pub hours: f64,
    /// Nautical miles flown.
    pub distance_nm: f64,
    /// Models flown, most hours first (the first `aircraft=`, 20 by default, 100 at
    /// most).
    pub aircraft: Vec<AircraftTotals>,
    /// The latest flights, newest first (`recent=`, 20 by default, 100 at most).
    pub recent: Vec<FlightEntry>,
}

/// One sample of a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerSamplePoint {
    /// Unix seconds.
    pub time: i64,
    /// Players.
    pub players: i64,
    /// Slots.
    pub max: i64,
    /// Map.
    pub map: String,
}

/// The body of `GET /api/servers/{addr}/history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerHistoryBody {
    /// When it was read, Unix seconds.
    pub generated_at: i64,
    /// `ip:port`.
    pub address: String,
    /// Its name when last known.
    pub name: Option<String>,
    /// First seen listed, Unix seconds.
    pub first_seen: i64,
    /// Last seen listed, Unix seconds.
    pub last_seen: i64,
    /// Samples since `since`, in time order (one every 5 minutes by default): the
    /// newest `limit=` (1,000 by default, 5,000 at most).
    pub samples: Vec<ServerSamplePoint>,
}

/// The GeoJSON Feature of a track: `(time, lat, lon, alt_ft, heading)` per position,
/// downsampled from `stored` positions.
pub fn track_feature(
    id: i64,
    callsign: &str,
    track: &[(i64, f64, f64, f64, f64)],
    stored: i64,
) -> TrackFeature {
    const M_PER_FT: f64 = 0.3048;
    let mut p = BTreeMap::new();
    p.insert("id".into(), id.into());
    p.insert("callsign".into(), callsign.into());
    p.insert("positions_stored".into(), stored.into());
    p.insert(
        "times".into(),
        track.iter().map(|t| t.0).collect::<Vec<_>>().into(),
    );
    p.insert(
        "headings".into(),
        track.iter().map(|t| t.4).collect::<Vec<_>>().into(),
    );
    TrackFeature {
        kind: "Feature".into(),
        geometry: LineString {
            kind: "LineString".into(),
            coordinates: track
                .iter()
                .map(|t| [t.2, t.1, (t.3 * M_PER_FT * 10.0).round() / 10.0])
                .collect(),
        },
        properties: p,
    }
}

/// The query of `GET /api/flights`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlightFilter {
    /// Only this callsign.
    pub callsign: Option<String>,
    /// Ended at or after (or still flying), Unix seconds.
    pub since: Option<i64>,
    /// Started at or before, Unix seconds.
    pub until: Option<i64>,
    /// Page size (1-500, default 50).
    pub limit: i64,
    /// Ids below this (the previous page's `next_before`).
    pub before: Option<i64>,
}

/// Largest page.
pub const MAX_LIMIT: i64 = 500;
/// The latest flights `/api/callsigns/{callsign}` lists by default (`recent=`).
pub const DEFAULT_RECENT: i64 = 20;
/// The most `recent=` may ask for.
pub const MAX_RECENT: i64 = 100;
/// The models `/api/callsigns/{callsign}` lists by default (`aircraft=`; at most
/// the store's `MAX_AIRCRAFT`, 100).
pub const DEFAULT_AIRCRAFT: i64 = 20;
/// Samples `/api/servers/{addr}/history` returns by default (`limit=`, at most the
/// store's `MAX_SERVER_SAMPLES`, 5,000; a day at the default 5-minute interval is 288).
pub const DEFAULT_SERVER_SAMPLES: i64 = 1000;

/// The integer parameters `allowed` names, each `(key, default, least, most)`, read
/// from `q` in that order; an unknown key, a value that is not an integer, or one out
/// of its range is an error naming it.
pub fn int_params(
    q: &BTreeMap<String, String>,
    allowed: &[(&str, i64, i64, i64)],
) -> Result<Vec<i64>, String> {
    let mut out: Vec<i64> = allowed.iter().map(|a| a.1).collect();
    for (k, v) in q {
        let Some(i) = allowed.iter().position(|a| a.0 == k) else {
            let names: Vec<&str> = allowed.iter().map(|a| a.0).collect();
            return Err(format!("unknown parameter {k:?} ({})", names.join(", ")));
        };
        let (_, _, lo, hi) = allowed[i];
        let n = v
            .parse::<i64>()
            .map_err(|_| format!("{k} must be an integer, got {v:?}"))?;
        if !(lo..=hi).contains(&n) {
            return Err(format!("{k} must be {lo} to {hi}, got {n}"));
        }
        out[i] = n;
    }
    Ok(out)
}

impl FlightFilter {
    /// Reads the query parameters; an unknown key or a bad value is an error
    /// naming it.
    pub fn parse(q: &BTreeMap<String, String>) -> Result<FlightFilter, String> {
        let mut f = FlightFilter {
            limit: 50,
            ..FlightFilter::default()
        };
        let int = |k: &str, v: &str| -> Result<i64, String> {
            v.parse::<i64>()
                .map_err(|_| format!("{k} must be an integer, got {v:?}"))
        };
        for (k, v) in q {
            match k.as_str() {
                "callsign" => f.callsign = Some(v.clone()).filter(|s| !s.is_empty()),
                "since" => f.since = Some(int(k, v)?),
                "until" => f.until = Some(int(k, v)?),
                "before" => f.before = Some(int(k, v)?),
                "limit" => {
                    let n = int(k, v)?;
                    if !(1..=MAX_LIMIT).contains(&n) {
                        return Err(format!("limit must be 1 to {MAX_LIMIT}, got {n}"));
                    }
                    f.limit = n;
                }
                other => {
                    return Err(format!(
                        "unknown parameter {other:?} (callsign, since, until, limit, before)"
                    ))
                }
            }
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_are_geojson_line_strings_in_lon_lat_metres() {
        let f = track_feature(
            7,
            "TEST1",
            &[
                (100, 63.9, -22.6, 1000.0, 280.0),
                (110, 64.0, -22.5, 2000.0, 281.0),
            ],
            2,
        );
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["type"], "Feature");
        assert_eq!(v["geometry"]["type"], "LineString");
        assert_eq!(
            v["geometry"]["coordinates"][0],
            serde_json::json!([-22.6, 63.9, 304.8])
        );
        assert_eq!(v["properties"]["times"], serde_json::json!([100, 110]));
        assert_eq!(v["properties"]["callsign"], "TEST1");
    }

    #[test]
    fn flight_filters_name_what_is_wrong() {
        let q = |pairs: &[(&str, &str)]| {
            FlightFilter::parse(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        assert_eq!(q(&[]).unwrap().limit, 50);
        let f = q(&[
            ("callsign", "TEST1"),
            ("since", "10"),
            ("limit", "5"),
            ("before", "9"),
        ])
        .unwrap();
        assert_eq!(
            (f.callsign.as_deref(), f.since, f.limit, f.before),
            (Some("TEST1"), Some(10), 5, Some(9))
        );
        assert!(q(&[("limit", "0")]).unwrap_err().contains("limit"));
        assert!(q(&[("limit", "501")]).unwrap_err().contains("limit"));
        assert!(q(&[("since", "yesterday")]).unwrap_err().contains("since"));
        assert!(q(&[("bogus", "1")]).unwrap_err().contains("bogus"));
    }

    #[test]
    fn integer_parameters_have_defaults_and_ranges() {
        let q = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let allowed = [("recent", 20, 1, 100), ("aircraft", 20, 1, 100)];
        assert_eq!(int_params(&q(&[]), &allowed).unwrap(), [20, 20]);
        assert_eq!(
            int_params(&q(&[("aircraft", "100")]), &allowed).unwrap(),
            [20, 100]
        );
        let e = int_params(&q(&[("recent", "101")]), &allowed).unwrap_err();
        assert_eq!(e, "recent must be 1 to 100, got 101");
        let e = int_params(&q(&[("points", "5")]), &allowed).unwrap_err();
        assert!(
            e.contains("points") && e.contains("recent, aircraft"),
            "{e}"
        );
        assert!(int_params(&q(&[("recent", "x")]), &allowed)
            .unwrap_err()
            .contains("integer"));
    }
}
