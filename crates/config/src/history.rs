//! `[history]`: the flight log and the servers' history.
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What `[history]` configured.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryOptions {
    /// `sqlite:PATH` or `postgres://...`.
    pub database_url: String,
    /// How long flights and samples are kept.
    pub retention: Duration,
    /// Inputs waiting, at most.
    pub queue: usize,
    /// Reports waiting, at most (a quarter of them one relay's).
    pub queue_reports: usize,
    /// Which sessions become flights, how long a flight lasts.
    pub limits: flightlog::flights::Limits,
    /// Between samples of the master's servers.
    pub server_sample_interval: Duration,
}

/// The `[history]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HistorySection {
    /// `sqlite:PATH` (one file, created on first start) or `postgres://USER@HOST/DB`;
    /// empty: no flight log.
    pub database_url: String,
    /// Days flights and server samples are kept.
    pub retention_days: f64,
    /// Reports waiting to be written, at most (more are dropped and counted; the
    /// relay never waits for the database).
    pub queue: usize,
    /// Seconds between samples of every listed Xash3D server's players.
    pub server_sample_interval: f64,
    /// Reports waiting to be written, at most, whatever the batches (a quarter of
    /// them from one relay: the local one, or one reporting through the tracker).
    pub queue_reports: usize,
    /// A pilot's session becomes a flight only once it lasted this many seconds (a
    /// model or callsign flip-flop never does); 0 records every session.
    pub min_flight_secs: f64,
    /// A flight ends after this many hours; the pilot's next position begins another.
    pub max_flight_hours: f64,
}

impl Default for HistorySection {
    fn default() -> Self {
        HistorySection {
            database_url: String::new(),
            retention_days: 90.0,
            queue: 4096,
            server_sample_interval: 300.0,
            queue_reports: 1_000_000,
            min_flight_secs: 60.0,
            max_flight_hours: 24.0,
        }
    }
}

impl HistorySection {
    /// The writer's settings, checked; `None` when no database is configured.
    pub fn options(&self) -> Result<Option<HistoryOptions>> {
        if self.database_url.is_empty() {
            return Ok(None);
        }
        flightlog::backend::Backend::of(&self.database_url)?;
        if !(self.retention_days.is_finite() && self.retention_days > 0.0) {
            bail!(
                "history.retention_days must be a positive number of days, got {}",
                self.retention_days
            );
        }
        if self.queue == 0 || self.queue_reports == 0 {
            bail!("history.queue and history.queue_reports must be at least 1");
        }
        if !(0.0..=3600.0).contains(&self.min_flight_secs) {
            bail!(
                "history.min_flight_secs must be 0 to 3600 seconds, got {}",
                self.min_flight_secs
            );
        }
        if !(self.max_flight_hours * 3600.0 > self.min_flight_secs
            && self.max_flight_hours <= 24.0 * 30.0)
        {
            bail!(
                "history.max_flight_hours must be longer than min_flight_secs and at most 720, got {}",
                self.max_flight_hours
            );
        }
        Ok(Some(HistoryOptions {
            database_url: self.database_url.clone(),
            retention: Duration::from_secs_f64(self.retention_days * 86_400.0),
            queue: self.queue,
            queue_reports: self.queue_reports,
            limits: flightlog::flights::Limits {
                min_secs: self.min_flight_secs.round() as i64,
                max_secs: (self.max_flight_hours * 3600.0).round() as i64,
                ..flightlog::flights::Limits::default()
            },
            server_sample_interval: crate::seconds(
                self.server_sample_interval,
                "history.server_sample_interval",
                86_400.0,
            )?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_last_between_the_shortest_and_the_longest_configured() {
        let s = |min: f64, max_h: f64| HistorySection {
            database_url: "sqlite:x".into(),
            min_flight_secs: min,
            max_flight_hours: max_h,
            ..HistorySection::default()
        };
        let o = s(60.0, 24.0).options().unwrap().unwrap();
        assert_eq!((o.limits.min_secs, o.limits.max_secs), (60, 86_400));
        assert_eq!(o.queue_reports, 1_000_000);
        assert_eq!(s(0.0, 0.5).options().unwrap().unwrap().limits.min_secs, 0);
        for (min, max_h) in [
            (-1.0, 24.0),
            (f64::NAN, 24.0),
            (3601.0, 24.0),
            (60.0, 0.01),
            (60.0, 1000.0),
        ] {
            let e = s(min, max_h).options().unwrap_err().to_string();
            assert!(e.contains("history."), "{e}");
        }
    }
}
