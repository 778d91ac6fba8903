//! The lists as served over HTTP: one `v1/servers/<gamedir>` body per gamedir and the
//! `v1/gamedirs` body, merging the catalog's published entries with the servers the
//! master lists from heartbeats. Each body keeps its `Generated` time (and so its
//! ETag) until its lines change, so a client's conditional GET gets a 304 until then.

use crate::catalog::{source, GamedirCount, Published};
use crate::masterlist::Directive;
use crate::publish::{gamedirs_body, servers_body};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::sync::Arc;

/// One served body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The text.
    pub text: String,
    /// A strong ETag (quoted) of the text.
    pub etag: String,
    /// When its lines last changed (Unix seconds): `Last-Modified`.
    pub generated: i64,
    lines: String,
}

impl Body {
    fn new(lines: String, generated: i64, render: impl FnOnce(i64) -> String) -> Body {
        let text = render(generated);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        Body {
            etag: format!("\"{:016x}-{:x}\"", h.finish(), text.len()),
            text,
            generated,
            lines,
        }
    }

    /// `Last-Modified`: the `Generated` time as an HTTP date.
    pub fn last_modified(&self) -> String {
        let t =
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.generated.max(0) as u64);
        httpdate::fmt_http_date(t)
    }

    /// Whether a request with these `If-None-Match` and `If-Modified-Since` headers
    /// already has this body (RFC 9110: `If-None-Match`, when present, decides).
    pub fn is_fresh(&self, if_none_match: Option<&str>, if_modified_since: Option<&str>) -> bool {
        match if_none_match {
            Some(tags) => tags
                .split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == "*" || t == self.etag),
            None => if_modified_since
                .and_then(|v| httpdate::parse_http_date(v).ok())
                .is_some_and(|since| {
                    since
                        >= std::time::UNIX_EPOCH
                            + std::time::Duration::from_secs(self.generated.max(0) as u64)
                }),
        }
    }

    /// `prev`'s body when its lines are the same, a new one generated `now` otherwise.
    fn keep_or_new(
        prev: Option<&Arc<Body>>,
        lines: String,
        now: i64,
        render: impl FnOnce(i64) -> String,
    ) -> Arc<Body> {
        match prev {
            Some(p) if p.lines == lines => p.clone(),
            _ => Arc::new(Body::new(lines, now, render)),
        }
    }
}

/// Every body of one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lists {
    by_gamedir: BTreeMap<String, Arc<Body>>,
    gamedirs: Arc<Body>,
    /// The `Generated` time of gamedirs with no server.
    empty_since: i64,
}

impl Lists {
    /// Builds the bodies at `now`: `published` from the catalog, `heartbeats` the
    /// (gamedir, address) of every server the master lists (published as `ip`),
    /// `counts` the catalog's per-gamedir totals; a body whose lines did not change
    /// since `prev` is `prev`'s (same `Generated`, same ETag).
    pub fn build(
        published: &[Published],
        heartbeats: &[(String, SocketAddr)],
        counts: &BTreeMap<String, GamedirCount>,
        prev: Option<&Lists>,
        now: i64,
    ) -> Lists {
        let mut merged: BTreeMap<String, Vec<Published>> = BTreeMap::new();
        // Where each published (gamedir, address) sits in `merged`, so a heartbeat
        // server also curated is found at once (10,000 of each are common).
        let mut seen: HashMap<(&str, SocketAddr), usize> = HashMap::new();
        for p in published {
            let v = merged.entry(p.gamedir.clone()).or_default();
            seen.insert((p.gamedir.as_str(), p.addr), v.len());
            v.push(p.clone());
        }
        let mut heartbeat_only: BTreeMap<&str, usize> = BTreeMap::new();
        for (g, a) in heartbeats {
            if let Some(&i) = seen.get(&(g.as_str(), *a)) {
                if let Some(p) = merged.get_mut(g).and_then(|v| v.get_mut(i)) {
                    p.sources |= source::HEARTBEAT;
                }
                continue;
            }
            *heartbeat_only.entry(g.as_str()).or_default() += 1;
            merged.entry(g.clone()).or_default().push(Published {
                gamedir: g.clone(),
                addr: *a,
                directive: Directive::Ip,
                sources: source::HEARTBEAT,
                answer: None,
            });
        }
        let mut by_gamedir = BTreeMap::new();
        let mut totals: BTreeMap<String, GamedirCount> = counts.clone();
        for (g, mut v) in merged {
            v.sort_by_cached_key(|p| (p.addr.to_string(), p.directive));
            let lines: String = v
                .iter()
                .map(|p| format!("{} {}\n", p.directive.as_str(), p.addr))
                .collect();
            let prev_body = prev.and_then(|p| p.by_gamedir.get(&g));
            let body = Body::keep_or_new(prev_body, lines, now, |t| servers_body(&g, t, &v));
            let c = totals.entry(g.clone()).or_default();
            c.total += heartbeat_only.get(g.as_str()).copied().unwrap_or(0);
            c.live = v.len();
            by_gamedir.insert(g, body);
        }
        for (g, c) in totals.iter_mut() {
            if !by_gamedir.contains_key(g) {
                c.live = 0;
            }
        }
        let glines: String = totals
            .iter()
            .map(|(g, c)| format!("{g} {} {}\n", c.total, c.live))
            .collect();
        let gamedirs = Body::keep_or_new(prev.map(|p| &p.gamedirs), glines, now, |t| {
            gamedirs_body(t, &totals)
        });
        Lists {
            by_gamedir,
            gamedirs,
            empty_since: prev.map_or(now, |p| p.empty_since),
        }
    }

    /// The body of `gamedir`: its lines, or the header alone (a valid empty list)
    /// when it has none.
    pub fn servers(&self, gamedir: &str) -> Arc<Body> {
        match self.by_gamedir.get(gamedir) {
            Some(b) => b.clone(),
            None => Arc::new(Body::new(String::new(), self.empty_since, |t| {
                servers_body(gamedir, t, &[])
            })),
        }
    }

    /// The `v1/gamedirs` body.
    pub fn gamedirs(&self) -> Arc<Body> {
        self.gamedirs.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masterlist::{parse_body, ListedAddr};

    fn p(g: &str, a: &str, d: Directive) -> Published {
        Published {
            gamedir: g.into(),
            addr: a.parse().unwrap(),
            directive: d,
            sources: source::CURATED,
            answer: None,
        }
    }

    #[test]
    fn curated_and_heartbeat_servers_merge_and_unchanged_bodies_keep_their_etag() {
        let published = vec![
            p("valve", "192.0.2.2:27015", Directive::Gs),
            p("valve", "192.0.2.1:27015", Directive::Ip),
        ];
        let hb = vec![
            ("valve".to_string(), "192.0.2.1:27015".parse().unwrap()),
            ("valve".to_string(), "192.0.2.9:27015".parse().unwrap()),
            ("dmc".to_string(), "[2001:db8::5]:27015".parse().unwrap()),
        ];
        let counts = BTreeMap::from([("valve".to_string(), GamedirCount { total: 3, live: 2 })]);
        let a = Lists::build(&published, &hb, &counts, None, 100);
        let v = a.servers("valve");
        let read: Vec<String> = parse_body(v.text.as_bytes())
            .entries
            .iter()
            .map(|e| format!("{} {}", e.directive.as_str(), e.addr))
            .collect();
        assert_eq!(
            read,
            [
                "ip 192.0.2.1:27015",
                "gs 192.0.2.2:27015",
                "ip 192.0.2.9:27015"
            ]
        );
        assert!(
            matches!(parse_body(a.servers("dmc").text.as_bytes()).entries[0].addr, ListedAddr::Ip(x) if x.port() == 27015)
        );
        assert_eq!(
            a.gamedirs().text.lines().skip(4).collect::<Vec<_>>(),
            ["dmc 1 1", "valve 4 3"]
        );
        // Same lines later: the same body, generated at 100.
        let b = Lists::build(&published, &hb, &counts, Some(&a), 500);
        assert_eq!(b.servers("valve"), v);
        assert_eq!(b.gamedirs(), a.gamedirs());
        // A change: a new body and ETag, generated now.
        let c = Lists::build(&published[1..], &hb, &counts, Some(&b), 900);
        assert_ne!(c.servers("valve").etag, v.etag);
        assert_eq!(c.servers("valve").generated, 900);
        assert_eq!(
            c.servers("dmc"),
            a.servers("dmc"),
            "other gamedirs keep theirs"
        );
        // An unknown gamedir: a valid empty list.
        let e = c.servers("tfc");
        assert!(
            e.text.starts_with("# tfc server list\n")
                && parse_body(e.text.as_bytes()).entries.is_empty()
        );
        assert_eq!(e, c.servers("tfc"), "and a stable one");
        // Conditional requests.
        let etag = v.etag.clone();
        assert!(v.is_fresh(Some(&etag), None));
        assert!(v.is_fresh(Some(&format!("\"x\", W/{etag}")), None));
        assert!(
            !v.is_fresh(Some("\"x\""), Some(&v.last_modified())),
            "If-None-Match decides"
        );
        assert!(v.is_fresh(None, Some(&v.last_modified())));
        assert!(!v.is_fresh(None, Some("Thu, 01 Jan 1970 00:00:00 GMT")));
        assert!(!v.is_fresh(None, Some("not a date")));
        assert_eq!(v.last_modified(), "Thu, 01 Jan 1970 00:01:40 GMT");
    }
}
