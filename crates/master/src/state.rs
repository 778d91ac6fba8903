//! What survives a restart: the server table and the ban list, in a serde form the
//! binary writes atomically to the state file.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Format version of the state file.
pub const STATE_VERSION: u32 = 1;

/// The saved state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SavedState {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// Registered servers.
    pub servers: Vec<SavedServer>,
    /// Banned networks, as `ADDR/LEN` (a plain address, as older files have, is read
    /// as its /32 or /64).
    #[serde(with = "nets")]
    pub bans: Vec<IpNet>,
    /// The HTTP-era server list's state (probe.py's `state.json`, with lobby's extra
    /// keys; see the `serverlist` crate), when the master keeps one. Files written
    /// before it existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<serde_json::Value>,
    /// The server list's self-registrations, pending and admitted (with their
    /// contacts: the file is the operator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registrations: Option<serde_json::Value>,
}

mod nets {
    use ipnet::IpNet;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &[IpNet], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|n| n.to_string()))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|t| {
                crate::bans::parse_net(t)
                    .ok_or_else(|| D::Error::custom(format!("not an IP network: {t:?}")))
            })
            .collect()
    }
}

/// One saved server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedServer {
    /// Its address.
    pub addr: SocketAddr,
    /// Seconds left before it expires.
    pub ttl_secs: u64,
    /// Seconds it had been listed when saved (0 in files written before it existed).
    #[serde(default)]
    pub listed_secs: u64,
    /// Protocol.
    pub protocol: u8,
    /// Players.
    pub players: u8,
    /// Max players.
    pub max: u8,
    /// Bots.
    pub bots: u8,
    /// Game directory bytes.
    pub gamedir: Vec<u8>,
    /// Map bytes.
    pub map: Vec<u8>,
    /// `d`, `l`, `p` or `?`.
    pub server_type: char,
    /// `l`, `w`, `m` or `?`.
    pub os: char,
    /// `major.minor[.patch]`.
    pub version: String,
    /// Region.
    pub region: u8,
    /// Filter flag bits.
    pub flags: u8,
}
