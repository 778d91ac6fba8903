//! `lobby`: the multiplayer backbone for FlightGear and Xash3D FWGS.
//!
//! This file only parses the command line, sets up logging and dispatches; each
//! command lives in its own module, each part in its own module, and every part is
//! started and stopped through [`lifecycle`].

mod admin_client;
mod config;
mod dns_server;
mod fg_cmd;
mod fgms_conf;
mod http;
mod lifecycle;
mod load_cmd;
mod master_server;
mod query_cmd;
mod relay_server;
mod serve_cmd;
mod sim_cmd;
mod udp_worker;

use clap::{Parser, Subcommand};
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
    Relay(serve_cmd::RelayArgs),
    /// Run the Xash3D master server (UDP, IPv4 and IPv6, plus the HTTP server list).
    Master(serve_cmd::MasterArgs),
    /// Run the directory: probe relays, serve the zone (SRV/TXT/NAPTR) or push it (RFC 2136).
    Dns(serve_cmd::DnsArgs),
    /// Run simulated Xash3D servers registered with masters (for tests, demos and load).
    Sim(sim_cmd::SimArgs),
    /// Send an authenticated admin command (ban, unban, list) to a master.
    MasterAdmin(admin_client::AdminArgs),
    /// Query game servers and masters (info, players, rules, ping, connect, master scans).
    #[command(subcommand)]
    Query(query_cmd::QueryCommand),
    /// Generate load against a server and measure it.
    #[command(subcommand)]
    Load(load_cmd::LoadCommand),
    /// FlightGear discovery: relays (SRV/TXT) and TerraSync servers (NAPTR), as FlightGear resolves them.
    #[command(subcommand)]
    Fg(fg_cmd::FgCommand),
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
            Command::Up { config } => serve_cmd::run_up(config).await,
            Command::Relay(args) => serve_cmd::run_relay(args).await,
            Command::Master(args) => serve_cmd::run_master(args).await,
            Command::Dns(args) => serve_cmd::run_dns(args).await,
            Command::Sim(args) => sim_cmd::run(args).await,
            Command::MasterAdmin(args) => {
                tokio::task::spawn_blocking(move || admin_client::run(args)).await?
            }
            Command::Load(cmd) => load_cmd::run(cmd).await,
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
