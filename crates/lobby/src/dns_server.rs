//! The directory part: health probes of the configured relays, the authoritative
//! zone served with hickory-server (UDP and TCP), RFC 2136 push to an operator's
//! primary server, and `mpservers.xml` for the HTTP listener.

use crate::config::{DirectorySection, DnsSection};
use crate::lifecycle::listening;
use anyhow::{bail, Context, Result};
use base64::Engine as _;
use directory::health::Health;
use directory::zone::{self, Relay, Scenery, Zone};
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
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A relay as the directory tracks it.
#[derive(Debug, Clone)]
pub struct TrackedRelay {
    /// What is published.
    pub relay: Relay,
    /// Where PINGs go.
    pub probe: Option<SocketAddr>,
    /// Up/down hysteresis.
    pub health: Health,
    /// Last PONG round trip.
    pub last_rtt: Option<Duration>,
}

/// Everything the directory publishes, shared with the HTTP listener.
#[derive(Debug)]
pub struct Directory {
    /// Zone parameters (serial included).
    pub zone: Zone,
    /// Relays.
    pub relays: Vec<TrackedRelay>,
    /// Scenery servers.
    pub scenery: Vec<Scenery>,
}

impl Directory {
    /// The relays as published now (SRV port 0 for those down).
    fn published(&self) -> Vec<Relay> {
        self.relays
            .iter()
            .map(|t| Relay {
                up: t.health.is_up(),
                ..t.relay.clone()
            })
            .collect()
    }

    /// The zone's records now.
    pub fn records(&self) -> Result<Vec<Record>, String> {
        zone::records(&self.zone, &self.published(), &self.scenery)
    }

    /// The records lobby owns (what push replaces).
    pub fn owned(&self) -> Result<Vec<Record>, String> {
        zone::owned_records(&self.zone, &self.published(), &self.scenery)
    }

    /// `mpservers.xml`.
    pub fn mpservers_xml(&self) -> String {
        let entries: Vec<directory::mpservers_xml::Entry> = self
            .relays
            .iter()
            .map(|t| directory::mpservers_xml::Entry {
                name: t.relay.attributes.get("name").cloned().unwrap_or_default(),
                location: t
                    .relay
                    .attributes
                    .get("location")
                    .cloned()
                    .unwrap_or_default(),
                hostname: t.relay.host.to_string().trim_end_matches('.').to_string(),
                port: t.relay.port,
                online: t.health.is_up(),
            })
            .collect();
        directory::mpservers_xml::render(&entries)
    }
}

fn parse_ip(s: &str) -> Result<IpAddr> {
    s.parse()
        .with_context(|| format!("invalid IP address {s:?}"))
}

/// Builds the directory model from the configuration; `local_relay` is the
/// relay this process runs (published as `relay.<zone>`).
pub fn build(
    dns: &DnsSection,
    dir: &DirectorySection,
    local_relay: Option<(SocketAddr, String)>,
    serial: u32,
) -> Result<Directory> {
    let origin = Name::from_str(&dns.zone)
        .map(|mut n| {
            n.set_fqdn(true);
            n
        })
        .with_context(|| format!("dns.zone {:?} is not a valid DNS name", dns.zone))?;
    let name =
        |s: &str, what: &str| zone::name_in(&origin, s).map_err(|e| anyhow::anyhow!("{what}: {e}"));
    let zone = Zone {
        ns: name(&dns.ns, "dns.ns")?,
        ns_addresses: dns
            .ns_addresses
            .iter()
            .map(|s| parse_ip(s))
            .collect::<Result<_>>()?,
        hostmaster: name(&dns.hostmaster, "dns.hostmaster")?,
        origin: origin.clone(),
        ttl: dns.ttl.max(1),
        serial,
    };
    let mut relays = Vec::new();
    for r in &dir.relay {
        let host = name(&r.host, "directory.relay.host")?;
        let addresses: Vec<IpAddr> = r
            .addresses
            .iter()
            .map(|s| parse_ip(s))
            .collect::<Result<_>>()?;
        let probe =
            if !r.probe.is_empty() {
                Some(r.probe.parse().with_context(|| {
                    format!("directory.relay.probe {:?} must be IP:PORT", r.probe)
                })?)
            } else {
                addresses
                    .first()
                    .map(|ip| SocketAddr::new(*ip, r.port))
                    .or_else(|| {
                        // An external host: resolve it once for probing.
                        format!("{}:{}", host.to_string().trim_end_matches('.'), r.port)
                            .to_socket_addrs()
                            .ok()
                            .and_then(|mut a| a.next())
                    })
            };
        let mut attributes = r.attributes.clone();
        attributes.insert("name".into(), r.name.clone());
        attributes.insert("location".into(), r.location.clone());
        directory::mpserver::encode(&attributes)
            .map_err(|e| anyhow::anyhow!("directory.relay {:?}: {e}", r.host))?;
        relays.push(TrackedRelay {
            relay: Relay {
                host,
                addresses,
                port: r.port,
                priority: r.priority,
                weight: r.weight,
                attributes,
                up: true,
            },
            probe,
            health: Health::new(dir.fall, dir.rise),
            last_rtt: None,
        });
    }
    if let Some((addr, relay_name)) = local_relay.filter(|_| dir.include_local_relay) {
        let attributes: BTreeMap<String, String> = [
            ("name".to_string(), relay_name),
            ("location".to_string(), "this lobby".to_string()),
        ]
        .into();
        relays.push(TrackedRelay {
            relay: Relay {
                host: name("relay", "local relay")?,
                addresses: vec![addr.ip()],
                port: addr.port(),
                priority: 10,
                weight: 20,
                attributes,
                up: true,
            },
            probe: Some(addr),
            health: Health::new(dir.fall, dir.rise),
            last_rtt: None,
        });
    }
    let scenery = dir
        .scenery
        .iter()
        .map(|s| {
            directory::terrasync::regexp_for(&s.url)
                .map_err(|e| anyhow::anyhow!("directory.scenery: {e}"))?;
            Ok(Scenery {
                url: s.url.trim_end_matches('/').to_string(),
                service: s.service.clone(),
                order: s.order,
                preference: s.preference,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let d = Directory {
        zone,
        relays,
        scenery,
    };
    d.records().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(d)
}

fn record_map(
    origin: &Name,
    records: Vec<Record>,
    serial: u32,
) -> InMemoryZoneHandler<TokioRuntimeProvider> {
    let mut z = InMemoryZoneHandler::<TokioRuntimeProvider>::empty(
        origin.clone(),
        ZoneType::Primary,
        AxfrPolicy::Deny,
    );
    for r in records {
        z.upsert_mut(r, serial);
    }
    z
}

/// Sends one FlightGear PING and waits for its PONG.
pub async fn probe_relay(addr: SocketAddr, timeout: Duration) -> Option<Duration> {
    let bind: SocketAddr = if addr.is_ipv6() {
        "[::]:0".parse().ok()?
    } else {
        "0.0.0.0:0".parse().ok()?
    };
    let sock = tokio::net::UdpSocket::bind(bind).await.ok()?;
    let cs = fgmp::Callsign::new("lobbyhc").ok()?;
    let ping = fgmp::message::to_bytes(&fgmp::Message::ping(cs)).ok()?;
    let start = Instant::now();
    sock.send_to(&ping, addr).await.ok()?;
    let mut buf = [0u8; 1500];
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let (n, from) = tokio::time::timeout_at(deadline, sock.recv_from(&mut buf))
            .await
            .ok()?
            .ok()?;
        if from == addr
            && n >= 32
            && buf[8..12] == 10u32.to_be_bytes()
            && buf[24..32] == ping[24..32]
        {
            return Some(start.elapsed());
        }
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
    server: Option<Server<Catalog>>,
    prober: tokio::task::JoinHandle<()>,
}

impl DnsServer {
    /// Serves the zone on `[dns] listen` (UDP and TCP), pushes it if configured,
    /// and probes the relays every `probe_interval`.
    pub async fn start(
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
        let origin = d.zone.origin.clone();
        let records = d.records().map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut handler = record_map(&origin, records, serial);
        if dns.allow_axfr {
            handler = {
                let recs = std::mem::take(handler.records_get_mut());
                let mut h = InMemoryZoneHandler::<TokioRuntimeProvider>::empty(
                    origin.clone(),
                    ZoneType::Primary,
                    AxfrPolicy::AllowAll,
                );
                *h.records_get_mut() = recs;
                h
            };
        }
        let zone = Arc::new(handler);
        let listen: Vec<SocketAddr> = dns
            .listen
            .iter()
            .map(|s| crate::config::listen_addr(s))
            .collect::<Result<_>>()?;
        let server = if listen.is_empty() {
            None
        } else {
            let mut catalog = Catalog::new();
            catalog.upsert(
                origin.clone().into(),
                vec![zone.clone() as Arc<dyn ZoneHandler>],
            );
            let mut server = Server::new(catalog);
            for a in listen {
                let udp = tokio::net::UdpSocket::bind(a)
                    .await
                    .with_context(|| format!("cannot bind DNS UDP {a}"))?;
                let bound = udp.local_addr()?;
                // TCP on the same port as UDP.
                let tcp = tokio::net::TcpListener::bind(bound)
                    .await
                    .with_context(|| format!("cannot bind DNS TCP {bound}"))?;
                listening("dns", "udp", bound);
                listening("dns", "tcp", bound);
                server.register_socket(udp);
                server.register_listener(tcp, Duration::from_secs(5), 64);
            }
            Some(server)
        };
        let push = Push::from_config(dns)?;
        let directory = Arc::new(Mutex::new(d));
        if let Some(p) = &push {
            let (owned, o) = {
                let d = crate::lifecycle::lock(&directory);
                (
                    d.owned().map_err(|e| anyhow::anyhow!("{e}"))?,
                    d.zone.origin.clone(),
                )
            };
            if let Err(e) = p.send(&o, &owned, &owned).await {
                tracing::error!("{e:#}");
            } else {
                tracing::info!(server = %p.server, records = owned.len(), "zone pushed");
            }
        }
        let interval = Duration::from_secs_f64(dir.probe_interval.clamp(0.1, 86_400.0));
        let timeout = Duration::from_secs_f64(dir.probe_timeout.clamp(0.05, 60.0));
        let prober = tokio::spawn(probe_loop(directory.clone(), zone, push, interval, timeout));
        Ok(DnsServer {
            directory,
            server,
            prober,
        })
    }

    /// Stops serving.
    pub async fn shutdown(mut self) {
        self.prober.abort();
        if let Some(s) = &mut self.server {
            let _ = s.shutdown_gracefully().await;
        }
    }
}

async fn probe_loop(
    directory: Arc<Mutex<Directory>>,
    zone: Arc<InMemoryZoneHandler<TokioRuntimeProvider>>,
    push: Option<Push>,
    interval: Duration,
    timeout: Duration,
) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let targets: Vec<(usize, Option<SocketAddr>)> = {
            let d = crate::lifecycle::lock(&directory);
            d.relays
                .iter()
                .enumerate()
                .map(|(i, r)| (i, r.probe))
                .collect()
        };
        let probes = targets.into_iter().map(|(i, addr)| async move {
            let rtt = match addr {
                Some(a) => probe_relay(a, timeout).await,
                None => None,
            };
            (i, rtt)
        });
        let mut results = Vec::new();
        for p in probes.collect::<Vec<_>>() {
            results.push(tokio::spawn(p));
        }
        let mut changed = false;
        let mut old_owned = Vec::new();
        let mut outcome = Vec::new();
        for h in results {
            if let Ok(r) = h.await {
                outcome.push(r);
            }
        }
        let (records, owned, origin, serial) = {
            let mut d = crate::lifecycle::lock(&directory);
            if push.is_some() {
                old_owned = d.owned().unwrap_or_default();
            }
            for (i, rtt) in outcome {
                if let Some(t) = d.relays.get_mut(i) {
                    t.last_rtt = rtt;
                    if t.health.record(rtt.is_some()) {
                        changed = true;
                        tracing::info!(relay = %t.relay.host, up = t.health.is_up(), "relay health changed");
                    }
                }
            }
            if !changed {
                continue;
            }
            d.zone.serial = d.zone.serial.wrapping_add(1);
            (d.records(), d.owned(), d.zone.origin.clone(), d.zone.serial)
        };
        let (Ok(records), Ok(owned)) = (records, owned) else {
            tracing::error!("cannot rebuild the zone");
            continue;
        };
        let mut fresh = record_map(&origin, records, serial);
        let map = std::mem::take(fresh.records_get_mut());
        *zone.records_mut().await = map;
        tracing::info!(serial, "zone updated");
        if let Some(p) = &push {
            if let Err(e) = p.send(&origin, &old_owned, &owned).await {
                tracing::error!("{e:#}");
            }
        }
    }
}
