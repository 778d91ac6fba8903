//! `lobby load`: load generators that measure whole servers.
//!
//! * `fg`: simulated FlightGear pilots against a relay (delivery, latency, CPU).
//! * `reflector`: a bare UDP fan-out server, the ceiling a relay is compared with.

mod echo;
mod fg;
mod histogram;
mod layout;
mod master;
mod packet;
mod procstat;
mod reflector;

use anyhow::Result;
use clap::Subcommand;
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
        LoadCommand::Fg(args) => {
            let mut signals = crate::lifecycle::Signals::install()?;
            let stop = Arc::new(udp::Wake::new()?);
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
        LoadCommand::Reflector(args) => reflector::run(args).await,
        LoadCommand::Master(args) => master::run(args).await,
        LoadCommand::Echo(args) => echo::run(args).await,
    }
}
