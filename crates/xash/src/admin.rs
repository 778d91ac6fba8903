//! The master's admin protocol (xash3d-master's wire format), plus lobby's
//! acknowledgement, which xash3d-master never sends.
//!
//! 1. client → master, raw `adminchallenge`;
//! 2. master → client, `FF×4 adminchallenge` + u32 master challenge + u32 hash challenge;
//! 3. client → master, raw `admin` + u32 master challenge + hash + command text, where
//!    hash = BLAKE2b(len, key, personal)(password ‖ hash challenge LE): no password on the wire;
//! 4. master → client (lobby only), `FF×4 adminreply ok|error <text>`.

use crate::Error;
use wire::Cursor;

/// `adminchallenge` (raw, exactly these 14 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminChallengeRequest;

impl AdminChallengeRequest {
    /// Wire bytes.
    pub const HEADER: &'static [u8] = b"adminchallenge";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<Self, Error> {
        if p == Self::HEADER {
            Ok(AdminChallengeRequest)
        } else {
            Err(Error::WrongHeader)
        }
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
    }
}

/// The master's answer to [`AdminChallengeRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminChallengeReply {
    /// Echoed in the command.
    pub master_challenge: u32,
    /// Hashed with the password.
    pub hash_challenge: u32,
}

impl AdminChallengeReply {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffadminchallenge";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let r = AdminChallengeReply {
            master_challenge: c.u32_le()?,
            hash_challenge: c.u32_le()?,
        };
        c.finish()?;
        Ok(r)
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(&self.master_challenge.to_le_bytes());
        out.extend_from_slice(&self.hash_challenge.to_le_bytes());
    }
}

/// An authenticated admin command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminCommand {
    /// From the challenge reply.
    pub master_challenge: u32,
    /// BLAKE2b of password ‖ hash challenge, `hash_len` bytes.
    pub hash: Vec<u8>,
    /// Command text, e.g. `ban 192.0.2.7`.
    pub command: String,
}

impl AdminCommand {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"admin";

    /// Decodes with the configured hash length.
    pub fn decode(p: &[u8], hash_len: usize) -> Result<Self, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        if c.rest().starts_with(b"challenge") {
            return Err(Error::WrongHeader);
        }
        let master_challenge = c.u32_le()?;
        let hash = c.take(hash_len)?.to_vec();
        let command = std::str::from_utf8(c.take_rest())
            .map_err(|_| Error::InvalidField("command is not UTF-8"))?
            .to_string();
        Ok(AdminCommand {
            master_challenge,
            hash,
            command,
        })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(&self.master_challenge.to_le_bytes());
        out.extend_from_slice(&self.hash);
        out.extend_from_slice(self.command.as_bytes());
    }
}

/// lobby's acknowledgement of an admin command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminReply {
    /// Whether the command was carried out.
    pub ok: bool,
    /// What happened, for the operator.
    pub text: String,
}

impl AdminReply {
    /// Wire prefix.
    pub const HEADER: &'static [u8] = b"\xff\xff\xff\xffadminreply ";

    /// Decodes.
    pub fn decode(p: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(p);
        c.expect(Self::HEADER)?;
        let t =
            std::str::from_utf8(c.take_rest()).map_err(|_| Error::InvalidField("reply text"))?;
        let (status, text) = t.split_once(' ').unwrap_or((t, ""));
        let ok = match status {
            "ok" => true,
            "error" => false,
            _ => return Err(Error::InvalidField("reply status")),
        };
        Ok(AdminReply {
            ok,
            text: text.to_string(),
        })
    }

    /// Encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(Self::HEADER);
        out.extend_from_slice(if self.ok { b"ok " } else { b"error " });
        out.extend_from_slice(self.text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert!(AdminChallengeRequest::decode(b"adminchallenge").is_ok());
        assert!(AdminChallengeRequest::decode(b"adminchallengeX").is_err());
        let r = AdminChallengeReply {
            master_challenge: 7,
            hash_challenge: 9,
        };
        let mut b = Vec::new();
        r.encode(&mut b);
        assert_eq!(b.len(), 4 + 14 + 8);
        assert_eq!(AdminChallengeReply::decode(&b).unwrap(), r);
        let c = AdminCommand {
            master_challenge: 1,
            hash: vec![0xaa; 64],
            command: "ban 10.0.0.1".into(),
        };
        let mut b = Vec::new();
        c.encode(&mut b);
        assert_eq!(AdminCommand::decode(&b, 64).unwrap(), c);
        assert!(AdminCommand::decode(&b[..30], 64).is_err());
        assert!(AdminCommand::decode(b"adminchallenge", 64).is_err());
        let a = AdminReply {
            ok: true,
            text: "banned 10.0.0.1".into(),
        };
        let mut b = Vec::new();
        a.encode(&mut b);
        assert_eq!(AdminReply::decode(&b).unwrap(), a);
    }
}
