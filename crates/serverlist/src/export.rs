//! probe.py's files: `state.json` (read and written with the same keys, so an operator
//! can switch between probe.py and lobby either way) and the static tree
//! (`v1/servers/<gamedir>`, `v1/gamedirs`, `state.json`, `index.html`, `.nojekyll`).
//!
//! `state.json`: `{ "<gamedir>": { "<address>": { "last_attempt": ISO8601,
//! "last_seen": ISO8601, "last_ping_ms": N } }, "samples": { "<gamedir>":
//! [[unix_ts, players], ...] } }`, pretty-printed with sorted keys as Python's
//! `json.dump(indent=2, sort_keys=True)`. lobby adds, per address, `resolved`,
//! `directive` and `info`; probe.py keeps keys it does not know.

use crate::catalog::{source, Catalog, Entry, ProbeInfo};
use crate::masterlist::Directive;
use crate::publish::{gamedirs_body, servers_body};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Hours of samples the hour-of-day heat map covers (probe.py: 14 days).
pub const HOUR_WINDOW_SECS: i64 = 14 * 24 * 3600;
/// Seconds of samples the weekday heat map covers (probe.py: 6 weeks).
pub const WEEKDAY_WINDOW_SECS: i64 = 6 * 7 * 24 * 3600;

/// `2026-12-03T09:20:31+00:00` (Python's `isoformat()` of a UTC time).
pub fn iso(t: i64) -> String {
    let d =
        time::OffsetDateTime::from_unix_timestamp(t).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let f =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]+00:00");
    d.format(&f).unwrap_or_default()
}

/// Reads an ISO 8601 time as Python's `fromisoformat` writes it (with an offset, or
/// none meaning UTC).
pub fn parse_iso(s: &str) -> Option<i64> {
    use time::format_description::well_known::Rfc3339;
    let t = time::OffsetDateTime::parse(s, &Rfc3339)
        .or_else(|_| time::OffsetDateTime::parse(&format!("{s}Z"), &Rfc3339))
        .ok()?;
    Some(t.unix_timestamp())
}

/// A round trip of `us` µs as probe.py's `last_ping_ms`: a float of ms with its
/// fraction, as xash3d-query's `ping` (`0.203`, `41.0`).
pub fn ping_ms_json(us: u32) -> Value {
    Value::from(f64::from(us) / 1000.0)
}

/// Which program wrote a state file's text (`lobby master export` and
/// `lobby master --state` read all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// A lobby master's state file (`version`, `servers`, the list under `list`).
    Master,
    /// A list state written by lobby (`lobby master probe`, `export`): probe.py's
    /// keys plus each entry's `sources` and `directive`.
    Lobby,
    /// probe.py's own `state.json`: no protocol and no `force` (they are in the
    /// sources), only the times and the ping.
    ProbePy,
}

/// Why a state file cannot be read as a list state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateShapeError {
    /// Not a JSON object.
    #[error("is not a JSON object (probe.py's state.json or a lobby state file)")]
    NotAnObject,
    /// A gamedir's value is not an object of addresses.
    #[error("key {0:?} is not an object of addresses (probe.py's state.json has gamedir → address → times)")]
    NotAGamedir(String),
}

/// What `v` is: a master's state file, a list state lobby wrote, or probe.py's
/// `state.json` (an object of gamedirs, each an object of addresses, and `samples`).
pub fn state_kind(v: &Value) -> Result<StateKind, StateShapeError> {
    let root = v.as_object().ok_or(StateShapeError::NotAnObject)?;
    if root.get("version").is_some_and(Value::is_u64)
        && root.get("servers").is_some_and(Value::is_array)
    {
        return Ok(StateKind::Master);
    }
    let mut lobby = false;
    for (g, addrs) in root.iter().filter(|(g, _)| *g != "samples") {
        let addrs = addrs
            .as_object()
            .ok_or_else(|| StateShapeError::NotAGamedir(g.clone()))?;
        lobby |= addrs
            .values()
            .any(|e| e.get("sources").is_some() || e.get("directive").is_some());
    }
    Ok(if lobby {
        StateKind::Lobby
    } else {
        StateKind::ProbePy
    })
}

/// The catalog as `state.json`.
pub fn state_json(c: &Catalog) -> Value {
    let mut root = Map::new();
    for ((g, a), e) in c.entries() {
        let gd = root
            .entry(g.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        let mut m = Map::new();
        if let Some(t) = e.last_attempt {
            m.insert("last_attempt".into(), iso(t).into());
        }
        if let Some(t) = e.last_seen {
            m.insert("last_seen".into(), iso(t).into());
        }
        if let Some(t) = e.first_seen {
            m.insert("first_seen".into(), iso(t).into());
        }
        if let Some(us) = e.last_ping_us {
            m.insert("last_ping_ms".into(), ping_ms_json(us));
        }
        if let Some(r) = e.resolved {
            m.insert("resolved".into(), r.to_string().into());
        }
        if let Some(d) = e.directive {
            m.insert("directive".into(), d.as_str().into());
        }
        if let Some(i) = &e.info {
            m.insert(
                "info".into(),
                serde_json::to_value(i).unwrap_or(Value::Null),
            );
        }
        if e.sources != 0 {
            m.insert("sources".into(), json!(source::names(e.sources)));
        }
        if e.force {
            m.insert("force".into(), true.into());
        }
        if let Value::Object(gd) = gd {
            gd.insert(a.clone(), Value::Object(m));
        }
    }
    let samples: Map<String, Value> = c
        .samples()
        .iter()
        .map(|(g, v)| {
            (
                g.clone(),
                json!(v
                    .iter()
                    .map(|(t, n)| [*t, i64::from(*n)])
                    .collect::<Vec<_>>()),
            )
        })
        .collect();
    root.insert("samples".into(), Value::Object(samples));
    Value::Object(root)
}

/// Puts a `state.json` back into `c` (whose sources were set first): what is not
/// understood is skipped, never an error (probe.py reads a broken state as empty).
/// Returns the entries read.
pub fn restore_state(c: &mut Catalog, v: &Value) -> usize {
    restore(c, v, false)
}

/// Reads a state as it was published when saved: each entry's sources and force
/// flag as the state recorded them (`lobby master export`, which has no sources).
pub fn restore_published(c: &mut Catalog, v: &Value) -> usize {
    let n = restore(c, v, true);
    c.recount_listed();
    n
}

fn restore(c: &mut Catalog, v: &Value, keep_sources: bool) -> usize {
    let Some(root) = v.as_object() else { return 0 };
    let mut n = 0;
    for (g, addrs) in root {
        if g == "samples" {
            continue;
        }
        let Some(addrs) = addrs.as_object() else {
            continue;
        };
        for (a, e) in addrs {
            let s = |k: &str| e.get(k).and_then(Value::as_str);
            let sources = e
                .get("sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .fold(0u8, |b, n| b | source::bit(n));
            let entry = Entry {
                directive: match s("directive") {
                    Some("gs") => Some(Directive::Gs),
                    Some("ip") => Some(Directive::Ip),
                    _ => None,
                },
                force: keep_sources && e.get("force").and_then(Value::as_bool) == Some(true),
                sources: if keep_sources { sources } else { 0 },
                resolved: s("resolved").and_then(|r| r.parse().ok()),
                last_attempt: s("last_attempt").and_then(parse_iso),
                last_seen: s("last_seen").and_then(parse_iso),
                first_seen: s("first_seen").and_then(parse_iso),
                last_ping_us: e
                    .get("last_ping_ms")
                    .and_then(Value::as_f64)
                    .map(|p| (p * 1000.0).round().clamp(0.0, f64::from(u32::MAX)) as u32),
                info: e
                    .get("info")
                    .and_then(|i| serde_json::from_value::<ProbeInfo>(i.clone()).ok()),
            };
            c.restore_entry((g.clone(), a.clone()), entry, keep_sources);
            n += 1;
        }
    }
    if let Some(samples) = root.get("samples").and_then(Value::as_object) {
        for (g, list) in samples {
            let v: Vec<(i64, u32)> = list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| {
                    let p = p.as_array()?;
                    let t = p.first()?.as_f64()? as i64;
                    let n = p.get(1)?.as_f64()?.clamp(0.0, f64::from(u32::MAX)) as u32;
                    Some((t, n))
                })
                .collect();
            c.restore_samples(g.clone(), v);
        }
    }
    n
}

/// `state.json`'s text: two-space indent, sorted keys, as probe.py writes it.
pub fn state_text(c: &Catalog) -> String {
    let mut s = serde_json::to_string_pretty(&state_json(c)).unwrap_or_default();
    s.push('\n');
    s
}

/// The median of `v` (the mean of the middle two for an even count), as Python's
/// `statistics.median`.
fn median(v: &mut [u32]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        f64::from(v[n / 2])
    } else {
        (f64::from(v[n / 2 - 1]) + f64::from(v[n / 2])) / 2.0
    })
}

/// One gamedir's heat map cells: medians by UTC hour, and by weekday (Monday first).
pub type HeatRows = ([Option<f64>; 24], [Option<f64>; 7]);

/// The heat maps' cells: per gamedir, the median players per UTC hour (samples of
/// the last 14 days) and per weekday, Monday first (the last 6 weeks).
pub fn heat_maps(c: &Catalog, now: i64) -> BTreeMap<String, HeatRows> {
    let mut out = BTreeMap::new();
    for (g, samples) in c.samples() {
        let mut hours: Vec<Vec<u32>> = vec![Vec::new(); 24];
        let mut days: Vec<Vec<u32>> = vec![Vec::new(); 7];
        for &(t, n) in samples {
            let Ok(d) = time::OffsetDateTime::from_unix_timestamp(t) else {
                continue;
            };
            if t >= now - HOUR_WINDOW_SECS {
                hours[usize::from(d.hour())].push(n);
            }
            if t >= now - WEEKDAY_WINDOW_SECS {
                days[usize::from(d.weekday().number_days_from_monday())].push(n);
            }
        }
        let mut h = [None; 24];
        for (i, b) in hours.iter_mut().enumerate() {
            h[i] = median(b);
        }
        let mut w = [None; 7];
        for (i, b) in days.iter_mut().enumerate() {
            w[i] = median(b);
        }
        out.insert(g.clone(), (h, w));
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

fn fmt_cell(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(v) if v.fract() == 0.0 => format!("{}", v as i64),
        Some(v) => format!("{v:.1}"),
    }
}

/// `v` as Python's `format(v, "g")`: six significant digits, trailing zeros dropped
/// (probe.py writes the heat maps' coordinates so: `123.429`, not
/// `123.42857142857143`).
pub fn py_g(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

/// One heat map as SVG, in probe.py's layout and colours.
fn heat_svg(rows: &[(&str, Vec<Option<f64>>)], labels: &[String]) -> String {
    let (cell_h, label_w, width) = (30.0, 90.0, 90.0 + 24.0 * 36.0);
    let cell_w = (width - label_w) / labels.len() as f64;
    let height = (rows.len() + 1) as f64 * cell_h;
    let vmax = rows
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b));
    let color = |v: Option<f64>| match v {
        None => "#f3f4f6".to_string(),
        Some(_) if vmax <= 0.0 => "#eef2ff".to_string(),
        Some(v) => {
            let t = (v / vmax).powf(0.6);
            let ch = |a: f64, b: f64| (a + (b - a) * t) as u8;
            format!(
                "#{:02x}{:02x}{:02x}",
                ch(238.0, 49.0),
                ch(242.0, 46.0),
                ch(255.0, 129.0)
            )
        }
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {height}\" width=\"100%\" style=\"max-width:{}px\" font-family=\"system-ui,sans-serif\" font-size=\"11\">\n",
        py_g(width),
        py_g(width)
    );
    for (i, l) in labels.iter().enumerate() {
        let x = label_w + (i as f64 + 0.5) * cell_w;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"19\" text-anchor=\"middle\" fill=\"#6b7280\">{}</text>",
            py_g(x),
            esc(l)
        );
    }
    for (r, (g, cells)) in rows.iter().enumerate() {
        let y = (r + 1) as f64 * cell_h;
        let _ = writeln!(
            s,
            "<text x=\"82\" y=\"{}\" text-anchor=\"end\" fill=\"#1f2937\">{}</text>",
            y + 19.0,
            esc(g)
        );
        for (i, v) in cells.iter().enumerate() {
            let x = label_w + i as f64 * cell_w;
            let label = fmt_cell(*v);
            let title = if label.is_empty() {
                "no samples".to_string()
            } else {
                label.clone()
            };
            let _ = writeln!(
                s,
                "<rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"29\" fill=\"{}\"><title>{} {}: {}</title></rect>",
                py_g(x),
                py_g(cell_w - 1.0),
                color(*v),
                esc(g),
                esc(&labels[i]),
                title
            );
            if let Some(val) = v {
                let fg = if vmax > 0.0 && val / vmax > 0.45 {
                    "#ffffff"
                } else {
                    "#1f2937"
                };
                let cx = label_w + (i as f64 + 0.5) * cell_w;
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{fg}\">{label}</text>",
                    py_g(cx),
                    y + 19.0
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// `index.html`: the two heat maps per gamedir and links to every list.
pub fn index_html(c: &Catalog, gamedirs: &[String], now: i64) -> String {
    let maps = heat_maps(c, now);
    let none = ([None; 24], [None; 7]);
    let hour_rows: Vec<(&str, Vec<Option<f64>>)> = gamedirs
        .iter()
        .map(|g| (g.as_str(), maps.get(g).unwrap_or(&none).0.to_vec()))
        .collect();
    let day_rows: Vec<(&str, Vec<Option<f64>>)> = gamedirs
        .iter()
        .map(|g| (g.as_str(), maps.get(g).unwrap_or(&none).1.to_vec()))
        .collect();
    let hours: Vec<String> = (0..24).map(|h| format!("{h:02}")).collect();
    let days: Vec<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        .map(String::from)
        .to_vec();
    let links: String = gamedirs
        .iter()
        .map(|g| {
            format!(
                "<li><a href=\"v1/servers/{0}\">v1/servers/{0}</a></li>\n",
                esc(g)
            )
        })
        .collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<meta charset=\"utf-8\">\n<title>Xash3D FWGS server list</title>\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<style>\nbody {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1f2937; }}\n.muted {{ color: #6b7280; }}\n.heatmap {{ overflow-x: auto; margin: 1rem 0; }}\n</style>\n<h1>Xash3D FWGS server list</h1>\n<p class=\"muted\">Generated {}.</p>\n\n<h2>Median concurrent players, by UTC hour, last 14 days</h2>\n<div class=\"heatmap\">\n{}\n</div>\n\n<h2>Median concurrent players, by UTC weekday, last 6 weeks</h2>\n<div class=\"heatmap\">\n{}\n</div>\n\n<h2>Lists</h2>\n<ul>\n{}</ul>\n\n<p>Published by lobby.</p>\n",
        iso(now),
        heat_svg(&hour_rows, &hours),
        heat_svg(&day_rows, &days),
        links
    )
}

/// Writes probe.py's tree under `dir` at `now`: `v1/servers/<gamedir>` for every
/// gamedir in the sources (empty ones too), `v1/gamedirs`, `state.json`,
/// `index.html`, `.nojekyll`. Each file is written whole then renamed into place.
/// Returns the gamedirs written.
pub fn write_tree(c: &Catalog, dir: &Path, now: i64, grace: i64) -> std::io::Result<Vec<String>> {
    let servers_dir = dir.join("v1").join("servers");
    std::fs::create_dir_all(&servers_dir)?;
    let published = c.published(now, grace);
    let counts = c.gamedir_counts(&published);
    // Names that came from a state file could be anything: only game directory
    // names become file names.
    let gamedirs: Vec<String> = counts
        .keys()
        .filter(|g| crate::curated::gamedir_of(&format!("{g}.toml")).is_some())
        .cloned()
        .collect();
    for g in &gamedirs {
        let lines = published.iter().filter(|p| &p.gamedir == g);
        write_file(&servers_dir.join(g), servers_body(g, now, lines).as_bytes())?;
    }
    write_file(
        &dir.join("v1").join("gamedirs"),
        gamedirs_body(now, &counts).as_bytes(),
    )?;
    write_file(&dir.join("state.json"), state_text(c).as_bytes())?;
    write_file(
        &dir.join("index.html"),
        index_html(c, &gamedirs, now).as_bytes(),
    )?;
    write_file(&dir.join(".nojekyll"), b"")?;
    Ok(gamedirs)
}

fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curated;

    #[test]
    fn iso_times_as_python_writes_and_reads_them() {
        assert_eq!(iso(1_700_000_000), "2023-11-14T22:13:20+00:00");
        assert_eq!(parse_iso("2023-11-14T22:13:20+00:00"), Some(1_700_000_000));
        assert_eq!(parse_iso("2023-11-14T22:13:20"), Some(1_700_000_000));
        assert_eq!(parse_iso("2023-11-14T23:13:20+01:00"), Some(1_700_000_000));
        assert_eq!(parse_iso("yesterday"), None);
    }

    #[test]
    fn a_probe_py_state_reads_and_writes_back_with_its_keys() {
        let probe_py = r#"{
  "samples": {
    "valve": [[1700000000, 5], [1700003600, 7]]
  },
  "valve": {
    "192.0.2.1:27015": {
      "last_attempt": "2023-11-14T22:13:20+00:00",
      "last_ping_ms": 41,
      "last_seen": "2023-11-14T22:13:20+00:00"
    },
    "old.example.org:27015": {
      "last_attempt": "2023-11-14T22:13:20+00:00"
    }
  }
}"#;
        let files = curated::parse("[[server]]\naddress = \"192.0.2.1:27015\"\n", "valve.toml")
            .unwrap()
            .servers;
        let mut c = Catalog::new();
        c.set_curated(&BTreeMap::from([("valve".to_string(), files)]))
            .unwrap();
        let v: Value = serde_json::from_str(probe_py).unwrap();
        assert_eq!(restore_state(&mut c, &v), 2);
        let e = c.get("valve", "192.0.2.1:27015").unwrap();
        assert_eq!(
            (e.last_seen, e.last_ping_us),
            (Some(1_700_000_000), Some(41_000))
        );
        assert_eq!(
            e.sources,
            crate::catalog::source::CURATED,
            "sources come from the files"
        );
        let back = state_json(&c);
        assert_eq!(
            back["valve"]["192.0.2.1:27015"]["last_seen"],
            "2023-11-14T22:13:20+00:00"
        );
        assert_eq!(back["valve"]["192.0.2.1:27015"]["last_ping_ms"], 41.0);
        // A sub-millisecond ping stays one (xash3d-query's `0.203`).
        assert_eq!(ping_ms_json(203).to_string(), "0.203");
        assert_eq!(ping_ms_json(1_500).to_string(), "1.5");
        assert_eq!(state_kind(&v), Ok(StateKind::ProbePy));
        assert_eq!(state_kind(&back), Ok(StateKind::Lobby));
        assert_eq!(state_kind(&json!([1])), Err(StateShapeError::NotAnObject));
        assert_eq!(
            state_kind(&json!({"valve": 3})),
            Err(StateShapeError::NotAGamedir("valve".into()))
        );
        assert_eq!(
            state_kind(&json!({"version": 1, "servers": [], "bans": []})),
            Ok(StateKind::Master)
        );
        assert_eq!(
            back["samples"]["valve"],
            json!([[1700000000, 5], [1700003600, 7]])
        );
        assert!(back["valve"]["old.example.org:27015"]["last_seen"].is_null());
        // Python's json.dump(indent=2, sort_keys=True) layout.
        let text = state_text(&c);
        assert!(
            text.starts_with("{\n  \"samples\": {\n    \"valve\": [\n      [\n        1700000000,"),
            "{text}"
        );
        // A broken state is empty, not an error.
        assert_eq!(restore_state(&mut Catalog::new(), &json!([1, 2])), 0);
    }

    #[test]
    fn heat_maps_take_medians_by_utc_hour_and_weekday() {
        let mut c = Catalog::new();
        // 2023-11-13 is a Monday; samples at 10:00 UTC on three Mondays... and one
        // at 11:00.
        let monday = 1_699_869_600; // 2023-11-13T10:00:00Z
        c.restore_samples(
            "valve".into(),
            vec![
                (monday, 2),
                (monday + 3600, 9),
                (monday - 7 * 86_400, 4),
                (monday - 30 * 86_400, 100),
            ],
        );
        let now = monday + 86_400;
        let (h, w) = &heat_maps(&c, now)["valve"];
        assert_eq!(h[10], Some(3.0), "median of 2 and 4 (both within 14 days)");
        assert_eq!(h[11], Some(9.0));
        assert_eq!(h[12], None);
        assert_eq!(
            w[0],
            Some(4.0),
            "median of 2, 9 and 4 (the 100 is a Saturday)"
        );
        let html = index_html(&c, &["valve".to_string()], now);
        assert!(html.contains("<a href=\"v1/servers/valve\">"));
        assert!(html.contains("<title>valve 10: 3</title>"), "{html}");
        // The weekday map's seven columns, at probe.py's precision.
        assert!(
            html.contains("<rect x=\"213.429\" y=\"30\" width=\"122.429\""),
            "{html}"
        );
    }

    #[test]
    fn numbers_as_python_formats_them_with_g() {
        for (v, want) in [
            (0.0, "0"),
            (36.0, "36"),
            (954.0, "954"),
            (123.42857142857143, "123.429"),
            (151.71428571428572, "151.714"),
            (0.5, "0.5"),
            (1_234_567.0, "1.23457e+06"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(py_g(v), want, "{v}");
        }
    }
}
