//! `lobby query`: ask game servers and masters, as players' tools do.

use crate::{
    ansi_colors, run_many, scan_masters, strip_colors, ConnectResult, Kind, MergedList, Outcome,
    QueryOptions, ScanSpec,
};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use xash::info::InfoString;

/// Query commands.
#[derive(Subcommand, Debug)]
pub enum QueryCommand {
    /// Server info (Xash `info 49`, falling back to 48, or GoldSrc/Source A2S_INFO).
    Info(Targets),
    /// Player list (A2S_PLAYER with the challenge retry).
    Players(Targets),
    /// Server rules (A2S_RULES with the challenge retry; split replies reassembled).
    Rules(Targets),
    /// Round-trip time (`ping`/`ack`, then GoldSrc `i`/`j`).
    Ping(Targets),
    /// Run the connect handshake (getchallenge, bandwidth test, connect) without joining.
    Connect(Targets),
    /// Scan masters, merge their lists, then query every server.
    Master(MasterScan),
}

/// Common options and the servers to ask.
#[derive(Args, Debug, Clone)]
pub struct Targets {
    /// Servers, HOST[:PORT] (port 27015 when omitted).
    #[arg(required = true, value_name = "ADDR")]
    pub addrs: Vec<String>,
    #[command(flatten)]
    pub opts: QueryOpts,
}

/// Options shared by every query.
#[derive(Args, Debug, Clone)]
pub struct QueryOpts {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for each reply before retrying.
    #[arg(long, default_value_t = 1.5, value_name = "SECONDS")]
    pub timeout: f64,
    /// Retries after a timeout.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: u32,
    /// Seconds each server's query may take in all, however the server answers
    /// (default: the timeout times the rounds the query needs, plus retries).
    #[arg(long, value_name = "SECONDS")]
    pub deadline: Option<f64>,
    /// Servers queried at once.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub concurrency: usize,
    /// Render `^N` colour codes as terminal colours (default: strip them).
    #[arg(long)]
    pub color: bool,
}

/// `lobby query master`.
#[derive(Args, Debug, Clone)]
pub struct MasterScan {
    /// Masters, HOST[:PORT] (port 27010 when omitted).
    #[arg(required = true, value_name = "ADDR")]
    pub masters: Vec<String>,
    /// Only this game directory (exact).
    #[arg(long, value_name = "G")]
    pub gamedir: Option<String>,
    /// Raw filter info string appended to the request, e.g. '\map\crossfire\empty\0'.
    #[arg(long, value_name = "RAW")]
    pub filter: Option<String>,
    /// List servers behind NAT (sends \nat\1; default \nat\0).
    #[arg(long)]
    pub nat: bool,
    /// The client version announced (masters give outdated clients an update notice).
    #[arg(long, default_value = "0.21")]
    pub clver: String,
    /// Seconds to wait for each master's list.
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub master_timeout: f64,
    /// Only print the merged list; do not query the servers.
    #[arg(long)]
    pub list_only: bool,
    #[command(flatten)]
    pub opts: QueryOpts,
}

fn resolve(s: &str, default_port: u16) -> Result<SocketAddr> {
    Ok(udp::addr::resolve(s, default_port)?)
}

fn secs(v: f64, what: &str) -> Result<Duration> {
    config::seconds(v, what, 3600.0)
}

impl QueryOpts {
    fn query_options(&self) -> Result<QueryOptions> {
        Ok(QueryOptions {
            timeout: secs(self.timeout, "--timeout")?,
            retries: self.retries,
            concurrency: self.concurrency,
            deadline: self.deadline.map(|d| secs(d, "--deadline")).transpose()?,
        })
    }
}

/// Runs `kind` against every target; with `progress`, a line on standard error
/// says how far it got (every 200 ms at most) and is wiped at the end.
async fn query_all(
    kind: Kind,
    targets: &[SocketAddr],
    opts: &QueryOpts,
    progress: bool,
) -> Result<Vec<(SocketAddr, Outcome)>> {
    let options = opts.query_options()?;
    let mut last_progress = Instant::now();
    let results = run_many(kind, targets, &options, |p| {
        if progress && last_progress.elapsed() > Duration::from_millis(200) {
            last_progress = Instant::now();
            eprint!(
                "\r{} of {} done, {} in flight   ",
                p.done, p.total, p.in_flight
            );
        }
    })
    .await?;
    if progress {
        eprint!("\r{:60}\r", "");
    }
    Ok(results)
}

/// Runs a query command.
pub async fn run(cmd: QueryCommand) -> Result<ExitCode> {
    match cmd {
        QueryCommand::Info(t) => direct(Kind::Info, t).await,
        QueryCommand::Players(t) => direct(Kind::Players, t).await,
        QueryCommand::Rules(t) => direct(Kind::Rules, t).await,
        QueryCommand::Ping(t) => direct(Kind::Ping, t).await,
        QueryCommand::Connect(t) => direct(Kind::Connect, t).await,
        QueryCommand::Master(m) => master(m).await,
    }
}

async fn direct(kind: Kind, t: Targets) -> Result<ExitCode> {
    let targets: Vec<SocketAddr> = t
        .addrs
        .iter()
        .map(|a| resolve(a, 27015))
        .collect::<Result<_>>()?;
    let progress = std::io::stderr().is_terminal() && targets.len() > 1;
    let results = query_all(kind, &targets, &t.opts, progress).await?;
    print_results(&results, &t.opts);
    Ok(exit_code(&results))
}

/// 0: every server answered; 3: some did; 1: none did.
fn exit_code(results: &[(SocketAddr, Outcome)]) -> ExitCode {
    let answered = results.iter().filter(|(_, o)| answered(o)).count();
    if results.is_empty() || answered == 0 {
        ExitCode::from(1)
    } else if answered == results.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}

fn answered(o: &Outcome) -> bool {
    !matches!(o, Outcome::NoReply { .. } | Outcome::Invalid { .. })
}

fn show(s: &str, color: bool) -> String {
    if color {
        ansi_colors(s)
    } else {
        strip_colors(s)
    }
}

fn print_results(results: &[(SocketAddr, Outcome)], opts: &QueryOpts) {
    if opts.json {
        print_json(results);
    } else {
        print_table(results, opts.color);
    }
}

/// One JSON array: each outcome with its `address`, colour codes stripped.
fn print_json(results: &[(SocketAddr, Outcome)]) {
    let v: Vec<serde_json::Value> = results
        .iter()
        .map(|(a, o)| {
            let mut v = serde_json::to_value(o).unwrap_or_default();
            strip_json(&mut v);
            if let Some(m) = v.as_object_mut() {
                m.insert("address".into(), a.to_string().into());
            }
            v
        })
        .collect();
    println!("{}", serde_json::Value::Array(v));
}

/// A table for info replies, a few lines per server for the rest.
fn print_table(results: &[(SocketAddr, Outcome)], c: bool) {
    if results
        .iter()
        .any(|(_, o)| matches!(o, Outcome::Info { .. }))
    {
        println!(
            "{:<22} {:>6} {:>7} {:<12} {:<10} NAME",
            "ADDRESS", "PING", "PLAYERS", "MAP", "GAME"
        );
    }
    for (a, o) in results {
        match o {
            Outcome::Info { info, ping_ms } => println!(
                "{:<22} {:>6.1} {:>7} {:<12} {:<10} {}",
                a.to_string(),
                ping_ms,
                format!("{}/{}", info.players, info.max_players),
                show(&info.map, c),
                show(&info.gamedir, c),
                show(&info.name, c)
            ),
            Outcome::Players { players } => {
                println!("{a}: {} player(s)", players.len());
                for p in players {
                    println!("  {:>5} {:>8.0}s  {}", p.frags, p.seconds, show(&p.name, c));
                }
            }
            Outcome::Rules { rules } => {
                println!("{a}: {} rule(s)", rules.len());
                for (k, v) in rules {
                    println!("  {} = {}", show(k, c), show(v, c));
                }
            }
            Outcome::Pong { ping_ms, spelling } => println!("{a}: {spelling} in {ping_ms:.1} ms"),
            Outcome::Connect(ConnectResult::Accepted {
                protinfo,
                bandwidth,
            }) => println!(
                "{a}: accepted {protinfo}{}",
                bandwidth
                    .map(|b| format!(" (bandwidth test passed at {b} bytes)"))
                    .unwrap_or_default()
            ),
            Outcome::Connect(ConnectResult::Rejected { reason }) => {
                println!("{a}: rejected: {}", show(reason, c))
            }
            Outcome::Connect(ConnectResult::GoldSrc) => {
                println!("{a}: a GoldSrc server (answered the Steam challenge)")
            }
            Outcome::NoReply { hint } => println!("{a}: {hint}"),
            Outcome::Invalid { error } => println!("{a}: invalid reply: {error}"),
        }
    }
}

/// Strips colour codes from every string in a JSON value.
fn strip_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => *s = strip_colors(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_json),
        serde_json::Value::Object(m) => m.values_mut().for_each(strip_json),
        _ => {}
    }
}

/// The filter every master is sent: `--filter`, then `--gamedir`, `--clver`, `--nat`.
fn scan_filter(m: &MasterScan) -> Result<InfoString> {
    let mut filter = match &m.filter {
        Some(raw) => {
            InfoString::parse(raw.as_bytes()).map_err(|e| anyhow::anyhow!("--filter: {e}"))?
        }
        None => InfoString::new(),
    };
    if let Some(g) = &m.gamedir {
        filter.set("gamedir", g)?;
    }
    filter.set("clver", &m.clver)?;
    filter.set("nat", if m.nat { "1" } else { "0" })?;
    Ok(filter)
}

async fn master(m: MasterScan) -> Result<ExitCode> {
    let masters: Vec<SocketAddr> = m
        .masters
        .iter()
        .map(|a| resolve(a, 27010))
        .collect::<Result<_>>()?;
    let wait = secs(m.master_timeout, "--master-timeout")?;
    let filter = scan_filter(&m)?;
    let answers = scan_masters(&masters, &ScanSpec::new(filter, wait)).await;
    let mut merged = MergedList::new();
    for (a, answer) in masters.iter().zip(answers) {
        match answer? {
            Some(servers) => {
                tracing::info!(master = %a, servers = servers.len(), "master answered");
                merged.add(servers);
            }
            None => eprintln!("lobby query: master {a} did not answer"),
        }
    }
    let masters_answered = merged.masters_answered();
    let all = merged.servers();
    if masters_answered == 0 {
        if m.opts.json {
            println!("[]");
        }
        return Ok(ExitCode::from(1));
    }
    if m.list_only {
        if m.opts.json {
            println!(
                "{}",
                serde_json::Value::Array(all.iter().map(|a| a.to_string().into()).collect())
            );
        } else {
            all.iter().for_each(|a| println!("{a}"));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let progress = std::io::stderr().is_terminal();
    let results = query_all(Kind::Info, all, &m.opts, progress).await?;
    print_results(&results, &m.opts);
    if !m.opts.json {
        let ok = results.iter().filter(|(_, o)| answered(o)).count();
        eprintln!(
            "{} server(s) listed by {masters_answered} master(s), {ok} answered",
            all.len()
        );
    }
    // An empty list from a master that answered is a valid, successful result.
    Ok(if all.is_empty() {
        ExitCode::SUCCESS
    } else {
        exit_code(&results)
    })
}
