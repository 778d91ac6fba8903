//! Push mode, the pure half: the RFC 2136 UPDATE that replaces the records lobby owns
//! on an operator's primary server, its TSIG signature, what the primary's answer
//! means (acknowledged, or refused with which RCODE and TSIG error), the queries
//! that read the primary's copy back for a refresh, and the schedule that retries a
//! failed push with backoff and re-checks the primary on a timer; [`settings`]
//! reads the target and the TSIG keys as `[dns]` writes them.
//!
//! No sockets and no clock: bytes in and out, `now` passed in. The DNS part moves
//! the bytes (UDP, or TCP when the message does not fit [`UDP_LIMIT`]).

use crate::zone;
use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode, UpdateMessage};
use hickory_proto::rr::rdata::tsig::TsigError;
use hickory_proto::rr::{DNSClass, Name, RData, Record, RecordType, TSigVerifier, TSigner};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

pub mod settings;
pub use settings::{push_target, tsig_key, SettingError, Target};

/// The largest UPDATE sent over UDP: RFC 1035's 512 bytes (an UPDATE carries no
/// EDNS, so the primary need not accept more); larger ones go over TCP.
pub const UDP_LIMIT: usize = 512;

/// Why a push or a refresh query did not succeed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PushError {
    /// The primary answered with an error: the RCODE, and the TSIG error when its
    /// answer carried one (RFC 8945: NOTAUTH with BADSIG, BADKEY or BADTIME when the
    /// key was refused; such answers are unsigned).
    #[error("refused: {}{}", rcode_name(*.rcode), .tsig.map(|t| format!(", TSIG error {}", tsig_name(t))).unwrap_or_default())]
    Refused {
        /// The answer's RCODE.
        rcode: ResponseCode,
        /// The TSIG error field, when the answer had a TSIG record with an error.
        tsig: Option<TsigError>,
    },
    /// A NOERROR answer without the signature a signed request must get back, or
    /// with one that does not verify: not taken as an acknowledgement.
    #[error("answer not authenticated: {0}")]
    BadSignature(String),
    /// Not a DNS answer to this request.
    #[error("malformed answer: {0}")]
    Malformed(String),
    /// The message could not be built or signed.
    #[error("cannot build the message: {0}")]
    Encode(String),
}

fn rcode_name(r: ResponseCode) -> String {
    // The RFC mnemonics (NOTAUTH, REFUSED, SERVFAIL, ...), as dig and the primary's
    // log print them.
    format!(
        "{} ({})",
        format!("{r:?}").to_ascii_uppercase(),
        u16::from(r)
    )
}

fn tsig_name(t: TsigError) -> String {
    match t {
        TsigError::BadSig => "BADSIG (16)".into(),
        TsigError::BadKey => "BADKEY (17)".into(),
        TsigError::BadTime => "BADTIME (18)".into(),
        TsigError::BadTrunc => "BADTRUNC (22)".into(),
        TsigError::Unknown(c) => format!("{c}"),
    }
}

/// The UPDATE replacing the owned records: delete every owned RRset (of `old` and
/// `new`), then add `new`. Records lobby does not own are not touched.
pub fn update_message(id: u16, origin: &Name, old: &[Record], new: &[Record]) -> Message {
    let mut m = Message::new(id, MessageType::Query, OpCode::Update);
    m.metadata.recursion_desired = false;
    let mut zq = Query::new();
    zq.set_name(origin.clone())
        .set_query_class(DNSClass::IN)
        .set_query_type(RecordType::SOA);
    m.add_zone(zq);
    let mut sets = zone::owned_rrsets(old);
    sets.extend(zone::owned_rrsets(new));
    sets.sort();
    sets.dedup();
    for (name, rtype) in sets {
        let mut r = Record::update0(name, 0, rtype);
        r.dns_class = DNSClass::ANY;
        m.add_update(r);
    }
    for r in new {
        m.add_update(r.clone());
    }
    m
}

/// A query for one RRset (used to read the primary's copy back).
pub fn rrset_query(id: u16, name: &Name, rtype: RecordType) -> Message {
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = false;
    let mut q = Query::new();
    q.set_name(name.clone())
        .set_query_class(DNSClass::IN)
        .set_query_type(rtype);
    m.add_query(q);
    m
}

/// A message ready to send, and what checks its answer.
pub struct Outgoing {
    /// The wire bytes.
    pub bytes: Vec<u8>,
    id: u16,
    op_code: OpCode,
    verifier: Option<TSigVerifier>,
}

impl Outgoing {
    /// Encodes `m`, signed with `signer` at `now_unix` (seconds since the epoch) when
    /// given.
    pub fn new(mut m: Message, signer: Option<&TSigner>, now_unix: u64) -> Result<Self, PushError> {
        let verifier = match signer {
            Some(s) => m
                .finalize(s, now_unix)
                .map_err(|e| PushError::Encode(e.to_string()))?,
            None => None,
        };
        let bytes = m.to_vec().map_err(|e| PushError::Encode(e.to_string()))?;
        Ok(Outgoing {
            bytes,
            id: m.metadata.id,
            op_code: m.metadata.op_code,
            verifier,
        })
    }

    /// Whether it must go over TCP.
    pub fn needs_tcp(&self) -> bool {
        self.bytes.len() > UDP_LIMIT
    }

    /// Whether `bytes` claims to answer this message (same ID, a response); other
    /// datagrams on the socket are ignored.
    pub fn is_answer(&self, bytes: &[u8]) -> bool {
        bytes.len() >= 12
            && u16::from_be_bytes([bytes[0], bytes[1]]) == self.id
            && bytes[2] & 0x80 != 0
    }

    /// Whether the answer has the TC bit (retry over TCP).
    pub fn is_truncated(bytes: &[u8]) -> bool {
        bytes.len() >= 3 && bytes[2] & 0x02 != 0
    }

    /// What the primary's answer means: the decoded message when it is a NOERROR
    /// (its TSIG verified when the request was signed), else why not.
    pub fn check(&mut self, bytes: &[u8]) -> Result<Message, PushError> {
        let m = Message::from_vec(bytes).map_err(|e| PushError::Malformed(e.to_string()))?;
        if m.metadata.id != self.id
            || m.metadata.message_type != MessageType::Response
            || m.metadata.op_code != self.op_code
        {
            return Err(PushError::Malformed(format!(
                "id {} {:?} {:?}, expected the answer to {} {:?}",
                m.metadata.id, m.metadata.message_type, m.metadata.op_code, self.id, self.op_code
            )));
        }
        let rcode = m.metadata.response_code;
        if rcode != ResponseCode::NoError {
            // Error answers to a refused key are unsigned (RFC 8945 5.3.2): report
            // them as they are, never as a signature problem.
            let tsig = m.signature().and_then(|s| s.data.error);
            return Err(PushError::Refused { rcode, tsig });
        }
        if let Some(v) = &mut self.verifier {
            if m.signature().is_none() {
                return Err(PushError::BadSignature("the answer is not signed".into()));
            }
            v.verify(bytes)
                .map_err(|e| PushError::BadSignature(e.to_string()))?;
        }
        Ok(m)
    }
}

/// The RRsets lobby owns in `records`, each as a set of its record data (TTLs and
/// name case aside): what a refresh compares with the primary's answers.
pub fn rrsets(records: &[Record]) -> BTreeMap<(Name, RecordType), BTreeSet<Vec<u8>>> {
    let mut out: BTreeMap<(Name, RecordType), BTreeSet<Vec<u8>>> = BTreeMap::new();
    for (name, rtype) in zone::owned_rrsets(records) {
        out.entry((name.to_lowercase(), rtype)).or_default();
    }
    for r in records {
        if let Some(set) = out.get_mut(&(r.name.to_lowercase(), r.record_type())) {
            set.insert(rdata_bytes(&r.data));
        }
    }
    out
}

fn rdata_bytes(d: &RData) -> Vec<u8> {
    use hickory_proto::serialize::binary::{BinEncodable, BinEncoder};
    let mut buf = Vec::new();
    let mut e = BinEncoder::new(&mut buf);
    e.set_canonical_form(true);
    // Encoding record data that was decoded or built by us cannot fail; an error
    // leaves a partial buffer, which then simply compares unequal.
    let _ = d.emit(&mut e);
    buf
}

/// The records of RRset `name`/`rtype` in an answer.
pub fn answer_set(answer: &Message, name: &Name, rtype: RecordType) -> BTreeSet<Vec<u8>> {
    let name = name.to_lowercase();
    answer
        .answers
        .iter()
        .filter(|r| r.record_type() == rtype && r.name.to_lowercase() == name)
        .map(|r| rdata_bytes(&r.data))
        .collect()
}

/// When pushes and refresh checks are due.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// First retry after a failure; doubled per failure in a row.
    pub retry_min: Duration,
    /// Longest retry interval.
    pub retry_max: Duration,
    /// How often the primary's records are compared with the published ones once
    /// a push was acknowledged.
    pub refresh: Duration,
}

/// What the pusher should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Send the UPDATE (first push, a change, a retry, or a refresh found drift).
    Push,
    /// Read the primary's copy and compare.
    Check,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// An UPDATE is due at this time.
    Push(Instant),
    /// Acknowledged; compare at this time.
    Check(Instant),
}

/// The push schedule: every change pushed at once, a failed push retried with
/// exponential backoff until acknowledged, and the primary re-checked every
/// `refresh` (a primary restarted from its zone file has lost the records).
#[derive(Debug, Clone)]
pub struct Schedule {
    timing: Timing,
    state: State,
    failures: u32,
}

impl Schedule {
    /// A schedule whose first push is due at `now`.
    pub fn new(timing: Timing, now: Instant) -> Schedule {
        Schedule {
            timing,
            state: State::Push(now),
            failures: 0,
        }
    }

    /// The published records changed: push at once (a pending backoff is kept
    /// only if it ends sooner, which it cannot; a retry storm is bounded by the
    /// rate of changes, which the probe interval bounds).
    pub fn changed(&mut self, now: Instant) {
        self.state = State::Push(now);
    }

    /// What is due at `now`, if anything.
    pub fn due(&self, now: Instant) -> Option<Due> {
        match self.state {
            State::Push(at) if at <= now => Some(Due::Push),
            State::Check(at) if at <= now => Some(Due::Check),
            _ => None,
        }
    }

    /// When the next action is due.
    pub fn deadline(&self) -> Instant {
        match self.state {
            State::Push(at) | State::Check(at) => at,
        }
    }

    /// Failed attempts in a row.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The delay before retry number `failures` (1 = the first retry).
    pub fn backoff(&self, failures: u32) -> Duration {
        let shift = failures.saturating_sub(1).min(30);
        self.timing
            .retry_min
            .saturating_mul(1u32 << shift)
            .min(self.timing.retry_max)
            .max(self.timing.retry_min.min(self.timing.retry_max))
    }

    fn failed(&mut self, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        self.state = State::Push(now + self.backoff(self.failures));
    }

    /// A push finished: acknowledged (`ok`) or not.
    pub fn pushed(&mut self, ok: bool, now: Instant) {
        if ok {
            self.failures = 0;
            self.state = State::Check(now + self.timing.refresh);
        } else {
            self.failed(now);
        }
    }

    /// A refresh check finished: `Some(true)` the primary has the published
    /// records, `Some(false)` it does not (push now), `None` it could not be read
    /// (retry with backoff, as a push).
    pub fn checked(&mut self, matches: Option<bool>, now: Instant) {
        match matches {
            Some(true) => {
                self.failures = 0;
                self.state = State::Check(now + self.timing.refresh);
            }
            Some(false) => self.state = State::Push(now),
            None => self.failed(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::rr::rdata::tsig::TsigAlgorithm;
    use hickory_proto::rr::rdata::{A, SRV};
    use proptest::prelude::*;
    use std::str::FromStr;

    fn name(s: &str) -> Name {
        Name::from_str(s).unwrap()
    }

    fn srv(port: u16) -> Record {
        Record::from_rdata(
            name("_fgms._udp.fg.test."),
            60,
            RData::SRV(SRV::new(10, 20, port, name("mp1.fg.test."))),
        )
    }

    fn a(host: &str) -> Record {
        Record::from_rdata(name(host), 60, RData::A(A::new(192, 0, 2, 1)))
    }

    fn timing() -> Timing {
        Timing {
            retry_min: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            refresh: Duration::from_secs(300),
        }
    }

    #[test]
    fn the_update_deletes_every_owned_rrset_then_adds() {
        let m = update_message(
            7,
            &name("fg.test."),
            &[srv(0)],
            &[srv(5000), a("mp1.fg.test.")],
        );
        assert_eq!(m.metadata.op_code, OpCode::Update);
        assert_eq!(m.queries.len(), 1, "one zone");
        // Update section (authorities): two RRset deletions, two additions.
        let ups = &m.authorities;
        assert_eq!(ups.len(), 4);
        assert!(ups[..2]
            .iter()
            .all(|r| r.dns_class == DNSClass::ANY && r.ttl == 0));
        assert_eq!(ups[2], srv(5000));
    }

    #[test]
    fn a_signed_update_is_acknowledged_only_by_a_signed_noerror() {
        let key = TSigner::new(
            b"0123456789abcdef0123456789abcdef".to_vec(),
            TsigAlgorithm::HmacSha256,
            name("lobby-key."),
            300,
        )
        .unwrap();
        let m = update_message(42, &name("fg.test."), &[], &[srv(5000)]);
        let mut out = Outgoing::new(m, Some(&key), 1_700_000_000).unwrap();
        assert!(!out.needs_tcp());
        // What a server does: the request verifies with the key.
        assert!(key.verify_message_byte(&out.bytes, None, true).is_ok());
        // An unsigned NOERROR is not an acknowledgement.
        let plain = Message::new(42, MessageType::Response, OpCode::Update)
            .to_vec()
            .unwrap();
        assert!(out.is_answer(&plain));
        assert!(matches!(out.check(&plain), Err(PushError::BadSignature(_))));
        // Another id is not the answer.
        let other = Message::new(43, MessageType::Response, OpCode::Update)
            .to_vec()
            .unwrap();
        assert!(!out.is_answer(&other));
        assert!(matches!(out.check(&other), Err(PushError::Malformed(_))));
    }

    #[test]
    fn a_refusal_is_reported_with_its_rcode_and_tsig_error() {
        // NOTAUTH with an unsigned TSIG carrying BADSIG, as Knot answers a wrong key.
        let key = TSigner::new(
            b"wrong-wrong-wrong-wrong-wrong-wr".to_vec(),
            TsigAlgorithm::HmacSha256,
            name("lobby-key."),
            300,
        )
        .unwrap();
        let m = update_message(9, &name("fg.test."), &[], &[srv(5000)]);
        let mut out = Outgoing::new(m.clone(), Some(&key), 1_700_000_000).unwrap();
        let mut signed = m;
        signed.finalize(&key, 1_700_000_000).unwrap();
        let mut tsig = signed.take_signature().unwrap();
        tsig.data.mac.clear();
        tsig.data.error = Some(TsigError::BadSig);
        let mut resp = Message::new(9, MessageType::Response, OpCode::Update);
        resp.metadata.response_code = ResponseCode::NotAuth;
        resp.set_signature(tsig);
        let e = out.check(&resp.to_vec().unwrap()).unwrap_err();
        assert_eq!(
            e,
            PushError::Refused {
                rcode: ResponseCode::NotAuth,
                tsig: Some(TsigError::BadSig)
            }
        );
        assert_eq!(
            e.to_string(),
            "refused: NOTAUTH (9), TSIG error BADSIG (16)"
        );
        let mut resp = Message::new(9, MessageType::Response, OpCode::Update);
        resp.metadata.response_code = ResponseCode::Refused;
        assert_eq!(
            out.check(&resp.to_vec().unwrap()).unwrap_err().to_string(),
            "refused: REFUSED (5)"
        );
    }

    #[test]
    fn big_updates_go_over_tcp() {
        let many: Vec<Record> = (0..40).map(|i| a(&format!("mp{i}.fg.test."))).collect();
        let out = Outgoing::new(update_message(1, &name("fg.test."), &[], &many), None, 0).unwrap();
        assert!(out.needs_tcp(), "{} bytes", out.bytes.len());
    }

    #[test]
    fn rrsets_compare_data_not_ttl_or_case() {
        let mut other = srv(5000);
        other.ttl = 3600;
        other.name = name("_FGMS._udp.FG.test.");
        assert_eq!(rrsets(&[srv(5000)]), rrsets(&[other]));
        assert_ne!(rrsets(&[srv(5000)]), rrsets(&[srv(0)]));
        let mut answer = Message::new(1, MessageType::Response, OpCode::Query);
        answer.add_answer(srv(5000));
        let want = rrsets(&[srv(5000)]);
        let (k, v) = want.iter().next().unwrap();
        assert_eq!(&answer_set(&answer, &k.0, k.1), v);
        assert!(answer_set(&answer, &k.0, RecordType::TXT).is_empty());
    }

    #[test]
    fn schedule_retries_with_backoff_and_refreshes() {
        let t0 = Instant::now();
        let mut s = Schedule::new(timing(), t0);
        assert_eq!(s.due(t0), Some(Due::Push));
        s.pushed(false, t0);
        assert_eq!(s.deadline(), t0 + Duration::from_secs(1));
        assert_eq!(s.due(t0), None);
        s.pushed(false, t0);
        assert_eq!(s.deadline(), t0 + Duration::from_secs(2));
        s.pushed(false, t0);
        assert_eq!(s.deadline(), t0 + Duration::from_secs(4));
        s.pushed(true, t0);
        assert_eq!(s.failures(), 0);
        assert_eq!(s.due(t0 + Duration::from_secs(299)), None);
        assert_eq!(s.due(t0 + Duration::from_secs(300)), Some(Due::Check));
        s.checked(Some(false), t0);
        assert_eq!(s.due(t0), Some(Due::Push), "drift: push at once");
        s.pushed(true, t0);
        s.checked(None, t0);
        assert_eq!(s.deadline(), t0 + Duration::from_secs(1));
        s.changed(t0);
        assert_eq!(s.due(t0), Some(Due::Push));
    }

    proptest! {
        /// Whatever happens, the next action is never later than the refresh (or the
        /// longest backoff) and a failure never schedules a push sooner than the
        /// first backoff.
        #[test]
        fn schedule_is_bounded(events in proptest::collection::vec(0u8..5, 0..60),
                               min_ms in 1u64..5_000, max_ms in 1u64..120_000) {
            let timing = Timing {
                retry_min: Duration::from_millis(min_ms),
                retry_max: Duration::from_millis(max_ms),
                refresh: Duration::from_secs(300),
            };
            let mut now = Instant::now();
            let mut s = Schedule::new(timing, now);
            for e in events {
                match e {
                    0 => s.pushed(true, now),
                    1 => { s.pushed(false, now); prop_assert!(s.deadline() >= now + timing.retry_min.min(timing.retry_max)); }
                    2 => s.checked(Some(true), now),
                    3 => s.checked(None, now),
                    _ => s.changed(now),
                }
                let wait = s.deadline().saturating_duration_since(now);
                prop_assert!(wait <= timing.refresh.max(timing.retry_max).max(timing.retry_min));
                now += Duration::from_millis(250);
            }
        }
    }
}
