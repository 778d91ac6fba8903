//! The resolver both commands use, and how its failures read.

use super::args::*;
use anyhow::{anyhow, Result};
use hickory_proto::rr::{Name, RecordType};
use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::lookup::Lookup;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::TokioResolver;
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

/// Why a lookup failed, in words an operator can act on.
#[derive(Debug, Clone)]
pub(super) enum LookupError {
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
    pub(super) fn from_net(e: &NetError, timeout: Duration) -> LookupError {
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
pub(super) struct Dns {
    pub(super) resolver: TokioResolver,
    pub(super) timeout: Duration,
    /// `127.0.0.1:5353` or `the system resolver (...)`.
    pub(super) label: String,
}

impl Dns {
    pub(super) fn new(opts: &DnsOpts) -> Result<Dns> {
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
                    .map_err(|e| anyhow!("cannot read the system resolver configuration: {e}"))?;
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
            .map_err(|e| anyhow!("cannot set up the DNS resolver: {e}"))?;
        Ok(Dns {
            resolver,
            timeout,
            label,
        })
    }

    /// One lookup, bounded by the timeout as SimGear bounds each request.
    pub(super) async fn lookup(
        &self,
        fqdn: &str,
        rtype: RecordType,
    ) -> Result<Lookup, LookupError> {
        let name = Name::from_ascii(fqdn)
            .map_err(|e| LookupError::Other(format!("invalid name {fqdn:?}: {e}")))?;
        match tokio::time::timeout(self.timeout, self.resolver.lookup(name, rtype)).await {
            Err(_) => Err(LookupError::Timeout(self.timeout)),
            Ok(Err(e)) => Err(LookupError::from_net(&e, self.timeout)),
            Ok(Ok(l)) => Ok(l),
        }
    }

    /// A and AAAA of a host.
    pub(super) async fn addresses(&self, fqdn: &str) -> Result<Vec<IpAddr>, LookupError> {
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
pub(super) fn display_name(n: &Name) -> String {
    let s = n.to_ascii();
    match s.strip_suffix('.') {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => s,
    }
}

/// Makes text from DNS safe for a terminal: control characters escaped.
pub(super) fn printable(s: &str) -> String {
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

pub(super) fn warn(msg: &str) {
    eprintln!("warning: {}", printable(msg));
}
