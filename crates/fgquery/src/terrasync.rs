//! `lobby fg terrasync`: TerraSync's NAPTR lookup and SimGear's server choice.

use super::args::*;
use super::dns::*;
use anyhow::{anyhow, bail, Result};
use directory::terrasync::{self, NaptrEntry};
use hickory_proto::rr::{RData, RecordType};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;
use std::process::ExitCode;

#[derive(Debug, Serialize)]
struct NaptrJson {
    order: u16,
    preference: u16,
    flags: String,
    service: String,
    regexp: String,
    replacement: String,
}

#[derive(Debug, Serialize)]
struct SkippedJson {
    order: u16,
    preference: u16,
    regexp: String,
    reason: String,
}

#[derive(Debug, Serialize)]
struct TerrasyncReport {
    /// The NAPTR name asked (absent with --override).
    query: Option<String>,
    nameserver: Option<String>,
    service: String,
    /// The URL FlightGear would use.
    url: String,
    /// `override`, `environment` or `dns`.
    source: &'static str,
    /// What DNS picked, when the environment variable replaced it.
    dns_pick: Option<String>,
    /// Candidates of the lowest order and preference, shuffled, the DNS pick first.
    candidates: Vec<String>,
    /// Lowest-order entries skipped for a malformed regexp.
    skipped: Vec<SkippedJson>,
    /// Every NAPTR record in the answer.
    records: Vec<NaptrJson>,
}

pub(super) async fn terrasync_cmd(a: TerrasyncArgs) -> Result<ExitCode> {
    if let Some(url) = &a.override_url {
        // /sim/terrasync/http-server: no DNS at all, the variable is never read.
        print_terrasync(&override_report(&a.service, url), a.dns.json, a.all)?;
        return Ok(ExitCode::SUCCESS);
    }
    let var = terrasync::override_var(&a.service);
    let env_value = std::env::var_os(&var).map(|v| v.to_string_lossy().into_owned());
    let fail = |msg: String| terrasync_failure(&msg, &var, env_value.is_some());
    let dns = match Dns::new(&a.dns) {
        Ok(d) => d,
        Err(e) => return Ok(fail(e.to_string())),
    };
    let query = format!("terrasync.{}.", a.domain);
    let (records, entries) = match naptr_records(&dns, &query).await {
        Ok(r) => r,
        Err(e) => return Ok(fail(e.to_string())),
    };
    let mut rng = a
        .seed
        .map_or_else(StdRng::from_entropy, StdRng::seed_from_u64);
    let (selection, skipped) = match select_warning(&entries, &a.service, &query, &mut rng) {
        Ok(s) => s,
        Err(e) => {
            return Ok(fail(format!(
                "NAPTR {query} via {}: {e} ({} record(s) in the answer)",
                dns.label,
                entries.len()
            )))
        }
    };
    let Some((url, source, dns_pick, candidates)) = apply_environment(env_value, &var, selection)
    else {
        return Ok(ExitCode::from(1));
    };
    let report = TerrasyncReport {
        query: Some(query),
        nameserver: Some(dns.label.clone()),
        service: a.service.clone(),
        url,
        source,
        dns_pick,
        candidates,
        skipped,
        records,
    };
    print_terrasync(&report, a.dns.json, a.all)?;
    Ok(ExitCode::SUCCESS)
}

/// The report of `--override`: that URL alone, no DNS.
fn override_report(service: &str, url: &str) -> TerrasyncReport {
    TerrasyncReport {
        query: None,
        nameserver: None,
        service: service.to_string(),
        url: url.to_string(),
        source: "override",
        dns_pick: None,
        candidates: vec![url.to_string()],
        skipped: Vec::new(),
        records: Vec::new(),
    }
}

/// Reports that no server can be chosen (exit status 1), noting that the
/// environment variable `var`, when set, does not rescue a failed DNS selection.
fn terrasync_failure(msg: &str, var: &str, env_set: bool) -> ExitCode {
    eprintln!("lobby fg terrasync: {msg}");
    if env_set {
        eprintln!(
            "lobby fg terrasync: note: {var} is set, but SimGear applies it only after a successful DNS selection"
        );
    }
    ExitCode::from(1)
}

/// The NAPTR records of `query`, for the report and for the selection; an error
/// when the lookup fails or holds no NAPTR record.
async fn naptr_records(dns: &Dns, query: &str) -> Result<(Vec<NaptrJson>, Vec<NaptrEntry>)> {
    let lookup = dns
        .lookup(query, RecordType::NAPTR)
        .await
        .map_err(|e| anyhow!("NAPTR lookup of {query} via {} failed: {e}", dns.label))?;
    let mut records = Vec::new();
    let mut entries = Vec::new();
    for rec in lookup.answers() {
        if let RData::NAPTR(n) = &rec.data {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            records.push(NaptrJson {
                order: n.order,
                preference: n.preference,
                flags: text(&n.flags),
                service: text(&n.services),
                regexp: text(&n.regexp),
                replacement: n.replacement.to_ascii(),
            });
            entries.push(NaptrEntry {
                order: n.order,
                preference: n.preference,
                flags: text(&n.flags),
                service: text(&n.services),
                regexp: text(&n.regexp),
            });
        }
    }
    if entries.is_empty() {
        bail!(
            "NAPTR lookup of {query} via {}: no NAPTR records in the answer",
            dns.label
        );
    }
    Ok((records, entries))
}

/// SimGear's selection, with a warning on standard error for every malformed
/// lowest-order entry (whether or not a server could be chosen).
fn select_warning(
    entries: &[NaptrEntry],
    service: &str,
    query: &str,
    rng: &mut StdRng,
) -> Result<(terrasync::Selection, Vec<SkippedJson>), directory::Error> {
    let selection = match terrasync::select(entries, service, rng) {
        Ok(s) => s,
        Err(e) => {
            // Name the malformed lowest-order entries that left nothing to choose.
            warn_unsupported_lowest(entries, service, query);
            return Err(e);
        }
    };
    let skipped: Vec<SkippedJson> = selection
        .skipped
        .iter()
        .map(|k| SkippedJson {
            order: k.entry.order,
            preference: k.entry.preference,
            regexp: k.entry.regexp.clone(),
            reason: k.reason.clone(),
        })
        .collect();
    for k in &skipped {
        warn(&format!(
            "{query} NAPTR {} {} \"U\" {service:?}: skipped, {}",
            k.order, k.preference, k.reason
        ));
    }
    Ok((selection, skipped))
}

/// Warns about every lowest-order `U` entry of `service` whose regexp SimGear rejects.
fn warn_unsupported_lowest(entries: &[NaptrEntry], service: &str, query: &str) {
    let matching = entries
        .iter()
        .filter(|n| n.flags == "U" && n.service == service);
    let Some(lowest) = matching.clone().map(|n| n.order).min() else {
        return;
    };
    for n in matching.filter(|n| n.order == lowest) {
        if terrasync::url_of(&n.regexp).is_none() {
            warn(&format!(
                "{query} NAPTR {} {} \"U\" {:?}: unsupported regexp {:?} (must be !^.*$!URL!)",
                n.order, n.preference, n.service, n.regexp
            ));
        }
    }
}

/// SIMGEAR_TERRASYNC_SERVER_<service> replaces the DNS pick: `(url, source, what
/// DNS picked, candidates)`, the candidates being that URL alone when the variable
/// is used. `None` (after saying why) when it is set but empty.
fn apply_environment(
    env_value: Option<String>,
    var: &str,
    selection: terrasync::Selection,
) -> Option<(String, &'static str, Option<String>, Vec<String>)> {
    match env_value {
        Some(v) if v.is_empty() => {
            eprintln!(
                "lobby fg terrasync: {var} is set but empty; SimGear would use the empty string and find no server"
            );
            None
        }
        Some(v) => Some((v.clone(), "environment", Some(selection.url), vec![v])),
        None => Some((selection.url, "dns", None, selection.candidates)),
    }
}

fn print_terrasync(r: &TerrasyncReport, json: bool, all: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    if let Some(pick) = &r.dns_pick {
        eprintln!(
            "lobby fg terrasync: {} overrides the DNS pick {}",
            terrasync::override_var(&r.service),
            printable(pick)
        );
    }
    if all {
        for c in &r.candidates {
            println!("{}", printable(c));
        }
    } else {
        println!("{}", printable(&r.url));
    }
    Ok(())
}
