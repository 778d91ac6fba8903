//! The relay engine driven directly: no sockets, no sleeps, time passed in.

use fgmp::geo::{to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use relay::{Config, DropReason, Engine, Outbox, RelayPeer, Stats};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIKF: (f64, f64) = (63.985, -22.605);

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn ecef(lat: f64, lon: f64) -> [f64; 3] {
    to_ecef(Geodetic {
        lat_deg: lat,
        lon_deg: lon,
        alt_m: 1000.0,
    })
}

/// A v2 position datagram as FlightGear sends it.
fn pos(cs: &str, at: (f64, f64), range_nm: u16) -> Vec<u8> {
    let m = Message::position(
        Callsign::new(cs).unwrap(),
        range_nm,
        Position::at("Aircraft/c172p/Models/c172p.xml", ecef(at.0, at.1)),
    );
    to_bytes(&m).unwrap()
}

fn chat(cs: &str, text: &str) -> Vec<u8> {
    to_bytes(&Message::chat(Callsign::new(cs).unwrap(), text.as_bytes())).unwrap()
}

/// `at` moved `nm` nautical miles north.
fn north(at: (f64, f64), nm: f64) -> (f64, f64) {
    (at.0 + nm / 60.0, at.1)
}

struct Rig {
    e: Engine,
    out: Outbox,
    t0: Instant,
}

impl Rig {
    fn new(config: Config) -> Rig {
        Rig {
            e: Engine::new(config, Arc::new(Stats::default())),
            out: Outbox::new(),
            t0: Instant::now(),
        }
    }
    fn send(&mut self, d: &[u8], from: &str, at_s: f64) -> Vec<(Vec<u8>, SocketAddr)> {
        self.out.clear();
        let now = self.t0 + Duration::from_secs_f64(at_s);
        self.e.handle(d, addr(from), now, &mut self.out);
        self.out
            .iter()
            .map(|t| (t.payload.to_vec(), t.to))
            .collect()
    }
    fn dests(&mut self, d: &[u8], from: &str, at_s: f64) -> Vec<SocketAddr> {
        let mut v: Vec<_> = self
            .send(d, from, at_s)
            .into_iter()
            .map(|(_, a)| a)
            .collect();
        v.sort();
        v
    }
    fn dropped(&self, r: DropReason) -> u64 {
        self.e.stats().dropped(r)
    }
}

const A: &str = "127.0.0.1:10001";
const B: &str = "127.0.0.1:10002";
const C: &str = "127.0.0.1:10003";

#[test]
fn pilots_in_range_receive_each_other_byte_for_byte() {
    let mut r = Rig::new(Config::default());
    let a = pos("ALPHA", BIKF, 100);
    let b = pos("BRAVO", north(BIKF, 5.0), 100);
    assert!(r.send(&a, A, 0.0).is_empty(), "nobody else yet");
    let got = r.send(&b, B, 0.1);
    assert_eq!(
        got,
        vec![(b.clone(), addr(A))],
        "forwarded verbatim, range word not swapped"
    );
    let got = r.send(&a, A, 0.2);
    assert_eq!(got, vec![(a.clone(), addr(B))]);
    assert_eq!(r.e.pilot_count(), 2);
}

#[test]
fn far_pilots_receive_nothing_and_the_sender_never_gets_its_own() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("FAR", (-33.9, 151.2), 100), C, 0.0);
    let d = r.dests(&pos("BRAVO", north(BIKF, 5.0), 100), B, 0.1);
    assert_eq!(d, vec![addr(A)]);
    let d = r.dests(&pos("FAR", (-33.9, 151.2), 100), C, 0.2);
    assert!(d.is_empty());
}

#[test]
fn the_receivers_range_decides() {
    let mut r = Rig::new(Config::default());
    // SHORT sees only 10 nm; LONG sees 100 nm; they are 50 nm apart.
    r.send(&pos("SHORT", BIKF, 10), A, 0.0);
    r.send(&pos("LONG", north(BIKF, 50.0), 100), B, 0.0);
    assert_eq!(r.dests(&pos("SHORT", BIKF, 10), A, 0.1), vec![addr(B)]);
    assert!(r
        .dests(&pos("LONG", north(BIKF, 50.0), 100), B, 0.1)
        .is_empty());
}

#[test]
fn ranges_default_to_out_of_reach_and_are_capped() {
    let mut r = Rig::new(Config::default());
    // Range word 0: default 100 nm. 150 nm away: not in range.
    r.send(&pos("ZERO", BIKF, 0), A, 0.0);
    assert!(r
        .dests(&pos("S1", north(BIKF, -150.0), 100), B, 0.1)
        .is_empty());
    assert_eq!(
        r.dests(&pos("S2", north(BIKF, 90.0), 100), C, 0.1),
        vec![addr(A)]
    );
    // 60000 nm requested: capped at 2000 nm, so a pilot 2100 nm away is not seen.
    let mut r = Rig::new(Config::default());
    let equator = (0.0, 10.0);
    r.send(&pos("HUGE", equator, 60000), A, 0.0);
    assert_eq!(
        r.dests(&pos("N1", north(equator, 1900.0), 100), B, 0.1),
        vec![addr(A)]
    );
    assert!(r
        .dests(&pos("N2", north(equator, 2100.0), 100), C, 0.1)
        .is_empty());
}

#[test]
fn chat_needs_a_known_sender_and_follows_range() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    assert!(r.send(&chat("GHOST", "hi"), B, 0.1).is_empty());
    assert_eq!(r.dropped(DropReason::UnknownSender), 1);
    assert_eq!(r.e.pilot_count(), 1, "chat never creates a pilot");
    r.send(&pos("BRAVO", north(BIKF, 3.0), 100), B, 0.2);
    let c = chat("BRAVO", "hello");
    assert_eq!(r.send(&c, B, 0.3), vec![(c.clone(), addr(A))]);
}

#[test]
fn observers_receive_but_are_never_forwarded() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("obs01", BIKF, 100), A, 0.0);
    assert_eq!(
        r.dests(&pos("BRAVO", north(BIKF, 1.0), 100), B, 0.1),
        vec![addr(A)]
    );
    assert!(r.send(&pos("obs01", BIKF, 100), A, 0.2).is_empty());
    assert_eq!(r.e.pilot_count(), 2, "observers count as online");
}

#[test]
fn ping_gets_pong() {
    let mut r = Rig::new(Config::default());
    let ping = to_bytes(&Message::ping(Callsign::new("probe").unwrap())).unwrap();
    let got = r.send(&ping, A, 0.0);
    let mut pong = ping.clone();
    pong[11] = 10;
    assert_eq!(got, vec![(pong.clone(), addr(A))]);
    assert!(
        r.send(&pong, A, 0.1).is_empty(),
        "pongs are counted and dropped"
    );
    assert_eq!(r.e.pilot_count(), 0);
}

#[test]
fn a_callsign_is_bound_to_its_first_address() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", north(BIKF, 1.0), 100), B, 0.0);
    // Same IP, other port: dropped (fgms ignored the port), and ALPHA does not move.
    let hijack = pos("ALPHA", (-33.9, 151.2), 100);
    assert!(r.send(&hijack, "127.0.0.1:10099", 0.1).is_empty());
    assert_eq!(r.dropped(DropReason::AddressMismatch), 1);
    let view =
        r.e.pilots(r.t0)
            .into_iter()
            .find(|p| p.callsign.as_bytes() == b"ALPHA")
            .unwrap();
    assert_eq!(view.addr, addr(A));
    assert!((view.position[0] - ecef(BIKF.0, BIKF.1)[0]).abs() < 1e-6);
}

#[test]
fn silent_pilots_expire_by_timer() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", north(BIKF, 1.0), 100), B, 0.0);
    let mut t = 1.0;
    while t < 9.5 {
        r.send(&pos("BRAVO", north(BIKF, 1.0), 100), B, t);
        r.e.handle_timeout(r.t0 + Duration::from_secs_f64(t), &mut r.out);
        t += 1.0;
    }
    assert_eq!(r.e.pilot_count(), 2);
    // No traffic at all after this: only the timer can remove ALPHA.
    let deadline =
        r.e.poll_timeout()
            .expect("a sweep is armed while pilots exist");
    assert!(deadline <= r.t0 + Duration::from_secs(11));
    r.e.handle_timeout(r.t0 + Duration::from_secs(11), &mut r.out);
    assert_eq!(r.e.pilot_count(), 1, "ALPHA silent for 11 s is gone");
    r.e.handle_timeout(r.t0 + Duration::from_secs(21), &mut r.out);
    assert_eq!(r.e.pilot_count(), 0);
    assert_eq!(
        r.e.stats()
            .pilots_expired
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    assert_eq!(r.e.poll_timeout(), None, "no timer when nobody is online");
}

fn mutate(mut d: Vec<u8>, f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    f(&mut d);
    d
}

#[test]
fn bad_datagrams_are_counted_and_change_nothing() {
    let good = pos("BAD", north(BIKF, 1.0), 100);
    let len = good.len();
    let cases: Vec<(DropReason, Vec<u8>)> = vec![
        (
            DropReason::BadMagic,
            mutate(good.clone(), |d| d[0..4].copy_from_slice(b"xV4\x12")),
        ),
        (
            DropReason::BadVersion,
            mutate(good.clone(), |d| {
                d[4..8].copy_from_slice(&0x0002_0001u32.to_be_bytes())
            }),
        ),
        (
            DropReason::LengthMismatch,
            mutate(good.clone(), |d| {
                d[12..16].copy_from_slice(&999u32.to_be_bytes())
            }),
        ),
        (
            DropReason::LengthMismatch,
            mutate(good.clone(), |d| d.truncate(len - 1)),
        ),
        (
            DropReason::PositionTooShort,
            mutate(good.clone(), |d| {
                d.truncate(200);
                d[12..16].copy_from_slice(&200u32.to_be_bytes());
            }),
        ),
        (
            DropReason::Oversize,
            mutate(good.clone(), |d| {
                d.resize(1201, 0);
                d[12..16].copy_from_slice(&1201u32.to_be_bytes());
            }),
        ),
        (
            DropReason::NonFinitePosition,
            mutate(good.clone(), |d| {
                d[144..152].copy_from_slice(&f64::NAN.to_bits().to_be_bytes())
            }),
        ),
        (
            DropReason::NonFinitePosition,
            mutate(good.clone(), |d| {
                d[160..168].copy_from_slice(&f64::INFINITY.to_bits().to_be_bytes())
            }),
        ),
        (
            DropReason::ZeroPosition,
            mutate(good.clone(), |d| d[144..168].fill(0)),
        ),
        (DropReason::Runt, good[..20].to_vec()),
        (DropReason::Runt, vec![]),
        (
            DropReason::EmptyCallsign,
            mutate(good.clone(), |d| d[24..32].fill(0)),
        ),
    ];
    for (reason, bad) in cases {
        let mut r = Rig::new(Config::default());
        r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
        assert!(
            r.send(&bad, B, 0.1).is_empty(),
            "{reason:?} must not be forwarded"
        );
        assert_eq!(r.dropped(reason), 1, "{reason:?} counted");
        assert_eq!(r.e.stats().dropped_total(), 1);
        assert_eq!(r.e.pilot_count(), 1, "{reason:?} created no pilot");
        // Valid traffic still flows, and the bad sender's callsign is still free.
        assert_eq!(r.dests(&good, B, 0.2), vec![addr(A)], "after {reason:?}");
    }
}

#[test]
fn a_bad_datagram_does_not_move_a_known_pilot() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", north(BIKF, 1.0), 100), B, 0.0);
    let zero = mutate(pos("BRAVO", north(BIKF, 1.0), 100), |d| d[144..168].fill(0));
    assert!(r.send(&zero, B, 0.1).is_empty());
    let v =
        r.e.pilots(r.t0)
            .into_iter()
            .find(|p| p.callsign.as_bytes() == b"BRAVO")
            .unwrap();
    assert!(v.position[0] != 0.0);
}

fn relay_cfg(relays: &[&str], hub: bool) -> Config {
    Config {
        relays: relays
            .iter()
            .map(|a| RelayPeer {
                addr: addr(a),
                label: a.to_string(),
            })
            .collect(),
        hub,
        ..Config::default()
    }
}

const R1: &str = "127.0.0.1:20001";
const R2: &str = "127.0.0.1:20002";
const R3: &str = "127.0.0.1:20003";

fn relay_form(d: &[u8]) -> Vec<u8> {
    mutate(d.to_vec(), |d| d[0..4].copy_from_slice(b"SFGF"))
}

#[test]
fn one_relay_link_carries_at_most_max_pilots_per_relay() {
    // Issue 20, item 2: a relay link (or whoever spoofs its address) could fill the
    // whole table; now it holds its cap, counted, and the other link is unaffected.
    let mut r = Rig::new(Config {
        max_pilots_per_relay: 3,
        ..relay_cfg(&[R1, R2], false)
    });
    for i in 0..5 {
        r.send(&relay_form(&pos(&format!("R1P{i}"), BIKF, 100)), R1, 0.0);
    }
    assert_eq!(r.e.pilot_count(), 3);
    assert_eq!(r.dropped(DropReason::PerRelayLimit), 2);
    r.send(&relay_form(&pos("R2P0", BIKF, 100)), R2, 0.0);
    assert_eq!(r.e.pilot_count(), 4);
    // Known pilots keep flowing; a place freed by expiry is taken again.
    r.send(&relay_form(&pos("R1P0", BIKF, 100)), R1, 1.0);
    assert_eq!(r.dropped(DropReason::PerRelayLimit), 2);
    r.e.handle_timeout(r.t0 + Duration::from_secs(30), &mut r.out);
    r.send(&relay_form(&pos("R1P9", BIKF, 100)), R1, 30.0);
    assert_eq!(r.e.pilot_count(), 1);
}

#[test]
fn local_traffic_goes_to_relays_lazily_when_nobody_is_in_range() {
    let mut r = Rig::new(relay_cfg(&[R1], false));
    let a = pos("ALPHA", BIKF, 100);
    // First datagram crosses at once, with the relay magic.
    assert_eq!(r.send(&a, A, 0.0), vec![(relay_form(&a), addr(R1))]);
    // Then at most one per 2 s while the relay has nobody in range.
    let mut sent = 0;
    for i in 1..=40 {
        sent += r.send(&a, A, i as f64 * 0.1).len();
    }
    assert_eq!(sent, 2, "t = 2.0 s and 4.0 s");
}

#[test]
fn relays_get_full_rate_when_any_of_their_pilots_is_in_range() {
    let mut r = Rig::new(relay_cfg(&[R1], false));
    // Two remote pilots behind R1: the first far away, the second close (fgms looked only at the first).
    assert!(r
        .send(&relay_form(&pos("FAR", (-33.9, 151.2), 100)), R1, 0.0)
        .is_empty());
    r.send(&relay_form(&pos("NEAR", north(BIKF, 2.0), 100)), R1, 0.0);
    let a = pos("ALPHA", BIKF, 100);
    let mut sent = 0;
    for i in 0..20 {
        let got = r.send(&a, A, i as f64 * 0.1);
        assert!(got
            .iter()
            .all(|(b, to)| *to == addr(R1) && b[0..4] == *b"SFGF"));
        sent += got.len();
    }
    assert_eq!(sent, 20, "every datagram crosses");
}

#[test]
fn relay_traffic_reaches_local_pilots_in_range_with_the_client_magic() {
    let mut r = Rig::new(relay_cfg(&[R1], false));
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("FARAWAY", (-33.9, 151.2), 100), C, 0.0);
    let remote = pos("REMOTE", north(BIKF, 5.0), 100);
    let got = r.send(&relay_form(&remote), R1, 0.1);
    assert_eq!(
        got,
        vec![(remote.clone(), addr(A))],
        "FGFS magic, nothing else changed; not back to R1"
    );
    // An fgms peer byte-swaps the range word: deliver the word FlightGear would have sent.
    let swapped = mutate(relay_form(&remote), |d| {
        d[16..20].copy_from_slice(&0x6400_0000u32.to_be_bytes())
    });
    let got = r.send(&swapped, R1, 0.2);
    assert_eq!(got, vec![(remote.clone(), addr(A))]);
    let view =
        r.e.pilots(r.t0)
            .into_iter()
            .find(|p| p.callsign.as_bytes() == b"REMOTE")
            .unwrap();
    assert_eq!(
        view.range_nm, 100.0,
        "swapped word decoded as 100 nm, not 25600"
    );
    assert!(!view.local);
    assert_eq!(view.origin, R1);
}

#[test]
fn relay_magic_from_an_unknown_address_is_dropped() {
    let mut r = Rig::new(relay_cfg(&[R1], false));
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    assert!(r
        .send(&relay_form(&pos("EVIL", BIKF, 100)), "127.0.0.9:1234", 0.1)
        .is_empty());
    assert_eq!(r.dropped(DropReason::UnknownRelay), 1);
    assert_eq!(r.e.pilot_count(), 1);
}

#[test]
fn whitelisted_peers_may_send_relay_traffic() {
    let mut cfg = Config::default();
    cfg.whitelist.push("127.0.0.8/30".parse().unwrap());
    let mut r = Rig::new(cfg);
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    let d = pos("FRIEND", BIKF, 100);
    assert_eq!(
        r.send(&relay_form(&d), "127.0.0.9:1", 0.1),
        vec![(d, addr(A))]
    );
}

#[test]
fn hubs_reforward_relay_traffic_but_never_back() {
    let remote = relay_form(&pos("REMOTE", BIKF, 100));
    let mut hub = Rig::new(relay_cfg(&[R1, R2, R3], true));
    let mut d = hub.dests(&remote, R2, 0.0);
    d.sort();
    assert_eq!(d, vec![addr(R1), addr(R3)]);
    let mut leaf = Rig::new(relay_cfg(&[R1, R2, R3], false));
    assert!(
        leaf.dests(&remote, R2, 0.0).is_empty(),
        "only hubs re-forward"
    );
}

#[test]
fn crossfeed_gets_every_valid_datagram() {
    let cf = addr("127.0.0.1:30000");
    let mut r = Rig::new(Config {
        crossfeeds: vec![cf],
        ..Config::default()
    });
    let a = pos("ALPHA", BIKF, 100);
    assert_eq!(r.send(&a, A, 0.0), vec![(relay_form(&a), cf)]);
    let obs = pos("obs1", BIKF, 100);
    assert_eq!(
        r.send(&obs, B, 0.0)
            .iter()
            .filter(|(_, t)| *t == cf)
            .count(),
        1
    );
    assert!(
        r.send(&a[..100], A, 0.1).is_empty(),
        "invalid datagrams are not crossfed"
    );
}

#[test]
fn blacklisted_networks_are_dropped() {
    let mut cfg = Config::default();
    cfg.blacklist.push("127.0.0.0/30".parse().unwrap());
    let mut r = Rig::new(cfg);
    r.send(&pos("ALPHA", BIKF, 100), "127.0.0.5:1", 0.0);
    assert!(r
        .send(&pos("BAD", BIKF, 100), "127.0.0.2:1", 0.1)
        .is_empty());
    assert_eq!(r.dropped(DropReason::Blacklisted), 1);
    assert_eq!(r.e.pilot_count(), 1);
}

#[test]
fn the_table_is_bounded() {
    let mut r = Rig::new(Config {
        max_pilots: 2,
        ..Config::default()
    });
    r.send(&pos("P1", BIKF, 100), A, 0.0);
    r.send(&pos("P2", BIKF, 100), B, 0.0);
    r.send(&pos("P3", BIKF, 100), C, 0.0);
    assert_eq!(r.e.pilot_count(), 2);
    assert_eq!(r.dropped(DropReason::TableFull), 1);
}

#[test]
fn reconfigure_keeps_pilots() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.e.reconfigure(Config {
        name: "renamed".into(),
        ..Config::default()
    });
    assert_eq!(r.e.pilot_count(), 1);
    assert_eq!(r.e.config().name, "renamed");
    assert_eq!(r.dests(&pos("BRAVO", BIKF, 100), B, 0.1), vec![addr(A)]);
}

#[test]
fn other_message_ids_are_not_forwarded() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", BIKF, 100), B, 0.0);
    for id in [2u32, 3, 4, 5, 6, 8, 11, 99] {
        let d = mutate(pos("BRAVO", BIKF, 100), |d| {
            d[8..12].copy_from_slice(&id.to_be_bytes())
        });
        assert!(r.send(&d, B, 0.1).is_empty(), "id {id}");
    }
    assert_eq!(r.dropped(DropReason::UnsupportedMsgId), 8);
}

// --- Issue 9, item 2: one pilot per socket, a cap per source, one copy per address.

/// Destinations of one datagram, each with how many copies it was sent.
fn copies(
    r: &mut Rig,
    d: &[u8],
    from: &str,
    at_s: f64,
) -> std::collections::BTreeMap<SocketAddr, usize> {
    let mut m = std::collections::BTreeMap::new();
    for (_, to) in r.send(d, from, at_s) {
        *m.entry(to).or_default() += 1;
    }
    m
}

#[test]
fn a_socket_announcing_many_callsigns_gets_one_copy() {
    // Before: each callsign became a pilot and the socket received K copies.
    let mut r = Rig::new(Config::default());
    for i in 0..5 {
        r.send(&pos(&format!("SPAM{i}"), BIKF, 100), A, 0.0);
    }
    assert_eq!(r.e.pilot_count(), 1, "one pilot per socket");
    let got = copies(&mut r, &pos("VICTIM", BIKF, 100), B, 0.1);
    assert_eq!(got.get(&addr(A)), Some(&1));
    assert_eq!(
        r.e.stats()
            .pilots_replaced
            .load(std::sync::atomic::Ordering::Relaxed),
        4
    );
}

#[test]
fn a_callsign_change_on_the_same_socket_replaces_the_pilot_at_once() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("OLD", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", north(BIKF, 1.0), 100), B, 0.0);
    // The simulator's callsign changes: the new one is forwarded at once.
    let new = pos("NEW", BIKF, 100);
    assert_eq!(r.send(&new, A, 0.1), vec![(new.clone(), addr(B))]);
    let names: Vec<String> =
        r.e.pilots(r.t0)
            .iter()
            .map(|p| p.callsign.to_string())
            .collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"NEW".to_string()) && !names.contains(&"OLD".to_string()));
    // The old callsign is free for anyone at once, and chat under it is unknown.
    assert!(r.send(&chat("OLD", "hi"), A, 0.2).is_empty());
    assert_eq!(r.dropped(DropReason::UnknownSender), 1);
    r.send(&pos("OLD", BIKF, 100), C, 0.3);
    assert_eq!(r.e.pilot_count(), 3);
    assert_eq!(r.dropped(DropReason::AddressMismatch), 0);
}

#[test]
fn a_taken_callsign_does_not_replace_the_senders_pilot() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    r.send(&pos("BRAVO", BIKF, 100), B, 0.0);
    // B claims ALPHA: refused, and BRAVO stays.
    assert!(r.send(&pos("ALPHA", BIKF, 100), B, 0.1).is_empty());
    assert_eq!(r.dropped(DropReason::AddressMismatch), 1);
    assert_eq!(r.dests(&pos("BRAVO", BIKF, 100), B, 0.2), vec![addr(A)]);
}

#[test]
fn pilots_per_ipv4_address_are_capped() {
    let mut r = Rig::new(Config {
        max_pilots_per_ip: 3,
        ..Config::default()
    });
    for port in 1..=4 {
        r.send(
            &pos(&format!("P{port}"), BIKF, 100),
            &format!("192.0.2.1:{port}"),
            0.0,
        );
    }
    assert_eq!(r.e.pilot_count(), 3);
    assert_eq!(r.dropped(DropReason::PerIpLimit), 1);
    // Other addresses are not affected; a callsign change on a counted socket still works.
    r.send(&pos("OTHER", BIKF, 100), "192.0.2.2:1", 0.0);
    r.send(&pos("P1NEW", BIKF, 100), "192.0.2.1:1", 0.1);
    assert_eq!(r.e.pilot_count(), 4);
    assert_eq!(r.dropped(DropReason::PerIpLimit), 1);
    // When one expires there is room again.
    for t in [2.0, 4.0, 6.0, 8.0, 10.0, 12.0] {
        for port in 1..=2 {
            let cs = if port == 1 {
                "P1NEW".to_string()
            } else {
                format!("P{port}")
            };
            r.send(&pos(&cs, BIKF, 100), &format!("192.0.2.1:{port}"), t);
        }
        r.send(&pos("OTHER", BIKF, 100), "192.0.2.2:1", t);
        r.e.handle_timeout(r.t0 + Duration::from_secs_f64(t), &mut r.out);
    }
    assert_eq!(r.e.pilot_count(), 3, "P3 expired");
    r.send(&pos("P4", BIKF, 100), "192.0.2.1:4", 12.5);
    assert_eq!(r.e.pilot_count(), 4);
    assert_eq!(r.dropped(DropReason::PerIpLimit), 1);
}

#[test]
fn pilots_per_ipv6_64_are_capped_whatever_the_interface_id() {
    let mut r = Rig::new(Config {
        max_pilots_per_ip: 2,
        ..Config::default()
    });
    r.send(&pos("V1", BIKF, 100), "[2001:db8:0:1::1]:5000", 0.0);
    r.send(&pos("V2", BIKF, 100), "[2001:db8:0:1::2]:5000", 0.0);
    r.send(
        &pos("V3", BIKF, 100),
        "[2001:db8:0:1:ffff:ffff:ffff:ffff]:5000",
        0.0,
    );
    assert_eq!(r.e.pilot_count(), 2);
    assert_eq!(r.dropped(DropReason::PerIpLimit), 1);
    r.send(&pos("V4", BIKF, 100), "[2001:db8:0:2::1]:5000", 0.0);
    assert_eq!(r.e.pilot_count(), 3, "another /64 is another source");
}

#[test]
fn the_per_ip_cap_does_not_apply_to_relay_traffic() {
    let mut r = Rig::new(Config {
        max_pilots_per_ip: 1,
        ..relay_cfg(&[R1], false)
    });
    for i in 0..5 {
        r.send(&relay_form(&pos(&format!("REM{i}"), BIKF, 100)), R1, 0.0);
    }
    assert_eq!(
        r.e.pilot_count(),
        5,
        "a relay carries many pilots from one address"
    );
    assert_eq!(r.dropped(DropReason::PerIpLimit), 0);
}

#[test]
fn a_client_at_a_relay_or_crossfeed_address_is_refused() {
    let cf = "127.0.0.1:30000";
    let mut r = Rig::new(Config {
        crossfeeds: vec![addr(cf)],
        ..relay_cfg(&[R1], false)
    });
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    assert!(r.send(&pos("SPOOF1", BIKF, 100), R1, 0.1).is_empty());
    assert!(r.send(&pos("SPOOF2", BIKF, 100), cf, 0.1).is_empty());
    assert_eq!(r.dropped(DropReason::PeerAddress), 2);
    assert_eq!(r.e.pilot_count(), 1);
}

#[test]
fn a_relay_that_is_also_a_crossfeed_gets_one_copy() {
    let mut r = Rig::new(Config {
        crossfeeds: vec![addr(R1), addr(R1)],
        ..relay_cfg(&[R1, R1], false)
    });
    let got = copies(&mut r, &pos("ALPHA", BIKF, 100), A, 0.0);
    assert_eq!(got.get(&addr(R1)), Some(&1));
}

#[test]
fn positions_outside_the_physical_envelope_are_dropped() {
    let mut r = Rig::new(Config::default());
    r.send(&pos("ALPHA", BIKF, 100), A, 0.0);
    for p in [
        [1e308, 0.0, 0.0],
        [0.0, -1.0e8 - 1.0, 0.0],
        [7.0e7, 7.0e7, 7.0e7],
    ] {
        let m = Message::position(
            Callsign::new("FAR").unwrap(),
            100,
            Position::at("Aircraft/c172p/Models/c172p.xml", p),
        );
        assert!(r.send(&to_bytes(&m).unwrap(), B, 0.1).is_empty());
    }
    assert_eq!(r.dropped(DropReason::PositionOutOfRange), 3);
    assert_eq!(r.e.pilot_count(), 1);
    // A satellite-high position (GPS orbit, 26,600 km from the centre) is still accepted.
    let m = Message::position(
        Callsign::new("HIGH").unwrap(),
        100,
        Position::at("Aircraft/c172p/Models/c172p.xml", [2.66e7, 0.0, 0.0]),
    );
    r.send(&to_bytes(&m).unwrap(), B, 0.2);
    assert_eq!(r.e.pilot_count(), 2);
}

#[test]
fn a_silent_pilot_expires_among_a_thousand_steady_ones() {
    // 1,000 pilots join at 0 and keep sending; one joins at 5 and goes silent.
    let mut r = Rig::new(Config::default());
    for i in 0..1000u32 {
        let from = format!("127.{}.{}.1:5000", 1 + i / 250, i % 250);
        r.send(&pos(&format!("S{i}"), BIKF, 10), &from, 0.0);
    }
    r.send(&pos("GONE", BIKF, 10), B, 5.0);
    let mut t = 1.0;
    while t <= 16.0 {
        for i in 0..1000u32 {
            let from = format!("127.{}.{}.1:5000", 1 + i / 250, i % 250);
            r.send(&pos(&format!("S{i}"), BIKF, 10), &from, t);
        }
        r.e.handle_timeout(r.t0 + Duration::from_secs_f64(t), &mut r.out);
        t += 1.0;
    }
    assert_eq!(
        r.e.pilot_count(),
        1000,
        "GONE expired, the steady ones stay"
    );
    assert_eq!(
        r.e.stats()
            .pilots_expired
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

mod no_double_copies {
    use super::*;
    use proptest::prelude::*;

    const ADDRS: [&str; 6] = [A, B, C, "[2001:db8::1]:1", R1, "127.0.0.1:30000"];

    proptest! {
        /// Whatever callsigns any source (clients, a relay, a crossfeed target's
        /// address) announces, in any order, no address is ever sent two copies
        /// of one datagram.
        #[test]
        fn no_address_receives_two_copies_of_one_datagram(
            ops in prop::collection::vec((0usize..6, 0usize..6, any::<bool>(), 0u8..3), 1..120),
        ) {
            let mut r = Rig::new(Config {
                crossfeeds: vec![addr("127.0.0.1:30000")],
                hub: true,
                ..relay_cfg(&[R1, R2], true)
            });
            for (k, (src, cs, relay_magic, spot)) in ops.into_iter().enumerate() {
                let at = [BIKF, north(BIKF, 3.0), north(BIKF, 300.0)][spot as usize];
                let mut d = pos(&format!("CS{cs}"), at, 100);
                if relay_magic {
                    d = relay_form(&d);
                }
                let got = copies(&mut r, &d, ADDRS[src], k as f64 * 0.05);
                for (to, n) in got {
                    prop_assert_eq!(n, 1, "{} got {} copies", to, n);
                }
            }
        }
    }
}

#[test]
fn nothing_goes_back_to_the_source_address() {
    // Found by the relay_engine fuzzer: a relay matched by IP alone (any port) sent
    // SFGF from the socket of a local pilot, which then got the relay's traffic back.
    let cf = "127.0.0.1:30000";
    let mut r = Rig::new(Config {
        crossfeeds: vec![addr(cf)],
        ..relay_cfg(&[R1], false)
    });
    let shared = "127.0.0.1:20999"; // same IP as R1, another port
    r.send(&pos("LOCAL", BIKF, 100), shared, 0.0);
    let got = r.dests(&relay_form(&pos("REMOTE", BIKF, 100)), shared, 0.1);
    assert!(!got.contains(&addr(shared)), "{got:?}");
    assert_eq!(got, vec![addr(cf)]);
}

#[test]
fn each_link_counts_its_own_traffic_and_keeps_it_across_a_reload() {
    let cf: SocketAddr = addr("127.0.0.1:20009");
    let mut cfg = relay_cfg(&[R1, R2], false);
    cfg.crossfeeds = vec![cf];
    let mut r = Rig::new(cfg.clone());
    let a = pos("ALPHA", BIKF, 100);
    r.send(&a, A, 0.0); // first datagram: to R1, R2 (lazily) and the crossfeed
    let remote = relay_form(&pos("REMOTE", north(BIKF, 5.0), 100));
    r.send(&remote, R1, 0.5);
    r.send(&remote, R1, 0.6);
    let links = r.e.links();
    let by = |label: &str| links.iter().find(|l| l.label == label).unwrap().counters;
    assert_eq!(links.len(), 3);
    assert_eq!(links[2].kind, relay::LinkKind::Crossfeed);
    assert_eq!(links[2].addr, cf);
    let (r1, r2, c) = (by(R1), by(R2), by("127.0.0.1:20009"));
    assert_eq!((r1.datagrams_in, r1.bytes_in), (2, 2 * remote.len() as u64));
    assert_eq!(r1.last_in, Some(r.t0 + Duration::from_millis(600)));
    assert_eq!((r1.datagrams_out, r1.bytes_out), (1, a.len() as u64));
    // R2 got ALPHA's first datagram only (R1's pilots cross to R2 in hub mode only).
    assert_eq!(r2.datagrams_in, 0);
    assert_eq!(r2.last_in, None);
    assert_eq!(r2.datagrams_out, 1);
    // The crossfeed gets a copy of each of the three valid datagrams.
    assert_eq!(
        (c.datagrams_out, c.bytes_out),
        (3, (a.len() + 2 * remote.len()) as u64)
    );
    // A reload that keeps R1 and drops R2 keeps R1's counters.
    cfg.relays.remove(1);
    r.e.reconfigure(cfg);
    let links = r.e.links();
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].counters, r1);
}

#[test]
fn a_pilot_view_carries_the_velocity_and_the_time_since_its_last_datagram() {
    let mut r = Rig::new(Config::default());
    let mut p = Position::at("Aircraft/c172p/Models/c172p.xml", ecef(BIKF.0, BIKF.1));
    p.linear_vel = [51.4, -0.5, 2.0];
    let m = Message::position(Callsign::new("FAST").unwrap(), 100, p);
    r.send(&to_bytes(&m).unwrap(), A, 1.0);
    let v = &r.e.pilots(r.t0 + Duration::from_secs(3))[0];
    assert_eq!(v.velocity, [51.4, -0.5, 2.0]);
    assert_eq!(v.silent_for, Duration::from_secs(2));
    assert_eq!(v.online_for, Duration::from_secs(2));
}

fn pos_model(cs: &str, at: (f64, f64), model: &str) -> Vec<u8> {
    let m = Message::position(
        Callsign::new(cs).unwrap(),
        100,
        Position::at(model, ecef(at.0, at.1)),
    );
    to_bytes(&m).unwrap()
}

/// (Began/Ended, callsign, model, seconds after t0, why) of every event taken.
fn sessions(r: &mut Rig) -> Vec<(bool, String, String, u64, Option<relay::EndReason>)> {
    let mut v = Vec::new();
    r.e.take_sessions(&mut v);
    v.into_iter()
        .map(|e| match e {
            relay::SessionEvent::Began {
                callsign,
                model,
                at,
                ..
            } => (
                true,
                callsign.to_string(),
                model,
                (at - r.t0).as_secs(),
                None,
            ),
            relay::SessionEvent::Ended {
                callsign,
                model,
                at,
                why,
            } => (
                false,
                callsign.to_string(),
                model,
                (at - r.t0).as_secs(),
                Some(why),
            ),
        })
        .collect()
}

#[test]
fn local_sessions_begin_and_end_with_the_pilot_its_callsign_and_its_model() {
    use relay::EndReason::*;
    let c172 = "Aircraft/c172p/Models/c172p.xml";
    let ufo = "Aircraft/ufo/Models/ufo.xml";
    let mut r = Rig::new(relay_cfg(&["127.0.0.9:5000"], false));
    // Before logging starts nothing is kept; a pilot already flying begins when it starts.
    r.send(&pos_model("EARLY", BIKF, c172), C, 0.0);
    r.e.record_sessions(Some(16), r.t0 + Duration::from_secs(1));
    assert_eq!(
        sessions(&mut r),
        vec![(true, "EARLY".into(), c172.into(), 1, None)]
    );
    r.send(&pos_model("ALPHA", BIKF, c172), A, 2.0);
    r.send(&pos_model("ALPHA", BIKF, c172), A, 3.0);
    // Same callsign, new model: one flight ends, the next begins.
    r.send(&pos_model("ALPHA", BIKF, ufo), A, 4.0);
    // The simulator's callsign changed on the same socket: ALPHA ends at its last datagram.
    r.send(&pos_model("ALPHA2", BIKF, ufo), A, 5.0);
    // A remote pilot (from the linked relay) is not a local session.
    let mut remote = pos_model("REMOTE", BIKF, c172);
    remote[0..4].copy_from_slice(b"SFGF");
    r.send(&remote, "127.0.0.9:5000", 5.0);
    assert_eq!(
        sessions(&mut r),
        vec![
            (true, "ALPHA".into(), c172.into(), 2, None),
            (false, "ALPHA".into(), c172.into(), 4, Some(ModelChanged)),
            (true, "ALPHA".into(), ufo.into(), 4, None),
            (false, "ALPHA".into(), ufo.into(), 4, Some(Replaced)),
            (true, "ALPHA2".into(), ufo.into(), 5, None),
        ]
    );
    // Silence: EARLY (last heard at 0 s) and ALPHA2 (5 s) end at their last datagram.
    r.e.handle_timeout(r.t0 + Duration::from_secs(20), &mut r.out);
    let mut ended = sessions(&mut r);
    ended.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        ended,
        vec![
            (false, "ALPHA2".into(), ufo.into(), 5, Some(Expired)),
            (false, "EARLY".into(), c172.into(), 0, Some(Expired)),
        ]
    );
    // The log is bounded: past its cap, events are dropped and counted.
    r.e.record_sessions(Some(2), r.t0 + Duration::from_secs(21));
    for (i, a) in ["127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"]
        .iter()
        .enumerate()
    {
        r.send(&pos_model(&format!("P{i}"), BIKF, c172), a, 22.0);
    }
    assert_eq!(sessions(&mut r).len(), 2);
    assert_eq!(
        r.e.stats()
            .session_events_dropped
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // Positions of the local pilots, for the tracker's POSITION lines.
    let mut at = Vec::new();
    r.e.local_positions(&mut at);
    let mut names: Vec<String> = at.iter().map(|p| p.callsign.to_string()).collect();
    names.sort();
    assert_eq!(names, ["P0", "P1", "P2"]);
}

#[test]
fn the_view_holds_each_pilots_last_position_datagram_and_count() {
    let mut r = Rig::new(Config::default());
    let first = pos("ALPHA", BIKF, 100);
    let second = pos("ALPHA", north(BIKF, 1.0), 50);
    r.send(&first, A, 0.0);
    r.send(&second, A, 0.1);
    // A chat message (MsgId 1) counts as a datagram but is not a position.
    r.send(&chat("ALPHA", "hi"), A, 0.2);
    let v = r.e.pilots_with_datagrams(r.t0).into_iter().next().unwrap();
    assert_eq!(v.last_datagram, second);
    assert_eq!(v.datagrams, 3);
    // The telnet list's and the admin API's view copies no datagram.
    let plain = r.e.pilots(r.t0).into_iter().next().unwrap();
    assert!(plain.last_datagram.is_empty());
    assert_eq!(plain.datagrams, 3);
    // Longer than FlightGear's 1,200-byte buffer: the copy is cut there.
    let mut big = pos("BRAVO", BIKF, 100);
    big.resize(1400, 0);
    let n = big.len() as u32;
    big[12..16].copy_from_slice(&n.to_be_bytes());
    r.send(&big, B, 0.3);
    if let Some(v) =
        r.e.pilots_with_datagrams(r.t0)
            .into_iter()
            .find(|p| p.callsign.as_bytes() == b"BRAVO")
    {
        assert_eq!(v.last_datagram.len(), fgmp::MAX_DATAGRAM);
    }
}
