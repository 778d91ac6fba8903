//! The servers the master heard and the ones the curated list publishes, as one
//! list (for `/api/servers` and the servers' history): each server the master lists
//! once, gaining the curated list's sources; a published server the master does not
//! list added from its last answer (a forced one that never answered has nothing to
//! show). Pure: the callers build the entries of their own bodies.

use crate::catalog::{source, Answer, Published};
use std::collections::HashMap;
use std::net::SocketAddr;

/// Merges `published` ([`crate::catalog::Catalog::published`]) into `heard`, the
/// master's servers by address, and orders the result by address:
/// - a published server in `heard` is passed to `also` with its sources' names
///   other than `heartbeat` (the master's own);
/// - one not in `heard` whose last answer `fresh` accepts is added as
///   `from_answer` makes it, with its sources' names.
pub fn merge<T>(
    heard: &mut Vec<(SocketAddr, T)>,
    published: Vec<Published>,
    fresh: impl Fn(&Answer) -> bool,
    mut also: impl FnMut(&mut T, Vec<&'static str>),
    mut from_answer: impl FnMut(&Published, &Answer, Vec<&'static str>) -> T,
) {
    let at: HashMap<SocketAddr, usize> = heard
        .iter()
        .enumerate()
        .map(|(i, (a, _))| (*a, i))
        .collect();
    for p in published {
        let names = source::names(p.sources);
        if let Some((_, entry)) = at.get(&p.addr).and_then(|&i| heard.get_mut(i)) {
            also(
                entry,
                names.into_iter().filter(|n| *n != "heartbeat").collect(),
            );
            continue;
        }
        let Some(answer) = p.answer.as_ref().filter(|a| fresh(a)) else {
            continue;
        };
        let entry = from_answer(&p, answer, names);
        heard.push((p.addr, entry));
    }
    heard.sort_by_key(|(a, _)| *a);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ProbeInfo;
    use crate::masterlist::Directive;

    fn published(addr: &str, sources: u8, answered_at: Option<i64>) -> Published {
        Published {
            gamedir: "valve".into(),
            addr: addr.parse().unwrap(),
            directive: Directive::Ip,
            sources,
            answer: answered_at.map(|at| Answer {
                at,
                first_seen: at - 60,
                ping_ms: 12,
                info: ProbeInfo {
                    name: format!("server {addr}"),
                    ..ProbeInfo::default()
                },
            }),
        }
    }

    #[test]
    fn heard_servers_gain_sources_and_answered_ones_are_added_in_order() {
        let a: SocketAddr = "192.0.2.9:27015".parse().unwrap();
        let mut heard = vec![(a, vec!["heartbeat".to_string()])];
        let list = vec![
            // Heard and curated: gains "curated", not a second "heartbeat".
            published(
                "192.0.2.9:27015",
                source::CURATED | source::HEARTBEAT,
                Some(100),
            ),
            // Curated only, answered: added from its answer.
            published("192.0.2.1:27015", source::CURATED, Some(100)),
            // Curated, answered too long ago for this caller: left out.
            published("192.0.2.2:27015", source::CURATED, Some(10)),
            // Forced, never answered: nothing to show.
            published("192.0.2.3:27015", source::CURATED, None),
        ];
        merge(
            &mut heard,
            list,
            |answer| answer.at >= 50,
            |entry, names| entry.extend(names.into_iter().map(String::from)),
            |p, answer, names| {
                assert_eq!(answer.info.name, format!("server {}", p.addr));
                names.into_iter().map(String::from).collect()
            },
        );
        let got: Vec<(String, Vec<String>)> =
            heard.into_iter().map(|(a, s)| (a.to_string(), s)).collect();
        assert_eq!(
            got,
            [
                ("192.0.2.1:27015".to_string(), vec!["curated".to_string()]),
                (
                    "192.0.2.9:27015".to_string(),
                    vec!["heartbeat".to_string(), "curated".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn nothing_published_leaves_the_heard_list_ordered() {
        let mut heard: Vec<(SocketAddr, u8)> = vec![
            ("[2001:db8::1]:27015".parse().unwrap(), 2),
            ("192.0.2.1:27015".parse().unwrap(), 1),
        ];
        merge(&mut heard, Vec::new(), |_| true, |_, _| {}, |_, _, _| 0);
        assert_eq!(heard.iter().map(|(_, v)| *v).collect::<Vec<_>>(), [1, 2]);
    }
}
