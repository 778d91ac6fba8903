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
                "bbox" => out.bbox = BBox::parse(v)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_box_around_london_lists_its_four_large_airports_first() {
        let query = AirportsQuery::parse(&q(&[
            ("bbox", "-1,51,0.5,52"),
            ("min", "large"),
            ("limit", "10"),
        ]))
        .unwrap();
        let body = query.answer(airports::table());
        let idents: Vec<&str> = body.airports.iter().map(|a| a.ident.as_str()).collect();
        // Luton, Gatwick, Heathrow and Stansted; City and the small fields are not large.
        assert_eq!(idents, ["EGGW", "EGKK", "EGLL", "EGSS"]);
        assert!(body.airports.iter().all(|a| a.kind == "large"));
        assert!(!body.truncated);
        let all = AirportsQuery::parse(&q(&[("bbox", "-1,51,0.5,52"), ("limit", "5")]))
            .unwrap()
            .answer(airports::table());
        assert!(all.truncated, "hundreds of small fields around London");
        assert_eq!(all.airports.len(), 5);
        assert_eq!(all.airports[0].kind, "large");
    }

    #[test]
    fn bad_queries_name_the_parameter() {
        for (k, v, want) in [
            ("bbox", "1,2,3", "bbox:"),
            ("min", "huge", "min:"),
            ("limit", "0", "limit:"),
            ("limit", "5001", "limit:"),
            ("zoom", "3", "unknown parameter \"zoom\""),
        ] {
            let e = AirportsQuery::parse(&q(&[(k, v)])).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
