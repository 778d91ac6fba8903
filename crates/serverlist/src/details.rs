//! What the page asks of one listed server (`GET /api/servers/{addr}/details`): its
//! info, players and rules, asked by the master now, cached [`CACHE_SECS`]; and the
//! list's heat maps (`GET /api/list/heatmaps`).
//!
//! Bounds: only a server the list publishes is asked (the master is no query proxy
//! toward other addresses); at most [`MAX_IN_FLIGHT`] servers are being asked at
//! once (a busy master answers "retry"); each server at most once per
//! [`CACHE_SECS`] whoever asks; the cache holds at most [`MAX_CACHED`] answers.

use crate::catalog::Catalog;
use crate::export::{heat_maps, HOUR_WINDOW_SECS, WEEKDAY_WINDOW_SECS};
use api::servers::{DetailsPlayer, GamedirHeat, HeatmapsBody, ServerDetails};
use query::{Kind, Outcome, QueryOptions};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Seconds an answer is reused.
pub const CACHE_SECS: i64 = 10;
/// Servers asked at once, at most.
pub const MAX_IN_FLIGHT: usize = 8;
/// Answers kept, at most.
pub const MAX_CACHED: usize = 1024;

/// The cache of details, shared by every request.
#[derive(Default)]
pub struct DetailsCache {
    answers: Mutex<HashMap<SocketAddr, Arc<ServerDetails>>>,
    in_flight: AtomicUsize,
    heat: Mutex<Option<Arc<HeatmapsBody>>>,
}

/// Every query's pacing: two tries 1.5 s apart.
fn opts() -> QueryOptions {
    QueryOptions {
        timeout: Duration::from_millis(1500),
        retries: 1,
        concurrency: 1,
        deadline: Some(Duration::from_secs(4)),
    }
}

async fn ask(kind: Kind, addr: SocketAddr) -> Option<Outcome> {
    let r = query::run_many(kind, &[addr], &opts(), |_| {}).await.ok()?;
    r.into_iter().next().map(|(_, o)| o)
}

fn note(o: &Option<Outcome>) -> String {
    match o {
        Some(Outcome::NoReply { hint }) => hint.clone(),
        Some(Outcome::Invalid { error }) => format!("an invalid answer: {error}"),
        _ => "no answer".into(),
    }
}

impl DetailsCache {
    /// The details of `addr` (asked as `kind`) at `now`: cached, or asked now;
    /// `None` when [`MAX_IN_FLIGHT`] servers are being asked already.
    pub async fn get(&self, addr: SocketAddr, kind: Kind, now: i64) -> Option<Arc<ServerDetails>> {
        if let Some(d) = crate::driver::lock(&self.answers)
            .get(&addr)
            .filter(|d| now - d.queried_at < CACHE_SECS)
        {
            return Some(d.clone());
        }
        if self.in_flight.fetch_add(1, SeqCst) >= MAX_IN_FLIGHT {
            self.in_flight.fetch_sub(1, SeqCst);
            return None;
        }
        let (info, players, rules) = tokio::join!(
            ask(kind, addr),
            ask(Kind::Players, addr),
            ask(Kind::Rules, addr)
        );
        self.in_flight.fetch_sub(1, SeqCst);
        let (ping_ms, protocol, dialect) = match &info {
            Some(Outcome::Info { info, ping_ms }) => (
                Some(ping_ms.round().clamp(0.0, f64::from(u32::MAX)) as u32),
                Some(info.protocol),
                serde_json::to_value(info.dialect)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from)),
            ),
            _ => (None, None, None),
        };
        let (players, players_note) = match &players {
            Some(Outcome::Players { players }) => (
                Some(
                    players
                        .iter()
                        .take(256)
                        .map(|p| DetailsPlayer {
                            name: query::strip_colors(&p.name).chars().take(64).collect(),
                            frags: p.frags,
                            seconds: p.seconds,
                        })
                        .collect(),
                ),
                None,
            ),
            o => (None, Some(note(o))),
        };
        let (rules, rules_note) = match &rules {
            Some(Outcome::Rules { rules }) => (
                Some(
                    rules
                        .iter()
                        .take(512)
                        .map(|(k, v)| (k.chars().take(64).collect(), v.chars().take(256).collect()))
                        .collect(),
                ),
                None,
            ),
            o => (None, Some(note(o))),
        };
        let d = Arc::new(ServerDetails {
            address: addr.to_string(),
            queried_at: now,
            ping_ms,
            protocol,
            dialect,
            players,
            players_note,
            rules,
            rules_note,
        });
        let mut c = crate::driver::lock(&self.answers);
        if c.len() >= MAX_CACHED {
            c.retain(|_, d| now - d.queried_at < CACHE_SECS);
            if c.len() >= MAX_CACHED {
                c.clear();
            }
        }
        c.insert(addr, d.clone());
        Some(d)
    }
}

impl DetailsCache {
    /// [`heatmaps`], computed at most once per `max_age` seconds (they move with a
    /// sample every `sample_interval`, and reading six weeks of samples is not free).
    pub fn heatmaps(&self, c: &Mutex<Catalog>, now: i64, max_age: i64) -> Arc<HeatmapsBody> {
        let mut h = crate::driver::lock(&self.heat);
        match h.as_ref().filter(|b| now - b.generated_at < max_age) {
            Some(b) => b.clone(),
            None => {
                let b = Arc::new(heatmaps(&crate::driver::lock(c), now));
                *h = Some(b.clone());
                b
            }
        }
    }
}

/// The heat maps of `c` at `now`.
pub fn heatmaps(c: &Catalog, now: i64) -> HeatmapsBody {
    HeatmapsBody {
        generated_at: now,
        hour_days: (HOUR_WINDOW_SECS / 86_400) as u32,
        weekday_weeks: (WEEKDAY_WINDOW_SECS / (7 * 86_400)) as u32,
        gamedirs: heat_maps(c, now)
            .into_iter()
            .map(|(gamedir, (h, w))| GamedirHeat {
                gamedir,
                hours: h.to_vec(),
                weekdays: w.to_vec(),
            })
            .collect(),
    }
}
