//! How the Xash3D engine reads a static server list body (`masterstatic`, engine
//! `engine/common/masterlist.c` `NET_ParseMasterStaticBody`, recorded line by line in
//! `docs/notes/xash3d-master-and-queries.md`, "Appendix: the static HTTP server
//! list"): what `lobby query static` uses to read a list exactly as a client would,
//! and what the tests parse lobby's own lists with.
//!
//! Pure: bytes in, entries out. Rules:
//! - lines end at `\n` only; a NUL ends the line; only the first 1,023 bytes of a
//!   line are read (the rest of that line is dropped);
//! - tokens as `COM_ParseFileSafe(..., PFILE_HASH_AS_COMMENT)`: bytes up to and
//!   including space separate; `//` or `#` starting a token comments out the rest of
//!   the line; `"..."` quotes a token (`\"` inside it is a quote); each of
//!   `{ } , ' ( )` is a token of its own;
//! - only the first two tokens count: the directive, exactly `ip` or `gs`
//!   (case-sensitive; anything else skips the line), and the address (a line with no
//!   address is skipped); further tokens are ignored;
//! - the address as `NET_StringToAdr` reads it: see [`parse_address`].

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// The longest line the engine reads (its buffer is 1,024 bytes with the NUL).
pub const MAX_LINE: usize = 1023;
/// The largest body the engine's HTTP client accepts.
pub const MAX_BODY: usize = 4 << 20;
/// The port the engine assumes for IPv4 addresses and names without one.
pub const DEFAULT_PORT: u16 = 27015;

/// What kind of server a line lists (`"ip"` or `"gs"` in JSON).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Directive {
    /// `ip`: a Xash3D FWGS server (protocol 49).
    Ip,
    /// `gs`: a GoldSrc server (protocol 48).
    Gs,
}

impl Directive {
    /// The directive as written in a list.
    pub fn as_str(self) -> &'static str {
        match self {
            Directive::Ip => "ip",
            Directive::Gs => "gs",
        }
    }
}

/// An address as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListedAddr {
    /// A numeric address.
    Ip(SocketAddr),
    /// A host name the engine resolves (blocking) before querying, and its port.
    Host(String, u16),
}

impl std::fmt::Display for ListedAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListedAddr::Ip(a) => write!(f, "{a}"),
            ListedAddr::Host(h, p) => write!(f, "{h}:{p}"),
        }
    }
}

/// One line the engine would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// `ip` or `gs`.
    pub directive: Directive,
    /// The address.
    pub addr: ListedAddr,
}

/// What reading a body found: the entries, and the lines the engine would log as
/// `masterstatic: can't parse address` (1-based line numbers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Usable entries, in body order (duplicates kept, as the engine keeps them).
    pub entries: Vec<Listed>,
    /// Lines whose address the engine cannot parse.
    pub bad_addresses: Vec<usize>,
}

/// Reads a body as the engine does.
pub fn parse_body(body: &[u8]) -> Parsed {
    let mut out = Parsed::default();
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let line = &raw[..raw.len().min(MAX_LINE)];
        let line = match line.iter().position(|&b| b == 0) {
            Some(n) => &line[..n],
            None => line,
        };
        let toks = tokens(line, 2);
        let (Some(d), Some(a)) = (toks.first(), toks.get(1)) else {
            continue;
        };
        let directive = match d.as_slice() {
            b"ip" => Directive::Ip,
            b"gs" => Directive::Gs,
            _ => continue,
        };
        match parse_address(a) {
            Some(addr) => out.entries.push(Listed { directive, addr }),
            None => out.bad_addresses.push(i + 1),
        }
    }
    out
}

fn is_single(b: u8) -> bool {
    matches!(b, b'{' | b'}' | b',' | b'\'' | b'(' | b')')
}

/// Up to `max` tokens of one line.
fn tokens(line: &[u8], max: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < max {
        while i < line.len() && line[i] <= b' ' {
            i += 1;
        }
        if i >= line.len() {
            break;
        }
        let rest = &line[i..];
        if rest.starts_with(b"//") || rest[0] == b'#' {
            break;
        }
        if rest[0] == b'"' {
            i += 1;
            let mut t = Vec::new();
            while i < line.len() {
                if line[i] == b'\\' && line.get(i + 1) == Some(&b'"') {
                    t.push(b'"');
                    i += 2;
                    continue;
                }
                if line[i] == b'"' {
                    i += 1;
                    break;
                }
                t.push(line[i]);
                i += 1;
            }
            out.push(t);
            continue;
        }
        if is_single(rest[0]) {
            out.push(vec![rest[0]]);
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && line[i] > b' ' && !is_single(line[i]) {
            i += 1;
        }
        out.push(line[start..i].to_vec());
    }
    out
}

/// A port as the engine reads it (`Q_atoi`: decimal, or hex after `0x`; a sign;
/// stops at the first other byte), wrapped modulo 65,536; 0 or nothing means
/// `default`.
fn port(text: &[u8], default: u16) -> u16 {
    let (neg, t) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    let v: i64 = if t.len() > 1 && (t.starts_with(b"0x") || t.starts_with(b"0X")) {
        t[2..]
            .iter()
            .map_while(|&b| (b as char).to_digit(16))
            .fold(0i64, |a, d| a.wrapping_mul(16).wrapping_add(d.into()))
    } else {
        t.iter()
            .map_while(|&b| (b as char).to_digit(10))
            .fold(0i64, |a, d| a.wrapping_mul(10).wrapping_add(d.into()))
    };
    let v = if neg { v.wrapping_neg() } else { v };
    match (v & 0xffff) as u16 {
        0 => default,
        p => p,
    }
}

/// An address as `NET_StringToAdr` reads it: `A.B.C.D[:PORT]` and `HOST[:PORT]`
/// (port 27015 when missing, empty or 0), `[V6]:PORT`; a bare IPv6 address or `[V6]`
/// without a port becomes port 65,535 (the engine's quirk: always write the port).
pub fn parse_address(t: &[u8]) -> Option<ListedAddr> {
    let s = std::str::from_utf8(t).ok()?;
    if s.is_empty() {
        return None;
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        let ip: Ipv6Addr = ip.parse().ok()?;
        let p = match after.strip_prefix(':') {
            Some(p) => port(p.as_bytes(), 0xffff),
            None if after.is_empty() => 0xffff,
            None => return None,
        };
        return Some(ListedAddr::Ip(SocketAddr::V6(SocketAddrV6::new(
            ip, p, 0, 0,
        ))));
    }
    if let Ok(ip) = s.parse::<Ipv6Addr>() {
        return Some(ListedAddr::Ip(SocketAddr::V6(SocketAddrV6::new(
            ip, 0xffff, 0, 0,
        ))));
    }
    let (host, p) = match s.split_once(':') {
        Some((h, p)) => (h, port(p.as_bytes(), DEFAULT_PORT)),
        None => (s, DEFAULT_PORT),
    };
    if host.is_empty() {
        return None;
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Some(ListedAddr::Ip(SocketAddr::V4(SocketAddrV4::new(ip, p))));
    }
    let name_ok = host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    name_ok.then(|| ListedAddr::Host(host.to_string(), p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(s: &str) -> ListedAddr {
        ListedAddr::Ip(s.parse().unwrap())
    }

    #[test]
    fn the_documented_example_and_comments() {
        let body = b"# valve server list\n// another comment\n\nip 1.2.3.4:27015\ngs [2001:db8::1]:27016 trailing tokens ignored\nip\nIP 5.6.7.8:1\n\xef\xbb\xbfip 9.9.9.9:1\nfoo 1.1.1.1:1\n  ip   \"10.0.0.1:27015\"  # note\nip 300.1.1.1:5\n";
        let p = parse_body(body);
        assert_eq!(
            p.entries,
            vec![
                Listed {
                    directive: Directive::Ip,
                    addr: ip("1.2.3.4:27015")
                },
                Listed {
                    directive: Directive::Gs,
                    addr: ip("[2001:db8::1]:27016")
                },
                Listed {
                    directive: Directive::Ip,
                    addr: ip("10.0.0.1:27015")
                },
                // Not an IPv4 literal, so a host name to the engine, which fails to
                // resolve it later.
                Listed {
                    directive: Directive::Ip,
                    addr: ListedAddr::Host("300.1.1.1".into(), 5)
                },
            ]
        );
        assert!(p.bad_addresses.is_empty());
    }

    #[test]
    fn ports_as_the_engine_reads_them() {
        assert_eq!(parse_address(b"1.2.3.4"), Some(ip("1.2.3.4:27015")));
        assert_eq!(parse_address(b"1.2.3.4:"), Some(ip("1.2.3.4:27015")));
        assert_eq!(parse_address(b"1.2.3.4:0"), Some(ip("1.2.3.4:27015")));
        assert_eq!(parse_address(b"1.2.3.4:0x6987"), Some(ip("1.2.3.4:27015")));
        assert_eq!(parse_address(b"1.2.3.4:65537"), Some(ip("1.2.3.4:1")));
        assert_eq!(parse_address(b"[::1]"), Some(ip("[::1]:65535")));
        assert_eq!(parse_address(b"::1"), Some(ip("[::1]:65535")));
        assert_eq!(parse_address(b"[::1]:27015"), Some(ip("[::1]:27015")));
        assert_eq!(
            parse_address(b"example.org:27016"),
            Some(ListedAddr::Host("example.org".into(), 27016))
        );
        assert_eq!(parse_address(b"[::1"), None);
        assert_eq!(parse_address(b":27015"), None);
    }

    #[test]
    fn long_lines_are_cut_and_nul_ends_a_line() {
        let mut body = b"ip 1.2.3.4:5".to_vec();
        body.extend(std::iter::repeat_n(b' ', 2000));
        body.extend_from_slice(b"x\nip 1.2.3.4:6\0junk\n");
        let p = parse_body(&body);
        assert_eq!(p.entries.len(), 2);
        let mut long = vec![b' '; MAX_LINE - 3];
        long.extend_from_slice(b"ip 1.2.3.4:7\n");
        assert!(
            parse_body(&long).entries.is_empty(),
            "the address is past the cut"
        );
    }

    proptest! {
        #[test]
        fn any_body_parses_without_panic(body in proptest::collection::vec(any::<u8>(), 0..4096)) {
            let p = parse_body(&body);
            prop_assert!(p.entries.len() + p.bad_addresses.len() <= body.len() / 4 + 1);
        }

        /// What lobby writes (`ip`/`gs` lines of numeric addresses, any port but 0)
        /// reads back exactly.
        #[test]
        fn written_lines_read_back(
            addrs in proptest::collection::vec((any::<bool>(), any::<u128>(), any::<bool>(), 1u16..), 0..50)
        ) {
            let mut body = String::from("# x server list\n# Generated 2026-12-03 10:00:00 UTC\n\n");
            let mut want = Vec::new();
            for (v6, bits, gs, port) in addrs {
                let a: SocketAddr = if v6 {
                    SocketAddr::from((Ipv6Addr::from(bits), port))
                } else {
                    SocketAddr::from((Ipv4Addr::from(bits as u32), port))
                };
                let d = if gs { Directive::Gs } else { Directive::Ip };
                body.push_str(&format!("{} {a}\n", d.as_str()));
                want.push(Listed { directive: d, addr: ListedAddr::Ip(a) });
            }
            prop_assert_eq!(parse_body(body.as_bytes()).entries, want);
        }
    }
}
