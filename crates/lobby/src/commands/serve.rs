//! The serving commands: `lobby up`, `relay`, `master` and `dns`. Each resolves its
//! configuration (TOML file, then flags), starts its parts under one [`Supervisor`],
//! serves until SIGTERM/SIGINT (SIGHUP reloads the configuration and keeps all state)
//! or until a part fails, then stops everything through the same supervisor.

use crate::http::server::HttpServer;
use crate::http::sources::Sources;
use crate::lifecycle::{Signal, Signals, Supervisor};
use crate::services::dns::DnsServer;
use crate::services::master::MasterServer;
use crate::services::relay::RelayServer;
use crate::services::sim::{Fleet, FleetSpec};
use crate::udp_worker::{Replies, Workers};
use anyhow::{Context, Result};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

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
    fn resolve(&self) -> Result<config::File> {
        let mut f = match &self.config {
            Some(p) => config::load(p)?,
            None => config::File::default(),
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
            f.tracker.relay.push(config::TrackerRelay {
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
    /// The relay's configuration: the file's `[relay]` and `[http]` limits, then
    /// fgms.conf, then these flags; HTTP listens only where `--http` says.
    fn resolve(&self) -> Result<config::File> {
        let file = match &self.config {
            Some(p) => config::load(p)?,
            None => config::File::default(),
        };
        let mut http = file.http;
        http.listen = self.http.clone();
        Ok(config::File {
            relay: self.resolve_relay(file.relay)?,
            http,
            history: file.history,
            admin: file.admin,
            ..config::File::default()
        })
    }

    /// The `[relay]` settings: TOML file, then fgms.conf, then these flags.
    fn resolve_relay(&self, mut r: config::RelaySection) -> Result<config::RelaySection> {
        if let Some(p) = &self.fgms_config {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read fgms config {}", p.display()))?;
            let parsed = config::fgms_conf::apply(&text, &p.display().to_string(), &mut r)?;
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

/// Which parts a command runs (the flight log runs wherever `[history]` names a
/// database).
#[derive(Clone, Copy)]
struct Parts {
    relay: bool,
    master: bool,
    dns: bool,
    http: bool,
    sim: bool,
    tracker: bool,
}

/// Every part running in this process, and the supervisor that runs them.
struct Backbone {
    sup: Supervisor,
    relay: Option<RelayServer>,
    master: Option<MasterServer>,
    dns: Option<DnsServer>,
    http: Option<HttpServer>,
    sim: Option<Fleet>,
    tracker: Option<crate::services::tracker::server::TrackerServer>,
    history: Option<crate::services::history::History>,
}

impl Backbone {
    /// Checks every section, then starts the chosen parts in dependency order (the
    /// directory publishes the relay; HTTP reads the master, relay and directory; the
    /// simulated servers register with the master).
    async fn start(
        f: &config::File,
        parts: Parts,
        admin: &Arc<crate::http::admin::control::Admin>,
    ) -> Result<Backbone> {
        let relay_cfg = parts.relay.then(|| f.relay.engine_config()).transpose()?;
        let master_cfg = parts.master.then(|| f.master.engine_config()).transpose()?;
        let sup = Supervisor::new();
        let ready = crate::lifecycle::Readiness::default();
        let http_addrs = f.http.listen_addrs()?;
        if parts.http && !http_addrs.is_empty() {
            // Before the parts start, so that their workers' histograms record.
            crate::recorder::install();
        }
        let history = match f.history.options()? {
            Some(o) => Some(crate::services::history::History::start(&sup, o).await?),
            None => None,
        };
        let relay = match relay_cfg {
            Some(cfg) => Some(start_relay(&sup, f, cfg, history.as_ref()).await?),
            None => None,
        };
        if let Some(r) = &relay {
            admin.attach_relay(r.control(), sup.tasks("admin"));
        }
        let master = match master_cfg {
            Some(cfg) => Some(start_master(&sup, f, cfg)?),
            None => None,
        };
        if let (Some(h), Some(m), Some(o)) = (&history, &master, f.history.options()?) {
            h.sample_servers(
                &sup,
                m.engine().clone(),
                m.names().cloned(),
                o.server_sample_interval,
            );
        }
        let tracker_listen = f.tracker.listen_addrs()?;
        let tracker = if parts.tracker && !tracker_listen.is_empty() {
            Some(crate::services::tracker::server::TrackerServer::start(
                &sup,
                &tracker_listen,
                f.tracker.allowed()?,
                history.clone(),
            )?)
        } else {
            None
        };
        let dns = match parts.dns {
            true => Some(
                DnsServer::start(
                    &sup,
                    &f.dns,
                    &f.directory,
                    published_relay(f, relay.as_ref()),
                )
                .await?,
            ),
            false => None,
        };
        for (part, on) in [
            ("relay", relay.is_some()),
            ("master", master.is_some()),
            ("dns", dns.is_some()),
            ("tracker", tracker.is_some()),
            ("history", history.is_some()),
        ] {
            if on {
                ready.set(part, Ok(())); // bound, and (dns) probed once
            }
        }
        let sim_wanted = master.is_some() && parts.sim && f.sim.count > 0;
        if sim_wanted {
            ready.set("sim", Err("starting".into()));
        }
        let http_limits = f.http.limits()?;
        let http = if parts.http && !http_addrs.is_empty() {
            let sources = Sources {
                master: master.as_ref().map(|m| m.engine().clone()),
                relay: relay.as_ref().map(|r| r.engine().clone()),
                directory: dns.as_ref().map(|d| d.directory.clone()),
                restarts: Some(sup.restart_counts()),
                peers: relay.as_ref().map(|r| r.peers().clone()),
                names: master.as_ref().and_then(|m| m.names().cloned()),
                history: history.clone(),
                tracker: tracker.as_ref().map(|t| t.stats.clone()),
                ready: ready.clone(),
            };
            let h = HttpServer::start(&sup, &http_addrs, http_limits, sources, Some(admin.clone()))
                .await?;
            ready.set("http", Ok(()));
            Some(h)
        } else {
            None
        };
        let sim = match (&master, sim_wanted) {
            (Some(m), true) => {
                let fleet = start_sim(&sup, f, m).await?;
                ready.set("sim", Ok(()));
                Some(fleet)
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
            sup,
            relay,
            master,
            dns,
            http,
            sim,
            tracker,
            history,
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
            r.control().reconfigure(c, peer_options(f)?);
        }
        if let (Some(m), Some(c)) = (&self.master, master_cfg) {
            m.reconfigure(c);
        }
        Ok(())
    }

    /// Stops every part (the simulated servers say goodbye to the master first, while
    /// it still listens), then saves the master's state once.
    async fn shutdown(self) -> Result<()> {
        self.sup.shutdown().await;
        drop((
            self.sim,
            self.http,
            self.relay,
            self.dns,
            self.tracker,
            self.history,
        ));
        if let Some(m) = self.master {
            tokio::task::spawn_blocking(move || m.final_save()).await??;
        }
        Ok(())
    }
}

fn peer_options(f: &config::File) -> Result<config::PeerOptions> {
    Ok(config::PeerOptions {
        names: f.relay.peer_names()?,
        refresh: f.relay.peer_refresh()?,
    })
}

async fn start_relay(
    sup: &Supervisor,
    f: &config::File,
    cfg: relay::Config,
    history: Option<&crate::services::history::History>,
) -> Result<RelayServer> {
    let workers = Workers {
        per_addr: f.relay.workers(),
        realtime_priority: f.relay.realtime_priority,
        // Every datagram: the copies sent for it.
        replies: Replies::new(crate::recorder::RELAY_FANOUT, |_| true),
    };
    RelayServer::start(
        sup,
        cfg,
        peer_options(f)?,
        &f.relay.listen_addrs()?,
        f.relay.telnet_options()?,
        workers,
        crate::services::relay::Recorders {
            tracker: f.relay.tracker_options()?,
            feeds: history
                .map(|h| vec![h.feed(sup, f.relay.name.clone())])
                .unwrap_or_default(),
        },
    )
    .await
}

fn start_master(sup: &Supervisor, f: &config::File, cfg: master::Config) -> Result<MasterServer> {
    let state = (!f.master.state_file.is_empty()).then(|| PathBuf::from(&f.master.state_file));
    MasterServer::start(
        sup,
        cfg,
        &f.master.listen_addrs()?,
        f.master.workers(),
        state,
        Duration::from_secs_f64(f.master.save_interval),
        f.master.name_refresh()?,
    )
}

/// The local relay the directory publishes (`lobby up`): its first IPv4 address, a
/// wildcard bind shown as loopback.
fn published_relay(f: &config::File, relay: Option<&RelayServer>) -> Option<(SocketAddr, String)> {
    let r = relay?;
    let a = r
        .udp_addrs()
        .iter()
        .find(|a| a.is_ipv4())
        .or(r.udp_addrs().first())?;
    let ip = if a.ip().is_unspecified() {
        IpAddr::from([127, 0, 0, 1])
    } else {
        a.ip()
    };
    Some((SocketAddr::new(ip, a.port()), f.relay.name.clone()))
}

async fn start_sim(sup: &Supervisor, f: &config::File, master: &MasterServer) -> Result<Fleet> {
    let masters: Vec<SocketAddr> = master
        .udp_addrs()
        .iter()
        .filter(|a| a.is_ipv4())
        .copied()
        .collect();
    let spec = FleetSpec {
        count: f.sim.count,
        seed: f.sim.seed,
        masters,
        listen_ip: f
            .sim
            .listen_ip
            .parse()
            .with_context(|| format!("sim.listen_ip {:?} is not an IP", f.sim.listen_ip))?,
        gamedir: f.sim.gamedir.clone(),
        nat_allow_private: true,
        ..FleetSpec::default()
    };
    Fleet::start(sup, spec).await
}

/// Starts `parts` from the configuration `read` returns, serves until SIGTERM or
/// Ctrl-C (or a part fails), and re-reads the configuration on SIGHUP, keeping all
/// state. Exit status: 0 after a signal, 1 when a part failed.
async fn serve(parts: Parts, read: impl Fn() -> Result<config::File>) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let file = read()?;
    let admin = crate::http::admin::control::Admin::load(&file)?;
    let backbone = Backbone::start(&admin.effective(), parts, &admin).await?;
    tracing::info!("serving; SIGHUP reloads the configuration, SIGTERM stops");
    let code = loop {
        let signal = tokio::select! {
            s = signals.next() => s,
            f = backbone.sup.failed() => {
                tracing::error!(part = %f.part, reason = %f.reason, "part failed; stopping");
                eprintln!("lobby: error: part {} failed: {}", f.part, f.reason);
                break ExitCode::from(1);
            }
        };
        match signal {
            Signal::Stop => break ExitCode::SUCCESS,
            Signal::Reload => match reload(&admin, &backbone, &read).await {
                Ok(()) => tracing::info!(
                    "configuration reloaded; state kept (listen addresses apply at restart)"
                ),
                Err(e) => {
                    tracing::error!("reload failed, keeping the running configuration: {e:#}")
                }
            },
        }
    };
    tracing::info!("stopping");
    backbone.shutdown().await?;
    Ok(code)
}

/// Re-reads the configuration and applies it with the admin API's run-time changes
/// over it (`http::admin`).
async fn reload(
    admin: &crate::http::admin::control::Admin,
    backbone: &Backbone,
    read: &impl Fn() -> Result<config::File>,
) -> Result<()> {
    let f = read()?;
    admin
        .reload(f, |effective| backbone.reload(effective))
        .await
}

/// `lobby relay`.
pub async fn run_relay(args: RelayArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: true,
        master: false,
        dns: false,
        http: true,
        sim: false,
        tracker: false,
    };
    serve(parts, move || args.resolve()).await
}

/// `lobby master`.
pub async fn run_master(args: MasterArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: false,
        master: true,
        dns: false,
        http: true,
        sim: false,
        tracker: false,
    };
    serve(parts, move || args.resolve()).await
}

/// `lobby dns`.
pub async fn run_dns(args: DnsArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: false,
        master: false,
        dns: true,
        http: true,
        sim: false,
        tracker: false,
    };
    serve(parts, move || args.resolve()).await
}

/// `lobby tracker`.
pub async fn run_tracker(args: TrackerArgs) -> Result<ExitCode> {
    let parts = Parts {
        relay: false,
        master: false,
        dns: false,
        http: true,
        sim: false,
        tracker: true,
    };
    serve(parts, move || args.resolve()).await
}

/// `lobby up`.
pub async fn run_up(path: Option<PathBuf>) -> Result<ExitCode> {
    let parts = Parts {
        relay: true,
        master: true,
        dns: true,
        http: true,
        sim: true,
        tracker: true,
    };
    serve(parts, move || match &path {
        Some(p) => config::load(p),
        None => config::parse(config::EMBEDDED_DEFAULT, "embedded default"),
    })
    .await
}
