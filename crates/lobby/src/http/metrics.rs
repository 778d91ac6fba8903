//! `GET /metrics`: the Prometheus text exposition (format 0.0.4) through `metrics` and
//! `metrics-exporter-prometheus`.
//!
//! - **Counters** are the parts' own atomic counters (the ones `/stats` and the
//!   telnet `# stats:` line carry), set absolutely at scrape time from one walk of
//!   [`crate::http::counters::sections`]: the engines stay free of any metrics code.
//! - **Gauges** (pilots local/remote, servers per gamedir, relays up/down, open
//!   connections and streams) are set at scrape time from the same counters and from
//!   the API's snapshot (at most a second old).
//! - **Histograms** are recorded where the event happens (`crate::recorder`).
//!
//! Every family is declared once, next to the counters that feed it
//! (`telemetry::families!`): each engine's and service's own, and here the few that
//! the binary alone sets. [`TABLES`] lists them all in docs order: `docs/API.md`'s
//! table is [`telemetry::doc_table`] of it (a test compares them).

use crate::http::counters::Section;
use crate::http::snapshot::Snapshot;
use crate::http::state::AppState;
use lifecycle::lock;
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use std::collections::HashMap;
use telemetry::{Kind, Table};

/// The families of the process itself (each part declares its own, the histograms
/// and gauges the binary sets for it included).
pub mod families {
    use telemetry::Family;

    telemetry::families! {
        /// The process.
        pub const BUILD;
        BUILD_INFO = Family::gauge(
            "lobby_build_info",
            "Always 1; the version of the running lobby as a label.",
        )
        .label("version")
        .label_doc("`version`")
        .elsewhere();
    }

    telemetry::families! {
        /// The supervisor's.
        pub const PROCESS;
        WORKER_RESTARTS = Family::counter(
            "lobby_worker_restarts_total",
            "UDP worker threads restarted after a panic, by part.",
        )
        .label("part")
        .label_doc("`part`: relay-udp, master-udp")
        .elsewhere();
    }
}

/// A table of families no counter feeds.
macro_rules! set_elsewhere {
    ($($name:ident = $families:path;)+) => {
        $(const $name: &Table = &Table {
            families: $families,
            counters: &[],
        };)+
    };
}

set_elsewhere! {
    BUILD = families::BUILD;
    PROCESS = families::PROCESS;
}

/// Every family `/metrics` exposes, in docs order.
pub const TABLES: &[&Table] = &[
    BUILD,
    relay::Stats::TABLE,
    api::chat::ChatStats::TABLE,
    master::Stats::TABLE,
    serverlist::stats::ListStats::TABLE,
    directory::stats::Stats::TABLE,
    crate::http::conn::HttpStats::TABLE,
    crate::services::history::HistoryStats::TABLE,
    crate::services::tracker::server::TrackerStats::TABLE,
    crate::http::admin_state::AdminStats::TABLE,
    PROCESS,
];

/// Describes every family to the recorder (once: the first scrape does it).
fn describe() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        for f in TABLES.iter().flat_map(|t| t.families) {
            match f.kind {
                Kind::Counter => describe_counter!(f.name, f.help),
                Kind::Gauge => describe_gauge!(f.name, f.help),
                Kind::Histogram if f.name.ends_with("_seconds") => {
                    describe_histogram!(f.name, Unit::Seconds, f.help)
                }
                Kind::Histogram => describe_histogram!(f.name, f.help),
            }
        }
    });
}

/// Sets every series of one part's counters to its value.
fn set(section: &Section) {
    for (def, value) in &section.readings {
        let s = def.series();
        let (name, v) = (s.family.name, *value);
        match (s.family.kind, s.label) {
            (Kind::Counter, None) => metrics::counter!(name).absolute(v),
            (Kind::Counter, Some((k, l))) => metrics::counter!(name, k => l).absolute(v),
            (Kind::Gauge, None) => metrics::gauge!(name).set(v as f64),
            (Kind::Gauge, Some((k, l))) => metrics::gauge!(name, k => l).set(v as f64),
            (Kind::Histogram, _) => {} // never backed by a counter (checked at compile time)
        }
    }
}

/// Gamedirs exposed one by one; the rest are summed under `(other)`.
const MAX_GAMEDIRS: usize = 20;

/// The largest `MAX_GAMEDIRS` gamedirs by servers (ties by name), then `(other)`.
/// Gamedirs are chosen by whoever registers a server: without the cap, strangers
/// could create a series each.
pub fn top_gamedirs<'a>(gamedirs: &[&'a str]) -> Vec<(String, u64)> {
    let mut n: HashMap<&'a str, u64> = HashMap::new();
    for g in gamedirs {
        *n.entry(g).or_default() += 1;
    }
    let mut v: Vec<(&str, u64)> = n.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let rest: u64 = v.iter().skip(MAX_GAMEDIRS).map(|x| x.1).sum();
    let mut out: Vec<(String, u64)> = v
        .into_iter()
        .take(MAX_GAMEDIRS)
        .map(|(g, c)| (g.to_string(), c))
        .collect();
    if rest > 0 {
        out.push(("(other)".into(), rest));
    }
    out
}

/// Sets every counter and gauge from the parts and the snapshot `snap`, then renders
/// the exposition. `None`: no recorder (another one was installed).
pub fn render(state: &AppState, snap: &Snapshot) -> Option<String> {
    let h = crate::recorder::install()?;
    describe();
    metrics::gauge!("lobby_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    for section in crate::http::counters::sections(state) {
        set(&section);
    }
    let src = &state.sources;
    if let Some(servers) = snap.servers() {
        let gamedirs: Vec<&str> = servers.iter().map(|e| e.gamedir.as_str()).collect();
        for (gamedir, n) in top_gamedirs(&gamedirs) {
            metrics::gauge!("lobby_master_servers", "gamedir" => gamedir).set(n as f64);
        }
    }
    if let Some(d) = &src.directory {
        metrics::gauge!("lobby_dns_zone_serial").set(f64::from(lock(d).serial()));
        let up = snap.published().iter().filter(|r| r.up).count();
        let down = snap.published().len() - up;
        metrics::gauge!("lobby_dns_relays", "state" => "up").set(up as f64);
        metrics::gauge!("lobby_dns_relays", "state" => "down").set(down as f64);
    }
    metrics::gauge!("lobby_http_open_streams").set(state.publisher.open_streams() as f64);
    if let Some(r) = &src.restarts {
        for (part, n) in lock(r).iter() {
            metrics::counter!("lobby_worker_restarts_total", "part" => part.clone()).absolute(*n);
        }
    }
    h.run_upkeep();
    Some(h.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_a_family_and_a_series_of_its_own() {
        for t in TABLES {
            assert_eq!(t.problems(), vec![], "{t:?}");
        }
        assert_eq!(telemetry::problems_across(TABLES), vec![]);
    }

    #[test]
    fn names_follow_prometheus_rules() {
        for f in TABLES.iter().flat_map(|t| t.families) {
            assert!(f.name.starts_with("lobby_"), "{}", f.name);
            assert!(
                f.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                f.name
            );
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
            assert!(!f.help.is_empty());
        }
        let histograms: Vec<&str> = TABLES
            .iter()
            .flat_map(|t| t.families)
            .filter(|f| f.kind == Kind::Histogram)
            .map(|f| f.name)
            .collect();
        let bucketed: Vec<&str> = crate::recorder::BUCKETS.iter().map(|b| b.0).collect();
        assert_eq!(histograms, bucketed, "every histogram has its buckets");
        for (name, bounds) in crate::recorder::BUCKETS {
            assert!(bounds.windows(2).all(|w| w[0] < w[1]), "{name}");
        }
    }

    /// The table in `docs/API.md` is generated from the declarations: a family, a
    /// label value or a help text changed in code and not in the docs fails here.
    /// `LOBBY_UPDATE_DOCS=1 cargo test -p lobby --lib metrics` rewrites it.
    #[test]
    fn the_api_document_holds_the_generated_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/API.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let want = telemetry::doc_table(TABLES);
        let start = doc
            .find("| family | type | labels | meaning |")
            .expect("docs/API.md has the metrics table");
        let end = doc[start..]
            .find("\n\n")
            .map_or(doc.len(), |e| start + e + 1);
        if doc[start..end] != want && std::env::var_os("LOBBY_UPDATE_DOCS").is_some() {
            let updated = format!("{}{}{}", &doc[..start], want, &doc[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert_eq!(
            doc[start..end],
            want,
            "docs/API.md's metrics table differs from the declarations; \
             LOBBY_UPDATE_DOCS=1 cargo test -p lobby --lib metrics rewrites it"
        );
    }

    #[test]
    fn stranger_chosen_gamedirs_are_capped() {
        let mut dirs: Vec<String> = (0..100).map(|i| format!("mod{i}")).collect();
        dirs.extend(std::iter::repeat_n("valve".to_string(), 5));
        let refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        let top = top_gamedirs(&refs);
        assert_eq!(top.len(), MAX_GAMEDIRS + 1);
        assert_eq!(top[0], ("valve".to_string(), 5));
        assert_eq!(top.last().unwrap(), &("(other)".to_string(), 81));
        assert_eq!(top.iter().map(|x| x.1).sum::<u64>(), 105);
        assert!(top_gamedirs(&[]).is_empty());
    }
}
