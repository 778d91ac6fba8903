//! The words both ends exchange besides reports: the identification line, the
//! acknowledgement, keep-alives and error replies. Shared so the client and the server
//! cannot disagree on a spelling.

use crate::message::sanitize_field;

/// The protocol tag fgms 0.13.10 identifies with (`"V" + m_ProtocolVersion`).
pub const V20151207: &str = "V20151207";
/// The tag of older fgms, which did not wait for acknowledgements.
pub const NOWAIT: &str = "NOWAIT";
/// The tracker's acknowledgement of one committed message.
pub const OK: &str = "OK";
/// Keep-alive request, sent by either end after a silence.
pub const PING: &str = "PING";
/// Keep-alive answer.
pub const PONG: &str = "PONG";
/// Prefix of the tracker's answer to a successful identification.
pub const IDENTIFIED: &str = "IDENTIFIED";
/// Prefix of error reports; neither end answers them.
pub const ERROR: &str = "ERROR";
/// Prefix of fgms's diagnostic lines; the tracker ignores them.
pub const DEBUG: &str = "DEBUG";
/// The tracker's last words before it closes a connection, whatever the reason.
pub const CLOSING: &str = "ERROR FGTracker is closing your connection";

/// The word a lobby relay starts its first message with to prove a shared secret
/// (`SECRET <secret>`). fgtracker discards the first message unread, so a real tracker
/// takes it as fgms's lone `\0`.
pub const SECRET: &str = "SECRET";

/// The first message carrying `secret` (empty: fgms's empty first message).
pub fn greeting(secret: &str) -> String {
    if secret.is_empty() {
        String::new()
    } else {
        format!("{SECRET} {}", sanitize_field(secret))
    }
}

/// The secret a first message carries, if it is a `SECRET` greeting.
pub fn greeting_secret(first: &str) -> Option<&str> {
    first
        .strip_prefix(SECRET)?
        .strip_prefix(' ')
        .filter(|s| !s.is_empty())
}

/// How a reporting server identified itself (its second message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ident {
    /// fgms 0.13.x: `V20151207 <fgms version> <FQDN> <server name>`. Every message is
    /// acknowledged with one `OK`.
    V20151207 {
        /// The fgms version text (the tracker stores it as `reported_ver`).
        version: String,
        /// The FQDN the server claims (the tracker checks it resolves to the peer).
        fqdn: String,
        /// The server's own name (everything after the third space; the tracker
        /// never reads it).
        name: String,
    },
    /// An older fgms: one 8-field POSITION line per message, every message `OK`ed.
    NoWait,
}

/// fgms's identification line: `V20151207 <version> <fqdn> <server_name>`.
///
/// The tracker splits it on single spaces and reads the version and FQDN by
/// position, so those two are [`sanitize_field`]ed; the server name is last and never
/// read, so only control characters (a `\0` would end the frame) are replaced.
pub fn ident_line(version: &str, fqdn: &str, server_name: &str) -> String {
    let name: String = server_name
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    format!(
        "{V20151207} {} {} {name}",
        sanitize_field(version),
        sanitize_field(fqdn)
    )
}

/// The identification in a second message, or `None` for an unsupported protocol
/// (the tracker then closes). Split on single spaces like the tracker; missing fields
/// are empty.
pub fn parse_ident(line: &str) -> Option<Ident> {
    let mut fields = line.splitn(4, ' ');
    match fields.next()? {
        V20151207 => {
            let mut next = || fields.next().unwrap_or("").to_string();
            Some(Ident::V20151207 {
                version: next(),
                fqdn: next(),
                name: next(),
            })
        }
        NOWAIT => Some(Ident::NoWait),
        _ => None,
    }
}

/// The tracker's answer to an accepted identification: `IDENTIFIED <name>`, the name
/// from its own whitelist (control characters replaced, so it stays one frame).
pub fn identified(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    format!("{IDENTIFIED} {name}")
}

/// fgms's answer to a tracker message it does not know:
/// `ERROR Unrecognized message "<msg>"`.
pub fn unrecognized(msg: &str) -> String {
    format!("{ERROR} Unrecognized message \"{msg}\"")
}

/// The tracker's answer to a fatal line: `ERROR Message "<line>" not recognized`.
pub fn not_recognized(line: &str) -> String {
    format!("{ERROR} Message \"{line}\" not recognized")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ident_line_shape() {
        assert_eq!(
            ident_line("0.13.10", "mpserver01.flightgear.org", "mpserver01"),
            "V20151207 0.13.10 mpserver01.flightgear.org mpserver01"
        );
        assert_eq!(
            ident_line("lobby 0.1", "a b", "My Server\0"),
            "V20151207 lobby_0.1 a_b My Server_"
        );
    }

    #[test]
    fn ident_parses_as_the_tracker_splits() {
        assert_eq!(
            parse_ident("V20151207 0.13.10 mp.example.org My Server"),
            Some(Ident::V20151207 {
                version: "0.13.10".into(),
                fqdn: "mp.example.org".into(),
                name: "My Server".into()
            })
        );
        assert_eq!(
            parse_ident("V20151207"),
            Some(Ident::V20151207 {
                version: String::new(),
                fqdn: String::new(),
                name: String::new()
            })
        );
        assert_eq!(parse_ident("NOWAIT"), Some(Ident::NoWait));
        assert_eq!(parse_ident("NOWAIT extra"), Some(Ident::NoWait));
        assert_eq!(parse_ident("V20170620 x y z"), None);
        assert_eq!(parse_ident(" V20151207 x y z"), None);
        assert_eq!(parse_ident(""), None);
    }

    #[test]
    fn replies() {
        assert_eq!(identified("mpserver01"), "IDENTIFIED mpserver01");
        assert_eq!(
            unrecognized("HELLO"),
            "ERROR Unrecognized message \"HELLO\""
        );
        assert_eq!(
            not_recognized("FOO a test"),
            "ERROR Message \"FOO a test\" not recognized"
        );
    }
}
