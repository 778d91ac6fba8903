//! `GET /api/servers`: the master's live Xash3D servers.

use crate::Clock;
use master::table::Listed;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use xash::filter::flags;
use xash::master::{Os, ServerType};

/// One listed server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ServerEntry {
    /// `ip:port`, IPv6 bracketed.
    pub address: String,
    /// The server's host name, from its own info reply (the master protocol carries
    /// none): colour codes and control characters removed, at most 64 characters.
    /// `null` until the server has answered (servers behind NAT are not asked).
    pub name: Option<String>,
    /// Game directory (`valve`, `cstrike`, ...).
    pub gamedir: String,
    /// Map.
    pub map: String,
    /// Players, bots not counted.
    pub players: u8,
    /// Maximum players.
    pub max: u8,
    /// Bots.
    pub bots: u8,
    /// Whether joining needs a password (the heartbeat's `password` key read the way
    /// FWGS sends it since 2025-10: `0` when a password is set).
    pub password: bool,
    /// Dedicated server (not a listen server or a proxy).
    pub dedicated: bool,
    /// `linux`, `windows`, `macos` or `unknown`.
    pub os: String,
    /// Behind NAT (clients reach it through the master's NAT announce).
    pub nat: bool,
    /// Engine version, `major.minor[.patch]`.
    pub version: String,
    /// Protocol.
    pub protocol: u8,
    /// Region code (255: the world).
    pub region: u8,
    /// When the master first listed it, Unix seconds.
    pub registered_since: u64,
    /// When its last heartbeat was accepted, Unix seconds (for a server known only
    /// from the curated sources: its last answer to the master's probe).
    pub last_heartbeat: u64,
    /// Where the list knows it from, one or more of `heartbeat` (UDP heartbeats),
    /// `curated` (the operator's sources) and `registered` (self-registration).
    #[serde(default)]
    pub sources: Vec<String>,
    /// The master's round trip to it at its last probe, ms; `null` when the master
    /// does not probe it (heartbeats prove it alive).
    #[serde(default)]
    pub ping_ms: Option<u32>,
}

/// The body of `GET /api/servers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ServersBody {
    /// When the snapshot was taken, Unix seconds.
    pub generated_at: u64,
    /// Servers listed, before any filter.
    pub total: usize,
    /// The servers the filters kept, by address.
    pub servers: Vec<ServerEntry>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The API form of one table entry.
pub fn entry(l: &Listed<'_>, clock: &Clock) -> ServerEntry {
    let s = l.server;
    ServerEntry {
        address: l.addr.to_string(),
        name: None,
        gamedir: text(&s.gamedir),
        map: text(&s.map),
        players: s.players,
        max: s.max,
        bots: s.bots,
        // The engine sends the `password` key inverted since 2025-10 ("0" when a
        // password is set; testdata notes): the listed flag is the key as sent.
        password: s.flags & flags::PASSWORD == 0,
        dedicated: s.server_type == ServerType::Dedicated,
        os: match s.os {
            Os::Linux => "linux",
            Os::Windows => "windows",
            Os::Mac => "macos",
            Os::Unknown => "unknown",
        }
        .to_string(),
        nat: s.nat(),
        version: s.version.to_string(),
        protocol: s.protocol,
        region: s.region,
        registered_since: clock.unix_secs(l.since),
        last_heartbeat: clock.unix_secs(l.heartbeat),
        sources: vec!["heartbeat".into()],
        ping_ms: None,
    }
}

/// The body of `POST /api/servers/register`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// The server, `IP:PORT` (IPv6 as `[ADDR]:PORT`); a host name is refused.
    pub address: String,
    /// Its game directory (`valve`, `cstrike`, ...).
    pub gamedir: String,
    /// Who to reach about it (kept for the operator, never published).
    pub contact: String,
}

/// The answer to a registration: what the server must show, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RegisterBody {
    /// The token: put it in the server's host name, or in a rule (`sv_contact`, or a
    /// `lobby_token` cvar), until the server is admitted.
    pub token: String,
    /// The server, as read.
    pub address: String,
    /// Its game directory.
    pub gamedir: String,
    /// The token is valid until then, Unix seconds.
    pub expires_at: i64,
    /// How often the master checks, seconds.
    pub check_every: i64,
}

/// A player in a server's details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DetailsPlayer {
    /// Name, colour codes removed.
    pub name: String,
    /// Score.
    pub frags: i32,
    /// Seconds connected (-1 for bots on Xash).
    pub seconds: f32,
}

/// `GET /api/servers/{addr}/details`: a listed server asked now by the master (its
/// answer cached 10 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerDetails {
    /// `ip:port`.
    pub address: String,
    /// When it was asked, Unix seconds.
    pub queried_at: i64,
    /// Round trip of its info answer, ms; `null` when it did not answer.
    pub ping_ms: Option<u32>,
    /// Protocol of its answer (49 Xash3D, 48 GoldSrc).
    pub protocol: Option<u32>,
    /// The reply's dialect: `xash49`, `xash48`, `source`, `gold_src`.
    pub dialect: Option<String>,
    /// Its players (A2S_PLAYER), `null` when it sent none.
    pub players: Option<Vec<DetailsPlayer>>,
    /// Why `players` is `null`.
    pub players_note: Option<String>,
    /// Its rules (A2S_RULES) as `[name, value]` pairs, `null` when it sent none.
    pub rules: Option<Vec<(String, String)>>,
    /// Why `rules` is `null`.
    pub rules_note: Option<String>,
}

/// One gamedir's heat map cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GamedirHeat {
    /// The gamedir.
    pub gamedir: String,
    /// Median concurrent players by UTC hour, 00 to 23 (`null`: no sample).
    pub hours: Vec<Option<f64>>,
    /// Median concurrent players by UTC weekday, Monday first.
    pub weekdays: Vec<Option<f64>>,
}

/// `GET /api/list/heatmaps`: the server list's players samples as heat maps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeatmapsBody {
    /// When they were computed, Unix seconds.
    pub generated_at: i64,
    /// Days of samples the hour map covers (14).
    pub hour_days: u32,
    /// Weeks of samples the weekday map covers (6).
    pub weekday_weeks: u32,
    /// One entry per gamedir with samples.
    pub gamedirs: Vec<GamedirHeat>,
}

/// What the master's probe learnt of a server it does not hear heartbeats from (a
/// curated one): the fields [`probed`] needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// `ip:port`.
    pub address: String,
    /// The list's gamedir.
    pub gamedir: String,
    /// Its host name, colour codes removed.
    pub name: String,
    /// Map.
    pub map: String,
    /// Players, maximum, bots.
    pub players: u32,
    /// Maximum players.
    pub max: u32,
    /// Bots.
    pub bots: u32,
    /// Password protected.
    pub password: bool,
    /// Version string.
    pub version: String,
    /// Protocol it answered with.
    pub protocol: u32,
    /// When it answered, Unix seconds.
    pub at: u64,
    /// When it first answered, Unix seconds.
    pub first_seen: u64,
    /// The round trip, ms.
    pub ping_ms: u32,
    /// Its sources' names.
    pub sources: Vec<String>,
}

/// The API form of a probed server: what the probe cannot learn is the documented
/// default (`os` unknown, not behind NAT, dedicated, region 255; listed since its
/// first answer, its last answer as its last heartbeat).
pub fn probed(p: Probed) -> ServerEntry {
    let small = |v: u32| v.min(255) as u8;
    ServerEntry {
        address: p.address,
        name: Some(p.name).filter(|n| !n.is_empty()),
        gamedir: p.gamedir,
        map: p.map,
        players: small(p.players),
        max: small(p.max),
        bots: small(p.bots),
        password: p.password,
        dedicated: true,
        os: "unknown".into(),
        nat: false,
        version: p.version,
        protocol: small(p.protocol),
        region: 255,
        registered_since: p.first_seen,
        last_heartbeat: p.at,
        sources: p.sources,
        ping_ms: Some(p.ping_ms),
    }
}

/// The query of `GET /api/servers` (the master's filter keys; `true`/`false` are
/// read as `1`/`0`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ServerFilter {
    /// Game directory, exact.
    #[serde(default)]
    pub gamedir: Option<String>,
    /// Map, exact.
    #[serde(default)]
    pub map: Option<String>,
    /// Behind NAT (1) or not (0).
    #[serde(default, deserialize_with = "crate::params::bool01")]
    #[param(value_type = Option<u8>, minimum = 0, maximum = 1)]
    pub nat: Option<bool>,
    /// Full (1: `players >= max`) or not (0).
    #[serde(default, deserialize_with = "crate::params::bool01")]
    #[param(value_type = Option<u8>, minimum = 0, maximum = 1)]
    pub full: Option<bool>,
    /// Empty (1: no player) or not (0).
    #[serde(default, deserialize_with = "crate::params::bool01")]
    #[param(value_type = Option<u8>, minimum = 0, maximum = 1)]
    pub empty: Option<bool>,
    /// With a password (1) or not (0).
    #[serde(default, deserialize_with = "crate::params::bool01")]
    #[param(value_type = Option<u8>, minimum = 0, maximum = 1)]
    pub password: Option<bool>,
    /// Dedicated (1) or not (0).
    #[serde(default, deserialize_with = "crate::params::bool01")]
    #[param(value_type = Option<u8>, minimum = 0, maximum = 1)]
    pub dedicated: Option<bool>,
}

impl crate::params::Bounds for ServerFilter {}

impl ServerFilter {
    /// Whether `s` passes.
    pub fn keeps(&self, s: &ServerEntry) -> bool {
        let is = |want: Option<bool>, have: bool| want.is_none_or(|w| w == have);
        self.gamedir.as_ref().is_none_or(|g| *g == s.gamedir)
            && self.map.as_ref().is_none_or(|m| *m == s.map)
            && is(self.nat, s.nat)
            && is(self.full, s.players >= s.max)
            && is(self.empty, s.players == 0)
            && is(self.password, s.password)
            && is(self.dedicated, s.dedicated)
    }
}
