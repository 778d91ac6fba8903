//! The flight log's bodies: `GET /api/flights`, `/api/flights/{id}` (with its
//! track as GeoJSON), `/api/callsigns/{callsign}`, `/api/leaderboards`,
//! `/api/servers/{addr}/history`. Built from plain values the binary reads from
//! the store. The exports (GPX, KML, CSV) are [`crate::export`].

use flightlog::rows::{CallsignTotals, FlightRow, Leader as LeaderRow};
use flightlog::Fix;
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
    /// The aircraft's readable name (`Cessna 172P Skyhawk`; the model's file name
    /// when the table has none).
    pub aircraft_name: String,
    /// The aircraft's class (`single_prop`, `airliner`, ..., `other`: the classes
    /// of `/api/pilots`).
    pub aircraft_class: String,
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
    /// Seconds the aircraft moved: the intervals between consecutive positions
    /// (every 10 s) whose average ground speed was above 5 kt (docs/API.md); `null`
    /// for flights recorded before lobby kept it.
    pub moving_s: Option<i64>,
    /// The departure airport's ident (`EGLL`): the airport within 5 km of the first
    /// position when that position was slow (under 40 kt) and low (within 500 ft of
    /// the field elevation); `null` for a flight that began in the air, or unknown.
    pub departure: Option<String>,
    /// The arrival airport's ident, by the same rule at the last position; `null`
    /// while flying, for a flight that ended in the air, or unknown.
    pub arrival: Option<String>,
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
    /// Its readable name.
    pub aircraft_name: String,
    /// Its class.
    pub aircraft_class: String,
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
    /// Airports departed from or arrived at, most visits (departures and arrivals)
    /// first (the first `airports=`, 20 by default, 100 at most).
    pub airports: Vec<AirportTotals>,
    /// The latest flights, newest first (`recent=`, 20 by default, 100 at most).
    pub recent: Vec<FlightEntry>,
}

/// One airport a callsign departed from or arrived at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AirportTotals {
    /// The airport's ident (`/api/airports/{ident}`).
    pub ident: String,
    /// Its name, from the airport table (`null` if the table no longer has it).
    pub name: Option<String>,
    /// Flights that departed from it.
    pub departures: i64,
    /// Flights that arrived at it.
    pub arrivals: i64,
}

impl AirportTotals {
    /// The totals of `ident`, named from the embedded airport table.
    pub fn new(ident: String, departures: i64, arrivals: i64) -> AirportTotals {
        AirportTotals {
            name: airports::table().get(&ident).map(|a| a.name.to_string()),
            ident,
            departures,
            arrivals,
        }
    }
}

/// One callsign of a leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Leader {
    /// 1 for the first.
    pub rank: i64,
    /// Callsign.
    pub callsign: String,
    /// Flights that started in the period.
    pub flights: i64,
    /// Their hours, start to end (open flights up to `generated_at`), 2 decimals.
    pub hours: f64,
    /// Their nautical miles, 1 decimal.
    pub distance_nm: f64,
}

/// The body of `GET /api/leaderboards`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LeaderboardBody {
    /// When it was read, Unix seconds.
    pub generated_at: i64,
    /// `7d`, `30d` or `all`.
    pub period: String,
    /// `hours` or `flights`: what the callsigns are ranked by (ties: the other, then
    /// the callsign).
    pub by: String,
    /// The flights counted started at or after this (Unix seconds); `null` for `all`
    /// (every flight within the log's retention).
    pub since: Option<i64>,
    /// The callsigns, first first: at most `limit`.
    pub leaders: Vec<Leader>,
}

/// What a leaderboard ranks by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankBy {
    /// Hours flown.
    Hours,
    /// Flights.
    Flights,
}

/// The query of `GET /api/leaderboards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderboardQuery {
    /// The period, seconds back from now; `None`: all time.
    pub period_s: Option<i64>,
    /// Its name (`7d`, `30d`, `all`).
    pub period: &'static str,
    /// What to rank by.
    pub by: RankBy,
    /// Callsigns at most (1-100, default 100).
    pub limit: i64,
}

/// The most callsigns a leaderboard lists (also its default).
pub const MAX_LEADERS: i64 = 100;

impl LeaderboardQuery {
    /// Reads `period` (`7d`, `30d`, `all`; default `7d`), `by` (`hours`, `flights`;
    /// default `hours`) and `limit` (1-100, default 100); anything else, or a bad
    /// value, is an error naming it.
    pub fn parse(q: &BTreeMap<String, String>) -> Result<LeaderboardQuery, String> {
        let mut out = LeaderboardQuery {
            period_s: Some(7 * 86_400),
            period: "7d",
            by: RankBy::Hours,
            limit: MAX_LEADERS,
        };
        for (k, v) in q {
            match k.as_str() {
                "period" => {
                    (out.period_s, out.period) = match v.as_str() {
                        "7d" => (Some(7 * 86_400), "7d"),
                        "30d" => (Some(30 * 86_400), "30d"),
                        "all" => (None, "all"),
                        _ => return Err(format!("period must be 7d, 30d or all, got {v:?}")),
                    }
                }
                "by" => {
                    out.by = match v.as_str() {
                        "hours" => RankBy::Hours,
                        "flights" => RankBy::Flights,
                        _ => return Err(format!("by must be hours or flights, got {v:?}")),
                    }
                }
                "limit" => {
                    out.limit = int_params(
                        &BTreeMap::from([(k.clone(), v.clone())]),
                        &[("limit", MAX_LEADERS, 1, MAX_LEADERS)],
                    )?[0]
                }
                other => return Err(format!("unknown parameter {other:?} (period, by, limit)")),
            }
        }
        Ok(out)
    }

    /// The start of its period at `now`; `None` for all time.
    pub fn since(&self, now: i64) -> Option<i64> {
        self.period_s.map(|p| now - p)
    }

    /// What the store ranks by.
    pub fn rank(&self) -> flightlog::rows::Rank {
        match self.by {
            RankBy::Hours => flightlog::rows::Rank::Hours,
            RankBy::Flights => flightlog::rows::Rank::Flights,
        }
    }

    /// The name of what it ranks by.
    pub fn by_name(&self) -> &'static str {
        match self.by {
            RankBy::Hours => "hours",
            RankBy::Flights => "flights",
        }
    }
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

fn point(f: Fix) -> Point {
    Point {
        lat: f.lat,
        lon: f.lon,
        alt_ft: f.alt_ft,
    }
}

/// The entry of a stored flight, read at `now` (an open flight lasts until then);
/// the aircraft's name and class from its model when the row has none (a flight
/// recorded before lobby kept them).
pub fn entry(f: FlightRow, now: i64) -> FlightEntry {
    FlightEntry {
        id: f.id,
        duration_s: f.end.unwrap_or(now).max(f.start) - f.start,
        aircraft_name: f
            .aircraft_name
            .unwrap_or_else(|| fgmp::aircraft::name(&f.model)),
        aircraft_class: f
            .aircraft_class
            .unwrap_or_else(|| fgmp::aircraft::class(&f.model).as_str().to_string()),
        callsign: f.callsign,
        model: f.model,
        relay: f.relay,
        start: f.start,
        end: f.end,
        start_position: f.first.map(point),
        end_position: f.last.map(point),
        distance_nm: f.distance_nm,
        max_alt_ft: f.max_alt_ft,
        samples: f.samples,
        moving_s: f.moving_s,
        departure: f.departure,
        arrival: f.arrival,
    }
}

/// The body of `GET /api/callsigns/{callsign}`: its totals and latest flights.
pub fn callsign_body(
    callsign: String,
    t: CallsignTotals,
    recent: Vec<FlightRow>,
    now: i64,
) -> CallsignBody {
    CallsignBody {
        generated_at: now,
        callsign,
        flights: t.flights,
        hours: t.hours,
        distance_nm: t.distance_nm,
        aircraft: t
            .aircraft
            .into_iter()
            .map(|(model, flights, hours)| AircraftTotals {
                aircraft_name: fgmp::aircraft::name(&model),
                aircraft_class: fgmp::aircraft::class(&model).as_str().to_string(),
                model,
                flights,
                hours,
            })
            .collect(),
        airports: t
            .airports
            .into_iter()
            .map(|(ident, d, a)| AirportTotals::new(ident, d, a))
            .collect(),
        recent: recent.into_iter().map(|f| entry(f, now)).collect(),
    }
}

/// The body of `GET /api/leaderboards` for `q`, read at `now`.
pub fn leaderboard_body(q: &LeaderboardQuery, rows: Vec<LeaderRow>, now: i64) -> LeaderboardBody {
    LeaderboardBody {
        generated_at: now,
        period: q.period.to_string(),
        by: q.by_name().to_string(),
        since: q.since(now),
        leaders: rows
            .into_iter()
            .enumerate()
            .map(|(i, l)| Leader {
                rank: i as i64 + 1,
                callsign: l.callsign,
                flights: l.flights,
                hours: crate::round(l.secs as f64 / 3600.0, 2),
                distance_nm: crate::round(l.distance_nm, 1),
            })
            .collect(),
    }
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
/// The airports `/api/callsigns/{callsign}` lists by default (`airports=`; at most
/// the store's `MAX_AIRPORTS`, 100).
pub const DEFAULT_AIRPORTS: i64 = 20;
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
            if names.is_empty() {
                return Err(format!("unknown parameter {k:?} (this path takes none)"));
            }
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
    fn leaderboard_queries_have_defaults_and_name_what_is_wrong() {
        let q = |pairs: &[(&str, &str)]| {
            LeaderboardQuery::parse(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let d = q(&[]).unwrap();
        assert_eq!(
            (d.period_s, d.period, d.by, d.limit),
            (Some(604_800), "7d", RankBy::Hours, 100)
        );
        let a = q(&[("period", "all"), ("by", "flights"), ("limit", "3")]).unwrap();
        assert_eq!(
            (a.period_s, a.period, a.by_name(), a.limit),
            (None, "all", "flights", 3)
        );
        assert_eq!(q(&[("period", "30d")]).unwrap().period_s, Some(2_592_000));
        for (k, v) in [
            ("period", "1y"),
            ("by", "miles"),
            ("limit", "0"),
            ("limit", "101"),
            ("limit", "x"),
            ("sort", "1"),
        ] {
            let e = q(&[(k, v)]).unwrap_err();
            assert!(e.contains(k), "{k}={v}: {e}");
        }
    }

    fn row(model: &str) -> FlightRow {
        FlightRow {
            id: 9,
            callsign: "TEST1".into(),
            model: model.into(),
            relay: "edge".into(),
            start: 1000,
            end: None,
            first: None,
            last: None,
            distance_nm: 1.0,
            max_alt_ft: None,
            samples: 1,
            moving_s: None,
            departure: Some("EGLL".into()),
            arrival: None,
            aircraft_name: None,
            aircraft_class: None,
        }
    }

    #[test]
    fn entries_name_their_aircraft_even_from_rows_written_before_and_leaders_rank() {
        let e = entry(row("Aircraft/c172p/Models/c172p.xml"), 1600);
        assert_eq!(
            (
                e.aircraft_name.as_str(),
                e.aircraft_class.as_str(),
                e.duration_s
            ),
            ("Cessna 172P Skyhawk", "single_prop", 600)
        );
        let stored = FlightRow {
            aircraft_name: Some("Kept".into()),
            aircraft_class: Some("glider".into()),
            ..row("c172p")
        };
        let e = entry(stored, 1600);
        assert_eq!(
            (e.aircraft_name.as_str(), e.aircraft_class.as_str()),
            ("Kept", "glider")
        );
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            (
                v["departure"].as_str(),
                v["arrival"].is_null(),
                v["moving_s"].is_null()
            ),
            (Some("EGLL"), true, true)
        );
        let q = LeaderboardQuery::parse(&BTreeMap::new()).unwrap();
        let rows = ["A", "B"].map(|c| LeaderRow {
            callsign: c.into(),
            flights: 2,
            secs: 5400,
            distance_nm: 12.34,
        });
        let b = leaderboard_body(&q, rows.to_vec(), 1_000_000);
        assert_eq!(
            (b.since, b.period.as_str(), b.by.as_str()),
            (Some(395_200), "7d", "hours")
        );
        assert_eq!(
            b.leaders
                .iter()
                .map(|l| (l.rank, l.hours, l.distance_nm))
                .collect::<Vec<_>>(),
            [(1, 1.5, 12.3), (2, 1.5, 12.3)]
        );
    }

    #[test]
    fn airport_totals_are_named_from_the_table() {
        let a = AirportTotals::new("EGLL".into(), 2, 1);
        assert_eq!(a.name.as_deref(), Some("London Heathrow Airport"));
        assert_eq!(AirportTotals::new("ZZZZ9".into(), 0, 1).name, None);
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
        let e = int_params(&q(&[("points", "5")]), &[]).unwrap_err();
        assert_eq!(e, "unknown parameter \"points\" (this path takes none)");
        assert!(int_params(&q(&[("recent", "x")]), &allowed)
            .unwrap_err()
            .contains("integer"));
    }
}
