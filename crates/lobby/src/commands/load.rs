//! `lobby load`: the load generators and bare ceilings of the `loadgen` crate, run
//! as commands. This module owns the process side: signals are installed first,
//! the servers' `listening` lines are printed here, and Ctrl-C / SIGTERM raise the
//! generators' stop wake-up.

use anyhow::Result;
use clap::Subcommand;
use lifecycle::{listening, Signals};
use loadgen::{echo, fg, master, reflector};
use std::process::ExitCode;
use std::sync::Arc;

/// Load generators.
#[derive(Subcommand, Debug)]
pub enum LoadCommand {
    /// Simulate FlightGear pilots against a relay and measure delivery, latency and its CPU.
    ///
    /// Exit status: 0 when the run completed, 1 when the target never sent anything
    /// back, 2 on usage or setup errors.
    Fg(fg::FgArgs),
    /// Register N servers with a master (full challenge handshake, many loopback
    /// sources), then scan at a fixed rate; report answered scans, full-list
    /// correctness, latency and the master's CPU per scan.
    ///
    /// Exit status: 0 when scans were answered, 1 when none was, 2 on usage errors.
    Master(master::MasterLoadArgs),
    /// Run a bare UDP echo that answers every request with N datagrams of a given
    /// size: the kernel ceiling a master's scan replies are measured against.
    Echo(echo::EchoArgs),
    /// Run a bare UDP fan-out server (every datagram to every other recent source):
    /// the ceiling a relay is measured against.
    Reflector(reflector::ReflectorArgs),
}

/// Runs a load command.
pub async fn run(cmd: LoadCommand) -> Result<ExitCode> {
    match cmd {
        LoadCommand::Fg(args) => run_fg(args).await,
        // No signal handlers: Ctrl-C ends a master load at once, as the default action.
        LoadCommand::Master(args) => master::run(args).await,
        LoadCommand::Echo(args) => run_echo(args).await,
        LoadCommand::Reflector(args) => run_reflector(args).await,
    }
}

/// Runs the pilots on a blocking thread; Ctrl-C / SIGTERM end the run early, and it
/// still reports what it measured.
async fn run_fg(args: fg::FgArgs) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let stop = Arc::new(udp::Wake::new());
    let s = stop.clone();
    let mut work = tokio::task::spawn_blocking(move || fg::run(args, s));
    tokio::select! {
        r = &mut work => r?,
        _ = signals.next_stop() => {
            stop.raise();
            work.await?
        }
    }
}

/// Serves the echo until Ctrl-C or SIGTERM.
async fn run_echo(args: echo::EchoArgs) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let e = echo::Echo::start(&args)?;
    listening("echo", "udp", e.addr());
    signals.next_stop().await;
    tokio::task::spawn_blocking(move || e.shutdown()).await?;
    Ok(ExitCode::SUCCESS)
}

/// Serves the reflector until Ctrl-C or SIGTERM, then prints its totals on standard error.
async fn run_reflector(args: reflector::ReflectorArgs) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let r = reflector::Reflector::start(&args)?;
    listening("reflector", "udp", r.addr());
    signals.next_stop().await;
    let t = tokio::task::spawn_blocking(move || r.shutdown()).await?;
    eprintln!(
        "reflector: received {}, sent {}, failed sends {}",
        t.received, t.sent, t.failed
    );
    Ok(ExitCode::SUCCESS)
}
