//! The simulated server: a pure state machine fed `(packet, from, now)`.

use crate::config::{Config, ConfigError, Protocol};
use sansio::Outbox;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};
use xash::a2s::{self, LegacyInfoReply, Player as A2sPlayer, PlayersReply, RulesReply};
use xash::handshake::{
    tokenize, BandwidthTest, ChallengeResponse, ClientConnect, Connect, HandshakeRequest, Reject,
    ServerProtInfo, TestPacket, EXT_SPLITSIZE, PROTOCOL,
};
use xash::info::InfoString;
use xash::master::{ChallengeReply, Heartbeat, NatConnect, ServerInfo, Shutdown};
use xash::split::{split, SplitForm};
use xash::text::{Ack, InfoQuery, InfoReply, Ping};
use xash::{strip_oob, ENGINE_VERSION, PROTOCOL_VERSION};

/// Counters: what came in, what was answered, and every reason something was dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Datagrams handled.
    pub packets_in: u64,
    /// Datagrams produced.
    pub packets_out: u64,
    /// Heartbeats sent (one per master).
    pub heartbeats: u64,
    /// Info datagrams sent to masters after an accepted challenge.
    pub master_infos: u64,
    /// `s\n` challenges from an address that is not a configured master.
    pub challenge_not_from_master: u64,
    /// `s\n` challenges whose echo is not this master's last heartbeat challenge.
    pub challenge_wrong_echo: u64,
    /// `s\n` challenges that came after `master_response_timeout`.
    pub challenge_too_late: u64,
    /// `s\n` challenges with no heartbeat outstanding to that master.
    pub challenge_unexpected: u64,
    /// Packets from a master that are neither `s\n` nor `c`.
    pub master_other: u64,
    /// NAT connect requests answered.
    pub nat_connects: u64,
    /// NAT connect requests ignored (NAT off, from a non-master, reserved address).
    pub nat_ignored: u64,
    /// A2S_INFO answered.
    pub a2s_info: u64,
    /// A2S_PLAYER answered with the list.
    pub a2s_players: u64,
    /// A2S_RULES answered with the list.
    pub a2s_rules: u64,
    /// `A` challenge replies sent to A2S_PLAYER/A2S_RULES.
    pub a2s_challenges: u64,
    /// A2S_PLAYER/A2S_RULES with a valid challenge but nothing to list (no reply).
    pub a2s_empty: u64,
    /// Split datagrams sent.
    pub split_packets: u64,
    /// `ping` and `i` answered.
    pub pings: u64,
    /// `ack` and `j` received.
    pub acks: u64,
    /// `info <proto>` answered.
    pub info_queries: u64,
    /// Queries ignored because the server has one slot (single player).
    pub single_player_ignored: u64,
    /// `getchallenge` answered.
    pub getchallenges: u64,
    /// Test packets sent.
    pub test_packets: u64,
    /// `bandwidth` answered with `challenge … 0` (test skipped).
    pub bandwidth_skipped: u64,
    /// Connections accepted (`client_connect`).
    pub connects: u64,
    /// Connections and bandwidth tests refused (three-datagram reject).
    pub rejects: u64,
    /// Clients that sent `disconnect`.
    pub disconnects: u64,
    /// Clients dropped after `client_timeout` of silence.
    pub client_timeouts: u64,
    /// Non-connectionless datagrams from connected clients (they keep the slot).
    pub client_traffic: u64,
    /// Xash requests (text queries, connect handshake) a protocol-48 (GoldSrc)
    /// server ignored.
    pub goldsrc_ignored: u64,
    /// Old GoldSrc text queries ignored.
    pub legacy_ignored: u64,
    /// Old GoldSrc text queries answered (with `legacy_queries`).
    pub legacy_answered: u64,
    /// Anything else.
    pub unknown: u64,
}

/// Who is in a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OccupantKind {
    /// A configured human player.
    Player,
    /// A configured bot.
    Bot,
    /// A client that connected through the handshake.
    Client {
        /// Its address.
        addr: SocketAddr,
        /// Its `qport`.
        qport: u16,
        /// When it last sent anything.
        last_seen: Instant,
    },
}

/// A taken slot.
#[derive(Debug, Clone, PartialEq)]
pub struct Occupant {
    /// Scoreboard name.
    pub name: String,
    /// Score.
    pub frags: i32,
    /// What kind of player.
    pub kind: OccupantKind,
    joined: Instant,
    before: Duration,
}

impl Occupant {
    /// Seconds connected at `now`, as A2S_PLAYER reports it (−1 for bots).
    pub fn duration(&self, now: Instant) -> f32 {
        match self.kind {
            OccupantKind::Bot => -1.0,
            _ => (now.saturating_duration_since(self.joined) + self.before).as_secs_f32(),
        }
    }

    fn is_bot(&self) -> bool {
        self.kind == OccupantKind::Bot
    }
}

#[derive(Debug, Clone)]
struct MasterState {
    addr: SocketAddr,
    /// The last heartbeat's challenge and when it was sent.
    pending: Option<(u32, Instant)>,
}

/// Why a connection is refused, worded as the engine words it.
mod reason {
    pub(crate) const INSUFFICIENT: &str = "insufficient connection info\n";
    pub(crate) const NO_CHALLENGE: &str = "no challenge for your address\n";
    pub(crate) const BAD_PROTINFO: &str = "invalid protinfo in connect command\n";
    pub(crate) const BAD_CERT: &str = "invalid authentication certificate\n";
    pub(crate) const BAD_USERINFO: &str = "invalid userinfo in connect command\n";
    pub(crate) const BAD_PASSWORD: &str = "invalid password\n";
    pub(crate) const FULL: &str = "server is full\n";

    pub(crate) fn protocol(version: i32) -> String {
        format!(
            "unsupported protocol ({version} should be {})\n",
            xash::handshake::PROTOCOL
        )
    }
}

/// The engine's `Q_atoi` for decimal text: optional sign, digits up to the first
/// other byte; anything unparsable is 0.
fn atoi(t: &[u8]) -> i64 {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// `NET_IsReservedAdr`: loopback and private addresses, for which the engine
/// ignores NAT connect requests.
pub fn is_reserved(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 10
                || o[0] == 127
                || (o[0] == 172 && (16..32).contains(&o[1]))
                || (o[0] == 192 && o[1] == 168)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_reserved(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback() || (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfe80
        }
    }
}

/// One simulated Xash3D FWGS dedicated server (or a GoldSrc one, answering A2S
/// only, with [`Protocol::GoldSrc`]).
///
/// [`Server::handle`] takes a datagram, its source and the time and returns the
/// datagrams to send; [`Server::handle_timeout`] runs heartbeats and client timeouts
/// when [`Server::poll_timeout`] says so; [`Server::shutdown`] gives the `b\n`
/// messages for the masters. Nothing here reads a clock or touches a socket.
#[derive(Debug)]
pub struct Server {
    config: Config,
    epoch: Instant,
    rng: u64,
    slots: Vec<Option<Occupant>>,
    masters: Vec<MasterState>,
    next_heartbeat: Option<Instant>,
    split_sequence: i32,
    filler: Vec<u8>,
    local_addr: Option<SocketAddr>,
    stats: Stats,
}

impl Server {
    /// A server that has just loaded its map at `now`: its first heartbeat is due at
    /// once ([`Server::poll_timeout`] returns `now`).
    pub fn new(config: Config, now: Instant) -> Result<Server, ConfigError> {
        config.validate()?;
        let mut slots: Vec<Option<Occupant>> = vec![None; usize::from(config.max_players)];
        let configured = config
            .players
            .iter()
            .map(|p| (p, OccupantKind::Player))
            .chain(config.bots.iter().map(|p| (p, OccupantKind::Bot)));
        for (slot, (p, kind)) in slots.iter_mut().zip(configured) {
            *slot = Some(Occupant {
                name: p.name.clone(),
                frags: p.frags,
                kind,
                joined: now,
                before: p.connected_for,
            });
        }
        // A GoldSrc server has no Xash masters: it never heartbeats, and a master's
        // packets are queries like anyone else's.
        let masters = match config.protocol {
            Protocol::Xash => config
                .masters
                .iter()
                .map(|&addr| MasterState {
                    addr,
                    pending: None,
                })
                .collect(),
            Protocol::GoldSrc => Vec::new(),
        };
        // Stand-in for gfx.wad: a WAD3 header, then a fixed pattern.
        let mut filler = b"WAD3".to_vec();
        filler.extend((0..2048u32).map(|i| (i.wrapping_mul(31) ^ (i >> 3)) as u8));
        let mut s = Server {
            rng: config.secret ^ 0x9e37_79b9_7f4a_7c15,
            config,
            epoch: now,
            slots,
            masters,
            next_heartbeat: None,
            split_sequence: 0,
            filler,
            local_addr: None,
            stats: Stats::default(),
        };
        if s.heartbeats_enabled() {
            s.next_heartbeat = Some(now);
        }
        Ok(s)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Tells the server its own address (used in the old GoldSrc `details` reply).
    pub fn set_local_addr(&mut self, addr: SocketAddr) {
        self.local_addr = Some(addr);
    }

    /// Taken slots, in slot order.
    pub fn occupants(&self) -> impl Iterator<Item = &Occupant> {
        self.slots.iter().flatten()
    }

    /// Human players (configured players and connected clients), as the master info counts them.
    pub fn human_count(&self) -> usize {
        self.occupants().filter(|o| !o.is_bot()).count()
    }

    /// Bots.
    pub fn bot_count(&self) -> usize {
        self.occupants().filter(|o| o.is_bot()).count()
    }

    fn total_count(&self) -> usize {
        self.occupants().count()
    }

    fn heartbeats_enabled(&self) -> bool {
        self.config.protocol == Protocol::Xash
            && !self.masters.is_empty()
            && self.config.max_players > 1
    }

    /// splitmix64.
    fn next_rand(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn window(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.epoch).as_secs()
            / self.config.challenge_window.as_secs().max(1)
    }

    fn challenge_in(&self, ip: IpAddr, window: u64) -> i32 {
        let mut h = DefaultHasher::new();
        self.config.secret.hash(&mut h);
        ip.hash(&mut h);
        window.hash(&mut h);
        let v = h.finish() as u32 as i32;
        // −1 asks for a challenge and 0 is what python-a2s sends first: never issue them.
        if v == -1 || v == 0 {
            1
        } else {
            v
        }
    }

    /// The query/connect challenge for `ip` at `now` (stateless: a keyed hash of the
    /// IP and the time window; not bound to the port, as in the engine).
    pub fn challenge(&self, ip: IpAddr, now: Instant) -> i32 {
        self.challenge_in(ip, self.window(now))
    }

    /// Whether `c` is `ip`'s challenge in the current or the previous window.
    pub fn challenge_valid(&self, ip: IpAddr, c: i32, now: Instant) -> bool {
        let w = self.window(now);
        c == self.challenge_in(ip, w) || (w > 0 && c == self.challenge_in(ip, w - 1))
    }

    /// When [`Server::handle_timeout`] must run next: the next heartbeat or the
    /// earliest client timeout.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let clients = self.occupants().filter_map(|o| match o.kind {
            OccupantKind::Client { last_seen, .. } => Some(last_seen + self.config.client_timeout),
            _ => None,
        });
        self.next_heartbeat.into_iter().chain(clients).min()
    }

    /// Runs what is due: drops silent clients, sends heartbeats.
    pub fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        let before = out.len();
        let timeout = self.config.client_timeout;
        let mut dropped = 0;
        for slot in &mut self.slots {
            if let Some(Occupant {
                kind: OccupantKind::Client { last_seen, .. },
                ..
            }) = slot
            {
                if *last_seen + timeout <= now {
                    *slot = None;
                    dropped += 1;
                }
            }
        }
        self.stats.client_timeouts += dropped;
        if dropped > 0 && self.total_count() == 0 {
            self.heartbeat(now, out);
        }
        if self.next_heartbeat.is_some_and(|t| t <= now) {
            self.heartbeat(now, out);
        }
        self.stats.packets_out += (out.len() - before) as u64;
    }

    /// The shutdown message `b\n` for every master (only a server that heartbeats
    /// sends it, as in the engine).
    pub fn shutdown(&mut self, out: &mut Outbox) {
        if !self.heartbeats_enabled() {
            return;
        }
        let b = out.encode(|b| Shutdown.encode(b));
        for m in &self.masters {
            out.send(b, m.addr);
        }
        self.stats.packets_out += self.masters.len() as u64;
    }

    /// Sends a heartbeat with a fresh challenge to every master (`NET_MasterClear`).
    fn heartbeat(&mut self, now: Instant, out: &mut Outbox) {
        if !self.heartbeats_enabled() {
            return;
        }
        for i in 0..self.masters.len() {
            // COM_RandomLong( 0, INT_MAX ).
            let c = (self.next_rand() as u32) & 0x7fff_ffff;
            self.masters[i].pending = Some((c, now));
            let mut b = Vec::with_capacity(6);
            Heartbeat { challenge: Some(c) }.encode(&mut b);
            out.push(self.masters[i].addr, &b);
            self.stats.heartbeats += 1;
        }
        self.next_heartbeat = Some(now + self.config.heartbeat_every());
    }

    /// Handles one datagram from `from`; returns the datagrams to send.
    pub fn handle(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        let before = out.len();
        self.stats.packets_in += 1;
        let client = self.touch_client(from, now);
        if self.masters.iter().any(|m| m.addr == from) {
            // The engine handles packets from a master only as `s` and `c`.
            self.master_packet(p, from, now, out);
        } else if let Some(body) = strip_oob(p) {
            self.connectionless(p, body, from, now, out);
        } else if client {
            self.stats.client_traffic += 1;
        } else {
            self.stats.unknown += 1;
        }
        self.stats.packets_out += (out.len() - before) as u64;
    }

    /// Refreshes a connected client's slot; returns whether `from` is one.
    fn touch_client(&mut self, from: SocketAddr, now: Instant) -> bool {
        let mut found = false;
        for o in self.slots.iter_mut().flatten() {
            if let OccupantKind::Client {
                addr, last_seen, ..
            } = &mut o.kind
            {
                if *addr == from {
                    *last_seen = now;
                    found = true;
                }
            }
        }
        found
    }

    fn master_packet(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        if p.starts_with(ChallengeReply::HEADER) {
            self.master_challenge(p, from, now, out);
        } else if p.starts_with(NatConnect::HEADER) {
            self.nat_connect(p, now, out);
        } else {
            self.stats.master_other += 1;
        }
    }

    /// `s\n` from a master: the info goes back only for this master's last
    /// heartbeat challenge, within the response timeout.
    fn master_challenge(&mut self, p: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        let Ok(reply) = ChallengeReply::decode(p) else {
            self.stats.unknown += 1;
            return;
        };
        let timeout = self.config.master_response_timeout;
        let Some(m) = self.masters.iter_mut().find(|m| m.addr == from) else {
            self.stats.challenge_not_from_master += 1;
            return;
        };
        let Some((sent_challenge, sent_at)) = m.pending else {
            self.stats.challenge_unexpected += 1;
            return;
        };
        if reply.echo != Some(sent_challenge) {
            self.stats.challenge_wrong_echo += 1;
            return;
        }
        if now.saturating_duration_since(sent_at) > timeout {
            self.stats.challenge_too_late += 1;
            return;
        }
        m.pending = None;
        if let Some(b) = self.master_info(reply.master_challenge) {
            out.push(from, &b);
            self.stats.master_infos += 1;
        }
    }

    /// The `0\n` info datagram for a master, keys in the engine's order.
    pub fn master_info(&self, master_challenge: u32) -> Option<Vec<u8>> {
        let c = &self.config;
        let info = InfoString::new()
            .with("protocol", PROTOCOL_VERSION.to_string())
            .and_then(|i| i.with("challenge", master_challenge.to_string()))
            .and_then(|i| i.with("players", self.human_count().to_string()))
            .and_then(|i| i.with("max", c.max_players.to_string()))
            .and_then(|i| i.with("bots", self.bot_count().to_string()))
            .and_then(|i| i.with("gamedir", &c.gamedir))
            .and_then(|i| i.with("map", &c.map))
            .and_then(|i| i.with("type", if c.dedicated { "d" } else { "l" }))
            // Inverted, as the engine sends it since 2025-10: "1" = no password.
            .and_then(|i| i.with("password", if c.password.is_some() { "0" } else { "1" }))
            .and_then(|i| i.with("os", "w"))
            .and_then(|i| i.with("secure", "0"))
            .and_then(|i| i.with("lan", "0"))
            .and_then(|i| i.with("version", ENGINE_VERSION))
            .and_then(|i| i.with("region", "255"))
            .and_then(|i| i.with("product", &c.gamedir))
            .and_then(|i| i.with("nat", if c.nat { "1" } else { "0" }))
            .ok()?;
        let mut b = Vec::with_capacity(2 + info.encoded_len());
        ServerInfo {
            info,
            trailing_newline: false,
        }
        .encode(&mut b);
        Some(b)
    }

    /// `c <client>` from a master: the `info` reply goes to the client.
    fn nat_connect(&mut self, p: &[u8], _now: Instant, out: &mut Outbox) {
        let Ok(nc) = NatConnect::decode(p) else {
            self.stats.unknown += 1;
            return;
        };
        if !self.config.nat
            || (is_reserved(nc.client.ip()) && !self.config.nat_allow_private)
            || self.config.max_players <= 1
        {
            self.stats.nat_ignored += 1;
            return;
        }
        if let Some(b) = self.info_reply(u32::from(PROTOCOL_VERSION)) {
            out.push(nc.client, &b);
            self.stats.nat_connects += 1;
        }
    }

    /// The reply to `info <protocol>` (`SV_Info`): the info string for 49, else
    /// `<hostname>: wrong version`.
    pub fn info_reply(&self, protocol: u32) -> Option<Vec<u8>> {
        let c = &self.config;
        let reply = if protocol == u32::from(PROTOCOL_VERSION) {
            let flag = |b: bool| if b { "1" } else { "0" };
            let info = InfoString::new()
                .with("p", PROTOCOL_VERSION.to_string())
                .and_then(|i| i.with("map", &c.map))
                .and_then(|i| i.with("dm", flag(c.deathmatch)))
                .and_then(|i| i.with("team", flag(c.teamplay)))
                .and_then(|i| i.with("coop", flag(c.coop)))
                .and_then(|i| i.with("numcl", self.human_count().to_string()))
                .and_then(|i| i.with("maxcl", c.max_players.to_string()))
                .and_then(|i| i.with("gamedir", &c.gamedir))
                .and_then(|i| i.with("password", flag(c.password.is_some())))
                .and_then(|i| i.with("host", &c.hostname))
                .ok()?;
            InfoReply::Info(info)
        } else {
            InfoReply::WrongVersion {
                host: c.hostname.as_bytes().to_vec(),
            }
        };
        let mut b = Vec::new();
        reply.encode(&mut b);
        Some(b)
    }

    /// The A2S_INFO reply (`SV_SourceQuery_Details`); a GoldSrc server reports
    /// protocol 48, HLDS's version string and its game's Steam app ID.
    pub fn a2s_info(&self) -> Vec<u8> {
        let c = &self.config;
        let (version, app_id) = match c.protocol {
            Protocol::Xash => (ENGINE_VERSION, 0),
            Protocol::GoldSrc => (GOLDSRC_VERSION, goldsrc_app_id(&c.gamedir)),
        };
        let r = a2s::InfoReply {
            protocol: c.protocol.number(),
            name: c.hostname.as_bytes().to_vec(),
            map: c.map.as_bytes().to_vec(),
            folder: c.gamedir.as_bytes().to_vec(),
            game: c.game.as_bytes().to_vec(),
            app_id,
            players: self.total_count().min(255) as u8,
            max_players: c.max_players,
            bots: self.bot_count().min(255) as u8,
            server_type: if c.dedicated { b'd' } else { b'l' },
            environment: c.environment,
            password: c.password.is_some(),
            secure: c.secure,
            version: version.as_bytes().to_vec(),
            extra: None,
        };
        let mut b = Vec::new();
        r.encode(&mut b);
        b
    }

    /// The A2S_PLAYER reply, or `None` when the engine sends nothing (no players,
    /// a password, or `expose_players` off).
    pub fn a2s_players(&self, now: Instant) -> Option<Vec<u8>> {
        if !self.config.expose_players || self.config.password.is_some() {
            return None;
        }
        let players: Vec<A2sPlayer> = self
            .occupants()
            .zip(0u8..)
            .map(|(o, index)| A2sPlayer {
                index,
                name: o.name.as_bytes().to_vec(),
                frags: o.frags,
                duration: o.duration(now),
            })
            .collect();
        if players.is_empty() {
            return None;
        }
        let mut b = Vec::new();
        PlayersReply { players }.encode(&mut b);
        Some(b)
    }

    /// The A2S_RULES reply as one message (split by the caller if too long), or
    /// `None` with no rules.
    pub fn a2s_rules(&self) -> Option<Vec<u8>> {
        if self.config.rules.is_empty() {
            return None;
        }
        let r = RulesReply {
            rules: self
                .config
                .rules
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
        };
        let mut b = Vec::new();
        r.encode(&mut b);
        Some(b)
    }

    /// Queues `message` to `to`, split into GoldSrc fragments if it is longer than
    /// `split_size`.
    fn send_long(&mut self, message: Vec<u8>, to: SocketAddr, out: &mut Outbox) {
        if message.len() <= self.config.split_size {
            out.push(to, &message);
            return;
        }
        self.split_sequence = self.split_sequence.wrapping_add(1);
        match split(
            &message,
            SplitForm::GoldSrc,
            self.split_sequence,
            self.config.split_size,
        ) {
            Ok(parts) => {
                self.stats.split_packets += parts.len() as u64;
                for part in &parts {
                    out.push(to, part);
                }
            }
            // Config::validate keeps rules within five fragments.
            Err(_) => self.stats.unknown += 1,
        }
    }

    fn connectionless(
        &mut self,
        p: &[u8],
        body: &[u8],
        from: SocketAddr,
        now: Instant,
        out: &mut Outbox,
    ) {
        // The binary A2S requests carry their challenge after the type byte.
        let challenge = || {
            p.get(5..9)
                .and_then(|b| b.try_into().ok())
                .map(i32::from_le_bytes)
        };
        match body.first() {
            Some(b'U') => return self.challenged(from, challenge(), now, out, Query::Players),
            Some(b'V') => return self.challenged(from, challenge(), now, out, Query::Rules),
            _ => {}
        }
        let end = body
            .iter()
            .position(|&b| b == b'\n' || b == 0)
            .unwrap_or(body.len());
        let line = &body[..end];
        if line == b"TSource Engine Query" {
            // Any challenge appended (qstat, newer tools) is ignored: Xash never asks.
            self.stats.a2s_info += 1;
            out.push(from, &self.a2s_info());
            return;
        }
        let tokens = tokenize(line);
        let Some(word) = tokens.first() else {
            self.stats.unknown += 1;
            return;
        };
        if self.config.protocol == Protocol::GoldSrc {
            // A GoldSrc server knows none of Xash's text queries or its handshake;
            // the old GoldSrc text queries stay as `legacy_queries` says.
            match word.as_slice() {
                b"details" | b"players" | b"rules" | b"infostring" => {
                    self.legacy(word, from, now, out)
                }
                _ => self.stats.goldsrc_ignored += 1,
            }
            return;
        }
        match word.as_slice() {
            b"ping" | b"i" => {
                let ping = Ping::decode(p).unwrap_or(if word == b"i" {
                    Ping::GoldSrc
                } else {
                    Ping::Xash
                });
                let ack: Ack = ping.reply();
                let mut b = Vec::new();
                ack.encode(&mut b);
                out.push(from, &b);
                self.stats.pings += 1;
            }
            b"ack" | b"j" => self.stats.acks += 1,
            b"info" => {
                if self.config.max_players <= 1 {
                    self.stats.single_player_ignored += 1;
                    return;
                }
                // Q_atoi: an unparsable version is 0, which gets "wrong version".
                let protocol = InfoQuery::decode(p)
                    .map(|q| q.protocol)
                    .unwrap_or_else(|_| {
                        u32::try_from(tokens.get(1).map_or(0, |t| atoi(t))).unwrap_or(0)
                    });
                if let Some(b) = self.info_reply(protocol) {
                    out.push(from, &b);
                    self.stats.info_queries += 1;
                }
            }
            b"getchallenge" | b"bandwidth" | b"connect" => {
                self.handshake(p, &tokens, from, now, out)
            }
            b"disconnect" => self.disconnect(from, now, out),
            b"details" | b"players" | b"rules" | b"infostring" => self.legacy(word, from, now, out),
            b"s" => self.stats.challenge_not_from_master += 1,
            b"c" => self.stats.nat_ignored += 1,
            _ => self.stats.unknown += 1,
        }
    }

    /// A2S_PLAYER / A2S_RULES: −1, a missing or an invalid challenge gets `A` + a
    /// fresh one (python-a2s asks with 0, qstat with whatever it holds).
    fn challenged(
        &mut self,
        from: SocketAddr,
        challenge: Option<i32>,
        now: Instant,
        out: &mut Outbox,
        query: Query,
    ) {
        let ok = challenge
            .is_some_and(|c| c != a2s::NO_CHALLENGE && self.challenge_valid(from.ip(), c, now));
        if !ok {
            let mut b = Vec::with_capacity(9);
            a2s::ChallengeReply {
                challenge: self.challenge(from.ip(), now),
            }
            .encode(&mut b);
            out.push(from, &b);
            self.stats.a2s_challenges += 1;
            return;
        }
        let reply = match query {
            Query::Players => self.a2s_players(now),
            Query::Rules => self.a2s_rules(),
        };
        match reply {
            Some(b) => {
                match query {
                    Query::Players => self.stats.a2s_players += 1,
                    Query::Rules => self.stats.a2s_rules += 1,
                }
                self.send_long(b, from, out);
            }
            None => self.stats.a2s_empty += 1,
        }
    }

    fn legacy(&mut self, word: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        if !self.config.legacy_queries {
            self.stats.legacy_ignored += 1;
            return;
        }
        let reply = match word {
            b"details" => {
                let c = &self.config;
                let r = LegacyInfoReply {
                    address: self
                        .local_addr
                        .map(|a| a.to_string())
                        .unwrap_or_default()
                        .into_bytes(),
                    name: c.hostname.as_bytes().to_vec(),
                    map: c.map.as_bytes().to_vec(),
                    folder: c.gamedir.as_bytes().to_vec(),
                    game: c.game.as_bytes().to_vec(),
                    players: self.total_count().min(255) as u8,
                    max_players: c.max_players,
                    protocol: 48,
                    server_type: if c.dedicated { b'd' } else { b'l' },
                    environment: c.environment,
                    password: c.password.is_some(),
                    mod_info: None,
                    secure: c.secure,
                    bots: self.bot_count().min(255) as u8,
                };
                let mut b = Vec::new();
                r.encode(&mut b);
                Some(b)
            }
            b"players" => self.a2s_players(now),
            b"rules" => self.a2s_rules(),
            _ => None,
        };
        match reply {
            Some(b) => {
                self.stats.legacy_answered += 1;
                self.send_long(b, from, out);
            }
            None => self.stats.legacy_ignored += 1,
        }
    }

    fn reject(&mut self, to: SocketAddr, reason: &str, out: &mut Outbox) {
        self.stats.rejects += 1;
        for d in Reject::new(reason).datagrams() {
            out.push(to, &d);
        }
    }

    fn send_challenge(&mut self, to: SocketAddr, test: bool, now: Instant, out: &mut Outbox) {
        let mut b = Vec::new();
        ChallengeResponse::Xash {
            challenge: self.challenge(to.ip(), now),
            bandwidth_test: Some(test),
        }
        .encode(&mut b);
        out.push(to, &b);
    }

    fn handshake(
        &mut self,
        p: &[u8],
        tokens: &[Vec<u8>],
        from: SocketAddr,
        now: Instant,
        out: &mut Outbox,
    ) {
        let arg = |i: usize| tokens.get(i).map_or(0, |t| atoi(t));
        let as_i32 = |v: i64| i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX });
        // The typed decoders cover well-formed requests; the engine also reads
        // malformed ones argument by argument, so fall back to that.
        match HandshakeRequest::decode(p) {
            Ok(HandshakeRequest::GetChallenge(_)) => self.getchallenge(from, now, out),
            Ok(HandshakeRequest::Bandwidth(BandwidthTest {
                protocol,
                size,
                challenge,
            })) => self.bandwidth(from, protocol, i64::from(size), challenge, now, out),
            Ok(HandshakeRequest::Connect(c)) => self.connect(from, 5, c, now, out),
            Err(_) => match tokens.first().map(Vec::as_slice) {
                Some(b"getchallenge") => self.getchallenge(from, now, out),
                Some(b"bandwidth") => {
                    let challenge = tokens.get(3).map(|t| as_i32(atoi(t)));
                    self.bandwidth(from, as_i32(arg(1)), arg(2), challenge, now, out)
                }
                _ => {
                    let info = |i: usize| {
                        tokens
                            .get(i)
                            .and_then(|t| InfoString::parse(t).ok())
                            .unwrap_or_default()
                    };
                    let c = Connect {
                        protocol: as_i32(arg(1)),
                        challenge: as_i32(arg(2)),
                        protinfo: info(3),
                        userinfo: info(4),
                    };
                    let valid =
                        |i: usize| tokens.get(i).is_some_and(|t| InfoString::parse(t).is_ok());
                    self.connect_checked(from, tokens.len(), c, (valid(3), valid(4)), now, out)
                }
            },
        }
    }

    fn getchallenge(&mut self, from: SocketAddr, now: Instant, out: &mut Outbox) {
        self.stats.getchallenges += 1;
        let test = self.config.bandwidth_test;
        self.send_challenge(from, test, now, out);
    }

    /// `SV_TestBandWidth`.
    fn bandwidth(
        &mut self,
        from: SocketAddr,
        protocol: i32,
        size: i64,
        challenge: Option<i32>,
        now: Instant,
        out: &mut Outbox,
    ) {
        if protocol != PROTOCOL {
            return self.reject(from, &reason::protocol(protocol), out);
        }
        let Some(challenge) = challenge else {
            self.stats.bandwidth_skipped += 1;
            return self.send_challenge(from, false, now, out);
        };
        if !self.challenge_valid(from.ip(), challenge, now) {
            return self.reject(from, reason::NO_CHALLENGE, out);
        }
        let testable =
            size > i64::from(BandwidthTest::MIN_SIZE) && size <= i64::from(BandwidthTest::MAX_SIZE);
        let packet = usize::try_from(size)
            .ok()
            .filter(|_| testable && self.config.bandwidth_test)
            .and_then(|n| TestPacket::with_size(n, &self.filler).ok());
        match packet {
            Some(t) => {
                let mut b = Vec::with_capacity(t.len());
                t.encode(&mut b);
                out.push(from, &b);
                self.stats.test_packets += 1;
            }
            None => {
                self.stats.bandwidth_skipped += 1;
                self.send_challenge(from, false, now, out);
            }
        }
    }

    fn connect(
        &mut self,
        from: SocketAddr,
        argc: usize,
        c: Connect,
        now: Instant,
        out: &mut Outbox,
    ) {
        self.connect_checked(from, argc, c, (true, true), now, out)
    }

    /// `SV_ConnectClient`, checks in the engine's order.
    fn connect_checked(
        &mut self,
        from: SocketAddr,
        argc: usize,
        c: Connect,
        (protinfo_ok, userinfo_ok): (bool, bool),
        now: Instant,
        out: &mut Outbox,
    ) {
        if argc < 5 {
            return self.reject(from, reason::INSUFFICIENT, out);
        }
        if c.protocol != PROTOCOL {
            return self.reject(from, &reason::protocol(c.protocol), out);
        }
        if !self.challenge_valid(from.ip(), c.challenge, now) {
            return self.reject(from, reason::NO_CHALLENGE, out);
        }
        if !protinfo_ok {
            return self.reject(from, reason::BAD_PROTINFO, out);
        }
        let uuid_ok = c.protinfo.get("uuid").is_some_and(|u| {
            u.len() == 32
                && u.iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        });
        if !uuid_ok {
            return self.reject(from, reason::BAD_CERT, out);
        }
        let qport = c.protinfo.get("qport").map_or(0, atoi);
        let qport = u16::try_from(qport).unwrap_or(0);
        let ext = c.protinfo.get("ext").map_or(0, atoi);
        if !userinfo_ok {
            return self.reject(from, reason::BAD_USERINFO, out);
        }
        if let Some(pw) = &self.config.password {
            let given = c.userinfo.get("password").unwrap_or_default();
            if !given.eq_ignore_ascii_case(pw.as_bytes()) {
                return self.reject(from, reason::BAD_PASSWORD, out);
            }
        }
        // A reconnecting client reuses its slot: same IP, and same qport or port.
        let reuse = self.slots.iter().position(|s| {
            matches!(s, Some(Occupant { kind: OccupantKind::Client { addr, qport: q, .. }, .. })
                if addr.ip() == from.ip() && (*q == qport || addr.port() == from.port()))
        });
        let Some(slot) = reuse.or_else(|| self.slots.iter().position(Option::is_none)) else {
            return self.reject(from, reason::FULL, out);
        };
        let name = client_name(c.userinfo.get("name"));
        self.slots[slot] = Some(Occupant {
            name,
            frags: 0,
            kind: OccupantKind::Client {
                addr: from,
                qport,
                last_seen: now,
            },
            joined: now,
            before: Duration::ZERO,
        });
        let granted = ServerProtInfo {
            ext: if ext & i64::from(EXT_SPLITSIZE) != 0 {
                EXT_SPLITSIZE
            } else {
                0
            },
            cheats: false,
            challenge: Some(c.challenge),
            cookie: None,
        };
        match granted.to_info() {
            Ok(protinfo) => {
                let mut b = Vec::new();
                ClientConnect { protinfo }.encode(&mut b);
                out.push(from, &b);
            }
            Err(_) => self.stats.unknown += 1,
        }
        self.stats.connects += 1;
        // SV_MaybeNotifyPlayerCountChange: the first client, or the server became full.
        let n = self.total_count();
        if n == 1 || n == usize::from(self.config.max_players) {
            self.heartbeat(now, out);
        }
    }

    /// `disconnect` from a connected client frees its slot; the server becoming
    /// empty sends a heartbeat at once.
    fn disconnect(&mut self, from: SocketAddr, now: Instant, out: &mut Outbox) {
        let mut dropped = false;
        for slot in &mut self.slots {
            if matches!(slot, Some(Occupant { kind: OccupantKind::Client { addr, .. }, .. }) if *addr == from)
            {
                *slot = None;
                dropped = true;
            }
        }
        if !dropped {
            self.stats.unknown += 1;
            return;
        }
        self.stats.disconnects += 1;
        if self.total_count() == 0 {
            self.heartbeat(now, out);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Query {
    Players,
    Rules,
}

/// The version string a Steam HLDS reports in A2S_INFO.
const GOLDSRC_VERSION: &str = "1.1.2.7/Stdio";

/// The Steam app ID a GoldSrc server reports for `gamedir` (Half-Life's, 70, for
/// mods and anything unknown).
fn goldsrc_app_id(gamedir: &str) -> i16 {
    match gamedir {
        "cstrike" => 10,
        "tfc" => 20,
        "dod" => 30,
        "dmc" => 40,
        "gearbox" => 50,
        "ricochet" => 60,
        "czero" => 80,
        _ => 70,
    }
}

/// The scoreboard name of a connecting client: its `name`, cut to 31 bytes.
fn client_name(name: Option<&[u8]>) -> String {
    let text = String::from_utf8_lossy(name.unwrap_or_default());
    let mut s: String = text.trim().to_string();
    if s.is_empty() {
        s = "Player".into();
    }
    while s.len() > crate::config::MAX_NAME {
        s.pop();
    }
    s
}

impl sansio::Engine for Server {
    fn handle(&mut self, datagram: &[u8], from: SocketAddr, now: Instant, out: &mut Outbox) {
        Server::handle(self, datagram, from, now, out);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Server::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        Server::handle_timeout(self, now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_is_q_atoi() {
        assert_eq!(atoi(b"49"), 49);
        assert_eq!(atoi(b"-12x"), -12);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b""), 0);
        assert_eq!(atoi(b"99999999999999999999999"), i64::MAX);
    }

    #[test]
    fn reserved_addresses() {
        for a in [
            "10.1.2.3",
            "127.0.0.1",
            "172.16.0.1",
            "172.31.9.9",
            "192.168.1.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_reserved(a.parse().unwrap()), "{a}");
        }
        for a in [
            "8.8.8.8",
            "172.32.0.1",
            "192.169.0.1",
            "2001:db8::1",
            "::ffff:1.2.3.4",
        ] {
            assert!(!is_reserved(a.parse().unwrap()), "{a}");
        }
    }
}
