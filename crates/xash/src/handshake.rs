//! The connect handshake between a client and a Xash3D FWGS (or GoldSrc) server.
//!
//! ```text
//! client                                   server
//!   getchallenge steam\n          ──▶
//!                                 ◀──  challenge <i32> <0|1>      (GoldSrc: A00000000 <chal> <auth> ...)
//!   bandwidth 49 <size> <chal>\n  ──▶                            (only if the second field was 1)
//!                                 ◀──  FF×4 testpacket\0 + CRC32 + filler, exactly <size> bytes
//!   connect 49 <chal> "<protinfo>" "<userinfo>"\n ──▶
//!                                 ◀──  client_connect <protinfo>
//!                             or  ◀──  errormsg\n…, print\n…, disconnect\n   (SV_RejectConnection)
//! ```
//!
//! Every message is `FF FF FF FF` + text with no NUL (the engine's
//! `Netchan_OutOfBandPrint`), except the binary test packet. The receiver reads the
//! first line (up to `\n` or NUL, `MSG_ReadStringLine`) and splits it into
//! arguments with [`tokenize`], the engine's `Cmd_TokenizeString`; `errormsg` and
//! `print` carry their text after that line. Decoders here do the same, then check
//! the arguments strictly: a wrong command word is [`Error::WrongHeader`], a bad or
//! missing argument is [`Error::InvalidField`], extra arguments are
//! [`Error::InvalidField`] too, and bytes after a line that ends the message are
//! [`Error::Trailing`]. A final `\n` is accepted whether or not the sender wrote one;
//! encoders write exactly what the engine writes. Byte layouts: section 2 of
//! `docs/notes/xash3d-master-and-queries.md`.

use crate::info::{parse_flag, parse_num};
use crate::{Error, InfoString, OOB};

/// The protocol version a `bandwidth`/`connect` request must carry.
pub const PROTOCOL: i32 = 49;

/// Most arguments the engine keeps from one command line (`MAX_CMD_TOKENS`); further
/// ones are dropped, as the engine drops them.
pub const MAX_TOKENS: usize = 80;

/// Characters `COM_ParseFile` returns as one-character tokens when they are not
/// inside quotes.
fn is_single_char(b: u8) -> bool {
    matches!(b, b'{' | b'}' | b'(' | b')' | b'\'' | b',')
}

/// Splits one command line into arguments exactly as the engine's
/// `Cmd_TokenizeString` + `COM_ParseFile` do: bytes up to space (every byte ≤ 0x20)
/// separate words; `//` at the start of a word comments out the rest of the line;
/// `"…"` is one argument that may contain anything, where `\"` stands for `"` and a
/// missing closing quote ends the argument at the end of the line; each of
/// `{ } ( ) ' ,` outside quotes is an argument by itself. At most [`MAX_TOKENS`]
/// arguments are returned.
///
/// `line` must already be cut at the first `\n` or NUL.
pub fn tokenize(line: &[u8]) -> Vec<Vec<u8>> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < line.len() && tokens.len() < MAX_TOKENS {
        let c = line[i];
        if c <= b' ' {
            i += 1;
            continue;
        }
        if c == b'/' && line.get(i + 1) == Some(&b'/') {
            break; // comment to the end of the line
        }
        let mut tok = Vec::new();
        if c == b'"' {
            i += 1;
            while let Some(&c) = line.get(i) {
                i += 1;
                if c == b'\\' && line.get(i) == Some(&b'"') {
                    tok.push(b'"');
                    i += 1;
                } else if c == b'"' {
                    break;
                } else {
                    tok.push(c);
                }
            }
        } else if is_single_char(c) {
            tok.push(c);
            i += 1;
        } else {
            while let Some(&c) = line.get(i) {
                if c <= b' ' || is_single_char(c) {
                    break;
                }
                tok.push(c);
                i += 1;
            }
        }
        tokens.push(tok);
    }
    tokens
}

/// Whether `arg` must be quoted to come back from [`tokenize`] as one argument.
fn needs_quotes(arg: &[u8]) -> bool {
    arg.is_empty()
        || arg.starts_with(b"//")
        || arg
            .iter()
            .any(|&b| b <= b' ' || b == b'"' || is_single_char(b))
}

/// Appends `arg` in double quotes, writing `"` as `\"`. (A value ending in `\`
/// cannot be quoted: the tokenizer reads `\"` as an escaped quote. The engine has
/// the same limitation.)
fn put_quoted(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'"');
    for &b in arg {
        if b == b'"' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// Appends `arg` bare when [`tokenize`] would read it back unchanged, else quoted.
fn put_arg(out: &mut Vec<u8>, arg: &[u8]) {
    if needs_quotes(arg) {
        put_quoted(out, arg);
    } else {
        out.extend_from_slice(arg);
    }
}

/// The first line of an out-of-band text packet and what follows it.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    /// Arguments are parsed from this (no terminator).
    text: &'a [u8],
    /// `\n`, NUL, or `None` when the packet ended first.
    terminator: Option<u8>,
    /// Bytes after the terminator.
    rest: &'a [u8],
}

/// Strips `FF×4` and cuts the first line as `MSG_ReadStringLine` does.
fn read_line(packet: &[u8]) -> Result<Line<'_>, Error> {
    let body = packet.strip_prefix(&OOB[..]).ok_or(Error::WrongHeader)?;
    Ok(match body.iter().position(|&b| b == b'\n' || b == 0) {
        Some(i) => Line {
            text: &body[..i],
            terminator: Some(body[i]),
            rest: &body[i + 1..],
        },
        None => Line {
            text: body,
            terminator: None,
            rest: &[],
        },
    })
}

/// Reads a one-line message whose command word is `command`; returns its arguments
/// (command included) and whether the line ended with `\n`.
fn command(packet: &[u8], command: &[u8]) -> Result<(Vec<Vec<u8>>, bool), Error> {
    let line = read_line(packet)?;
    let tokens = tokenize(line.text);
    if tokens.first().map(Vec::as_slice) != Some(command) {
        return Err(Error::WrongHeader);
    }
    if !line.rest.is_empty() {
        return Err(Error::Trailing(line.rest.len()));
    }
    Ok((tokens, line.terminator == Some(b'\n')))
}

/// Fails unless there are between `min` and `max` arguments after the command.
fn arg_count(tokens: &[Vec<u8>], min: usize, max: usize) -> Result<(), Error> {
    let n = tokens.len().saturating_sub(1);
    if n < min {
        return Err(Error::InvalidField("missing arguments"));
    }
    if n > max {
        return Err(Error::InvalidField("too many arguments"));
    }
    Ok(())
}

/// A signed decimal (`%i`): optional `-`, then digits, fitting `i32`.
fn parse_i32(t: &[u8]) -> Option<i32> {
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse().ok()
}

/// Appends `FF×4`.
fn put_oob(out: &mut Vec<u8>) {
    out.extend_from_slice(&OOB);
}

/// C2S_GETCHALLENGE: `FF×4 "getchallenge steam\n"`.
///
/// The engine client always adds `steam` so that a GoldSrc server answers in its own
/// format and can be detected; older clients and probes (capture
/// `13_getchallenge.req.bin`) send a bare `getchallenge`. The server ignores the
/// argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetChallenge {
    /// The `steam` argument is present.
    pub steam: bool,
    /// The line ends with `\n` (the engine client writes one; the capture has none).
    pub newline: bool,
}

impl Default for GetChallenge {
    /// What the engine client sends: `getchallenge steam\n`.
    fn default() -> Self {
        GetChallenge {
            steam: true,
            newline: true,
        }
    }
}

impl GetChallenge {
    /// `FF×4` + the command word.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffgetchallenge";

    /// Decodes the request; the only argument allowed is `steam`.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let (tokens, newline) = command(packet, b"getchallenge")?;
        arg_count(&tokens, 0, 1)?;
        let steam = match tokens.get(1) {
            None => false,
            Some(a) if a == b"steam" => true,
            Some(_) => return Err(Error::InvalidField("getchallenge argument")),
        };
        Ok(GetChallenge { steam, newline })
    }

    /// Appends the request.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        if self.steam {
            out.extend_from_slice(b" steam");
        }
        if self.newline {
            out.push(b'\n');
        }
    }
}

/// The server's answer to [`GetChallenge`] (or to a [`BandwidthTest`] it will not
/// run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeResponse {
    /// Xash: `FF×4 "challenge <i32> <0|1>"`, no newline (`SV_SendChallenge`).
    Xash {
        /// The challenge to put in `bandwidth`/`connect`.
        challenge: i32,
        /// The second field: `Some(true)` = the client may run the bandwidth test.
        /// `None` when absent (older engines); clients then treat it as 0.
        bandwidth_test: Option<bool>,
    },
    /// GoldSrc: `FF×4 "A00000000 <u32 challenge> <auth protocol> [<steamid> <vac>]\n"`.
    /// A client that sees this switches to the GoldSrc protocol.
    GoldSrc {
        /// The challenge (printed unsigned by GoldSrc).
        challenge: u32,
        /// Authentication protocol; 3 = Steam, 2 = hashed CD key.
        auth_protocol: i32,
        /// With Steam auth: the server's Steam ID and VAC status.
        steam: Option<(u64, i32)>,
    },
}

impl ChallengeResponse {
    /// `FF×4` + the Xash command word.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffchallenge";
    /// `FF×4` + the GoldSrc command word (`S2C_GOLDSRC_CHALLENGE`).
    pub const GOLDSRC_HEADER: &'static [u8] = b"\xff\xff\xff\xffA00000000";

    /// Decodes either form.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let line = read_line(packet)?;
        let tokens = tokenize(line.text);
        let word = tokens.first().map(Vec::as_slice);
        if word == Some(b"challenge") {
            let (tokens, _) = command(packet, b"challenge")?;
            arg_count(&tokens, 1, 2)?;
            let challenge = parse_i32(&tokens[1]).ok_or(Error::InvalidField("challenge value"))?;
            let bandwidth_test = match tokens.get(2) {
                None => None,
                Some(f) => Some(parse_flag(f).ok_or(Error::InvalidField("bandwidth test flag"))?),
            };
            return Ok(ChallengeResponse::Xash {
                challenge,
                bandwidth_test,
            });
        }
        if word == Some(b"A00000000") {
            let (tokens, _) = command(packet, b"A00000000")?;
            if tokens.len() != 3 && tokens.len() != 5 {
                return Err(Error::InvalidField("GoldSrc challenge arguments"));
            }
            let challenge = parse_num::<u32>(&tokens[1])
                .or_else(|| parse_i32(&tokens[1]).map(|v| v as u32))
                .ok_or(Error::InvalidField("challenge value"))?;
            let auth_protocol =
                parse_i32(&tokens[2]).ok_or(Error::InvalidField("auth protocol"))?;
            let steam = if tokens.len() == 5 {
                let id = parse_num::<u64>(&tokens[3]).ok_or(Error::InvalidField("steam id"))?;
                let vac = parse_i32(&tokens[4]).ok_or(Error::InvalidField("vac status"))?;
                Some((id, vac))
            } else {
                None
            };
            return Ok(ChallengeResponse::GoldSrc {
                challenge,
                auth_protocol,
                steam,
            });
        }
        Err(Error::WrongHeader)
    }

    /// Appends the response as the respective server writes it.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ChallengeResponse::Xash {
                challenge,
                bandwidth_test,
            } => {
                out.extend_from_slice(Self::HEADER);
                out.extend_from_slice(format!(" {challenge}").as_bytes());
                if let Some(b) = bandwidth_test {
                    out.extend_from_slice(if *b { b" 1" } else { b" 0" });
                }
            }
            ChallengeResponse::GoldSrc {
                challenge,
                auth_protocol,
                steam,
            } => {
                out.extend_from_slice(Self::GOLDSRC_HEADER);
                out.extend_from_slice(format!(" {challenge} {auth_protocol}").as_bytes());
                if let Some((id, vac)) = steam {
                    out.extend_from_slice(format!(" {id} {vac}").as_bytes());
                }
                out.push(b'\n');
            }
        }
    }

    /// The challenge as the Xash client stores it (`Q_atoi` of the first argument).
    pub fn challenge(&self) -> i32 {
        match *self {
            ChallengeResponse::Xash { challenge, .. } => challenge,
            ChallengeResponse::GoldSrc { challenge, .. } => challenge as i32,
        }
    }
}

/// C2S_BANDWIDTHTEST: `FF×4 "bandwidth 49 <size> <challenge>\n"`.
///
/// Asks the server for a [`TestPacket`] of exactly `size` bytes to find the largest
/// datagram the path carries. The server rejects a protocol other than 49, answers
/// with `challenge … 0` when the challenge is missing, the test is disabled, or
/// `size` is outside [`BandwidthTest::MIN_SIZE`] (exclusive) ..=
/// [`BandwidthTest::MAX_SIZE`], and rejects a bad challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandwidthTest {
    /// Protocol version, 49 from Xash clients.
    pub protocol: i32,
    /// Requested test packet size in bytes.
    pub size: u32,
    /// The challenge from [`ChallengeResponse`]; absent in old clients.
    pub challenge: Option<i32>,
}

impl BandwidthTest {
    /// `FF×4` + the command word.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffbandwidth";
    /// Sizes up to this (`FRAGMENT_MIN_SIZE`) are never tested.
    pub const MIN_SIZE: u32 = 508;
    /// Largest size tested (`FRAGMENT_MAX_SIZE`).
    pub const MAX_SIZE: u32 = 1400;
    /// The sizes the engine client tries, in order.
    pub const CLIENT_SIZES: [u32; 5] = [1400, 1200, 1000, 800, 508];

    /// Whether a server would run the test for this size.
    pub fn size_is_testable(&self) -> bool {
        self.size > Self::MIN_SIZE && self.size <= Self::MAX_SIZE
    }

    /// Decodes the request.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let (tokens, _) = command(packet, b"bandwidth")?;
        arg_count(&tokens, 2, 3)?;
        let protocol = parse_i32(&tokens[1]).ok_or(Error::InvalidField("bandwidth protocol"))?;
        let size = parse_num::<u32>(&tokens[2]).ok_or(Error::InvalidField("bandwidth size"))?;
        let challenge = match tokens.get(3) {
            None => None,
            Some(t) => Some(parse_i32(t).ok_or(Error::InvalidField("bandwidth challenge"))?),
        };
        Ok(BandwidthTest {
            protocol,
            size,
            challenge,
        })
    }

    /// Appends the request, newline included.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(format!(" {} {}", self.protocol, self.size).as_bytes());
        if let Some(ch) = self.challenge {
            out.extend_from_slice(format!(" {ch}").as_bytes());
        }
        out.push(b'\n');
    }
}

/// The 256-entry table of the reflected IEEE 802.3 polynomial 0xEDB88320.
const CRC32_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// Runs the CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) register over
/// `data`, starting from `crc`, with no initial or final inversion. This is the
/// engine's `CRC32_ProcessBuffer`.
pub fn crc32_update(mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        crc = CRC32_TABLE[usize::from((crc as u8) ^ b)] ^ (crc >> 8);
    }
    crc
}

/// Standard CRC-32 (IEEE; zlib, PNG, Ethernet): register starts at `!0` and is
/// inverted at the end. `crc32(b"123456789") == 0xCBF43926`.
pub fn crc32(data: &[u8]) -> u32 {
    !crc32_update(!0, data)
}

/// The checksum a Xash test packet carries: the IEEE CRC-32 register run over the
/// filler bytes only (everything after the CRC field, i.e. bytes 19.. of the
/// datagram), starting from 0 and with no final inversion. The engine deliberately
/// skips `CRC32_Init` on both sides ("intentional omit of CRC32_Init because of the
/// client"), so this is not the standard [`crc32`].
pub fn testpacket_crc(filler: &[u8]) -> u32 {
    crc32_update(0, filler)
}

/// S2C_BANDWIDTHTEST: `FF×4 "testpacket\0"` + u32 CRC + filler, exactly the
/// requested size.
///
/// The engine fills it with the start of `gfx.wad` (any bytes do), and the client
/// accepts the size when the datagram arrives whole and [`testpacket_crc`] of the
/// filler matches. A mismatch is not a decode error: the client then simply tries
/// a smaller size, so [`TestPacket::crc_matches`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestPacket {
    /// The CRC field as sent.
    pub crc: u32,
    /// The filler.
    pub filler: Vec<u8>,
}

impl TestPacket {
    /// `FF×4 "testpacket\0"`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xfftestpacket\0";
    /// Bytes before the filler: header + CRC (19).
    pub const OVERHEAD: usize = Self::HEADER.len() + 4;

    /// A test packet with a correct CRC over `filler`.
    pub fn new(filler: Vec<u8>) -> Self {
        TestPacket {
            crc: testpacket_crc(&filler),
            filler,
        }
    }

    /// A test packet of exactly `size` bytes whose filler is `source` repeated as
    /// needed (the engine uses `gfx.wad`). `size` below [`TestPacket::OVERHEAD`], or
    /// an empty `source` when filler is needed, is [`Error::BadLength`].
    pub fn with_size(size: usize, source: &[u8]) -> Result<Self, Error> {
        let n = size
            .checked_sub(Self::OVERHEAD)
            .ok_or(Error::BadLength("test packet smaller than its header"))?;
        if n > 0 && source.is_empty() {
            return Err(Error::BadLength("no filler source"));
        }
        Ok(Self::new(source.iter().copied().cycle().take(n).collect()))
    }

    /// Encoded size in bytes (what the client compares with the size it asked for).
    pub fn len(&self) -> usize {
        Self::OVERHEAD + self.filler.len()
    }

    /// Always false: a test packet has at least its header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether the CRC field matches the filler.
    pub fn crc_matches(&self) -> bool {
        self.crc == testpacket_crc(&self.filler)
    }

    /// Decodes a test packet; any filler length is accepted.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let mut c = wire::Cursor::new(packet);
        c.expect(Self::HEADER)?;
        let crc = c.u32_le()?;
        Ok(TestPacket {
            crc,
            filler: c.take_rest().to_vec(),
        })
    }

    /// Appends the packet.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(&self.crc.to_le_bytes());
        out.extend_from_slice(&self.filler);
    }
}

/// Protocol extension bit: split netchan messages at the client's `cl_dlmax`
/// (`NET_EXT_SPLITSIZE`).
pub const EXT_SPLITSIZE: u32 = 1;
/// Protocol extension bit: netchan cookie (`NET_EXT_NETCHAN_COOKIE`); the protinfo
/// then carries `cookie`.
pub const EXT_NETCHAN_COOKIE: u32 = 2;

/// Whether `v` is exactly `n` ASCII hex digits.
fn is_hex(v: &[u8], n: usize) -> bool {
    v.len() == n && v.iter().all(u8::is_ascii_hexdigit)
}

/// Reads an optional hex value of `n` digits.
fn hex_key(info: &InfoString, key: &'static str, n: usize) -> Result<Option<String>, Error> {
    match info.get(key) {
        None => Ok(None),
        Some(v) if is_hex(v, n) => Ok(Some(String::from_utf8_lossy(v).into_owned())),
        Some(_) => Err(Error::InvalidValue { key: key.into() }),
    }
}

/// Reads an optional decimal key.
fn num_key<T: std::str::FromStr>(info: &InfoString, key: &'static str) -> Result<Option<T>, Error> {
    match info.get(key) {
        None => Ok(None),
        Some(v) => parse_num(v)
            .map(Some)
            .ok_or(Error::InvalidValue { key: key.into() }),
    }
}

/// The client's protocol info in `connect`: `\uuid\<32 hex>\qport\N\ext\N[\cookie\<16 hex>]`.
///
/// A typed view of [`Connect::protinfo`] with the checks the server makes
/// (`SV_ConnectClient`): `uuid` is the client's MD5 id salted with the server
/// address, `qport` tells reconnecting clients behind NAT apart, `ext` is the
/// extension bits ([`EXT_SPLITSIZE`], [`EXT_NETCHAN_COOKIE`]) and `cookie` is
/// required when the cookie bit is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectProtInfo {
    /// 32 hex digits.
    pub uuid: String,
    /// Client port id.
    pub qport: u16,
    /// Requested extensions.
    pub ext: u32,
    /// 16 hex digits, present with [`EXT_NETCHAN_COOKIE`].
    pub cookie: Option<String>,
}

impl ConnectProtInfo {
    /// Reads and checks the keys.
    pub fn from_info(info: &InfoString) -> Result<Self, Error> {
        let uuid = hex_key(info, "uuid", 32)?.ok_or(Error::MissingKey("uuid"))?;
        let qport = num_key(info, "qport")?.ok_or(Error::MissingKey("qport"))?;
        let ext = num_key(info, "ext")?.unwrap_or(0);
        let cookie = hex_key(info, "cookie", 16)?;
        if ext & EXT_NETCHAN_COOKIE != 0 && cookie.is_none() {
            return Err(Error::MissingKey("cookie"));
        }
        Ok(ConnectProtInfo {
            uuid,
            qport,
            ext,
            cookie,
        })
    }

    /// Builds the info string in the engine's key order; invalid `uuid`/`cookie`
    /// values are errors.
    pub fn to_info(&self) -> Result<InfoString, Error> {
        if !is_hex(self.uuid.as_bytes(), 32) {
            return Err(Error::InvalidValue { key: "uuid".into() });
        }
        let mut info = InfoString::new()
            .with("uuid", &self.uuid)?
            .with("qport", self.qport.to_string())?
            .with("ext", self.ext.to_string())?;
        if let Some(c) = &self.cookie {
            if !is_hex(c.as_bytes(), 16) {
                return Err(Error::InvalidValue {
                    key: "cookie".into(),
                });
            }
            info.set("cookie", c)?;
        }
        Ok(info)
    }
}

/// C2S_CONNECT: `FF×4 connect 49 <challenge> "<protinfo>" "<userinfo>"\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connect {
    /// Protocol version, 49 from Xash clients.
    pub protocol: i32,
    /// The challenge from [`ChallengeResponse`].
    pub challenge: i32,
    /// Protocol info; see [`ConnectProtInfo`].
    pub protinfo: InfoString,
    /// The user's settings (`name`, `model`, `password`, `cl_dlmax`...).
    pub userinfo: InfoString,
}

impl Connect {
    /// `FF×4` + the command word.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffconnect";

    /// The typed protocol info.
    pub fn prot(&self) -> Result<ConnectProtInfo, Error> {
        ConnectProtInfo::from_info(&self.protinfo)
    }

    /// Decodes the request. Exactly four arguments; both info strings must be valid.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let (tokens, _) = command(packet, b"connect")?;
        arg_count(&tokens, 4, 4)?;
        Ok(Connect {
            protocol: parse_i32(&tokens[1]).ok_or(Error::InvalidField("connect protocol"))?,
            challenge: parse_i32(&tokens[2]).ok_or(Error::InvalidField("connect challenge"))?,
            protinfo: InfoString::parse(&tokens[3])?,
            userinfo: InfoString::parse(&tokens[4])?,
        })
    }

    /// Appends the request as the engine client writes it (both info strings quoted,
    /// newline at the end). An info string whose last value is empty ends in `\`
    /// and cannot be quoted (see [`tokenize`]); the engine has the same quirk.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(format!(" {} {} ", self.protocol, self.challenge).as_bytes());
        put_quoted(out, &self.protinfo.to_bytes());
        out.push(b' ');
        put_quoted(out, &self.userinfo.to_bytes());
        out.push(b'\n');
    }
}

/// The server's protocol info in `client_connect`:
/// `\ext\N\cheats\0|1\challenge\N[\cookie\<16 hex>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerProtInfo {
    /// Granted extensions (0 when absent, as from old servers).
    pub ext: u32,
    /// The server allows cheats (false when absent).
    pub cheats: bool,
    /// The connect challenge echoed back, if present.
    pub challenge: Option<i32>,
    /// The netchan cookie, with [`EXT_NETCHAN_COOKIE`].
    pub cookie: Option<String>,
}

impl ServerProtInfo {
    /// Reads and checks the keys.
    pub fn from_info(info: &InfoString) -> Result<Self, Error> {
        let ext = num_key(info, "ext")?.unwrap_or(0);
        let cheats = match info.get("cheats") {
            None => false,
            Some(v) => parse_flag(v).ok_or(Error::InvalidValue {
                key: "cheats".into(),
            })?,
        };
        let challenge = match info.get("challenge") {
            None => None,
            Some(v) => Some(parse_i32(v).ok_or(Error::InvalidValue {
                key: "challenge".into(),
            })?),
        };
        let cookie = hex_key(info, "cookie", 16)?;
        Ok(ServerProtInfo {
            ext,
            cheats,
            challenge,
            cookie,
        })
    }

    /// Builds the info string in the engine's key order.
    pub fn to_info(&self) -> Result<InfoString, Error> {
        let mut info = InfoString::new()
            .with("ext", self.ext.to_string())?
            .with("cheats", if self.cheats { "1" } else { "0" })?;
        if let Some(ch) = self.challenge {
            info.set("challenge", ch.to_string())?;
        }
        if let Some(c) = &self.cookie {
            if !is_hex(c.as_bytes(), 16) {
                return Err(Error::InvalidValue {
                    key: "cookie".into(),
                });
            }
            info.set("cookie", c)?;
        }
        Ok(info)
    }
}

/// S2C_CONNECTION: `FF×4 "client_connect <protinfo>"`, no newline. After it the
/// client sets up its netchan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientConnect {
    /// The server's protocol info; see [`ServerProtInfo`]. Empty from old servers.
    pub protinfo: InfoString,
}

impl ClientConnect {
    /// `FF×4` + the command word.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffclient_connect";

    /// The typed protocol info.
    pub fn prot(&self) -> Result<ServerProtInfo, Error> {
        ServerProtInfo::from_info(&self.protinfo)
    }

    /// Decodes the message; the protinfo argument is optional.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let (tokens, _) = command(packet, b"client_connect")?;
        arg_count(&tokens, 0, 1)?;
        let protinfo = match tokens.get(1) {
            None => InfoString::new(),
            Some(t) => InfoString::parse(t)?,
        };
        Ok(ClientConnect { protinfo })
    }

    /// Appends the message as the engine writes it (`client_connect %s`); the info
    /// string is quoted only if it holds characters the tokenizer would split at.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        if !self.protinfo.is_empty() {
            out.push(b' ');
            put_arg(out, &self.protinfo.to_bytes());
        }
    }
}

/// Reads `FF×4 <command>\n<text>`: the first line must be exactly `command`, the text
/// runs to the first NUL (the client reads it with `MSG_ReadString`).
fn decode_text_message(packet: &[u8], command: &[u8]) -> Result<Vec<u8>, Error> {
    let line = read_line(packet)?;
    let tokens = tokenize(line.text);
    if tokens.first().map(Vec::as_slice) != Some(command) {
        return Err(Error::WrongHeader);
    }
    arg_count(&tokens, 0, 0)?;
    if line.terminator == Some(0) && !line.rest.is_empty() {
        return Err(Error::Trailing(line.rest.len()));
    }
    let text = match line.rest.iter().position(|&b| b == 0) {
        Some(i) if i + 1 < line.rest.len() => {
            return Err(Error::Trailing(line.rest.len() - i - 1));
        }
        Some(i) => &line.rest[..i],
        None => line.rest,
    };
    Ok(text.to_vec())
}

/// Appends `FF×4 <command>\n<text>`.
fn encode_text_message(out: &mut Vec<u8>, command: &[u8], text: &[u8]) {
    put_oob(out);
    out.extend_from_slice(command);
    out.push(b'\n');
    out.extend_from_slice(text);
}

/// S2C_ERRORMSG: `FF×4 "errormsg\n<text>"`. The client shows the text in a message
/// box; used for rejects and kicks. It does not end the connection by itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ErrorMsg {
    /// The message (no NUL; usually ends with `\n`).
    pub text: Vec<u8>,
}

impl ErrorMsg {
    /// `FF×4 "errormsg\n"`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xfferrormsg\n";

    /// Decodes the message; a NUL ends the text and nothing may follow it.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        Ok(ErrorMsg {
            text: decode_text_message(packet, b"errormsg")?,
        })
    }

    /// Appends the message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_text_message(out, b"errormsg", &self.text);
    }
}

/// A2C_PRINT: `FF×4 "print\n<text>"`. The client prints the text to its console.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Print {
    /// The text (no NUL).
    pub text: Vec<u8>,
}

impl Print {
    /// `FF×4 "print\n"`.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffprint\n";

    /// Decodes the message; a NUL ends the text and nothing may follow it.
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        Ok(Print {
            text: decode_text_message(packet, b"print")?,
        })
    }

    /// Appends the message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_text_message(out, b"print", &self.text);
    }
}

/// S2C_REJECT: `FF×4 "disconnect\n"`. Ends a connection attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Disconnect;

impl Disconnect {
    /// The whole datagram.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffdisconnect\n";

    /// Decodes the message (the final newline is optional, arguments are not
    /// allowed).
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let (tokens, _) = command(packet, b"disconnect")?;
        arg_count(&tokens, 0, 0)?;
        Ok(Disconnect)
    }

    /// Appends the message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
    }
}

/// A refused connection, as `SV_RejectConnection` sends it: three datagrams,
/// `errormsg\n<PREFIX><reason>`, `print\n<PREFIX><reason>`, `disconnect\n`.
///
/// The reasons the engine uses end with `\n` (`"server is full\n"`,
/// `"no challenge for your address\n"`, ...). The grammar of [`Reject::PREFIX`] is
/// the engine's and must be kept for clients that match on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// Why, usually ending with `\n`.
    pub reason: Vec<u8>,
}

impl Reject {
    /// What the engine puts before the reason, colour codes included.
    pub const PREFIX: &'static [u8] = b"^1Server was reject the connection:^7 ";

    /// A reject with this reason.
    pub fn new(reason: impl Into<Vec<u8>>) -> Self {
        Reject {
            reason: reason.into(),
        }
    }

    /// The shared text of the first two datagrams.
    pub fn text(&self) -> Vec<u8> {
        [Self::PREFIX, &self.reason].concat()
    }

    /// The first datagram.
    pub fn to_errormsg(&self) -> ErrorMsg {
        ErrorMsg { text: self.text() }
    }

    /// The second datagram.
    pub fn to_print(&self) -> Print {
        Print { text: self.text() }
    }

    /// All three datagrams, in sending order.
    pub fn datagrams(&self) -> [Vec<u8>; 3] {
        let mut a = Vec::new();
        self.to_errormsg().encode(&mut a);
        let mut b = Vec::new();
        self.to_print().encode(&mut b);
        let mut c = Vec::new();
        Disconnect.encode(&mut c);
        [a, b, c]
    }

    /// The reject behind a message text, if it starts with [`Reject::PREFIX`].
    pub fn from_text(text: &[u8]) -> Option<Reject> {
        text.strip_prefix(Self::PREFIX).map(Reject::new)
    }

    /// Decodes the first or second datagram (an `errormsg` or `print` carrying the
    /// prefix). Other messages with those commands are [`Error::InvalidField`];
    /// decode the third with [`Disconnect::decode`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let text = match ErrorMsg::decode(packet) {
            Ok(m) => m.text,
            Err(Error::WrongHeader) => Print::decode(packet)?.text,
            Err(e) => return Err(e),
        };
        Reject::from_text(&text).ok_or(Error::InvalidField("not a connection reject"))
    }
}

/// Any handshake message a client sends, for a server that dispatches on the
/// command word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeRequest {
    /// `getchallenge`.
    GetChallenge(GetChallenge),
    /// `bandwidth`.
    Bandwidth(BandwidthTest),
    /// `connect`.
    Connect(Connect),
}

impl HandshakeRequest {
    /// Decodes by the command word; other words are [`Error::WrongHeader`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        let line = read_line(packet)?;
        match tokenize(line.text).first().map(Vec::as_slice) {
            Some(b"getchallenge") => GetChallenge::decode(packet).map(Self::GetChallenge),
            Some(b"bandwidth") => BandwidthTest::decode(packet).map(Self::Bandwidth),
            Some(b"connect") => Connect::decode(packet).map(Self::Connect),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Appends the message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::GetChallenge(m) => m.encode(out),
            Self::Bandwidth(m) => m.encode(out),
            Self::Connect(m) => m.encode(out),
        }
    }
}

/// Any handshake message a server sends, for a client that dispatches on the
/// command word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeReply {
    /// `challenge` or GoldSrc `A00000000`.
    Challenge(ChallengeResponse),
    /// `testpacket`.
    TestPacket(TestPacket),
    /// `client_connect`.
    ClientConnect(ClientConnect),
    /// `errormsg`.
    ErrorMsg(ErrorMsg),
    /// `print`.
    Print(Print),
    /// `disconnect`.
    Disconnect(Disconnect),
}

impl HandshakeReply {
    /// Decodes by the command word; other words are [`Error::WrongHeader`].
    pub fn decode(packet: &[u8]) -> Result<Self, Error> {
        if packet.starts_with(TestPacket::HEADER) {
            return TestPacket::decode(packet).map(Self::TestPacket);
        }
        let line = read_line(packet)?;
        match tokenize(line.text).first().map(Vec::as_slice) {
            Some(b"challenge") | Some(b"A00000000") => {
                ChallengeResponse::decode(packet).map(Self::Challenge)
            }
            Some(b"client_connect") => ClientConnect::decode(packet).map(Self::ClientConnect),
            Some(b"errormsg") => ErrorMsg::decode(packet).map(Self::ErrorMsg),
            Some(b"print") => Print::decode(packet).map(Self::Print),
            Some(b"disconnect") => Disconnect::decode(packet).map(Self::Disconnect),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Appends the message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Challenge(m) => m.encode(out),
            Self::TestPacket(m) => m.encode(out),
            Self::ClientConnect(m) => m.encode(out),
            Self::ErrorMsg(m) => m.encode(out),
            Self::Print(m) => m.encode(out),
            Self::Disconnect(m) => m.encode(out),
        }
    }
}
