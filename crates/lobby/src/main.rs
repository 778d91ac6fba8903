//! `lobby`: the multiplayer backbone for FlightGear and Xash3D FWGS.

mod admin_client;
mod config;
mod dns_server;
mod fg_cmd;
mod fgms_conf;
mod http;
mod load;
mod master_server;
mod query_cmd;
mod relay_server;
mod sim_cmd;
mod udp_batch;
mod udp_service;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// The multiplayer backbone for FlightGear and Xash3D FWGS.
#[derive(Parser, Debug)]
#[command(name = "lobby", version, about, long_about = None)]
struct Cli {
    /// More log output on standard error (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start the whole backbone on loopback with the embedded default configuration.
    Up {
        /// TOML configuration file to use instead of the embedded defaults.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run the FlightGear relay (a drop-in for fgms).
    Relay(RelayArgs),
    /// Run the Xash3D master server (UDP, IPv4 and IPv6, plus the HTTP server list).
    Master(MasterArgs),
    /// Run the directory: probe relays, serve the zone (SRV/TXT/NAPTR) or push it (RFC 2136).
    Dns(DnsArgs),
    /// Run simulated Xash3D servers registered with masters (for tests, demos and load).
    Sim(sim_cmd::SimArgs),
    /// Send an authenticated admin command (ban, unban, list) to a master.
    MasterAdmin(admin_client::AdminArgs),
    /// Query game servers and masters (info, players, rules, ping, connect, master scans).
    #[command(subcommand)]
    Query(query_cmd::QueryCommand),
    /// Generate load against a server and measure it.
    #[command(subcommand)]
    Load(load::LoadCommand),
    /// FlightGear discovery: relays (SRV/TXT) and TerraSync servers (NAPTR), as FlightGear resolves them.
    #[command(subcommand)]
    Fg(fg_cmd::FgCommand),
}

/// Flags of `lobby relay`; each overrides the configuration files.
#[derive(Args, Debug, Default, Clone)]
struct RelayArgs {
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
    /// Receive threads per UDP address, sharing the port (default: one per CPU core).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Run the UDP workers under SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE):
    /// lower tail latency on a busy machine. 0 = normal scheduling (default).
    #[arg(long, value_name = "PRIO")]
    realtime_priority: Option<u8>,
}

/// Flags of `lobby master`; each overrides the configuration file.
#[derive(Args, Debug, Default, Clone)]
struct MasterArgs {
    /// TOML configuration file (its `[master]` and `[http]` tables).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP address to listen on; repeat for several (default 0.0.0.0:27010 and [::]:27010).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Vec<String>,
    /// TCP address for the HTTP server list (`/v1/servers/<gamedir>`); repeatable.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Vec<String>,
    /// State file: servers and bans survive restarts (saved atomically).
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
}

/// Flags of `lobby dns`; each overrides the configuration file.
#[derive(Args, Debug, Default, Clone)]
struct DnsArgs {
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
    fn resolve(&self) -> Result<config::File> {
        let mut f = match &self.config {
            Some(p) => config::load(p)?,
            None => config::File::default(),
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
    fn resolve(&self) -> Result<config::File> {
        let mut f = match &self.config {
            Some(p) => config::load(p)?,
            None => config::File::default(),
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
        Ok(f)
    }
}

impl RelayArgs {
    /// The `[relay]` settings: TOML file, then fgms.conf, then these flags.
    fn resolve(&self) -> Result<config::RelaySection> {
        let mut r = match &self.config {
            Some(p) => config::load(p)?.relay,
            None => config::RelaySection::default(),
        };
        if let Some(p) = &self.fgms_config {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read fgms config {}", p.display()))?;
            let parsed = fgms_conf::apply(&text, &p.display().to_string(), &mut r)?;
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
        if let Some(v) = self.workers {
            r.workers = v;
        }
        if let Some(v) = self.realtime_priority {
            r.realtime_priority = v;
        }
        Ok(r)
    }
}

/// Prints the stable `listening <part> <proto> <addr:port>` line on standard output.
pub fn listening(part: &str, proto: &str, addr: SocketAddr) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening {part} {proto} {addr}");
    let _ = out.flush();
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lobby: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = rt.block_on(async move {
        match cli.command {
            Command::Up { config } => run_up(config).await,
            Command::Relay(args) => run_relay(args).await,
            Command::Master(args) => run_master(args).await,
            Command::Dns(args) => run_dns(args).await,
            Command::Sim(args) => sim_cmd::run(args).await,
            Command::MasterAdmin(args) => {
                tokio::task::spawn_blocking(move || admin_client::run(args)).await?
            }
            Command::Load(cmd) => load::run(cmd).await,
            Command::Query(cmd) => query_cmd::run(cmd).await,
            Command::Fg(cmd) => fg_cmd::run(cmd).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lobby: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// What ended the serve loop.
enum Signal {
    Stop,
    Reload,
}

/// SIGTERM, SIGINT and SIGHUP, registered before any listener is announced so a
/// signal sent right after the `listening` lines is never lost.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            term: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
            hup: signal(SignalKind::hangup()).context("cannot handle SIGHUP")?,
        })
    }

    async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::Stop,
            _ = self.int.recv() => Signal::Stop,
            _ = self.hup.recv() => Signal::Reload,
        }
    }
}

/// Which parts a command runs.
#[derive(Clone, Copy)]
struct Parts {
    relay: bool,
    master: bool,
    dns: bool,
    http: bool,
    sim: bool,
}

/// Every part running in this process.
struct Backbone {
    relay: Option<relay_server::RelayServer>,
    master: Option<master_server::MasterServer>,
    dns: Option<dns_server::DnsServer>,
    http: Option<http::HttpServer>,
    sim: Option<sim_cmd::Fleet>,
}

impl Backbone {
    async fn start(f: &config::File, parts: Parts) -> Result<Backbone> {
        // Check every section before binding anything.
        let relay_cfg = parts.relay.then(|| f.relay.engine_config()).transpose()?;
        let master_cfg = parts.master.then(|| f.master.engine_config()).transpose()?;
        let relay = match relay_cfg {
            Some(cfg) => Some(
                relay_server::RelayServer::start(
                    cfg,
                    &f.relay.listen_addrs()?,
                    &f.relay.telnet_addrs()?,
                    f.relay.workers(),
                    f.relay.realtime_priority,
                )
                .await?,
            ),
            None => None,
        };
        let master = match master_cfg {
            Some(cfg) => {
                let state =
                    (!f.master.state_file.is_empty()).then(|| PathBuf::from(&f.master.state_file));
                Some(master_server::MasterServer::start(
                    cfg,
                    &f.master.listen_addrs()?,
                    f.master.workers(),
                    state,
                    std::time::Duration::from_secs_f64(f.master.save_interval),
                )?)
            }
            None => None,
        };
        let dns = if parts.dns {
            let local = relay.as_ref().and_then(|r| {
                r.udp_addrs()
                    .iter()
                    .find(|a| a.is_ipv4())
                    .or(r.udp_addrs().first())
                    .map(|a| {
                        // A wildcard bind is probed and published on loopback.
                        let ip = if a.ip().is_unspecified() {
                            std::net::IpAddr::from([127, 0, 0, 1])
                        } else {
                            a.ip()
                        };
                        (
                            std::net::SocketAddr::new(ip, a.port()),
                            f.relay.name.clone(),
                        )
                    })
            });
            Some(dns_server::DnsServer::start(&f.dns, &f.directory, local).await?)
        } else {
            None
        };
        let http_addrs = f.http.listen_addrs()?;
        let http = if parts.http && !http_addrs.is_empty() {
            let sources = http::Sources {
                master: master.as_ref().map(|m| m.engine().clone()),
                relay: relay.as_ref().map(|r| r.engine().clone()),
                directory: dns.as_ref().map(|d| d.directory.clone()),
            };
            Some(http::HttpServer::start(&http_addrs, sources).await?)
        } else {
            None
        };
        let sim = match (&master, parts.sim && f.sim.count > 0) {
            (Some(m), true) => {
                let masters: Vec<std::net::SocketAddr> = m
                    .udp_addrs()
                    .iter()
                    .filter(|a| a.is_ipv4())
                    .copied()
                    .collect();
                let spec = sim_cmd::FleetSpec {
                    count: f.sim.count,
                    seed: f.sim.seed,
                    masters,
                    listen_ip: f.sim.listen_ip.parse().with_context(|| {
                        format!("sim.listen_ip {:?} is not an IP", f.sim.listen_ip)
                    })?,
                    gamedir: f.sim.gamedir.clone(),
                    nat_allow_private: true,
                    ..sim_cmd::FleetSpec::default()
                };
                Some(sim_cmd::Fleet::start(spec).await?)
            }
            _ => None,
        };
        tracing::info!(
            relay_udp = ?relay.as_ref().map(|r| r.udp_addrs().to_vec()),
            relay_telnet = ?relay.as_ref().map(|r| r.telnet.clone()),
            master_udp = ?master.as_ref().map(|m| m.udp_addrs().to_vec()),
            http = ?http.as_ref().map(|h| h.addrs.clone()),
            "parts started"
        );
        Ok(Backbone {
            relay,
            master,
            dns,
            http,
            sim,
        })
    }

    fn reload(&self, f: &config::File) -> Result<()> {
        let relay_cfg = self
            .relay
            .as_ref()
            .map(|_| f.relay.engine_config())
            .transpose()?;
        let master_cfg = self
            .master
            .as_ref()
            .map(|_| f.master.engine_config())
            .transpose()?;
        if let (Some(r), Some(c)) = (&self.relay, relay_cfg) {
            r.reconfigure(c);
        }
        if let (Some(m), Some(c)) = (&self.master, master_cfg) {
            m.reconfigure(c);
        }
        Ok(())
    }

    async fn shutdown(self) -> Result<()> {
        if let Some(s) = self.sim {
            s.shutdown().await;
        }
        if let Some(h) = self.http {
            h.shutdown();
        }
        if let Some(d) = self.dns {
            d.shutdown().await;
        }
        let (relay, master) = (self.relay, self.master);
        tokio::task::spawn_blocking(move || -> Result<()> {
            if let Some(r) = relay {
                r.shutdown();
            }
            if let Some(m) = master {
                m.shutdown()?;
            }
            Ok(())
        })
        .await??;
        Ok(())
    }
}

/// Starts `parts` from the configuration `read` returns, serves until SIGTERM or
/// Ctrl-C, and re-reads the configuration on SIGHUP, keeping all state.
async fn serve(parts: Parts, read: impl Fn() -> Result<config::File>) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let file = read()?;
    let backbone = Backbone::start(&file, parts).await?;
    tracing::info!("serving; SIGHUP reloads the configuration, SIGTERM stops");
    loop {
        match signals.next().await {
            Signal::Stop => break,
            Signal::Reload => match read().and_then(|f| backbone.reload(&f)) {
                Ok(()) => tracing::info!(
                    "configuration reloaded; state kept (listen addresses apply at restart)"
                ),
                Err(e) => {
                    tracing::error!("reload failed, keeping the running configuration: {e:#}")
                }
            },
        }
    }
    tracing::info!("stopping");
    backbone.shutdown().await?;
    Ok(ExitCode::SUCCESS)
}

async fn run_relay(args: RelayArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: true,
        master: false,
        dns: false,
        http: false,
        sim: false,
    };
    serve(parts, move || {
        Ok(config::File {
            relay: args.resolve()?,
            ..config::File::default()
        })
    })
    .await
}

async fn run_master(args: MasterArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: false,
        master: true,
        dns: false,
        http: true,
        sim: false,
    };
    serve(parts, move || args.resolve()).await
}

async fn run_dns(args: DnsArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: false,
        master: false,
        dns: true,
        http: true,
        sim: false,
    };
    serve(parts, move || args.resolve()).await
}

async fn run_up(path: Option<PathBuf>) -> Result<ExitCode> {
    let parts = Parts {
        relay: true,
        master: true,
        dns: true,
        http: true,
        sim: true,
    };
    serve(parts, move || match &path {
        Some(p) => config::load(p),
        None => config::parse(config::EMBEDDED_DEFAULT, "embedded default"),
    })
    .await
}
