//! `lobby sim`: a fleet of simulated Xash3D FWGS servers (the `services::sim` part)
//! registered with the given masters, until SIGTERM or Ctrl-C; with `--protocol 48`,
//! GoldSrc servers that answer A2S only and register nowhere.

use crate::services::sim::{Fleet, FleetSpec};
use anyhow::{bail, Context, Result};
use clap::Args;
use lifecycle::{Signals, Supervisor};
use sim::Protocol;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

/// The port masters listen on when an address gives none.
const DEFAULT_MASTER_PORT: u16 = 27010;

/// Flags of `lobby sim`.
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Master to register with (HOST[:PORT], default port 27010); repeat for several.
    #[arg(long = "master", value_name = "HOST[:PORT]")]
    pub masters: Vec<String>,
    /// Number of simulated servers.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub count: u16,
    /// UDP port of the first server; server i listens on P+i. 0 = an ephemeral port each.
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub base_port: u16,
    /// IP address the servers listen on (and send heartbeats from). Loopback by
    /// default: simulated servers answer anyone, with multi-datagram replies, so
    /// they reach beyond this machine only when told (e.g. `--listen-ip 0.0.0.0`).
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub listen_ip: IpAddr,
    /// Game directory every server reports (valve, cstrike, ...).
    #[arg(long, value_name = "G", default_value = "valve")]
    pub gamedir: String,
    /// Protocol the servers speak: 49 = Xash3D FWGS (heartbeats to --master, `info
    /// 49`, `ping`, A2S, NAT connects, the connect handshake); 48 = GoldSrc (A2S_INFO
    /// with protocol 48, A2S_PLAYER and A2S_RULES only: no text queries, no
    /// heartbeats, --master ignored), for testing `gs` server-list entries.
    #[arg(long, value_name = "49|48", default_value_t = Protocol::Xash)]
    pub protocol: Protocol,
    /// Behind NAT (sv_nat 1): heartbeats every 60 s, `nat 1`, masters' connect requests answered.
    #[arg(long)]
    pub nat: bool,
    /// Answer NAT connect requests for private and loopback clients too (the engine ignores them).
    #[arg(long)]
    pub nat_allow_private: bool,
    /// Human players on each server (default: a varied number from the seed).
    #[arg(long, value_name = "K")]
    pub players: Option<u8>,
    /// Bots on each server.
    #[arg(long, value_name = "B", default_value_t = 0)]
    pub bots: u8,
    /// Player slots per server, 1 to 32 (default: varied from the seed).
    #[arg(long, value_name = "M")]
    pub max_players: Option<u8>,
    /// Seed for names, maps, players and rules: the same seed gives the same fleet.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Server name (default: generated); with several servers " #N" is appended.
    #[arg(long, value_name = "NAME")]
    pub hostname: Option<String>,
    /// Map every server runs (default: varied from the seed).
    #[arg(long, value_name = "MAP")]
    pub map: Option<String>,
    /// Password every server requires to join.
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,
    /// Add enough rules that A2S_RULES replies need GoldSrc split packets.
    #[arg(long)]
    pub big_rules: bool,
    /// Answer the old GoldSrc text queries (details, players, rules), which the engine ignores.
    #[arg(long)]
    pub legacy_queries: bool,
    /// Do not offer the connect bandwidth test (answer `challenge N 0`).
    #[arg(long)]
    pub no_bandwidth_test: bool,
}

/// Resolves `HOST[:PORT]` (IPv6 as `[addr]:port`) to an address of `family`.
async fn resolve_master(text: &str, v4: bool) -> Result<SocketAddr> {
    let t = text.to_string();
    let all = tokio::task::spawn_blocking(move || udp::addr::resolve_all(&t, DEFAULT_MASTER_PORT))
        .await?
        .with_context(|| format!("cannot resolve master {text:?}"))?;
    let family = if v4 { "IPv4" } else { "IPv6" };
    all.iter()
        .copied()
        .find(|a| a.is_ipv4() == v4)
        .with_context(|| {
            format!("master {text:?} has no {family} address (the servers listen on {family}); got {all:?}")
        })
}

impl SimArgs {
    /// The fleet these flags describe, masters resolved.
    pub async fn spec(&self) -> Result<FleetSpec> {
        if self.count == 0 {
            bail!("--count must be at least 1");
        }
        if self.base_port != 0 && u32::from(self.base_port) + u32::from(self.count) - 1 > 65535 {
            bail!(
                "--base-port {} + --count {} goes past port 65535",
                self.base_port,
                self.count
            );
        }
        let mut masters = Vec::new();
        for m in &self.masters {
            let a = resolve_master(m, self.listen_ip.is_ipv4()).await?;
            if self.listen_ip.is_loopback() && !a.ip().is_loopback() {
                bail!(
                    "master {m} ({a}) is not on this machine, and the servers listen on {} (loopback): pass --listen-ip with an address that reaches it (e.g. 0.0.0.0), knowing that anyone who reaches it can query them",
                    self.listen_ip
                );
            }
            masters.push(a);
        }
        if self.protocol == Protocol::GoldSrc && !masters.is_empty() {
            tracing::warn!(
                masters = masters.len(),
                "--protocol 48: GoldSrc servers send no heartbeats, --master is ignored"
            );
        }
        if !self.listen_ip.is_loopback() {
            tracing::warn!(listen = %self.listen_ip, "simulated servers answer queries from anyone who can reach this address (replies of several datagrams): a test tool, not for the open internet");
        }
        let spec = FleetSpec {
            count: self.count,
            seed: self.seed,
            protocol: self.protocol,
            masters,
            listen_ip: self.listen_ip,
            base_port: self.base_port,
            gamedir: self.gamedir.clone(),
            nat: self.nat,
            nat_allow_private: self.nat_allow_private,
            players: self.players,
            bots: self.bots,
            max_players: self.max_players,
            hostname: self.hostname.clone(),
            map: self.map.clone(),
            password: self.password.clone(),
            big_rules: self.big_rules,
            legacy_queries: self.legacy_queries,
            bandwidth_test: !self.no_bandwidth_test,
        };
        // Report a bad setting before binding anything.
        spec.configs()?;
        Ok(spec)
    }
}

/// Runs `lobby sim` until SIGTERM or Ctrl-C, then says goodbye to the masters.
pub async fn run(args: SimArgs) -> Result<ExitCode> {
    let mut signals = Signals::install()?;
    let spec = args.spec().await?;
    let sup = Supervisor::new();
    let fleet = Fleet::start(&sup, spec).await?;
    tracing::info!(servers = fleet.addrs().len(), "simulating; SIGTERM stops");
    let code = tokio::select! {
        _ = signals.next_stop() => ExitCode::SUCCESS,
        f = sup.failed() => {
            tracing::error!(part = %f.part, reason = %f.reason, "part failed; stopping");
            ExitCode::from(1)
        }
    };
    tracing::info!("stopping");
    // Each server sends the shutdown message `b\n` to its masters as it stops.
    sup.shutdown().await;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    fn args(a: &[&str]) -> SimArgs {
        Cli::try_parse_from(std::iter::once("sim").chain(a.iter().copied()))
            .unwrap()
            .sim
    }

    #[tokio::test]
    async fn loopback_by_default_and_a_remote_master_needs_an_explicit_address() {
        let a = args(&[]);
        assert_eq!(a.listen_ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert!(a.spec().await.unwrap().listen_ip.is_loopback());
        // Resolved and refused before anything is bound or sent.
        let e = args(&["--master", "192.0.2.1:27010"])
            .spec()
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("--listen-ip") && e.contains("192.0.2.1"), "{e}");
        let ok = args(&["--master", "192.0.2.1:27010", "--listen-ip", "0.0.0.0"]);
        assert_eq!(ok.spec().await.unwrap().masters.len(), 1);
        let local = args(&["--master", "127.0.0.1:27010"]);
        assert_eq!(local.spec().await.unwrap().masters.len(), 1);
    }

    #[tokio::test]
    async fn protocol_is_49_by_default_48_on_request_and_nothing_else() {
        assert_eq!(args(&[]).spec().await.unwrap().protocol, Protocol::Xash);
        let gs = args(&["--protocol", "48", "--master", "127.0.0.1:27010"]);
        assert_eq!(gs.spec().await.unwrap().protocol, Protocol::GoldSrc);
        for bad in ["47", "17", "gs"] {
            let e = Cli::try_parse_from(["sim", "--protocol", bad])
                .err()
                .expect("refused")
                .to_string();
            assert!(e.contains("49 = Xash3D FWGS, 48 = GoldSrc"), "{bad}: {e}");
        }
    }
}
