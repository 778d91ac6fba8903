//! The chat log: a line once however often it is repeated, bounded per pilot and in
//! all, aged out, filtered; and the ATC list.

mod common;

use api::chat::{ChatFilter, ChatLimits, ChatLog};
use api::pilots::Pilot;
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn pilot(cs: &str, chat: Option<&str>) -> Pilot {
    Pilot {
        chat: chat.map(str::to_string),
        frequency_mhz: Some(118.5),
        ..common::pilot_at(cs, 64.0, -22.6)
    }
}

/// Each pilot with an address of its own (a /24 per callsign, from its bytes).
fn from(pilots: &[Pilot]) -> Vec<(&Pilot, IpAddr)> {
    pilots
        .iter()
        .map(|p| {
            let h = p
                .callsign
                .bytes()
                .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
            (
                p,
                IpAddr::V4(Ipv4Addr::from(0x0a00_0001 | ((h & 0xffff) << 8))),
            )
        })
        .collect()
}

use common::q;

#[test]
fn a_repeated_line_is_recorded_once_and_again_after_a_gap() {
    let mut log = ChatLog::new(ChatLimits::default());
    let mut fresh = Vec::new();
    for t in 0..10 {
        fresh.extend(log.observe(from(&[pilot("A", Some("hello"))]), 100 + t));
    }
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0].text, "hello");
    assert_eq!(fresh[0].frequency_mhz, Some(118.5));
    // The property goes empty, then the same line is said again: a second line.
    log.observe(from(&[pilot("A", None)]), 111);
    assert_eq!(
        log.observe(from(&[pilot("A", Some("hello"))]), 112).len(),
        1
    );
    // Another pilot saying the same text is its own line.
    assert_eq!(
        log.observe(
            from(&[pilot("A", Some("hello")), pilot("B", Some("hello"))]),
            113
        )
        .len(),
        1
    );
    assert_eq!(log.len(), 3);
    assert_eq!(log.counters().recorded, 3);
}

#[test]
fn caps_per_pilot_in_all_and_in_time() {
    let limits = ChatLimits {
        total: 5,
        per_pilot: 2,
        keep_secs: 60,
    };
    let mut log = ChatLog::new(limits);
    for i in 0..4 {
        log.observe(from(&[pilot("A", Some(&format!("a{i}")))]), 0);
    }
    assert_eq!(log.len(), 2);
    assert_eq!(log.counters().refused_per_pilot, 2);
    for i in 0..6 {
        log.observe(from(&[pilot(&format!("P{i}"), Some("x"))]), 1);
    }
    assert_eq!(log.len(), 5);
    assert_eq!(log.counters().evicted, 3);
    log.observe(from(&[]), 62);
    assert!(log.is_empty());
    assert_eq!(log.counters().expired, 5);
}

#[test]
fn one_networks_chatter_pushes_out_its_own_lines_not_others() {
    let mut log = ChatLog::new(ChatLimits::default());
    let tower = pilot("EGLL_TW", Some("cleared to land"));
    let home: IpAddr = "198.51.100.7".parse().unwrap();
    log.observe([(&tower, home)], 0);
    // One /24 holds 128 pilots (the relay's per-network cap), 30 lines each: 3,840
    // lines, nearly four times the total.
    for round in 0..30 {
        let flood: Vec<Pilot> = (0..128)
            .map(|i| pilot(&format!("F{i}"), Some(&format!("spam {round}"))))
            .collect();
        let said = flood
            .iter()
            .enumerate()
            .map(|(i, p)| (p, IpAddr::V4(Ipv4Addr::new(192, 0, 2, i as u8))));
        log.observe(said, 1 + round);
    }
    assert_eq!(log.len(), 1000);
    assert!(
        log.lines().any(|l| l.callsign == "EGLL_TW"),
        "the tower's line stays"
    );
    assert_eq!(log.counters().evicted, 30 * 128 + 1 - 1000);
    assert_eq!(log.holders(), 2);
    // An IPv6 /48 counts as one network however many /64s it uses.
    let mut log = ChatLog::new(ChatLimits {
        total: 10,
        per_pilot: 30,
        keep_secs: 3600,
    });
    let other = pilot("OTHER", Some("hi"));
    log.observe([(&other, home)], 0);
    for i in 0..40u16 {
        let p = pilot(&format!("V{i}"), Some("x"));
        let ip = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, i, 0, 0, 0, 1));
        log.observe([(&p, ip)], 1);
    }
    assert_eq!(log.holders(), 2);
    assert!(log.lines().any(|l| l.callsign == "OTHER"));
}

#[test]
fn filters() {
    let mut log = ChatLog::new(ChatLimits::default());
    let mut far = pilot("FAR", Some("far away"));
    far.lat = -33.9;
    far.lon = 151.2;
    log.observe(from(&[pilot("A", Some("one")), far]), 10);
    log.observe(from(&[pilot("A", Some("two"))]), 11);
    let all = log.body(&ChatFilter::default(), 12);
    assert_eq!(all.lines.len(), 3);
    let f = q::<ChatFilter>(&[("callsign", "A")]).unwrap();
    let texts: Vec<_> = log.body(&f, 12).lines.into_iter().map(|l| l.text).collect();
    assert_eq!(texts, ["one", "two"]);
    let f = q::<ChatFilter>(&[("near", "-33.9,151.2,10")]).unwrap();
    assert_eq!(log.body(&f, 12).lines.len(), 1);
    let f = q::<ChatFilter>(&[("since", "1"), ("limit", "1")]).unwrap();
    let texts: Vec<_> = log.body(&f, 12).lines.into_iter().map(|l| l.text).collect();
    assert_eq!(texts, ["two"], "the most recent after id 1");
    assert!(q::<ChatFilter>(&[("limit", "0")]).is_err());
    assert!(q::<ChatFilter>(&[("nope", "1")]).is_err());
    assert!(q::<ChatFilter>(&[("near", "1,2")]).is_err());
}

#[test]
fn atc_stations() {
    let mut tw = pilot("EDDF_TW", None);
    tw.atc = true;
    tw.model = "OpenRadar".into();
    let list = api::atc::stations(&[pilot("A", None), tw]);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].airport.as_deref(), Some("EDDF"));
    assert_eq!(list[0].position, "TW");
    assert_eq!(list[0].frequency_mhz, Some(118.5));
}

proptest! {
    /// Whatever pilots say, however often: the caps hold.
    #[test]
    fn bounded(steps in proptest::collection::vec(
        proptest::collection::vec((0u8..20, 0u8..5), 0..30), 0..60)) {
        let limits = ChatLimits { total: 40, per_pilot: 3, keep_secs: 30 };
        let mut log = ChatLog::new(limits);
        for (t, step) in steps.iter().enumerate() {
            let pilots: Vec<Pilot> = step
                .iter()
                .map(|(c, m)| pilot(&format!("P{c}"), Some(&format!("m{m}"))))
                .collect();
            log.observe(from(&pilots), t as u64);
            prop_assert!(log.len() <= 40);
            let mut per = std::collections::HashMap::new();
            for l in log.lines() {
                *per.entry(l.callsign.clone()).or_insert(0) += 1;
                prop_assert!(t as u64 - l.at <= 30);
            }
            prop_assert!(per.values().all(|&n| n <= 3));
        }
    }
}
