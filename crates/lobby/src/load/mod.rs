//! `lobby load`: load generators that measure whole servers.

use anyhow::Result;
use clap::Subcommand;
use std::process::ExitCode;

/// Load generators.
#[derive(Subcommand, Debug)]
pub enum LoadCommand {}

/// Runs a load command.
pub async fn run(cmd: LoadCommand) -> Result<ExitCode> {
    match cmd {}
}
