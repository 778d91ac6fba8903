//! The query parameters of the HTTP API. Each route's are one serde struct beside its
//! body (`pilots::PilotFilter`, `flights::FlightFilter`, ...), deriving
//! [`utoipa::IntoParams`] so that the OpenAPI document carries their types, defaults
//! and bounds, and read by [`parse`]: a parameter the struct does not document, a value
//! that does not parse or one out of its documented range is a [`ParamError`] naming it.

use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use std::fmt::Display;
use utoipa::IntoParams;

/// Why a query is refused (the API answers it as a `400` with this text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A parameter the path does not take.
    #[error("unknown parameter {name:?} ({})", known_list(.known))]
    Unknown {
        /// The parameter given.
        name: String,
        /// The ones the path takes.
        known: Vec<String>,
    },
    /// A number outside its documented range.
    #[error("{name}: must be {least} to {most}, got {got}")]
    OutOfRange {
        /// The parameter.
        name: &'static str,
        /// The least it may be.
        least: i64,
        /// The most it may be.
        most: i64,
        /// What it was.
        got: String,
    },
    /// A value that does not parse: `name: why`.
    #[error("{0}")]
    Invalid(String),
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "this path takes none".into()
    } else {
        format!("known: {}", known.join(", "))
    }
}

/// The checks serde cannot make: each number within its documented `minimum` and
/// `maximum` (the tests hold the two together).
pub trait Bounds {
    /// `Ok` when every field is within its bounds.
    fn check(&self) -> Result<(), ParamError> {
        Ok(())
    }
}

/// `value` within `least..=most`, or the error naming `name`.
pub fn within<N>(name: &'static str, value: N, least: i64, most: i64) -> Result<(), ParamError>
where
    N: Copy + Display + TryInto<i64>,
{
    match value.try_into() {
        Ok(v) if (least..=most).contains(&v) => Ok(()),
        _ => Err(ParamError::OutOfRange {
            name,
            least,
            most,
            got: value.to_string(),
        }),
    }
}

/// Reads `query` (the URI's query string, without `?`) as `T`: every key must be a
/// parameter `T` documents, each value must parse and be within its bounds.
pub fn parse<T>(query: &str) -> Result<T, ParamError>
where
    T: DeserializeOwned + IntoParams + Bounds,
{
    let known: Vec<String> = T::into_params(|| None)
        .into_iter()
        .map(|p| p.name)
        .collect();
    if let Some((k, _)) =
        form_urlencoded::parse(query.as_bytes()).find(|(k, _)| !known.contains(&k.to_string()))
    {
        return Err(ParamError::Unknown {
            name: k.into_owned(),
            known,
        });
    }
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    let t: T =
        serde_path_to_error::deserialize(de).map_err(|e| ParamError::Invalid(e.to_string()))?;
    t.check()?;
    Ok(t)
}

/// The query of a path that takes no parameter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NoParams {}

impl Bounds for NoParams {}

/// A `0`/`1` (or `false`/`true`) parameter.
pub fn bool01<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let v = String::deserialize(d)?;
    match v.as_str() {
        "1" | "true" => Ok(Some(true)),
        "0" | "false" => Ok(Some(false)),
        _ => Err(D::Error::custom(format!("expected 0 or 1, got {v:?}"))),
    }
}

/// A text parameter where empty means not given.
pub fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Some(String::deserialize(d)?).filter(|s| !s.is_empty()))
}

/// `near=lat,lon,nm`: a point (-90..90, -180..180) and a distance (nm >= 0).
pub fn near<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(f64, f64, f64)>, D::Error> {
    let v = String::deserialize(d)?;
    let nums: Option<Vec<f64>> = v
        .split(',')
        .map(|p| p.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match nums.as_deref() {
        Some(&[lat, lon, nm])
            if (-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon) && nm >= 0.0 =>
        {
            Ok(Some((lat, lon, nm)))
        }
        _ => Err(D::Error::custom(format!(
            "expected lat,lon,nm (-90..90, -180..180, nm >= 0), got {v:?}"
        ))),
    }
}
