//! Every A2S, split-packet and handshake decoder of the `xash` crate on arbitrary
//! bytes: none may panic, whatever one accepts must re-encode to something it
//! decodes again to the same bytes (split fragments re-encode to exactly the
//! input), and the reassembler, fed the input cut into fragments, stays within its
//! memory bounds.
use std::time::{Duration, Instant};

use xash::a2s::{
    ChallengeReply, InfoReply, InfoRequest, LegacyInfoReply, PlayersReply, PlayersRequest, Reply,
    Request, RulesReply, RulesRequest,
};
use xash::handshake::{
    tokenize, BandwidthTest, ChallengeResponse, ClientConnect, Connect, Disconnect, ErrorMsg,
    GetChallenge, HandshakeReply, HandshakeRequest, Print, Reject, TestPacket,
};
use xash::split::{Fragment, Reassembler, ReassemblyLimits, SplitForm};
use xash::InfoString;

macro_rules! enc {
    ($v:expr) => {{
        let mut out = Vec::new();
        $v.encode(&mut out);
        out
    }};
}

/// If `$t::decode` accepts `$bytes`, encoding then decoding again is byte-stable.
macro_rules! stable {
    ($t:ty, $bytes:expr) => {{
        if let Ok(v) = <$t>::decode($bytes) {
            let once = enc!(v);
            let again = <$t>::decode(&once).expect(concat!(stringify!($t), " re-decode"));
            assert_eq!(enc!(again), once, "{}", stringify!($t));
        }
    }};
}

/// An info string ending in `\` (empty last value) cannot be quoted on a command
/// line (the tokenizer reads `\"` as an escaped quote); the engine shares the quirk.
fn unquotable(info: &InfoString) -> bool {
    info.to_bytes().ends_with(b"\\")
}

fn decoders(data: &[u8]) {
    stable!(InfoRequest, data);
    stable!(InfoReply, data);
    stable!(LegacyInfoReply, data);
    stable!(PlayersRequest, data);
    stable!(PlayersReply, data);
    stable!(RulesRequest, data);
    stable!(RulesReply, data);
    stable!(ChallengeReply, data);
    stable!(Request, data);
    stable!(Reply, data);

    stable!(GetChallenge, data);
    stable!(ChallengeResponse, data);
    stable!(BandwidthTest, data);
    stable!(TestPacket, data);
    stable!(ErrorMsg, data);
    stable!(Print, data);
    stable!(Disconnect, data);
    if let Ok(c) = Connect::decode(data) {
        let _ = c.prot();
        if !unquotable(&c.protinfo) && !unquotable(&c.userinfo) {
            let once = enc!(c);
            assert_eq!(Connect::decode(&once).expect("connect re-decode"), c);
        }
    }
    if let Ok(m) = ClientConnect::decode(data) {
        let _ = m.prot();
        if !unquotable(&m.protinfo) {
            let once = enc!(m);
            assert_eq!(
                ClientConnect::decode(&once).expect("client_connect re-decode"),
                m
            );
        }
    }
    match HandshakeRequest::decode(data) {
        Ok(HandshakeRequest::Connect(_)) | Err(_) => {}
        Ok(_) => stable!(HandshakeRequest, data),
    }
    match HandshakeReply::decode(data) {
        Ok(HandshakeReply::ClientConnect(_)) | Err(_) => {}
        Ok(_) => stable!(HandshakeReply, data),
    }
    if let Ok(r) = Reject::decode(data) {
        let [a, b, c] = r.datagrams();
        assert_eq!(Reject::decode(&a).expect("reject errormsg"), r);
        assert_eq!(Reject::decode(&b).expect("reject print"), r);
        assert!(Disconnect::decode(&c).is_ok());
    }
    let _ = tokenize(data);

    let _ = Fragment::detect(data);
    for f in [
        Fragment::decode(data),
        Fragment::decode_as(data, SplitForm::GoldSrc),
        Fragment::decode_as(data, SplitForm::Xash),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(enc!(f), data, "fragments re-encode exactly");
    }
}

/// Cuts the input into split datagrams: `[ctl, len, bytes...]*`, where `ctl` picks
/// the time step and whether the form is forced, and each datagram gets the
/// `FE FF FF FF` marker prepended.
fn reassembly(data: &[u8]) {
    let limits = ReassemblyLimits {
        max_fragments: 8,
        max_fragment_payload: 64,
        max_pending: 3,
        timeout: Duration::from_millis(500),
    };
    let mut r = Reassembler::new(limits);
    let mut now = Instant::now();
    let mut rest = data;
    while rest.len() >= 2 {
        let ctl = rest[0];
        let n = usize::from(rest[1]).min(rest.len() - 2);
        let body = &rest[2..2 + n];
        rest = &rest[2 + n..];
        now += Duration::from_millis(u64::from(ctl & 0x3f) * 20);
        let form = match ctl >> 6 {
            0 => Some(SplitForm::GoldSrc),
            1 => Some(SplitForm::Xash),
            _ => None,
        };
        let mut packet = b"\xfe\xff\xff\xff".to_vec();
        packet.extend_from_slice(body);
        if let Ok(Some(message)) = r.push_packet(&packet, form, now) {
            assert!(
                message.len() <= usize::from(limits.max_fragments) * limits.max_fragment_payload
            );
            // What comes out of reassembly is an ordinary datagram: decode it too.
            decoders(&message);
        }
        assert!(r.pending() <= limits.max_pending);
        assert!(r.buffered_bytes() <= limits.max_buffered_bytes());
    }
    r.expire(now + limits.timeout);
    assert_eq!(r.pending(), 0);
}

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    decoders(data);
    reassembly(data);
}
