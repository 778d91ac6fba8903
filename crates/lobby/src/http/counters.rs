//! Every part's counters, walked once: `/stats` (JSON, one object per part) and
//! `/metrics` (`crate::http::metrics`) read the same [`sections`].

use crate::http::state::AppState;
use lifecycle::lock;
use telemetry::{Counters, Def};

/// One part's counters: its `/stats` section and each counter's declaration and value.
pub struct Section {
    /// The `/stats` key of the part.
    pub name: &'static str,
    /// (declaration, value) of each counter, in `/stats` order.
    pub readings: Vec<(&'static Def, u64)>,
}

fn section(name: &'static str, c: &dyn Counters) -> Section {
    Section {
        name,
        readings: c.readings(),
    }
}

/// The counters of every part that runs here (the admin API's only while it is on).
pub fn sections(s: &AppState) -> Vec<Section> {
    let src = &s.sources;
    let mut out = Vec::new();
    if let Some(r) = &src.relay {
        let stats = lock(r).stats().clone();
        out.push(section("relay", &*stats));
    }
    if src.relay.is_some() {
        out.push(section("chat", &lock(&s.publisher.chat).stats));
    }
    if let Some(m) = &src.master {
        let stats = lock(m).stats().clone();
        out.push(section("master", &*stats));
    }
    if let Some(l) = &src.list {
        out.push(section("list", &l.stats));
    }
    if let Some(d) = &src.directory {
        let stats = lock(d).stats().clone();
        out.push(section("dns", &*stats));
    }
    if let Some(h) = &src.history {
        out.push(section("history", &*h.stats));
    }
    if let Some(t) = &src.tracker {
        out.push(section("tracker", &**t));
    }
    if let Some(a) = s.admin.as_ref().filter(|a| a.is_on()) {
        out.push(section("admin", &*a.stats));
    }
    out.push(section("http", &*s.stats));
    out
}

/// `/stats`: every part's counters by `/stats` key, and the worker restarts by part.
pub fn stats_json(s: &AppState) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    for sec in sections(s) {
        let counters: serde_json::Map<String, serde_json::Value> = sec
            .readings
            .iter()
            .map(|(d, v)| (d.key.to_string(), (*v).into()))
            .collect();
        obj.insert(sec.name.into(), counters.into());
    }
    if let Some(r) = &s.sources.restarts {
        let restarts: serde_json::Map<String, serde_json::Value> = lock(r)
            .iter()
            .map(|(k, v)| (k.clone(), (*v).into()))
            .collect();
        obj.insert("worker_restarts".into(), restarts.into());
    }
    serde_json::Value::Object(obj)
}
