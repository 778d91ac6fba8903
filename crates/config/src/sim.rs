//! `[sim]`: a simulated Xash3D fleet registered with the local master (`lobby up`).
use serde::Deserialize;

/// The `[sim]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SimSection {
    /// Simulated servers `lobby up` starts (0 = none).
    pub count: u16,
    /// IP they listen on (ephemeral ports).
    pub listen_ip: String,
    /// Their game directory.
    pub gamedir: String,
    /// Seed for names, maps and players.
    pub seed: u64,
}

impl Default for SimSection {
    fn default() -> Self {
        SimSection {
            count: 0,
            listen_ip: "127.0.0.1".into(),
            gamedir: "valve".into(),
            seed: 1,
        }
    }
}
