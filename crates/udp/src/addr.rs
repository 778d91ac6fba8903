//! Turning what a user typed (`HOST`, `HOST:PORT`, `IP`, `[IPv6]:PORT`) into socket
//! addresses, in one place for every command and configuration key.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// An address literal: `IP:PORT`, `[IPv6]:PORT`, or a bare `IP` / `[IPv6]` that gets
/// `default_port`. `None` for anything else (a host name, garbage).
pub fn parse_literal(text: &str, default_port: u16) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Some(a);
    }
    let bare = text
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(text);
    bare.parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(ip, default_port))
}

/// Every address `text` names: a literal as it is, otherwise `HOST[:PORT]` looked up
/// with the system resolver (`default_port` when no port is given). The error names
/// the text.
pub fn resolve_all(text: &str, default_port: u16) -> io::Result<Vec<SocketAddr>> {
    if let Some(a) = parse_literal(text, default_port) {
        return Ok(vec![a]);
    }
    let text = text.trim();
    let has_port = text
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.contains(':') && port.parse::<u16>().is_ok());
    let query = if has_port {
        text.to_string()
    } else {
        format!("{text}:{default_port}")
    };
    let found: Vec<SocketAddr> = query
        .to_socket_addrs()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {text:?}: {e}")))?
        .collect();
    if found.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{text:?} resolved to no address"),
        ));
    }
    Ok(found)
}

/// The first address `text` names (see [`resolve_all`]).
pub fn resolve(text: &str, default_port: u16) -> io::Result<SocketAddr> {
    Ok(resolve_all(text, default_port)?[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_names() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(parse_literal("127.0.0.1", 53), Some(a("127.0.0.1:53")));
        assert_eq!(
            parse_literal(" 127.0.0.1:5353 ", 53),
            Some(a("127.0.0.1:5353"))
        );
        assert_eq!(parse_literal("::1", 53), Some(a("[::1]:53")));
        assert_eq!(parse_literal("[::1]", 53), Some(a("[::1]:53")));
        assert_eq!(parse_literal("[::1]:5353", 53), Some(a("[::1]:5353")));
        assert_eq!(parse_literal("localhost", 53), None);
        assert_eq!(resolve("192.0.2.1", 27010).unwrap(), a("192.0.2.1:27010"));
        let local = resolve_all("localhost", 27015).unwrap();
        assert!(local
            .iter()
            .all(|x| x.port() == 27015 && x.ip().is_loopback()));
        assert!(resolve_all("localhost:27016", 1)
            .unwrap()
            .iter()
            .all(|x| x.port() == 27016));
        let e = resolve("no such host.invalid", 1).unwrap_err();
        assert!(e.to_string().contains("no such host.invalid"), "{e}");
    }
}
