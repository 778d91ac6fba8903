//! The JSON bodies of lobby's HTTP API (`docs/API.md`), built from the views the
//! engines give out. Pure: times come in as a [`Clock`], nothing here reads the
//! clock or opens a socket; every body is a typed struct that serde writes and
//! utoipa describes (the binary serves the OpenAPI document built from them).

pub mod admin;
pub mod airports;
pub mod atc;
pub mod chat;
pub mod dns;
pub mod export;
pub mod flights;
pub mod health;
pub mod params;
pub mod pilots;
pub mod rate;
pub mod relays;
pub mod servers;
pub mod stream;

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use utoipa::ToSchema;

/// One reading of both clocks, to turn the engines' `Instant`s into Unix times.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// The monotonic time of the reading.
    pub mono: Instant,
    /// The same moment as seconds since the Unix epoch.
    pub unix: Duration,
}

impl Clock {
    /// Seconds since the Unix epoch (UTC) of `t`.
    pub fn unix_secs(&self, t: Instant) -> u64 {
        let wall = if t >= self.mono {
            self.unix + (t - self.mono)
        } else {
            self.unix.saturating_sub(self.mono - t)
        };
        wall.as_secs()
    }

    /// Seconds since the Unix epoch of the moment `ago` before the reading.
    pub fn unix_secs_ago(&self, ago: Duration) -> u64 {
        self.unix.saturating_sub(ago).as_secs()
    }

    /// The reading itself, in Unix seconds.
    pub fn now_secs(&self) -> u64 {
        self.unix.as_secs()
    }
}

/// What every error answer carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What is wrong, for a person.
    pub error: String,
}

impl ErrorBody {
    /// An error body saying `what`.
    pub fn new(what: impl Into<String>) -> ErrorBody {
        ErrorBody { error: what.into() }
    }
}

/// `x` rounded to `decimals` places (to keep the JSON short and stable).
pub(crate) fn round(x: f64, decimals: i32) -> f64 {
    let k = 10f64.powi(decimals);
    let r = (x * k).round() / k;
    if r == 0.0 {
        0.0 // no "-0.0"
    } else {
        r
    }
}
