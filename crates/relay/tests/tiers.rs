//! Distance-tiered forwarding through the engine (issue 28): pilots that fly with
//! their own clocks in the `time` field, as FlightGear does, at 10 Hz; virtual time.
//! What one receiver gets of near, middle and far senders, chat, tier crossings,
//! new pilots, the gates' bound, and a relay link between two engines.

use fgmp::geo::{destination, to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::props::{PropertyList, Protocol, CHAT_ID};
use fgmp::Callsign;
use relay::{Config, Engine, Outbox, RelayPeer, Stats, Tiers};
use sansio::net::Network;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIKF: (f64, f64) = (63.985, -22.605);
/// The receiver everyone's traffic is looked at from.
const ME: &str = "10.1.0.1:5000";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A FlightGear client with its own MP clock.
struct Pilot {
    callsign: String,
    from: SocketAddr,
    /// Nautical miles north of BIKF.
    north_nm: f64,
    clock: f64,
    chat: String,
}

impl Pilot {
    fn new(callsign: &str, from: &str, north_nm: f64, clock: f64) -> Pilot {
        Pilot {
            callsign: callsign.into(),
            from: addr(from),
            north_nm,
            clock,
            chat: String::new(),
        }
    }

    /// Its next datagram: the clock moves on by `dt` first.
    fn datagram(&mut self, dt: f64) -> Vec<u8> {
        self.clock += dt;
        let (lat, lon) = destination(BIKF.0, BIKF.1, 0.0, self.north_nm);
        let mut pos = Position::at(
            "Aircraft/c172p/Models/c172p.xml",
            to_ecef(Geodetic {
                lat_deg: lat,
                lon_deg: lon,
                alt_m: 1000.0,
            }),
        );
        pos.time = self.clock;
        if !self.chat.is_empty() {
            let mut l = PropertyList::new();
            l.push_string(CHAT_ID, self.chat.as_bytes(), Protocol::V2)
                .unwrap();
            pos.properties = l;
        }
        let m = Message::position(Callsign::new(&self.callsign).unwrap(), 100, pos);
        to_bytes(&m).unwrap()
    }
}

fn callsign_of(d: &[u8]) -> String {
    let field = &d[24..32];
    let n = field.iter().position(|&b| b == 0).unwrap_or(8);
    String::from_utf8_lossy(&field[..n]).into_owned()
}

fn time_of(d: &[u8]) -> f64 {
    f64::from_be_bytes(d[128..136].try_into().unwrap())
}

/// One engine driven directly; what `ME` receives is kept per sender.
struct Rig {
    e: Engine,
    out: Outbox,
    t0: Instant,
    /// Per sender callsign: (virtual seconds, datagram) as `ME` got them.
    got: HashMap<String, Vec<(f64, Vec<u8>)>>,
    /// Every datagram each sender sent, with when.
    sent: HashMap<String, Vec<(f64, Vec<u8>)>>,
}

impl Rig {
    fn new(tiers: Tiers) -> Rig {
        Rig {
            e: Engine::new(
                Config {
                    tiers,
                    ..Config::default()
                },
                Arc::new(Stats::default()),
            ),
            out: Outbox::new(),
            t0: Instant::now(),
            got: HashMap::new(),
            sent: HashMap::new(),
        }
    }

    fn input(&mut self, d: &[u8], from: SocketAddr, at: f64) {
        let now = self.t0 + Duration::from_secs_f64(at);
        if self.e.poll_timeout().is_some_and(|t| t <= now) {
            self.out.clear();
            self.e.handle_timeout(now, &mut self.out);
        }
        self.out.clear();
        self.e.handle(d, from, now, &mut self.out);
        for (to, bytes) in self.out.drain_owned() {
            if to == addr(ME) {
                self.got
                    .entry(callsign_of(&bytes))
                    .or_default()
                    .push((at, bytes));
            }
        }
    }

    /// Every pilot sends once per 0.1 s for `secs` from `start`; `me` too (it is a
    /// receiver at BIKF). `each` may move pilots before every tick.
    fn fly(
        &mut self,
        pilots: &mut [Pilot],
        start: f64,
        secs: f64,
        mut each: impl FnMut(f64, &mut [Pilot]),
    ) {
        let mut me = Pilot::new("ME", ME, 0.0, 0.0);
        let ticks = (secs * 10.0).round() as usize;
        for k in 0..ticks {
            let t = start + k as f64 * 0.1;
            each(t, pilots);
            let d = me.datagram(0.1);
            self.input(&d, me.from, t);
            for (i, p) in pilots.iter_mut().enumerate() {
                let d = p.datagram(0.1);
                let at = t + 0.001 * (i + 1) as f64;
                self.sent
                    .entry(p.callsign.clone())
                    .or_default()
                    .push((at, d.clone()));
                self.input(&d, p.from, at);
            }
        }
    }

    fn times(&self, callsign: &str) -> Vec<f64> {
        self.got
            .get(callsign)
            .map(|v| v.iter().map(|(_, d)| time_of(d)).collect())
            .unwrap_or_default()
    }
}

#[test]
fn near_senders_arrive_whole_far_ones_at_their_tiers_rate_evenly_spaced_unmodified() {
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![
        Pilot::new("NEAR", "10.1.0.2:5000", 5.0, 100.0),
        Pilot::new("MID", "10.1.0.3:5000", 25.0, 2000.0),
        Pilot::new("FAR", "10.1.0.4:5000", 70.0, 31.337),
    ];
    rig.fly(&mut pilots, 0.0, 60.0, |_, _| {});
    for (cs, hz) in [("NEAR", 10.0), ("MID", 2.0), ("FAR", 1.0)] {
        let times = rig.times(cs);
        let rate = times.len() as f64 / 60.0;
        assert!(
            rate >= hz * 0.9 && rate <= hz * 1.1,
            "{cs}: {rate} Hz, want {hz} ±10%"
        );
        // Evenly: every gap one interval of the sender's clock (after the first).
        for w in times.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                (gap - 1.0 / hz).abs() < 0.01,
                "{cs}: a gap of {gap} s in {times:?}"
            );
        }
        // Whole original datagrams, in the sender's order.
        let sent: Vec<&Vec<u8>> = rig.sent[cs].iter().map(|(_, d)| d).collect();
        let mut k = 0;
        for (_, d) in &rig.got[cs] {
            while k < sent.len() && sent[k] != d {
                k += 1;
            }
            assert!(
                k < sent.len(),
                "{cs}: a datagram not sent as such, or out of order"
            );
        }
    }
    assert_eq!(
        rig.times("NEAR").len(),
        600,
        "every datagram of a near sender"
    );
    // The counters say what was left out, per tier.
    let thinned = rig.e.stats().thinned();
    let mid_sent = rig.sent["MID"].len() as u64;
    let far_sent = rig.sent["FAR"].len() as u64;
    // Each sender is also thinned toward the other far pilots (they are receivers).
    assert!(thinned[1].0 >= mid_sent - rig.times("MID").len() as u64);
    assert!(thinned[2].0 >= far_sent - rig.times("FAR").len() as u64);
    assert_eq!(thinned[0].0, 0);
    assert_eq!(thinned[3].0, 0);
    let len = rig.sent["FAR"][0].1.len() as u64;
    assert_eq!(
        thinned[2].1,
        thinned[2].0 * len,
        "bytes as datagrams times length"
    );
}

#[test]
fn tiers_off_forward_every_datagram_at_every_distance() {
    let mut rig = Rig::new(Tiers::off());
    let mut pilots = vec![
        Pilot::new("MID", "10.1.0.3:5000", 25.0, 2000.0),
        Pilot::new("FAR", "10.1.0.4:5000", 70.0, 31.337),
    ];
    rig.fly(&mut pilots, 0.0, 10.0, |_, _| {});
    assert_eq!(rig.times("MID").len(), 100);
    assert_eq!(rig.times("FAR").len(), 100);
    assert_eq!(rig.e.stats().thinned(), [(0, 0); 4]);
    assert_eq!(rig.e.gate_count(), 0);
}

#[test]
fn every_new_chat_line_of_a_far_sender_arrives_in_the_datagram_that_first_carries_it() {
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![Pilot::new("FAR", "10.1.0.4:5000", 70.0, 500.0)];
    // A new line every 3.7 s (off the 1 Hz grid), each kept 2.5 s, then nothing.
    let mut lines = Vec::new();
    rig.fly(&mut pilots, 0.0, 40.0, |t, p| {
        let n = (t / 3.7) as usize;
        let into = t - n as f64 * 3.7;
        p[0].chat = if n > 0 && into < 2.5 {
            format!("line {n}")
        } else {
            String::new()
        };
        if n > 0 && lines.last() != Some(&format!("line {n}")) {
            lines.push(format!("line {n}"));
        }
    });
    let got: Vec<String> = rig.got["FAR"]
        .iter()
        .filter_map(|(_, d)| fgmp::extras::Extras::decode(d).and_then(|x| x.chat))
        .collect();
    for line in &lines {
        // The first datagram carrying it was sent and forwarded in the same instant.
        let first_sent = rig.sent["FAR"]
            .iter()
            .find(|(_, d)| {
                fgmp::extras::Extras::decode(d)
                    .and_then(|x| x.chat)
                    .as_deref()
                    == Some(line)
            })
            .expect("sent")
            .0;
        let first_got = rig.got["FAR"]
            .iter()
            .find(|(_, d)| {
                fgmp::extras::Extras::decode(d)
                    .and_then(|x| x.chat)
                    .as_deref()
                    == Some(line)
            })
            .map(|(at, _)| *at);
        assert_eq!(first_got, Some(first_sent), "{line} at once");
        assert!(got.contains(line));
    }
    assert_eq!(lines.len(), 10);
    // Still about 1 Hz overall: the chat lines added one datagram each at most.
    let n = rig.got["FAR"].len();
    assert!((40..=52).contains(&n), "{n} datagrams");
}

#[test]
fn a_sender_crossing_tiers_changes_rate_within_a_second() {
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![Pilot::new("X", "10.1.0.2:5000", 30.0, 0.0)];
    // 30 nm (2 Hz) for 10 s, 5 nm (full) for 10 s, 60 nm (1 Hz) for 10 s.
    rig.fly(&mut pilots, 0.0, 30.0, |t, p| {
        p[0].north_nm = if t < 10.0 {
            30.0
        } else if t < 20.0 {
            5.0
        } else {
            60.0
        };
    });
    let at: Vec<f64> = rig.got["X"].iter().map(|(at, _)| *at).collect();
    let within = |a: f64, b: f64| at.iter().filter(|&&t| t >= a && t < b).count();
    assert_eq!(within(2.0, 10.0), 16, "2 Hz at 30 nm");
    assert_eq!(
        within(10.0, 20.0),
        100,
        "every datagram from the first one near"
    );
    assert!(within(20.0, 21.0) <= 2, "the new tier within a second");
    assert_eq!(within(21.0, 30.0), 9, "1 Hz at 60 nm");
}

#[test]
fn a_pilot_weaving_across_a_bound_keeps_full_rate_inside_the_hysteresis() {
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![Pilot::new("W", "10.1.0.2:5000", 9.0, 0.0)];
    rig.fly(&mut pilots, 0.0, 20.0, |t, p| {
        p[0].north_nm = 9.0 + 2.9 * (t * 0.7).sin().abs(); // 9 to 11.9 nm
    });
    assert_eq!(rig.got["W"].len(), 200);
    assert_eq!(
        rig.e.gate_count(),
        0,
        "never left the first tier: nothing held"
    );
}

#[test]
fn a_new_far_pilot_and_a_new_callsign_on_a_socket_arrive_with_their_first_datagram() {
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![Pilot::new("FIRST", "10.1.0.2:5000", 80.0, 0.0)];
    rig.fly(&mut pilots, 0.0, 2.05, |_, _| {});
    assert_eq!(
        rig.got["FIRST"][0].1, rig.sent["FIRST"][0].1,
        "its first datagram"
    );
    // The same socket flies another callsign (FlightGear restarted): a new aircraft
    // to every receiver, whatever its clock says.
    pilots[0].callsign = "SECOND".into();
    pilots[0].clock -= 0.05;
    rig.fly(&mut pilots, 2.1, 1.0, |_, _| {});
    assert_eq!(rig.got["SECOND"][0].1, rig.sent["SECOND"][0].1);
    // Gone silent and expired, its slot taken by a new far pilot from elsewhere.
    let mut others = vec![Pilot::new("THIRD", "10.1.0.9:5000", 80.0, 0.15)];
    rig.fly(&mut others, 3.1, 12.0, |_, _| {});
    assert_eq!(rig.got["THIRD"][0].1, rig.sent["THIRD"][0].1);
}

#[test]
fn gates_are_held_only_for_far_pairs_in_range_and_go_with_their_pilots() {
    let mut rig = Rig::new(Tiers::recommended());
    // 20 far pilots in a ring 30-80 nm out: each is far from most others too.
    let mut pilots: Vec<Pilot> = (0..20)
        .map(|i| {
            Pilot::new(
                &format!("F{i:02}"),
                &format!("10.2.0.{}:5000", i + 1),
                30.0 + 2.5 * i as f64,
                i as f64,
            )
        })
        .collect();
    rig.fly(&mut pilots, 0.0, 5.0, |_, _| {});
    let held = rig.e.gate_count();
    // At most one gate per (receiver, sender) pair in range: 21 pilots.
    assert!(held > 20 && held <= 21 * 20, "{held} gates");
    // Everyone but ME falls silent: after expiry and a sweep nothing is held.
    rig.fly(&mut [], 5.0, 20.0, |_, _| {});
    assert_eq!(rig.e.pilot_count(), 1);
    assert_eq!(rig.e.gate_count(), 0);
    assert!(rig.e.poll_timeout().is_some(), "ME still expires in time");
}

#[test]
fn a_linked_relay_gets_full_rate_for_its_pilot_in_range_and_thins_for_it() {
    const RA: &str = "10.0.0.1:5000";
    const RB: &str = "10.0.0.2:5000";
    let (ra, rb) = (addr(RA), addr(RB));
    let engine = |peer: SocketAddr| {
        Engine::new(
            Config {
                relays: vec![RelayPeer {
                    addr: peer,
                    label: "peer".into(),
                }],
                ..Config::default()
            },
            Arc::new(Stats::default()),
        )
    };
    let mut net = Network::new(Instant::now(), Duration::from_millis(5));
    net.record(true);
    net.add(ra, engine(rb));
    net.add(rb, engine(ra));
    let mut alpha = Pilot::new("ALPHA", "192.0.2.1:5000", 0.0, 10.0);
    let mut far = Pilot::new("FARB", "192.0.2.2:5000", 70.0, 20.0);
    for _ in 0..200 {
        let a = alpha.datagram(0.1);
        net.send(alpha.from, ra, &a);
        let f = far.datagram(0.1);
        net.send(far.from, rb, &f);
        net.run_for(Duration::from_millis(100));
    }
    let hops = net.take_hops();
    let over_link = hops
        .iter()
        .filter(|h| h.from == ra && h.to == rb && callsign_of(&h.payload) == "ALPHA")
        .count();
    // An fgms peer would get the same: every datagram while it has a pilot in range.
    assert!(over_link >= 199, "{over_link} over the link");
    let to_far = net.take_inbox(far.from);
    let n = to_far
        .iter()
        .filter(|d| callsign_of(&d.payload) == "ALPHA")
        .count();
    assert!((19..=22).contains(&n), "FARB gets 1 Hz of ALPHA: {n}");
    let to_alpha = net.take_inbox(alpha.from);
    let n = to_alpha
        .iter()
        .filter(|d| callsign_of(&d.payload) == "FARB")
        .count();
    assert!((19..=22).contains(&n), "and ALPHA 1 Hz of FARB: {n}");
}

#[test]
fn past_the_gate_caps_far_pairs_still_get_their_tiers_rate_without_state() {
    for (total, per_receiver) in [(1_000_000, 1_000), (6, 1_000), (1_000_000, 2)] {
        let mut rig = Rig::new(Tiers::recommended());
        rig.e.set_gate_caps(total, per_receiver);
        let mut pilots: Vec<Pilot> = (0..8)
            .map(|i| {
                Pilot::new(
                    &format!("F{i}"),
                    &format!("10.3.0.{}:5000", i + 1),
                    45.0 + 4.0 * i as f64,
                    7.77 * i as f64,
                )
            })
            .collect();
        rig.fly(&mut pilots, 0.0, 30.0, |_, _| {});
        let held = rig.e.gate_count();
        assert!(held <= total, "{held} gates held, cap {total}");
        for i in 0..8 {
            let times = rig.times(&format!("F{i}"));
            let rate = times.len() as f64 / 30.0;
            assert!(
                (0.9..=1.1).contains(&rate),
                "F{i}: {rate} Hz (caps {total}/{per_receiver})"
            );
            for w in times.windows(2).skip(1) {
                assert!(
                    (w[1] - w[0] - 1.0).abs() < 0.01,
                    "F{i}: gap {}",
                    w[1] - w[0]
                );
            }
        }
        // Only ME is a receiver at BIKF; the senders are receivers of each other
        // too, within 28 nm of each other (some in the full-rate tier).
        if per_receiver == 2 {
            assert!(held <= 9 * 2, "{held} gates, at most 2 per receiver");
        }
    }
}

#[test]
fn a_sender_whose_clock_does_not_move_is_forwarded_whole() {
    // Not FlightGear (its clock always moves), but a client that stamps every
    // datagram alike must not vanish from far receivers after its first datagram.
    let mut rig = Rig::new(Tiers::recommended());
    let mut pilots = vec![Pilot::new("STILL", "10.1.0.2:5000", 60.0, 123.0)];
    rig.fly(&mut pilots, 0.0, 10.0, |_, p| p[0].clock = 123.0 - 0.1);
    assert_eq!(rig.got["STILL"].len(), 100);
}
