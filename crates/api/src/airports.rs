//! `GET /api/airports` and `GET /api/airports/{ident}`: the embedded airport table
//! (`crates/airports`, OurAirports, public domain), by area for the map.

use airports::{BBox, Kind};
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

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
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AirportsQuery {
    /// `west,south,east,north` in degrees (west > east crosses the antimeridian);
    /// default the world.
    #[serde(default = "world", deserialize_with = "bbox")]
    #[param(value_type = Option<String>, example = "-23,63.5,-21.5,64.5")]
    pub bbox: BBox,
    /// The least kind listed: `large`, `medium`, `small` (default: with seaplane
    /// bases) or `seaplane`.
    #[serde(default = "small", deserialize_with = "kind")]
    #[param(value_type = Option<String>, pattern = "^(large|medium|small|seaplane)$")]
    pub min: Kind,
    /// At most this many, large first.
    #[serde(default = "default_limit")]
    #[param(minimum = 1, maximum = 5000, default = 500)]
    pub limit: usize,
}

impl Default for AirportsQuery {
    fn default() -> Self {
        AirportsQuery {
            bbox: BBox::WORLD,
            min: Kind::Small,
            limit: DEFAULT_LIMIT,
        }
    }
}

fn world() -> BBox {
    BBox::WORLD
}

fn small() -> Kind {
    Kind::Small
}

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

fn bbox<'de, D: Deserializer<'de>>(d: D) -> Result<BBox, D::Error> {
    let v = String::deserialize(d)?;
    // `BBox::parse` names the parameter itself; the path names it once already.
    BBox::parse(&v).map_err(|e| D::Error::custom(e.to_string().trim_start_matches("bbox: ")))
}

fn kind<'de, D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
    let v = String::deserialize(d)?;
    Kind::parse(&v).ok_or_else(|| {
        D::Error::custom(format!(
            "expected large, medium, small or seaplane, got {v:?}"
        ))
    })
}

impl crate::params::Bounds for AirportsQuery {
    fn check(&self) -> Result<(), crate::params::ParamError> {
        crate::params::within("limit", self.limit, 1, MAX_LIMIT as i64)
    }
}

impl AirportsQuery {
    /// The answer from `table`.
    pub fn answer(&self, table: &airports::Table<'_>) -> AirportsBody {
        let (found, truncated) = table.within(self.bbox, self.min, self.limit);
        AirportsBody {
            airports: found.into_iter().map(Airport::of).collect(),
            truncated,
        }
    }
}
