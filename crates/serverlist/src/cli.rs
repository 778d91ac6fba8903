//! `lobby master probe` (a one-shot drop-in for FWGS/server-list's nightly
//! `scripts/probe.py`) and `lobby master export` (probe.py's static tree from a
//! master's state file, live or stopped).
//!
//! Sources are read as probe.py reads them ([`crate::curated::parse`]): an unknown
//! key is a warning and its entry is kept; an entry that cannot be used is skipped
//! and named; a file that is not TOML is skipped whole (its last published list
//! stays); everything else is published.
//!
//! Exit codes: 0 done, nothing skipped (warnings are printed); 1 a file could not be
//! written or the probe could not run; 2 bad input (a sources directory missing or
//! with no usable file, a state that cannot be used, or with `--strict` any warning,
//! skipped entry or file in error): nothing is written then, so the last published
//! tree stays; 3 the tree was written, but entries or files were skipped (each named
//! on stderr).

use crate::catalog::Catalog;
use crate::driver::{lock, probe_once, resolve_once};
use crate::export::{restore_published, restore_state, state_kind, write_tree, StateKind};
use crate::prober::ProberConfig;
use crate::sources::{load_dir, Files, Loaded};
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The list's one-shot commands.
#[derive(Subcommand, Debug, Clone)]
pub enum ListCommand {
    /// Probe every server of a sources directory once, apply the grace rule and write
    /// probe.py's tree (`v1/servers/<gamedir>`, `v1/gamedirs`, `state.json`,
    /// `index.html`), then exit: a drop-in for FWGS/server-list's nightly job.
    Probe(ProbeArgs),
    /// Write probe.py's tree from a master's state file or a `state.json` (probe.py's
    /// own with `--sources`), so a list can be hosted on static pages or handed back
    /// to probe.py.
    Export(ExportArgs),
}

/// `lobby master probe`.
#[derive(Args, Debug, Clone)]
pub struct ProbeArgs {
    /// Directory of `<gamedir>.toml` sources (FWGS/server-list's `servers/`).
    #[arg(long, value_name = "DIR")]
    sources: PathBuf,
    /// Directory the tree is written to.
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// State kept between runs, in probe.py's `state.json` format (default
    /// OUTPUT/state.json, where probe.py keeps it).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Hours a silent server stays published after its last answer.
    #[arg(long, value_name = "HOURS", default_value_t = 48.0)]
    grace_hours: f64,
    /// Seconds each try waits for an answer (three tries: probe.py's 6 s window).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    timeout: f64,
    /// Probes started per second, at most.
    #[arg(long, value_name = "N", default_value_t = 200)]
    rate: u32,
    /// Refuse the sources on any warning or skipped entry (exit 2, nothing probed or
    /// written): for a sources repository's CI.
    #[arg(long)]
    strict: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// `lobby master export`.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// The master's state file (`[master] state_file`), a `state.json` lobby wrote,
    /// or probe.py's own `state.json` (which needs `--sources`).
    #[arg(long, value_name = "FILE")]
    state: PathBuf,
    /// The sources the state was probed from (`<gamedir>.toml`, FWGS/server-list's
    /// `servers/`): the gamedirs, each server's protocol and `force` come from them,
    /// as probe.py takes them. Needed for probe.py's `state.json`, which keeps none.
    #[arg(long, value_name = "DIR")]
    sources: Option<PathBuf>,
    /// Refuse the sources on any warning or skipped entry (exit 2, nothing written).
    #[arg(long)]
    strict: bool,
    /// Directory the tree is written to.
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// Hours a silent server stays published after its last answer.
    #[arg(long, value_name = "HOURS", default_value_t = 48.0)]
    grace_hours: f64,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a list command.
pub async fn run(cmd: ListCommand) -> Result<ExitCode> {
    match cmd {
        ListCommand::Probe(a) => probe(a).await,
        ListCommand::Export(a) => export(a).await,
    }
}

fn grace_secs(hours: f64) -> Result<i64> {
    if !(hours.is_finite() && (0.0..=24.0 * 3650.0).contains(&hours)) {
        bail!("--grace-hours must be 0 to 87600, got {hours}");
    }
    Ok((hours * 3600.0) as i64)
}

fn bad_input(msg: impl std::fmt::Display) -> Result<ExitCode> {
    eprintln!("lobby: {msg}");
    Ok(ExitCode::from(2))
}

/// A JSON file, or `None` when missing; Err when unreadable or not JSON.
fn read_json(path: &Path) -> Result<Option<Value>> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| anyhow!("{} is not JSON: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// The sources read, their problems printed: `Err(exit)` when nothing can be
/// published (or, `strict`, anything was wrong).
fn read_sources(dir: &Path, strict: bool) -> std::result::Result<Loaded, ExitCode> {
    let loaded = match load_dir(dir, &Files::new()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("lobby: {e}");
            return Err(ExitCode::from(2));
        }
    };
    for e in &loaded.errors {
        eprintln!("lobby: {e} (file skipped)");
    }
    for i in &loaded.issues {
        eprintln!("lobby: {i}");
    }
    let wrong = loaded.errors.len() + loaded.issues.len();
    if strict && wrong > 0 {
        eprintln!("lobby: --strict: {wrong} problems in the sources: nothing written");
        return Err(ExitCode::from(2));
    }
    if loaded.files.is_empty() {
        eprintln!("lobby: no usable .toml file under {}", dir.display());
        return Err(ExitCode::from(2));
    }
    Ok(loaded)
}

/// 0, or 3 when entries or files were skipped.
fn done_code(loaded: Option<&Loaded>) -> ExitCode {
    match loaded {
        Some(l) if l.skipped() + l.errors.len() > 0 => ExitCode::from(3),
        _ => ExitCode::SUCCESS,
    }
}

fn problems_json(loaded: Option<&Loaded>) -> Value {
    let Some(l) = loaded else {
        return json!({"skipped": 0, "warnings": 0, "files_refused": 0});
    };
    json!({
        "skipped": l.skipped(),
        "warnings": l.warnings(),
        "files_refused": l.errors.len(),
        "problems": l.errors.iter().cloned()
            .chain(l.issues.iter().map(|i| i.to_string()))
            .collect::<Vec<_>>(),
    })
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

fn summary(json: bool, v: Value, text: String) {
    if json {
        println!("{v}");
    } else {
        println!("{text}");
    }
}

async fn probe(a: ProbeArgs) -> Result<ExitCode> {
    let grace = match grace_secs(a.grace_hours) {
        Ok(g) => g,
        Err(e) => return bad_input(e),
    };
    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= 60.0) || a.rate == 0 {
        return bad_input("--timeout must be 0 to 60 seconds and --rate at least 1");
    }
    let loaded = match read_sources(&a.sources, a.strict) {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let state_path = a
        .state
        .clone()
        .unwrap_or_else(|| a.output.join("state.json"));
    let mut catalog = Catalog::new();
    catalog.set_curated(&loaded.files)?;
    match read_json(&state_path) {
        // A master's state file keeps the list under "list".
        Ok(Some(v)) if state_kind(&v) == Ok(StateKind::Master) => {
            restore_state(&mut catalog, v.get("list").unwrap_or(&json!({})));
        }
        Ok(Some(v)) => {
            restore_state(&mut catalog, &v);
        }
        Ok(None) => {}
        // probe.py starts over from a broken state; so does this, loudly.
        Err(e) => eprintln!("lobby: {e}; starting with an empty state"),
    }
    let catalog = Mutex::new(catalog);
    let unresolved = resolve_once(&catalog).await;
    for n in &unresolved {
        eprintln!("lobby: {n} does not resolve");
    }
    let total = lock(&catalog).targets(&Default::default()).len();
    let cfg = ProberConfig {
        rate: a.rate,
        attempt_timeout: Duration::from_secs_f64(a.timeout),
        ..ProberConfig::default()
    };
    let tty = std::io::stderr().is_terminal();
    eprintln!(
        "probing {total} addresses across {} gamedirs (try timeout {}s, grace {}h)",
        loaded.files.len(),
        a.timeout,
        a.grace_hours
    );
    let start = Instant::now();
    let started_wall = udp::time::unix_secs();
    let mut last_shown = Instant::now();
    let counts = probe_once(&catalog, cfg, |done, total| {
        if tty && (last_shown.elapsed() >= Duration::from_millis(200) || done == total) {
            eprint!("\r  {done}/{total} probed");
            last_shown = Instant::now();
        }
    })
    .await
    .context("cannot probe")?;
    if tty {
        eprintln!();
    }
    let now = udp::time::unix_secs();
    let mut c = lock(&catalog);
    c.take_sample(now, now - started_wall + 1, &[]);
    let pruned = c.prune(now, 30 * 86_400);
    let answered = c
        .entries()
        .filter(|(_, e)| e.sources != 0 && e.last_seen.is_some_and(|s| s >= started_wall))
        .count();
    let published = c.published(now, grace).len();
    let gamedirs = write_tree(&c, &a.output, now, grace)
        .with_context(|| format!("cannot write the tree under {}", a.output.display()))?;
    if a.state.is_some() {
        std::fs::write(&state_path, crate::export::state_text(&c))
            .with_context(|| format!("cannot write {}", state_path.display()))?;
    }
    summary(
        a.json,
        merge(
            json!({
                "addresses": total, "answered": answered, "published": published,
                "pruned": pruned, "unresolved": unresolved, "gamedirs": gamedirs,
                "datagrams_sent": counts.datagrams_out, "bytes_sent": counts.bytes_out,
                "seconds": start.elapsed().as_secs_f64(),
            }),
            problems_json(Some(&loaded)),
        ),
        format!(
            "done: {answered} entries answered, {published} published, {pruned} pruned from state, {} entries skipped; {} datagrams sent in {:.1} s; tree in {}",
            loaded.skipped(),
            counts.datagrams_out,
            start.elapsed().as_secs_f64(),
            a.output.display()
        ),
    );
    Ok(done_code(Some(&loaded)))
}

async fn export(a: ExportArgs) -> Result<ExitCode> {
    let grace = match grace_secs(a.grace_hours) {
        Ok(g) => g,
        Err(e) => return bad_input(e),
    };
    let v = match read_json(&a.state) {
        Ok(Some(v)) => v,
        Ok(None) => return bad_input(format!("{} does not exist", a.state.display())),
        Err(e) => return bad_input(e),
    };
    let kind = match state_kind(&v) {
        Ok(k) => k,
        Err(e) => return bad_input(format!("{} {e}", a.state.display())),
    };
    let loaded = match &a.sources {
        Some(dir) => match read_sources(dir, a.strict) {
            Ok(l) => Some(l),
            Err(code) => return Ok(code),
        },
        None if kind == StateKind::ProbePy => {
            return bad_input(format!(
                "{} is probe.py's state.json, which keeps no protocol and no force: pass --sources DIR (the servers/ directory probe.py read)",
                a.state.display()
            ))
        }
        None => None,
    };
    let now = udp::time::unix_secs();
    let mut c = Catalog::new();
    // A master's state file holds the list under "list" and its heartbeat servers
    // under "servers"; the others are the list itself.
    let list = match kind {
        StateKind::Master => v.get("list").cloned().unwrap_or(json!({})),
        _ => v.clone(),
    };
    match &loaded {
        // probe.py's way: the sources say what is listed and how, the state when
        // each answered last.
        Some(l) => {
            c.set_curated(&l.files)?;
            restore_state(&mut c, &list);
        }
        None => {
            restore_published(&mut c, &list);
        }
    }
    let mut heartbeat = 0;
    if kind == StateKind::Master {
        for s in v["servers"].as_array().into_iter().flatten() {
            let addr = s
                .get("addr")
                .and_then(Value::as_str)
                .and_then(|a| a.parse().ok());
            let gamedir: Option<Vec<u8>> = s.get("gamedir").and_then(Value::as_array).map(|g| {
                g.iter()
                    .filter_map(Value::as_u64)
                    .map(|b| b as u8)
                    .collect()
            });
            if let (Some(addr), Some(g)) = (addr, gamedir) {
                let g = String::from_utf8_lossy(&g).into_owned();
                if crate::curated::gamedir_of(&format!("{g}.toml")).is_some() {
                    c.add_heartbeat(&g, addr, now);
                    heartbeat += 1;
                }
            }
        }
    }
    let c = Mutex::new(c);
    let unresolved = resolve_once(&c).await;
    for n in &unresolved {
        eprintln!("lobby: {n} does not resolve (not published)");
    }
    let c = c.into_inner().unwrap_or_else(|e| e.into_inner());
    let published_lines = c.published(now, grace);
    if c.gamedir_counts(&published_lines).is_empty() {
        return bad_input(format!(
            "{} lists no gamedir: nothing to publish, nothing written",
            a.state.display()
        ));
    }
    let published = published_lines.len();
    let gamedirs = write_tree(&c, &a.output, now, grace)
        .with_context(|| format!("cannot write the tree under {}", a.output.display()))?;
    summary(
        a.json,
        merge(
            json!({"published": published, "heartbeat_servers": heartbeat, "gamedirs": gamedirs, "unresolved": unresolved}),
            problems_json(loaded.as_ref()),
        ),
        format!(
            "{published} servers published in {} gamedirs ({heartbeat} from heartbeats); tree in {}",
            gamedirs.len(),
            a.output.display()
        ),
    );
    Ok(done_code(loaded.as_ref()))
}
