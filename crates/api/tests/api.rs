//! The API bodies built from real engines fed real FlightGear datagrams.

mod common;

use api::airports::AirportsQuery;
use api::pilots::{self, PilotFilter, PilotsBody};
use api::servers::{ServerEntry, ServerFilter};
use api::stream::{Moved, Sent};
use api::Clock;
use relay::{Config, Engine, Outbox, Stats};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn capture(rel: &str) -> Vec<u8> {
    let p = format!("{}/../../testdata/fg/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The first datagram of the `.lpf` capture (TEST1 at BIKF, 3000 ft, heading 280).
fn first_datagram() -> Vec<u8> {
    let b = capture("c172p_TEST1_400.lpf");
    let n = u32::from_be_bytes(b[0..4].try_into().unwrap()) as usize;
    b[4..4 + n].to_vec()
}

fn clock(t0: Instant) -> Clock {
    Clock {
        mono: t0,
        unix: Duration::from_secs(1_796_155_200),
    }
}

use common::q;

#[test]
fn a_real_datagram_becomes_the_pilot_flightgear_flew() {
    let t0 = Instant::now();
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let from = "127.0.0.1:21002".parse().unwrap();
    e.handle(&first_datagram(), from, t0, &mut Outbox::new());
    let later = t0 + Duration::from_secs(30);
    let views = e.pilots_with_datagrams(later);
    let p = pilots::pilots(&views, &clock(later));
    assert_eq!(p.len(), 1);
    let p = &p[0];
    assert_eq!(p.callsign, "TEST1");
    assert_eq!(p.model, "Aircraft/c172p/Models/c172p.xml");
    assert_eq!(p.aircraft, "c172p");
    // The capture's README: started in the air near BIKF at 3000 ft, heading 280.
    assert!((p.lat - 63.983133).abs() < 1e-5, "{}", p.lat);
    assert!((p.lon - -22.59145).abs() < 1e-5, "{}", p.lon);
    assert_eq!(p.alt_ft, 3000.0);
    assert_eq!(p.heading, 280.0);
    assert_eq!(p.pitch, 0.4);
    assert_eq!(p.roll, 0.0);
    assert_eq!(p.ground_speed_kt, 0.0, "datagram 1 has no velocity yet");
    assert!(p.local);
    assert_eq!(p.relay, None);
    assert_eq!(p.online_since, 1_796_155_200 - 30);
    assert_eq!(p.last_seen, 1_796_155_200 - 30);
    // What the properties say (the capture's README): v2, chat "Hello", lag 0.1.
    assert_eq!(p.protocol, 2);
    assert_eq!(p.chat.as_deref(), Some("Hello"));
    assert_eq!(p.lag_s, 0.1);
    assert!(!p.atc);
    assert_eq!(p.frequency_mhz, None);
}

#[test]
fn the_pilot_fields_are_the_documented_ones() {
    let t0 = Instant::now();
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    e.handle(
        &first_datagram(),
        "127.0.0.1:21002".parse().unwrap(),
        t0,
        &mut Outbox::new(),
    );
    let body = PilotsBody {
        generated_at: 1,
        online: 1,
        pilots: pilots::pilots(&e.pilots_with_datagrams(t0), &clock(t0)),
    };
    let v = serde_json::to_value(&body).unwrap();
    let keys = |o: &serde_json::Value| {
        let mut k: Vec<String> = o.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&v), ["generated_at", "online", "pilots"]);
    assert_eq!(
        keys(&v["pilots"][0]),
        [
            "aircraft",
            "aircraft_name",
            "alt_ft",
            "atc",
            "callsign",
            "chat",
            "class",
            "clock_rate",
            "frequency_mhz",
            "ground_speed_kt",
            "heading",
            "lag_s",
            "last_seen",
            "lat",
            "livery",
            "local",
            "lon",
            "model",
            "online_since",
            "pitch",
            "protocol",
            "rate_hz",
            "relay",
            "roll",
            "sim_time",
            "transponder",
            "variant"
        ]
    );
    assert!(
        v["pilots"][0]["relay"].is_null(),
        "unknown is null, never left out"
    );
}

#[test]
fn the_aircraft_is_the_models_file_name() {
    assert_eq!(pilots::aircraft("Aircraft/c172p/Models/c172p.xml"), "c172p");
    assert_eq!(pilots::aircraft("ufo"), "ufo");
    assert_eq!(pilots::aircraft("a/b/"), "");
}

fn pilot(cs: &str, lat: f64, lon: f64) -> pilots::Pilot {
    common::pilot_at(cs, lat, lon)
}

#[test]
fn pilot_filters_parse_strictly_and_select() {
    assert_eq!(q::<PilotFilter>(&[]).unwrap(), PilotFilter::default());
    let f = q::<PilotFilter>(&[("near", "64.0,-22.6,10")]).unwrap();
    assert_eq!(f.near, Some((64.0, -22.6, 10.0)));
    // 0.1 degree of latitude is 6 nm.
    assert!(f.keeps(&pilot("A", 64.1, -22.6)));
    assert!(!f.keeps(&pilot("B", 64.2, -22.6)));
    for bad in ["1,2", "x,1,2", "91,0,1", "0,181,1", "0,0,-1", "0,0,inf"] {
        let e = q::<PilotFilter>(&[("near", bad)]).unwrap_err();
        assert!(e.starts_with("near:"), "{e}");
    }
    let e = q::<PilotFilter>(&[("callsgn", "A")]).unwrap_err();
    assert!(e.contains("\"callsgn\""), "{e}");
    let f = q::<PilotFilter>(&[("callsign", "A")]).unwrap();
    assert!(f.keeps(&pilot("A", 0.0, 0.0)) && !f.keeps(&pilot("AB", 0.0, 0.0)));
}

#[test]
fn a_stream_update_has_joins_moves_and_leaves() {
    let a = pilot("ALPHA", 64.0, -22.0);
    let b = pilot("BRAVO", 50.0, 8.0);
    let s0 = Sent::default();
    let (u, s1) = s0.diff(&[a.clone(), b.clone()], 10);
    assert_eq!(u.joined, vec![a.clone(), b.clone()]);
    assert!(u.moved.is_empty() && u.left.is_empty());
    assert_eq!(u.online, 2);
    // Nothing changed.
    let (u, s1) = s1.diff(&[a.clone(), b.clone()], 11);
    assert!(u.is_empty());
    // A move smaller than the compact form's precision is not a move.
    let mut a2 = a.clone();
    a2.lat += 1e-7;
    let (u, _) = s1.diff(&[a2, b.clone()], 12);
    assert!(u.is_empty());
    // ALPHA moves, BRAVO leaves, CHARLIE joins.
    let mut a3 = a.clone();
    a3.lat = 64.01;
    a3.heading = 359.6;
    let c = pilot("CHARLIE", 0.0, 0.0);
    let (u, s2) = s1.diff(&[a3.clone(), c.clone()], 13);
    assert_eq!(
        u.moved,
        vec![Moved("ALPHA".into(), 64.01, -22.0, 3000, 0, 100)]
    );
    assert_eq!(u.left, vec!["BRAVO"]);
    assert_eq!(u.joined, vec![c.clone()]);
    assert_eq!(
        serde_json::to_string(&u.moved[0]).unwrap(),
        r#"["ALPHA",64.01,-22.0,3000,0,100]"#
    );
    // A model change is a leave and a join of the new aircraft.
    let mut c2 = c.clone();
    c2.model = "Aircraft/ufo/Models/ufo.xml".into();
    let (u, _) = s2.diff(&[a3, c2.clone()], 14);
    assert_eq!(u.left, vec!["CHARLIE"]);
    assert_eq!(u.joined, vec![c2]);
    assert!(u.moved.is_empty());
}

#[test]
fn chat_and_a_real_rate_change_are_streamed_and_rate_jitter_and_lag_are_not() {
    let at = |chat: Option<&str>, rate: Option<f64>, lag: f64| pilots::Pilot {
        chat: chat.map(str::to_string),
        rate_hz: rate,
        lag_s: lag,
        ..pilot("ALPHA", 64.0, -22.0)
    };
    let (_, s) = Sent::default().diff(&[at(None, None, 0.1)], 1);
    // The first rate, then a chat line: both are changes.
    let (u, s) = s.diff(&[at(None, Some(10.0), 0.1)], 2);
    assert_eq!(u.changed.len(), 1);
    let (u, s) = s.diff(&[at(Some("hello"), Some(10.0), 0.1)], 3);
    assert_eq!(u.changed[0].chat.as_deref(), Some("hello"));
    // A 10 Hz client counted over one-second windows: 9, 11, 9.5, 11.5 are jitter.
    let mut s = s;
    for r in [9.0, 11.0, 9.5, 11.5] {
        let (u, next) = s.diff(&[at(Some("hello"), Some(r), 0.1)], 4);
        assert!(u.is_empty(), "{r} Hz: {u:?}");
        s = next;
    }
    // The lag alone changing is not streamed (load generators stamp it).
    let (u, s) = s.diff(&[at(Some("hello"), Some(10.0), 7.0)], 4);
    assert!(u.is_empty(), "{u:?}");
    // Halving the rate (and the lag it sends doubling) is a change, sent once.
    let (u, s) = s.diff(&[at(Some("hello"), Some(5.0), 0.2)], 5);
    assert_eq!(u.changed.len(), 1);
    assert_eq!(u.changed[0].rate_hz, Some(5.0));
    let (u, _) = s.diff(&[at(Some("hello"), Some(5.0), 0.2)], 6);
    assert!(u.is_empty());
    // A slow drift is measured from the rate last sent, not from the last snapshot.
    let (_, mut s) = Sent::default().diff(&[at(None, Some(10.0), 0.1)], 1);
    let mut sent = 0;
    for r in [11.0, 12.0, 13.0] {
        let (u, next) = s.diff(&[at(None, Some(r), 0.1)], 2);
        sent += u.changed.len();
        s = next;
    }
    assert_eq!(sent, 1, "10 -> 12 is 2 Hz: sent once");
}

fn server(gamedir: &str, players: u8, max: u8, nat: bool) -> ServerEntry {
    ServerEntry {
        address: "192.0.2.1:27015".into(),
        name: None,
        gamedir: gamedir.into(),
        map: "crossfire".into(),
        players,
        max,
        bots: 0,
        password: false,
        dedicated: true,
        os: "linux".into(),
        nat,
        version: "0.21".into(),
        protocol: 49,
        region: 255,
        registered_since: 0,
        last_heartbeat: 0,
        sources: vec!["heartbeat".into()],
        ping_ms: None,
    }
}

#[test]
fn server_filters_follow_the_masters_keys() {
    let f = q::<ServerFilter>(&[("gamedir", "valve"), ("full", "0"), ("nat", "1")]).unwrap();
    assert!(f.keeps(&server("valve", 3, 16, true)));
    assert!(!f.keeps(&server("valve", 16, 16, true)), "full");
    assert!(!f.keeps(&server("valve", 3, 16, false)), "not behind NAT");
    assert!(!f.keeps(&server("cstrike", 3, 16, true)));
    let f = q::<ServerFilter>(&[("empty", "1")]).unwrap();
    assert!(f.keeps(&server("valve", 0, 16, false)));
    assert!(!f.keeps(&server("valve", 1, 16, false)));
    let e = q::<ServerFilter>(&[("nat", "yes")]).unwrap_err();
    assert!(e.starts_with("nat:"), "{e}");
    let e = q::<ServerFilter>(&[("players", "1")]).unwrap_err();
    assert!(e.contains("\"players\""), "{e}");
}

#[test]
fn a_master_table_entry_becomes_a_server() {
    use master::table::{Server, Table};
    use xash::master::{Os, ServerType};
    let t0 = Instant::now();
    let mut t = Table::new();
    let s = Server {
        protocol: 49,
        players: 3,
        max: 16,
        bots: 1,
        gamedir: b"valve"[..].into(),
        map: b"crossfire"[..].into(),
        server_type: ServerType::Dedicated,
        os: Os::Windows,
        version: xash::filter::Version::new(0, 21, 0),
        region: 255,
        // The key FWGS sends is inverted: "password\\0" (flag clear) means it has one.
        flags: xash::filter::flags::NAT,
    };
    let addr = "[2001:db8::7]:27015".parse().unwrap();
    let later = t0 + Duration::from_secs(100);
    t.register(addr, s, later, t0, later + Duration::from_secs(300), 10, 10);
    let l = t.listed().next().unwrap();
    let e = api::servers::entry(&l, &clock(later));
    assert_eq!(e.address, "[2001:db8::7]:27015");
    assert_eq!((e.players, e.max, e.bots), (3, 16, 1));
    assert!(e.password && e.nat && e.dedicated);
    assert_eq!(e.os, "windows");
    assert_eq!(e.version, "0.21");
    assert_eq!(e.registered_since, 1_796_155_200 - 100);
    assert_eq!(e.last_heartbeat, 1_796_155_200);
}

#[test]
fn clock_readings_turn_instants_into_unix_seconds() {
    let t0 = Instant::now() + Duration::from_secs(1000);
    let c = clock(t0);
    assert_eq!(c.unix_secs(t0), 1_796_155_200);
    assert_eq!(c.unix_secs(t0 + Duration::from_secs(5)), 1_796_155_205);
    assert_eq!(c.unix_secs(t0 - Duration::from_secs(5)), 1_796_155_195);
    assert_eq!(c.unix_secs_ago(Duration::from_secs(60)), 1_796_155_140);
}

mod replay {
    use super::pilot;
    use api::stream::{Moved, Sent};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// What a page holds: callsign -> (model, compact position), built only from events.
    fn apply(state: &mut BTreeMap<String, (String, Moved)>, u: &api::stream::Update) {
        for c in &u.left {
            state.remove(c);
        }
        for p in &u.joined {
            state.insert(p.callsign.clone(), (p.model.clone(), Moved::of(p)));
        }
        for m in &u.moved {
            let e = state.get_mut(&m.0).expect("moved pilot is known");
            e.1 = m.clone();
        }
    }

    fn snapshot() -> impl Strategy<Value = Vec<api::pilots::Pilot>> {
        proptest::collection::btree_map(0u8..12, (-80.0f64..80.0, -179.0f64..179.0, 0u8..2), 0..10)
            .prop_map(|m| {
                m.into_iter()
                    .map(|(cs, (lat, lon, model))| {
                        let mut p = pilot(&format!("P{cs}"), lat, lon);
                        if model == 1 {
                            p.model = "Aircraft/ufo/Models/ufo.xml".into();
                        }
                        p
                    })
                    .collect()
            })
    }

    proptest! {
        /// A client that applies every update in turn holds exactly the last snapshot.
        #[test]
        fn updates_replayed_give_the_latest_snapshot(snaps in proptest::collection::vec(snapshot(), 1..8)) {
            let mut sent = Sent::default();
            let mut page = BTreeMap::new();
            for (i, s) in snaps.iter().enumerate() {
                let (u, next) = sent.diff(s, i as u64);
                prop_assert_eq!(u.online, s.len());
                apply(&mut page, &u);
                sent = next;
                let want: BTreeMap<String, (String, Moved)> = s
                    .iter()
                    .map(|p| (p.callsign.clone(), (p.model.clone(), Moved::of(p))))
                    .collect();
                prop_assert_eq!(&page, &want);
            }
        }
    }
}

#[test]
fn the_rate_is_datagrams_between_snapshots_per_second() {
    let t0 = Instant::now();
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let from = "127.0.0.1:21002".parse().unwrap();
    let d = first_datagram();
    e.handle(&d, from, t0, &mut Outbox::new());
    let mut rates = pilots::Rates::default();
    let views = e.pilots_with_datagrams(t0);
    let mut p = pilots::pilots(&views, &clock(t0));
    rates.apply(&views, &mut p, t0);
    assert_eq!(p[0].rate_hz, None, "no rate on the first snapshot");
    for i in 1..=20 {
        e.handle(
            &d,
            from,
            t0 + Duration::from_millis(100 * i),
            &mut Outbox::new(),
        );
    }
    let t2 = t0 + Duration::from_secs(2);
    let views = e.pilots_with_datagrams(t2);
    let mut p = pilots::pilots(&views, &clock(t2));
    rates.apply(&views, &mut p, t2);
    assert_eq!(p[0].rate_hz, Some(10.0));
}

#[test]
fn the_clock_rate_is_the_senders_clock_against_arrival() {
    use fgmp::message::{to_bytes, Message, Position};
    let t0 = Instant::now();
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let at = |cs: &str, time: f64| {
        let mut body = Position::at("Aircraft/c172p/Models/c172p.xml", [6_378_137.0, 0.0, 0.0]);
        body.time = time;
        to_bytes(&Message::position(
            fgmp::Callsign::new(cs).unwrap(),
            100,
            body,
        ))
        .unwrap()
    };
    // Real time, paused and four times accelerated, each from its own address.
    let pilots_ = [("REAL", 1.0), ("PAUSED", 0.0), ("FAST", 4.0)];
    let send = |e: &mut Engine, secs: f64| {
        for (i, (cs, k)) in pilots_.iter().enumerate() {
            let from = format!("127.0.0.{}:5000", i + 1).parse().unwrap();
            let t = t0 + Duration::from_secs_f64(secs);
            e.handle(&at(cs, 100.0 + k * secs), from, t, &mut Outbox::new());
        }
    };
    let mut rates = pilots::Rates::default();
    send(&mut e, 0.0);
    let views = e.pilots_with_datagrams(t0);
    let mut p = pilots::pilots(&views, &clock(t0));
    rates.apply(&views, &mut p, t0);
    assert!(
        p.iter().all(|p| p.clock_rate.is_none()),
        "none on the first snapshot"
    );
    for i in 1..=15 {
        send(&mut e, f64::from(i) * 0.1);
    }
    // The snapshot comes 0.3 s after the last datagrams: rates are against arrival.
    let t2 = t0 + Duration::from_millis(1800);
    let views = e.pilots_with_datagrams(t2);
    let mut p = pilots::pilots(&views, &clock(t2));
    rates.apply(&views, &mut p, t2);
    let by: BTreeMap<&str, Option<f64>> = p
        .iter()
        .map(|p| (p.callsign.as_str(), p.clock_rate))
        .collect();
    assert_eq!(by["REAL"], Some(1.0));
    assert_eq!(by["PAUSED"], Some(0.0));
    assert_eq!(by["FAST"], Some(4.0));
}

#[test]
fn a_box_around_london_lists_its_four_large_airports_first() {
    let query =
        q::<AirportsQuery>(&[("bbox", "-1,51,0.5,52"), ("min", "large"), ("limit", "10")]).unwrap();
    let body = query.answer(airports::table());
    let idents: Vec<&str> = body.airports.iter().map(|a| a.ident.as_str()).collect();
    // Luton, Gatwick, Heathrow and Stansted; City and the small fields are not large.
    assert_eq!(idents, ["EGGW", "EGKK", "EGLL", "EGSS"]);
    assert!(body.airports.iter().all(|a| a.kind == "large"));
    assert!(!body.truncated);
    let all = q::<AirportsQuery>(&[("bbox", "-1,51,0.5,52"), ("limit", "5")])
        .unwrap()
        .answer(airports::table());
    assert!(all.truncated, "hundreds of small fields around London");
    assert_eq!(all.airports.len(), 5);
    assert_eq!(all.airports[0].kind, "large");
}

#[test]
fn bad_queries_name_the_parameter() {
    for (k, v, want) in [
        ("bbox", "1,2,3", "bbox:"),
        ("min", "huge", "min:"),
        ("limit", "0", "limit:"),
        ("limit", "5001", "limit:"),
        ("zoom", "3", "unknown parameter \"zoom\""),
    ] {
        let e = q::<AirportsQuery>(&[(k, v)]).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn a_snapshot_with_no_new_datagram_keeps_the_clock_rate_and_streams_nothing() {
    // Found by the page's benchmark: `lobby load fg` sends once a second, so some
    // one-second snapshots see no new datagram; the clock rate went to null there
    // and back, which put all 10,000 pilots in the stream's `changed` every second
    // (6 MB an update). Failed before: `null` at the snapshot with nothing new.
    use fgmp::message::{to_bytes, Message, Position};
    let t0 = Instant::now();
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let from = "127.0.0.1:5000".parse().unwrap();
    let send = |e: &mut Engine, secs: f64| {
        let mut body = Position::at("Aircraft/c172p/Models/c172p.xml", [6_378_137.0, 0.0, 0.0]);
        body.time = 100.0 + secs;
        let d = to_bytes(&Message::position(
            fgmp::Callsign::new("ONEHZ").unwrap(),
            100,
            body,
        ));
        e.handle(
            &d.unwrap(),
            from,
            t0 + Duration::from_secs_f64(secs),
            &mut Outbox::new(),
        );
    };
    let mut rates = pilots::Rates::default();
    let mut sent = Sent::default();
    let mut seen = Vec::new();
    // Datagrams at 0, 1, 3 and 4 s (none at 2); snapshots at 0.5, 1.5, 2.5, 3.5, 4.5.
    for (datagram, snapshot) in [
        (Some(0.0), 0.5),
        (Some(1.0), 1.5),
        (None, 2.5),
        (Some(3.0), 3.5),
        (Some(4.0), 4.5),
    ] {
        if let Some(t) = datagram {
            send(&mut e, t);
        }
        let now = t0 + Duration::from_secs_f64(snapshot);
        let views = e.pilots_with_datagrams(now);
        let mut p = pilots::pilots(&views, &clock(now));
        rates.apply(&views, &mut p, now);
        let (u, next) = sent.diff(&p, 0);
        sent = next;
        seen.push((p[0].clock_rate, u.changed.len()));
    }
    assert_eq!(
        seen,
        [
            (None, 0),
            (Some(1.0), 1),
            (Some(1.0), 0),
            (Some(1.0), 0),
            (Some(1.0), 0)
        ]
    );
}
