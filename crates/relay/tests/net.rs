//! Linked relays stepped through the in-memory network (`sansio::net`): pilots are
//! outside sockets sending positions at 10 Hz, relays are engines, time is virtual.
//! No sockets, no sleeps; every count below is exact because every run is the same.

use fgmp::geo::{to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use relay::{Config, DropReason, Engine, RelayPeer, Stats, Tiers};
use sansio::net::{Hop, Network};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIKF: (f64, f64) = (63.985, -22.605);
const SYDNEY: (f64, f64) = (-33.9, 151.2);
/// One-way latency of every datagram.
const LATENCY: Duration = Duration::from_millis(5);
/// FlightGear's default send rate.
const TICK: Duration = Duration::from_millis(100);

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// `at` moved `nm` nautical miles north.
fn north(at: (f64, f64), nm: f64) -> (f64, f64) {
    (at.0 + nm / 60.0, at.1)
}

/// A v2 position datagram as FlightGear sends it.
fn pos(cs: &str, at: (f64, f64), range_nm: u16) -> Vec<u8> {
    let ecef = to_ecef(Geodetic {
        lat_deg: at.0,
        lon_deg: at.1,
        alt_m: 1000.0,
    });
    let m = Message::position(
        Callsign::new(cs).unwrap(),
        range_nm,
        Position::at("Aircraft/c172p/Models/c172p.xml", ecef),
    );
    to_bytes(&m).unwrap()
}

/// The callsign field of an fgmp datagram.
fn callsign_of(d: &[u8]) -> String {
    let field = &d[24..32];
    let n = field.iter().position(|&b| b == 0).unwrap_or(8);
    String::from_utf8_lossy(&field[..n]).into_owned()
}

/// A FlightGear client: where it is, which relay it talks to, what it sends.
struct Pilot {
    addr: SocketAddr,
    relay: SocketAddr,
    callsign: &'static str,
    datagram: Vec<u8>,
}

impl Pilot {
    fn new(addr: &str, relay: SocketAddr, callsign: &'static str, at: (f64, f64)) -> Pilot {
        Pilot {
            addr: self::addr(addr),
            relay,
            callsign,
            datagram: pos(callsign, at, 100),
        }
    }

    fn move_to(&mut self, at: (f64, f64)) {
        self.datagram = pos(self.callsign, at, 100);
    }
}

fn relay_engine(peers: &[SocketAddr], hub: bool) -> Engine {
    let config = Config {
        relays: peers
            .iter()
            .map(|&a| RelayPeer {
                addr: a,
                label: format!("relay-{}", a.ip()),
            })
            .collect(),
        hub,
        // These pilots replay one datagram (its `time` never moves): the links are
        // the subject here; distance tiers over links are `tests/tiers.rs`'s.
        tiers: Tiers::off(),
        ..Config::default()
    };
    Engine::new(config, Arc::new(Stats::default()))
}

fn network() -> Network {
    let mut net = Network::new(Instant::now(), LATENCY);
    net.record(true);
    net
}

/// Every pilot sends one position per tick for `d`; returns the ticks flown.
fn fly(net: &mut Network, pilots: &[&Pilot], d: Duration) -> u32 {
    let ticks = (d.as_millis() / TICK.as_millis()) as u32;
    for _ in 0..ticks {
        for p in pilots {
            net.send(p.addr, p.relay, &p.datagram);
        }
        net.run_for(TICK);
    }
    ticks
}

/// Flies like [`fly`] until `done` holds or `deadline` passes; the time it held.
fn fly_until(
    net: &mut Network,
    pilots: &[&Pilot],
    deadline: Instant,
    mut done: impl FnMut(&mut Network) -> bool,
) -> Option<Instant> {
    while net.now() < deadline {
        for p in pilots {
            net.send(p.addr, p.relay, &p.datagram);
        }
        let end = (net.now() + TICK).min(deadline);
        if let Some(t) = net.run_until_met(end, &mut done) {
            return Some(t);
        }
    }
    None
}

/// Hops from `from` to `to` carrying `callsign`'s traffic.
fn crossed<'a>(
    hops: &'a [Hop],
    from: SocketAddr,
    to: SocketAddr,
    callsign: &'a str,
) -> impl Iterator<Item = &'a Hop> + 'a {
    hops.iter()
        .filter(move |h| h.from == from && h.to == to && callsign_of(&h.payload) == callsign)
}

/// Callsigns `relay` knows, in join order.
fn known(net: &mut Network, relay: SocketAddr) -> Vec<String> {
    let now = net.now();
    net.engine::<Engine>(relay)
        .pilots(now)
        .into_iter()
        .map(|p| String::from_utf8_lossy(p.callsign.as_bytes()).into_owned())
        .collect()
}

const RA: &str = "10.0.0.1:5000";
const RB: &str = "10.0.0.2:5000";

/// Two relays linked to each other.
fn pair() -> (Network, SocketAddr, SocketAddr) {
    let (ra, rb) = (addr(RA), addr(RB));
    let mut net = network();
    net.add(ra, relay_engine(&[rb], false));
    net.add(rb, relay_engine(&[ra], false));
    (net, ra, rb)
}

#[test]
fn pilots_on_two_linked_relays_see_each_other_byte_for_byte_and_far_pilots_get_nothing() {
    let (mut net, ra, rb) = pair();
    let alpha = Pilot::new("192.0.2.1:5000", ra, "ALPHA", BIKF);
    let bravo = Pilot::new("192.0.2.2:5000", rb, "BRAVO", north(BIKF, 10.0));
    let far = Pilot::new("192.0.2.3:5000", rb, "FAR", SYDNEY);
    let ticks = fly(&mut net, &[&alpha, &bravo, &far], secs(5));

    // Each sees every datagram of the other, exactly as its own relay forwarded it,
    // which is exactly what the other pilot sent (client magic restored).
    for (me, other, relay) in [(&alpha, &bravo, ra), (&bravo, &alpha, rb)] {
        let got = net.take_inbox(me.addr);
        assert_eq!(
            got.len() as u32,
            ticks,
            "{} sees all of {}",
            me.callsign,
            other.callsign
        );
        assert!(got
            .iter()
            .all(|d| d.from == relay && d.payload == other.datagram));
    }
    assert!(
        net.take_inbox(far.addr).is_empty(),
        "in range of nobody, it gets no copies"
    );
    // The link carried SFGF copies of every datagram, nothing else changed.
    let hops = net.take_hops();
    let link: Vec<&Hop> = crossed(&hops, ra, rb, "ALPHA").collect();
    assert_eq!(link.len() as u32, ticks);
    assert!(link
        .iter()
        .all(|h| h.payload[..4] == *b"SFGF" && h.payload[4..] == alpha.datagram[4..]));
    // Each relay knows the other's pilots as remote pilots, labelled by the relay.
    let now = net.now();
    let views = net.engine::<Engine>(ra).pilots(now);
    let bravo_on_a = views
        .iter()
        .find(|p| p.callsign.as_bytes() == b"BRAVO")
        .unwrap();
    assert!(!bravo_on_a.local);
    assert_eq!(bravo_on_a.origin, "relay-10.0.0.2");
    assert_eq!(bravo_on_a.addr, rb);
    assert_eq!(known(&mut net, ra).len(), 3, "FAR is known on A (lazily)");
}

const HUB: &str = "10.0.1.1:5000";
const L1: &str = "10.0.1.2:5000";
const L2: &str = "10.0.1.3:5000";
const L3: &str = "10.0.1.4:5000";

#[test]
fn a_hub_joins_its_leaves_never_echoes_back_and_a_non_hub_never_reforwards() {
    // HUB - L1, HUB - L2, and L2 - L3 (L2 is not a hub, so L3 hears only L2's own pilots).
    let (h, l1, l2, l3) = (addr(HUB), addr(L1), addr(L2), addr(L3));
    let mut net = network();
    net.add(h, relay_engine(&[l1, l2], true));
    net.add(l1, relay_engine(&[h], false));
    net.add(l2, relay_engine(&[h, l3], false));
    net.add(l3, relay_engine(&[l2], false));
    let p1 = Pilot::new("192.0.2.1:5000", l1, "P1", BIKF);
    let p2 = Pilot::new("192.0.2.2:5000", l2, "P2", north(BIKF, 5.0));
    let p3 = Pilot::new("192.0.2.3:5000", l3, "P3", north(BIKF, 10.0));
    let ticks = fly(&mut net, &[&p1, &p2, &p3], secs(5));
    let hops = net.take_hops();

    // Across the hub, both ways, at full rate and byte for byte.
    for (me, other) in [(&p1, &p2), (&p2, &p1)] {
        let got: Vec<_> = net
            .take_inbox(me.addr)
            .into_iter()
            .filter(|d| callsign_of(&d.payload) == other.callsign)
            .collect();
        assert_eq!(
            got.len() as u32,
            ticks,
            "{} sees {}",
            me.callsign,
            other.callsign
        );
        assert!(got.iter().all(|d| d.payload == other.datagram));
    }
    // The hub never sends a leaf's traffic back to that leaf.
    assert_eq!(crossed(&hops, h, l1, "P1").count(), 0);
    assert_eq!(crossed(&hops, h, l2, "P2").count(), 0);
    assert_eq!(crossed(&hops, h, l2, "P1").count() as u32, ticks);
    // L2 is no hub: P1's traffic (from the hub) goes only to L2's local pilot, and P3's
    // (from L3) never reaches the hub or P1.
    let from_l2: Vec<SocketAddr> = hops
        .iter()
        .filter(|x| x.from == l2 && callsign_of(&x.payload) == "P1")
        .map(|x| x.to)
        .collect();
    assert!(from_l2.iter().all(|&to| to == p2.addr), "{from_l2:?}");
    assert!(hops
        .iter()
        .all(|x| !(x.to == h && callsign_of(&x.payload) == "P3")));
    assert!(!known(&mut net, l1).contains(&"P3".to_string()));
    let p3_saw: Vec<String> = net
        .take_inbox(p3.addr)
        .iter()
        .map(|d| callsign_of(&d.payload))
        .collect();
    assert!(
        p3_saw.iter().all(|c| c == "P2"),
        "P3 hears only L2's own pilot"
    );
    assert_eq!(p3_saw.len() as u32, ticks);
    for leaf in [l1, l2, l3] {
        let e = net.engine::<Engine>(leaf);
        assert_eq!(e.stats().dropped(DropReason::AddressMismatch), 0, "no echo");
    }
}

#[test]
fn lazy_relay_sends_one_datagram_per_interval_until_a_pilot_behind_the_link_comes_in_range() {
    let (mut net, ra, rb) = pair();
    let interval = net.engine::<Engine>(ra).config().lazy_relay_interval;
    let alpha = Pilot::new("192.0.2.1:5000", ra, "ALPHA", BIKF);
    // B's only pilot is in Australia for 10 s, then comes to Keflavik.
    let mut solo = Pilot::new("192.0.2.2:5000", rb, "SOLO", SYDNEY);
    let t0 = net.now();
    let ticks = fly(&mut net, &[&alpha, &solo], secs(10));
    assert_eq!(ticks, 100);
    let hops = net.take_hops();
    let lazy: Vec<Duration> = crossed(&hops, ra, rb, "ALPHA").map(|h| h.at - t0).collect();
    // The first at once, then one per interval: 0, 2, 4, 6, 8 s (plus two hops' latency).
    let want: Vec<Duration> = (0..5).map(|i| interval * i + LATENCY * 2).collect();
    assert_eq!(lazy, want);
    assert!(net.take_inbox(solo.addr).is_empty(), "nobody in range");

    solo.move_to(north(BIKF, 20.0));
    let ticks = fly(&mut net, &[&alpha, &solo], secs(5));
    let hops = net.take_hops();
    assert_eq!(
        crossed(&hops, ra, rb, "ALPHA").count() as u32,
        ticks,
        "full rate once SOLO is in range"
    );
    let got = net.take_inbox(solo.addr);
    assert_eq!(got.len() as u32, ticks);
    assert!(got.iter().all(|d| d.payload == alpha.datagram));
}

#[test]
fn far_pilot_first_then_near_pilot_behind_a_relay_gets_full_rate() {
    let (mut net, ra, rb) = pair();
    let alpha = Pilot::new("192.0.2.1:5000", ra, "ALPHA", BIKF);
    let far = Pilot::new("192.0.2.2:5000", rb, "FAR", SYDNEY);
    let near = Pilot::new("192.0.2.3:5000", rb, "NEAR", north(BIKF, 30.0));
    fly(&mut net, &[&alpha, &far], secs(1));
    net.take_hops();
    fly(&mut net, &[&alpha, &far, &near], secs(10));
    // On A, B's first pilot is the far one (fgms would judge the link by it alone).
    assert_eq!(known(&mut net, ra), ["ALPHA", "FAR", "NEAR"]);
    let hops = net.take_hops();
    let learned = crossed(&hops, rb, ra, "NEAR")
        .next()
        .expect("NEAR crossed")
        .at;
    // Every ALPHA datagram A handled once it knew NEAR crossed the link.
    let handled = crossed(&hops, alpha.addr, ra, "ALPHA")
        .filter(|h| h.at > learned)
        .count();
    assert!(handled >= 99);
    let to_b = crossed(&hops, ra, rb, "ALPHA").filter(|h| h.at > learned);
    assert_eq!(
        to_b.count(),
        handled,
        "full rate, not one per lazy interval"
    );
    let got = net.take_inbox(near.addr);
    assert_eq!(got.len(), handled, "NEAR gets every one of them");
    assert!(got.iter().all(|d| d.payload == alpha.datagram));
    assert!(net.take_inbox(far.addr).is_empty());
}

#[test]
fn a_silent_pilot_leaves_the_other_relays_view_within_player_expiry_plus_a_second() {
    let (mut net, ra, rb) = pair();
    let expiry = net.engine::<Engine>(rb).config().player_expiry;
    let alpha = Pilot::new("192.0.2.1:5000", ra, "ALPHA", BIKF);
    let bravo = Pilot::new("192.0.2.2:5000", rb, "BRAVO", SYDNEY);
    fly(&mut net, &[&alpha, &bravo], secs(3));
    assert_eq!(known(&mut net, rb), ["BRAVO", "ALPHA"]);
    net.take_hops();
    // ALPHA's last datagram was sent one tick ago; BRAVO keeps flying.
    let last_sent = net.now() - TICK;
    let deadline = last_sent + expiry + secs(2);
    let gone = fly_until(&mut net, &[&bravo], deadline, |n| {
        !known(n, rb).contains(&"ALPHA".to_string())
    })
    .expect("ALPHA expired on B");
    let silent_for = gone - last_sent;
    assert!(
        silent_for > expiry && silent_for <= expiry + secs(1) + LATENCY * 2,
        "gone after {silent_for:?}"
    );
    // BRAVO, far from everyone, is still known on A: one lazy datagram per 2 s keeps it.
    assert_eq!(known(&mut net, ra), ["BRAVO"]);
    let hops = net.take_hops();
    assert!(crossed(&hops, rb, ra, "BRAVO").count() >= 5);
}

#[test]
fn a_cut_link_loses_the_remote_pilots_and_a_restored_one_brings_them_back() {
    let (mut net, ra, rb) = pair();
    let alpha = Pilot::new("192.0.2.1:5000", ra, "ALPHA", BIKF);
    let bravo = Pilot::new("192.0.2.2:5000", rb, "BRAVO", north(BIKF, 10.0));
    fly(&mut net, &[&alpha, &bravo], secs(2));
    net.take_inbox(alpha.addr);
    let cut = move |from: SocketAddr, to: SocketAddr, _: &[u8]| {
        !((from == ra && to == rb) || (from == rb && to == ra))
    };
    net.set_filter(cut);
    let dropped_before = net.counts().1;
    fly(&mut net, &[&alpha, &bravo], secs(12));
    assert_eq!(known(&mut net, ra), ["ALPHA"], "BRAVO expired on A");
    assert_eq!(known(&mut net, rb), ["BRAVO"]);
    assert!(net.counts().1 > dropped_before);
    assert!(
        net.take_inbox(alpha.addr).is_empty(),
        "nothing reaches ALPHA once the link is cut"
    );

    net.clear_filter();
    let interval = net.engine::<Engine>(ra).config().lazy_relay_interval;
    let restored = net.now();
    let back = fly_until(&mut net, &[&alpha, &bravo], restored + secs(5), |n| {
        !n.take_inbox(alpha.addr).is_empty()
    });
    assert!(
        back.is_some_and(|t| t <= restored + interval + TICK),
        "BRAVO is back within a lazy interval"
    );
    net.take_inbox(bravo.addr);
    let ticks = fly(&mut net, &[&alpha, &bravo], secs(3));
    assert_eq!(
        net.take_inbox(alpha.addr).len() as u32,
        ticks,
        "full rate again"
    );
    assert_eq!(net.take_inbox(bravo.addr).len() as u32, ticks);
}
