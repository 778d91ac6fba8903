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

/// Why a state file's text cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not the JSON of a state (starting empty would silently lose the list the
    /// file was kept for).
    #[error("is corrupt (move it aside to start with an empty list): {0}")]
    Corrupt(#[from] serde_json::Error),
    /// Written by a lobby of another format.
    #[error("has version {0}, this lobby reads version {STATE_VERSION}")]
    Version(u32),
    /// JSON, but neither a master's state nor a server list's `state.json`.
    #[error("is neither a lobby master state (with `version`) nor a server list state.json (gamedir → address → times): {0}")]
    Shape(String),
}

/// What a state file held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateOrigin {
    /// A master's own state file.
    Master,
    /// A server list's `state.json` (probe.py's, or `lobby master probe`'s): read as
    /// the list's state with no server table and no bans.
    ListState,
}

impl SavedState {
    /// The state a state file's text holds, checked for its version.
    pub fn from_json(text: &str) -> Result<SavedState, StateError> {
        Self::read(text).map(|(s, _)| s)
    }

    /// [`SavedState::from_json`], and where the state came from: a server list's
    /// `state.json` (FWGS/server-list's probe.py writes one; an object of gamedirs,
    /// each an object of addresses, and `samples`) is read as the list's state, so an
    /// operator moving a list from probe.py keeps every server's last answer.
    pub fn read(text: &str) -> Result<(SavedState, StateOrigin), StateError> {
        let v: serde_json::Value = serde_json::from_str(text)?;
        let is_master = v.get("version").is_some_and(serde_json::Value::is_number);
        if !is_master {
            if let Some(root) = v.as_object() {
                let bad = root
                    .iter()
                    .find(|(g, addrs)| *g != "samples" && !addrs.is_object());
                if let Some((k, _)) = bad {
                    return Err(StateError::Shape(format!("key {k:?} is not an object")));
                }
                let list = SavedState {
                    version: STATE_VERSION,
                    list: Some(v),
                    ..SavedState::default()
                };
                return Ok((list, StateOrigin::ListState));
            }
            return Err(StateError::Shape("not a JSON object".into()));
        }
        let s: SavedState = serde_json::from_value(v)?;
        if s.version != STATE_VERSION {
            return Err(StateError::Version(s.version));
        }
        Ok((s, StateOrigin::Master))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_read_back_and_bad_texts_say_why() {
        let s = SavedState {
            version: STATE_VERSION,
            bans: vec!["192.0.2.0/24".parse().unwrap()],
            ..SavedState::default()
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(SavedState::from_json(&text).unwrap(), s);
        let e = SavedState::from_json("{not json").unwrap_err();
        assert!(matches!(e, StateError::Corrupt(_)), "{e}");
        assert!(e.to_string().contains("corrupt"), "{e}");
        let old = text.replacen("\"version\":1", "\"version\":7", 1);
        let e = SavedState::from_json(&old).unwrap_err();
        assert!(matches!(e, StateError::Version(7)), "{e}");
        assert_eq!(e.to_string(), "has version 7, this lobby reads version 1");
        let e = SavedState::from_json("[1]").unwrap_err();
        assert!(matches!(e, StateError::Shape(_)), "{e}");
        let e = SavedState::from_json("{\"valve\": 3}").unwrap_err();
        assert!(e.to_string().contains("\"valve\""), "{e}");
    }

    #[test]
    fn probe_py_state_json_is_read_as_the_list_state() {
        // FWGS/server-list's probe.py writes this (json.dump, indent 2, sorted keys).
        let probe_py = r#"{
  "samples": {"valve": [[1796360000, 3]]},
  "valve": {
    "192.0.2.1:27015": {
      "last_attempt": "2026-12-04T05:00:00+00:00",
      "last_ping_ms": 0.203,
      "last_seen": "2026-12-04T05:00:00+00:00"
    }
  }
}"#;
        let (s, origin) = SavedState::read(probe_py).unwrap();
        assert_eq!(origin, StateOrigin::ListState);
        assert_eq!(
            (s.version, s.servers.len(), s.bans.len()),
            (STATE_VERSION, 0, 0)
        );
        let list = s.list.unwrap();
        assert_eq!(list["valve"]["192.0.2.1:27015"]["last_ping_ms"], 0.203);
        // probe.py's state for no server at all, as its workflow seeds it.
        assert_eq!(SavedState::read("{}").unwrap().1, StateOrigin::ListState);
    }
}
