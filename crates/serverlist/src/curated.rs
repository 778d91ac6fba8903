//! Curated server lists in FWGS/server-list's own format (issue 19, "Sources"): one
//! `<gamedir>.toml` per game directory, each server a `[[server]]` table:
//!
//! ```toml
//! [[server]]
//! address = "203.0.113.7:27015"   # IP:PORT or HOST:PORT
//! protocol = 48                   # 49 (Xash3D, the default) or 48 (GoldSrc)
//! contact = "ops@example.org"     # never published
//! host = "Example community"      # a note
//! force = true                    # published even while silent
//! ```
//!
//! Pure: text in, typed entries out. An unknown key, a bad value or a bad address is an
//! error naming the file, the line and the key, so an operator can fix the file (the
//! caller keeps the previous good copy meanwhile). A file is at most [`MAX_FILE_BYTES`]
//! and [`MAX_SERVERS_PER_FILE`] entries: a checkout of FWGS/server-list is far below
//! both, and a wrong path cannot make the master hold a disk's worth.

use serde::Deserialize;
use std::fmt;

/// The largest source file read.
pub const MAX_FILE_BYTES: usize = 4 << 20;
/// The most servers one file may list.
pub const MAX_SERVERS_PER_FILE: usize = 20_000;
/// The longest game directory name (the engine's own limit on `gamedir`).
pub const MAX_GAMEDIR_LEN: usize = 63;

/// The protocol a curated entry is published under (`ip` or `gs` lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Xash3D FWGS, protocol 49 (`ip <addr>` lines).
    Xash,
    /// GoldSrc, protocol 48 (`gs <addr>` lines).
    GoldSrc,
}

/// One `[[server]]` of a curated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuratedServer {
    /// The address as written: `IP:PORT` or `HOST:PORT` (resolved by the caller).
    pub address: String,
    /// Its host part (without brackets for IPv6) and port.
    pub host_part: String,
    /// The port.
    pub port: u16,
    /// What it is published as.
    pub protocol: Protocol,
    /// Who to reach about it; never published.
    pub contact: Option<String>,
    /// The operator's note.
    pub host: Option<String>,
    /// Published even while it does not answer.
    pub force: bool,
    /// The line of its `[[server]]` header in the file.
    pub line: usize,
}

/// Why a curated file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// The file as the caller named it.
    pub file: String,
    /// The line the error is on (1-based), when known.
    pub line: Option<usize>,
    /// What is wrong, naming the key when there is one.
    pub what: String,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

impl std::error::Error for SourceError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDe {
    #[serde(default)]
    server: Vec<toml::Spanned<ServerDe>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerDe {
    address: String,
    #[serde(default)]
    protocol: Option<i64>,
    #[serde(default)]
    contact: Option<String>,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    force: bool,
}

/// The game directory a file name stands for (`valve.toml` → `valve`), if it is one:
/// letters, digits, `_`, `-` and `.` only, at most [`MAX_GAMEDIR_LEN`].
pub fn gamedir_of(file_name: &str) -> Option<&str> {
    let g = file_name.strip_suffix(".toml")?;
    let ok = !g.is_empty()
        && g.len() <= MAX_GAMEDIR_LEN
        && !g.starts_with('.')
        && g.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    ok.then_some(g)
}

/// The 1-based line of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Splits `HOST:PORT` or `[V6]:PORT` into host and port.
fn split_address(a: &str) -> Result<(String, u16), AddressError> {
    let bad = |why: Why| AddressError {
        address: a.to_string(),
        why,
    };
    let (host, port) = if let Some(rest) = a.strip_prefix('[') {
        let (h, p) = rest.split_once("]:").ok_or_else(|| bad(Why::NotV6Port))?;
        if h.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad(Why::NotV6(h.to_string())));
        }
        (h, p)
    } else {
        a.rsplit_once(':').ok_or_else(|| bad(Why::NotHostPort))?
    };
    let valid_host = !host.is_empty()
        && host.len() <= 253
        && (host.parse::<std::net::IpAddr>().is_ok()
            || host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'));
    if !valid_host {
        return Err(bad(Why::Host(host.to_string())));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok((host.to_string(), p)),
        _ => Err(bad(Why::Port(port.to_string()))),
    }
}

/// Why [`split_address`] refused an address, and the address.
#[derive(Debug, thiserror::Error)]
#[error("address {address:?}: {why}")]
struct AddressError {
    address: String,
    why: Why,
}

/// What is wrong with the address.
#[derive(Debug, thiserror::Error)]
enum Why {
    #[error("expected [IPV6]:PORT")]
    NotV6Port,
    #[error("{0:?} is not an IPv6 address")]
    NotV6(String),
    #[error("expected HOST:PORT")]
    NotHostPort,
    #[error("{0:?} is not a host name or IP")]
    Host(String),
    #[error("port {0:?} is not 1-65535")]
    Port(String),
}

/// Reads one curated file: `text` is its content, `file` its name in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<CuratedServer>, SourceError> {
    let err = |line: Option<usize>, what: String| SourceError {
        file: file.to_string(),
        line,
        what,
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(err(
            None,
            format!("{} bytes: more than {MAX_FILE_BYTES}", text.len()),
        ));
    }
    let de: FileDe = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, e.message().trim().to_string())
    })?;
    if de.server.len() > MAX_SERVERS_PER_FILE {
        return Err(err(
            None,
            format!(
                "{} servers: more than {MAX_SERVERS_PER_FILE}",
                de.server.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(de.server.len());
    for s in de.server {
        let line = line_of(text, s.span().start);
        let s = s.into_inner();
        let protocol = match s.protocol {
            None | Some(49) => Protocol::Xash,
            Some(48) => Protocol::GoldSrc,
            Some(p) => {
                return Err(err(
                    Some(line),
                    format!("key `protocol`: {p} is neither 49 (Xash3D) nor 48 (GoldSrc)"),
                ))
            }
        };
        let address = s.address.trim().to_string();
        let (host_part, port) =
            split_address(&address).map_err(|w| err(Some(line), format!("key `address`: {w}")))?;
        out.push(CuratedServer {
            address,
            host_part,
            port,
            protocol,
            contact: s.contact.filter(|c| !c.trim().is_empty()),
            host: s.host.filter(|h| !h.trim().is_empty()),
            force: s.force,
            line,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The shape of FWGS/server-list's `servers/valve.toml` (addresses from the
    /// documentation ranges; a legacy entry without a contact, a forced one, GoldSrc).
    const VALVE: &str = r#"
# Half-Life deathmatch servers

[[server]]
address = "203.0.113.7:27015"
contact = "ops@example.org"
host = "Example community"

[[server]]
address = "198.51.100.20:27016"

[[server]]
address = "hl.example.net:27015"
protocol = 48
force = true
contact = "https://example.net/contact"

[[server]]
address = "[2001:db8::7]:27015"
protocol = 49
"#;

    #[test]
    fn the_server_list_format_is_read_as_written() {
        let s = parse(VALVE, "valve.toml").unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].address, "203.0.113.7:27015");
        assert_eq!(
            (s[0].protocol, s[0].port, s[0].line),
            (Protocol::Xash, 27015, 4)
        );
        assert_eq!(s[0].contact.as_deref(), Some("ops@example.org"));
        assert_eq!(s[1].contact, None, "legacy entries have no contact");
        assert_eq!(
            (s[2].host_part.as_str(), s[2].protocol, s[2].force),
            ("hl.example.net", Protocol::GoldSrc, true)
        );
        assert_eq!((s[3].host_part.as_str(), s[3].port), ("2001:db8::7", 27015));
        assert!(parse("", "empty.toml").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        let e = parse(
            "[[server]]\naddress = \"203.0.113.7:27015\"\n\n[[server]]\naddress = \"203.0.113.8:27015\"\nport = 1\n",
            "valve.toml",
        )
        .unwrap_err();
        assert_eq!(e.file, "valve.toml");
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.to_string().contains("port"), "{e}");
        let e = parse(
            "[[server]]\naddress = \"203.0.113.7:27015\"\nprotocol = 47\n",
            "f.toml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.what.contains("`protocol`"), "{e}");
        let e = parse("[[server]]\naddress = \"203.0.113.7\"\n", "f.toml").unwrap_err();
        assert!(e.what.contains("`address`"), "{e}");
        let e = parse("[[server]]\ncontact = \"x\"\n", "f.toml").unwrap_err();
        assert!(e.what.contains("address"), "missing address: {e}");
        let e = parse("[servers]\n", "f.toml").unwrap_err();
        assert!(e.what.contains("servers"), "unknown table: {e}");
        for bad in [
            "a b:1",
            "[::1:27015",
            "[nope]:1",
            "h:0",
            "h:65536",
            ":27015",
            "h:",
        ] {
            assert!(split_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gamedirs_come_from_file_names() {
        assert_eq!(gamedir_of("valve.toml"), Some("valve"));
        assert_eq!(gamedir_of("cstrike.toml"), Some("cstrike"));
        for bad in [
            "valve.txt",
            ".toml",
            ".hidden.toml",
            "a/b.toml",
            "sp ace.toml",
        ] {
            assert_eq!(gamedir_of(bad), None, "{bad}");
        }
        assert_eq!(gamedir_of(&format!("{}.toml", "g".repeat(64))), None);
    }

    #[test]
    fn an_oversized_file_is_refused_before_it_is_parsed() {
        let big = "#".repeat(MAX_FILE_BYTES + 1);
        assert!(parse(&big, "big.toml").unwrap_err().what.contains("bytes"));
    }

    proptest! {
        /// Whatever the text, parsing returns (no panic), and every entry it accepts
        /// has a port and a protocol.
        #[test]
        fn any_text_parses_or_is_refused(text in ".{0,400}") {
            if let Ok(v) = parse(&text, "f.toml") {
                for s in v {
                    prop_assert!(s.port > 0);
                    prop_assert!(s.line >= 1);
                }
            }
        }

        #[test]
        fn written_entries_read_back(ip in any::<[u8; 4]>(), port in 1u16.., gs in any::<bool>(), force in any::<bool>()) {
            let addr = format!("{}.{}.{}.{}:{port}", ip[0], ip[1], ip[2], ip[3]);
            let text = format!("[[server]]\naddress = \"{addr}\"\nprotocol = {}\nforce = {force}\n", if gs { 48 } else { 49 });
            let v = parse(&text, "f.toml").unwrap();
            prop_assert_eq!(v.len(), 1);
            prop_assert_eq!(&v[0].address, &addr);
            prop_assert_eq!(v[0].port, port);
            prop_assert_eq!(v[0].force, force);
            prop_assert_eq!(v[0].protocol, if gs { Protocol::GoldSrc } else { Protocol::Xash });
        }
    }
}
