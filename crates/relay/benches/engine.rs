//! Engine costs without sockets. `engine_world`: the cost per received datagram,
//! which must not grow with pilots that are out of range (the spatial index visits
//! only nearby cells). `engine_expiry`: the cost per expired pilot, which must not
//! grow with the table (issue 9, item 3).

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use fgmp::geo::{to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use relay::{Config, Engine, Outbox, Stats};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// 30 airports, as in the load generator's world layout.
const AIRPORTS: [(f64, f64); 30] = [
    (63.985, -22.605),
    (51.47, -0.4543),
    (49.0097, 2.5479),
    (50.0379, 8.5622),
    (52.3105, 4.7683),
    (40.6413, -73.7781),
    (33.9416, -118.4085),
    (41.9742, -87.9073),
    (37.6213, -122.379),
    (25.7959, -80.287),
    (35.5494, 139.7798),
    (22.308, 113.9185),
    (1.3644, 103.9915),
    (-33.9399, 151.1753),
    (-37.669, 144.841),
    (-23.4356, -46.4731),
    (-34.8222, -58.5358),
    (19.4361, -99.0719),
    (43.6777, -79.6248),
    (49.1967, -123.1815),
    (55.9726, 37.4146),
    (41.2753, 28.7519),
    (25.2532, 55.3657),
    (28.5562, 77.1),
    (-26.1367, 28.2411),
    (30.1219, 31.4056),
    (37.4602, 126.4407),
    (39.5098, 116.4105),
    (-36.8485, 174.7633),
    (64.8378, -147.8564),
];

fn encode(i: usize, p: [f64; 3]) -> (Vec<u8>, SocketAddr) {
    let cs = Callsign::new(&format!("B{i:05}")).unwrap();
    let d = to_bytes(&Message::position(
        cs,
        100,
        Position::at("Aircraft/c172p/Models/c172p.xml", p),
    ))
    .unwrap();
    let from = SocketAddr::from((
        Ipv4Addr::new(127, (i >> 16) as u8, (i >> 8) as u8, i as u8),
        5000,
    ));
    (d, from)
}

fn ecef(lat: f64, lon: f64) -> [f64; 3] {
    to_ecef(Geodetic {
        lat_deg: lat,
        lon_deg: lon,
        alt_m: 500.0,
    })
}

/// `n` positions on a world grid, each more than 250 nm from every airport, so they
/// are out of range of every airport pilot (ranges are 100 nm).
fn elsewhere(n: usize) -> Vec<[f64; 3]> {
    let airports: Vec<_> = AIRPORTS.iter().map(|&(la, lo)| ecef(la, lo)).collect();
    let mut out = Vec::new();
    let mut lat = -70.0;
    while out.len() < n && lat < 80.0 {
        let mut lon = -180.0;
        while out.len() < n && lon < 180.0 {
            let p = ecef(lat, lon);
            if airports.iter().all(|&a| fgmp::geo::chord_nm(a, p) > 250.0) {
                out.push(p);
            }
            lon += 0.7;
        }
        lat += 0.7;
    }
    assert_eq!(out.len(), n, "grid too coarse");
    out
}

fn world(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_world");
    g.throughput(Throughput::Elements(1));
    // 1,000 pilots over 30 airports (33 each, all in range of each other), plus 0 or
    // 9,000 pilots elsewhere, out of everyone's range. The work per received datagram
    // must not grow with the 9,000.
    for extra in [0usize, 9_000] {
        let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
        let mut out = Outbox::new();
        let now = Instant::now();
        let mut senders = Vec::new();
        for i in 0..1_000 {
            let (lat, lon) = AIRPORTS[i % AIRPORTS.len()];
            let (d, from) = encode(i, ecef(lat + (i / AIRPORTS.len()) as f64 * 0.0005, lon));
            e.handle(&d, from, now, &mut out);
            senders.push((d, from));
        }
        for (j, p) in elsewhere(extra).into_iter().enumerate() {
            let (d, from) = encode(1_000 + j, p);
            e.handle(&d, from, now, &mut out);
        }
        out.clear();
        assert_eq!(e.pilot_count(), 1_000 + extra);
        let mut k = 0;
        g.bench_with_input(BenchmarkId::new("pilots", 1_000 + extra), &extra, |b, _| {
            b.iter(|| {
                let (d, from) = &senders[k % senders.len()];
                k += 1;
                e.handle(d, *from, now, &mut out);
                let n = out.len();
                out.clear();
                n
            })
        });
    }
    g.finish();
}

/// A table of `pts.len()` pilots on the grid of `elsewhere`: the first
/// `silent` join at `t0` and say nothing more, the others join 1 to 9 s later.
fn table(pts: &[[f64; 3]], silent: usize, t0: Instant) -> (Engine, Outbox) {
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let mut out = Outbox::new();
    for (i, &p) in pts.iter().enumerate() {
        let (d, from) = encode(i, p);
        let at = if i < silent {
            t0
        } else {
            t0 + Duration::from_secs(1 + (i % 9) as u64)
        };
        e.handle(&d, from, at, &mut out);
        out.clear();
    }
    (e, out)
}

fn expiry(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_expiry");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 50_000] {
        let pts = elsewhere(n);
        let t0 = Instant::now();
        // Every pilot goes silent at once and expires in one sweep: time per pilot.
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("all_expire", n), |b| {
            b.iter_batched(
                || table(&pts, n, t0),
                |(mut e, mut out)| {
                    e.handle_timeout(t0 + Duration::from_millis(10_500), &mut out);
                    assert_eq!(e.pilot_count(), 0);
                    e
                },
                BatchSize::PerIteration,
            )
        });
        // 1,000 expire while the rest of the table stays: time per expired pilot.
        g.throughput(Throughput::Elements(1_000));
        g.bench_function(BenchmarkId::new("1000_expire_from", n), |b| {
            b.iter_batched(
                || table(&pts, 1_000, t0),
                |(mut e, mut out)| {
                    e.handle_timeout(t0 + Duration::from_millis(10_500), &mut out);
                    assert_eq!(e.pilot_count(), n - 1_000);
                    e
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, world, expiry);
criterion_main!(benches);
