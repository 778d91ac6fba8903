//! The Xash3D engine's static server list (`GET /v1/servers/<gamedir>`) and
//! `GET /v1/gamedirs`: the bodies of `serverlist::lists`, built from the master's
//! table and the curated list's catalog only when either moved (or every few seconds,
//! for the grace window), and answered with `ETag`, `Last-Modified` and 304s.

use crate::lifecycle::lock;
use crate::services::master::list::List;
use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serverlist::lists::{Body, Lists};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// A cached set is rebuilt after this even when nothing moved (a grace window may
/// have ended).
const MAX_AGE_SECS: i64 = 5;

struct Cached {
    key: (u64, u64),
    built: i64,
    lists: Arc<Lists>,
}

/// The current lists, rebuilt only when the master's table or the catalog moved.
#[derive(Default)]
pub struct ListCache {
    current: Mutex<Option<Cached>>,
}

impl ListCache {
    /// The lists as they are now. The master's and the catalog's locks are held
    /// only to compare versions and, when they moved, to copy what is published.
    pub fn get(&self, m: &Mutex<master::Engine>, list: Option<&List>) -> Arc<Lists> {
        let now = udp::time::unix_secs();
        let table_version = lock(m).table().version();
        let catalog_version = list.map_or(0, |l| lock(&l.catalog).version());
        let key = (table_version, catalog_version);
        let mut cur = lock(&self.current);
        if let Some(c) = cur.as_ref() {
            if c.key == key && now - c.built < MAX_AGE_SECS {
                return c.lists.clone();
            }
        }
        let heartbeats: Vec<(String, SocketAddr)> = crate::services::master::list::heartbeats(m);
        let (published, counts) = match list {
            Some(l) => {
                let grace = lock(&l.options).grace;
                let c = lock(&l.catalog);
                (c.published(now, grace), c.gamedir_counts(now, grace))
            }
            None => Default::default(),
        };
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

/// A body shared by every response that sends it.
struct Shared(Arc<Body>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.text.as_bytes()
    }
}

/// `body` as the engine's HTTP client wants it: `200` with `Content-Length`, no
/// `Content-Encoding`, `Cache-Control: max-age=60`, `ETag` and `Last-Modified`; a
/// `304` when the request's `If-None-Match` (or, without it, `If-Modified-Since`)
/// says the client has it.
pub fn reply(body: Arc<Body>, req: &HeaderMap) -> Response {
    let h = |name| req.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let fresh = body.is_fresh(h(header::IF_NONE_MATCH), h(header::IF_MODIFIED_SINCE));
    let last_modified = body.last_modified();
    let headers = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=60"),
        ),
        (
            header::ETAG,
            HeaderValue::from_str(&body.etag).unwrap_or(HeaderValue::from_static("\"\"")),
        ),
        (
            header::LAST_MODIFIED,
            HeaderValue::from_str(&last_modified).unwrap_or(HeaderValue::from_static("")),
        ),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    let text = Bytes::from_owner(Shared(body));
    (
        headers,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}
