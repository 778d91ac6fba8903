//! `[tracker]`: the tracker server relays report to.
use crate::{listen_addr, net};
use anyhow::{bail, Context, Result};

use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

pub use tracker::admission::AllowedRelay;

/// One relay allowed to report to the tracker server.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrackerRelay {
    /// The name its flights are recorded under (sent back as `IDENTIFIED <name>`).
    pub name: String,
    /// IP or CIDR it connects from.
    pub address: String,
    /// A secret it must send (a lobby relay's `tracker_secret`); empty: none, as
    /// fgms cannot send one.
    #[serde(default)]
    pub secret: String,
}

/// The `[tracker]` table.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TrackerSection {
    /// TCP addresses to accept relays' tracker connections on; empty: none.
    pub listen: Vec<String>,
    /// The relays allowed to report (`[[tracker.relay]]` with `name` and `address`);
    /// any other source is refused and logged.
    pub relay: Vec<TrackerRelay>,
    /// Seconds one write to a relay may take (its `OK`s, `PING`s): a relay that
    /// stops reading is closed after it, its place freed; none: 30.
    pub write_timeout: Option<f64>,
}

/// What the tracker server runs with: who may report, and how long a write may take.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackerServerOptions {
    /// The relays allowed to report ([`TrackerSection::allowed`]).
    pub allowed: Vec<AllowedRelay>,
    /// One write to a relay, at most (`[tracker] write_timeout`).
    pub write_timeout: Duration,
}

impl TrackerSection {
    /// The allowed relays and the write timeout, checked.
    pub fn server_options(&self) -> Result<TrackerServerOptions> {
        Ok(TrackerServerOptions {
            allowed: self.allowed()?,
            write_timeout: crate::seconds(
                self.write_timeout.unwrap_or(30.0),
                "tracker.write_timeout",
                3600.0,
            )?,
        })
    }

    /// The listen addresses.
    pub fn listen_addrs(&self) -> Result<Vec<SocketAddr>> {
        self.listen.iter().map(|s| listen_addr(s)).collect()
    }

    /// The allowed relays, checked.
    pub fn allowed(&self) -> Result<Vec<AllowedRelay>> {
        self.relay
            .iter()
            .map(|r| {
                if r.name.is_empty() || r.name.contains(char::is_whitespace) {
                    bail!("tracker.relay name {:?} must be one word", r.name);
                }
                if r.secret
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
                {
                    bail!(
                        "tracker.relay {:?}: the secret must be one word of printable characters",
                        r.name
                    );
                }
                Ok(AllowedRelay {
                    name: r.name.clone(),
                    net: net(&r.address).with_context(|| format!("tracker.relay {:?}", r.name))?,
                    secret: (!r.secret.is_empty()).then(|| r.secret.clone()),
                })
            })
            .collect()
    }
}
