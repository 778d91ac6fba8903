//! The Xash3D engine's static server list (`GET /v1/servers/<gamedir>`): one body
//! per gamedir, built from a copy of the master's table only when its version moved.

use crate::lifecycle::lock;
use axum::body::Bytes;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// The `/v1/servers/<gamedir>` bodies of one version of the master's table.
#[derive(Debug, Default)]
pub struct ListSnapshot {
    version: u64,
    /// One body per game directory present; any other gamedir gets an empty list.
    /// `Bytes`: each response shares the body instead of copying it.
    by_gamedir: HashMap<Box<[u8]>, Bytes>,
}

impl ListSnapshot {
    /// Builds the bodies from a copy of the table (outside any lock): one `ip <addr>`
    /// line per server, in the table's address order (IPv6 bracketed).
    fn build(version: u64, servers: &[(SocketAddr, Box<[u8]>)]) -> ListSnapshot {
        let mut text: HashMap<Box<[u8]>, String> = HashMap::new();
        for (addr, gamedir) in servers {
            let t = text.entry(gamedir.clone()).or_default();
            t.push_str("ip ");
            t.push_str(&addr.to_string());
            t.push('\n');
        }
        ListSnapshot {
            version,
            by_gamedir: text.into_iter().map(|(g, t)| (g, Bytes::from(t))).collect(),
        }
    }

    /// The body for `gamedir` (empty when it has no server).
    pub fn body(&self, gamedir: &str) -> Bytes {
        self.by_gamedir
            .get(gamedir.as_bytes())
            .cloned()
            .unwrap_or_default()
    }
}

/// The current list snapshot, rebuilt only when the master's table version moved.
#[derive(Default)]
pub struct ListCache {
    current: Mutex<Option<Arc<ListSnapshot>>>,
}

impl ListCache {
    /// The snapshot for the table as it is now. The master's lock is held only to
    /// compare the version and, when it moved, to copy (address, gamedir) pairs.
    pub fn get(&self, m: &Mutex<master::Engine>) -> Arc<ListSnapshot> {
        let have = lock(&self.current).clone();
        let copied = {
            let e = lock(m);
            let t = e.table();
            if let Some(s) = have.as_ref().filter(|s| s.version == t.version()) {
                return s.clone();
            }
            let servers: Vec<(SocketAddr, Box<[u8]>)> =
                t.iter().map(|(a, s, _)| (a, s.gamedir.clone())).collect();
            (t.version(), servers)
        };
        let snap = Arc::new(ListSnapshot::build(copied.0, &copied.1));
        let mut cur = lock(&self.current);
        // Two requests may rebuild at once: keep the newer table's snapshot.
        if cur.as_ref().is_none_or(|c| c.version < snap.version) {
            *cur = Some(snap.clone());
        }
        snap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_snapshot_is_rebuilt_only_when_the_table_moved() {
        let now = std::time::Instant::now();
        let e = master::Engine::new(
            master::Config::default(),
            Arc::new(master::Stats::default()),
            [7; 32],
            now,
        );
        let m = Mutex::new(e);
        let cache = ListCache::default();
        let a = cache.get(&m);
        let b = cache.get(&m);
        assert!(Arc::ptr_eq(&a, &b), "same version: the same snapshot");
        assert!(a.body("valve").is_empty());
        // A server registers (heartbeat, challenge, info): a new snapshot lists it.
        let from: SocketAddr = "192.0.2.7:27015".parse().unwrap();
        let mut out = master::Outbox::new();
        lock(&m).handle(&[0x71, 0xff, 1, 2, 3, 4], from, now, &mut out);
        let reply = out.iter().next().unwrap().payload.to_vec();
        let c = xash::master::ChallengeReply::decode(&reply).unwrap();
        out.clear();
        let info = format!(
            "0\n\\protocol\\49\\challenge\\{}\\players\\1\\max\\8\\bots\\0\\gamedir\\valve\\map\\c1a0\\type\\d\\password\\0\\os\\l\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0",
            c.master_challenge
        );
        lock(&m).handle(info.as_bytes(), from, now, &mut out);
        assert_eq!(lock(&m).table().len(), 1);
        let c = cache.get(&m);
        assert!(!Arc::ptr_eq(&a, &c), "the table moved: a new snapshot");
        assert_eq!(&c.body("valve")[..], b"ip 192.0.2.7:27015\n");
        assert!(Arc::ptr_eq(&c, &cache.get(&m)));
    }

    proptest! {
        /// Every server appears in its gamedir's body exactly once, in table order,
        /// and in no other.
        #[test]
        fn snapshot_bodies_hold_each_server_once(
            servers in proptest::collection::btree_map(
                (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, p)| SocketAddr::from((ip, p))),
                prop_oneof![Just(b"valve".to_vec()), Just(b"cstrike".to_vec()), proptest::collection::vec(any::<u8>(), 0..8)],
                0..64,
            )
        ) {
            let list: Vec<(SocketAddr, Box<[u8]>)> =
                servers.iter().map(|(a, g)| (*a, g.clone().into_boxed_slice())).collect();
            let snap = ListSnapshot::build(3, &list);
            prop_assert_eq!(snap.version, 3);
            let mut seen = 0;
            for (g, body) in &snap.by_gamedir {
                let want: String = list
                    .iter()
                    .filter(|(_, sg)| sg == g)
                    .map(|(a, _)| format!("ip {a}\n"))
                    .collect();
                prop_assert_eq!(&body[..], want.as_bytes());
                seen += body.iter().filter(|&&b| b == b'\n').count();
            }
            prop_assert_eq!(seen, list.len());
        }
    }
}
