//! The flags of `lobby fg` and how they are checked.

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use hickory_proto::rr::Name;
use std::net::SocketAddr;

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
    /// The DNS options (nameserver, timeout, JSON output).
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
    /// The DNS options (nameserver, timeout, JSON output).
    #[command(flatten)]
    pub dns: DnsOpts,
}

fn parse_nameserver(s: &str) -> Result<SocketAddr> {
    udp::addr::parse_literal(s, 53).ok_or_else(|| {
        anyhow!(
            "{:?} is not a nameserver address (IP, IP:PORT or [IPv6]:PORT)",
            s.trim()
        )
    })
}

fn parse_seconds(s: &str) -> Result<f64> {
    Ok(config::parse_seconds(s, 3600.0)?)
}

/// A domain name, returned without its trailing dot.
fn parse_domain(s: &str) -> Result<String> {
    let d = s.trim().trim_end_matches('.');
    if d.is_empty() {
        bail!("the domain is empty");
    }
    Name::from_ascii(format!("{d}.")).map_err(|e| anyhow!("{s:?} is not a domain name: {e}"))?;
    Ok(d.to_string())
}

fn parse_label(s: &str) -> Result<String> {
    let l = s.trim().trim_start_matches('_');
    if l.is_empty() || l.len() > 62 || !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        bail!("{s:?} is not an SRV label (letters, digits and '-', without the underscore)");
    }
    Ok(l.to_string())
}

fn parse_service(s: &str) -> Result<String> {
    if s.is_empty() || s.len() > 255 || s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        bail!("{s:?} is not a NAPTR service");
    }
    Ok(s.to_string())
}

fn parse_nonempty(s: &str) -> Result<String> {
    if s.trim().is_empty() {
        bail!("the value is empty");
    }
    Ok(s.to_string())
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
}
