//! `lobby query`: ask game servers and masters, as players' tools do.

use crate::static_list::{StaticList, StaticListError, StaticLists};
use crate::{
    ansi_colors, run_mixed, scan_masters, strip_colors, ConnectResult, Kind, MergedList, Outcome,
    QueryOptions, ScanSpec,
};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::collections::HashMap;
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
    /// Read a static HTTP server list as the engine does (`masterstatic URL`:
    /// GET URL/v1/servers/GAMEDIR), then query every server (`ip` lines with `info`,
    /// `gs` lines with A2S_INFO).
    Static(StaticScan),
}

/// Common options and the servers to ask.
#[derive(Args, Debug, Clone)]
pub struct Targets {
    /// Servers, HOST[:PORT] (port 27015 when omitted).
    #[arg(required = true, value_name = "ADDR")]
    pub addrs: Vec<String>,
    /// The options every query shares.
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
    #[arg(required_unless_present = "static_urls", value_name = "ADDR")]
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
    /// Also read this static HTTP list (`masterstatic URL`: URL/v1/servers/G, so
    /// --gamedir is needed; --filter and --nat do not apply to it), merged with
    /// the masters' lists (a server on both is asked once); may be repeated.
    #[arg(long = "static", value_name = "URL", requires = "gamedir")]
    pub static_urls: Vec<String>,
    /// Seconds each static list's fetch may take in all (connect, redirects, body).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub fetch_timeout: f64,
    /// Only print the merged list; do not query the servers.
    #[arg(long)]
    pub list_only: bool,
    /// The options every query shares.
    #[command(flatten)]
    pub opts: QueryOpts,
}

/// `lobby query static`.
#[derive(Args, Debug, Clone)]
pub struct StaticScan {
    /// The list's base URL, as in `masterstatic URL` (http:// only; trailing
    /// slashes stripped), e.g. http://xash.su/server-list.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The game directory whose list is read (URL/v1/servers/GAMEDIR), e.g. valve.
    #[arg(value_name = "GAMEDIR")]
    pub gamedir: String,
    /// Seconds the list's fetch may take in all (connect, redirects, body).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub fetch_timeout: f64,
    /// Only print the list's servers; do not query them.
    #[arg(long)]
    pub list_only: bool,
    /// The options every query shares.
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

/// Runs each target's kind against it; with `progress`, a line on standard error
/// says how far it got (every 200 ms at most) and is wiped at the end.
async fn query_all(
    targets: &[(SocketAddr, Kind)],
    opts: &QueryOpts,
    progress: bool,
) -> Result<Vec<(SocketAddr, Outcome)>> {
    let options = opts.query_options()?;
    let mut last_progress = Instant::now();
    let results = run_mixed(targets, &options, |p| {
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

/// Runs a query command; static HTTP lists are fetched through `lists` (the
/// binary's `serverlist::fetch::HttpLists`: see [`crate::static_list`] for why it
/// is passed in).
pub async fn run(cmd: QueryCommand, lists: &dyn StaticLists) -> Result<ExitCode> {
    match cmd {
        QueryCommand::Info(t) => direct(Kind::Info, t).await,
        QueryCommand::Players(t) => direct(Kind::Players, t).await,
        QueryCommand::Rules(t) => direct(Kind::Rules, t).await,
        QueryCommand::Ping(t) => direct(Kind::Ping, t).await,
        QueryCommand::Connect(t) => direct(Kind::Connect, t).await,
        QueryCommand::Master(m) => master(m, lists).await,
        QueryCommand::Static(s) => static_list(s, lists).await,
    }
}

async fn direct(kind: Kind, t: Targets) -> Result<ExitCode> {
    let targets: Vec<(SocketAddr, Kind)> = t
        .addrs
        .iter()
        .map(|a| Ok((resolve(a, 27015)?, kind)))
        .collect::<Result<_>>()?;
    let progress = std::io::stderr().is_terminal() && targets.len() > 1;
    let results = query_all(&targets, &t.opts, progress).await?;
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

async fn master(m: MasterScan, lists: &dyn StaticLists) -> Result<ExitCode> {
    let masters: Vec<SocketAddr> = m
        .masters
        .iter()
        .map(|a| resolve(a, 27010))
        .collect::<Result<_>>()?;
    let wait = secs(m.master_timeout, "--master-timeout")?;
    let fetch_timeout = secs(m.fetch_timeout, "--fetch-timeout")?;
    let filter = scan_filter(&m)?;
    let gamedir = m.gamedir.clone().unwrap_or_default();
    // The masters are scanned while the static lists are fetched.
    let fetches = async {
        let mut out = Vec::new();
        for url in &m.static_urls {
            out.push(lists.fetch(url, &gamedir, fetch_timeout).await);
        }
        out
    };
    let spec = ScanSpec::new(filter, wait);
    let (answers, fetched) = tokio::join!(scan_masters(&masters, &spec), fetches);
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
    let mut targets = Targeted::default();
    merged
        .servers()
        .iter()
        .for_each(|&a| targets.add(a, Kind::Info));
    let mut lists_read = 0;
    for list in fetched {
        let Some(list) = fetched_list(list)? else {
            continue;
        };
        lists_read += 1;
        targets.add_list(&list);
    }
    if masters_answered + lists_read == 0 {
        if m.opts.json {
            println!("[]");
        }
        return Ok(ExitCode::from(1));
    }
    let sources = if m.static_urls.is_empty() {
        format!("{masters_answered} master(s)")
    } else {
        format!("{masters_answered} master(s) and {lists_read} static list(s)")
    };
    query_listed(&targets, m.list_only, &m.opts, &sources).await
}

/// `lobby query static`.
async fn static_list(s: StaticScan, lists: &dyn StaticLists) -> Result<ExitCode> {
    let fetch_timeout = secs(s.fetch_timeout, "--fetch-timeout")?;
    let fetched = lists.fetch(&s.url, &s.gamedir, fetch_timeout).await;
    let Some(list) = fetched_list(fetched)? else {
        if s.opts.json {
            println!("[]");
        }
        return Ok(ExitCode::from(1));
    };
    let mut targets = Targeted::default();
    targets.add_list(&list);
    query_listed(&targets, s.list_only, &s.opts, &list.url).await
}

/// A fetched list, its warnings said on standard error; `None` (said too) when
/// the fetch failed; a usage error (a malformed URL) is an error.
fn fetched_list(fetched: Result<StaticList, StaticListError>) -> Result<Option<StaticList>> {
    match fetched {
        Ok(list) => {
            for line in &list.bad_lines {
                eprintln!(
                    "lobby query: {}: line {line}: an address the engine cannot parse",
                    list.url
                );
            }
            for name in &list.unresolved {
                eprintln!("lobby query: {}: {name} does not resolve", list.url);
            }
            tracing::info!(url = %list.url, servers = list.servers.len(), "static list read");
            Ok(Some(list))
        }
        Err(StaticListError::Usage(e)) => Err(anyhow::anyhow!(e)),
        Err(StaticListError::Failed(e)) => {
            eprintln!("lobby query: {e}");
            Ok(None)
        }
    }
}

/// The servers to ask, each once, in the order first listed, with what each is
/// asked: `info` (which falls back to A2S_INFO) wins over A2S_INFO alone when a
/// server is listed both ways. Names that did not resolve are counted as servers
/// that did not answer.
#[derive(Debug, Default)]
struct Targeted {
    servers: Vec<(SocketAddr, Kind)>,
    index: HashMap<SocketAddr, usize>,
    unresolved: usize,
}

impl Targeted {
    fn add(&mut self, a: SocketAddr, kind: Kind) {
        match self.index.get(&a) {
            Some(&i) if kind == Kind::Info => self.servers[i].1 = Kind::Info,
            Some(_) => {}
            None => {
                self.index.insert(a, self.servers.len());
                self.servers.push((a, kind));
            }
        }
    }

    fn add_list(&mut self, list: &StaticList) {
        list.servers.iter().for_each(|&(a, k)| self.add(a, k));
        self.unresolved += list.unresolved.len();
    }
}

/// Prints the list (`--list-only`) or queries every server and prints the
/// outcomes, as `lobby query master` always has; `sources` says who listed them.
async fn query_listed(
    targets: &Targeted,
    list_only: bool,
    opts: &QueryOpts,
    sources: &str,
) -> Result<ExitCode> {
    let all = &targets.servers;
    if list_only {
        if opts.json {
            println!(
                "{}",
                serde_json::Value::Array(all.iter().map(|(a, _)| a.to_string().into()).collect())
            );
        } else {
            all.iter().for_each(|(a, _)| println!("{a}"));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let progress = std::io::stderr().is_terminal();
    let results = query_all(all, opts, progress).await?;
    print_results(&results, opts);
    let ok = results.iter().filter(|(_, o)| answered(o)).count();
    if !opts.json {
        eprintln!("{} server(s) listed by {sources}, {ok} answered", all.len());
    }
    // An empty list from a master that answered is a valid, successful result;
    // a listed name that did not resolve is a server that did not answer.
    Ok(if all.is_empty() && targets.unresolved == 0 {
        ExitCode::SUCCESS
    } else if targets.unresolved == 0 {
        exit_code(&results)
    } else if ok == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::from(3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(i: u8) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, i], 27015))
    }

    #[test]
    fn merged_lists_ask_each_server_once_and_info_wins_over_a2s_alone() {
        let mut t = Targeted::default();
        t.add(a(1), Kind::Info);
        t.add_list(&StaticList {
            url: "http://example.org/v1/servers/valve".into(),
            servers: vec![
                (a(2), Kind::A2sInfo),
                (a(1), Kind::A2sInfo),
                (a(3), Kind::A2sInfo),
                (a(2), Kind::A2sInfo),
            ],
            unresolved: vec!["gone.invalid:27015".into()],
            bad_lines: vec![7],
        });
        t.add(a(3), Kind::Info);
        assert_eq!(
            t.servers,
            vec![
                (a(1), Kind::Info),
                (a(2), Kind::A2sInfo),
                (a(3), Kind::Info)
            ]
        );
        assert_eq!(t.unresolved, 1);
    }
}
