//! The flags of the serving commands (`lobby relay`, `master`, `dns`, `tracker`):
//! the last layer over the TOML file and fgms.conf. Each `resolve` reads the files
//! it names and applies itself over them, giving the [`crate::File`] the command runs.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

/// Flags of `lobby relay`; each overrides the configuration files.
#[derive(Args, Debug, Default, Clone)]
pub struct RelayArgs {
    /// TOML configuration file (its `[relay]` table).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// An existing fgms.conf to read (applied after --config).
    #[arg(long, value_name = "FILE")]
    fgms_config: Option<PathBuf>,
    /// UDP address to listen on; repeat for several (default 0.0.0.0:5000 and [::]:5000).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<String>,
    /// TCP address for the telnet pilot list; repeat for several; "off" disables.
    #[arg(long, value_name = "ADDR:PORT")]
    telnet: Vec<String>,
    /// Server name on the telnet list.
    #[arg(long)]
    name: Option<String>,
    /// Another relay to exchange traffic with (HOST:PORT); repeat for several.
    #[arg(long = "relay", value_name = "HOST:PORT")]
    relays: Vec<String>,
    /// Hub mode: re-forward relay traffic to the other relays.
    #[arg(long)]
    hub: bool,
    /// Crossfeed target that gets a copy of every valid datagram; repeatable.
    #[arg(long = "crossfeed", value_name = "HOST:PORT")]
    crossfeeds: Vec<String>,
    /// IP or CIDR allowed to send relay traffic without being a relay; repeatable.
    #[arg(long, value_name = "IP[/LEN]")]
    whitelist: Vec<String>,
    /// IP or CIDR whose traffic is dropped; repeatable.
    #[arg(long, value_name = "IP[/LEN]")]
    blacklist: Vec<String>,
    /// Default receive range in nm when a client requests none (default 100).
    #[arg(long, value_name = "NM")]
    out_of_reach: Option<f64>,
    /// Largest range a client may request, nm (default 2000).
    #[arg(long, value_name = "NM")]
    max_radar_range: Option<f64>,
    /// Seconds of silence before a pilot is dropped (default 10).
    #[arg(long, value_name = "SECONDS")]
    player_expiry: Option<f64>,
    /// Most pilots held at once (default 50000).
    #[arg(long, value_name = "N")]
    max_pilots: Option<usize>,
    /// Most local pilots per source IPv4 address or IPv6 /64 (default 16); a new
    /// callsign from a socket that already has a pilot replaces that pilot.
    #[arg(long, value_name = "N")]
    max_pilots_per_ip: Option<usize>,
    /// Bytes sent to a local pilot per byte it sent (default 512): what a spoofed
    /// source can make the relay send its victim. Raise it for events with more than
    /// about 500 pilots in range of each other.
    #[arg(long, value_name = "N")]
    reply_ratio: Option<u32>,
    /// Distance tiers, nearest first: every datagram within 10 nm, 2 Hz to 40 nm,
    /// 1 Hz beyond is "full@10,2hz@40,1hz" (the default); "off" sends every
    /// datagram to every pilot in range, as fgms.
    #[arg(long, value_name = "TIERS")]
    tiers: Option<String>,
    /// Receive threads per UDP address, sharing the port (default: one per CPU core).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Run the UDP workers under SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE):
    /// lower tail latency on a busy machine. 0 = normal scheduling (default).
    #[arg(long, value_name = "PRIO")]
    realtime_priority: Option<u8>,
    /// Report pilots to this tracker (HOST:PORT), as fgms's `server.tracked`.
    #[arg(long, value_name = "HOST:PORT")]
    tracker: Option<String>,
    /// TCP address for HTTP (the pilot API, `/metrics`, `/stats`, the web page);
    /// repeatable. Only this flag starts it (a shared lobby.toml's `[http] listen`
    /// belongs to the master); the file's `[http]` limits apply.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Vec<String>,
}

/// Flags of `lobby tracker`; each overrides the configuration file.
#[derive(Args, Debug, Default, Clone)]
pub struct TrackerArgs {
    /// TOML configuration file (its `[tracker]`, `[history]` and `[http]` tables).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// TCP address to accept relays on; repeatable (default 0.0.0.0:8000 and [::]:8000).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<String>,
    /// A relay allowed to report, NAME=IP[/LEN]; repeatable (adds to `[[tracker.relay]]`).
    #[arg(long, value_name = "NAME=IP[/LEN]")]
    allow: Vec<String>,
    /// The flight log: sqlite:PATH or postgres://USER@HOST/DB.
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// TCP address for HTTP (the flight log's API); repeatable.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Vec<String>,
}

impl TrackerArgs {
    /// The configuration these flags give: the files they name, then the flags.
    pub fn resolve(&self) -> Result<crate::File> {
        let mut f = match &self.config {
            Some(p) => crate::load(p)?,
            None => crate::File::default(),
        };
        if f.tracker.listen.is_empty() {
            f.tracker.listen = vec!["0.0.0.0:8000".into(), "[::]:8000".into()];
        }
        if !self.listen.is_empty() {
            f.tracker.listen = self.listen.clone();
        }
        for a in &self.allow {
            let (name, address) = a
                .split_once('=')
                .with_context(|| format!("--allow {a:?}: expected NAME=IP[/LEN]"))?;
            f.tracker.relay.push(crate::TrackerRelay {
                name: name.to_string(),
                address: address.to_string(),
                // Kept off the command line: `[[tracker.relay]] secret`.
                secret: String::new(),
            });
        }
        if let Some(u) = &self.database_url {
            f.history.database_url = u.clone();
        }
        if !self.http.is_empty() {
            f.http.listen = self.http.clone();
        }
        Ok(f)
    }
}

/// Flags of `lobby master`; each overrides the configuration file.
#[derive(Args, Debug, Default, Clone)]
pub struct MasterArgs {
    /// TOML configuration file (its `[master]` and `[http]` tables).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP address to listen on; repeat for several (default 0.0.0.0:27010 and [::]:27010).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<String>,
    /// TCP address for the HTTP server list (`/v1/servers/<gamedir>`); repeatable.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Vec<String>,
    /// State file: servers and bans survive restarts (saved atomically). A server
    /// list `state.json` (probe.py's) is imported: every last answer is kept.
    #[arg(long, value_name = "FILE")]
    state: Option<String>,
    /// Seconds a server stays listed after its last valid info (default 900).
    #[arg(long, value_name = "SECONDS")]
    server_ttl: Option<f64>,
    /// Servers per IPv4 address / IPv6 /64 (default 32).
    #[arg(long, value_name = "N")]
    max_servers_per_source: Option<usize>,
    /// Servers in all (default 32768).
    #[arg(long, value_name = "N")]
    max_servers: Option<usize>,
    /// Largest server-list datagram in bytes (default 1400).
    #[arg(long, value_name = "BYTES")]
    page_size: Option<usize>,
    /// "Please update" address for outdated IPv4 clients (default: the master's own).
    #[arg(long, value_name = "HOST:PORT")]
    update_addr: Option<String>,
    /// Requests a client may burst before it is throttled (default 8).
    #[arg(long, value_name = "N")]
    rate_burst: Option<f64>,
    /// Seconds for one request of allowance to come back (default 1).
    #[arg(long, value_name = "SECONDS")]
    rate_decay: Option<f64>,
    /// Receive threads per UDP address (default: one per CPU core).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Curated sources: a directory of `<gamedir>.toml` files in FWGS/server-list's
    /// format (a checkout's `servers/`), probed and published on `/v1/servers/<gamedir>`.
    #[arg(long, value_name = "DIR")]
    sources: Option<String>,
    /// Seconds a silent server stays published after its last answer (default 172800).
    #[arg(long, value_name = "SECONDS")]
    grace: Option<f64>,
    /// Seconds between probes of each listed address (default 60).
    #[arg(long, value_name = "SECONDS")]
    probe_interval: Option<f64>,
}

/// Flags of `lobby dns`; each overrides the configuration file.
#[derive(Args, Debug, Default, Clone)]
pub struct DnsArgs {
    /// TOML configuration file (its `[dns]`, `[directory]` and `[http]` tables).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP+TCP address to serve the zone on; repeatable; "off" serves nothing (push only).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<String>,
    /// The zone, e.g. fg.example.org.
    #[arg(long, value_name = "NAME")]
    zone: Option<String>,
    /// Push mode: send RFC 2136 updates to this primary server (IP[:PORT]).
    #[arg(long, value_name = "SERVER")]
    push: Option<String>,
    /// TSIG key name for push mode.
    #[arg(long, value_name = "NAME")]
    tsig_key_name: Option<String>,
    /// TSIG algorithm (hmac-sha256, hmac-sha384, hmac-sha512).
    #[arg(long, value_name = "ALG")]
    tsig_algorithm: Option<String>,
    /// File holding the base64 TSIG secret (kept off the command line).
    #[arg(long, value_name = "FILE")]
    tsig_secret_file: Option<PathBuf>,
    /// TCP address for HTTP (`/mpservers.xml`); repeatable.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Vec<String>,
    /// Seconds between relay health probes.
    #[arg(long, value_name = "SECONDS")]
    probe_interval: Option<f64>,
    /// Failed probes in a row before a relay's SRV port becomes 0.
    #[arg(long, value_name = "N")]
    fall: Option<u32>,
    /// Good probes in a row before it comes back.
    #[arg(long, value_name = "N")]
    rise: Option<u32>,
}

impl DnsArgs {
    /// The configuration these flags give: the files they name, then the flags.
    pub fn resolve(&self) -> Result<crate::File> {
        let mut f = match &self.config {
            Some(p) => crate::load(p)?,
            None => crate::File::default(),
        };
        if !self.listen.is_empty() {
            f.dns.listen = self
                .listen
                .iter()
                .filter(|l| *l != "off")
                .cloned()
                .collect();
        }
        if let Some(z) = &self.zone {
            f.dns.zone = z.clone();
        }
        if let Some(p) = &self.push {
            f.dns.push = p.clone();
        }
        if let Some(v) = &self.tsig_key_name {
            f.dns.tsig_key_name = v.clone();
        }
        if let Some(v) = &self.tsig_algorithm {
            f.dns.tsig_algorithm = v.clone();
        }
        if let Some(p) = &self.tsig_secret_file {
            f.dns.tsig_secret = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read TSIG secret file {}", p.display()))?
                .trim()
                .to_string();
        }
        if !self.http.is_empty() {
            f.http.listen = self.http.clone();
        }
        if let Some(v) = self.probe_interval {
            f.directory.probe_interval = v;
        }
        if let Some(v) = self.fall {
            f.directory.fall = v;
        }
        if let Some(v) = self.rise {
            f.directory.rise = v;
        }
        Ok(f)
    }
}

impl MasterArgs {
    /// The configuration these flags give: the files they name, then the flags.
    pub fn resolve(&self) -> Result<crate::File> {
        let mut f = match &self.config {
            Some(p) => crate::load(p)?,
            None => crate::File::default(),
        };
        let m = &mut f.master;
        if !self.listen.is_empty() {
            m.listen = self.listen.clone();
        }
        if !self.http.is_empty() {
            f.http.listen = self.http.clone();
        }
        if let Some(v) = &self.state {
            m.state_file = v.clone();
        }
        if let Some(v) = self.server_ttl {
            m.server_ttl = v;
        }
        if let Some(v) = self.max_servers_per_source {
            m.max_servers_per_source = v;
        }
        if let Some(v) = self.max_servers {
            m.max_servers = v;
        }
        if let Some(v) = self.page_size {
            m.page_size = v;
        }
        if let Some(v) = &self.update_addr {
            m.update_addr = v.clone();
        }
        if let Some(v) = self.rate_burst {
            m.rate_burst = v;
        }
        if let Some(v) = self.rate_decay {
            m.rate_decay = v;
        }
        if let Some(v) = self.workers {
            m.workers = v;
        }
        if let Some(v) = &self.sources {
            m.sources = v.clone();
        }
        if let Some(v) = self.grace {
            m.grace = v;
        }
        if let Some(v) = self.probe_interval {
            m.probe_interval = v;
        }
        Ok(f)
    }
}

impl RelayArgs {
    /// The relay's configuration: the file's `[relay]` and `[http]` limits, then
    /// fgms.conf, then these flags; HTTP listens only where `--http` says.
    /// The configuration these flags give: the files they name, then the flags.
    pub fn resolve(&self) -> Result<crate::File> {
        let file = match &self.config {
            Some(p) => crate::load(p)?,
            None => crate::File::default(),
        };
        let mut http = file.http;
        http.listen = self.http.clone();
        Ok(crate::File {
            relay: self.resolve_relay(file.relay)?,
            http,
            history: file.history,
            admin: file.admin,
            ..crate::File::default()
        })
    }

    /// The `[relay]` settings: TOML file, then fgms.conf, then these flags.
    fn resolve_relay(&self, mut r: crate::RelaySection) -> Result<crate::RelaySection> {
        if let Some(p) = &self.fgms_config {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read fgms config {}", p.display()))?;
            let parsed = crate::fgms_conf::apply(&text, &p.display().to_string(), &mut r)?;
            for k in parsed.ignored {
                tracing::warn!(key = %k, "fgms option has no effect in lobby");
            }
        }
        if !self.listen.is_empty() {
            r.listen = self.listen.clone();
        }
        if !self.telnet.is_empty() {
            r.telnet = self
                .telnet
                .iter()
                .filter(|t| *t != "off")
                .cloned()
                .collect();
        }
        if let Some(n) = &self.name {
            r.name = n.clone();
        }
        r.relays.extend(self.relays.iter().cloned());
        r.hub |= self.hub;
        r.crossfeeds.extend(self.crossfeeds.iter().cloned());
        r.whitelist.extend(self.whitelist.iter().cloned());
        r.blacklist.extend(self.blacklist.iter().cloned());
        if let Some(v) = self.out_of_reach {
            r.out_of_reach = v;
        }
        if let Some(v) = self.max_radar_range {
            r.max_radar_range = v;
        }
        if let Some(v) = self.player_expiry {
            r.player_expiry = v;
        }
        if let Some(v) = self.max_pilots {
            r.max_pilots = v;
        }
        if let Some(v) = self.max_pilots_per_ip {
            r.max_pilots_per_ip = v;
        }
        if let Some(v) = self.reply_ratio {
            r.reply_ratio = v;
        }
        if let Some(v) = &self.tiers {
            r.tiers = crate::TiersSetting::Text(v.clone());
        }
        if let Some(v) = self.workers {
            r.workers = v;
        }
        if let Some(v) = self.realtime_priority {
            r.realtime_priority = v;
        }
        if let Some(v) = &self.tracker {
            r.tracker = v.clone();
        }
        Ok(r)
    }
}
