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
}

impl Default for HistorySection {
    fn default() -> Self {
        HistorySection {
            database_url: String::new(),
            retention_days: 90.0,
            queue: 4096,
            server_sample_interval: 300.0,
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
        if self.queue == 0 {
            bail!("history.queue must be at least 1");
        }
        Ok(Some(HistoryOptions {
            database_url: self.database_url.clone(),
            retention: Duration::from_secs_f64(self.retention_days * 86_400.0),
            queue: self.queue,
            server_sample_interval: crate::seconds(
                self.server_sample_interval,
                "history.server_sample_interval",
                86_400.0,
            )?,
        }))
    }
}
