//! The serving commands: `lobby up`, `relay`, `master` and `dns`. Each resolves its
//! configuration (TOML file, then flags), starts its parts under one [`Supervisor`],
//! serves until SIGTERM/SIGINT (SIGHUP reloads the configuration and keeps all state)
//! or until a part fails, then stops everything through the same supervisor.

mod backbone;

use backbone::{Backbone, Parts};
pub use config::flags::{DnsArgs, MasterArgs, RelayArgs, TrackerArgs};

use anyhow::Result;
use lifecycle::{Signal, Signals};
use std::path::PathBuf;
use std::process::ExitCode;

/// Starts `parts` from the configuration `read` returns, serves until SIGTERM or
/// Ctrl-C (or a part fails), and re-reads the configuration on SIGHUP, keeping all
/// state. Exit status: 0 after a signal, 1 when a part failed.
async fn serve(parts: Parts, read: impl Fn() -> Result<config::File>) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let file = read()?;
    let admin = crate::http::admin_state::Admin::load(&file)?;
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
    admin: &crate::http::admin_state::Admin,
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
