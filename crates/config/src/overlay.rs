//! Run-time changes an operator makes through the admin interface (fgms's CLI
//! `blacklist add|delete`, `relay add|delete`, `crossfeed add|delete`), kept apart
//! from the configuration file so that both survive what the other does:
//!
//! - **The rule**: the relay runs with *file ∪ added − deleted* for each list. An
//!   entry added at run time stays until deleted at run time, whatever the file says;
//!   an entry deleted at run time stays deleted even if the file lists it, until it
//!   is added again. A SIGHUP re-reads the file and applies the same rule, so an edit
//!   of the file and a run-time change never undo each other silently.
//! - Adding an entry clears an earlier deletion of it and the other way round, so the
//!   overlay never holds both for one entry.
//! - Every change carries who made it and when (the audit log lines and `show`).
//! - The overlay is persisted as JSON (`[admin] state_file`) and read back at start.
//!
//! - Every entry has one spelling ([`canonical`]) and is checked against what its
//!   list can hold ([`check_entry`]) before it is recorded.
//!
//! Pure: the caller supplies the time and does the file I/O.

use crate::{File, PeerOptions};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// A list the admin interface can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum List {
    /// `[relay] blacklist`: IPs or CIDRs whose traffic is dropped.
    Blacklist,
    /// `[relay] relays`: relays exchanged with (`host:port`).
    Relays,
    /// `[relay] crossfeeds`: crossfeed targets (`host:port`).
    Crossfeeds,
}

impl List {
    /// Every list, in display order.
    pub const ALL: [List; 3] = [List::Blacklist, List::Relays, List::Crossfeeds];

    /// The name used on the command line and in the API.
    pub fn name(self) -> &'static str {
        match self {
            List::Blacklist => "blacklist",
            List::Relays => "relays",
            List::Crossfeeds => "crossfeeds",
        }
    }
}

/// One run-time change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Which list.
    pub list: List,
    /// The entry, as the configuration writes it.
    pub value: String,
    /// Added (true) or deleted (false).
    pub added: bool,
    /// Who made it (the admin token's name).
    pub by: String,
    /// When, Unix seconds.
    pub at: i64,
}

/// The run-time changes in force, one per (list, entry).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    /// In the order they were made (a later change of an entry replaces its earlier one).
    pub changes: Vec<Change>,
}

/// What a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The list in force changed.
    Changed,
    /// The list in force already was so (recorded anyway, so a later file edit
    /// cannot undo it).
    AlreadySo,
}

impl Overlay {
    /// Records `c`, replacing an earlier change of the same entry; says whether the
    /// list in force (with `file`, the file's list) changes.
    pub fn record(&mut self, c: Change, file: &[String]) -> Outcome {
        let before = self.apply(c.list, file);
        self.changes
            .retain(|x| !(x.list == c.list && x.value == c.value));
        self.changes.push(c.clone());
        if self.apply(c.list, file) == before {
            Outcome::AlreadySo
        } else {
            Outcome::Changed
        }
    }

    /// The list in force: `file` ∪ added − deleted, file order first, then additions
    /// in the order they were made.
    pub fn apply(&self, list: List, file: &[String]) -> Vec<String> {
        let deleted = |v: &str| {
            self.changes
                .iter()
                .any(|c| c.list == list && !c.added && c.value == v)
        };
        let mut out: Vec<String> = Vec::new();
        for v in file {
            if !deleted(v) && !out.contains(v) {
                out.push(v.clone());
            }
        }
        for c in self.changes.iter().filter(|c| c.list == list && c.added) {
            if !out.contains(&c.value) {
                out.push(c.value.clone());
            }
        }
        out
    }

    /// The changes of `list`, for `show`.
    pub fn of(&self, list: List) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.list == list)
    }

    /// The overlay as saved.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a saved overlay; an error names what is wrong.
    pub fn from_json(text: &str) -> Result<Overlay, OverlayError> {
        serde_json::from_str(text).map_err(OverlayError)
    }
}

/// A saved overlay that does not read back: the JSON's own error.
#[derive(Debug, thiserror::Error)]
#[error("admin state: {0}")]
pub struct OverlayError(pub serde_json::Error);

/// Longest entry a change may carry.
const MAX_ENTRY_LEN: usize = 256;

/// The one spelling of an entry, so that one entry written two ways is one entry:
/// an IP (a host network written as its address) or a network with its host bits
/// cleared; `host:port` with the host in lower case (an IP literal as Rust writes it).
/// An entry that does not parse is kept as written (the configuration check names it).
pub fn canonical(list: List, entry: &str) -> String {
    match list {
        List::Blacklist => match crate::net(entry) {
            Ok(n) if n.prefix_len() == n.max_prefix_len() => n.addr().to_string(),
            Ok(n) => n.trunc().to_string(),
            Err(_) => entry.to_string(),
        },
        List::Relays | List::Crossfeeds => match entry.parse::<SocketAddr>() {
            Ok(a) => a.to_string(),
            Err(_) => entry.to_ascii_lowercase(),
        },
    }
}

/// The file with its three lists in their canonical spelling.
pub fn canonical_file(f: &File) -> File {
    let mut f = f.clone();
    for list in List::ALL {
        let v = match list {
            List::Blacklist => &mut f.relay.blacklist,
            List::Relays => &mut f.relay.relays,
            List::Crossfeeds => &mut f.relay.crossfeeds,
        };
        *v = v.iter().map(|e| canonical(list, e)).collect();
    }
    f
}

/// The file with the overlay's lists in force.
pub fn overlaid(f: &File, o: &Overlay) -> File {
    let mut f = f.clone();
    f.relay.blacklist = o.apply(List::Blacklist, &f.relay.blacklist);
    f.relay.relays = o.apply(List::Relays, &f.relay.relays);
    f.relay.crossfeeds = o.apply(List::Crossfeeds, &f.relay.crossfeeds);
    f
}

/// The file's own entries of `list`, without the overlay.
pub fn file_list(f: &File, list: List) -> &[String] {
    match list {
        List::Blacklist => &f.relay.blacklist,
        List::Relays => &f.relay.relays,
        List::Crossfeeds => &f.relay.crossfeeds,
    }
}

/// The relay configuration and peers of an effective file.
pub fn relay_config(f: &File) -> Result<(relay::Config, PeerOptions)> {
    Ok((
        f.relay.engine_config()?,
        PeerOptions {
            names: f.relay.peer_names()?,
            refresh: f.relay.peer_refresh()?,
        },
    ))
}

/// The list a path names (fgms's singular `relay`/`crossfeed` too).
pub fn parse_list(s: &str) -> Option<List> {
    match s {
        "blacklist" => Some(List::Blacklist),
        "relays" | "relay" => Some(List::Relays),
        "crossfeeds" | "crossfeed" => Some(List::Crossfeeds),
        _ => None,
    }
}

/// Whether `entry` is one the list can hold.
pub fn check_entry(list: List, entry: &str) -> Result<(), EntryError> {
    if entry.is_empty() || entry.len() > MAX_ENTRY_LEN {
        return Err(EntryError::Length);
    }
    if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(EntryError::Blank(entry.to_string()));
    }
    match list {
        // What `crate::net` accepts: a network, or an address as its host network.
        List::Blacklist => match entry.parse::<ipnet::IpNet>() {
            Ok(_) => Ok(()),
            Err(_) => entry
                .parse::<std::net::IpAddr>()
                .map(|_| ())
                .map_err(|error| EntryError::Net {
                    entry: entry.to_string(),
                    error,
                }),
        },
        List::Relays | List::Crossfeeds => {
            let kind = if list == List::Relays {
                crate::Kind::Relay
            } else {
                crate::Kind::Crossfeed
            };
            crate::PeerName::parse(entry, kind).map(|_| ())?;
            Ok(())
        }
    }
}

/// Why [`check_entry`] refused an entry.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// Empty or longer than the longest entry.
    #[error("an entry is 1-{MAX_ENTRY_LEN} characters")]
    Length,
    /// Whitespace or a control character inside (the entry).
    #[error("entry {0:?} holds a space or a control character")]
    Blank(String),
    /// A blacklist entry that is neither a network nor an address.
    #[error("invalid IP or CIDR {entry:?}: {error}")]
    Net {
        /// The entry.
        entry: String,
        /// Why it is not an address (in the message, so not a `source`).
        error: std::net::AddrParseError,
    },
    /// A relay or crossfeed entry that is not a peer's name.
    #[error(transparent)]
    Peer(#[from] relay::peers::PeerNameError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ch(list: List, value: &str, added: bool, at: i64) -> Change {
        Change {
            list,
            value: value.into(),
            added,
            by: "gordon".into(),
            at,
        }
    }

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn file_union_added_minus_deleted() {
        let file = v(&["192.0.2.0/24", "198.51.100.7"]);
        let mut o = Overlay::default();
        assert_eq!(
            o.record(ch(List::Blacklist, "203.0.113.9", true, 1), &file),
            Outcome::Changed
        );
        assert_eq!(
            o.record(ch(List::Blacklist, "198.51.100.7", false, 2), &file),
            Outcome::Changed
        );
        assert_eq!(
            o.apply(List::Blacklist, &file),
            v(&["192.0.2.0/24", "203.0.113.9"])
        );
        // Adding what the file has changes nothing but is kept.
        assert_eq!(
            o.record(ch(List::Blacklist, "192.0.2.0/24", true, 3), &file),
            Outcome::AlreadySo
        );
        // The other lists are untouched.
        assert_eq!(o.apply(List::Relays, &v(&["mp1:5000"])), v(&["mp1:5000"]));
    }

    #[test]
    fn a_reload_keeps_run_time_changes_whatever_the_file_now_says() {
        let mut o = Overlay::default();
        o.record(ch(List::Relays, "mp9.example.org:5000", true, 1), &[]);
        o.record(ch(List::Relays, "mp2.example.org:5000", false, 2), &[]);
        // The file, edited and reloaded, now lists mp2 and mp9 itself.
        let file = v(&[
            "mp2.example.org:5000",
            "mp9.example.org:5000",
            "mp3.example.org:5000",
        ]);
        assert_eq!(
            o.apply(List::Relays, &file),
            v(&["mp9.example.org:5000", "mp3.example.org:5000"])
        );
        // Added again: the deletion is gone.
        o.record(ch(List::Relays, "mp2.example.org:5000", true, 3), &file);
        assert_eq!(o.of(List::Relays).count(), 2);
        assert!(o
            .apply(List::Relays, &file)
            .contains(&"mp2.example.org:5000".to_string()));
    }

    #[test]
    fn the_overlay_survives_a_restart_and_bad_files_are_named() {
        let mut o = Overlay::default();
        o.record(ch(List::Crossfeeds, "127.0.0.1:5100", true, 5), &[]);
        let back = Overlay::from_json(&o.to_json()).unwrap();
        assert_eq!(back, o);
        assert!(Overlay::from_json("{\"changes\": [{\"list\": \"bogus\"}]}")
            .unwrap_err()
            .to_string()
            .starts_with("admin state:"));
    }

    proptest! {
        /// Whatever the order of changes, the list in force holds exactly the file's
        /// entries and the added ones, minus the entries whose last change deleted them.
        #[test]
        fn the_last_change_of_an_entry_decides(
            file in proptest::collection::vec(0u8..8, 0..6),
            changes in proptest::collection::vec((0u8..8, any::<bool>()), 0..20),
        ) {
            let file: Vec<String> = file.iter().map(|x| format!("e{x}")).collect();
            let mut o = Overlay::default();
            for (i, (e, added)) in changes.iter().enumerate() {
                o.record(ch(List::Blacklist, &format!("e{e}"), *added, i as i64), &file);
            }
            let got = o.apply(List::Blacklist, &file);
            for x in 0u8..8 {
                let e = format!("e{x}");
                let last = changes.iter().rev().find(|(y, _)| *y == x).map(|(_, a)| *a);
                let want = match last {
                    Some(added) => added,
                    None => file.contains(&e),
                };
                prop_assert_eq!(got.contains(&e), want, "{}", e);
            }
            let distinct: std::collections::HashSet<&String> = got.iter().collect();
            prop_assert_eq!(distinct.len(), got.len());
        }
    }

    #[test]
    fn entries_are_checked_per_list() {
        assert!(check_entry(List::Blacklist, "192.0.2.0/24").is_ok());
        assert!(check_entry(List::Blacklist, "2001:db8::/32").is_ok());
        assert!(check_entry(List::Blacklist, "mp1.example.org").is_err());
        assert!(check_entry(List::Relays, "mp1.example.org:5000").is_ok());
        assert!(check_entry(List::Relays, "[2001:db8::1]:5000").is_ok());
        assert!(check_entry(List::Crossfeeds, "127.0.0.1").is_err());
        assert!(check_entry(List::Relays, "a b:5000").is_err());
        assert!(check_entry(List::Blacklist, "").is_err());
        assert!(check_entry(List::Blacklist, &"1".repeat(300)).is_err());
    }

    #[test]
    fn one_entry_has_one_spelling() {
        let b = |e| canonical(List::Blacklist, e);
        assert_eq!(b("192.0.2.1"), "192.0.2.1");
        assert_eq!(b("192.0.2.1/32"), "192.0.2.1");
        assert_eq!(b("10.1.2.3/8"), "10.0.0.0/8");
        assert_eq!(b("2001:DB8::1"), "2001:db8::1");
        assert_eq!(b("2001:db8::1/128"), "2001:db8::1");
        assert_eq!(b("not an ip"), "not an ip");
        let r = |e| canonical(List::Relays, e);
        assert_eq!(r("MP1.Example.org:5000"), "mp1.example.org:5000");
        assert_eq!(r("[2001:DB8::1]:5000"), "[2001:db8::1]:5000");
        assert_eq!(r("192.0.2.1:5000"), "192.0.2.1:5000");
    }

    #[test]
    fn the_overlay_replaces_only_the_three_lists() {
        let mut f = File::default();
        f.relay.blacklist = vec!["192.0.2.1".into()];
        f.relay.whitelist = vec!["198.51.100.0/24".into()];
        f.relay.name = "mp".into();
        let mut o = Overlay::default();
        o.record(
            Change {
                list: List::Blacklist,
                value: "192.0.2.1".into(),
                added: false,
                by: "g".into(),
                at: 1,
            },
            &f.relay.blacklist,
        );
        o.record(
            Change {
                list: List::Crossfeeds,
                value: "127.0.0.1:5100".into(),
                added: true,
                by: "g".into(),
                at: 2,
            },
            &[],
        );
        let e = overlaid(&f, &o);
        assert!(e.relay.blacklist.is_empty());
        assert_eq!(e.relay.crossfeeds, vec!["127.0.0.1:5100".to_string()]);
        assert_eq!(e.relay.whitelist, f.relay.whitelist);
        assert_eq!(e.relay.name, "mp");
    }
}
