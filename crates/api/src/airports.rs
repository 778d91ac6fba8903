//! `GET /api/airports` and `GET /api/airports/{ident}`: the embedded airport table
//! (`crates/airports`, OurAirports, public domain), by area for the map.

use airports::{BBox, Kind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Airports listed when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 500;
/// The most `limit` may ask for.
pub const MAX_LIMIT: usize = 5_000;

/// One airport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Airport {
    /// ICAO code where it has one (`EGLL`), else its local or GPS code (`00AA`).
    pub ident: String,
    /// Its name.
    pub name: String,
    /// `large`, `medium`, `small` or `seaplane`.
    pub kind: String,
    /// Latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
    /// Field elevation, feet; `null` where unknown.
    pub elevation_ft: Option<i32>,
    /// ISO 3166-1 alpha-2 country code.
    pub country: String,
}

impl Airport {
    /// The API form of a table row.
    pub fn of(a: &airports::Airport<'_>) -> Airport {
        Airport {
            ident: a.ident.to_string(),
            name: a.name.to_string(),
            kind: a.kind.as_str().to_string(),
            lat: a.lat,
            lon: a.lon,
            elevation_ft: a.elevation_ft,
            country: a.country.to_string(),
        }
    }
}

/// The body of `GET /api/airports`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AirportsBody {
    /// The airports in the box, large before medium before small, then by ident.
    pub airports: Vec<Airport>,
    /// Whether `limit` left some out (zoom in, or raise `min`, to see them).
    pub truncated: bool,
}

/// The query of `GET /api/airports`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirportsQuery {
    /// The area (default: the world).
    pub bbox: BBox,
    /// The least kind listed (default `small`: every kind; `seaplane` also).
    pub min: Kind,
    /// At most this many.
    pub limit: usize,
}

impl AirportsQuery {
    /// Parses `bbox`, `min` and `limit`; an unknown key or a bad value is an error
    /// naming it.
    pub fn parse(q: &BTreeMap<String, String>) -> Result<AirportsQuery, String> {
        let mut out = AirportsQuery {
            bbox: BBox::WORLD,
            min: Kind::Small,
            limit: DEFAULT_LIMIT,
        };
        for (k, v) in q {
            match k.as_str() {
                "bbox" => out.bbox = BBox::parse(v).map_err(|e| e.to_string())?,
                "min" => {
                    out.min = Kind::parse(v).ok_or_else(|| {
                        format!("min: expected large, medium, small or seaplane, got {v:?}")
                    })?
                }
                "limit" => {
                    out.limit = v
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=MAX_LIMIT).contains(n))
                        .ok_or_else(|| format!("limit: expected 1 to {MAX_LIMIT}, got {v:?}"))?
                }
                other => {
                    return Err(format!(
                        "unknown parameter {other:?} (known: bbox, min, limit)"
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The answer from `table`.
    pub fn answer(&self, table: &airports::Table<'_>) -> AirportsBody {
        let (found, truncated) = table.within(self.bbox, self.min, self.limit);
        AirportsBody {
            airports: found.into_iter().map(Airport::of).collect(),
            truncated,
        }
    }
}
