//! The list beside a [`master::Engine`]: what it reads of the master's table and
//! bans (servers proven by heartbeats, the registration checks) and the cache of the
//! served bodies, rebuilt only when the table or the catalog moved.

use crate::driver::{lock, Shared};
use crate::lists::Lists;
use crate::registration::Refused;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// A cached set is rebuilt after this even when nothing moved (a grace window may
/// have ended).
const MAX_AGE_SECS: i64 = 5;

/// The master's servers as (gamedir, address): they count as seen and are not
/// probed (a heartbeat proved them).
pub fn heartbeats(engine: &Mutex<master::Engine>) -> Vec<(String, SocketAddr)> {
    let e = lock(engine);
    e.table()
        .iter()
        .map(|(a, s, _)| (String::from_utf8_lossy(&s.gamedir).into_owned(), a))
        .collect()
}

/// The master's servers as (gamedir, address, players), for the players samples.
pub fn heard(engine: &Mutex<master::Engine>) -> Vec<(String, SocketAddr, u32)> {
    let e = lock(engine);
    e.table()
        .iter()
        .map(|(a, s, _)| {
            (
                String::from_utf8_lossy(&s.gamedir).into_owned(),
                a,
                u32::from(s.players),
            )
        })
        .collect()
}

/// What the master refuses a registration for: a banned address, or one its
/// heartbeats list already.
pub fn refuses(engine: &Mutex<master::Engine>, gamedir: &str, a: SocketAddr) -> Option<Refused> {
    let e = lock(engine);
    if e.bans().contains(a.ip()) {
        return Some(Refused::Banned(format!("{} is banned", a.ip())));
    }
    let listed = e
        .table()
        .iter()
        .any(|(b, s, _)| b == a && s.gamedir.as_ref() == gamedir.as_bytes());
    listed.then(|| Refused::Exists(format!("{a} sends heartbeats and is listed already")))
}

/// How to ask `a` if the list publishes it (from the master's table or the
/// catalog), `None` if it does not.
pub fn listed_kind(
    engine: &Mutex<master::Engine>,
    list: Option<&Shared>,
    a: SocketAddr,
    now: i64,
) -> Option<query::Kind> {
    if lock(engine).table().iter().any(|(b, _, _)| b == a) {
        return Some(query::Kind::Info);
    }
    let l = list?;
    let grace = lock(&l.options).grace;
    let directive = lock(&l.catalog).publishes(a, now, grace)?;
    Some(match directive {
        crate::masterlist::Directive::Gs => query::Kind::A2sInfo,
        crate::masterlist::Directive::Ip => query::Kind::Info,
    })
}

struct Cached {
    key: (u64, u64),
    built: i64,
    lists: Arc<Lists>,
}

/// The current lists, rebuilt only when the master's table or the catalog moved (or
/// every few seconds, for the grace window); banned addresses are left out.
#[derive(Default)]
pub struct ListCache {
    current: Mutex<Option<Cached>>,
}

impl ListCache {
    /// The lists as they are at `now` (Unix seconds). The master's and the
    /// catalog's locks are held only to compare versions and, when they moved, to
    /// copy what is published.
    pub fn get(&self, m: &Mutex<master::Engine>, list: Option<&Shared>, now: i64) -> Arc<Lists> {
        let table_version = lock(m).table().version();
        let catalog_version = list.map_or(0, |l| lock(&l.catalog).version());
        let key = (table_version, catalog_version);
        let mut cur = lock(&self.current);
        if let Some(c) = cur
            .as_ref()
            .filter(|c| c.key == key && now - c.built < MAX_AGE_SECS)
        {
            return c.lists.clone();
        }
        let heartbeats = heartbeats(m);
        let (mut published, counts) = match list {
            Some(l) => {
                let grace = lock(&l.options).grace;
                let c = lock(&l.catalog);
                let published = c.published(now, grace);
                let counts = c.gamedir_counts(&published);
                (published, counts)
            }
            None => Default::default(),
        };
        {
            let e = lock(m);
            published.retain(|p| !e.bans().contains(p.addr.ip()));
        }
        let prev = cur.as_ref().map(|c| c.lists.clone());
        let lists = Arc::new(Lists::build(
            &published,
            &heartbeats,
            &counts,
            prev.as_deref(),
            now,
        ));
        *cur = Some(Cached {
            key,
            built: now,
            lists: lists.clone(),
        });
        lists
    }
}
