//! The directory part: health probes of the configured relays, the authoritative
//! zone served with hickory-server (UDP and TCP), RFC 2136 push to an operator's
//! primary server, and `mpservers.xml` for the HTTP listener.

use crate::config::{DirectorySection, DnsSection, RelayEntry};
use crate::lifecycle::{listening, Stop, Supervisor};
use anyhow::{bail, Context, Result};
use base64::Engine as _;
use directory::probe::{Ping, DIRECTORY_CALLSIGN};
use directory::zone;
use directory::{Config, Directory, RelayConfig, Scenery, ZoneConfig, ZoneUpdate};
use hickory_net::runtime::TokioRuntimeProvider;
use hickory_net::udp::UdpClientStream;
use hickory_net::xfer::{DnsHandle, FirstAnswer};
use hickory_proto::op::{DnsRequest, Message, OpCode, Query, ResponseCode, UpdateMessage};
use hickory_proto::rr::rdata::tsig::TsigAlgorithm;
use hickory_proto::rr::{DNSClass, Name, Record, RecordType, TSigner};
use hickory_server::store::in_memory::InMemoryZoneHandler;
use hickory_server::zone_handler::{AxfrPolicy, Catalog, ZoneHandler, ZoneType};
use hickory_server::Server;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// An external relay's address for probing, resolved once at start.
fn resolve_once(host: &Name, port: u16) -> Option<SocketAddr> {
    udp::addr::resolve(host.to_string().trim_end_matches('.'), port).ok()
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
    Directory::new(&config, serial, resolve_once).context("[dns] / [directory]")
}

/// The hickory zone holding `records`.
fn zone_handler(
    origin: &Name,
    records: Vec<Record>,
    serial: u32,
    axfr: AxfrPolicy,
) -> InMemoryZoneHandler<TokioRuntimeProvider> {
    let mut z =
        InMemoryZoneHandler::<TokioRuntimeProvider>::empty(origin.clone(), ZoneType::Primary, axfr);
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

/// Push-mode settings, resolved.
#[derive(Clone)]
pub struct Push {
    server: SocketAddr,
    signer: Option<TSigner>,
}

impl Push {
    /// From `[dns]`, if `push` is set.
    pub fn from_config(dns: &DnsSection) -> Result<Option<Push>> {
        if dns.push.is_empty() {
            return Ok(None);
        }
        let server = crate::config::peer(&dns.push)
            .or_else(|_| crate::config::peer(&format!("{}:53", dns.push)))?
            .addr;
        let signer = if dns.tsig_key_name.is_empty() {
            None
        } else {
            let alg = match dns.tsig_algorithm.to_ascii_lowercase().as_str() {
                "hmac-sha256" => TsigAlgorithm::HmacSha256,
                "hmac-sha384" => TsigAlgorithm::HmacSha384,
                "hmac-sha512" => TsigAlgorithm::HmacSha512,
                other => bail!(
                    "dns.tsig_algorithm {other:?}: use hmac-sha256, hmac-sha384 or hmac-sha512"
                ),
            };
            let key = base64::engine::general_purpose::STANDARD
                .decode(dns.tsig_secret.trim())
                .context("dns.tsig_secret must be base64")?;
            let name = Name::from_str(&dns.tsig_key_name)
                .context("dns.tsig_key_name is not a DNS name")?;
            Some(TSigner::new(key, alg, name, 300).map_err(|e| anyhow::anyhow!("TSIG: {e}"))?)
        };
        Ok(Some(Push { server, signer }))
    }

    /// Replaces the records lobby owns with `new` in one RFC 2136 UPDATE: delete every
    /// owned RRset (old and new names), then add the new records.
    pub async fn send(&self, origin: &Name, old: &[Record], new: &[Record]) -> Result<()> {
        let mut m = Message::query();
        m.metadata.op_code = OpCode::Update;
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
        let stream = UdpClientStream::builder(self.server, TokioRuntimeProvider::default())
            .with_timeout(Some(Duration::from_secs(5)))
            .with_signer(self.signer.clone())
            .build();
        let (client, bg) = hickory_net::client::Client::<TokioRuntimeProvider>::from_sender(stream);
        let bg = tokio::spawn(bg);
        let resp = client.send(DnsRequest::from(m)).first_answer().await;
        bg.abort();
        let resp = resp.map_err(|e| anyhow::anyhow!("push to {}: {e}", self.server))?;
        if resp.metadata.response_code != ResponseCode::NoError {
            bail!(
                "push to {} refused: {}",
                self.server,
                resp.metadata.response_code
            );
        }
        Ok(())
    }
}

/// A running directory.
pub struct DnsServer {
    /// The model, read by HTTP.
    pub directory: Arc<Mutex<Directory>>,
}

/// The zone hickory serves, shared with the prober that updates it.
type ServedZone = Arc<InMemoryZoneHandler<TokioRuntimeProvider>>;

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

/// Pushes every owned record once at start (old and new sets are the same: the
/// UPDATE replaces whatever an earlier run left).
async fn initial_push(push: &Push, directory: &Directory) -> Result<()> {
    let owned = directory.owned_records()?;
    push.send(directory.origin(), &owned, &owned).await?;
    tracing::info!(server = %push.server, records = owned.len(), "zone pushed");
    Ok(())
}

impl DnsServer {
    /// Serves the zone on `[dns] listen` (UDP and TCP), pushes it if configured,
    /// and probes the relays every `probe_interval`, all under `sup` (the listeners
    /// as part `dns`, the prober and pusher as `dns-prober`).
    pub async fn start(
        sup: &Supervisor,
        dns: &DnsSection,
        dir: &DirectorySection,
        local_relay: Option<(SocketAddr, String)>,
    ) -> Result<DnsServer> {
        // Serials grow across restarts: start from the clock, then count changes.
        let serial = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(1);
        let d = build(dns, dir, local_relay, serial)?;
        let axfr = if dns.allow_axfr {
            AxfrPolicy::AllowAll
        } else {
            AxfrPolicy::Deny
        };
        let zone = Arc::new(zone_handler(d.origin(), d.records()?, serial, axfr));
        let listen: Vec<SocketAddr> = dns
            .listen
            .iter()
            .map(|s| crate::config::listen_addr(s))
            .collect::<Result<_>>()?;
        let server = serve(&listen, &zone).await?;
        let push = Push::from_config(dns)?;
        if let Some(p) = &push {
            if let Err(e) = initial_push(p, &d).await {
                tracing::error!("{e:#}");
            }
        }
        let directory = Arc::new(Mutex::new(d));
        let interval = Duration::from_secs_f64(dir.probe_interval.clamp(0.1, 86_400.0));
        let timeout = Duration::from_secs_f64(dir.probe_timeout.clamp(0.05, 60.0));
        let ping = Arc::new(Ping::new(DIRECTORY_CALLSIGN)?);
        let prober = Prober {
            ping,
            interval,
            timeout,
        };
        let stop = sup.stop().clone();
        sup.spawn_task(
            "dns-prober",
            probe_loop(directory.clone(), zone, push, prober, stop.clone()),
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
                    Ok(rtt) => (i, Some(rtt)),
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

/// Serves and pushes what a round of probes changed.
async fn publish(update: ZoneUpdate, origin: &Name, zone: &ServedZone, push: Option<&Push>) {
    for t in &update.transitions {
        tracing::info!(relay = %t.host, up = t.up, "relay health changed");
    }
    let mut fresh = zone_handler(origin, update.records, update.serial, AxfrPolicy::Deny);
    *zone.records_mut().await = std::mem::take(fresh.records_get_mut());
    tracing::info!(serial = update.serial, "zone updated");
    if let Some(p) = push {
        if let Err(e) = p.send(origin, &update.owned_before, &update.owned).await {
            tracing::error!("{e:#}");
        }
    }
}

/// Probes the relays every interval and publishes what changed, until the stop signal.
async fn probe_loop(
    directory: Arc<Mutex<Directory>>,
    zone: ServedZone,
    push: Option<Push>,
    prober: Prober,
    stop: Stop,
) -> Result<()> {
    let mut tick = tokio::time::interval(prober.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.stopped() => return Ok(()),
        }
        crate::lifecycle::injected_panic("dns-prober");
        let targets = crate::lifecycle::lock(&directory).probe_targets();
        let outcomes = probe_all(targets, &prober.ping, prober.timeout).await;
        let (update, origin) = {
            let mut d = crate::lifecycle::lock(&directory);
            (d.record_probes(outcomes), d.origin().clone())
        };
        match update {
            Ok(Some(u)) => publish(u, &origin, &zone, push.as_ref()).await,
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
}
