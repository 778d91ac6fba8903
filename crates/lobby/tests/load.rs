//! `lobby load fg` against a real relay: the pilots fit the relay's default
//! per-address cap, and the churn and expiry burst really join and expire pilots.

mod common;

use common::*;
use std::process::Command;

fn load(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(["load", "fg", "--json"])
        .args(args)
        .output()
        .expect("run lobby load fg");
    assert!(
        out.status.success(),
        "lobby load fg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn pilots_are_spread_so_a_default_relay_takes_them_all() {
    // With every pilot on 127.0.0.1 the relay's cap of 16 per address refused 24 of 40.
    let r = start_relay(&[]);
    let target = r.addr("relay", "udp").to_string();
    let j = load(&[
        "--target",
        &target,
        "--pilots",
        "40",
        "--seconds",
        "1",
        "--hz",
        "5",
    ]);
    assert_eq!(j["delivery_ratio"].as_f64(), Some(1.0), "{j}");
    assert_eq!(j["expected"].as_u64(), Some(40 * 39 * 5), "{j}");
    assert!(j["churn"].is_null());
    r.stop();
}

#[test]
fn churn_and_an_expiry_burst_join_and_expire_pilots() {
    let r = start_relay(&["--player-expiry", "1"]);
    let target = r.addr("relay", "udp").to_string();
    let j = load(&[
        "--target",
        &target,
        "--pilots",
        "2",
        "--seconds",
        "4",
        "--warmup",
        "1",
        "--expire-burst",
        "300",
        "--churn",
        "50",
        "--churn-life",
        "1",
        "--churn-expiry",
        "1",
    ]);
    let c = &j["churn"];
    assert_eq!(c["burst"].as_u64(), Some(300), "{j}");
    assert!(c["joined"].as_u64().unwrap() >= 150, "{j}");
    assert_eq!(c["send_errors"].as_u64(), Some(0), "{j}");
    assert!(j["max_gap_ms"].as_f64().unwrap() > 0.0, "{j}");
    assert_eq!(j["delivery_ratio"].as_f64(), Some(1.0), "{j}");
    // The relay really had them all and dropped them when they went silent.
    let t = telnet_until(r.addr("relay", "telnet"), "the burst expired", |t| {
        telnet_stat(t, "pilots_joined") >= 452 && telnet_stat(t, "pilots_expired") >= 300 + 100
    });
    assert!(!t.contains("per_ip_limit="), "{t}");
    r.stop();
}
