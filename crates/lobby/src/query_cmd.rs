//! `lobby query`: ask game servers and masters, as players' tools do.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use query::{ansi_colors, run_many, strip_colors, ConnectResult, Kind, Outcome, QueryOptions};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;
use xash::info::InfoString;
use xash::master::{ScanRequest, ServerListPage, SERVER_LIST_HEADER};

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
    #[arg(long, default_value_t = 1)]
    pub retries: u32,
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
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = s.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    let with_port = if s.contains(':') {
        s.to_string()
    } else {
        format!("{s}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {s:?}"))?
        .next()
        .with_context(|| format!("{s:?} resolved to no address"))
}

fn udp(v6: bool) -> Result<UdpSocket> {
    let (domain, addr): (Domain, SocketAddr) = if v6 {
        (Domain::IPV6, "[::]:0".parse()?)
    } else {
        (Domain::IPV4, "0.0.0.0:0".parse()?)
    };
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if v6 {
        s.set_only_v6(true)?;
    }
    let _ = s.set_recv_buffer_size(4 << 20);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    Ok(UdpSocket::from_std(s.into())?)
}

fn secs(v: f64, what: &str) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v < 3600.0) {
        bail!("{what} must be a positive number of seconds");
    }
    Ok(Duration::from_secs_f64(v))
}

impl QueryOpts {
    fn query_options(&self) -> Result<QueryOptions> {
        Ok(QueryOptions {
            timeout: secs(self.timeout, "--timeout")?,
            retries: self.retries,
            concurrency: self.concurrency,
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
        return;
    }
    let c = opts.color;
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

/// Scans one master; returns the servers it listed (None if it never answered).
async fn scan_master(
    master: SocketAddr,
    filter: InfoString,
    key: u32,
    wait: Duration,
) -> Result<Option<Vec<SocketAddr>>> {
    let sock = udp(master.is_ipv6())?;
    let mut f = filter;
    f.set("key", format!("{key:x}"))?;
    let mut req = Vec::new();
    ScanRequest {
        region: 0xff,
        last: None,
        filter: f,
        final_nul: true,
        malformed_last: false,
    }
    .encode(&mut req);
    let mut servers = Vec::new();
    let mut answered = false;
    let mut largest_page = 0;
    let mut buf = vec![0u8; 65536];
    for _attempt in 0..2 {
        sock.send_to(&req, master).await?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // After the first page, the rest arrive together: stop when quiet.
            let until = if answered {
                (tokio::time::Instant::now() + Duration::from_millis(300)).min(deadline)
            } else {
                deadline
            };
            match tokio::time::timeout_at(until, sock.recv_from(&mut buf)).await {
                Ok(Ok((n, from))) if from == master && buf[..n].starts_with(SERVER_LIST_HEADER) => {
                    match ServerListPage::decode(&buf[..n], master.is_ipv6(), true) {
                        Ok(p) if p.key == Some(key) => {
                            answered = true;
                            let n = p.servers.len();
                            servers.extend(p.servers);
                            // Pages are filled in order: one smaller than an earlier
                            // page is the last.
                            if largest_page > 0 && n < largest_page {
                                return Ok(Some(servers));
                            }
                            largest_page = largest_page.max(n);
                        }
                        Ok(_) => tracing::warn!(%master, "list page with a wrong key ignored"),
                        Err(e) => tracing::warn!(%master, error = %e, "invalid list page ignored"),
                    }
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => break,
            }
        }
        if answered {
            return Ok(Some(servers));
        }
    }
    Ok(None)
}

async fn master(m: MasterScan) -> Result<ExitCode> {
    let masters: Vec<SocketAddr> = m
        .masters
        .iter()
        .map(|a| resolve(a, 27010))
        .collect::<Result<_>>()?;
    let wait = secs(m.master_timeout, "--master-timeout")?;
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
    let key = (std::process::id() ^ 0x5eed_1ab5).max(1);
    // All masters at once, each with its own socket and deadline.
    let handles: Vec<_> = masters
        .iter()
        .map(|&a| tokio::spawn(scan_master(a, filter.clone(), key, wait)))
        .collect();
    let mut lists = Vec::new();
    for h in handles {
        lists.push(h.await?);
    }
    let mut all = Vec::new();
    let mut seen = HashSet::new();
    let mut masters_answered = 0;
    for (a, l) in masters.iter().zip(lists) {
        match l? {
            Some(servers) => {
                masters_answered += 1;
                tracing::info!(master = %a, servers = servers.len(), "master answered");
                all.extend(servers.into_iter().filter(|s| seen.insert(*s)));
            }
            None => eprintln!("lobby query: master {a} did not answer"),
        }
    }
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
    let results = query_all(Kind::Info, &all, &m.opts, progress).await?;
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
