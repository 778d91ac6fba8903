//! Whole datagrams: strict validation, the relay's zero-copy routing view, and
//! typed position / chat / ping messages with their encoders.

use crate::header::{Header, Magic, MsgId};
use crate::props::PropertyList;
use crate::{
    Callsign, Error, CHAT_LEN, HEADER_LEN, MAX_DATAGRAM, POSITION_BODY_LEN, POSITION_MIN_LEN,
    VERSION,
};
use wire::{f64_be_at, put_f32_be, put_f64_be, put_u32_be, u32_be_at, Cursor};

/// Offset of the ECEF position (3 × f64) in a position datagram.
pub const POSITION_OFFSET: usize = 144;
/// Offset of the range word in the header.
pub const RANGE_OFFSET: usize = 16;
/// Offset of the pad word (0 for v1, [`crate::V2_PAD_MAGIC`] for v2).
pub const PAD_OFFSET: usize = 228;
/// Model path field size in the position body.
pub const MODEL_LEN: usize = 96;

/// What a relay needs to route a datagram, read without copying the body.
///
/// [`RoutingInfo::parse`] applies every check FlightGear applies on receive
/// (so a relay never forwards what the clients would drop) plus the relay's own
/// (positions must be finite and not all zero).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoutingInfo {
    /// `FGFS` from a client, `SFGF` from a relay.
    pub magic: Magic,
    /// Message id.
    pub msg_id: MsgId,
    /// Sender.
    pub callsign: Callsign,
    /// Raw header word 16.
    pub range_word: u32,
    /// ECEF metres, for position messages.
    pub position: Option<[f64; 3]>,
}

impl RoutingInfo {
    /// Validates `datagram` and extracts the routing fields.
    ///
    /// Order of checks (each failure is its own [`Error`] so callers can count it):
    /// oversize, runt, magic, exact version, MsgLen == size, then per message:
    /// position needs 232 bytes and a finite, non-zero position; chat needs 33 bytes.
    pub fn parse(datagram: &[u8]) -> Result<RoutingInfo, Error> {
        let len = datagram.len();
        if len > MAX_DATAGRAM {
            return Err(Error::Oversize(len));
        }
        if len < HEADER_LEN {
            return Err(Error::Runt(len));
        }
        // The length checks above make these reads infallible; map to Runt anyway, never panic.
        let word = |off| u32_be_at(datagram, off).ok_or(Error::Runt(len));
        let magic = Magic::from_wire(word(0)?)?;
        let version = word(4)?;
        if version != VERSION {
            return Err(Error::BadVersion(version));
        }
        let msg_id = MsgId::from_wire(word(8)?);
        let msg_len = word(12)?;
        if msg_len as usize != len {
            return Err(Error::LengthMismatch {
                msg_len,
                actual: len,
            });
        }
        let range_word = word(RANGE_OFFSET)?;
        let mut field = [0u8; 8];
        field.copy_from_slice(&datagram[24..32]);
        let callsign = Callsign::from_wire(field);
        if callsign.is_empty() {
            return Err(Error::EmptyCallsign);
        }
        let position = match msg_id {
            MsgId::Position => {
                if len < POSITION_MIN_LEN {
                    return Err(Error::PositionTooShort(len));
                }
                let p = [
                    f64_be_at(datagram, POSITION_OFFSET).ok_or(Error::PositionTooShort(len))?,
                    f64_be_at(datagram, POSITION_OFFSET + 8).ok_or(Error::PositionTooShort(len))?,
                    f64_be_at(datagram, POSITION_OFFSET + 16)
                        .ok_or(Error::PositionTooShort(len))?,
                ];
                check_position(p)?;
                Some(p)
            }
            MsgId::Chat if len < HEADER_LEN + 1 => return Err(Error::ChatTooShort(len)),
            _ => None,
        };
        Ok(RoutingInfo {
            magic,
            msg_id,
            callsign,
            range_word,
            position,
        })
    }
}

/// Rejects NaN/infinite positions (FlightGear drops them) and (0,0,0) (not settled).
pub fn check_position(p: [f64; 3]) -> Result<(), Error> {
    if p.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinitePosition);
    }
    if p == [0.0; 3] {
        return Err(Error::ZeroPosition);
    }
    Ok(())
}

/// The 200-byte position body plus its property list.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// `/sim/model/path`, at most 95 bytes (NUL-terminated on the wire).
    pub model: Vec<u8>,
    /// MP protocol clock, seconds.
    pub time: f64,
    /// 1 / tx-rate (0.1 at 10 Hz).
    pub lag: f64,
    /// ECEF (WGS-84) metres.
    pub position: [f64; 3],
    /// Angle-axis orientation (ECEF to body).
    pub orientation: [f32; 3],
    /// Body-frame u, v, w in m/s.
    pub linear_vel: [f32; 3],
    /// Body-frame p, q, r in rad/s.
    pub angular_vel: [f32; 3],
    /// Always 0 from FlightGear.
    pub linear_accel: [f32; 3],
    /// Always 0 from FlightGear.
    pub angular_accel: [f32; 3],
    /// 0 (v1) or [`crate::V2_PAD_MAGIC`] (v2).
    pub pad: u32,
    /// Properties after the fixed body.
    pub properties: PropertyList,
}

impl Position {
    /// A v2 position at `position` (ECEF metres) with zero motion and no properties.
    pub fn at(model: &str, position: [f64; 3]) -> Position {
        Position {
            model: model
                .as_bytes()
                .iter()
                .copied()
                .take(MODEL_LEN - 1)
                .collect(),
            time: 0.0,
            lag: 0.1,
            position,
            orientation: [0.0; 3],
            linear_vel: [0.0; 3],
            angular_vel: [0.0; 3],
            linear_accel: [0.0; 3],
            angular_accel: [0.0; 3],
            pad: crate::V2_PAD_MAGIC,
            properties: PropertyList::default(),
        }
    }

    /// Decodes a body (datagram bytes from offset 32).
    pub fn decode(body: &[u8]) -> Result<Position, Error> {
        if body.len() < POSITION_BODY_LEN {
            return Err(Error::PositionTooShort(body.len() + HEADER_LEN));
        }
        let mut c = Cursor::new(body);
        let model_field = c.take(MODEL_LEN)?;
        let model_len = model_field
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(MODEL_LEN);
        let model = model_field[..model_len.min(MODEL_LEN - 1)].to_vec();
        Ok(Position {
            model,
            time: c.f64_be()?,
            lag: c.f64_be()?,
            position: c.f64x3_be()?,
            orientation: c.f32x3_be()?,
            linear_vel: c.f32x3_be()?,
            angular_vel: c.f32x3_be()?,
            linear_accel: c.f32x3_be()?,
            angular_accel: c.f32x3_be()?,
            pad: c.u32_be()?,
            properties: PropertyList::decode(c.rest()),
        })
    }

    /// Appends the body and properties.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        if self.model.len() >= MODEL_LEN {
            return Err(Error::ModelTooLong(self.model.len()));
        }
        let mut field = [0u8; MODEL_LEN];
        field[..self.model.len()].copy_from_slice(&self.model);
        out.extend_from_slice(&field);
        put_f64_be(out, self.time);
        put_f64_be(out, self.lag);
        for v in self.position {
            put_f64_be(out, v);
        }
        for v3 in [
            self.orientation,
            self.linear_vel,
            self.angular_vel,
            self.linear_accel,
            self.angular_accel,
        ] {
            for v in v3 {
                put_f32_be(out, v);
            }
        }
        put_u32_be(out, self.pad);
        self.properties.encode(out);
        Ok(())
    }

    /// Whether the pad word marks protocol v2.
    pub fn is_v2(&self) -> bool {
        self.pad == crate::V2_PAD_MAGIC
    }
}

/// The old chat message (MsgId 1): a NUL-terminated `char[256]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    /// At most 255 bytes, no NUL.
    pub text: Vec<u8>,
}

impl Chat {
    /// Decodes a chat body (datagram bytes from offset 32); reads up to the first NUL.
    pub fn decode(body: &[u8]) -> Result<Chat, Error> {
        if body.is_empty() {
            return Err(Error::ChatTooShort(HEADER_LEN));
        }
        let field = &body[..body.len().min(256)];
        let n = field
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(field.len())
            .min(255);
        Ok(Chat {
            text: field[..n].to_vec(),
        })
    }

    /// Appends the fixed 256-byte body.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        if self.text.len() > 255 || self.text.contains(&0) {
            return Err(Error::ChatTooLong(self.text.len()));
        }
        let mut field = [0u8; 256];
        field[..self.text.len()].copy_from_slice(&self.text);
        out.extend_from_slice(&field);
        Ok(())
    }
}

/// A fully decoded datagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The header as received (MsgLen is recomputed on encode).
    pub header: Header,
    /// The typed body.
    pub body: Body,
}

/// The body of a datagram, by message id.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// MsgId 7.
    Position(Position),
    /// MsgId 1.
    Chat(Chat),
    /// Ping (9), pong (10), legacy ids 2-6, 8 and unknown ids: the body bytes as they came.
    Opaque(Vec<u8>),
}

impl Message {
    /// Decodes and validates a whole datagram as FlightGear's receiver does
    /// (exact version, MsgLen equal to the size, at most 1200 bytes).
    pub fn decode(datagram: &[u8]) -> Result<Message, Error> {
        if datagram.len() > MAX_DATAGRAM {
            return Err(Error::Oversize(datagram.len()));
        }
        let header = Header::decode(datagram)?;
        if header.version != VERSION {
            return Err(Error::BadVersion(header.version));
        }
        if header.msg_len as usize != datagram.len() {
            return Err(Error::LengthMismatch {
                msg_len: header.msg_len,
                actual: datagram.len(),
            });
        }
        let rest = &datagram[HEADER_LEN..];
        let body = match header.msg_id {
            MsgId::Position => Body::Position(Position::decode(rest)?),
            MsgId::Chat => Body::Chat(Chat::decode(rest)?),
            _ => Body::Opaque(rest.to_vec()),
        };
        Ok(Message { header, body })
    }

    /// Encodes the datagram, filling MsgLen with the real size.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        self.header.encode(out);
        match &self.body {
            Body::Position(p) => p.encode(out)?,
            Body::Chat(c) => c.encode(out)?,
            Body::Opaque(b) => out.extend_from_slice(b),
        }
        let len = out.len() - start;
        if len > MAX_DATAGRAM {
            out.truncate(start);
            return Err(Error::Oversize(len));
        }
        out[start + 12..start + 16].copy_from_slice(&(len as u32).to_be_bytes());
        Ok(())
    }

    /// A position message from a client, ready to encode.
    pub fn position(callsign: Callsign, range_nm: u16, body: Position) -> Message {
        Message {
            header: Header {
                magic: Magic::Client,
                version: VERSION,
                msg_id: MsgId::Position,
                msg_len: 0,
                range_word: Header::range_word_for(range_nm),
                reply_port: 0,
                callsign,
            },
            body: Body::Position(body),
        }
    }

    /// A 288-byte chat message from a client.
    pub fn chat(callsign: Callsign, text: &[u8]) -> Message {
        Message {
            header: Header {
                magic: Magic::Client,
                version: VERSION,
                msg_id: MsgId::Chat,
                msg_len: CHAT_LEN as u32,
                range_word: Header::range_word_for(100),
                reply_port: 0,
                callsign,
            },
            body: Body::Chat(Chat {
                text: text.to_vec(),
            }),
        }
    }

    /// A 32-byte ping (MsgId 9), as fgms's health checks send it.
    pub fn ping(callsign: Callsign) -> Message {
        Message {
            header: Header {
                magic: Magic::Client,
                version: VERSION,
                msg_id: MsgId::Ping,
                msg_len: HEADER_LEN as u32,
                range_word: 0,
                reply_port: 0,
                callsign,
            },
            body: Body::Opaque(Vec::new()),
        }
    }
}

/// Turns a ping datagram into its pong in place: fgms echoes it verbatim with MsgId 10.
pub fn ping_to_pong(datagram: &mut [u8]) {
    if datagram.len() >= 12 {
        datagram[8..12].copy_from_slice(&MsgId::Pong.to_wire().to_be_bytes());
    }
}

/// Encodes `msg` into a fresh vector (convenience for tests and tools).
pub fn to_bytes(msg: &Message) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    msg.encode(&mut out)?;
    Ok(out)
}
