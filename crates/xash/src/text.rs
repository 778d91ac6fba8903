//! Xash text queries: `ping`/`ack`, GoldSrc `i`/`j`, and `info <proto>` with its
//! info-string reply or `wrong version` line. All are `FF×4` + text, no NUL
//! (the engine's `Netchan_OutOfBandPrint`).

use crate::info::InfoString;
use crate::{Error, OOB};
use wire::Cursor;

/// A ping in either spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ping {
    /// Xash `ping`, answered with `ack`.
    Xash,
    /// GoldSrc `i`, answered with `j`.
    GoldSrc,
}

/// A ping reply in either spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    /// `ack`
    Xash,
    /// `j` (the engine sends no NUL; some tools wrongly expect one, so one is tolerated)
    GoldSrc,
}

fn oob_text(p: &[u8]) -> Result<&[u8], Error> {
    p.strip_prefix(&OOB[..]).ok_or(Error::WrongHeader)
}

impl Ping {
    /// Decodes `FF×4 ping` or `FF×4 i` (a trailing newline or NUL is tolerated).
    pub fn decode(p: &[u8]) -> Result<Ping, Error> {
        match trim_line(oob_text(p)?) {
            b"ping" => Ok(Ping::Xash),
            b"i" => Ok(Ping::GoldSrc),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&OOB);
        out.extend_from_slice(match self {
            Ping::Xash => b"ping",
            Ping::GoldSrc => b"i",
        });
    }

    /// The reply a server sends.
    pub fn reply(&self) -> Ack {
        match self {
            Ping::Xash => Ack::Xash,
            Ping::GoldSrc => Ack::GoldSrc,
        }
    }
}

impl Ack {
    /// Decodes `FF×4 ack` or `FF×4 j`.
    pub fn decode(p: &[u8]) -> Result<Ack, Error> {
        match trim_line(oob_text(p)?) {
            b"ack" => Ok(Ack::Xash),
            b"j" => Ok(Ack::GoldSrc),
            _ => Err(Error::WrongHeader),
        }
    }

    /// Encodes as the engine does (no NUL).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&OOB);
        out.extend_from_slice(match self {
            Ack::Xash => b"ack",
            Ack::GoldSrc => b"j",
        });
    }
}

fn trim_line(t: &[u8]) -> &[u8] {
    let end = t
        .iter()
        .position(|&b| b == b'\n' || b == 0)
        .unwrap_or(t.len());
    &t[..end]
}

/// `FF×4 info <proto>`: the Xash info query (the engine client still uses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoQuery {
    /// Protocol the client speaks (49; 48 for old clients).
    pub protocol: u32,
}

impl InfoQuery {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffinfo ";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<InfoQuery, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let t = trim_line(c.take_rest());
        let t = std::str::from_utf8(t).map_err(|_| Error::InvalidField("protocol"))?;
        let protocol = t
            .trim()
            .parse()
            .map_err(|_| Error::InvalidField("protocol"))?;
        Ok(InfoQuery { protocol })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(self.protocol.to_string().as_bytes());
    }
}

/// The reply to `info <proto>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InfoReply {
    /// `FF×4 info\n` + info string (`\p\49\map\...\host\...`).
    Info(InfoString),
    /// `FF×4 info\n<hostname>: wrong version\n`: the server speaks another protocol.
    WrongVersion {
        /// The server's hostname.
        host: Vec<u8>,
    },
}

impl InfoReply {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffinfo\n";
    const WRONG: &'static [u8] = b": wrong version\n";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<InfoReply, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let rest = c.take_rest();
        if let Some(host) = rest.strip_suffix(Self::WRONG) {
            return Ok(InfoReply::WrongVersion {
                host: host.to_vec(),
            });
        }
        let text = rest.strip_suffix(b"\n").unwrap_or(rest);
        Ok(InfoReply::Info(InfoString::parse(text)?))
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        match self {
            InfoReply::Info(i) => i.encode(out),
            InfoReply::WrongVersion { host } => {
                out.extend_from_slice(host);
                out.extend_from_slice(Self::WRONG);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../testdata/xash3d/probe/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn real_server_replies() {
        assert_eq!(
            Ping::decode(&capture("11_ping.req.bin")).unwrap(),
            Ping::Xash
        );
        assert_eq!(
            Ack::decode(&capture("11_ping.resp0.bin")).unwrap(),
            Ack::Xash
        );
        assert_eq!(
            Ping::decode(&capture("12_goldsrc_ping_i.req.bin")).unwrap(),
            Ping::GoldSrc
        );
        assert_eq!(
            Ack::decode(&capture("12_goldsrc_ping_i.resp0.bin")).unwrap(),
            Ack::GoldSrc
        );
        for (p, a) in [
            (Ping::Xash, "11_ping"),
            (Ping::GoldSrc, "12_goldsrc_ping_i"),
        ] {
            let mut b = Vec::new();
            p.encode(&mut b);
            assert_eq!(b, capture(&format!("{a}.req.bin")));
            b.clear();
            p.reply().encode(&mut b);
            assert_eq!(b, capture(&format!("{a}.resp0.bin")));
        }
        let q = InfoQuery::decode(&capture("09_xash_info_49.req.bin")).unwrap();
        assert_eq!(q.protocol, 49);
        let r = InfoReply::decode(&capture("09_xash_info_49.resp0.bin")).unwrap();
        let InfoReply::Info(info) = &r else { panic!() };
        assert_eq!(info.get("host"), Some(&b"Xash loopback test"[..]));
        assert_eq!(info.get("p"), Some(&b"49"[..]));
        assert_eq!(info.get("maxcl"), Some(&b"4"[..]));
        let mut b = Vec::new();
        r.encode(&mut b);
        assert_eq!(b, capture("09_xash_info_49.resp0.bin"));
        let w = InfoReply::decode(&capture("10_xash_info_48.resp0.bin")).unwrap();
        assert_eq!(
            w,
            InfoReply::WrongVersion {
                host: b"Xash loopback test".to_vec()
            }
        );
        let mut b = Vec::new();
        w.encode(&mut b);
        assert_eq!(b, capture("10_xash_info_48.resp0.bin"));
        assert_eq!(
            InfoQuery::decode(&capture("10_xash_info_48.req.bin"))
                .unwrap()
                .protocol,
            48
        );
    }
}
