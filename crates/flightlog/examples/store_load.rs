//! Writes `--hours` flight hours into a flight log as lobby's writer does (one
//! transaction per simulated second: every pilot's position every 10 s, sessions
//! beginning and ending), and prints rows per second and the database size.
//!
//!   cargo run --release -p flightlog --example store_load -- URL PILOTS HOURS
//!   e.g. sqlite:/tmp/log.sqlite 10000 1000
//!
//! Flights last one hour each (360 samples); PILOTS fly at once.

use flightlog::flights::{Fix, Flights, Op, Report};
use flightlog::store::Store;
use std::time::Instant;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, pilots, hours] = args.as_slice() else {
        anyhow::bail!("usage: store_load URL PILOTS HOURS");
    };
    let pilots: i64 = pilots.parse()?;
    let hours: i64 = hours.parse()?;
    let store = Store::open(url).await?;
    let mut fl = Flights::with_id_blocks(1_000_000);
    fl.add_ids(store.reserve_flight_ids(10_000_000).await?, 10_000_000);
    let t0: i64 = 1_800_000_000;
    // Simulated seconds needed for `hours` flight hours with `pilots` flying.
    let secs = hours * 3600 / pilots;
    let started = Instant::now();
    let mut ops: Vec<Op> = Vec::new();
    let mut rows: u64 = 0;
    for s in 0..=secs {
        let at = t0 + s;
        for p in 0..pilots {
            let cs = format!("P{p:05}");
            // Each pilot's flights last an hour, staggered so some begin every second.
            let phase = (s + p) % 3600;
            if phase == 0 {
                fl.apply(
                    Report::Began {
                        callsign: cs.clone(),
                        model: "Aircraft/c172p/Models/c172p.xml".into(),
                        relay: "bench".into(),
                        at,
                        source: Some(cs.clone()),
                    },
                    &mut ops,
                );
            }
            // Positions every 10 s per pilot, as the relay reports them.
            if (s + p) % 10 == 0 {
                let lat = 40.0 + (p % 400) as f64 * 0.05 + phase as f64 * 0.0005;
                fl.apply(
                    Report::Position {
                        callsign: cs.clone(),
                        relay: "bench".into(),
                        at,
                        fix: Fix {
                            lat,
                            lon: -100.0 + (p / 400) as f64 * 0.1,
                            alt_ft: 3000.0 + phase as f64,
                            heading: 0.0,
                        },
                    },
                    &mut ops,
                );
            }
            if phase == 3599 {
                fl.apply(
                    Report::Ended {
                        callsign: cs,
                        relay: "bench".into(),
                        at,
                    },
                    &mut ops,
                );
            }
        }
        rows += ops.len() as u64;
        store.apply(&ops).await?;
        ops.clear();
        if s % 600 == 0 {
            eprintln!(
                "{s}/{secs} simulated s, {rows} rows, {:.0} rows/s",
                rows as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    fl.close_relay(None, t0 + secs, &mut ops);
    rows += ops.len() as u64;
    store.apply(&ops).await?;
    let took = started.elapsed().as_secs_f64();
    let size = store.size_bytes().await?;
    println!(
        "{{\"backend\":\"{:?}\",\"pilots\":{pilots},\"flight_hours\":{hours},\"simulated_s\":{secs},\"rows\":{rows},\"seconds\":{took:.1},\"rows_per_s\":{:.0},\"db_bytes\":{size},\"mb_per_1000_flight_hours\":{:.1}}}",
        store.backend(),
        rows as f64 / took,
        size as f64 / 1e6 / (hours as f64 / 1000.0)
    );
    store.close().await;
    Ok(())
}
