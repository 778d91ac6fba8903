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
//! Pure: text in, typed entries out, read as probe.py and FWGS/server-list's
//! pull-request check read it (issue 29): an unknown key is a warning naming the file,
//! the line and the key, and its entry is kept; an entry that cannot be used is
//! skipped and named (file, line, what is wrong); the rest of the file is read. Only a
//! file that is not TOML at all is an error (the caller keeps its previous good copy
//! meanwhile). A file is at most [`MAX_FILE_BYTES`]
//! and [`MAX_SERVERS_PER_FILE`] entries: a checkout of FWGS/server-list is far below
//! both, and a wrong path cannot make the master hold a disk's worth.

use serde::Deserialize;
use std::collections::BTreeMap;
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

/// The keys of a `[[server]]` table with their spans (for the line of each).
type TableDe = BTreeMap<toml::Spanned<String>, toml::Spanned<toml::Value>>;

#[derive(Deserialize)]
struct FileDe {
    #[serde(default)]
    server: Option<Vec<toml::Spanned<TableDe>>>,
}

/// The keys a `[[server]]` table may have (FWGS/server-list's README).
pub const KNOWN_KEYS: [&str; 5] = ["address", "protocol", "contact", "host", "force"];

/// How bad an [`Issue`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The entry is used (an unknown key, a protocol written as a string, `force = 1`:
    /// probe.py reads them the same way).
    Warning,
    /// The entry cannot be used and is left out; the rest of the file is read.
    Skipped,
}

/// Something wrong with one entry (or one top-level key) of a curated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The file as the caller named it.
    pub file: String,
    /// The line (1-based) of the key, or of the entry's `[[server]]` header.
    pub line: usize,
    /// Used with a warning, or skipped.
    pub severity: Severity,
    /// What is wrong, naming the key.
    pub what: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.severity {
            Severity::Warning => "warning",
            Severity::Skipped => "entry skipped",
        };
        write!(f, "{}:{}: {how}: {}", self.file, self.line, self.what)
    }
}

/// A curated file read: the entries it can use, and what was wrong with the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The usable entries, in file order.
    pub servers: Vec<CuratedServer>,
    /// Warnings (entry kept) and skipped entries, in file order.
    pub issues: Vec<Issue>,
}

impl Parsed {
    /// How many entries were skipped.
    pub fn skipped(&self) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Skipped)
            .count()
    }
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

/// A protocol value as probe.py reads it (`int(entry.get("protocol") or 49)`):
/// `Ok((protocol, warning))`, or why the entry cannot be used.
fn protocol_of(v: &toml::Value) -> Result<(Protocol, Option<String>), String> {
    let (n, warn) = match v {
        toml::Value::Integer(n) => (*n, None),
        toml::Value::String(t) => match t.trim().parse::<i64>() {
            Ok(n) => (
                n,
                Some(format!(
                    "key `protocol`: {t:?} is a string; read as {n} (as probe.py reads it), write protocol = {n}"
                )),
            ),
            Err(_) => return Err(format!("key `protocol`: {t:?} is not a number")),
        },
        other => {
            return Err(format!(
                "key `protocol`: expected 49 or 48, found {}",
                other.type_str()
            ))
        }
    };
    match n {
        49 => Ok((Protocol::Xash, warn)),
        48 => Ok((Protocol::GoldSrc, warn)),
        p => Err(format!(
            "key `protocol`: {p} is neither 49 (Xash3D) nor 48 (GoldSrc)"
        )),
    }
}

/// A `force` value: a boolean, or an integer read as probe.py reads it (non-zero is
/// true) with a warning; anything else cannot be used.
fn force_of(v: &toml::Value) -> Result<(bool, Option<String>), String> {
    match v {
        toml::Value::Boolean(b) => Ok((*b, None)),
        toml::Value::Integer(n) => Ok((
            *n != 0,
            Some(format!(
                "key `force`: {n} is not true or false; read as {} (as probe.py reads it)",
                *n != 0
            )),
        )),
        other => Err(format!(
            "key `force`: expected true or false, found {}",
            other.type_str()
        )),
    }
}

/// One `[[server]]` table: the entry, or why it is skipped; warnings go to `issues`.
fn entry(
    table: TableDe,
    header: usize,
    text: &str,
    file: &str,
    issues: &mut Vec<Issue>,
) -> Result<CuratedServer, Issue> {
    let at = |span: std::ops::Range<usize>| line_of(text, span.start);
    let issue = |line: usize, severity: Severity, what: String| Issue {
        file: file.to_string(),
        line,
        severity,
        what,
    };
    let mut get = BTreeMap::new();
    for (k, v) in table {
        let line = at(k.span());
        let key = k.into_inner();
        if KNOWN_KEYS.contains(&key.as_str()) {
            get.insert(key, (line, v.into_inner()));
        } else {
            issues.push(issue(
                line,
                Severity::Warning,
                format!("key `{key}` is unknown (ignored; the entry is kept)"),
            ));
        }
    }
    let skip = |line: usize, what: String| issue(line, Severity::Skipped, what);
    let (address, address_line) = match get.get("address") {
        None => return Err(skip(header, "no `address`".into())),
        Some((l, toml::Value::String(a))) => (a.trim().to_string(), *l),
        Some((l, v)) => {
            return Err(skip(
                *l,
                format!("key `address`: expected a string, found {}", v.type_str()),
            ))
        }
    };
    let (host_part, port) =
        split_address(&address).map_err(|w| skip(address_line, format!("key `address`: {w}")))?;
    let mut warn = |line: usize, w: Option<String>| {
        if let Some(w) = w {
            issues.push(issue(line, Severity::Warning, w));
        }
    };
    let protocol = match get.get("protocol") {
        None => Protocol::Xash,
        Some((l, v)) => {
            let (p, w) = protocol_of(v).map_err(|e| skip(*l, e))?;
            warn(*l, w);
            p
        }
    };
    let force = match get.get("force") {
        None => false,
        Some((l, v)) => {
            let (f, w) = force_of(v).map_err(|e| skip(*l, e))?;
            warn(*l, w);
            f
        }
    };
    let mut text_key = |k: &str| match get.get(k) {
        None => None,
        Some((_, toml::Value::String(s))) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Some((l, v)) => {
            issues.push(issue(
                *l,
                Severity::Warning,
                format!(
                    "key `{k}`: expected a string, found {} (ignored)",
                    v.type_str()
                ),
            ));
            None
        }
    };
    let contact = text_key("contact");
    let host = text_key("host");
    Ok(CuratedServer {
        address,
        host_part,
        port,
        protocol,
        contact,
        host,
        force,
        line: header,
    })
}

/// Reads one curated file: `text` is its content, `file` its name in messages.
///
/// As probe.py and FWGS/server-list's pull-request check read it: an unknown key
/// is a warning and its entry is kept; an entry that cannot be used (no address, an
/// address without a port, a protocol other than 49 or 48, a `force` that is not a
/// boolean or an integer) is skipped and named; every other entry is read. Only a
/// file that is not TOML, is too large, or whose `server` is not an array of tables
/// is an error.
pub fn parse(text: &str, file: &str) -> Result<Parsed, SourceError> {
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
    let toml_err = |e: toml::de::Error| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, e.message().trim().to_string())
    };
    let top: BTreeMap<toml::Spanned<String>, serde::de::IgnoredAny> =
        toml::from_str(text).map_err(toml_err)?;
    let de: FileDe = toml::from_str(text).map_err(toml_err)?;
    let servers = de.server.unwrap_or_default();
    if servers.len() > MAX_SERVERS_PER_FILE {
        return Err(err(
            None,
            format!(
                "{} servers: more than {MAX_SERVERS_PER_FILE}",
                servers.len()
            ),
        ));
    }
    let mut out = Parsed::default();
    for k in top.keys().filter(|k| k.get_ref() != "server") {
        out.issues.push(Issue {
            file: file.to_string(),
            line: line_of(text, k.span().start),
            severity: Severity::Warning,
            what: format!("top-level key `{}` is unknown (ignored)", k.get_ref()),
        });
    }
    for s in servers {
        let header = line_of(text, s.span().start);
        match entry(s.into_inner(), header, text, file, &mut out.issues) {
            Ok(e) => out.servers.push(e),
            Err(i) => out.issues.push(i),
        }
    }
    out.issues.sort_by_key(|i| i.line);
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
        let p = parse(VALVE, "valve.toml").unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let s = p.servers;
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
        assert!(parse("", "empty.toml").unwrap().servers.is_empty());
    }

    /// One issue of `text`'s parse, which must have exactly one.
    fn one_issue(text: &str) -> (Parsed, Issue) {
        let p = parse(text, "valve.toml").unwrap();
        assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
        let i = p.issues[0].clone();
        (p, i)
    }

    #[test]
    fn a_bad_entry_is_skipped_and_named_and_the_rest_is_read() {
        let good = "[[server]]\naddress = \"192.0.2.1:27015\"\n\n";
        for (bad, line, what) in [
            (
                "[[server]]\naddress = \"192.0.2.2:27015\"\nprotocol = 47\n",
                6,
                "`protocol`: 47",
            ),
            ("[[server]]\ncontact = \"x\"\n", 4, "no `address`"),
            ("[[server]]\naddress = \"192.0.2.2\"\n", 5, "`address`"),
            (
                "[[server]]\naddress = 7\n",
                5,
                "`address`: expected a string",
            ),
            (
                "[[server]]\naddress = \"192.0.2.2:27015\"\nforce = \"yes\"\n",
                6,
                "`force`",
            ),
            (
                "[[server]]\naddress = \"192.0.2.2:27015\"\nprotocol = \"x\"\n",
                6,
                "`protocol`",
            ),
            (
                "[[server]]\naddress = \"192.0.2.2:27015\"\nprotocol = true\n",
                6,
                "`protocol`",
            ),
        ] {
            let text = format!("{good}{bad}\n{good}");
            let (p, i) = one_issue(&text);
            assert_eq!(p.servers.len(), 2, "{text}");
            assert_eq!(p.skipped(), 1);
            assert_eq!((i.severity, i.line), (Severity::Skipped, line), "{i}");
            assert!(i.what.contains(what), "{i}");
            assert!(
                i.to_string()
                    .starts_with(&format!("valve.toml:{line}: entry skipped: ")),
                "{i}"
            );
        }
    }

    #[test]
    fn what_probe_py_reads_the_same_way_is_a_warning_and_the_entry_is_kept() {
        let (p, i) = one_issue("[[server]]\naddress = \"192.0.2.1:27015\"\nport = 1\n");
        assert_eq!((i.severity, i.line), (Severity::Warning, 3));
        assert!(i.what.contains("`port`"), "{i}");
        assert_eq!(p.servers.len(), 1);
        let (p, i) = one_issue("[[server]]\naddress = \"192.0.2.1:27015\"\nprotocol = \"48\"\n");
        assert_eq!((i.severity, i.line), (Severity::Warning, 3));
        assert_eq!(p.servers[0].protocol, Protocol::GoldSrc);
        let (p, i) = one_issue("[[server]]\naddress = \"192.0.2.1:27015\"\nforce = 1\n");
        assert_eq!(i.severity, Severity::Warning);
        assert!(p.servers[0].force);
        let (p, i) = one_issue("title = \"x\"\n[[server]]\naddress = \"192.0.2.1:27015\"\n");
        assert_eq!((i.severity, i.line), (Severity::Warning, 1), "{i}");
        assert_eq!(p.servers.len(), 1);
        let (p, _) = one_issue("[[server]]\naddress = \"192.0.2.1:27015\"\ncontact = 5\n");
        assert_eq!(p.servers[0].contact, None);
    }

    #[test]
    fn only_a_file_that_is_not_toml_is_an_error() {
        let e = parse("[[server]]\naddress = \"a\nb\"\n", "f.toml").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("f.toml", Some(2)), "{e}");
        let e = parse("[server]\naddress = \"192.0.2.1:1\"\n", "f.toml").unwrap_err();
        assert!(e.to_string().starts_with("f.toml"), "{e}");
        for bad in [
            "a b:1",
            "[::1:27015",
            "[nope]:1",
            "h:0",
            "h:65536",
            ":27015",
            "h:",
            "192.0.2.1",
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
                for i in &v.issues {
                    prop_assert!(i.line >= 1);
                }
                for s in v.servers {
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
            prop_assert!(v.issues.is_empty());
            let v = v.servers;
            prop_assert_eq!(v.len(), 1);
            prop_assert_eq!(&v[0].address, &addr);
            prop_assert_eq!(v[0].port, port);
            prop_assert_eq!(v[0].force, force);
            prop_assert_eq!(v[0].protocol, if gs { Protocol::GoldSrc } else { Protocol::Xash });
        }
    }
}
