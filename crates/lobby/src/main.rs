//! `lobby`: the multiplayer backbone for FlightGear and Xash3D FWGS.
//!
//! This file only parses the command line, sets up logging and dispatches; the
//! commands and parts live in the `lobby` library (`lib.rs`), every part started
//! and stopped through `lobby::lifecycle`.

use ::query::cli as query;
use ::query::master_admin;
use adminctl as admin;
use clap::{Parser, Subcommand};
use loadgen::fly;
use lobby::commands::{load, serve, sim};
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

/// `lobby master`: serve, or one of the list's one-shot commands.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct MasterCmd {
    #[command(subcommand)]
    list: Option<serverlist::cli::ListCommand>,
    #[command(flatten)]
    serve: serve::MasterArgs,
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
    Relay(serve::RelayArgs),
    /// Run the Xash3D master server (UDP, IPv4 and IPv6, plus the HTTP server list
    /// with its curated sources), or a one-shot `probe` or `export` of the list.
    Master(MasterCmd),
    /// Run the directory: probe relays, serve the zone (SRV/TXT/NAPTR) or push it (RFC 2136).
    Dns(serve::DnsArgs),
    /// Run the tracker server relays report to (fgtracker's protocol) and the flight log.
    Tracker(serve::TrackerArgs),
    /// Run simulated Xash3D servers registered with masters (for tests, demos and load).
    Sim(sim::SimArgs),
    /// Administer a running lobby through its admin API (fgms's admin CLI: show,
    /// blacklist/relay/crossfeed add|delete).
    Admin(admin::AdminArgs),
    /// Send an authenticated admin command (ban, unban, list) to a master.
    MasterAdmin(master_admin::AdminArgs),
    /// Query game servers and masters (info, players, rules, ping, connect, master scans).
    #[command(subcommand)]
    Query(query::QueryCommand),
    /// Generate load against a server and measure it.
    #[command(subcommand)]
    Load(load::LoadCommand),
    /// FlightGear discovery: relays (SRV/TXT) and TerraSync servers (NAPTR), as FlightGear resolves them.
    #[command(subcommand)]
    Fg(fgquery::FgCommand),
    /// Fly one simulated FlightGear pilot to a relay (real position datagrams) until stopped.
    Fly(fly::FlyArgs),
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // hickory-server logs every DNS query at INFO, and every positive answer to a
    // query with the DO bit at WARN ("unexpected lookup skip": the zone has no NSEC
    // records to add), which floods the log of a public name server; the DNS part
    // logs each query at debug instead. RUST_LOG naming hickory brings them back.
    if !std::env::var("RUST_LOG").is_ok_and(|v| v.contains("hickory")) {
        for d in [
            "hickory_server::server=warn",
            "hickory_server::zone_handler::catalog=error",
        ] {
            if let Ok(d) = d.parse() {
                filter = filter.add_directive(d);
            }
        }
    }
    // Colours only on a terminal: a journal or a log file gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    // Every connection is a descriptor: the caps ([http] max_connections and the
    // others) are meant to bind before the process's soft limit (often 1,024) does.
    let nofile = udp::raise_nofile();
    tracing::debug!(nofile, "open-file limit");
    // Two async workers, whatever the machine: the hot paths (relay and master
    // datagrams) run on their own UDP worker threads (`udp_worker`, one or more per
    // socket), not on tokio. The async side (HTTP, DNS, telnet, the tracker, the
    // flight log's writer, the prober) needs little CPU; more workers would only
    // compete with the UDP threads for the cores. Blocking work goes to tokio's
    // separate blocking pool.
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
            Command::Up { config } => serve::run_up(config).await,
            Command::Relay(args) => serve::run_relay(args).await,
            Command::Master(MasterCmd {
                list: Some(cmd), ..
            }) => serverlist::cli::run(cmd).await,
            Command::Master(MasterCmd { serve, .. }) => serve::run_master(serve).await,
            Command::Dns(args) => serve::run_dns(args).await,
            Command::Tracker(args) => serve::run_tracker(args).await,
            Command::Sim(args) => sim::run(args).await,
            Command::Admin(args) => admin::run(args).await,
            Command::MasterAdmin(args) => {
                tokio::task::spawn_blocking(move || master_admin::run(args)).await?
            }
            Command::Load(cmd) => load::run(cmd).await,
            Command::Query(cmd) => query::run(cmd, &serverlist::fetch::HttpLists).await,
            Command::Fg(cmd) => fgquery::run(cmd).await,
            Command::Fly(args) => fly::run(args).await.map(|()| ExitCode::SUCCESS),
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
