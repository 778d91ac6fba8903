//! `lobby fg`: FlightGear discovery as FlightGear itself does it.
//!
//! - `lobby fg servers`: the in-sim multiplayer dialog's lookup. SRV
//!   `_fgms._udp.<domain>`, sorted by priority ascending then weight descending, port 0
//!   entries skipped as offline, then the `flightgear-mpserver=` TXT attribute of each
//!   relay (fetched concurrently here; FlightGear fetches them one after another). With
//!   `--probe`, each relay's fgms ping round trip and its telnet pilot count.
//! - `lobby fg terrasync`: TerraSync's NAPTR lookup of `terrasync.<domain>` and SimGear's
//!   server choice (flag `U`, service, lowest order, lowest preference, uniform pick).
//!
//! The record logic is in `directory::{mpserver, terrasync}`; this module does the DNS
//! and network work and the reporting.

use crate::services::dns::probe::ping_relay;
use anyhow::Result;
use clap::{Args, Subcommand};
use directory::probe::{Ping, CLIENT_CALLSIGN};
use directory::terrasync::{self, NaptrEntry};
use hickory_proto::rr::{Name, RData, RecordType};
use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::lookup::Lookup;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::TokioResolver;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;

/// FlightGear discovery commands.
#[derive(Subcommand, Debug)]
pub enum FgCommand {
    /// List the multiplayer relays FlightGear's in-sim dialog finds: SRV
    /// `_fgms._udp.<domain>`, then the `flightgear-mpserver` TXT record of each relay.
    ///
    /// Exit status: 0 when at least one active relay is listed, 1 when none is (or the
    /// SRV lookup failed), 2 on a usage error.
    Servers(ServersArgs),
    /// Pick a TerraSync scenery server as SimGear does: NAPTR `terrasync.<domain>`, flags
    /// exactly "U", the service, the lowest order, well-formed `!^.*$!URL!` regexps, the
    /// lowest preference, a uniform random pick (SimGear 2020.3, the launcher and the
    /// wiki; the newest SimGear weights the pick by preference, which agrees when the
    /// lowest-order preferences are equal).
    ///
    /// Precedence, as in SimGear: `--override` (FlightGear's /sim/terrasync/http-server
    /// set to a URL) skips DNS entirely. Otherwise DNS is asked and a server picked; then,
    /// if the environment variable SIMGEAR_TERRASYNC_SERVER_<service> is set, its value
    /// replaces the pick. Like SimGear, the variable has no effect when the lookup fails
    /// or yields no usable record (that stays an error).
    ///
    /// Exit status: 0 with a URL printed, 1 when no server can be chosen, 2 on a usage
    /// error.
    Terrasync(TerrasyncArgs),
}

/// DNS options shared by both commands.
#[derive(Args, Debug, Clone)]
pub struct DnsOpts {
    /// Nameserver to ask: IP, IP:PORT or [IPv6]:PORT (port 53 when omitted). Default: the
    /// system resolver configuration (/etc/resolv.conf).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = parse_nameserver)]
    pub nameserver: Option<SocketAddr>,
    /// Seconds to wait for each DNS answer (for `servers --probe`, also for each pong
    /// and telnet list). SimGear gives each DNS request 5 s.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: f64,
    /// Print JSON on standard output instead of text (warnings still go to standard error).
    #[arg(long)]
    pub json: bool,
}

/// `lobby fg servers`.
#[derive(Args, Debug, Clone)]
pub struct ServersArgs {
    /// Domain whose relays to list (FlightGear's /sim/multiplay/dns/query-dn).
    #[arg(long, default_value = "flightgear.org", value_name = "D", value_parser = parse_domain)]
    pub domain: String,
    /// SRV service label, without the underscore (/sim/multiplay/dns/query-srv-service).
    #[arg(long, default_value = "fgms", value_name = "NAME", value_parser = parse_label)]
    pub service: String,
    /// SRV protocol label, without the underscore (/sim/multiplay/dns/query-srv-protocol).
    #[arg(long, default_value = "udp", value_name = "NAME", value_parser = parse_label)]
    pub protocol: String,
    /// Also list offline relays (SRV port 0), which FlightGear skips.
    #[arg(long)]
    pub all: bool,
    /// Probe each active relay: resolve its address (A/AAAA), measure the fgms
    /// ping/pong round trip over UDP, and read the pilot count from its telnet port.
    #[arg(long)]
    pub probe: bool,
    /// Telnet port to read the pilot count from, for every relay (default: each relay's
    /// SRV port + 1, fgms's convention).
    #[arg(long, value_name = "PORT", requires = "probe")]
    pub telnet_port: Option<u16>,
    #[command(flatten)]
    pub dns: DnsOpts,
}

/// `lobby fg terrasync`.
#[derive(Args, Debug, Clone)]
pub struct TerrasyncArgs {
    /// Domain: the NAPTR name asked is terrasync.<domain> (FlightGear hard-codes
    /// terrasync.flightgear.org).
    #[arg(long, default_value = "flightgear.org", value_name = "D", value_parser = parse_domain)]
    pub domain: String,
    /// NAPTR service to select: ws20 (scenery), o2c (osm2city), or <protocol>+ws20 when
    /// /sim/terrasync/protocol is set. Compared exactly, as SimGear does.
    #[arg(long, default_value = "ws20", value_name = "SERVICE", value_parser = parse_service)]
    pub service: String,
    /// Print every candidate of the lowest order and preference, shuffled, the pick first
    /// (the launcher's fallback list) instead of the pick alone. With --override or
    /// SIMGEAR_TERRASYNC_SERVER_<service>, the list is that URL alone.
    #[arg(long)]
    pub all: bool,
    /// Use this URL and skip DNS, as FlightGear does when /sim/terrasync/http-server is
    /// not "automatic". Takes precedence over DNS and SIMGEAR_TERRASYNC_SERVER_<service>.
    #[arg(long = "override", value_name = "URL", value_parser = parse_nonempty)]
    pub override_url: Option<String>,
    /// Seed of the random pick, for reproducible choices (default: a fresh random seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub dns: DnsOpts,
}

/// Runs a `lobby fg` command.
pub async fn run(cmd: FgCommand) -> Result<ExitCode> {
    match cmd {
        FgCommand::Servers(a) => servers(a).await,
        FgCommand::Terrasync(a) => terrasync_cmd(a).await,
    }
}

// ---------------------------------------------------------------------------
// Argument parsing

fn parse_nameserver(s: &str) -> Result<SocketAddr, String> {
    udp::addr::parse_literal(s, 53).ok_or_else(|| {
        format!(
            "{:?} is not a nameserver address (IP, IP:PORT or [IPv6]:PORT)",
            s.trim()
        )
    })
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    config::parse_seconds(s, 3600.0)
}

/// A domain name, returned without its trailing dot.
fn parse_domain(s: &str) -> Result<String, String> {
    let d = s.trim().trim_end_matches('.');
    if d.is_empty() {
        return Err("the domain is empty".into());
    }
    Name::from_ascii(format!("{d}.")).map_err(|e| format!("{s:?} is not a domain name: {e}"))?;
    Ok(d.to_string())
}

fn parse_label(s: &str) -> Result<String, String> {
    let l = s.trim().trim_start_matches('_');
    if l.is_empty() || l.len() > 62 || !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(format!(
            "{s:?} is not an SRV label (letters, digits and '-', without the underscore)"
        ));
    }
    Ok(l.to_string())
}

fn parse_service(s: &str) -> Result<String, String> {
    if s.is_empty() || s.len() > 255 || s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!("{s:?} is not a NAPTR service"));
    }
    Ok(s.to_string())
}

fn parse_nonempty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("the value is empty".into());
    }
    Ok(s.to_string())
}

// ---------------------------------------------------------------------------
// DNS

/// Why a lookup failed, in words an operator can act on.
#[derive(Debug, Clone)]
enum LookupError {
    /// The name does not exist.
    NxDomain,
    /// The name exists but has no record of the type (NODATA).
    NoRecords,
    /// No answer in time.
    Timeout(Duration),
    /// The server answered with an error code (REFUSED, SERVFAIL, ...).
    Rcode(String),
    /// Sockets, unreachable server, malformed answers, ...
    Other(String),
}

impl LookupError {
    fn from_net(e: &NetError, timeout: Duration) -> LookupError {
        if e.is_nx_domain() {
            return LookupError::NxDomain;
        }
        if e.is_no_records_found() {
            return LookupError::NoRecords;
        }
        match e {
            NetError::Timeout => LookupError::Timeout(timeout),
            NetError::Dns(DnsError::ResponseCode(c)) => LookupError::Rcode(c.to_string()),
            NetError::Io(io) => LookupError::Other(format!("network error: {io}")),
            other => LookupError::Other(other.to_string()),
        }
    }
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NxDomain => write!(f, "NXDOMAIN (the name does not exist)"),
            LookupError::NoRecords => {
                write!(f, "no records of that type (the name exists: NODATA)")
            }
            LookupError::Timeout(t) => {
                write!(f, "timed out (no answer within {} s)", t.as_secs_f64())
            }
            LookupError::Rcode(c) => write!(f, "the server answered {c}"),
            LookupError::Other(m) => write!(f, "{m}"),
        }
    }
}

/// The resolver and how to name it in messages.
#[derive(Clone)]
struct Dns {
    resolver: TokioResolver,
    timeout: Duration,
    /// `127.0.0.1:5353` or `the system resolver (...)`.
    label: String,
}

impl Dns {
    fn new(opts: &DnsOpts) -> Result<Dns, String> {
        let timeout = Duration::from_secs_f64(opts.timeout);
        let (mut builder, label) = match opts.nameserver {
            Some(addr) => {
                let mut ns = NameServerConfig::udp_and_tcp(addr.ip());
                for c in ns.connections.iter_mut() {
                    c.port = addr.port();
                }
                (
                    TokioResolver::builder_with_config(
                        ResolverConfig::from_name_servers(vec![ns]),
                        TokioRuntimeProvider::default(),
                    ),
                    addr.to_string(),
                )
            }
            None => {
                let (config, options) = hickory_resolver::system_conf::read_system_conf()
                    .map_err(|e| format!("cannot read the system resolver configuration: {e}"))?;
                let servers: Vec<String> = config
                    .name_servers
                    .iter()
                    .map(|n| n.ip.to_string())
                    .fold(Vec::new(), |mut v, ip| {
                        if !v.contains(&ip) {
                            v.push(ip);
                        }
                        v
                    });
                let label = format!("the system resolver ({})", servers.join(", "));
                let mut b =
                    TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
                *b.options_mut() = options;
                (b, label)
            }
        };
        let o = builder.options_mut();
        o.timeout = timeout;
        o.attempts = 1;
        o.cache_size = 0;
        let resolver = builder
            .build()
            .map_err(|e| format!("cannot set up the DNS resolver: {e}"))?;
        Ok(Dns {
            resolver,
            timeout,
            label,
        })
    }

    /// One lookup, bounded by the timeout as SimGear bounds each request.
    async fn lookup(&self, fqdn: &str, rtype: RecordType) -> Result<Lookup, LookupError> {
        let name = Name::from_ascii(fqdn)
            .map_err(|e| LookupError::Other(format!("invalid name {fqdn:?}: {e}")))?;
        match tokio::time::timeout(self.timeout, self.resolver.lookup(name, rtype)).await {
            Err(_) => Err(LookupError::Timeout(self.timeout)),
            Ok(Err(e)) => Err(LookupError::from_net(&e, self.timeout)),
            Ok(Ok(l)) => Ok(l),
        }
    }

    /// A and AAAA of a host.
    async fn addresses(&self, fqdn: &str) -> Result<Vec<IpAddr>, LookupError> {
        let name = Name::from_ascii(fqdn)
            .map_err(|e| LookupError::Other(format!("invalid name {fqdn:?}: {e}")))?;
        match tokio::time::timeout(self.timeout, self.resolver.lookup_ip(name)).await {
            Err(_) => Err(LookupError::Timeout(self.timeout)),
            Ok(Err(e)) => Err(LookupError::from_net(&e, self.timeout)),
            Ok(Ok(l)) => Ok(l.iter().collect()),
        }
    }
}

/// A name for display: no trailing dot, as SimGear's hostnames.
fn display_name(n: &Name) -> String {
    let s = n.to_ascii();
    match s.strip_suffix('.') {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => s,
    }
}

/// Makes text from DNS safe for a terminal: control characters escaped.
fn printable(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn warn(msg: &str) {
    eprintln!("warning: {}", printable(msg));
}

// ---------------------------------------------------------------------------
// lobby fg servers

/// One SRV entry and what was learned about it.
#[derive(Debug, Clone, Serialize)]
struct ServerReport {
    /// SRV target without the trailing dot.
    host: String,
    port: u16,
    priority: u16,
    weight: u16,
    /// False for port 0 (or target "."): FlightGear skips it.
    online: bool,
    /// `name` from the TXT record, if any.
    name: Option<String>,
    /// `location` from the TXT record, if any.
    location: Option<String>,
    /// Every string attribute of the TXT record.
    attributes: BTreeMap<String, String>,
    /// Attributes whose JSON values are not strings.
    non_string: Vec<String>,
    /// Why the TXT record could not be used (lookup or decoding), if it could not.
    txt_error: Option<String>,
    /// Everything a publisher should fix, in words.
    warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe: Option<ProbeReport>,
}

/// What `--probe` measured.
#[derive(Debug, Clone, Default, Serialize)]
struct ProbeReport {
    /// A and AAAA of the target.
    addresses: Vec<IpAddr>,
    /// Why the address lookup failed.
    resolve_error: Option<String>,
    /// The address that answered the ping (or the last one tried).
    address: Option<SocketAddr>,
    /// Ping to pong, milliseconds.
    rtt_ms: Option<f64>,
    ping_error: Option<String>,
    /// The telnet address asked.
    telnet: Option<SocketAddr>,
    /// From `# N pilot(s) online`.
    pilots: Option<u64>,
    telnet_error: Option<String>,
}

#[derive(Debug, Serialize)]
struct ServersReport {
    /// The SRV name asked.
    query: String,
    nameserver: String,
    /// Active relays (listed by FlightGear).
    active: usize,
    /// Offline relays (SRV port 0), listed only with `--all`.
    offline: usize,
    servers: Vec<ServerReport>,
}

struct SrvEntry {
    priority: u16,
    weight: u16,
    port: u16,
    target: Name,
}

async fn servers(a: ServersArgs) -> Result<ExitCode> {
    let dns = match Dns::new(&a.dns) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("lobby fg servers: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let query = format!("_{}._{}.{}.", a.service, a.protocol, a.domain);
    let lookup = match dns.lookup(&query, RecordType::SRV).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "lobby fg servers: SRV lookup of {query} (domain {}) via {} failed: {e}",
                a.domain, dns.label
            );
            return Ok(ExitCode::from(1));
        }
    };
    let mut entries: Vec<SrvEntry> = lookup
        .answers()
        .iter()
        .filter_map(|r| match &r.data {
            RData::SRV(s) => Some(SrvEntry {
                priority: s.priority,
                weight: s.weight,
                port: s.port,
                target: s.target.clone(),
            }),
            _ => None,
        })
        .collect();
    if entries.is_empty() {
        eprintln!(
            "lobby fg servers: SRV lookup of {query} (domain {}) via {}: no SRV records in the answer",
            a.domain, dns.label
        );
        return Ok(ExitCode::from(1));
    }
    // SimGear's order: priority ascending, then weight descending (stable otherwise).
    entries.sort_by(|x, y| x.priority.cmp(&y.priority).then(y.weight.cmp(&x.weight)));

    let mut tasks = Vec::new();
    let mut offline = 0;
    for e in entries {
        let online = e.port != 0 && !e.target.is_root();
        if !online {
            offline += 1;
            tracing::debug!(target = %e.target, "skipping offline host");
            if !a.all {
                continue;
            }
        }
        let dns = dns.clone();
        let probe = a.probe && online;
        let telnet_port = a.telnet_port;
        tasks.push(tokio::spawn(async move {
            inspect(&dns, e, online, probe, telnet_port).await
        }));
    }
    // Every task runs concurrently; collect in SRV order.
    let mut reports = Vec::with_capacity(tasks.len());
    for t in tasks {
        match t.await {
            Ok(r) => reports.push(r),
            Err(e) => anyhow::bail!("a lookup task failed: {e}"),
        }
    }
    let active = reports.iter().filter(|r| r.online).count();
    for r in &reports {
        for w in &r.warnings {
            warn(&format!("{}: {w}", r.host));
        }
    }
    let report = ServersReport {
        query: query.clone(),
        nameserver: dns.label.clone(),
        active,
        offline,
        servers: reports,
    };
    if a.dns.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_servers(&report, a.all, a.probe);
    }
    if active == 0 {
        eprintln!(
            "lobby fg servers: no active relay under {query} via {} ({offline} offline)",
            dns.label
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// TXT (and with `probe`, addresses, ping and telnet) of one relay.
async fn inspect(
    dns: &Dns,
    e: SrvEntry,
    online: bool,
    probe: bool,
    telnet_port: Option<u16>,
) -> ServerReport {
    let host = display_name(&e.target);
    let fqdn = e.target.to_ascii();
    let mut r = ServerReport {
        host: host.clone(),
        port: e.port,
        priority: e.priority,
        weight: e.weight,
        online,
        name: None,
        location: None,
        attributes: BTreeMap::new(),
        non_string: Vec::new(),
        txt_error: None,
        warnings: Vec::new(),
        probe: None,
    };
    if e.target.is_root() {
        r.warnings
            .push("SRV target is \".\" (service not available at this name)".into());
        return r;
    }
    let txt = async {
        match dns.lookup(&fqdn, RecordType::TXT).await {
            Ok(l) => Ok(l
                .answers()
                .iter()
                .filter_map(|rec| match &rec.data {
                    RData::TXT(t) => Some(t.txt_data.iter().map(|s| s.to_vec()).collect()),
                    _ => None,
                })
                .collect::<Vec<Vec<Vec<u8>>>>()),
            Err(e) => Err(e),
        }
    };
    let probing = async {
        if probe {
            Some(probe_relay(dns, &fqdn, e.port, telnet_port).await)
        } else {
            None
        }
    };
    let (txt, probed) = tokio::join!(txt, probing);
    r.probe = probed;
    match txt {
        Err(err) => {
            let msg = match err {
                LookupError::NxDomain | LookupError::NoRecords => {
                    format!("no TXT record ({err}); FlightGear shows the host name and location \"unknown\"")
                }
                other => format!("TXT lookup failed: {other}"),
            };
            r.warnings.push(msg.clone());
            r.txt_error = Some(msg);
        }
        Ok(rrs) => read_txt(&mut r, &rrs),
    }
    r
}

/// Decodes the TXT RRs of one relay into `r`, with what each kind of client would see.
fn read_txt(r: &mut ServerReport, rrs: &[Vec<Vec<u8>>]) {
    let ours = |s: &[u8]| s.starts_with(directory::mpserver::ATTRIBUTE.as_bytes());
    let with_attr = rrs.iter().filter(|rr| rr.iter().any(|s| ours(s))).count();
    if with_attr > 1 {
        r.warnings.push(format!(
            "{with_attr} TXT records carry {}; SimGear keeps the last one it sees, mpmap the first",
            directory::mpserver::ATTRIBUTE
        ));
    }
    if rrs
        .iter()
        .any(|rr| rr.len() > 1 && rr.iter().any(|s| ours(s)))
    {
        r.warnings.push(
            "the TXT record has several character-strings; c-ares builds of FlightGear and mpmap read only one"
                .into(),
        );
    }
    if rrs.len() > 1
        && rrs
            .first()
            .is_some_and(|rr| !rr.first().is_some_and(|s| ours(s)))
    {
        r.warnings.push(format!(
            "the first TXT string is not {}=...; mpmap reads only that one",
            directory::mpserver::ATTRIBUTE
        ));
    }
    let strings: Vec<&Vec<u8>> = rrs.iter().flatten().collect();
    match directory::mpserver::decode(&strings) {
        Ok(d) => {
            if !d.non_string.is_empty() {
                r.warnings.push(format!(
                    "TXT JSON values that are not strings: {} (FlightGear 2020.3 drops them; newer FlightGear throws)",
                    d.non_string.join(", ")
                ));
            }
            for key in ["name", "location"] {
                if !d.attrs.contains_key(key) {
                    r.warnings.push(format!("TXT JSON has no string {key:?}"));
                }
            }
            r.name = d.attrs.get("name").cloned();
            r.location = d.attrs.get("location").cloned();
            r.non_string = d.non_string;
            r.attributes = d.attrs;
        }
        Err(e) => {
            let msg = format!("bad TXT record: {e}");
            r.warnings.push(msg.clone());
            r.txt_error = Some(msg);
        }
    }
}

async fn probe_relay(dns: &Dns, fqdn: &str, port: u16, telnet_port: Option<u16>) -> ProbeReport {
    let mut p = ProbeReport::default();
    match dns.addresses(fqdn).await {
        Ok(a) if a.is_empty() => p.resolve_error = Some("no A or AAAA record".into()),
        Ok(a) => p.addresses = a,
        Err(e) => p.resolve_error = Some(format!("A/AAAA lookup failed: {e}")),
    }
    let Some(&first) = p.addresses.first() else {
        return p;
    };
    let tport = telnet_port.or_else(|| port.checked_add(1));
    let telnet = async {
        match tport {
            Some(tp) => {
                let addr = SocketAddr::new(first, tp);
                (Some(addr), pilot_count(addr, dns.timeout).await)
            }
            None => (
                None,
                Err("no telnet port (SRV port + 1 overflows)".to_string()),
            ),
        }
    };
    let ping = async {
        let mut last = None;
        for &ip in &p.addresses {
            let addr = SocketAddr::new(ip, port);
            match ping(addr, dns.timeout).await {
                Ok(rtt) => return (addr, Ok(rtt)),
                Err(e) => last = Some((addr, Err(e))),
            }
        }
        last.unwrap_or((SocketAddr::new(first, port), Err("no address".into())))
    };
    let ((taddr, pilots), (addr, rtt)) = tokio::join!(telnet, ping);
    p.telnet = taddr;
    match pilots {
        Ok(n) => p.pilots = Some(n),
        Err(e) => p.telnet_error = Some(e),
    }
    p.address = Some(addr);
    match rtt {
        Ok(d) => p.rtt_ms = Some(d.as_secs_f64() * 1000.0),
        Err(e) => p.ping_error = Some(e),
    }
    p
}

/// fgms's health check: a 32-byte ping (MsgId 9), answered by the same datagram with
/// MsgId 10 (the directory's prober sends the same, with another callsign).
async fn ping(addr: SocketAddr, timeout: Duration) -> Result<Duration, String> {
    let ping = Ping::new(CLIENT_CALLSIGN).map_err(|e| e.to_string())?;
    ping_relay(&ping, addr, timeout)
        .await
        .map_err(|e| e.to_string())
}

/// Reads fgms's telnet list up to the `# N pilot(s) online` line.
async fn pilot_count(addr: SocketAddr, timeout: Duration) -> Result<u64, String> {
    let work = async {
        let s = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("telnet {addr}: {e}"))?;
        // The count is in the first lines; never read more than 64 KiB.
        let mut r = BufReader::new(s.take(64 * 1024));
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = r
                .read_until(b'\n', &mut line)
                .await
                .map_err(|e| format!("telnet {addr}: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "telnet {addr}: no \"# N pilot(s) online\" line in the output"
                ));
            }
            let text = String::from_utf8_lossy(&line);
            if let Some(n) = parse_pilots(&text) {
                return Ok(n);
            }
        }
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "telnet {addr}: no pilot count within {} s",
            timeout.as_secs_f64()
        )),
    }
}

/// `# 2 pilot(s) online` → 2.
fn parse_pilots(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix('#')?.trim_start();
    let (n, tail) = rest.split_once(char::is_whitespace)?;
    (tail.trim() == "pilot(s) online")
        .then(|| n.parse().ok())
        .flatten()
}

fn print_servers(r: &ServersReport, all: bool, probe: bool) {
    let hidden = if all || r.offline == 0 {
        String::new()
    } else {
        " (hidden; --all lists them)".to_string()
    };
    println!(
        "{} via {}: {} active, {} offline{hidden}",
        r.query, r.nameserver, r.active, r.offline
    );
    if r.servers.is_empty() {
        return;
    }
    let mut head = vec![
        "PRIO", "WEIGHT", "HOST", "PORT", "STATUS", "NAME", "LOCATION",
    ];
    if probe {
        head.extend(["RTT", "PILOTS"]);
    }
    let rows: Vec<Vec<String>> = r
        .servers
        .iter()
        .map(|s| {
            let mut row = vec![
                s.priority.to_string(),
                s.weight.to_string(),
                printable(&s.host),
                s.port.to_string(),
                if s.online { "active" } else { "offline" }.to_string(),
                // FlightGear's defaults: the host name, location "unknown".
                printable(s.name.as_deref().unwrap_or("-")),
                printable(s.location.as_deref().unwrap_or("-")),
            ];
            if probe {
                let p = s.probe.as_ref();
                row.push(match p {
                    Some(ProbeReport {
                        rtt_ms: Some(ms), ..
                    }) => format!("{ms:.1} ms"),
                    Some(_) => "no pong".into(),
                    None => "-".into(),
                });
                row.push(match p.and_then(|p| p.pilots) {
                    Some(n) => n.to_string(),
                    None => "-".into(),
                });
            }
            row
        })
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:<w$}  "));
            }
        }
        println!("{}", out.trim_end());
    };
    line(head.iter().map(|s| s.to_string()).collect());
    for row in rows {
        line(row);
    }
    for s in &r.servers {
        if let Some(p) = &s.probe {
            for e in [&p.resolve_error, &p.ping_error, &p.telnet_error]
                .into_iter()
                .flatten()
            {
                println!("  {}: {}", printable(&s.host), printable(e));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// lobby fg terrasync

#[derive(Debug, Serialize)]
struct NaptrJson {
    order: u16,
    preference: u16,
    flags: String,
    service: String,
    regexp: String,
    replacement: String,
}

#[derive(Debug, Serialize)]
struct SkippedJson {
    order: u16,
    preference: u16,
    regexp: String,
    reason: String,
}

#[derive(Debug, Serialize)]
struct TerrasyncReport {
    /// The NAPTR name asked (absent with --override).
    query: Option<String>,
    nameserver: Option<String>,
    service: String,
    /// The URL FlightGear would use.
    url: String,
    /// `override`, `environment` or `dns`.
    source: &'static str,
    /// What DNS picked, when the environment variable replaced it.
    dns_pick: Option<String>,
    /// Candidates of the lowest order and preference, shuffled, the DNS pick first.
    candidates: Vec<String>,
    /// Lowest-order entries skipped for a malformed regexp.
    skipped: Vec<SkippedJson>,
    /// Every NAPTR record in the answer.
    records: Vec<NaptrJson>,
}

async fn terrasync_cmd(a: TerrasyncArgs) -> Result<ExitCode> {
    if let Some(url) = &a.override_url {
        // /sim/terrasync/http-server: no DNS at all, the variable is never read.
        print_terrasync(&override_report(&a.service, url), a.dns.json, a.all)?;
        return Ok(ExitCode::SUCCESS);
    }
    let var = terrasync::override_var(&a.service);
    let env_value = std::env::var_os(&var).map(|v| v.to_string_lossy().into_owned());
    let fail = |msg: String| terrasync_failure(&msg, &var, env_value.is_some());
    let dns = match Dns::new(&a.dns) {
        Ok(d) => d,
        Err(e) => return Ok(fail(e)),
    };
    let query = format!("terrasync.{}.", a.domain);
    let (records, entries) = match naptr_records(&dns, &query).await {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    let mut rng = a
        .seed
        .map_or_else(StdRng::from_entropy, StdRng::seed_from_u64);
    let (selection, skipped) = match select_warning(&entries, &a.service, &query, &mut rng) {
        Ok(s) => s,
        Err(e) => {
            return Ok(fail(format!(
                "NAPTR {query} via {}: {e} ({} record(s) in the answer)",
                dns.label,
                entries.len()
            )))
        }
    };
    let Some((url, source, dns_pick, candidates)) = apply_environment(env_value, &var, selection)
    else {
        return Ok(ExitCode::from(1));
    };
    let report = TerrasyncReport {
        query: Some(query),
        nameserver: Some(dns.label.clone()),
        service: a.service.clone(),
        url,
        source,
        dns_pick,
        candidates,
        skipped,
        records,
    };
    print_terrasync(&report, a.dns.json, a.all)?;
    Ok(ExitCode::SUCCESS)
}

/// The report of `--override`: that URL alone, no DNS.
fn override_report(service: &str, url: &str) -> TerrasyncReport {
    TerrasyncReport {
        query: None,
        nameserver: None,
        service: service.to_string(),
        url: url.to_string(),
        source: "override",
        dns_pick: None,
        candidates: vec![url.to_string()],
        skipped: Vec::new(),
        records: Vec::new(),
    }
}

/// Reports that no server can be chosen (exit status 1), noting that the
/// environment variable `var`, when set, does not rescue a failed DNS selection.
fn terrasync_failure(msg: &str, var: &str, env_set: bool) -> ExitCode {
    eprintln!("lobby fg terrasync: {msg}");
    if env_set {
        eprintln!(
            "lobby fg terrasync: note: {var} is set, but SimGear applies it only after a successful DNS selection"
        );
    }
    ExitCode::from(1)
}

/// The NAPTR records of `query`, for the report and for the selection; an error
/// when the lookup fails or holds no NAPTR record.
async fn naptr_records(
    dns: &Dns,
    query: &str,
) -> Result<(Vec<NaptrJson>, Vec<NaptrEntry>), String> {
    let lookup = dns
        .lookup(query, RecordType::NAPTR)
        .await
        .map_err(|e| format!("NAPTR lookup of {query} via {} failed: {e}", dns.label))?;
    let mut records = Vec::new();
    let mut entries = Vec::new();
    for rec in lookup.answers() {
        if let RData::NAPTR(n) = &rec.data {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            records.push(NaptrJson {
                order: n.order,
                preference: n.preference,
                flags: text(&n.flags),
                service: text(&n.services),
                regexp: text(&n.regexp),
                replacement: n.replacement.to_ascii(),
            });
            entries.push(NaptrEntry {
                order: n.order,
                preference: n.preference,
                flags: text(&n.flags),
                service: text(&n.services),
                regexp: text(&n.regexp),
            });
        }
    }
    if entries.is_empty() {
        return Err(format!(
            "NAPTR lookup of {query} via {}: no NAPTR records in the answer",
            dns.label
        ));
    }
    Ok((records, entries))
}

/// SimGear's selection, with a warning on standard error for every malformed
/// lowest-order entry (whether or not a server could be chosen).
fn select_warning(
    entries: &[NaptrEntry],
    service: &str,
    query: &str,
    rng: &mut StdRng,
) -> Result<(terrasync::Selection, Vec<SkippedJson>), directory::Error> {
    let selection = match terrasync::select(entries, service, rng) {
        Ok(s) => s,
        Err(e) => {
            // Name the malformed lowest-order entries that left nothing to choose.
            warn_unsupported_lowest(entries, service, query);
            return Err(e);
        }
    };
    let skipped: Vec<SkippedJson> = selection
        .skipped
        .iter()
        .map(|k| SkippedJson {
            order: k.entry.order,
            preference: k.entry.preference,
            regexp: k.entry.regexp.clone(),
            reason: k.reason.clone(),
        })
        .collect();
    for k in &skipped {
        warn(&format!(
            "{query} NAPTR {} {} \"U\" {service:?}: skipped, {}",
            k.order, k.preference, k.reason
        ));
    }
    Ok((selection, skipped))
}

/// Warns about every lowest-order `U` entry of `service` whose regexp SimGear rejects.
fn warn_unsupported_lowest(entries: &[NaptrEntry], service: &str, query: &str) {
    let matching = entries
        .iter()
        .filter(|n| n.flags == "U" && n.service == service);
    let Some(lowest) = matching.clone().map(|n| n.order).min() else {
        return;
    };
    for n in matching.filter(|n| n.order == lowest) {
        if terrasync::url_of(&n.regexp).is_none() {
            warn(&format!(
                "{query} NAPTR {} {} \"U\" {:?}: unsupported regexp {:?} (must be !^.*$!URL!)",
                n.order, n.preference, n.service, n.regexp
            ));
        }
    }
}

/// SIMGEAR_TERRASYNC_SERVER_<service> replaces the DNS pick: `(url, source, what
/// DNS picked, candidates)`, the candidates being that URL alone when the variable
/// is used. `None` (after saying why) when it is set but empty.
fn apply_environment(
    env_value: Option<String>,
    var: &str,
    selection: terrasync::Selection,
) -> Option<(String, &'static str, Option<String>, Vec<String>)> {
    match env_value {
        Some(v) if v.is_empty() => {
            eprintln!(
                "lobby fg terrasync: {var} is set but empty; SimGear would use the empty string and find no server"
            );
            None
        }
        Some(v) => Some((v.clone(), "environment", Some(selection.url), vec![v])),
        None => Some((selection.url, "dns", None, selection.candidates)),
    }
}

fn print_terrasync(r: &TerrasyncReport, json: bool, all: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    if let Some(pick) = &r.dns_pick {
        eprintln!(
            "lobby fg terrasync: {} overrides the DNS pick {}",
            terrasync::override_var(&r.service),
            printable(pick)
        );
    }
    if all {
        for c in &r.candidates {
            println!("{}", printable(c));
        }
    } else {
        println!("{}", printable(&r.url));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nameserver_forms() {
        assert_eq!(
            parse_nameserver("127.0.0.1").unwrap(),
            "127.0.0.1:53".parse().unwrap()
        );
        assert_eq!(
            parse_nameserver("127.0.0.1:5353").unwrap(),
            "127.0.0.1:5353".parse().unwrap()
        );
        assert_eq!(
            parse_nameserver("[::1]:5353").unwrap(),
            "[::1]:5353".parse().unwrap()
        );
        assert_eq!(
            parse_nameserver("::1").unwrap(),
            "[::1]:53".parse().unwrap()
        );
        assert_eq!(
            parse_nameserver("[::1]").unwrap(),
            "[::1]:53".parse().unwrap()
        );
        assert!(parse_nameserver("ns1.example.org").is_err());
        assert!(parse_nameserver("127.0.0.1:99999").is_err());
    }

    #[test]
    fn pilot_line() {
        assert_eq!(parse_pilots("# 2 pilot(s) online\n"), Some(2));
        assert_eq!(parse_pilots("# 0 pilot(s) online\r\n"), Some(0));
        assert_eq!(parse_pilots("# This is lobby"), None);
        assert_eq!(parse_pilots("# x pilot(s) online"), None);
        assert_eq!(parse_pilots("#"), None);
    }

    #[test]
    fn domains_and_labels() {
        assert_eq!(parse_domain("fg.test.").unwrap(), "fg.test");
        assert!(parse_domain("").is_err());
        assert!(parse_domain(".").is_err());
        assert_eq!(parse_label("_fgms").unwrap(), "fgms");
        assert!(parse_label("a b").is_err());
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("NaN").is_err());
        assert_eq!(parse_seconds("2.5").unwrap(), 2.5);
    }

    #[test]
    fn hostile_txt_never_panics() {
        let mut r = ServerReport {
            host: "h".into(),
            port: 1,
            priority: 0,
            weight: 0,
            online: true,
            name: None,
            location: None,
            attributes: BTreeMap::new(),
            non_string: Vec::new(),
            txt_error: None,
            warnings: Vec::new(),
            probe: None,
        };
        read_txt(&mut r, &[]);
        assert!(r.txt_error.is_some());
        read_txt(
            &mut r,
            &[vec![b"flightgear-mpserver=\xff\x00".to_vec(), Vec::new()]],
        );
        assert!(r.txt_error.is_some());
        assert_eq!(printable("a\x1b[31mb"), "a\\u{1b}[31mb");
    }
}
