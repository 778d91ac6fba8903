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
        // Given back however this ends: a request whose client goes away is dropped
        // mid-query, and its place must not be lost with it.
        let place = InFlight(&self.in_flight);
        let (info, players, rules) = tokio::join!(
            ask(kind, addr),
            ask(Kind::Players, addr),
            ask(Kind::Rules, addr)
        );
        drop(place);
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
        keep(
            &mut crate::driver::lock(&self.answers),
            addr,
            d.clone(),
            now,
        );
        Some(d)
    }
}

/// One place among the [`MAX_IN_FLIGHT`], given back when dropped.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Caches `d`: when [`MAX_CACHED`] answers are held, the expired ones go first, and
/// all of them when none has expired.
fn keep(
    c: &mut HashMap<SocketAddr, Arc<ServerDetails>>,
    addr: SocketAddr,
    d: Arc<ServerDetails>,
    now: i64,
) {
    if c.len() >= MAX_CACHED {
        c.retain(|_, d| now - d.queried_at < CACHE_SECS);
        if c.len() >= MAX_CACHED {
            c.clear();
        }
    }
    c.insert(addr, d);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(addr: SocketAddr, queried_at: i64) -> Arc<ServerDetails> {
        Arc::new(ServerDetails {
            address: addr.to_string(),
            queried_at,
            ping_ms: None,
            protocol: None,
            dialect: None,
            players: None,
            players_note: None,
            rules: None,
            rules_note: None,
        })
    }

    fn addr(i: usize) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], 1024 + i as u16))
    }

    #[tokio::test]
    async fn eight_servers_are_asked_at_once_and_a_dropped_request_gives_its_place_back() {
        // Servers that never answer: each ask lasts its whole 3 s, unless dropped.
        let silent = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let target = silent.local_addr().unwrap();
        let cache = Arc::new(DetailsCache::default());
        let asking: Vec<_> = (0..MAX_IN_FLIGHT)
            .map(|_| {
                let c = cache.clone();
                tokio::spawn(async move { c.get(target, Kind::Info, 0).await })
            })
            .collect();
        for _ in 0..200 {
            if cache.in_flight.load(SeqCst) == MAX_IN_FLIGHT {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(cache.in_flight.load(SeqCst), MAX_IN_FLIGHT);
        let t = std::time::Instant::now();
        assert!(
            cache.get(addr(9), Kind::Info, 0).await.is_none(),
            "the ninth is told to retry"
        );
        assert!(
            t.elapsed() < Duration::from_millis(100),
            "at once, not asked"
        );
        // A cached answer is still given while every place is taken.
        let fresh = answer(addr(10), 0);
        crate::driver::lock(&cache.answers).insert(addr(10), fresh.clone());
        let got = cache
            .get(addr(10), Kind::Info, CACHE_SECS - 1)
            .await
            .unwrap();
        assert!(
            Arc::ptr_eq(&got, &fresh),
            "reused within CACHE_SECS, not asked"
        );
        assert!(
            cache.get(addr(10), Kind::Info, CACHE_SECS).await.is_none(),
            "asked again after CACHE_SECS (and so refused while busy)"
        );
        // The clients go away: their requests are dropped mid-query.
        for a in asking {
            a.abort();
            assert!(a.await.unwrap_err().is_cancelled());
        }
        assert_eq!(cache.in_flight.load(SeqCst), 0, "every place given back");
    }

    #[test]
    fn at_most_1024_answers_are_cached_the_expired_going_first() {
        let mut c = HashMap::new();
        for i in 0..MAX_CACHED {
            keep(
                &mut c,
                addr(i),
                answer(addr(i), if i < 10 { 0 } else { 10 }),
                10,
            );
        }
        assert_eq!(c.len(), MAX_CACHED);
        // The ten asked at 0 have expired at 10: they go, the rest stay.
        keep(&mut c, addr(5000), answer(addr(5000), 10), 10);
        assert_eq!(c.len(), MAX_CACHED - 10 + 1);
        for i in 0..9 {
            keep(&mut c, addr(6000 + i), answer(addr(6000 + i), 10), 10);
        }
        assert_eq!(c.len(), MAX_CACHED);
        // None expired: all go.
        keep(&mut c, addr(7000), answer(addr(7000), 10), 10);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn heat_maps_are_computed_at_most_once_per_max_age() {
        let cache = DetailsCache::default();
        let catalog = Mutex::new(Catalog::default());
        let a = cache.heatmaps(&catalog, 1_000, 60);
        assert!(Arc::ptr_eq(&a, &cache.heatmaps(&catalog, 1_059, 60)));
        let b = cache.heatmaps(&catalog, 1_060, 60);
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(b.generated_at, 1_060);
        // A shorter sample interval: a shorter age.
        assert!(!Arc::ptr_eq(&b, &cache.heatmaps(&catalog, 1_070, 10)));
    }
}
