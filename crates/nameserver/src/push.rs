//! RFC 2136 pushes of the published records to an operator's primary server, signed
//! with TSIG, retried with back-off and checked by a periodic refresh
//! (`directory::push` decides what and when; this is the network side).

use anyhow::{bail, Result};
use config::DnsSection;
use directory::push::{self as dpush, Due, Outgoing, PushError, Schedule, Target, Timing};
use directory::stats::{Counter, Stats};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{Name, Record, TSigner};
use lifecycle::Stop;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TSIG key from its `[dns]` settings (`directory::push::tsig_key`).
pub(super) fn tsig_key(what: &str, name: &str, algorithm: &str, secret: &str) -> Result<TSigner> {
    dpush::tsig_key(what, name, algorithm, secret).map_err(anyhow::Error::msg)
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
        let target = dpush::push_target(&dns.push).map_err(anyhow::Error::msg)?;
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
        let framed = directory::tcp::frame(bytes)
            .ok_or_else(|| std::io::Error::other("message over 65535 bytes"))?;
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
    fn a_tsig_secret_needs_a_key_name() {
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
}
