//! What today's engine forwards on one recorded load, pinned: issue 28's
//! equivalence test. Distance-tiered forwarding must leave this unchanged when its
//! tiers are off (`tiers = []`, fgms's behaviour).
//!
//! The load is deterministic (a fixed generator, virtual time): 48 local pilots
//! spread from 0 to 150 nm of Keflavik with 30 to 100 nm ranges, flying north at
//! 10 Hz for 30 s with their own clocks in the `time` field; chat lines; a pilot that
//! falls silent and expires; a pilot that joins late; an observer; a relay link that
//! sends its own pilots and takes the local ones (full rate in range, lazily
//! otherwise). Every datagram sent is recorded as (destination, bytes); the datagrams
//! of one input are sorted first (the engine's order among receivers of one datagram
//! is not part of its behaviour), then folded into a 64-bit FNV-1a digest with their
//! count and bytes.

use fgmp::geo::{to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use relay::{Config, Engine, Outbox, RelayPeer, Stats, Tiers};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIKF: (f64, f64) = (63.985, -22.605);
const PILOTS: usize = 48;
const RELAY: &str = "127.0.0.2:5000";
/// Datagrams the relay link receives in the recording.
const TO_RELAY: u64 = 9_142;

/// A fixed linear congruential generator (Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

struct Pilot {
    callsign: String,
    from: SocketAddr,
    lat: f64,
    lon: f64,
    range_nm: u16,
    clock: f64,
}

fn position(p: &Pilot, model: &str) -> Vec<u8> {
    let mut pos = Position::at(
        model,
        to_ecef(Geodetic {
            lat_deg: p.lat,
            lon_deg: p.lon,
            alt_m: 1000.0,
        }),
    );
    pos.time = p.clock;
    let m = Message::position(Callsign::new(&p.callsign).unwrap(), p.range_nm, pos);
    to_bytes(&m).unwrap()
}

fn chat(p: &Pilot, text: &str) -> Vec<u8> {
    let m = Message::chat(Callsign::new(&p.callsign).unwrap(), text.as_bytes());
    to_bytes(&m).unwrap()
}

/// FNV-1a, 64 bits.
struct Digest {
    hash: u64,
    datagrams: u64,
    bytes: u64,
    /// Datagrams to the relay link.
    to_relay: u64,
}

impl Digest {
    fn eat(&mut self, b: &[u8]) {
        for &x in b {
            self.hash ^= u64::from(x);
            self.hash = self.hash.wrapping_mul(0x100000001b3);
        }
    }
}

struct Run {
    e: Engine,
    out: Outbox,
    t0: Instant,
    digest: Digest,
    /// What each input made the engine send, sorted.
    sets: Vec<Sent>,
}

impl Run {
    fn input(&mut self, d: &[u8], from: SocketAddr, at_s: f64) {
        let now = self.t0 + Duration::from_secs_f64(at_s);
        self.out.clear();
        self.e.handle(d, from, now, &mut self.out);
        let mut sent: Vec<(SocketAddr, Vec<u8>)> = self.out.drain_owned();
        sent.sort();
        self.sets.push(sent.clone());
        for (to, bytes) in sent {
            self.digest.eat(to.to_string().as_bytes());
            self.digest.eat(&[0]);
            self.digest.eat(&bytes);
            self.digest.datagrams += 1;
            self.digest.to_relay += u64::from(to.to_string() == RELAY);
            self.digest.bytes += bytes.len() as u64;
        }
    }
    fn tick(&mut self, at_s: f64) {
        let now = self.t0 + Duration::from_secs_f64(at_s);
        if self.e.poll_timeout().is_some_and(|t| t <= now) {
            self.out.clear();
            self.e.handle_timeout(now, &mut self.out);
        }
    }
}

/// What one input made the engine send, sorted by address and bytes.
type Sent = Vec<(SocketAddr, Vec<u8>)>;

/// The recorded load through an engine with `config`.
fn record(config: Config) -> Digest {
    record_all(config).0
}

/// The recorded load through an engine with `config`, and what each input sent.
fn record_all(config: Config) -> (Digest, Vec<Sent>) {
    let mut run = Run {
        e: Engine::new(config, Arc::new(Stats::default())),
        out: Outbox::new(),
        t0: Instant::now(),
        digest: Digest {
            hash: 0xcbf29ce484222325,
            datagrams: 0,
            bytes: 0,
            to_relay: 0,
        },
        sets: Vec::new(),
    };
    let mut rng = Lcg(0x1b1f_2026);
    let mut pilots: Vec<Pilot> = (0..PILOTS)
        .map(|i| {
            let nm = 150.0 * rng.unit();
            let bearing = 360.0 * rng.unit();
            let (lat, lon) = fgmp::geo::destination(BIKF.0, BIKF.1, bearing, nm);
            Pilot {
                callsign: format!("P{i:03}"),
                from: format!("10.0.{}.{}:5000", i / 200, 1 + i % 200)
                    .parse()
                    .unwrap(),
                lat,
                lon,
                range_nm: [30, 50, 100][i % 3],
                clock: 1000.0 * rng.unit(),
            }
        })
        .collect();
    let relay: SocketAddr = RELAY.parse().unwrap();
    let mut remote = Pilot {
        callsign: "REMOTE".into(),
        from: relay,
        lat: BIKF.0 + 0.2,
        lon: BIKF.1,
        range_nm: 100,
        clock: 42.0,
    };
    for step in 0..300 {
        let t = step as f64 * 0.1;
        for (i, p) in pilots.iter_mut().enumerate() {
            // P005 falls silent after 5 s and expires; P047 joins at 12 s.
            if (i == 5 && t > 5.0) || (i == PILOTS - 1 && t < 12.0) {
                continue;
            }
            p.lat += 120.0 / 3600.0 / 60.0 * 0.1; // 120 kt north
            p.clock += 0.1;
            let d = position(p, "Aircraft/c172p/Models/c172p.xml");
            let from = p.from;
            run.input(&d, from, t + 0.001 * i as f64);
        }
        if step % 10 == 0 {
            remote.clock += 1.0;
            let mut d = position(&remote, "Aircraft/ufo/Models/ufo.xml");
            d[0..4].copy_from_slice(b"SFGF");
            run.input(&d, relay, t + 0.05);
        }
        if step % 50 == 25 {
            let p = &pilots[step % PILOTS];
            let d = chat(p, &format!("hello at {step}"));
            let from = p.from;
            run.input(&d, from, t + 0.06);
        }
        run.tick(t + 0.09);
    }
    (run.digest, run.sets)
}

fn config() -> Config {
    Config {
        relays: vec![RelayPeer {
            addr: RELAY.parse().unwrap(),
            label: "peer".into(),
        }],
        tiers: Tiers::off(),
        ..Config::default()
    }
}

#[test]
fn the_recorded_load_forwards_what_it_always_has() {
    let d = record(config());
    // Recorded with the engine of issue 27 (before any tier); a change here is a
    // change of what every client receives.
    assert_eq!(
        (d.datagrams, d.bytes, d.to_relay, format!("{:016x}", d.hash)),
        (
            126_995,
            29_465_864,
            TO_RELAY,
            "99727bcd1ac447f3".to_string()
        ),
        "the engine forwards something else than it did"
    );
}

#[test]
fn the_recording_is_deterministic() {
    let (a, b) = (record(config()), record(config()));
    assert_eq!(
        (a.datagrams, a.bytes, a.hash),
        (b.datagrams, b.bytes, b.hash)
    );
    assert!(
        a.datagrams > 10_000,
        "a load worth pinning: {}",
        a.datagrams
    );
    // The relay link takes the local pilots (some at full rate, the rest lazily)
    // and never gets its own pilot back.
    assert!(
        a.to_relay > 0 && a.to_relay < a.datagrams / 10,
        "{}",
        a.to_relay
    );
}

#[test]
fn tiers_on_send_part_of_the_recording_and_the_link_all_of_its_share() {
    let (off, off_sets) = record_all(config());
    let (on, on_sets) = record_all(Config {
        tiers: Tiers::recommended(),
        ..config()
    });
    assert_eq!(on_sets.len(), off_sets.len());
    for (i, (on, off)) in on_sets.iter().zip(&off_sets).enumerate() {
        // Nothing new, nothing altered: every datagram sent with tiers is one the
        // engine sent without them, to the same address.
        let mut k = 0;
        for d in on {
            while k < off.len() && &off[k] != d {
                k += 1;
            }
            assert!(k < off.len(), "input {i}: {:?} not in the recording", d.0);
        }
    }
    // The relay link is not thinned (its relay thins for its own pilots).
    assert_eq!(on.to_relay, TO_RELAY);
    assert!(
        on.datagrams * 10 < off.datagrams * 6,
        "48 pilots over 150 nm: {} of {} sent",
        on.datagrams,
        off.datagrams
    );
}
