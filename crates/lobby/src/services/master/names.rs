//! Server names for `/api/servers` and the page's server browser. The master
//! protocol carries no host name (a heartbeat's info string has none), so a bounded
//! poller asks each listed server for its info, as a client's browser does (the
//! `query` crate's session: A2S and the Xash dialect), and keeps the name.
//!
//! Bounds: at most [`MAX_PER_ROUND`] queries every [`ROUND`], [`CONCURRENCY`] in
//! flight, each with its `query` budget (bounded retries and an overall deadline);
//! each server asked again only after `refresh` (or [`RETRY`] when it did not
//! answer); servers behind NAT are not asked (they answer only after the master's
//! NAT announce); the book holds only listed servers, and names are cleaned
//! (colour codes and control characters removed, at most [`MAX_NAME_CHARS`]).
//! Only servers the master listed, after they proved their address with a
//! challenge, are ever asked.

use lifecycle::{lock, Stop};
use query::session::Kind;
use query::{Outcome, QueryOptions};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the poller looks for servers to ask.
pub const ROUND: Duration = Duration::from_secs(5);
/// Queries per round, at most.
pub const MAX_PER_ROUND: usize = 256;
/// Queries in flight at once.
pub const CONCURRENCY: usize = 32;
/// A server that did not answer is asked again after this.
pub const RETRY: Duration = Duration::from_secs(60);
/// Longest name kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// One server's name and when to ask it next.
#[derive(Debug, Clone)]
struct Entry {
    name: Option<String>,
    next: Instant,
}

/// The names of listed servers (pure: the poller feeds it).
#[derive(Debug)]
pub struct NameBook {
    entries: HashMap<SocketAddr, Entry>,
    refresh: Duration,
}

impl NameBook {
    /// A book that asks each server again `refresh` after its last answer.
    pub fn new(refresh: Duration) -> NameBook {
        NameBook {
            entries: HashMap::new(),
            refresh,
        }
    }

    /// Forgets servers no longer listed, and returns up to `max` servers to ask now:
    /// never-asked ones first, then the longest overdue. `listed` is (address, NAT).
    pub fn due(
        &mut self,
        listed: &[(SocketAddr, bool)],
        now: Instant,
        max: usize,
    ) -> Vec<SocketAddr> {
        let keep: HashMap<SocketAddr, bool> = listed.iter().copied().collect();
        self.entries.retain(|a, _| keep.contains_key(a));
        let mut due: Vec<(Option<Instant>, SocketAddr)> = listed
            .iter()
            .filter(|(_, nat)| !nat)
            .filter_map(|&(a, _)| match self.entries.get(&a) {
                None => Some((None, a)),
                Some(e) if e.next <= now => Some((Some(e.next), a)),
                Some(_) => None,
            })
            .collect();
        due.sort(); // None (never asked) sorts first
        due.truncate(max);
        due.into_iter().map(|(_, a)| a).collect()
    }

    /// Records what `addr` answered (`None`: no answer; a known name is kept).
    pub fn record(&mut self, addr: SocketAddr, answer: Option<&str>, now: Instant) {
        let e = self.entries.entry(addr).or_insert(Entry {
            name: None,
            next: now,
        });
        match answer.and_then(clean) {
            Some(n) => {
                e.name = Some(n);
                e.next = now + self.refresh;
            }
            None => e.next = now + RETRY,
        }
    }

    /// The name of `addr`, if it told one.
    pub fn name(&self, addr: &SocketAddr) -> Option<&str> {
        self.entries.get(addr)?.name.as_deref()
    }

    /// Servers in the book.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A name as shown: colour codes (`^1`) and control characters removed, spaces
/// trimmed, at most [`MAX_NAME_CHARS`]; `None` when nothing is left.
pub fn clean(raw: &str) -> Option<String> {
    let plain = query::session::strip_colors(raw);
    let s: String = plain
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    let s = s.trim_end().to_string();
    (!s.is_empty()).then_some(s)
}

/// Shared between the poller and the API.
pub type Names = Arc<Mutex<NameBook>>;

/// Asks the due servers every [`ROUND`] until the stop signal.
pub async fn poll_loop(
    engine: Arc<Mutex<master::Engine>>,
    names: Names,
    stop: Stop,
) -> anyhow::Result<()> {
    let opts = QueryOptions {
        timeout: Duration::from_millis(800),
        retries: 1,
        concurrency: CONCURRENCY,
        deadline: Some(Duration::from_secs(3)),
    };
    loop {
        let listed: Vec<(SocketAddr, bool)> = {
            let e = lock(&engine);
            e.table()
                .listed()
                .map(|l| (l.addr, l.server.nat()))
                .collect()
        };
        let due = lock(&names).due(&listed, Instant::now(), MAX_PER_ROUND);
        if !due.is_empty() {
            let asked = tokio::select! {
                r = query::run_many(Kind::Info, &due, &opts, |_| {}) => r,
                _ = stop.stopped() => return Ok(()),
            };
            match asked {
                Ok(results) => {
                    let now = Instant::now();
                    let mut book = lock(&names);
                    for (addr, outcome) in results {
                        let name = match &outcome {
                            Outcome::Info { info, .. } => Some(info.name.as_str()),
                            _ => None,
                        };
                        book.record(addr, name, now);
                    }
                }
                // No socket (descriptors exhausted, no address family): try next round.
                Err(e) => tracing::warn!(error = %e, "cannot ask servers for their names"),
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(ROUND) => {}
            _ = stop.stopped() => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(i: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], 27000 + i))
    }

    #[test]
    fn servers_are_asked_once_per_refresh_and_retried_when_silent() {
        let t0 = Instant::now();
        let mut b = NameBook::new(Duration::from_secs(300));
        let listed = [(addr(1), false), (addr(2), false), (addr(3), true)];
        // NAT servers are never asked.
        assert_eq!(b.due(&listed, t0, 10), vec![addr(1), addr(2)]);
        b.record(addr(1), Some("^1Red ^7Server"), t0);
        b.record(addr(2), None, t0);
        assert_eq!(b.name(&addr(1)), Some("Red Server"));
        assert_eq!(b.name(&addr(2)), None);
        assert!(b.due(&listed, t0 + Duration::from_secs(59), 10).is_empty());
        assert_eq!(b.due(&listed, t0 + RETRY, 10), vec![addr(2)]);
        assert_eq!(
            b.due(&listed, t0 + Duration::from_secs(300), 10),
            vec![addr(2), addr(1)]
        );
        // A silent answer keeps the name it had.
        b.record(addr(1), None, t0 + Duration::from_secs(300));
        assert_eq!(b.name(&addr(1)), Some("Red Server"));
    }

    #[test]
    fn the_book_holds_listed_servers_only_and_rounds_are_capped() {
        let t0 = Instant::now();
        let mut b = NameBook::new(Duration::from_secs(300));
        let many: Vec<(SocketAddr, bool)> = (0..1000).map(|i| (addr(i), false)).collect();
        let first = b.due(&many, t0, MAX_PER_ROUND);
        assert_eq!(first.len(), MAX_PER_ROUND);
        for a in &first {
            b.record(*a, Some("x"), t0);
        }
        // The next round takes the never-asked ones before anything else.
        let second = b.due(&many, t0 + Duration::from_secs(400), MAX_PER_ROUND);
        assert!(second.iter().all(|a| !first.contains(a)));
        assert_eq!(b.len(), MAX_PER_ROUND);
        b.due(&many[..10], t0, MAX_PER_ROUND);
        assert!(b.len() <= 10, "delisted servers are forgotten");
    }

    #[test]
    fn names_are_cleaned_and_bounded() {
        assert_eq!(
            clean("  ^2Hello\nWorld\u{7}  ").as_deref(),
            Some("HelloWorld")
        );
        assert_eq!(clean("^1^2").as_deref(), None);
        assert_eq!(
            clean(&"x".repeat(500)).map(|s| s.chars().count()),
            Some(MAX_NAME_CHARS)
        );
        assert_eq!(clean("Ünïcødé ✈").as_deref(), Some("Ünïcødé ✈"));
    }
}
