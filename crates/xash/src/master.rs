//! The master half of the protocol: heartbeat, challenge, server info, shutdown,
//! scan request, server list, NAT connect. Byte-exact with the real engine.

use crate::filter::{flags, Version};
use crate::info::{parse_flag, parse_num, InfoString};
use crate::{Error, OOB};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use wire::Cursor;

/// `S2M_HEARTBEAT`: raw `q\xff` + u32 heartbeat challenge (6 bytes), or the legacy
/// 2-byte form without a challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    /// The server's random challenge, echoed back by the master.
    pub challenge: Option<u32>,
}

impl Heartbeat {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"q\xff";

    /// Decodes; any tail other than 0 or 4 bytes is an error.
    pub fn decode(p: &[u8]) -> Result<Heartbeat, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        match c.remaining() {
            0 => Ok(Heartbeat { challenge: None }),
            4 => Ok(Heartbeat {
                challenge: Some(c.u32_le()?),
            }),
            _ => Err(Error::BadLength("heartbeat tail must be 0 or 4 bytes")),
        }
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        if let Some(c) = self.challenge {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
}

/// `M2S_CHALLENGE`: `FF×4 s\n` + u32 master challenge + u32 echo (14 bytes), or
/// 10 bytes after a legacy heartbeat. The `\n` is required by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChallengeReply {
    /// The value the server must put in its info's `challenge` key.
    pub master_challenge: u32,
    /// The heartbeat's challenge, echoed.
    pub echo: Option<u32>,
}

impl ChallengeReply {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffs\n";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<ChallengeReply, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let master_challenge = c.u32_le()?;
        let echo = match c.remaining() {
            0 => None,
            4 => Some(c.u32_le()?),
            _ => return Err(Error::BadLength("challenge reply")),
        };
        Ok(ChallengeReply {
            master_challenge,
            echo,
        })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(&self.master_challenge.to_le_bytes());
        if let Some(e) = self.echo {
            out.extend_from_slice(&e.to_le_bytes());
        }
    }
}

/// `S2M_INFO`: raw `0\n` + info string. The engine sends no trailing newline;
/// GoldSrc and Source append one. Both are accepted; a NUL anywhere is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// The server's info string.
    pub info: InfoString,
    /// Whether a trailing `\n` was present (kept for byte-exact re-encoding).
    pub trailing_newline: bool,
}

impl ServerInfo {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"0\n";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<ServerInfo, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let mut text = c.take_rest();
        let trailing_newline = text.last() == Some(&b'\n');
        if trailing_newline {
            text = &text[..text.len() - 1];
        }
        Ok(ServerInfo {
            info: InfoString::parse(text)?,
            trailing_newline,
        })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        self.info.encode(out);
        if self.trailing_newline {
            out.push(b'\n');
        }
    }
}

/// `type` in a server's info.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerType {
    /// `d`
    Dedicated,
    /// `l`
    Listen,
    /// `p` (HLTV proxy)
    Proxy,
    /// Anything else.
    Unknown,
}

impl ServerType {
    /// From the info value's letter (`d`, `l`, `p`; anything else is `Unknown`).
    pub fn from_letter(b: u8) -> ServerType {
        match b {
            b'd' => ServerType::Dedicated,
            b'l' => ServerType::Listen,
            b'p' => ServerType::Proxy,
            _ => ServerType::Unknown,
        }
    }

    /// The letter (`?` for `Unknown`).
    pub fn letter(self) -> u8 {
        match self {
            ServerType::Dedicated => b'd',
            ServerType::Listen => b'l',
            ServerType::Proxy => b'p',
            ServerType::Unknown => b'?',
        }
    }
}

/// `os` in a server's info (the engine always sends `w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// `l`
    Linux,
    /// `w`
    Windows,
    /// `m`
    Mac,
    /// Anything else.
    Unknown,
}

impl Os {
    /// From the info value's letter (`l`, `w`, `m`; anything else is `Unknown`).
    pub fn from_letter(b: u8) -> Os {
        match b {
            b'l' => Os::Linux,
            b'w' => Os::Windows,
            b'm' => Os::Mac,
            _ => Os::Unknown,
        }
    }

    /// The letter (`?` for `Unknown`).
    pub fn letter(self) -> u8 {
        match self {
            Os::Linux => b'l',
            Os::Windows => b'w',
            Os::Mac => b'm',
            Os::Unknown => b'?',
        }
    }
}

/// The typed content of a server's info, as a master stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAdd {
    /// Network protocol (49; 48 for old engines).
    pub protocol: u8,
    /// The master challenge the server echoes; required.
    pub challenge: u32,
    /// Players without bots.
    pub players: u8,
    /// Maximum players.
    pub max: u8,
    /// Bots.
    pub bots: u8,
    /// Game directory.
    pub gamedir: Vec<u8>,
    /// Current map.
    pub map: Vec<u8>,
    /// Dedicated or listen server.
    pub server_type: ServerType,
    /// Whether a password is set. The engine sends the `password` key **inverted**
    /// since 2025-10 (`1` = no password, see the captures); this field holds the
    /// key's literal value, which is what filters compare, as xash3d-master does.
    pub password: bool,
    /// Operating system letter.
    pub os: Os,
    /// `secure`.
    pub secure: bool,
    /// `lan`.
    pub lan: bool,
    /// Engine version; servers below the master's minimum are refused.
    pub version: Version,
    /// Region 0-7 or 255.
    pub region: u8,
    /// Behind NAT (`sv_nat`); only `0`/`1` accepted.
    pub nat: bool,
}

/// The longest `gamedir` or `map` a server may register, plus one (the engine's
/// `MAX_QPATH`).
pub const MAX_NAME: usize = 64;

impl ServerAdd {
    /// Reads the keys xash3d-master reads; unknown keys are ignored, absent keys
    /// default to zero/empty, except `challenge`, which is required. Any malformed
    /// value rejects the whole packet.
    pub fn from_info(info: &InfoString) -> Result<ServerAdd, Error> {
        let mut s = ServerAdd {
            protocol: 0,
            challenge: 0,
            players: 0,
            max: 0,
            bots: 0,
            gamedir: Vec::new(),
            map: Vec::new(),
            server_type: ServerType::Unknown,
            password: false,
            os: Os::Unknown,
            secure: false,
            lan: false,
            version: Version::default(),
            region: 255,
            nat: false,
        };
        let mut have_challenge = false;
        for (k, v) in info.iter() {
            let bad = || Error::InvalidValue {
                key: String::from_utf8_lossy(k).into_owned(),
            };
            match k {
                b"protocol" => s.protocol = parse_num(v).ok_or_else(bad)?,
                b"challenge" => {
                    s.challenge = parse_num(v).ok_or_else(bad)?;
                    have_challenge = true;
                }
                b"players" => s.players = parse_num(v).ok_or_else(bad)?,
                b"max" => s.max = parse_num(v).ok_or_else(bad)?,
                b"bots" => s.bots = parse_num(v).ok_or_else(bad)?,
                // The engine's own bound (MAX_QPATH, 64 with the NUL); longer ones
                // would let each of 32,768 servers hold 60 KiB (issue 20, item 9).
                b"gamedir" if v.len() < MAX_NAME => s.gamedir = v.to_vec(),
                b"map" if v.len() < MAX_NAME => s.map = v.to_vec(),
                b"gamedir" | b"map" => return Err(bad()),
                b"type" => {
                    s.server_type = match v {
                        [c] => ServerType::from_letter(*c),
                        _ => ServerType::Unknown,
                    }
                }
                b"password" => s.password = parse_flag(v).ok_or_else(bad)?,
                b"os" => {
                    s.os = match v {
                        [c] => Os::from_letter(*c),
                        _ => Os::Unknown,
                    }
                }
                b"secure" => s.secure = parse_flag(v).ok_or_else(bad)?,
                b"lan" => s.lan = parse_flag(v).ok_or_else(bad)?,
                b"version" => s.version = Version::parse(v).ok_or_else(bad)?,
                b"region" => {
                    let r: u8 = parse_num(v).ok_or_else(bad)?;
                    if r > 7 && r != 255 {
                        return Err(bad());
                    }
                    s.region = r;
                }
                b"nat" => s.nat = parse_flag(v).ok_or_else(bad)?,
                _ => {} // product and unknown keys: ignored.
            }
        }
        if !have_challenge {
            return Err(Error::MissingKey("challenge"));
        }
        Ok(s)
    }

    /// The [`flags`] bits filters test.
    pub fn flags(&self) -> u8 {
        let mut f = 0;
        if self.server_type == ServerType::Dedicated {
            f |= flags::DEDICATED;
        }
        if self.secure {
            f |= flags::SECURE;
        }
        if self.password {
            f |= flags::PASSWORD;
        }
        if self.lan {
            f |= flags::LAN;
        }
        if self.bots > 0 {
            f |= flags::BOTS;
        }
        if self.nat {
            f |= flags::NAT;
        }
        f
    }
}

/// `S2M_SHUTDOWN`: raw `b\n`. A master must ignore it (it is spoofable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shutdown;

impl Shutdown {
    /// Wire bytes.
    pub const HEADER: &'static [u8] = b"b\n";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<Shutdown, Error> {
        if p == Self::HEADER {
            Ok(Shutdown)
        } else {
            Err(Error::WrongHeader)
        }
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
    }
}

/// `A2M_SCAN_REQUEST`: raw `1` + region + last address text + NUL + filter + optional NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanRequest {
    /// Region byte (0xFF from every engine).
    pub region: u8,
    /// The last address of the previous page; `0.0.0.0:0` (None) for the first.
    pub last: Option<SocketAddr>,
    /// The filter info string.
    pub filter: InfoString,
    /// Whether the final NUL after the filter was present (current engines send it).
    pub final_nul: bool,
    /// The address text was not NUL-terminated (qstat's follow-up page request);
    /// it was cut at the first byte outside `[0-9.:]`.
    pub malformed_last: bool,
}

fn addr_byte(b: u8) -> bool {
    b.is_ascii_digit() || b == b'.' || b == b':'
}

impl ScanRequest {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"1";

    /// Decodes; a bad region byte, a malformed filter or an unparsable address is an error.
    pub fn decode(p: &[u8]) -> Result<ScanRequest, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let region = c.u8()?;
        if region > 7 && region != 0xff {
            return Err(Error::InvalidField("region"));
        }
        let rest = c.take_rest();
        // IPv6 last addresses come bracketed: take the bracket part, then the port.
        let n = if rest.first() == Some(&b'[') {
            rest.iter()
                .position(|&b| b == b']')
                .map(|i| i + 1 + rest[i + 1..].iter().take_while(|&&b| addr_byte(b)).count())
                .unwrap_or(0)
        } else {
            rest.iter().take_while(|&&b| addr_byte(b)).count()
        };
        let text = &rest[..n];
        let last: SocketAddr = std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or(Error::InvalidField("last address"))?;
        let last = (!last.ip().is_unspecified() || last.port() != 0).then_some(last);
        let after = &rest[n..];
        let (filter_bytes, final_nul, malformed_last) = match after.first() {
            None => (&after[..0], false, false),
            Some(0) => {
                let f = &after[1..];
                match f.iter().position(|&b| b == 0) {
                    Some(i) => {
                        if f[i + 1..].iter().any(|&b| b != 0) {
                            return Err(Error::Trailing(f.len() - i - 1));
                        }
                        (&f[..i], true, false)
                    }
                    None => (f, false, false),
                }
            }
            // qstat: no NUL after the address and a stray byte; take any filter that follows.
            Some(_) => {
                let f = match after.iter().position(|&b| b == b'\\') {
                    Some(i) => &after[i..],
                    None => &after[after.len()..],
                };
                let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
                (&f[..end], end < f.len(), true)
            }
        };
        Ok(ScanRequest {
            region,
            last,
            filter: InfoString::parse(filter_bytes)?,
            final_nul,
            malformed_last,
        })
    }

    /// Encodes the engine's form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.push(self.region);
        match self.last {
            Some(a) => out.extend_from_slice(a.to_string().as_bytes()),
            None => out.extend_from_slice(b"0.0.0.0:0"),
        }
        out.push(0);
        self.filter.encode(out);
        if self.final_nul {
            out.push(0);
        }
    }
}

/// Size of one server record: 4 + 2 (IPv4) or 16 + 2 (IPv6) bytes.
pub fn record_len(v6: bool) -> usize {
    if v6 {
        18
    } else {
        6
    }
}

/// `M2A_SERVERSLIST` header `FF×4 f\n`.
pub const SERVER_LIST_HEADER: &[u8] = b"\xff\xff\xff\xfff\n";
/// Size of the optional key block: `7F` + u32 key + reserved byte 8.
pub const KEY_BLOCK_LEN: usize = 6;

/// How many records fit a page of `page_size` bytes, header, key block and terminator included.
pub fn records_per_page(page_size: usize, v6: bool, key: bool) -> usize {
    let fixed = SERVER_LIST_HEADER.len() + if key { KEY_BLOCK_LEN } else { 0 } + record_len(v6);
    page_size.saturating_sub(fixed) / record_len(v6)
}

fn put_record(out: &mut Vec<u8>, a: SocketAddr) {
    match a.ip() {
        IpAddr::V4(ip) => out.extend_from_slice(&ip.octets()),
        IpAddr::V6(ip) => out.extend_from_slice(&ip.octets()),
    }
    out.extend_from_slice(&a.port().to_be_bytes());
}

/// Encodes one page: header, key block if `key`, records, zero terminator.
/// Records must all be of the page's family (`v6`).
pub fn encode_page(key: Option<u32>, servers: &[SocketAddr], v6: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(SERVER_LIST_HEADER);
    if let Some(k) = key {
        out.push(0x7f);
        out.extend_from_slice(&k.to_le_bytes());
        out.push(8);
    }
    for &a in servers {
        debug_assert_eq!(a.is_ipv6(), v6);
        put_record(out, a);
    }
    out.extend(std::iter::repeat_n(0u8, record_len(v6)));
}

/// One page in Valve's master semantics, for tools (qstat's Steam-master types): the
/// zero terminator only on the final page, so the client asks for the next page
/// starting after the last address it got.
pub fn encode_valve_page(servers: &[SocketAddr], v6: bool, last: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(SERVER_LIST_HEADER);
    for &a in servers {
        put_record(out, a);
    }
    if last {
        out.extend(std::iter::repeat_n(0u8, record_len(v6)));
    }
}

/// Splits `servers` into pages of at most `page_size` bytes; every page repeats
/// the header and key block and ends with its own terminator. An empty list is one
/// page with no records.
pub fn encode_pages(
    key: Option<u32>,
    servers: &[SocketAddr],
    v6: bool,
    page_size: usize,
) -> Vec<Vec<u8>> {
    let per = records_per_page(page_size, v6, key.is_some()).max(1);
    if servers.is_empty() {
        let mut p = Vec::new();
        encode_page(key, &[], v6, &mut p);
        return vec![p];
    }
    servers
        .chunks(per)
        .map(|chunk| {
            let mut p = Vec::with_capacity(page_size);
            encode_page(key, chunk, v6, &mut p);
            p
        })
        .collect()
}

/// A decoded server-list page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerListPage {
    /// The echoed key, if the page had a key block.
    pub key: Option<u32>,
    /// Records before the terminator.
    pub servers: Vec<SocketAddr>,
    /// Whether the zero terminator was present.
    pub terminated: bool,
}

impl ServerListPage {
    /// Decodes a page. `v6` is the family of the master it came from (records carry
    /// no family); `expect_key` says whether the request carried `key` (an IPv4 page
    /// without key block whose first server is 127.x would otherwise be ambiguous).
    pub fn decode(p: &[u8], v6: bool, expect_key: bool) -> Result<ServerListPage, Error> {
        let mut c = Cursor::new(p);
        c.expect(SERVER_LIST_HEADER)?;
        let mut key = None;
        if expect_key && c.rest().first() == Some(&0x7f) {
            c.u8()?;
            key = Some(c.u32_le()?);
            c.u8()?;
        }
        let mut servers = Vec::with_capacity(c.remaining() / record_len(v6));
        let mut terminated = false;
        while c.remaining() >= record_len(v6) {
            let ip = if v6 {
                IpAddr::V6(Ipv6Addr::from(c.array::<16>()?))
            } else {
                IpAddr::V4(Ipv4Addr::from(c.array::<4>()?))
            };
            let port = c.u16_be()?;
            if port == 0 && ip.is_unspecified() {
                terminated = true;
                break;
            }
            servers.push(SocketAddr::new(ip, port));
        }
        Ok(ServerListPage {
            key,
            servers,
            terminated,
        })
    }
}

/// `M2S_NAT_CONNECT`: `FF×4 c ` + the client's `ip:port` (IPv6 bracketed), no NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatConnect {
    /// The client the NAT server should send its info reply to.
    pub client: SocketAddr,
}

impl NatConnect {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffc ";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<NatConnect, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let text =
            std::str::from_utf8(c.take_rest()).map_err(|_| Error::InvalidField("address"))?;
        let client = text
            .trim_end_matches(['\n', '\0'])
            .parse()
            .map_err(|_| Error::InvalidField("address"))?;
        Ok(NatConnect { client })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(self.client.to_string().as_bytes());
    }
}

/// Whether `p` starts with the out-of-band prefix.
pub fn is_oob(p: &[u8]) -> bool {
    p.starts_with(&OOB)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_forms() {
        assert_eq!(Heartbeat::decode(b"q\xff").unwrap().challenge, None);
        let h = Heartbeat::decode(&[0x71, 0xff, 0x64, 0xe3, 0x7e, 0x1b]).unwrap();
        assert_eq!(h.challenge, Some(0x1b7e_e364));
        assert!(Heartbeat::decode(b"q\xff\x01").is_err());
        assert!(Heartbeat::decode(b"q\xff\x01\x02\x03\x04\x05").is_err());
        assert!(Heartbeat::decode(b"x\xff").is_err());
    }

    #[test]
    fn server_list_pages_match_xash3d_master_sizes() {
        assert_eq!(records_per_page(512, false, true), 82);
        assert_eq!(records_per_page(1280, true, true), 69);
        let servers: Vec<SocketAddr> = (0..105u32)
            .map(|i| SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)), 27015))
            .collect();
        let pages = encode_pages(Some(1), &servers, false, 512);
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(
            sizes,
            vec![510, 156],
            "observed with xash3d-master: 510 B + 156 B"
        );
        let mut back = Vec::new();
        for p in &pages {
            let d = ServerListPage::decode(p, false, true).unwrap();
            assert_eq!(d.key, Some(1));
            assert!(d.terminated);
            back.extend(d.servers);
        }
        assert_eq!(back, servers);
        assert_eq!(records_per_page(1400, false, true), 230);
    }

    #[test]
    fn scan_request_forms() {
        let engine = b"1\xff0.0.0.0:0\0\\gamedir\\valve\\clver\\0.21\\key\\1\0";
        let r = ScanRequest::decode(engine).unwrap();
        assert_eq!(r.region, 0xff);
        assert_eq!(r.last, None);
        assert!(r.final_nul && !r.malformed_last);
        assert_eq!(r.filter.get("gamedir"), Some(&b"valve"[..]));
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out, engine);
        let old = ScanRequest::decode(b"1\xff0.0.0.0:0\0\\gamedir\\valve").unwrap();
        assert!(!old.final_nul);
        let qstat = ScanRequest::decode(b"1\xff0.0.0.0:0\0\0").unwrap();
        assert!(qstat.filter.is_empty());
        let page2 = ScanRequest::decode(b"1\xff10.0.0.7:27015\x01\0").unwrap();
        assert!(page2.malformed_last);
        assert_eq!(page2.last, Some("10.0.0.7:27015".parse().unwrap()));
        assert!(
            ScanRequest::decode(b"1\x080.0.0.0:0\0").is_err(),
            "region 8"
        );
        assert!(ScanRequest::decode(b"1\xffnonsense\0").is_err());
        assert!(ScanRequest::decode(b"1\xff0.0.0.0:0\0\\nat").is_err());
        let v6 = ScanRequest::decode(b"1\xff[::1]:27015\0\0").unwrap();
        assert_eq!(v6.last, Some("[::1]:27015".parse().unwrap()));
    }

    #[test]
    fn nat_connect() {
        let n = NatConnect {
            client: "[2001:db8::1]:27005".parse().unwrap(),
        };
        let mut b = Vec::new();
        n.encode(&mut b);
        assert_eq!(b, b"\xff\xff\xff\xffc [2001:db8::1]:27005");
        assert_eq!(NatConnect::decode(&b).unwrap(), n);
    }
}
