//! What the store reads, as plain values (pure, so the API's bodies can be built
//! from them without the database drivers).

use crate::flights::Fix;

/// One flight as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightRow {
    /// Id.
    pub id: i64,
    /// Callsign.
    pub callsign: String,
    /// Model.
    pub model: String,
    /// Relay.
    pub relay: String,
    /// Start, Unix seconds.
    pub start: i64,
    /// End, Unix seconds; `None` while flying.
    pub end: Option<i64>,
    /// First position.
    pub first: Option<Fix>,
    /// Last position (set when it ended).
    pub last: Option<Fix>,
    /// Nautical miles flown.
    pub distance_nm: f64,
    /// Highest altitude, feet.
    pub max_alt_ft: Option<f64>,
    /// Positions stored.
    pub samples: i64,
    /// Seconds moving ([`crate::logbook`]); `None` for flights recorded before it.
    pub moving_s: Option<i64>,
    /// Departure airport's ident ([`crate::logbook`]), when known.
    pub departure: Option<String>,
    /// Arrival airport's ident, when known.
    pub arrival: Option<String>,
    /// The aircraft's readable name (`fgmp::aircraft::name`); `None` for flights
    /// recorded before it.
    pub aircraft_name: Option<String>,
    /// The aircraft's class (`fgmp::aircraft::class`), likewise.
    pub aircraft_class: Option<String>,
}

/// A callsign's totals.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallsignTotals {
    /// Flights.
    pub flights: i64,
    /// Hours flown (open flights up to `now`).
    pub hours: f64,
    /// Nautical miles.
    pub distance_nm: f64,
    /// (model, flights, hours), most flown first.
    pub aircraft: Vec<(String, i64, f64)>,
    /// (airport ident, departures, arrivals), most visited first.
    pub airports: Vec<(String, i64, i64)>,
}

/// What a leaderboard ranks callsigns by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rank {
    /// Most hours (start to end; open flights up to now).
    Hours,
    /// Most flights.
    Flights,
}

/// One line of a leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Leader {
    /// Callsign.
    pub callsign: String,
    /// Flights.
    pub flights: i64,
    /// Seconds flown (start to end; open flights up to now).
    pub secs: i64,
    /// Nautical miles.
    pub distance_nm: f64,
}
