//! The directory part: health probes of the configured relays, the authoritative
//! zone served with hickory-server (UDP and TCP), RFC 2136 push to an operator's
//! primary server, and `mpservers.xml` for the HTTP listener.

use crate::lifecycle::{listening, Stop, Supervisor};
use anyhow::{bail, Context, Result};
use base64::Engine as _;
use config::{DirectorySection, DnsSection, RelayEntry};
use directory::probe::{Ping, DIRECTORY_CALLSIGN};
use directory::push::{self as dpush, Due, Outgoing, PushError, Schedule, Timing};
use directory::stats::{Counter, Stats};
use directory::{Config, Directory, RelayConfig, Scenery, ZoneConfig, ZoneUpdate};
use hickory_net::runtime::TokioRuntimeProvider;
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::tsig::TsigAlgorithm;
use hickory_proto::rr::{LowerName, Name, Record, RecordType, TSigResponseContext, TSigner};
use hickory_server::dnssec::NxProofKind;
use hickory_server::server::{Request, RequestInfo};
use hickory_server::store::in_memory::InMemoryZoneHandler;
use hickory_server::zone_handler::{
    AuthLookup, AxfrPolicy, Catalog, LookupControlFlow, LookupError, LookupOptions, Nsec3QueryInfo,
    UpdateRequest, ZoneHandler, ZoneTransfer, ZoneType,
};
use hickory_server::Server;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn parse_ip(s: &str) -> Result<IpAddr> {
    s.parse()
        .with_context(|| format!("invalid IP address {s:?}"))
}

fn parse_ips(list: &[String]) -> Result<Vec<IpAddr>> {
    list.iter().map(|s| parse_ip(s)).collect()
}

/// One `[[directory.relay]]` as the model takes it.
fn relay_config(r: &RelayEntry) -> Result<RelayConfig> {
    let probe = if r.probe.is_empty() {
        None
    } else {
        Some(
            r.probe
                .parse()
                .with_context(|| format!("directory.relay.probe {:?} must be IP:PORT", r.probe))?,
        )
    };
    Ok(RelayConfig {
        host: r.host.clone(),
        addresses: parse_ips(&r.addresses)?,
        port: r.port,
        priority: r.priority,
        weight: r.weight,
        name: r.name.clone(),
        location: r.location.clone(),
        extra: r.attributes.clone(),
        probe,
    })
}

/// The relay this process runs, published as `relay.<zone>`.
fn local_relay_config(addr: SocketAddr, name: String) -> RelayConfig {
    RelayConfig {
        host: "relay".into(),
        addresses: vec![addr.ip()],
        port: addr.port(),
        priority: 10,
        weight: 20,
        name,
        location: "this lobby".into(),
        extra: BTreeMap::new(),
        probe: Some(addr),
    }
}

/// The model's configuration from the `[dns]` and `[directory]` tables.
fn directory_config(
    dns: &DnsSection,
    dir: &DirectorySection,
    local_relay: Option<(SocketAddr, String)>,
) -> Result<Config> {
    let mut relays = dir
        .relay
        .iter()
        .map(relay_config)
        .collect::<Result<Vec<_>>>()?;
    if let Some((addr, name)) = local_relay.filter(|_| dir.include_local_relay) {
        relays.push(local_relay_config(addr, name));
    }
    let scenery = dir
        .scenery
        .iter()
        .map(|s| Scenery {
            url: s.url.clone(),
            service: s.service.clone(),
            order: s.order,
            preference: s.preference,
        })
        .collect();
    Ok(Config {
        zone: ZoneConfig {
            origin: dns.zone.clone(),
            ns: dns.ns.clone(),
            ns_addresses: parse_ips(&dns.ns_addresses)?,
            hostmaster: dns.hostmaster.clone(),
            ttl: dns.ttl,
        },
        relays,
        scenery,
        fall: dir.fall,
        rise: dir.rise,
    })
}

/// At start a relay host's probe address is not resolved (a name that does not
/// resolve must not hold up or stop the part): the prober resolves it.
fn resolve_later(_: &Name, _: u16) -> Option<SocketAddr> {
    None
}

/// Probe rounds between re-resolutions of a relay host that did resolve.
const RERESOLVE_ROUNDS: u64 = 30;

/// Resolves the relay hosts that need it: unresolved ones every round (the probe
/// interval is the retry delay), resolved ones every [`RERESOLVE_ROUNDS`].
async fn resolve_relays(directory: &Arc<Mutex<Directory>>, round: u64) {
    let todo = crate::lifecycle::lock(directory).to_resolve();
    for (i, host, port, known) in todo {
        if known && !round.is_multiple_of(RERESOLVE_ROUNDS) {
            continue;
        }
        let text = host.to_string().trim_end_matches('.').to_string();
        let q = text.clone();
        let r = tokio::task::spawn_blocking(move || udp::addr::resolve(&q, port)).await;
        let addr = match r {
            Ok(Ok(a)) => Some(a),
            Ok(Err(e)) => {
                tracing::warn!(relay = %text, error = %e, "cannot resolve the relay's host to probe it; retrying next round");
                None
            }
            Err(e) => {
                tracing::error!(error = %e, "resolver task failed");
                None
            }
        };
        if crate::lifecycle::lock(directory).resolved(i, addr) {
            tracing::info!(relay = %text, addr = ?addr, "relay host resolved");
        }
    }
}

/// Builds the directory model from the configuration; `local_relay` is the
/// relay this process runs (published as `relay.<zone>`).
pub fn build(
    dns: &DnsSection,
    dir: &DirectorySection,
    local_relay: Option<(SocketAddr, String)>,
    serial: u32,
) -> Result<Directory> {
    let config = directory_config(dns, dir, local_relay)?;
    Directory::new(&config, serial, resolve_later).context("[dns] / [directory]")
}

/// The hickory zone holding `records` (zone transfers are decided by [`Guarded`]).
fn zone_handler(
    origin: &Name,
    records: Vec<Record>,
    serial: u32,
) -> InMemoryZoneHandler<TokioRuntimeProvider> {
    let mut z = InMemoryZoneHandler::<TokioRuntimeProvider>::empty(
        origin.clone(),
        ZoneType::Primary,
        AxfrPolicy::AllowAll,
        None,
    );
    for r in records {
        z.upsert_mut(r, serial);
    }
    z
}

/// Why a relay did not answer a PING.
#[derive(Debug)]
pub enum PingError {
    /// No local UDP socket.
    Socket(std::io::Error),
    /// The address cannot be reached (no route, ...).
    Connect(SocketAddr, std::io::Error),
    /// The PING could not be sent.
    Send(SocketAddr, std::io::Error),
    /// No PONG in time.
    Timeout(SocketAddr, Duration),
    /// ICMP port unreachable: nothing listens there.
    Refused(SocketAddr),
    /// Receiving failed otherwise.
    Receive(SocketAddr, std::io::Error),
}

impl std::fmt::Display for PingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PingError::Socket(e) => write!(f, "cannot open a UDP socket: {e}"),
            PingError::Connect(a, e) => write!(f, "cannot reach {a}: {e}"),
            PingError::Send(a, e) => write!(f, "cannot send the ping to {a}: {e}"),
            PingError::Timeout(a, t) => {
                write!(f, "no pong from {a} within {} s", t.as_secs_f64())
            }
            PingError::Refused(a) => write!(f, "{a} refused (nothing listens on that UDP port)"),
            PingError::Receive(a, e) => write!(f, "receiving from {a}: {e}"),
        }
    }
}

impl std::error::Error for PingError {}

/// fgms's health check, used by the directory's prober and by `lobby fg servers
/// --probe`: sends `ping` to `addr` from a fresh connected socket and waits up to
/// `timeout` for its PONG (other datagrams are ignored). Returns the round trip.
pub async fn ping_relay(
    ping: &Ping,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<Duration, PingError> {
    let bind: SocketAddr = if addr.is_ipv4() {
        SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0))
    };
    let sock = tokio::net::UdpSocket::bind(bind)
        .await
        .map_err(PingError::Socket)?;
    sock.connect(addr)
        .await
        .map_err(|e| PingError::Connect(addr, e))?;
    let start = Instant::now();
    let deadline = tokio::time::Instant::from_std(start + timeout);
    sock.send(ping.datagram())
        .await
        .map_err(|e| PingError::Send(addr, e))?;
    let mut buf = vec![0u8; 2048];
    loop {
        let n = match tokio::time::timeout_at(deadline, sock.recv(&mut buf)).await {
            Err(_) => return Err(PingError::Timeout(addr, timeout)),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(PingError::Refused(addr))
            }
            Ok(Err(e)) => return Err(PingError::Receive(addr, e)),
            Ok(Ok(n)) => n,
        };
        if ping.is_pong(&buf[..n]) {
            return Ok(start.elapsed());
        }
        tracing::debug!(%addr, len = n, "ignoring a datagram that is not our pong");
    }
}

/// A TSIG key from its `[dns]` settings; `what` is the key prefix (`tsig` or
/// `axfr_tsig`) for the messages. An empty secret is a configuration error: an
/// empty HMAC key would make the signature worthless.
fn tsig_key(what: &str, name: &str, algorithm: &str, secret: &str) -> Result<TSigner> {
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
async fn push_loop(
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

/// Who may transfer the zone.
#[derive(Clone, Default)]
struct AxfrAccess {
    /// Off: every transfer refused.
    enabled: bool,
    /// Sources allowed without TSIG.
    allow: Vec<IpNet>,
    /// Keys a transfer may be signed with.
    keys: Vec<TSigner>,
}

impl AxfrAccess {
    fn from_config(dns: &DnsSection) -> Result<AxfrAccess> {
        let allow = dns
            .axfr_allow
            .iter()
            .map(|s| config::net(s).with_context(|| format!("dns.axfr_allow {s:?}")))
            .collect::<Result<Vec<_>>>()?;
        let keys = if dns.axfr_tsig_key_name.is_empty() {
            if !dns.axfr_tsig_secret.is_empty() {
                bail!("dns.axfr_tsig_secret is set but dns.axfr_tsig_key_name is empty");
            }
            vec![]
        } else {
            vec![tsig_key(
                "axfr_tsig",
                &dns.axfr_tsig_key_name,
                &dns.axfr_tsig_algorithm,
                &dns.axfr_tsig_secret,
            )?]
        };
        if dns.allow_axfr && allow.is_empty() && keys.is_empty() {
            bail!("dns.allow_axfr is on but neither dns.axfr_allow nor dns.axfr_tsig_key_name is set: the zone would be open to anyone; list the secondaries' addresses or give a TSIG key");
        }
        Ok(AxfrAccess {
            enabled: dns.allow_axfr,
            allow,
            keys,
        })
    }
}

/// The served zone: hickory's in-memory zone, with zone transfers limited to the
/// allowed sources and TSIG keys, and one debug line per query.
struct Guarded {
    zone: InMemoryZoneHandler<TokioRuntimeProvider>,
    access: AxfrAccess,
    stats: Arc<Stats>,
}

impl Guarded {
    /// Whether `request` may transfer the zone, and the signer of the answer when
    /// it was signed.
    fn authorize(
        &self,
        request: &Request,
        now: u64,
    ) -> (Result<(), ResponseCode>, Option<TSigResponseContext>) {
        let peer = request.src();
        if !self.access.enabled {
            self.stats.count(Counter::AxfrRefusedUnsigned);
            tracing::info!(%peer, "zone transfer refused: dns.allow_axfr is off");
            return (Err(ResponseCode::Refused), None);
        }
        if let Some(tsig) = request.signature() {
            let id = request.id();
            let Some(key) = self
                .access
                .keys
                .iter()
                .find(|k| k.signer_name() == &tsig.name)
            else {
                self.stats.count(Counter::AxfrRefusedBadTsig);
                tracing::warn!(%peer, key = %tsig.name, "zone transfer refused: unknown TSIG key (BADKEY)");
                return (
                    Err(ResponseCode::NotAuth),
                    Some(TSigResponseContext::unknown_key(id, now, tsig.name.clone())),
                );
            };
            let Ok((_, _, range)) = key.verify_message_byte(request.as_slice(), None, true) else {
                self.stats.count(Counter::AxfrRefusedBadTsig);
                tracing::warn!(%peer, key = %tsig.name, "zone transfer refused: bad TSIG signature (BADSIG)");
                return (
                    Err(ResponseCode::NotAuth),
                    Some(TSigResponseContext::bad_signature(id, now, key.clone())),
                );
            };
            if !range.contains(&now) {
                self.stats.count(Counter::AxfrRefusedBadTsig);
                tracing::warn!(%peer, key = %tsig.name, "zone transfer refused: TSIG time outside the fudge (BADTIME)");
                return (
                    Err(ResponseCode::NotAuth),
                    Some(TSigResponseContext::new(
                        id,
                        now,
                        key.clone(),
                        tsig.data.mac.clone(),
                        Some(hickory_proto::rr::rdata::tsig::TsigError::BadTime),
                    )),
                );
            }
            self.stats.count(Counter::AxfrAllowed);
            tracing::info!(%peer, key = %tsig.name, "zone transfer (TSIG)");
            return (
                Ok(()),
                Some(TSigResponseContext::new(
                    id,
                    now,
                    key.clone(),
                    tsig.data.mac.clone(),
                    None,
                )),
            );
        }
        if self.access.allow.iter().any(|n| n.contains(&peer.ip())) {
            self.stats.count(Counter::AxfrAllowed);
            tracing::info!(%peer, "zone transfer (allowed source)");
            return (Ok(()), None);
        }
        self.stats.count(Counter::AxfrRefusedUnsigned);
        tracing::info!(%peer, "zone transfer refused: unsigned, and the source is not in dns.axfr_allow");
        (Err(ResponseCode::Refused), None)
    }
}

#[async_trait::async_trait]
impl ZoneHandler for Guarded {
    fn zone_type(&self) -> ZoneType {
        self.zone.zone_type()
    }

    fn axfr_policy(&self) -> AxfrPolicy {
        if self.access.enabled {
            AxfrPolicy::AllowAll
        } else {
            AxfrPolicy::Deny
        }
    }

    fn origin(&self) -> &LowerName {
        self.zone.origin()
    }

    async fn lookup(
        &self,
        name: &LowerName,
        rtype: RecordType,
        request_info: Option<&RequestInfo<'_>>,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone
            .lookup(name, rtype, request_info, lookup_options)
            .await
    }

    async fn search(
        &self,
        request: &Request,
        lookup_options: LookupOptions,
    ) -> (LookupControlFlow<AuthLookup>, Option<TSigResponseContext>) {
        if let Ok(info) = request.request_info() {
            tracing::debug!(peer = %request.src(), proto = %request.protocol(), name = %info.query.name(), qtype = %info.query.query_type(), "dns query");
            if info.query.query_type() == RecordType::IXFR {
                let (r, signer) = self.authorize(request, udp::time::unix_secs() as u64);
                if let Err(code) = r {
                    return (
                        LookupControlFlow::Break(Err(LookupError::from(code))),
                        signer,
                    );
                }
            }
        }
        self.zone.search(request, lookup_options).await
    }

    async fn nsec_records(
        &self,
        name: &LowerName,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone.nsec_records(name, lookup_options).await
    }

    async fn nsec3_records(
        &self,
        info: Nsec3QueryInfo<'_>,
        lookup_options: LookupOptions,
    ) -> LookupControlFlow<AuthLookup> {
        self.zone.nsec3_records(info, lookup_options).await
    }

    async fn zone_transfer(
        &self,
        request: &Request,
        lookup_options: LookupOptions,
        now: u64,
    ) -> Option<(
        Result<ZoneTransfer, LookupError>,
        Option<TSigResponseContext>,
    )> {
        tracing::debug!(peer = %request.src(), proto = %request.protocol(), "dns zone transfer request");
        let (r, signer) = self.authorize(request, now);
        if let Err(code) = r {
            return Some((Err(LookupError::from(code)), signer));
        }
        let (result, _) = self
            .zone
            .zone_transfer(request, lookup_options, now)
            .await?;
        Some((result, signer))
    }

    fn nx_proof_kind(&self) -> Option<&NxProofKind> {
        self.zone.nx_proof_kind()
    }
}

/// A running directory.
pub struct DnsServer {
    /// The model, read by HTTP.
    pub directory: Arc<Mutex<Directory>>,
}

/// The zone hickory serves, shared with the prober that updates it.
type ServedZone = Arc<Guarded>;

/// Binds UDP and TCP on each of `listen` and serves `zone` there (`None` when
/// `listen` is empty: push only).
async fn serve(listen: &[SocketAddr], zone: &ServedZone) -> Result<Option<Server<Catalog>>> {
    if listen.is_empty() {
        return Ok(None);
    }
    let mut catalog = Catalog::new();
    catalog.upsert(
        zone.origin().clone(),
        vec![zone.clone() as Arc<dyn ZoneHandler>],
    );
    let mut server = Server::new(catalog);
    for &a in listen {
        // IPv6-only on IPv6 (both families can share port 53), no PMTU probe: DNS
        // answers over UDP may be large and must be fragmentable.
        let options = udp::BindOptions {
            pmtu_probe: false,
            ..udp::BindOptions::default()
        };
        let std_udp = udp::bind(a, options).context("cannot bind DNS UDP")?;
        std_udp.set_nonblocking(true)?;
        let udp = tokio::net::UdpSocket::from_std(std_udp)?;
        let bound = udp.local_addr()?;
        // TCP on the same port as UDP.
        let tcp = crate::lifecycle::tcp_listener(bound, "DNS TCP")?;
        listening("dns", "udp", bound);
        listening("dns", "tcp", bound);
        server.register_socket(udp);
        server.register_listener(tcp, Duration::from_secs(5), 64);
    }
    Ok(Some(server))
}

impl DnsServer {
    /// Probes every relay once, then serves the zone on `[dns] listen` (UDP and
    /// TCP), pushes it if configured, and probes the relays every
    /// `probe_interval`, all under `sup` (the listeners as part `dns`, the prober
    /// as `dns-prober`, the pusher as `dns-pusher`).
    pub async fn start(
        sup: &Supervisor,
        dns: &DnsSection,
        dir: &DirectorySection,
        local_relay: Option<(SocketAddr, String)>,
    ) -> Result<DnsServer> {
        // Serials grow across restarts: start from the clock, then count changes.
        let serial = (udp::time::unix_secs() as u32).max(1);
        let d = build(dns, dir, local_relay, serial)?;
        let access = AxfrAccess::from_config(dns)?;
        let push = Push::from_config(dns)?;
        let listen: Vec<SocketAddr> = dns
            .listen
            .iter()
            .map(|s| config::listen_addr(s))
            .collect::<Result<_>>()?;
        let interval = Duration::from_secs_f64(dir.probe_interval.clamp(0.1, 86_400.0));
        let timeout = Duration::from_secs_f64(dir.probe_timeout.clamp(0.05, 60.0));
        let ping = Arc::new(Ping::new(DIRECTORY_CALLSIGN)?);
        let prober = Prober {
            ping,
            interval,
            timeout,
        };
        // One round of probes before anything is served or pushed: a relay is
        // published with its port only once it answered.
        let directory = Arc::new(Mutex::new(d));
        resolve_relays(&directory, 0).await;
        let targets = crate::lifecycle::lock(&directory).probe_targets();
        let outcomes = probe_all(targets, &prober.ping, prober.timeout).await;
        let (stats, origin, records, serial, owned) = {
            let mut d = crate::lifecycle::lock(&directory);
            if let Ok(Some(u)) = d.record_probes(outcomes, std::time::Instant::now()) {
                for t in &u.transitions {
                    tracing::info!(relay = %t.host, up = t.up, "relay answered the first probe");
                }
            }
            for r in d.relays().iter().filter(|r| !r.health().is_up()) {
                tracing::info!(relay = %r.relay().host, "relay did not answer the first probe: published with port 0");
            }
            (
                d.stats().clone(),
                d.origin().clone(),
                d.records()?,
                d.serial(),
                d.owned_records()?,
            )
        };
        let zone = Arc::new(Guarded {
            zone: zone_handler(&origin, records, serial),
            access,
            stats: stats.clone(),
        });
        let server = serve(&listen, &zone).await?;
        let (owned_tx, owned_rx) = tokio::sync::watch::channel(owned);
        let stop = sup.stop().clone();
        if let Some(p) = push {
            sup.spawn_task(
                "dns-pusher",
                push_loop(p, origin, stats, owned_rx, stop.clone()),
            );
        }
        sup.spawn_task(
            "dns-prober",
            probe_loop(directory.clone(), zone, owned_tx, prober, stop.clone()),
        );
        if let Some(server) = server {
            sup.spawn_task("dns", run_listeners(server, stop));
        }
        Ok(DnsServer { directory })
    }
}

/// Runs hickory's listeners until the stop signal, then shuts them down gracefully.
/// Listeners that end on their own are a failure of the part.
async fn run_listeners(mut server: Server<Catalog>, stop: Stop) -> Result<()> {
    tokio::select! {
        r = server.block_until_done() => {
            r.context("DNS listener failed")?;
            bail!("DNS listeners ended")
        }
        _ = stop.stopped() => {}
    }
    server
        .shutdown_gracefully()
        .await
        .context("DNS listeners did not stop cleanly")
}

/// How the relays are probed.
struct Prober {
    ping: Arc<Ping>,
    interval: Duration,
    timeout: Duration,
}

/// Probes every relay at once; `(index, round trip)` for each.
async fn probe_all(
    targets: Vec<(usize, Option<SocketAddr>)>,
    ping: &Arc<Ping>,
    timeout: Duration,
) -> Vec<(usize, Option<Duration>)> {
    let tasks: Vec<_> = targets
        .into_iter()
        .map(|(i, addr)| {
            let ping = ping.clone();
            tokio::spawn(async move {
                let Some(a) = addr else {
                    return (i, None);
                };
                match ping_relay(&ping, a, timeout).await {
                    Ok(rtt) => {
                        metrics::histogram!(crate::recorder::DNS_PROBE_RTT)
                            .record(rtt.as_secs_f64());
                        (i, Some(rtt))
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "relay probe failed");
                        (i, None)
                    }
                }
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(tasks.len());
    for t in tasks {
        match t.await {
            Ok(r) => outcomes.push(r),
            Err(e) => tracing::error!(error = %e, "a probe task failed"),
        }
    }
    outcomes
}

/// Serves what a round of probes changed and hands the owned records to the pusher.
async fn publish(
    update: ZoneUpdate,
    origin: &Name,
    zone: &ServedZone,
    owned: &tokio::sync::watch::Sender<Vec<Record>>,
) {
    for t in &update.transitions {
        tracing::info!(relay = %t.host, up = t.up, "relay health changed");
    }
    let mut fresh = zone_handler(origin, update.records, update.serial);
    *zone.zone.records_mut().await = std::mem::take(fresh.records_get_mut());
    tracing::info!(serial = update.serial, "zone updated");
    // No receiver (no push configured) is fine.
    let _ = owned.send(update.owned);
}

/// Probes the relays every interval and publishes what changed, until the stop signal.
async fn probe_loop(
    directory: Arc<Mutex<Directory>>,
    zone: ServedZone,
    owned: tokio::sync::watch::Sender<Vec<Record>>,
    prober: Prober,
    stop: Stop,
) -> Result<()> {
    let mut tick = tokio::time::interval(prober.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate, and start-up just probed.
    tick.tick().await;
    let mut round: u64 = 0;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.stopped() => return Ok(()),
        }
        crate::lifecycle::injected_panic("dns-prober");
        round += 1;
        resolve_relays(&directory, round).await;
        let targets = crate::lifecycle::lock(&directory).probe_targets();
        let outcomes = probe_all(targets, &prober.ping, prober.timeout).await;
        let (update, origin) = {
            let mut d = crate::lifecycle::lock(&directory);
            (
                d.record_probes(outcomes, std::time::Instant::now()),
                d.origin().clone(),
            )
        };
        match update {
            Ok(Some(u)) => publish(u, &origin, &zone, &owned).await,
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "cannot rebuild the zone"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &str) -> RelayEntry {
        RelayEntry {
            host: host.into(),
            port: 5000,
            addresses: vec!["127.0.0.1".into()],
            name: "mp1".into(),
            location: "Test".into(),
            priority: 10,
            weight: 20,
            attributes: BTreeMap::new(),
            probe: String::new(),
        }
    }

    #[test]
    fn the_local_relay_is_published_when_asked() {
        let local = Some(("127.0.0.1:5002".parse().unwrap(), "lobby01".to_string()));
        let mut dir = DirectorySection {
            relay: vec![entry("mp1")],
            ..DirectorySection::default()
        };
        let d = build(&DnsSection::default(), &dir, local.clone(), 1).unwrap();
        let r = d.relays()[1].relay();
        assert_eq!(r.host.to_string(), "relay.fg.lobby.test.");
        assert_eq!(
            (r.name.as_str(), r.location.as_str()),
            ("lobby01", "this lobby")
        );
        assert_eq!(
            d.relays()[1].probe(),
            Some("127.0.0.1:5002".parse().unwrap())
        );
        assert_eq!(
            d.relays()[0].probe(),
            Some("127.0.0.1:5000".parse().unwrap())
        );
        dir.include_local_relay = false;
        assert_eq!(
            build(&DnsSection::default(), &dir, local, 1)
                .unwrap()
                .relays()
                .len(),
            1
        );
    }

    #[test]
    fn configuration_errors_name_the_setting() {
        let mut dir = DirectorySection {
            relay: vec![entry("mp1")],
            ..DirectorySection::default()
        };
        dir.relay[0].probe = "nowhere".into();
        let e = build(&DnsSection::default(), &dir, None, 1).unwrap_err();
        assert!(format!("{e:#}").contains("directory.relay.probe"), "{e:#}");
        dir.relay[0] = entry("bad..host");
        let e = build(&DnsSection::default(), &dir, None, 1).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<directory::Error>(),
                Some(directory::Error::InvalidName {
                    what: "relay host",
                    ..
                })
            ),
            "{e:#}"
        );
    }

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
