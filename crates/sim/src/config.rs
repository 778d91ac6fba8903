//! What one simulated server is: its name, map, players, rules and behaviour switches.

use std::net::SocketAddr;
use std::time::Duration;
use xash::info::InfoString;
use xash::split::{SplitForm, GOLDSRC_SPLIT_SIZE};

/// The engine's `HEARTBEAT_SECONDS`.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(300);
/// The heartbeat interval with `sv_nat 1`.
pub const NAT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(60);
/// `sv_master_response_timeout`: how long after a heartbeat the master's challenge is accepted.
pub const MASTER_RESPONSE_TIMEOUT: Duration = Duration::from_secs(4);
/// The engine's `CHALLENGE_WINDOW_SECONDS` for query and connect challenges.
pub const CHALLENGE_WINDOW: Duration = Duration::from_secs(5);
/// How long a simulated client keeps its slot without sending anything.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);
/// The engine's `MAX_CLIENTS`: clients drop `info` replies with a larger `maxcl`.
pub const MAX_CLIENTS: u8 = 32;
/// Longest player name the engine keeps (`MAX_SCOREBOARDNAME` − 1).
pub const MAX_NAME: usize = 31;

/// Which engine a simulated server is, by the protocol number it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Protocol {
    /// 49, Xash3D FWGS: heartbeats to masters, the text queries (`info 49`,
    /// `ping`), A2S, NAT connects and the connect handshake.
    #[default]
    Xash,
    /// 48, GoldSrc (a Steam HLDS since the 2013 update): A2S_INFO (`I` reply with
    /// protocol 48), A2S_PLAYER and A2S_RULES only. Xash text queries and the
    /// connect handshake are ignored, and masters are neither sent heartbeats nor
    /// treated specially (a master's A2S query is answered like anyone's), so the
    /// server can only be listed by hand, as a `gs` entry.
    GoldSrc,
}

impl Protocol {
    /// The protocol number: 49 or 48.
    pub fn number(self) -> u8 {
        match self {
            Protocol::Xash => xash::PROTOCOL_VERSION,
            Protocol::GoldSrc => 48,
        }
    }

    /// The protocol with this number, if it is 49 or 48.
    pub fn from_number(n: u8) -> Option<Protocol> {
        [Protocol::Xash, Protocol::GoldSrc]
            .into_iter()
            .find(|p| p.number() == n)
    }
}

impl std::fmt::Display for Protocol {
    /// The number, as `--protocol` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// A protocol number other than 49 or 48.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("protocol {0:?} is not simulated: 49 = Xash3D FWGS, 48 = GoldSrc")]
pub struct ProtocolError(pub String);

impl std::str::FromStr for Protocol {
    type Err = ProtocolError;

    /// `49` or `48`.
    fn from_str(s: &str) -> Result<Protocol, ProtocolError> {
        s.trim()
            .parse::<u8>()
            .ok()
            .and_then(Protocol::from_number)
            .ok_or_else(|| ProtocolError(s.to_string()))
    }
}

/// A player (or bot) who is on the server from the start.
#[derive(Debug, Clone, PartialEq)]
pub struct Player {
    /// Name as the scoreboard shows it.
    pub name: String,
    /// Score.
    pub frags: i32,
    /// How long the player had been connected when the server started.
    pub connected_for: Duration,
}

/// Everything one simulated server answers with. [`Config::validate`] checks it;
/// [`crate::Server::new`] refuses an invalid one.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Which engine the server is: 49 (Xash3D FWGS, the default) or 48 (GoldSrc:
    /// A2S only, no heartbeats; `masters` is then ignored).
    pub protocol: Protocol,
    /// `hostname`.
    pub hostname: String,
    /// Current map (`sv.name`).
    pub map: String,
    /// Game directory (`valve`, `cstrike`...).
    pub gamedir: String,
    /// Game description from the game library (`Half-Life` for `valve`).
    pub game: String,
    /// Player slots (`maxplayers`), 1 to [`MAX_CLIENTS`]. With 1 the server is a
    /// single-player game: no heartbeats and no `info` replies, as in the engine.
    pub max_players: u8,
    /// Human players present from the start; they occupy the first slots.
    pub players: Vec<Player>,
    /// Bots present from the start; they occupy the slots after the players.
    pub bots: Vec<Player>,
    /// `sv_password`; `None` = open server.
    pub password: Option<String>,
    /// Dedicated (`d`) or listen (`l`) server.
    pub dedicated: bool,
    /// Build OS letter in A2S_INFO (`l`, `w` or `m`); the master info always says `w`.
    pub environment: u8,
    /// gameinfo `secure` (A2S_INFO only; the master info always says 0).
    pub secure: bool,
    /// `deathmatch` in the `info` reply.
    pub deathmatch: bool,
    /// `teamplay` in the `info` reply.
    pub teamplay: bool,
    /// `coop` in the `info` reply.
    pub coop: bool,
    /// `sv_nat 1`: heartbeats every 60 s, `nat\1` in the info, masters' `c` requests answered.
    pub nat: bool,
    /// Answer NAT connects for private and loopback client addresses too. The engine
    /// ignores them (`NET_IsReservedAdr`); a test on one machine needs them.
    pub nat_allow_private: bool,
    /// Masters to register with (`master` lines of `xashcomm.lst`).
    pub masters: Vec<SocketAddr>,
    /// `FCVAR_SERVER` cvars, in the order A2S_RULES lists them.
    pub rules: Vec<(String, String)>,
    /// `sv_expose_player_list`: answer A2S_PLAYER at all.
    pub expose_players: bool,
    /// `sv_allow_testpacket`: offer and run the bandwidth test.
    pub bandwidth_test: bool,
    /// Answer the old GoldSrc text queries (`details`, `players`, `rules`,
    /// `infostring`). The engine ignores them; so does the simulator by default.
    pub legacy_queries: bool,
    /// Keys the query/connect challenges and seeds the heartbeat challenges.
    pub secret: u64,
    /// Heartbeat interval; `None` = the engine's (300 s, 60 s with NAT).
    pub heartbeat_interval: Option<Duration>,
    /// How long after a heartbeat the master's challenge is accepted.
    pub master_response_timeout: Duration,
    /// How long a connected client keeps its slot without sending anything.
    pub client_timeout: Duration,
    /// Query/connect challenge window; the current and the previous one are accepted.
    pub challenge_window: Duration,
    /// Largest reply datagram; longer rules replies are split in the GoldSrc form.
    pub split_size: usize,
}

impl Default for Config {
    /// A valve deathmatch server with no players and no masters.
    fn default() -> Self {
        Config {
            protocol: Protocol::Xash,
            hostname: "lobby sim".into(),
            map: "crossfire".into(),
            gamedir: "valve".into(),
            game: "Half-Life".into(),
            max_players: 16,
            players: Vec::new(),
            bots: Vec::new(),
            password: None,
            dedicated: true,
            environment: b'l',
            secure: false,
            deathmatch: true,
            teamplay: false,
            coop: false,
            nat: false,
            nat_allow_private: false,
            masters: Vec::new(),
            rules: Vec::new(),
            expose_players: true,
            bandwidth_test: true,
            legacy_queries: false,
            secret: 0,
            heartbeat_interval: None,
            master_response_timeout: MASTER_RESPONSE_TIMEOUT,
            client_timeout: CLIENT_TIMEOUT,
            challenge_window: CHALLENGE_WINDOW,
            split_size: GOLDSRC_SPLIT_SIZE,
        }
    }
}

/// Why a [`Config`] cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid simulated server setting {field}: {reason}")]
pub struct ConfigError {
    /// The setting.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

fn bad(field: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        field,
        reason: reason.into(),
    }
}

/// A value that must fit an info string (no `\`, `"`, NUL; at most 127 bytes).
fn info_value(field: &'static str, v: &str, allow_empty: bool) -> Result<(), ConfigError> {
    if v.is_empty() && !allow_empty {
        return Err(bad(field, "must not be empty"));
    }
    InfoString::new()
        .with("k", v)
        .map(|_| ())
        .map_err(|e| bad(field, format!("{v:?}: {e}")))
}

/// A NUL-terminated string in a binary reply.
fn c_string(field: &'static str, v: &str) -> Result<(), ConfigError> {
    if v.contains('\0') {
        return Err(bad(field, format!("{v:?} contains a NUL byte")));
    }
    Ok(())
}

impl Config {
    /// The heartbeat interval in force.
    pub fn heartbeat_every(&self) -> Duration {
        self.heartbeat_interval.unwrap_or(if self.nat {
            NAT_HEARTBEAT_INTERVAL
        } else {
            HEARTBEAT_INTERVAL
        })
    }

    /// Checks every setting the replies depend on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        info_value("hostname", &self.hostname, false)?;
        info_value("map", &self.map, false)?;
        info_value("gamedir", &self.gamedir, false)?;
        c_string("game", &self.game)?;
        if self.max_players == 0 || self.max_players > MAX_CLIENTS {
            return Err(bad(
                "max_players",
                format!("{} is not in 1..={MAX_CLIENTS}", self.max_players),
            ));
        }
        let present = self.players.len() + self.bots.len();
        if present > usize::from(self.max_players) {
            return Err(bad(
                "players",
                format!(
                    "{present} players and bots do not fit {} slots",
                    self.max_players
                ),
            ));
        }
        for p in self.players.iter().chain(&self.bots) {
            info_value("player name", &p.name, false)?;
            if p.name.len() > MAX_NAME {
                return Err(bad(
                    "player name",
                    format!("{:?} is longer than {MAX_NAME} bytes", p.name),
                ));
            }
        }
        if let Some(p) = &self.password {
            info_value("password", p, false)?;
        }
        if !matches!(self.environment, b'l' | b'w' | b'm') {
            return Err(bad("environment", "must be l, w or m"));
        }
        for (k, v) in &self.rules {
            c_string("rule name", k)?;
            c_string("rule value", v)?;
            if k.is_empty() {
                return Err(bad("rule name", "must not be empty"));
            }
        }
        if self.rules.len() > usize::from(u16::MAX) {
            return Err(bad("rules", "more than 65535"));
        }
        let header = SplitForm::GoldSrc.header_len();
        if self.split_size <= header + 16 {
            return Err(bad("split_size", "too small"));
        }
        let rules_len = 4
            + 1
            + 2
            + self
                .rules
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let max = (self.split_size - header) * usize::from(SplitForm::GoldSrc.max_fragments());
        if rules_len > max {
            return Err(bad(
                "rules",
                format!(
                    "the rules reply ({rules_len} bytes) does not fit {max} bytes of split packets"
                ),
            ));
        }
        if self.challenge_window.as_secs() == 0 {
            return Err(bad("challenge_window", "must be at least 1 s"));
        }
        if self.heartbeat_every().is_zero() {
            return Err(bad("heartbeat_interval", "must not be zero"));
        }
        Ok(())
    }
}
