//! `lobby`: the multiplayer backbone for FlightGear and Xash3D FWGS.

mod config;
mod fgms_conf;
mod load;
mod relay_server;
mod udp_batch;

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
    /// Generate load against a server and measure it.
    #[command(subcommand)]
    Load(load::LoadCommand),
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
            Command::Load(cmd) => load::run(cmd).await,
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

async fn serve_relay(
    section: config::RelaySection,
    reload: impl Fn() -> Result<config::RelaySection>,
) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let engine_cfg = section.engine_config()?;
    let server = relay_server::RelayServer::start(
        engine_cfg,
        &section.listen_addrs()?,
        &section.telnet_addrs()?,
        section.workers(),
    )
    .await?;
    tracing::info!(
        name = %section.name,
        udp = ?server.udp,
        telnet = ?server.telnet,
        workers = section.workers(),
        "relay serving"
    );
    loop {
        match signals.next().await {
            Signal::Stop => break,
            Signal::Reload => {
                match reload().and_then(|s| s.engine_config()) {
                    Ok(cfg) => {
                        server.reconfigure(cfg);
                        tracing::info!("configuration reloaded; pilots kept (listen addresses apply at restart)");
                    }
                    Err(e) => {
                        tracing::error!("reload failed, keeping the running configuration: {e:#}")
                    }
                }
            }
        }
    }
    tracing::info!("stopping");
    tokio::task::spawn_blocking(move || server.shutdown()).await?;
    Ok(ExitCode::SUCCESS)
}

async fn run_relay(args: RelayArgs) -> Result<ExitCode> {
    let section = args.resolve()?;
    serve_relay(section, move || args.resolve()).await
}

async fn run_up(path: Option<PathBuf>) -> Result<ExitCode> {
    let read = move || -> Result<config::File> {
        match &path {
            Some(p) => config::load(p),
            None => config::parse(config::EMBEDDED_DEFAULT, "embedded default"),
        }
    };
    let file = read()?;
    serve_relay(file.relay, move || read().map(|f| f.relay)).await
}
