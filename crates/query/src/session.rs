//! One query of one server, as a pure state machine: it says what to send, takes
//! whatever comes back (split packets included) and the time, and ends with an
//! [`Outcome`]. The async driver only moves bytes; tests feed it bytes directly.

use std::collections::VecDeque;
use std::time::{Duration, Instant};
use xash::a2s::{self, InfoRequest, PlayersRequest, Reply, RulesRequest};
use xash::handshake::{
    BandwidthTest, ChallengeResponse, ClientConnect, Connect, ConnectProtInfo, Disconnect,
    ErrorMsg, GetChallenge, Print, TestPacket,
};
use xash::info::InfoString;
use xash::split::{Reassembler, ReassemblyLimits, SplitForm, SPLIT_HEADER};
use xash::text::{Ack, InfoQuery, InfoReply, Ping};

/// What to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Server info: `info 49` and A2S_INFO, whichever the server speaks.
    Info,
    /// Server info by A2S_INFO alone (with its challenge retry): what a GoldSrc
    /// server (protocol 48) answers, and nothing a Xash server would also answer.
    A2sInfo,
    /// A2S_PLAYER with the challenge retry.
    Players,
    /// A2S_RULES with the challenge retry.
    Rules,
    /// `ping` (then GoldSrc `i`).
    Ping,
    /// The connect handshake, without joining.
    Connect,
}

/// The dialect a server answered an info query in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `info\n\p\49...`
    Xash49,
    /// `info\n...` after falling back to `info 48`.
    Xash48,
    /// A2S 'I' reply.
    Source,
    /// Legacy GoldSrc 'm' reply.
    GoldSrc,
}

/// A server's info, whatever dialect it came in.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ServerSummary {
    /// Which reply it was.
    pub dialect: Dialect,
    /// Host name (colour codes as sent).
    pub name: String,
    /// Map.
    pub map: String,
    /// Game directory.
    pub gamedir: String,
    /// Game description (A2S only).
    pub game: String,
    /// Players (A2S counts bots in; Xash does not).
    pub players: u32,
    /// Maximum players.
    pub max_players: u32,
    /// Bots, when reported.
    pub bots: u32,
    /// Password protected, when reported.
    pub password: bool,
    /// Protocol.
    pub protocol: u32,
    /// Version string, when reported.
    pub version: String,
}

/// A player in a players reply.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlayerRow {
    /// Name (colour codes as sent).
    pub name: String,
    /// Score.
    pub frags: i32,
    /// Seconds connected (−1 for bots on Xash).
    pub seconds: f32,
}

/// How the connect handshake ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ConnectResult {
    /// `client_connect` with the server's protinfo.
    Accepted {
        /// The server's `\ext\..\cheats\..\challenge\..` protinfo.
        protinfo: String,
        /// Largest bandwidth-test size that passed, if the test ran.
        bandwidth: Option<u32>,
    },
    /// `errormsg`/`print`/`disconnect` with the reason.
    Rejected {
        /// The server's text, colour codes stripped.
        reason: String,
    },
    /// A GoldSrc server (it answered `A00000000 ...`).
    GoldSrc,
}

/// The end of a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Info reply.
    Info {
        /// The info.
        info: ServerSummary,
        /// Round trip of the answering request, ms.
        ping_ms: f64,
    },
    /// Players reply.
    Players {
        /// The players.
        players: Vec<PlayerRow>,
    },
    /// Rules reply.
    Rules {
        /// Name/value pairs.
        rules: Vec<(String, String)>,
    },
    /// Ping answered.
    Pong {
        /// Round trip, ms.
        ping_ms: f64,
        /// `ack` (Xash) or `j` (GoldSrc).
        spelling: String,
    },
    /// The handshake ended.
    Connect(ConnectResult),
    /// Nothing came back in time.
    NoReply {
        /// Why that may be (e.g. an empty Xash server sends no players reply).
        hint: String,
    },
    /// Something came back that breaks the protocol.
    Invalid {
        /// What was wrong.
        error: String,
    },
}

/// How much one session may cost, whatever the server does: a server that answers
/// every request with a new challenge, or keeps a reply from completing, ends in
/// [`Outcome::Invalid`] or [`Outcome::NoReply`] within these bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// How long to wait for each reply before retrying.
    pub attempt_timeout: Duration,
    /// Resends after a timeout.
    pub retries: u32,
    /// Datagram batches sent after the first, at most (retries and answers to
    /// challenges alike).
    pub max_rounds: u32,
    /// From the start to the outcome, at most.
    pub overall: Duration,
}

impl Budget {
    /// Rounds the exchange itself may take beyond retries: Info the `info 48`
    /// fallback and an A2S challenge; Players/Rules the challenge; Ping the GoldSrc
    /// `i`; Connect the challenge answer, four smaller bandwidth tests and the
    /// connect. One spare each (a server may challenge once more).
    pub fn rounds_for(kind: Kind) -> u32 {
        1 + match kind {
            Kind::Info => 2,
            Kind::A2sInfo => 1,
            Kind::Players | Kind::Rules => 1,
            Kind::Ping => 1,
            Kind::Connect => BANDWIDTH_SIZES.len() as u32 + 1,
        }
    }

    /// The budget of `kind` with these timeouts: `retries` plus the rounds the
    /// exchange needs, each of at most `attempt_timeout`, plus one attempt's slack.
    pub fn new(kind: Kind, attempt_timeout: Duration, retries: u32) -> Budget {
        let max_rounds = retries.saturating_add(Self::rounds_for(kind));
        Budget {
            attempt_timeout,
            retries,
            max_rounds,
            overall: attempt_timeout.saturating_mul(max_rounds.saturating_add(2)),
        }
    }
}

#[derive(Debug)]
enum Stage {
    Waiting,
    Bandwidth { challenge: i32, size: u32 },
    Connecting { bandwidth: Option<u32> },
    RejectSeen(String),
}

/// One query in progress.
#[derive(Debug)]
pub struct Session {
    kind: Kind,
    attempt_timeout: Duration,
    retries_left: u32,
    rounds_left: u32,
    max_rounds: u32,
    deadline: Instant,
    hard_deadline: Instant,
    sent_at: Instant,
    last_sent: Vec<Vec<u8>>,
    // Split replies come in the GoldSrc 9-byte or the Xash 10-byte form, and a
    // fragment alone cannot always tell which: reassemble both ways at once.
    reassembler_goldsrc: Reassembler,
    reassembler_xash: Reassembler,
    stage: Stage,
    bw_sizes: VecDeque<u32>,
    asked_48: bool,
    tried_goldsrc_ping: bool,
    qport: u16,
}

/// The sizes the engine tries in its bandwidth test, largest first.
pub const BANDWIDTH_SIZES: [u32; 5] = [1400, 1200, 1000, 800, 508];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

impl Session {
    /// Starts a session with [`Budget::new`]; returns it and the datagrams to send now.
    pub fn new(
        kind: Kind,
        now: Instant,
        attempt_timeout: Duration,
        retries: u32,
    ) -> (Session, Vec<Vec<u8>>) {
        Session::with_budget(kind, now, Budget::new(kind, attempt_timeout, retries))
    }

    /// Starts a session that ends within `budget` whatever the server sends.
    pub fn with_budget(kind: Kind, now: Instant, budget: Budget) -> (Session, Vec<Vec<u8>>) {
        let attempt_timeout = budget.attempt_timeout;
        let hard_deadline = now + budget.overall;
        let first = match kind {
            Kind::Info => vec![
                enc(|b| InfoQuery { protocol: 49 }.encode(b)),
                enc(|b| InfoRequest { challenge: None }.encode(b)),
            ],
            Kind::A2sInfo => vec![enc(|b| InfoRequest { challenge: None }.encode(b))],
            Kind::Players => vec![enc(|b| {
                PlayersRequest {
                    challenge: a2s::NO_CHALLENGE,
                }
                .encode(b)
            })],
            Kind::Rules => vec![enc(|b| {
                RulesRequest {
                    challenge: a2s::NO_CHALLENGE,
                }
                .encode(b)
            })],
            Kind::Ping => vec![enc(|b| Ping::Xash.encode(b))],
            Kind::Connect => vec![enc(|b| {
                GetChallenge {
                    steam: true,
                    newline: true,
                }
                .encode(b)
            })],
        };
        let s = Session {
            kind,
            attempt_timeout,
            retries_left: budget.retries,
            rounds_left: budget.max_rounds,
            max_rounds: budget.max_rounds,
            deadline: (now + attempt_timeout).min(hard_deadline),
            hard_deadline,
            sent_at: now,
            last_sent: first.clone(),
            reassembler_goldsrc: Reassembler::new(ReassemblyLimits::goldsrc(attempt_timeout)),
            reassembler_xash: Reassembler::new(ReassemblyLimits::xash(attempt_timeout)),
            stage: Stage::Waiting,
            bw_sizes: BANDWIDTH_SIZES.into_iter().collect(),
            asked_48: false,
            tried_goldsrc_ping: false,
            qport: (std::process::id() & 0xffff) as u16 | 1,
        };
        (s, first)
    }

    /// When [`Session::handle_timeout`] must run.
    pub fn poll_timeout(&self) -> Instant {
        self.deadline
    }

    fn send(&mut self, d: Vec<Vec<u8>>, now: Instant) -> Step {
        if self.rounds_left == 0 {
            return Step::Done(Outcome::Invalid {
                error: format!(
                    "gave up after {} rounds: the server keeps asking for another (a new challenge every time?)",
                    self.max_rounds
                ),
            });
        }
        self.rounds_left -= 1;
        self.sent_at = now;
        self.deadline = (now + self.attempt_timeout).min(self.hard_deadline);
        self.last_sent = d.clone();
        Step::Send(d)
    }

    fn rtt(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.sent_at).as_secs_f64() * 1000.0
    }

    /// The overall deadline passed: the outcome, whatever stage the exchange is in.
    fn out_of_time(&self) -> Step {
        if let Stage::RejectSeen(reason) = &self.stage {
            return Step::Done(Outcome::Connect(ConnectResult::Rejected {
                reason: reason.clone(),
            }));
        }
        Step::Done(Outcome::NoReply {
            hint: "no complete reply within the overall deadline".into(),
        })
    }

    /// The attempt timed out: resend, move on, or give up.
    pub fn handle_timeout(&mut self, now: Instant) -> Step {
        if now >= self.hard_deadline {
            return self.out_of_time();
        }
        if now < self.deadline {
            return Step::Wait;
        }
        match &self.stage {
            Stage::RejectSeen(reason) => {
                return Step::Done(Outcome::Connect(ConnectResult::Rejected {
                    reason: reason.clone(),
                }))
            }
            Stage::Bandwidth { challenge, .. } => {
                // No test packet at this size: try the next smaller one.
                let challenge = *challenge;
                return self.next_bandwidth(challenge, now);
            }
            _ => {}
        }
        if self.kind == Kind::Ping && !self.tried_goldsrc_ping {
            self.tried_goldsrc_ping = true;
            let d = vec![enc(|b| Ping::GoldSrc.encode(b)), self.last_sent[0].clone()];
            return self.send(d, now);
        }
        if self.retries_left > 0 {
            self.retries_left -= 1;
            let d = self.last_sent.clone();
            return self.send(d, now);
        }
        let hint = match self.kind {
            Kind::Players => "no reply (empty or hidden: Xash servers send no player list when nobody is connected, or when it is hidden)",
            Kind::Rules => "no reply (a Xash server sends no rules reply when it has no public cvars)",
            _ => "no reply",
        };
        Step::Done(Outcome::NoReply { hint: hint.into() })
    }

    fn next_bandwidth(&mut self, challenge: i32, now: Instant) -> Step {
        match self.bw_sizes.pop_front() {
            Some(size) => {
                self.stage = Stage::Bandwidth { challenge, size };
                let d = enc(|b| {
                    BandwidthTest {
                        protocol: 49,
                        size,
                        challenge: Some(challenge),
                    }
                    .encode(b)
                });
                self.send(vec![d], now)
            }
            None => self.connect(challenge, None, now),
        }
    }

    fn connect(&mut self, challenge: i32, bandwidth: Option<u32>, now: Instant) -> Step {
        self.stage = Stage::Connecting { bandwidth };
        let prot = ConnectProtInfo {
            uuid: format!(
                "{:032x}",
                0x6c6f_6262_7970_726f_6265_u128 ^ u128::from(self.qport)
            ),
            qport: self.qport,
            ext: 1,
            cookie: None,
        };
        let Ok(protinfo) = prot.to_info() else {
            return Step::Done(Outcome::Invalid {
                error: "cannot build protinfo".into(),
            });
        };
        let userinfo = InfoString::new()
            .with("name", "lobby-probe")
            .and_then(|u| u.with("rate", "25000"))
            .and_then(|u| u.with("cl_updaterate", "20"))
            .unwrap_or_default();
        let d = enc(|b| {
            Connect {
                protocol: 49,
                challenge,
                protinfo,
                userinfo,
            }
            .encode(b)
        });
        self.send(vec![d], now)
    }

    /// Takes one datagram from the server.
    pub fn handle(&mut self, packet: &[u8], now: Instant) -> Step {
        if now >= self.hard_deadline {
            return self.out_of_time();
        }
        if packet.starts_with(&SPLIT_HEADER) {
            let g = self
                .reassembler_goldsrc
                .push_packet(packet, Some(SplitForm::GoldSrc), now);
            let x = self
                .reassembler_xash
                .push_packet(packet, Some(SplitForm::Xash), now);
            let whole = |r: &Result<Option<Vec<u8>>, xash::Error>| {
                r.as_ref()
                    .ok()
                    .and_then(|o| o.as_ref())
                    .filter(|w| w.starts_with(&xash::OOB))
                    .cloned()
            };
            return match (whole(&g), whole(&x), g, x) {
                (Some(w), ..) | (None, Some(w), ..) => self.handle_whole(&w, now),
                (None, None, Err(e), Err(_)) => Step::Done(Outcome::Invalid {
                    error: format!("split packet: {e}"),
                }),
                _ => Step::Wait,
            };
        }
        self.handle_whole(packet, now)
    }

    fn invalid(e: impl std::fmt::Display) -> Step {
        Step::Done(Outcome::Invalid {
            error: e.to_string(),
        })
    }

    fn handle_whole(&mut self, p: &[u8], now: Instant) -> Step {
        match self.kind {
            Kind::Info | Kind::A2sInfo => self.info(p, now),
            Kind::Players | Kind::Rules => self.players_rules(p, now),
            Kind::Ping => match Ack::decode(p) {
                Ok(a) => Step::Done(Outcome::Pong {
                    ping_ms: self.rtt(now),
                    spelling: if a == Ack::Xash { "ack" } else { "j" }.into(),
                }),
                Err(_) => Step::Wait, // stray datagram
            },
            Kind::Connect => self.connect_reply(p, now),
        }
    }

    fn info(&mut self, p: &[u8], now: Instant) -> Step {
        if p.starts_with(InfoReply::HEADER) {
            return match InfoReply::decode(p) {
                Ok(InfoReply::Info(i)) => match summary_from_info(&i, self.asked_48) {
                    Ok(s) => Step::Done(Outcome::Info {
                        info: s,
                        ping_ms: self.rtt(now),
                    }),
                    Err(e) => Self::invalid(e.to_string()),
                },
                Ok(InfoReply::WrongVersion { .. }) if !self.asked_48 => {
                    self.asked_48 = true;
                    self.send(vec![enc(|b| InfoQuery { protocol: 48 }.encode(b))], now)
                }
                Ok(InfoReply::WrongVersion { host }) => {
                    Self::invalid(format!("{} speaks neither protocol 49 nor 48", text(&host)))
                }
                Err(e) => Self::invalid(format!("info reply: {e}")),
            };
        }
        match Reply::decode(p) {
            Ok(Reply::Info(i)) => Step::Done(Outcome::Info {
                info: ServerSummary {
                    dialect: Dialect::Source,
                    name: text(&i.name),
                    map: text(&i.map),
                    gamedir: text(&i.folder),
                    game: text(&i.game),
                    players: i.players.into(),
                    max_players: i.max_players.into(),
                    bots: i.bots.into(),
                    password: i.password,
                    protocol: i.protocol.into(),
                    version: text(&i.version),
                },
                ping_ms: self.rtt(now),
            }),
            Ok(Reply::LegacyInfo(i)) => Step::Done(Outcome::Info {
                info: ServerSummary {
                    dialect: Dialect::GoldSrc,
                    name: text(&i.name),
                    map: text(&i.map),
                    gamedir: text(&i.folder),
                    game: text(&i.game),
                    players: i.players.into(),
                    max_players: i.max_players.into(),
                    bots: i.bots.into(),
                    password: i.password,
                    protocol: i.protocol.into(),
                    version: String::new(),
                },
                ping_ms: self.rtt(now),
            }),
            Ok(Reply::Challenge(c)) => {
                // Servers that challenge A2S_INFO: repeat it with the challenge.
                let d = enc(|b| {
                    InfoRequest {
                        challenge: Some(c.challenge),
                    }
                    .encode(b)
                });
                self.send(vec![d], now)
            }
            Ok(_) => Step::Wait,
            Err(e) if p.starts_with(&xash::OOB) && matches!(p.get(4), Some(b'I') | Some(b'm')) => {
                Self::invalid(format!("info reply: {e}"))
            }
            Err(_) => Step::Wait,
        }
    }

    fn players_rules(&mut self, p: &[u8], now: Instant) -> Step {
        match Reply::decode(p) {
            Ok(Reply::Challenge(c)) => {
                let d = if self.kind == Kind::Players {
                    enc(|b| {
                        PlayersRequest {
                            challenge: c.challenge,
                        }
                        .encode(b)
                    })
                } else {
                    enc(|b| {
                        RulesRequest {
                            challenge: c.challenge,
                        }
                        .encode(b)
                    })
                };
                self.send(vec![d], now)
            }
            Ok(Reply::Players(r)) if self.kind == Kind::Players => Step::Done(Outcome::Players {
                players: r
                    .players
                    .iter()
                    .map(|p| PlayerRow {
                        name: text(&p.name),
                        frags: p.frags,
                        seconds: p.duration,
                    })
                    .collect(),
            }),
            Ok(Reply::Rules(r)) if self.kind == Kind::Rules => Step::Done(Outcome::Rules {
                rules: r.rules.iter().map(|(k, v)| (text(k), text(v))).collect(),
            }),
            Ok(_) => Step::Wait,
            Err(e)
                if p.starts_with(&xash::OOB)
                    && matches!(p.get(4), Some(b'D') | Some(b'E') | Some(b'A')) =>
            {
                Self::invalid(format!("reply: {e}"))
            }
            Err(_) => Step::Wait,
        }
    }

    fn connect_reply(&mut self, p: &[u8], now: Instant) -> Step {
        if let Ok(e) = ErrorMsg::decode(p) {
            let reason = strip_colors(&text(&e.text));
            let reason = reason
                .strip_prefix("Server was reject the connection: ")
                .unwrap_or(&reason)
                .trim_end()
                .to_string();
            // The print and disconnect datagrams follow; wait briefly for them.
            self.stage = Stage::RejectSeen(reason);
            self.deadline = (now + Duration::from_millis(200).min(self.attempt_timeout))
                .min(self.hard_deadline);
            return Step::Wait;
        }
        if Print::decode(p).is_ok() {
            return Step::Wait;
        }
        if Disconnect::decode(p).is_ok() {
            let reason = match &self.stage {
                Stage::RejectSeen(r) => r.clone(),
                _ => "disconnected".into(),
            };
            return Step::Done(Outcome::Connect(ConnectResult::Rejected { reason }));
        }
        match &self.stage {
            Stage::Waiting => match ChallengeResponse::decode(p) {
                Ok(ChallengeResponse::Xash {
                    challenge,
                    bandwidth_test,
                }) => {
                    if bandwidth_test == Some(true) {
                        self.next_bandwidth(challenge, now)
                    } else {
                        self.connect(challenge, None, now)
                    }
                }
                Ok(ChallengeResponse::GoldSrc { .. }) => {
                    Step::Done(Outcome::Connect(ConnectResult::GoldSrc))
                }
                Err(_) => Step::Wait,
            },
            Stage::Bandwidth { challenge, size } => {
                let (challenge, size) = (*challenge, *size);
                if let Ok(t) = TestPacket::decode(p) {
                    if t.len() == size as usize && t.crc_matches() {
                        return self.connect(challenge, Some(size), now);
                    }
                    return self.next_bandwidth(challenge, now);
                }
                match ChallengeResponse::decode(p) {
                    // The server will not run the test (at this size): connect without it.
                    Ok(ChallengeResponse::Xash { challenge, .. }) => {
                        self.connect(challenge, None, now)
                    }
                    _ => Step::Wait,
                }
            }
            Stage::Connecting { bandwidth, .. } => match ClientConnect::decode(p) {
                Ok(c) => Step::Done(Outcome::Connect(ConnectResult::Accepted {
                    protinfo: text(&c.protinfo.to_bytes()),
                    bandwidth: *bandwidth,
                })),
                Err(_) => Step::Wait,
            },
            Stage::RejectSeen(_) => Step::Wait,
        }
    }

    /// What to send to leave politely after an accepted connect.
    pub fn goodbye() -> Vec<u8> {
        enc(|b| Disconnect.encode(b))
    }
}

/// What the driver does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send these and keep waiting.
    Send(Vec<Vec<u8>>),
    /// Keep waiting.
    Wait,
    /// Finished.
    Done(Outcome),
}

fn num(i: &InfoString, k: &str) -> u32 {
    i.get(k)
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A Xash info reply as the engine validates it (`CL_ParseStatusMessage`):
/// non-empty gamedir, host and map; numcl ≤ maxcl.
pub fn summary_from_info(i: &InfoString, was_48: bool) -> Result<ServerSummary, InfoError> {
    let get = |k: &str| i.get_str(k).unwrap_or_default();
    let s = ServerSummary {
        dialect: if was_48 {
            Dialect::Xash48
        } else {
            Dialect::Xash49
        },
        name: get("host"),
        map: get("map"),
        gamedir: get("gamedir"),
        game: String::new(),
        players: num(i, "numcl"),
        max_players: num(i, "maxcl"),
        bots: num(i, "bots"),
        password: get("password") == "1",
        protocol: if i.get("p").is_some() {
            num(i, "p")
        } else {
            48
        },
        version: String::new(),
    };
    if s.name.is_empty() || s.map.is_empty() || s.gamedir.is_empty() {
        return Err(InfoError::Incomplete);
    }
    if s.players > s.max_players {
        return Err(InfoError::TooManyPlayers {
            players: s.players,
            max: s.max_players,
        });
    }
    Ok(s)
}

/// Why [`summary_from_info`] refused an info reply, as the engine would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InfoError {
    /// `host`, `map` or `gamedir` missing or empty.
    #[error("info reply without host, map or gamedir")]
    Incomplete,
    /// More players than slots.
    #[error("info reply claims {players} of {max} players")]
    TooManyPlayers {
        /// `numcl`.
        players: u32,
        /// `maxcl`.
        max: u32,
    },
}

/// Removes Quake colour codes (`^0`..`^9`) and control characters.
pub fn strip_colors(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '^' && it.peek().is_some_and(|d| d.is_ascii_digit()) {
            it.next();
            continue;
        }
        if c.is_control() {
            continue;
        }
        out.push(c);
    }
    out
}

/// Renders Quake colour codes as ANSI colours (for terminals).
pub fn ansi_colors(s: &str) -> String {
    const CODES: [&str; 10] = ["30", "31", "32", "33", "34", "36", "35", "37", "37", "37"];
    let mut out = String::with_capacity(s.len() + 16);
    let mut it = s.chars().peekable();
    let mut coloured = false;
    while let Some(c) = it.next() {
        if c == '^' {
            if let Some(d) = it.peek().and_then(|d| d.to_digit(10)) {
                it.next();
                out.push_str(&format!("\x1b[{}m", CODES[d as usize]));
                coloured = true;
                continue;
            }
        }
        if !c.is_control() {
            out.push(c);
        }
    }
    if coloured {
        out.push_str("\x1b[0m");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use xash::a2s::{ChallengeReply as A2sChallenge, Player, PlayersReply, RulesReply};
    use xash::split::split;

    const T: Duration = Duration::from_millis(500);

    fn capture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../testdata/xash3d/probe/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn start(kind: Kind) -> (Session, Vec<Vec<u8>>, Instant) {
        let now = Instant::now();
        let (s, d) = Session::new(kind, now, T, 1);
        (s, d, now)
    }

    fn done(step: Step) -> Outcome {
        match step {
            Step::Done(o) => o,
            other => panic!("expected an outcome, got {other:?}"),
        }
    }

    fn sent(step: Step) -> Vec<Vec<u8>> {
        match step {
            Step::Send(d) => d,
            other => panic!("expected datagrams, got {other:?}"),
        }
    }

    #[test]
    fn info_from_the_real_xash_server() {
        let (mut s, first, now) = start(Kind::Info);
        assert_eq!(
            first[0],
            capture("09_xash_info_49.req.bin"),
            "the engine's own query"
        );
        assert_eq!(first[1], capture("00_a2s_info.req.bin"));
        let Outcome::Info { info, .. } = done(s.handle(&capture("09_xash_info_49.resp0.bin"), now))
        else {
            panic!()
        };
        assert_eq!(info.dialect, Dialect::Xash49);
        assert_eq!(
            (info.name.as_str(), info.map.as_str(), info.gamedir.as_str()),
            ("Xash loopback test", "tiny", "valve")
        );
        assert_eq!((info.players, info.max_players, info.protocol), (0, 4, 49));
        let (mut s, _, now) = start(Kind::Info);
        let Outcome::Info { info, .. } = done(s.handle(&capture("00_a2s_info.resp0.bin"), now))
        else {
            panic!()
        };
        assert_eq!(info.dialect, Dialect::Source);
        assert_eq!(info.game, "Half-Life");
        assert_eq!(info.version, "0.21");
    }

    #[test]
    fn a2s_only_info_asks_nothing_a_xash_server_alone_answers() {
        let (mut s, first, now) = start(Kind::A2sInfo);
        assert_eq!(first, vec![capture("00_a2s_info.req.bin")]);
        // A challenge is answered with the request repeated with it.
        let again = sent(s.handle(&challenge(0x1234_5678), now));
        assert_eq!(again.len(), 1);
        assert_eq!(
            InfoRequest::decode(&again[0]).unwrap().challenge,
            Some(0x1234_5678)
        );
        let Outcome::Info { info, .. } = done(s.handle(&capture("00_a2s_info.resp0.bin"), now))
        else {
            panic!()
        };
        assert_eq!(info.dialect, Dialect::Source);
    }

    #[test]
    fn wrong_version_falls_back_to_48() {
        let (mut s, _, now) = start(Kind::Info);
        let d = sent(s.handle(&capture("10_xash_info_48.resp0.bin"), now));
        assert_eq!(d, vec![capture("10_xash_info_48.req.bin")]);
        let reply =
            b"\xff\xff\xff\xffinfo\n\\map\\c1a0\\numcl\\1\\maxcl\\8\\gamedir\\valve\\host\\Old";
        let Outcome::Info { info, .. } = done(s.handle(reply, now)) else {
            panic!()
        };
        assert_eq!(info.dialect, Dialect::Xash48);
        assert_eq!(info.protocol, 48);
        // Wrong again: an error, not a loop.
        let (mut s, _, now) = start(Kind::Info);
        s.handle(&capture("10_xash_info_48.resp0.bin"), now);
        assert!(matches!(
            done(s.handle(&capture("10_xash_info_48.resp0.bin"), now)),
            Outcome::Invalid { .. }
        ));
    }

    #[test]
    fn a2s_info_challenge_is_answered() {
        let (mut s, _, now) = start(Kind::Info);
        let mut a = Vec::new();
        A2sChallenge { challenge: 77 }.encode(&mut a);
        let d = sent(s.handle(&a, now));
        assert_eq!(InfoRequest::decode(&d[0]).unwrap().challenge, Some(77));
    }

    #[test]
    fn players_with_the_challenge_retry_and_the_empty_server_hint() {
        let (mut s, first, now) = start(Kind::Players);
        assert_eq!(PlayersRequest::decode(&first[0]).unwrap().challenge, -1);
        let mut a = Vec::new();
        A2sChallenge { challenge: 1234 }.encode(&mut a);
        let d = sent(s.handle(&a, now));
        assert_eq!(PlayersRequest::decode(&d[0]).unwrap().challenge, 1234);
        let mut r = Vec::new();
        PlayersReply {
            players: vec![Player {
                index: 0,
                name: b"^1Gordon".to_vec(),
                frags: 3,
                duration: 12.5,
            }],
        }
        .encode(&mut r);
        let Outcome::Players { players } = done(s.handle(&r, now)) else {
            panic!()
        };
        assert_eq!(players[0].name, "^1Gordon");
        assert_eq!(strip_colors(&players[0].name), "Gordon");
        // An empty Xash server never answers: after the retries, a hint, not a bare timeout.
        let (mut s, _, now) = start(Kind::Players);
        assert!(
            matches!(s.handle_timeout(now + T), Step::Send(_)),
            "one retry"
        );
        let Outcome::NoReply { hint } = done(s.handle_timeout(now + T * 3)) else {
            panic!()
        };
        assert!(hint.contains("empty or hidden"));
    }

    fn rules_reply(n: usize) -> Vec<u8> {
        let rules = (0..n)
            .map(|i| {
                (
                    format!("cvar_{i:03}").into_bytes(),
                    format!("value {i} {}", "x".repeat(30)).into_bytes(),
                )
            })
            .collect();
        let mut r = Vec::new();
        RulesReply { rules }.encode(&mut r);
        r
    }

    #[test]
    fn split_rules_in_both_forms_out_of_order_with_duplicates() {
        let whole = rules_reply(120);
        assert!(whole.len() > 2800);
        for form in [SplitForm::GoldSrc, SplitForm::Xash] {
            let (mut s, _, now) = start(Kind::Rules);
            let mut frags = split(&whole, form, 7, 1400).unwrap();
            assert!(frags.len() >= 3);
            frags.reverse();
            let dup = frags[0].clone();
            let last = frags.pop().unwrap();
            for f in &frags {
                assert_eq!(s.handle(f, now), Step::Wait);
            }
            assert_eq!(s.handle(&dup, now), Step::Wait, "duplicates are ignored");
            let Outcome::Rules { rules } = done(s.handle(&last, now)) else {
                panic!("{form:?}")
            };
            assert_eq!(rules.len(), 120);
            assert_eq!(rules[5].0, "cvar_005");
        }
    }

    #[test]
    fn a_missing_fragment_times_out() {
        let whole = rules_reply(120);
        let (mut s, _, now) = start(Kind::Rules);
        let frags = split(&whole, SplitForm::GoldSrc, 9, 1400).unwrap();
        for f in &frags[1..] {
            assert_eq!(s.handle(f, now), Step::Wait);
        }
        s.handle_timeout(now + T);
        assert!(matches!(
            done(s.handle_timeout(now + T * 3)),
            Outcome::NoReply { .. }
        ));
    }

    #[test]
    fn hostile_replies_are_errors() {
        // A players reply claiming 255 players in 3 bytes.
        let (mut s, _, now) = start(Kind::Players);
        let o = done(s.handle(b"\xff\xff\xff\xffD\xff\x00A", now));
        assert!(matches!(o, Outcome::Invalid { .. }), "{o:?}");
        // A rules reply with a truncated string.
        let (mut s, _, now) = start(Kind::Rules);
        assert!(matches!(
            done(s.handle(b"\xff\xff\xff\xffE\x02\x00abc", now)),
            Outcome::Invalid { .. }
        ));
        // A split header lying about its fragment count.
        let (mut s, _, now) = start(Kind::Rules);
        let lie = [
            0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0x0f, 0xff, 0xff, 0xff, 0xff, b'E',
        ];
        let o = s.handle(&lie, now);
        assert!(matches!(o, Step::Done(Outcome::Invalid { .. })), "{o:?}");
        // An info reply without host.
        let (mut s, _, now) = start(Kind::Info);
        assert!(matches!(
            done(s.handle(
                b"\xff\xff\xff\xffinfo\n\\p\\49\\map\\x\\gamedir\\valve",
                now
            )),
            Outcome::Invalid { .. }
        ));
        // More players than slots.
        let (mut s, _, now) = start(Kind::Info);
        let r =
            b"\xff\xff\xff\xffinfo\n\\p\\49\\map\\x\\numcl\\9\\maxcl\\4\\gamedir\\valve\\host\\h";
        assert!(matches!(done(s.handle(r, now)), Outcome::Invalid { .. }));
        // A truncated A2S info.
        let (mut s, _, now) = start(Kind::Info);
        let cap = capture("00_a2s_info.resp0.bin");
        assert!(matches!(
            done(s.handle(&cap[..20], now)),
            Outcome::Invalid { .. }
        ));
    }

    #[test]
    fn ping_in_both_spellings() {
        let (mut s, first, now) = start(Kind::Ping);
        assert_eq!(first, vec![capture("11_ping.req.bin")]);
        assert!(matches!(
            done(s.handle(&capture("11_ping.resp0.bin"), now)),
            Outcome::Pong { .. }
        ));
        let (mut s, _, now) = start(Kind::Ping);
        let d = sent(s.handle_timeout(now + T));
        assert_eq!(d[0], capture("12_goldsrc_ping_i.req.bin"));
        let Outcome::Pong { spelling, .. } =
            done(s.handle(&capture("12_goldsrc_ping_i.resp0.bin"), now + T))
        else {
            panic!()
        };
        assert_eq!(spelling, "j");
    }

    #[test]
    fn connect_accepted_after_the_bandwidth_test() {
        let (mut s, first, now) = start(Kind::Connect);
        assert_eq!(
            GetChallenge::decode(&first[0]).unwrap(),
            GetChallenge {
                steam: true,
                newline: true
            }
        );
        let d = sent(s.handle(b"\xff\xff\xff\xffchallenge 42 1", now));
        let bw = BandwidthTest::decode(&d[0]).unwrap();
        assert_eq!((bw.size, bw.challenge), (1400, Some(42)));
        // No answer at 1400: the next size.
        let d = sent(s.handle_timeout(now + T));
        assert_eq!(BandwidthTest::decode(&d[0]).unwrap().size, 1200);
        let tp = TestPacket::with_size(1200, b"gfx.wad data").unwrap();
        let mut b = Vec::new();
        tp.encode(&mut b);
        let d = sent(s.handle(&b, now + T));
        let c = Connect::decode(&d[0]).unwrap();
        assert_eq!((c.protocol, c.challenge), (49, 42));
        assert_eq!(c.prot().unwrap().uuid.len(), 32);
        let o = done(s.handle(
            b"\xff\xff\xff\xffclient_connect \\ext\\1\\cheats\\0\\challenge\\42",
            now + T,
        ));
        assert_eq!(
            o,
            Outcome::Connect(ConnectResult::Accepted {
                protinfo: "\\ext\\1\\cheats\\0\\challenge\\42".into(),
                bandwidth: Some(1200)
            })
        );
    }

    #[test]
    fn connect_rejected_with_the_reason() {
        let (mut s, _, now) = start(Kind::Connect);
        let d = sent(s.handle(&capture("13_getchallenge.resp0.bin"), now));
        assert_eq!(
            Connect::decode(&d[0]).unwrap().challenge,
            -1257230617,
            "no bandwidth test when the server says 0"
        );
        let [a, b, c] = xash::handshake::Reject::new("Server is full.").datagrams();
        assert_eq!(s.handle(&a, now), Step::Wait);
        assert_eq!(s.handle(&b, now), Step::Wait);
        let o = done(s.handle(&c, now));
        assert_eq!(
            o,
            Outcome::Connect(ConnectResult::Rejected {
                reason: "Server is full.".into()
            })
        );
        // A GoldSrc server.
        let (mut s, _, now) = start(Kind::Connect);
        let o = done(s.handle(
            b"\xff\xff\xff\xffA00000000 12345 3 90112233445566778 1\n",
            now,
        ));
        assert_eq!(o, Outcome::Connect(ConnectResult::GoldSrc));
        // Silence.
        let (mut s, _, now) = start(Kind::Connect);
        s.handle_timeout(now + T);
        assert!(matches!(
            done(s.handle_timeout(now + T * 3)),
            Outcome::NoReply { .. }
        ));
    }

    #[test]
    fn colours() {
        assert_eq!(strip_colors("^1Red^7 and ^2green\u{7}"), "Red and green");
        assert_eq!(strip_colors("100^%"), "100^%");
        assert_eq!(ansi_colors("^1R"), "\x1b[31mR\x1b[0m");
    }

    /// Far more virtual time than any budget of `T` allows: a session still running
    /// then would run for ever.
    const CEILING: Duration = Duration::from_secs(15);

    fn challenge(c: i32) -> Vec<u8> {
        let mut a = Vec::new();
        A2sChallenge { challenge: c }.encode(&mut a);
        a
    }

    /// A server that answers every request at once with a fresh challenge: the
    /// session ends after its rounds, not never.
    #[test]
    fn a_new_challenge_every_time_ends_after_the_rounds() {
        for kind in [Kind::Info, Kind::Players, Kind::Rules] {
            let (mut s, _, now) = start(kind);
            let budget = Budget::new(kind, T, 1);
            let mut sends = 0;
            let outcome = loop {
                match s.handle(&challenge(1000 + sends), now) {
                    Step::Send(_) => sends += 1,
                    Step::Done(o) => break o,
                    Step::Wait => panic!("{kind:?}: a challenge is always answered"),
                }
                assert!(sends < 1000, "{kind:?}: still going after {sends} rounds");
            };
            assert_eq!(sends as u32, budget.max_rounds, "{kind:?}");
            let Outcome::Invalid { error } = outcome else {
                panic!("{kind:?}: {outcome:?}")
            };
            assert!(error.contains("rounds"), "{error}");
        }
    }

    /// A server that answers just before each timeout, or keeps the connect
    /// rejection "coming" with an errormsg every 100 ms: the overall deadline holds.
    #[test]
    fn the_overall_deadline_holds_however_the_server_paces_itself() {
        let (mut s, _, t0) = start(Kind::Players);
        let overall = Budget::new(Kind::Players, T, 1).overall;
        let mut now = t0;
        let mut i = 0;
        let o = loop {
            now += T - Duration::from_millis(1);
            i += 1;
            if let Step::Done(o) = s.handle(&challenge(i), now) {
                break o;
            }
            assert!(now - t0 <= CEILING, "no end by {:?}", now - t0);
        };
        assert!(now - t0 <= overall, "{o:?}");
        let [err, ..] = xash::handshake::Reject::new("go away").datagrams();
        let (mut s, _, t0) = start(Kind::Connect);
        let overall = Budget::new(Kind::Connect, T, 1).overall;
        let mut now = t0;
        let o = loop {
            now += Duration::from_millis(100);
            let step = if now >= s.poll_timeout() {
                s.handle_timeout(now)
            } else {
                s.handle(&err, now)
            };
            if let Step::Done(o) = step {
                break o;
            }
            assert!(now - t0 <= CEILING, "no end by {:?}", now - t0);
        };
        assert!(
            matches!(o, Outcome::Connect(ConnectResult::Rejected { .. })),
            "{o:?}"
        );
        assert!(s.poll_timeout() <= t0 + overall);
    }

    #[test]
    fn budgets_fit_the_longest_honest_exchange() {
        // The connect handshake with every bandwidth size timing out, then the
        // connect retried: within the budget.
        let (mut s, _, mut now) = start(Kind::Connect);
        let mut sends = 0;
        assert!(matches!(
            s.handle(b"\xff\xff\xff\xffchallenge 42 1", now),
            Step::Send(_)
        ));
        sends += 1;
        loop {
            now = s.poll_timeout();
            match s.handle_timeout(now) {
                Step::Send(_) => sends += 1,
                Step::Done(o) => {
                    assert!(
                        matches!(o, Outcome::NoReply { ref hint } if hint == "no reply"),
                        "{o:?}"
                    );
                    break;
                }
                Step::Wait => {}
            }
        }
        assert_eq!(
            sends,
            BANDWIDTH_SIZES.len() + 1 + 1,
            "every size, the connect, one retry"
        );
        assert!(sends as u32 <= Budget::new(Kind::Connect, T, 1).max_rounds);
    }

    proptest::proptest! {
        /// Whatever a server sends, whenever: every session ends by its overall
        /// deadline, having sent at most its rounds.
        #[test]
        fn every_session_ends_within_its_budget(
            events in proptest::collection::vec((0u8..5, proptest::prelude::any::<i32>(), 1u64..400), 1..200),
            kind in 0usize..6,
        ) {
            let kind = [Kind::Info, Kind::Players, Kind::Rules, Kind::Ping, Kind::Connect, Kind::A2sInfo][kind];
            let budget = Budget::new(kind, T, 1);
            let (mut s, _, t0) = start(kind);
            let mut now = t0;
            let mut sends = 0u32;
            let mut done = false;
            let reject = xash::handshake::Reject::new("no").datagrams();
            let mut events = events.into_iter().cycle();
            while !done {
                let (what, n, dt) = events.next().unwrap();
                now += Duration::from_millis(dt);
                let d = match what {
                    0 => challenge(n),
                    1 => [&b"\xff\xff\xff\xff"[..], format!("challenge {n} 1").as_bytes()].concat(),
                    2 => reject[0].clone(),
                    3 => vec![0xfe, 0xff, 0xff, 0xff, n as u8, 0, 0, 0, 0x02, 0x00],
                    _ => n.to_le_bytes().to_vec(),
                };
                let step = if now >= s.poll_timeout() { s.handle_timeout(now) } else { s.handle(&d, now) };
                match step {
                    Step::Send(_) => sends += 1,
                    Step::Done(_) => done = true,
                    Step::Wait => {}
                }
                proptest::prop_assert!(now - t0 <= CEILING, "{kind:?} alive at {:?}", now - t0);
            }
            proptest::prop_assert!(now - t0 <= budget.overall + Duration::from_millis(400), "{kind:?} ended at {:?}", now - t0);
            proptest::prop_assert!(sends <= budget.max_rounds, "{kind:?}: {sends} rounds");
        }

        /// Hostile datagrams of any kind, fed to every kind of session, never panic
        /// and never make a session send more than a few datagrams at once.
        #[test]
        fn hostile_replies_never_panic(packets in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..1500), 1..8), prefix in 0usize..6) {
            let prefixes: [&[u8]; 6] = [b"", b"\xff\xff\xff\xff", b"\xfe\xff\xff\xff", b"\xff\xff\xff\xffinfo\n", b"\xff\xff\xff\xffchallenge ", b"\xff\xff\xff\xffA"];
            for kind in [Kind::Info, Kind::Players, Kind::Rules, Kind::Ping, Kind::Connect, Kind::A2sInfo] {
                let (mut s, _, now) = start(kind);
                for p in &packets {
                    let mut d = prefixes[prefix].to_vec();
                    d.extend_from_slice(p);
                    if let Step::Send(out) = s.handle(&d, now) {
                        proptest::prop_assert!(out.len() <= 2);
                    }
                }
                let _ = s.handle_timeout(now + T * 10);
            }
        }
    }
}
