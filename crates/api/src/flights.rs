//! The flight log's bodies: `GET /api/flights`, `/api/flights/{id}` (with its
//! track as GeoJSON), `/api/callsigns/{callsign}`, `/api/leaderboards`,
//! `/api/servers/{addr}/history`. Built from plain values the binary reads from
//! the store. The exports (GPX, KML, CSV) are [`crate::export`].

use crate::params::{within, Bounds, ParamError};
use flightlog::rows::{CallsignTotals, FlightRow, Leader as LeaderRow};
use flightlog::Fix;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RankBy {
    /// Hours flown.
    #[default]
    Hours,
    /// Flights.
    Flights,
}

/// The flights a leaderboard counts, by when they started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
pub enum Period {
    /// The last 7 days.
    #[default]
    #[serde(rename = "7d")]
    Week,
    /// The last 30 days.
    #[serde(rename = "30d")]
    Month,
    /// Every flight within the log's retention.
    #[serde(rename = "all")]
    All,
}

impl Period {
    /// Its length, seconds back from now; `None`: all time.
    pub fn secs(self) -> Option<i64> {
        match self {
            Period::Week => Some(7 * 86_400),
            Period::Month => Some(30 * 86_400),
            Period::All => None,
        }
    }

    /// Its name (`7d`, `30d`, `all`).
    pub fn name(self) -> &'static str {
        match self {
            Period::Week => "7d",
            Period::Month => "30d",
            Period::All => "all",
        }
    }
}

/// The query of `GET /api/leaderboards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    /// `7d` (default), `30d` or `all`: the flights that started in the last 7 or 30
    /// days, or every flight within retention.
    #[serde(default)]
    #[param(inline)]
    pub period: Period,
    /// `hours` (default) or `flights`: what the callsigns are ranked by.
    #[serde(default)]
    #[param(inline)]
    pub by: RankBy,
    /// Callsigns listed.
    #[serde(default = "max_leaders")]
    #[param(minimum = 1, maximum = 100, default = 100)]
    pub limit: i64,
}

/// The most callsigns a leaderboard lists (also its default).
pub const MAX_LEADERS: i64 = 100;

fn max_leaders() -> i64 {
    MAX_LEADERS
}

impl Default for LeaderboardQuery {
    fn default() -> Self {
        LeaderboardQuery {
            period: Period::Week,
            by: RankBy::Hours,
            limit: MAX_LEADERS,
        }
    }
}

impl Bounds for LeaderboardQuery {
    fn check(&self) -> Result<(), ParamError> {
        within("limit", self.limit, 1, MAX_LEADERS)
    }
}

impl LeaderboardQuery {
    /// The start of its period at `now`; `None` for all time.
    pub fn since(&self, now: i64) -> Option<i64> {
        self.period.secs().map(|p| now - p)
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
        period: q.period.name().to_string(),
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FlightFilter {
    /// Only this callsign (exact).
    #[serde(default, deserialize_with = "crate::params::non_empty")]
    pub callsign: Option<String>,
    /// Only flights that ended at or after this (Unix seconds), or are flying.
    #[serde(default)]
    pub since: Option<i64>,
    /// Only flights that started at or before this (Unix seconds).
    #[serde(default)]
    pub until: Option<i64>,
    /// Page size.
    #[serde(default = "default_page")]
    #[param(minimum = 1, maximum = 500, default = 50)]
    pub limit: i64,
    /// The previous page's `next_before`: ids below it.
    #[serde(default)]
    pub before: Option<i64>,
}

impl Default for FlightFilter {
    fn default() -> Self {
        FlightFilter {
            callsign: None,
            since: None,
            until: None,
            limit: DEFAULT_LIMIT,
            before: None,
        }
    }
}

impl Bounds for FlightFilter {
    fn check(&self) -> Result<(), ParamError> {
        within("limit", self.limit, 1, MAX_LIMIT)
    }
}

/// The page `GET /api/flights` answers when `limit` is not given.
pub const DEFAULT_LIMIT: i64 = 50;
/// Largest page.
pub const MAX_LIMIT: i64 = 500;
/// The latest flights `/api/callsigns/{callsign}` lists by default (`recent=`).
pub const DEFAULT_RECENT: i64 = 20;
/// The most `recent=` may ask for.
pub const MAX_RECENT: i64 = 100;
/// The models `/api/callsigns/{callsign}` lists by default (`aircraft=`).
pub const DEFAULT_AIRCRAFT: i64 = 20;
/// The most `aircraft=` may ask for (the store's `MAX_AIRCRAFT`).
pub const MAX_AIRCRAFT: i64 = 100;
/// The airports `/api/callsigns/{callsign}` lists by default (`airports=`).
pub const DEFAULT_AIRPORTS: i64 = 20;
/// The most `airports=` may ask for (the store's `MAX_AIRPORTS`).
pub const MAX_AIRPORTS: i64 = 100;
/// Positions in a track at most, and by default (the store's `MAX_TRACK_POINTS`).
pub const MAX_POINTS: i64 = 2000;
/// Samples `/api/servers/{addr}/history` returns by default (`limit=`; a day at the
/// default 5-minute interval is 288).
pub const DEFAULT_SERVER_SAMPLES: i64 = 1000;
/// The most samples `limit=` may ask for (the store's `MAX_SERVER_SAMPLES`).
pub const MAX_SERVER_SAMPLES: i64 = 5000;

fn default_page() -> i64 {
    DEFAULT_LIMIT
}

/// The path of `GET /api/flights/{id}` and its downloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct FlightPath {
    /// The flight's id.
    pub id: i64,
}

/// The query of `GET /api/flights/{id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TrackQuery {
    /// Positions in the track at most: a longer track is downsampled evenly, its
    /// first and last positions kept.
    #[serde(default = "max_points")]
    #[param(minimum = 2, maximum = 2000, default = 2000)]
    pub points: i64,
}

fn max_points() -> i64 {
    MAX_POINTS
}

impl Bounds for TrackQuery {
    fn check(&self) -> Result<(), ParamError> {
        within("points", self.points, 2, MAX_POINTS)
    }
}

/// The query of `GET /api/callsigns/{callsign}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CallsignQuery {
    /// Latest flights listed.
    #[serde(default = "default_recent")]
    #[param(minimum = 1, maximum = 100, default = 20)]
    pub recent: i64,
    /// Models listed (most hours first).
    #[serde(default = "default_aircraft")]
    #[param(minimum = 1, maximum = 100, default = 20)]
    pub aircraft: i64,
    /// Airports listed (most departures and arrivals first).
    #[serde(default = "default_airports")]
    #[param(minimum = 1, maximum = 100, default = 20)]
    pub airports: i64,
}

fn default_recent() -> i64 {
    DEFAULT_RECENT
}

fn default_aircraft() -> i64 {
    DEFAULT_AIRCRAFT
}

fn default_airports() -> i64 {
    DEFAULT_AIRPORTS
}

impl Bounds for CallsignQuery {
    fn check(&self) -> Result<(), ParamError> {
        within("recent", self.recent, 1, MAX_RECENT)?;
        within("aircraft", self.aircraft, 1, MAX_AIRCRAFT)?;
        within("airports", self.airports, 1, MAX_AIRPORTS)
    }
}

/// The query of `GET /api/servers/{addr}/history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ServerHistoryQuery {
    /// Samples from this time on (Unix seconds; default: the last 24 hours).
    #[serde(default)]
    pub since: Option<i64>,
    /// Samples at most, the newest.
    #[serde(default = "default_samples")]
    #[param(minimum = 1, maximum = 5000, default = 1000)]
    pub limit: i64,
}

fn default_samples() -> i64 {
    DEFAULT_SERVER_SAMPLES
}

impl Bounds for ServerHistoryQuery {
    fn check(&self) -> Result<(), ParamError> {
        within("limit", self.limit, 1, MAX_SERVER_SAMPLES)
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
    fn leaderboard_periods_are_named_and_measured() {
        let d = LeaderboardQuery::default();
        assert_eq!(
            (d.period.secs(), d.period.name(), d.by, d.limit),
            (Some(604_800), "7d", RankBy::Hours, 100)
        );
        assert_eq!(Period::Month.secs(), Some(2_592_000));
        assert_eq!((Period::All.secs(), Period::All.name()), (None, "all"));
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
        let q = LeaderboardQuery::default();
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
}
