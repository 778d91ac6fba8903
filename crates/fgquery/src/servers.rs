//! `lobby fg servers`: the in-sim multiplayer dialog's lookup, and `--probe`.

use super::args::*;
use super::dns::*;
use crate::ping::ping_relay;
use anyhow::{anyhow, bail, Result};
use directory::probe::{Ping, CLIENT_CALLSIGN};
use hickory_proto::rr::{Name, RData, RecordType};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;

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

pub(super) async fn servers(a: ServersArgs) -> Result<ExitCode> {
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

    let mut lookups = Vec::new();
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
        let probe = a.probe && online;
        lookups.push(inspect(&dns, e, online, probe, a.telnet_port));
    }
    // Every lookup runs concurrently (in this task); the reports come in SRV order.
    let reports = futures_util::future::join_all(lookups).await;
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
                Err(anyhow!("no telnet port (SRV port + 1 overflows)")),
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
        last.unwrap_or((SocketAddr::new(first, port), Err(anyhow!("no address"))))
    };
    let ((taddr, pilots), (addr, rtt)) = tokio::join!(telnet, ping);
    p.telnet = taddr;
    match pilots {
        Ok(n) => p.pilots = Some(n),
        Err(e) => p.telnet_error = Some(e.to_string()),
    }
    p.address = Some(addr);
    match rtt {
        Ok(d) => p.rtt_ms = Some(d.as_secs_f64() * 1000.0),
        Err(e) => p.ping_error = Some(e.to_string()),
    }
    p
}

/// fgms's health check: a 32-byte ping (MsgId 9), answered by the same datagram with
/// MsgId 10 (the directory's prober sends the same, with another callsign).
async fn ping(addr: SocketAddr, timeout: Duration) -> Result<Duration> {
    let ping = Ping::new(CLIENT_CALLSIGN)?;
    Ok(ping_relay(&ping, addr, timeout).await?)
}

/// Reads fgms's telnet list up to the `# N pilot(s) online` line.
async fn pilot_count(addr: SocketAddr, timeout: Duration) -> Result<u64> {
    let work = async {
        let s = TcpStream::connect(addr)
            .await
            .map_err(|e| anyhow!("telnet {addr}: {e}"))?;
        // The count is in the first lines; never read more than 64 KiB.
        let mut r = BufReader::new(s.take(64 * 1024));
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = r
                .read_until(b'\n', &mut line)
                .await
                .map_err(|e| anyhow!("telnet {addr}: {e}"))?;
            if n == 0 {
                bail!("telnet {addr}: no \"# N pilot(s) online\" line in the output");
            }
            let text = String::from_utf8_lossy(&line);
            if let Some(n) = parse_pilots(&text) {
                return Ok(n);
            }
        }
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(anyhow!(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pilot_line() {
        assert_eq!(parse_pilots("# 2 pilot(s) online\n"), Some(2));
        assert_eq!(parse_pilots("# 0 pilot(s) online\r\n"), Some(0));
        assert_eq!(parse_pilots("# This is lobby"), None);
        assert_eq!(parse_pilots("# x pilot(s) online"), None);
        assert_eq!(parse_pilots("#"), None);
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
