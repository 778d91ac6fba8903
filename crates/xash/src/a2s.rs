//! GoldSrc / Source "A2S" server queries and their replies, both directions.
//!
//! Xash3D FWGS servers answer these binary queries so that existing server browsers
//! and monitoring tools (qstat, gamedig, HLSW, the Xash client itself for `gs`
//! servers) work unchanged. Layouts follow section 2 of
//! `docs/notes/xash3d-master-and-queries.md` and the capture
//! `testdata/xash3d/probe/00_a2s_info.*`:
//!
//! | type | bytes |
//! |---|---|
//! | [`InfoRequest`] | `FF×4 "TSource Engine Query\0"` [+ i32 challenge] |
//! | [`InfoReply`] | `FF×4 'I'` + proto + 4 strings + i16 appid + 3×u8 + type + env + password + secure + version [+ EDF] |
//! | [`LegacyInfoReply`] | `FF×4 'm'` + address + 4 strings + 6×u8 + mod flag [+ mod block] + secure + bots |
//! | [`PlayersRequest`] | `FF×4 'U'` + i32 challenge |
//! | [`PlayersReply`] | `FF×4 'D'` + u8 count + (u8 index, name, i32 frags, f32 seconds)* |
//! | [`RulesRequest`] | `FF×4 'V'` + i32 challenge |
//! | [`RulesReply`] | `FF×4 'E'` + u16 count + (name, value)* |
//! | [`ChallengeReply`] | `FF×4 'A'` + i32 challenge |
//!
//! Strings are NUL-terminated and kept as raw bytes: server names carry `^N` colour
//! codes and are not guaranteed to be UTF-8, and keeping the bytes lets every reply
//! re-encode to exactly what was received. All decoders are total: hostile input
//! gives an [`Error`], never a panic, and a count field is checked against the bytes
//! actually present before anything is allocated for it.
//!
//! Replies that were split into `FE FF FF FF` fragments must be put back together
//! with [`crate::split::Reassembler`] before they are decoded here.

use crate::{Error, OOB};
use wire::{put_cstr, Cursor};

/// The challenge value a client sends when it has none yet (`FF FF FF FF`); servers
/// that require challenges answer it with a [`ChallengeReply`].
pub const NO_CHALLENGE: i32 = -1;

/// Reads the `FF×4` prefix and one header byte.
fn expect_header(c: &mut Cursor<'_>, header: &[u8]) -> Result<(), Error> {
    Ok(c.expect(header)?)
}

/// Appends `FF×4` + `kind`.
fn put_header(out: &mut Vec<u8>, header: &[u8]) {
    out.extend_from_slice(header);
}

/// A NUL-terminated string as owned bytes.
fn owned_cstr(c: &mut Cursor<'_>) -> Result<Vec<u8>, Error> {
    Ok(c.cstr()?.to_vec())
}

/// A2S_INFO request: `FF×4 "TSource Engine Query\0"`, optionally followed by an i32
/// challenge.
///
/// Since the December 2020 Steam update, Valve servers answer a bare request with a
/// [`ChallengeReply`] and tools (qstat, gamedig) then repeat the request with the
/// challenge appended. Xash servers ignore the suffix (the engine matches the whole
/// line up to the NUL), but a decoder must accept and expose it so a server
/// simulator can behave either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InfoRequest {
    /// The appended challenge, if any.
    pub challenge: Option<i32>,
}

impl InfoRequest {
    /// The full request prefix, out-of-band header included.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffTSource Engine Query\0";

    /// Decodes a request; bytes after the optional challenge are an error.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        expect_header(&mut c, Self::HEADER)?;
        let challenge = if c.remaining() == 0 {
            None
        } else {
            Some(c.i32_le()?)
        };
        c.finish()?;
        Ok(InfoRequest { challenge })
    }

    /// Appends the request.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        if let Some(ch) = self.challenge {
            out.extend_from_slice(&ch.to_le_bytes());
        }
    }
}

/// Source "extra data flag" (EDF) fields that may follow the version string of an
/// [`InfoReply`].
///
/// Xash servers never send them (the capture ends at the version string), but Source
/// and newer GoldSrc builds do, and a query tool must still read those replies. Each
/// field is present exactly when its flag bit is set; the fields appear in this
/// order on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExtraData {
    /// EDF `0x80`: the server's game port.
    pub port: Option<u16>,
    /// EDF `0x10`: the server's 64-bit Steam ID.
    pub steam_id: Option<u64>,
    /// EDF `0x40`: SourceTV port and name.
    pub source_tv: Option<(u16, Vec<u8>)>,
    /// EDF `0x20`: comma-separated keywords (tags).
    pub keywords: Option<Vec<u8>>,
    /// EDF `0x01`: the 64-bit game ID (low 24 bits are the app ID).
    pub game_id: Option<u64>,
    /// Flag bits without a defined field (`0x02`, `0x04`, `0x08`), kept so the byte
    /// re-encodes unchanged. Bits of defined fields are ignored here.
    pub unknown_flags: u8,
}

impl ExtraData {
    /// EDF bit for [`ExtraData::port`].
    pub const PORT: u8 = 0x80;
    /// EDF bit for [`ExtraData::steam_id`].
    pub const STEAM_ID: u8 = 0x10;
    /// EDF bit for [`ExtraData::source_tv`].
    pub const SOURCE_TV: u8 = 0x40;
    /// EDF bit for [`ExtraData::keywords`].
    pub const KEYWORDS: u8 = 0x20;
    /// EDF bit for [`ExtraData::game_id`].
    pub const GAME_ID: u8 = 0x01;
    /// All bits that carry a field.
    const KNOWN: u8 =
        Self::PORT | Self::STEAM_ID | Self::SOURCE_TV | Self::KEYWORDS | Self::GAME_ID;

    /// The flag byte these fields encode to.
    pub fn flags(&self) -> u8 {
        let mut f = self.unknown_flags & !Self::KNOWN;
        if self.port.is_some() {
            f |= Self::PORT;
        }
        if self.steam_id.is_some() {
            f |= Self::STEAM_ID;
        }
        if self.source_tv.is_some() {
            f |= Self::SOURCE_TV;
        }
        if self.keywords.is_some() {
            f |= Self::KEYWORDS;
        }
        if self.game_id.is_some() {
            f |= Self::GAME_ID;
        }
        f
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self, Error> {
        let flags = c.u8()?;
        let mut e = ExtraData {
            unknown_flags: flags & !Self::KNOWN,
            ..ExtraData::default()
        };
        if flags & Self::PORT != 0 {
            e.port = Some(c.u16_le()?);
        }
        if flags & Self::STEAM_ID != 0 {
            e.steam_id = Some(u64::from_le_bytes(c.array()?));
        }
        if flags & Self::SOURCE_TV != 0 {
            let port = c.u16_le()?;
            e.source_tv = Some((port, owned_cstr(c)?));
        }
        if flags & Self::KEYWORDS != 0 {
            e.keywords = Some(owned_cstr(c)?);
        }
        if flags & Self::GAME_ID != 0 {
            e.game_id = Some(u64::from_le_bytes(c.array()?));
        }
        Ok(e)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.flags());
        if let Some(p) = self.port {
            out.extend_from_slice(&p.to_le_bytes());
        }
        if let Some(id) = self.steam_id {
            out.extend_from_slice(&id.to_le_bytes());
        }
        if let Some((port, name)) = &self.source_tv {
            out.extend_from_slice(&port.to_le_bytes());
            put_cstr(out, name);
        }
        if let Some(k) = &self.keywords {
            put_cstr(out, k);
        }
        if let Some(g) = self.game_id {
            out.extend_from_slice(&g.to_le_bytes());
        }
    }
}

/// The Source-style A2S_INFO reply (`FF×4 'I'`), as the Xash engine
/// (`SV_SourceQuery_Details`) and modern GoldSrc servers send it.
///
/// Xash fills `protocol` = 49, `app_id` = 0, `players` including bots,
/// `server_type` `d`/`l`, `environment` = the build OS (`w`/`l`/`m`), `secure` =
/// gameinfo's `secure`, `version` = `"0.21"`, and no EDF. The password and secure
/// bytes are read as "non-zero means yes", as every client does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoReply {
    /// Network protocol: 49 for Xash3D FWGS, 48 for GoldSrc, 17 for Source.
    pub protocol: u8,
    /// Server name (`hostname`).
    pub name: Vec<u8>,
    /// Current map.
    pub map: Vec<u8>,
    /// Game directory (`valve`, `cstrike`...).
    pub folder: Vec<u8>,
    /// Game description from the game library.
    pub game: Vec<u8>,
    /// Steam app ID; always 0 from Xash servers.
    pub app_id: i16,
    /// Players, bots included.
    pub players: u8,
    /// Player slots.
    pub max_players: u8,
    /// Bots among `players`.
    pub bots: u8,
    /// `d` dedicated, `l` listen, `p` SourceTV proxy.
    pub server_type: u8,
    /// `l` Linux, `w` Windows, `m`/`o` macOS.
    pub environment: u8,
    /// A password is required to join.
    pub password: bool,
    /// VAC-secured (Xash: gameinfo `secure`).
    pub secure: bool,
    /// Game or engine version string.
    pub version: Vec<u8>,
    /// EDF block, if the server sent one (Xash never does).
    pub extra: Option<ExtraData>,
}

impl InfoReply {
    /// Out-of-band header + `'I'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffI";

    /// Decodes an `'I'` reply; bytes after the EDF block are an error.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        expect_header(&mut c, Self::HEADER)?;
        let protocol = c.u8()?;
        let name = owned_cstr(&mut c)?;
        let map = owned_cstr(&mut c)?;
        let folder = owned_cstr(&mut c)?;
        let game = owned_cstr(&mut c)?;
        let app_id = i16::from_le_bytes(c.array()?);
        let players = c.u8()?;
        let max_players = c.u8()?;
        let bots = c.u8()?;
        let server_type = c.u8()?;
        let environment = c.u8()?;
        let password = c.u8()? != 0;
        let secure = c.u8()? != 0;
        let version = owned_cstr(&mut c)?;
        let extra = if c.remaining() > 0 {
            Some(ExtraData::decode(&mut c)?)
        } else {
            None
        };
        c.finish()?;
        Ok(InfoReply {
            protocol,
            name,
            map,
            folder,
            game,
            app_id,
            players,
            max_players,
            bots,
            server_type,
            environment,
            password,
            secure,
            version,
            extra,
        })
    }

    /// Appends the reply.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        out.push(self.protocol);
        put_cstr(out, &self.name);
        put_cstr(out, &self.map);
        put_cstr(out, &self.folder);
        put_cstr(out, &self.game);
        out.extend_from_slice(&self.app_id.to_le_bytes());
        out.push(self.players);
        out.push(self.max_players);
        out.push(self.bots);
        out.push(self.server_type);
        out.push(self.environment);
        out.push(u8::from(self.password));
        out.push(u8::from(self.secure));
        put_cstr(out, &self.version);
        if let Some(e) = &self.extra {
            e.encode(out);
        }
    }
}

/// The "mod" block of a [`LegacyInfoReply`], present when the game is a Half-Life
/// mod (VDC layout).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModInfo {
    /// Mod website.
    pub link: Vec<u8>,
    /// Mod download URL.
    pub download_link: Vec<u8>,
    /// Mod version.
    pub version: u32,
    /// Mod size in bytes.
    pub size: u32,
    /// 1 = multiplayer-only mod, 0 = single and multiplayer.
    pub multiplayer_only: u8,
    /// 1 = the mod uses its own DLL, 0 = the Half-Life DLL.
    pub own_dll: u8,
}

/// The obsolete GoldSrc info reply (`FF×4 'm'`, S2A_GOLDSRC_LEGACY_INFO).
///
/// Old GoldSrc servers (and some current ones, to clients that ask for it) answer
/// A2S_INFO with this layout. Xash servers never send it; the Xash client parses it
/// as protocol 48. This follows the VDC layout: after the mod flag comes, if the
/// flag is non-zero, link\0 download\0, one unused NUL byte, u32 version, u32 size,
/// u8 type, u8 dll; then u8 secure and u8 bots. (The Xash client instead reads a
/// version string after the mod fields, which matches no real server.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyInfoReply {
    /// The server's `ip:port` as text.
    pub address: Vec<u8>,
    /// Server name.
    pub name: Vec<u8>,
    /// Current map.
    pub map: Vec<u8>,
    /// Game directory.
    pub folder: Vec<u8>,
    /// Game description.
    pub game: Vec<u8>,
    /// Players.
    pub players: u8,
    /// Player slots.
    pub max_players: u8,
    /// Network protocol (47/48).
    pub protocol: u8,
    /// `D`/`d` dedicated, `L`/`l` listen, `P`/`p` HLTV.
    pub server_type: u8,
    /// `L`/`l` Linux, `W`/`w` Windows.
    pub environment: u8,
    /// A password is required.
    pub password: bool,
    /// The mod block; `Some` exactly when the mod flag byte is non-zero.
    pub mod_info: Option<ModInfo>,
    /// VAC-secured.
    pub secure: bool,
    /// Bots.
    pub bots: u8,
}

impl LegacyInfoReply {
    /// Out-of-band header + `'m'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffm";

    /// Decodes an `'m'` reply; bytes after the bot count are an error.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        expect_header(&mut c, Self::HEADER)?;
        let address = owned_cstr(&mut c)?;
        let name = owned_cstr(&mut c)?;
        let map = owned_cstr(&mut c)?;
        let folder = owned_cstr(&mut c)?;
        let game = owned_cstr(&mut c)?;
        let players = c.u8()?;
        let max_players = c.u8()?;
        let protocol = c.u8()?;
        let server_type = c.u8()?;
        let environment = c.u8()?;
        let password = c.u8()? != 0;
        let mod_info = if c.u8()? != 0 {
            let link = owned_cstr(&mut c)?;
            let download_link = owned_cstr(&mut c)?;
            let _unused = c.u8()?;
            Some(ModInfo {
                link,
                download_link,
                version: c.u32_le()?,
                size: c.u32_le()?,
                multiplayer_only: c.u8()?,
                own_dll: c.u8()?,
            })
        } else {
            None
        };
        let secure = c.u8()? != 0;
        let bots = c.u8()?;
        c.finish()?;
        Ok(LegacyInfoReply {
            address,
            name,
            map,
            folder,
            game,
            players,
            max_players,
            protocol,
            server_type,
            environment,
            password,
            mod_info,
            secure,
            bots,
        })
    }

    /// Appends the reply (the unused byte of the mod block is written as 0).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        put_cstr(out, &self.address);
        put_cstr(out, &self.name);
        put_cstr(out, &self.map);
        put_cstr(out, &self.folder);
        put_cstr(out, &self.game);
        out.push(self.players);
        out.push(self.max_players);
        out.push(self.protocol);
        out.push(self.server_type);
        out.push(self.environment);
        out.push(u8::from(self.password));
        match &self.mod_info {
            None => out.push(0),
            Some(m) => {
                out.push(1);
                put_cstr(out, &m.link);
                put_cstr(out, &m.download_link);
                out.push(0);
                out.extend_from_slice(&m.version.to_le_bytes());
                out.extend_from_slice(&m.size.to_le_bytes());
                out.push(m.multiplayer_only);
                out.push(m.own_dll);
            }
        }
        out.push(u8::from(self.secure));
        out.push(self.bots);
    }
}

/// Shared shape of the `U` and `V` requests: header byte + i32 challenge.
fn decode_challenged(packet: &[u8], header: &[u8]) -> Result<i32, Error> {
    let mut c = Cursor::new(packet);
    expect_header(&mut c, header)?;
    let challenge = c.i32_le()?;
    c.finish()?;
    Ok(challenge)
}

/// A2S_PLAYER request: `FF×4 'U'` + i32 challenge.
///
/// Clients without a challenge send [`NO_CHALLENGE`]; the Xash server then answers
/// with a [`ChallengeReply`] (the same challenge later validates `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayersRequest {
    /// The challenge, or [`NO_CHALLENGE`].
    pub challenge: i32,
}

impl PlayersRequest {
    /// Out-of-band header + `'U'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffU";

    /// Decodes a request; the challenge is required, nothing may follow it.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        Ok(PlayersRequest {
            challenge: decode_challenged(packet, Self::HEADER)?,
        })
    }

    /// Appends the request.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        out.extend_from_slice(&self.challenge.to_le_bytes());
    }
}

/// One entry of a [`PlayersReply`].
#[derive(Debug, Clone, PartialEq)]
pub struct Player {
    /// Xash: the client slot (from 0); GoldSrc sends 0 for everyone.
    pub index: u8,
    /// Player name (may carry `^N` colour codes).
    pub name: Vec<u8>,
    /// Score.
    pub frags: i32,
    /// Seconds connected; Xash sends -1.0 for bots.
    pub duration: f32,
}

/// Smallest encoded player: index + empty name + frags + duration.
const MIN_PLAYER_LEN: usize = 1 + 1 + 4 + 4;

/// A2S_PLAYER reply: `FF×4 'D'` + u8 count + count × [`Player`].
///
/// A Xash server sends nothing at all when it has no players, a password is set,
/// or `sv_expose_player_list` is 0, so an empty list is never seen from Xash (but
/// other servers send one and it decodes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlayersReply {
    /// Players in wire order.
    pub players: Vec<Player>,
}

impl PlayersReply {
    /// Out-of-band header + `'D'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffD";

    /// Decodes a reply. The count must match the entries exactly: a count the
    /// remaining bytes cannot hold is [`Error::BadLength`], leftover bytes are
    /// [`Error::Trailing`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        expect_header(&mut c, Self::HEADER)?;
        let count = usize::from(c.u8()?);
        if count.saturating_mul(MIN_PLAYER_LEN) > c.remaining() {
            return Err(Error::BadLength("player count exceeds packet"));
        }
        let mut players = Vec::with_capacity(count);
        for _ in 0..count {
            players.push(Player {
                index: c.u8()?,
                name: owned_cstr(&mut c)?,
                frags: c.i32_le()?,
                duration: c.f32_le()?,
            });
        }
        c.finish()?;
        Ok(PlayersReply { players })
    }

    /// Appends the reply. Only the first 255 players are written, as the count is a
    /// byte.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        let n = self.players.len().min(usize::from(u8::MAX));
        out.push(n as u8);
        for p in &self.players[..n] {
            out.push(p.index);
            put_cstr(out, &p.name);
            out.extend_from_slice(&p.frags.to_le_bytes());
            out.extend_from_slice(&p.duration.to_le_bytes());
        }
    }
}

/// A2S_RULES request: `FF×4 'V'` + i32 challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RulesRequest {
    /// The challenge, or [`NO_CHALLENGE`].
    pub challenge: i32,
}

impl RulesRequest {
    /// Out-of-band header + `'V'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffV";

    /// Decodes a request; the challenge is required, nothing may follow it.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        Ok(RulesRequest {
            challenge: decode_challenged(packet, Self::HEADER)?,
        })
    }

    /// Appends the request.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        out.extend_from_slice(&self.challenge.to_le_bytes());
    }
}

/// A2S_RULES reply: `FF×4 'E'` + u16 count + count × (name\0 value\0).
///
/// Xash lists its `FCVAR_SERVER` cvars, with `FCVAR_PROTECTED` values replaced by
/// `1`/`0`, in one datagram. GoldSrc servers with many cvars split this reply into
/// `FE` fragments; see [`crate::split`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RulesReply {
    /// `(name, value)` pairs in wire order.
    pub rules: Vec<(Vec<u8>, Vec<u8>)>,
}

impl RulesReply {
    /// Out-of-band header + `'E'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffE";

    /// Decodes a reply. The count must match the entries exactly: a count the
    /// remaining bytes cannot hold is [`Error::BadLength`], leftover bytes are
    /// [`Error::Trailing`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(packet);
        expect_header(&mut c, Self::HEADER)?;
        let count = usize::from(c.u16_le()?);
        // Each rule is at least two NULs.
        if count.saturating_mul(2) > c.remaining() {
            return Err(Error::BadLength("rule count exceeds packet"));
        }
        let mut rules = Vec::with_capacity(count);
        for _ in 0..count {
            let name = owned_cstr(&mut c)?;
            let value = owned_cstr(&mut c)?;
            rules.push((name, value));
        }
        c.finish()?;
        Ok(RulesReply { rules })
    }

    /// Appends the reply. Only the first 65535 rules are written, as the count is a
    /// u16.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        let n = self.rules.len().min(usize::from(u16::MAX));
        out.extend_from_slice(&(n as u16).to_le_bytes());
        for (k, v) in &self.rules[..n] {
            put_cstr(out, k);
            put_cstr(out, v);
        }
    }

    /// The first value for `name`.
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.rules
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// The query challenge reply: `FF×4 'A'` + i32 (9 bytes).
///
/// Sent instead of data when a `U`/`V` (or, on Valve servers, `T`) request carried no
/// or a stale challenge; the client repeats the request with this value. Not to be
/// confused with the textual `A00000000 ...` connect challenge of GoldSrc servers
/// ([`crate::handshake::ChallengeResponse::GoldSrc`]), which only shares the first
/// byte: [`ChallengeReply::decode`] rejects it because of its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChallengeReply {
    /// The challenge to send back.
    pub challenge: i32,
}

impl ChallengeReply {
    /// Out-of-band header + `'A'`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffA";

    /// Decodes a reply of exactly 9 bytes.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        Ok(ChallengeReply {
            challenge: decode_challenged(packet, Self::HEADER)?,
        })
    }

    /// Appends the reply.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_header(out, Self::HEADER);
        out.extend_from_slice(&self.challenge.to_le_bytes());
    }
}

/// Any A2S request, for a server that dispatches on the header byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `T`: [`InfoRequest`].
    Info(InfoRequest),
    /// `U`: [`PlayersRequest`].
    Players(PlayersRequest),
    /// `V`: [`RulesRequest`].
    Rules(RulesRequest),
}

impl Request {
    /// Decodes by the byte after `FF×4`; anything else is [`Error::WrongHeader`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let kind = packet
            .strip_prefix(&OOB[..])
            .and_then(|r| r.first())
            .ok_or(Error::WrongHeader)?;
        match kind {
            b'T' => InfoRequest::decode(packet).map(Request::Info),
            b'U' => PlayersRequest::decode(packet).map(Request::Players),
            b'V' => RulesRequest::decode(packet).map(Request::Rules),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Appends the request.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Request::Info(r) => r.encode(out),
            Request::Players(r) => r.encode(out),
            Request::Rules(r) => r.encode(out),
        }
    }
}

/// Any A2S reply, for a client that has several queries in flight.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `I`: [`InfoReply`].
    Info(InfoReply),
    /// `m`: [`LegacyInfoReply`].
    LegacyInfo(LegacyInfoReply),
    /// `D`: [`PlayersReply`].
    Players(PlayersReply),
    /// `E`: [`RulesReply`].
    Rules(RulesReply),
    /// `A`: [`ChallengeReply`].
    Challenge(ChallengeReply),
}

impl Reply {
    /// Decodes by the byte after `FF×4` (`I`, `m`, `D`, `E`, `A`); anything else,
    /// including a split `FE FF FF FF` fragment, is [`Error::WrongHeader`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let kind = packet
            .strip_prefix(&OOB[..])
            .and_then(|r| r.first())
            .ok_or(Error::WrongHeader)?;
        match kind {
            b'I' => InfoReply::decode(packet).map(Reply::Info),
            b'm' => LegacyInfoReply::decode(packet).map(Reply::LegacyInfo),
            b'D' => PlayersReply::decode(packet).map(Reply::Players),
            b'E' => RulesReply::decode(packet).map(Reply::Rules),
            b'A' => ChallengeReply::decode(packet).map(Reply::Challenge),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Appends the reply.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Info(r) => r.encode(out),
            Reply::LegacyInfo(r) => r.encode(out),
            Reply::Players(r) => r.encode(out),
            Reply::Rules(r) => r.encode(out),
            Reply::Challenge(r) => r.encode(out),
        }
    }
}
