//! RFC 2136 pushes of the published records to an operator's primary server, signed
//! with TSIG, retried with back-off and checked by a periodic refresh
//! (`directory::push` decides what and when; this is the network side).

use crate::lifecycle::Stop;
use anyhow::{bail, Context, Result};
use base64::Engine as _;
use config::DnsSection;
use directory::push::{self as dpush, Due, Outgoing, PushError, Schedule, Timing};
use directory::stats::{Counter, Stats};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::tsig::TsigAlgorithm;
use hickory_proto::rr::{Name, Record, TSigner};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TSIG key from its `[dns]` settings; `what` is the key prefix (`tsig` or
/// `axfr_tsig`) for the messages. An empty secret is a configuration error: an
/// empty HMAC key would make the signature worthless.
pub(super) fn tsig_key(what: &str, name: &str, algorithm: &str, secret: &str) -> Result<TSigner> {
    let alg = match algorithm.to_ascii_lowercase().as_str() {
        "hmac-sha256" => TsigAlgorithm::HmacSha256,
        "hmac-sha384" => TsigAlgorithm::HmacSha384,
        "hmac-sha512" => TsigAlgorithm::HmacSha512,
        other => {
            bail!("dns.{what}_algorithm {other:?}: use hmac-sha256, hmac-sha384 or hmac-sha512")
        }
    };
    if secret.trim().is_empty() {
        bail!("dns.{what}_secret is empty: give the base64 secret of key {name:?} (an empty key signs nothing)");
    }
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim())
        .with_context(|| format!("dns.{what}_secret must be base64"))?;
    if key.is_empty() {
        bail!("dns.{what}_secret decodes to an empty key");
    }
    let name =
        Name::from_str(name).with_context(|| format!("dns.{what}_key_name is not a DNS name"))?;
    TSigner::new(key, alg, name, 300).map_err(|e| anyhow::anyhow!("dns.{what}: {e}"))
}

/// Where updates go: an address, or a host name resolved when pushing.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Addr(SocketAddr),
    Host(String, u16),
}

/// `IP`, `IP:PORT`, `[IPv6]:PORT`, `HOST` or `HOST:PORT` (port 53 by default).
/// Only the syntax is checked: a host name is not resolved here.
fn push_target(s: &str) -> Result<Target> {
    let s = s.trim();
    if let Some(a) = udp::addr::parse_literal(s, 53) {
        return Ok(Target::Addr(a));
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .with_context(|| format!("dns.push {s:?}: {p:?} is not a port (HOST:PORT)"))?,
        ),
        None => (s, 53),
    };
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !valid {
        bail!("dns.push {s:?} is not IP[:PORT] or HOST[:PORT]");
    }
    Ok(Target::Host(host.to_string(), port))
}

/// Push-mode settings.
#[derive(Clone)]
pub struct Push {
    target: Target,
    signer: Option<TSigner>,
    timing: Timing,
}

fn seconds(what: &str, v: f64, min: f64, max: f64) -> Result<Duration> {
    if !v.is_finite() || v < min || v > max {
        bail!("dns.{what} = {v}: must be between {min} and {max} seconds");
    }
    Ok(Duration::from_secs_f64(v))
}

impl Push {
    /// From `[dns]`, if `push` is set.
    pub fn from_config(dns: &DnsSection) -> Result<Option<Push>> {
        if dns.push.is_empty() {
            if !dns.tsig_key_name.is_empty() || !dns.tsig_secret.is_empty() {
                tracing::warn!("dns.tsig_* is set but dns.push is not: no updates are sent");
            }
            return Ok(None);
        }
        let target = push_target(&dns.push)?;
        let signer = match (
            dns.tsig_key_name.is_empty(),
            dns.tsig_secret.trim().is_empty(),
        ) {
            (true, true) => None,
            (true, false) => bail!("dns.tsig_secret is set but dns.tsig_key_name is empty"),
            _ => Some(tsig_key(
                "tsig",
                &dns.tsig_key_name,
                &dns.tsig_algorithm,
                &dns.tsig_secret,
            )?),
        };
        let timing = Timing {
            retry_min: seconds("push_retry_min", dns.push_retry_min, 0.01, 3600.0)?,
            retry_max: seconds("push_retry_max", dns.push_retry_max, 0.01, 86_400.0)?,
            refresh: seconds("push_refresh", dns.push_refresh, 0.1, 604_800.0)?,
        };
        Ok(Some(Push {
            target,
            signer,
            timing,
        }))
    }
}

/// Why one exchange with the primary failed.
#[derive(Debug)]
enum ExchangeError {
    /// No answer: timeout, unreachable, connection refused or reset.
    Unanswered(String),
    /// The answer says no, or is not a valid answer.
    Answer(PushError),
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Unanswered(e) => write!(f, "no answer: {e}"),
            ExchangeError::Answer(e) => e.fmt(f),
        }
    }
}

/// How long one exchange with the primary may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read over TCP (a DNS message cannot be larger).
const MAX_TCP_ANSWER: usize = 65_535;

/// Sends `out` over UDP (over TCP when it does not fit a UDP message, or when the
/// UDP answer is truncated) and returns the checked answer.
async fn exchange(
    server: SocketAddr,
    out: &mut Outgoing,
    stats: &Stats,
) -> Result<Message, ExchangeError> {
    let answer = if out.needs_tcp() {
        stats.count(Counter::PushTcp);
        exchange_tcp(server, &out.bytes).await?
    } else {
        let a = exchange_udp(server, out).await?;
        if Outgoing::is_truncated(&a) {
            stats.count(Counter::PushTcp);
            exchange_tcp(server, &out.bytes).await?
        } else {
            a
        }
    };
    out.check(&answer).map_err(ExchangeError::Answer)
}

async fn exchange_udp(server: SocketAddr, out: &Outgoing) -> Result<Vec<u8>, ExchangeError> {
    let un = |e: std::io::Error| ExchangeError::Unanswered(format!("UDP {server}: {e}"));
    let bind: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = tokio::net::UdpSocket::bind(bind).await.map_err(un)?;
    sock.connect(server).await.map_err(un)?;
    sock.send(&out.bytes).await.map_err(un)?;
    let mut buf = vec![0u8; 4096];
    let deadline = tokio::time::Instant::now() + EXCHANGE_TIMEOUT;
    loop {
        let n = match tokio::time::timeout_at(deadline, sock.recv(&mut buf)).await {
            Err(_) => {
                return Err(ExchangeError::Unanswered(format!(
                    "UDP {server}: no answer within {} s",
                    EXCHANGE_TIMEOUT.as_secs()
                )))
            }
            Ok(r) => r.map_err(un)?,
        };
        if out.is_answer(&buf[..n]) {
            return Ok(buf[..n].to_vec());
        }
        tracing::debug!(%server, len = n, "ignoring a datagram that is not the answer");
    }
}

async fn exchange_tcp(server: SocketAddr, bytes: &[u8]) -> Result<Vec<u8>, ExchangeError> {
    let un = |e: std::io::Error| ExchangeError::Unanswered(format!("TCP {server}: {e}"));
    let io = async {
        let mut s = tokio::net::TcpStream::connect(server).await?;
        let len = u16::try_from(bytes.len())
            .map_err(|_| std::io::Error::other("message over 65535 bytes"))?;
        let mut framed = Vec::with_capacity(bytes.len() + 2);
        framed.extend_from_slice(&len.to_be_bytes());
        framed.extend_from_slice(bytes);
        s.write_all(&framed).await?;
        let n = s.read_u16().await? as usize;
        let mut buf = vec![0u8; n.min(MAX_TCP_ANSWER)];
        s.read_exact(&mut buf).await?;
        Ok::<_, std::io::Error>(buf)
    };
    match tokio::time::timeout(EXCHANGE_TIMEOUT, io).await {
        Err(_) => Err(ExchangeError::Unanswered(format!(
            "TCP {server}: no answer within {} s",
            EXCHANGE_TIMEOUT.as_secs()
        ))),
        Ok(r) => r.map_err(un),
    }
}

/// The push task's state: where the primary is, and what was last sent.
struct Pusher {
    push: Push,
    origin: Name,
    stats: Arc<Stats>,
    /// The resolved primary (re-resolved after a failure and at every refresh).
    server: Option<SocketAddr>,
    /// What the last UPDATE carried: its RRsets are deleted by the next one.
    sent: Vec<Record>,
}

impl Pusher {
    /// The primary's address, resolving its host name when needed.
    async fn server(&mut self, fresh: bool) -> Option<SocketAddr> {
        let (host, port) = match &self.push.target {
            Target::Addr(a) => return Some(*a),
            Target::Host(h, p) => (h.clone(), *p),
        };
        if !fresh {
            if let Some(a) = self.server {
                return Some(a);
            }
        }
        let q = host.clone();
        let r = tokio::task::spawn_blocking(move || udp::addr::resolve(&q, port)).await;
        match r {
            Ok(Ok(a)) => {
                if self.server != Some(a) {
                    tracing::info!(push = %host, server = %a, "push target resolved");
                }
                self.server = Some(a);
            }
            Ok(Err(e)) => {
                self.stats.count(Counter::PushResolveFailed);
                tracing::warn!(push = %host, error = %e, "cannot resolve the push target; keeping the last address, retrying with backoff");
            }
            Err(e) => tracing::error!(error = %e, "resolver task failed"),
        }
        self.server
    }

    /// One UPDATE replacing what was sent before with `owned`. True when acknowledged.
    async fn push(&mut self, owned: &[Record], retry: bool) -> bool {
        if retry {
            self.stats.count(Counter::PushRetry);
        }
        let Some(server) = self.server(retry).await else {
            return false;
        };
        let m = dpush::update_message(rand::random(), &self.origin, &self.sent, owned);
        let mut out =
            match Outgoing::new(m, self.push.signer.as_ref(), udp::time::unix_secs() as u64) {
                Ok(o) => o,
                Err(e) => {
                    tracing::error!(server = %server, error = %e, "cannot build the update");
                    return false;
                }
            };
        let tcp = out.needs_tcp();
        self.sent = owned.to_vec();
        match exchange(server, &mut out, &self.stats).await {
            Ok(_) => {
                self.stats.count(Counter::PushAcked);
                tracing::info!(%server, records = owned.len(), bytes = out.bytes.len(), tcp, "zone pushed");
                true
            }
            Err(e) => {
                let (counter, hint) = match &e {
                    ExchangeError::Unanswered(_) => (Counter::PushUnanswered, ""),
                    ExchangeError::Answer(PushError::Refused {
                        rcode: ResponseCode::NotAuth,
                        tsig: Some(_),
                    }) => (
                        Counter::PushRefused,
                        " (the primary refused the TSIG key: check dns.tsig_key_name, dns.tsig_secret and the clock)",
                    ),
                    ExchangeError::Answer(PushError::Refused { .. }) => (Counter::PushRefused, ""),
                    ExchangeError::Answer(_) => (Counter::PushBadReply, ""),
                };
                self.stats.count(counter);
                tracing::error!(%server, "push to {server} {e}{hint}; retrying with backoff");
                false
            }
        }
    }

    /// Reads the primary's copy of every owned RRset: `Some(true)` when it holds
    /// exactly `owned`, `Some(false)` when not, `None` when it cannot be read.
    async fn check(&mut self, owned: &[Record]) -> Option<bool> {
        let server = self.server(true).await?;
        for ((name, rtype), want) in dpush::rrsets(owned) {
            let q = dpush::rrset_query(rand::random(), &name, rtype);
            let mut out = match Outgoing::new(q, None, udp::time::unix_secs() as u64) {
                Ok(o) => o,
                Err(e) => {
                    tracing::error!(error = %e, "cannot build a refresh query");
                    return None;
                }
            };
            let got = match exchange(server, &mut out, &self.stats).await {
                Ok(m) => dpush::answer_set(&m, &name, rtype),
                Err(ExchangeError::Answer(PushError::Refused {
                    rcode: ResponseCode::NXDomain,
                    ..
                })) => Default::default(),
                Err(e) => {
                    self.stats.count(Counter::PushRefreshFailed);
                    tracing::warn!(%server, error = %e, "refresh: cannot read the primary's records");
                    return None;
                }
            };
            if got != want {
                self.stats.count(Counter::PushRefreshMismatch);
                tracing::warn!(%server, name = %name, rtype = %rtype, have = got.len(), want = want.len(), "refresh: the primary's records differ from the published ones; pushing again");
                return Some(false);
            }
        }
        tracing::debug!(%server, "refresh: the primary has the published records");
        Some(true)
    }
}

/// Pushes the owned records to the primary: at start, on every change (from
/// `owned`), again with backoff until acknowledged, and whenever a refresh finds
/// the primary's copy differing.
pub(super) async fn push_loop(
    push: Push,
    origin: Name,
    stats: Arc<Stats>,
    mut owned: tokio::sync::watch::Receiver<Vec<Record>>,
    stop: Stop,
) -> Result<()> {
    let mut sched = Schedule::new(push.timing, Instant::now());
    let initial = owned.borrow_and_update().clone();
    let mut p = Pusher {
        push,
        origin,
        stats,
        server: None,
        sent: initial,
    };
    loop {
        let deadline = tokio::time::Instant::from_std(sched.deadline());
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {}
            r = owned.changed() => {
                if r.is_err() {
                    return Ok(()); // the prober is gone: stopping
                }
                sched.changed(Instant::now());
            }
            _ = stop.stopped() => return Ok(()),
        }
        let now = Instant::now();
        let Some(due) = sched.due(now) else { continue };
        let records = owned.borrow_and_update().clone();
        let work = async {
            match due {
                Due::Push => {
                    let ok = p.push(&records, sched.failures() > 0).await;
                    sched.pushed(ok, Instant::now());
                }
                Due::Check => {
                    let m = p.check(&records).await;
                    sched.checked(m, Instant::now());
                }
            }
        };
        tokio::select! {
            _ = work => {}
            _ = stop.stopped() => return Ok(()),
        }
        if sched.failures() > 0 {
            tracing::debug!(failures = sched.failures(), retry_in = ?sched.deadline().saturating_duration_since(Instant::now()), "push retry scheduled");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_targets_are_checked_for_syntax_only() {
        assert_eq!(
            push_target("192.0.2.53").unwrap(),
            Target::Addr("192.0.2.53:53".parse().unwrap())
        );
        assert_eq!(
            push_target("[2001:db8::1]:5353").unwrap(),
            Target::Addr("[2001:db8::1]:5353".parse().unwrap())
        );
        assert_eq!(
            push_target("primary.does-not-exist.invalid:53").unwrap(),
            Target::Host("primary.does-not-exist.invalid".into(), 53)
        );
        assert_eq!(
            push_target("ns1.example.org").unwrap(),
            Target::Host("ns1.example.org".into(), 53)
        );
        for bad in [
            "",
            "ns1:notaport",
            "ns1:0",
            "a..b:53",
            "has space:53",
            ":53",
        ] {
            let e = push_target(bad).unwrap_err();
            assert!(format!("{e:#}").contains("dns.push"), "{bad:?}: {e:#}");
        }
    }

    #[test]
    fn empty_tsig_secrets_are_refused() {
        let Err(e) = tsig_key("tsig", "k", "hmac-sha256", " ") else {
            panic!("an empty secret was accepted")
        };
        assert!(e.to_string().contains("dns.tsig_secret is empty"), "{e}");
        assert!(tsig_key("tsig", "k", "hmac-sha256", "=").is_err());
        assert!(tsig_key("tsig", "k", "hmac-md5", "c2VjcmV0").is_err());
        assert!(tsig_key("tsig", "k", "HMAC-SHA256", "c2VjcmV0").is_ok());
        let dns = DnsSection {
            push: "127.0.0.1".into(),
            tsig_secret: "c2VjcmV0".into(),
            ..DnsSection::default()
        };
        assert!(
            Push::from_config(&dns).is_err(),
            "a secret without a key name"
        );
    }

    proptest::proptest! {
        /// Whatever is typed as `push`, parsing never panics, and what it accepts
        /// is an address or a host name of DNS labels with a non-zero port.
        #[test]
        fn push_target_never_panics(s in "\\PC{0,80}") {
            if let Ok(Target::Host(h, p)) = push_target(&s) {
                proptest::prop_assert!(p != 0 && !h.is_empty() && !h.contains(' '));
            }
        }
    }
}
