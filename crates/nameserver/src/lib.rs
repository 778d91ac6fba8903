//! The directory's DNS serving (lobby's `dns` part): health probes of the configured
//! relays, the authoritative zone served with hickory-server (UDP; TCP through
//! [`tcp`]'s capped loop) and RFC 2136 push to an operator's primary server. The
//! model (records, health, `mpservers.xml`) is the pure `directory` crate's; this
//! crate is its tokio driver.
//!
//! Files: this one builds the directory from `[dns]` and `[directory]` and runs the
//! listeners; [`zone`] is the zone hickory serves (with AXFR access control),
//! [`tcp`] DNS over TCP, [`budget`] the per-source budget of DNS over UDP, [`probe`]
//! the health probes and [`push`] the RFC 2136 pushes.

mod budget;
pub mod probe;
pub mod push;
mod tcp;
pub mod zone;

use anyhow::{bail, Context, Result};
use budget::Budgeted;
use config::{DirectorySection, DnsSection, RelayEntry};
use directory::probe::{Ping, DIRECTORY_CALLSIGN};
use directory::{Config, Directory, RelayConfig, Scenery, ZoneConfig};
use hickory_proto::rr::Name;
use hickory_server::zone_handler::{Catalog, ZoneHandler};
use hickory_server::Server;
use lifecycle::{listening, Stop, Supervisor};
use probe::{probe_all, probe_loop, resolve_relays, Prober};
use push::{push_loop, Push};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zone::{zone_handler, AxfrAccess, Guarded, ServedZone};

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

/// A running directory.
pub struct DnsServer {
    /// The model, read by HTTP.
    pub directory: Arc<Mutex<Directory>>,
}

fn catalog(zone: &ServedZone) -> Catalog {
    let mut catalog = Catalog::new();
    catalog.upsert(
        zone.origin().clone(),
        vec![zone.clone() as Arc<dyn ZoneHandler>],
    );
    catalog
}

/// Binds UDP and TCP on each of `listen` and serves the zone there: UDP through
/// hickory's server with `udp`'s budget (`None` when `listen` is empty: push only),
/// TCP through [`tcp::serve`] under `sup`.
fn serve(
    sup: &Supervisor,
    listen: &[SocketAddr],
    udp: Budgeted,
    tcp: tcp::Tcp,
) -> Result<Option<Server<Budgeted>>> {
    if listen.is_empty() {
        return Ok(None);
    }
    let mut server = Server::new(udp);
    let shared = Arc::new(tcp);
    for &a in listen {
        // IPv6-only on IPv6 (both families can share port 53), no PMTU probe: DNS
        // answers over UDP may be large and must be fragmentable.
        let options = udp::BindOptions {
            pmtu_probe: false,
            ..udp::BindOptions::default()
        };
        // TCP on the same port as UDP.
        let (std_udp, listener) = bind_pair(
            a,
            |a| udp::bind(a, options).context("cannot bind DNS UDP"),
            |s| Ok(s.local_addr()?),
            |a| lifecycle::tcp_listener(a, "DNS TCP"),
        )?;
        std_udp.set_nonblocking(true)?;
        let udp = tokio::net::UdpSocket::from_std(std_udp)?;
        let bound = udp.local_addr()?;
        listening("dns", "udp", bound);
        listening("dns", "tcp", bound);
        server.register_socket(udp);
        let (shared, tasks, stop) = (shared.clone(), sup.tasks("dns"), sup.stop().clone());
        sup.spawn_task("dns", tcp::serve(listener, shared, tasks, stop));
    }
    Ok(Some(server))
}

/// How many ephemeral ports are tried for a port-0 listener before giving up.
const PAIR_TRIES: usize = 16;

/// A UDP socket and a TCP listener on one port: the UDP one bound at `a`, the TCP
/// one at the address it got. With port 0 the kernel picks the UDP port without
/// knowing whether TCP has it free (another process's connection may hold it): then
/// another port is tried, up to [`PAIR_TRIES`]. A port given is tried once.
fn bind_pair<U, T>(
    a: SocketAddr,
    bind_udp: impl Fn(SocketAddr) -> Result<U>,
    addr_of: impl Fn(&U) -> Result<SocketAddr>,
    bind_tcp: impl Fn(SocketAddr) -> Result<T>,
) -> Result<(U, T)> {
    let tries = if a.port() == 0 { PAIR_TRIES } else { 1 };
    let mut last = None;
    for _ in 0..tries {
        let u = bind_udp(a)?;
        match bind_tcp(addr_of(&u)?) {
            Ok(t) => return Ok((u, t)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("at least one try"))
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
        let limits = dns.tcp_limits()?;
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
        let targets = lifecycle::lock(&directory).probe_targets();
        let outcomes = probe_all(targets, &prober.ping, prober.timeout).await;
        let (stats, origin, records, serial, owned) = {
            let mut d = lifecycle::lock(&directory);
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
        let tcp = tcp::Tcp {
            catalog: catalog(&zone),
            open: udp::ConnLimiter::new(limits.max_connections, limits.max_per_ip),
            waiting: udp::Waiting::default(),
            timeout: limits.idle_timeout,
            stats: stats.clone(),
        };
        let udp = Budgeted::new(catalog(&zone), dns.udp_budget()?, stats.clone());
        let server = serve(sup, &listen, udp, tcp)?;
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
async fn run_listeners(mut server: Server<Budgeted>, stop: Stop) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, UdpSocket};

    #[test]
    fn a_port_0_pair_tries_another_port_when_tcp_has_it_taken() {
        // The first port the UDP bind gets is held on TCP by someone else.
        let first_udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let taken = TcpListener::bind(first_udp.local_addr().unwrap());
        let Ok(_taken) = taken else {
            return; // the kernel gave that number to TCP already: nothing to show
        };
        let first = std::cell::Cell::new(Some(first_udp));
        let bind_udp = |a: SocketAddr| -> Result<UdpSocket> {
            Ok(match first.take() {
                Some(s) => s,
                None => UdpSocket::bind(a)?,
            })
        };
        let (u, t) = bind_pair(
            "127.0.0.1:0".parse().unwrap(),
            bind_udp,
            |s| Ok(s.local_addr()?),
            |a| Ok(TcpListener::bind(a)?),
        )
        .unwrap();
        assert_eq!(u.local_addr().unwrap(), t.local_addr().unwrap());

        // A port given is tried once: the same collision is an error.
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap();
        let e = bind_pair(
            port,
            |a| Ok(UdpSocket::bind(a)?),
            |s| Ok(s.local_addr()?),
            |a| Ok(TcpListener::bind(a)?),
        );
        assert!(e.is_err(), "the port was given: no other is tried");
    }
}
