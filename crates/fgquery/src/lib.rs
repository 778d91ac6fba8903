//! Querying FlightGear's network as FlightGear itself does: `lobby fg`.
//!
//! - `lobby fg servers`: the in-sim multiplayer dialog's lookup. SRV
//!   `_fgms._udp.<domain>`, sorted by priority ascending then weight descending, port 0
//!   entries skipped as offline, then the `flightgear-mpserver=` TXT attribute of each
//!   relay (fetched concurrently here; FlightGear fetches them one after another). With
//!   `--probe`, each relay's fgms ping round trip and its telnet pilot count.
//! - `lobby fg terrasync`: TerraSync's NAPTR lookup of `terrasync.<domain>` and SimGear's
//!   server choice (flag `U`, service, lowest order, lowest preference, uniform pick).
//!
//! The record logic is in `directory::{mpserver, terrasync}`; this module does the DNS
//! and network work and the reporting: [`dns`] the resolver, [`servers`] and
//! [`terrasync`] the two commands.

pub mod args;
mod dns;
pub mod ping;
mod servers;
mod terrasync;

use anyhow::Result;
pub use args::{FgCommand, ServersArgs, TerrasyncArgs};
use std::process::ExitCode;

/// Runs a `lobby fg` command.
pub async fn run(cmd: FgCommand) -> Result<ExitCode> {
    match cmd {
        FgCommand::Servers(a) => servers::servers(a).await,
        FgCommand::Terrasync(a) => terrasync::terrasync_cmd(a).await,
    }
}
