//! The tracker codec's cost: one POSITION line written and parsed, and a tracker
//! server taking one fgms message of 500 POSITION lines (what a relay with 500
//! pilots sends every 10 s) and answering it.
//!
//! `cargo bench -p tracker --bench codec -- --warm-up-time 1 --measurement-time 3`

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::time::Instant;
use tracker::message::{parse_line, Line};
use tracker::server::{Event, ServerConfig, ServerConn};

fn position(i: usize) -> Line {
    Line::Position {
        callsign: format!("P{i:05}"),
        passwd: "test".into(),
        lat: 63.985 + i as f64 * 1e-3,
        lon: -22.605,
        alt_ft: 3280.84,
        heading: 280.0,
        pitch: 2.5,
        roll: -1.25,
        time: 1_796_155_200,
    }
}

fn codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("tracker");
    let line = position(7);
    let text = line.encode();
    g.throughput(Throughput::Elements(1));
    g.bench_function("encode POSITION", |b| b.iter(|| black_box(&line).encode()));
    g.bench_function("parse POSITION", |b| {
        b.iter(|| parse_line(black_box(&text)))
    });
    // One message of 500 POSITION lines through a server connection.
    let msg: String = (0..500)
        .map(|i| position(i).encode())
        .collect::<Vec<_>>()
        .join("\n");
    let mut bytes = b"\0V20151207 0.13.10 relay.example.org mpserver01\0".to_vec();
    let mut body = msg.into_bytes();
    body.push(0);
    g.throughput(Throughput::Elements(500));
    g.bench_function("server: one 500-line message", |b| {
        b.iter_batched(
            || {
                let now = Instant::now();
                let mut conn = ServerConn::new(ServerConfig::default(), now);
                for e in conn.received(&bytes, now) {
                    if let Event::Hello(_) = e {
                        conn.accept("mpserver01");
                    }
                }
                while conn.poll_transmit().is_some() {}
                conn
            },
            |mut conn| {
                let ev = conn.received(&body, Instant::now());
                assert!(
                    matches!(ev.as_slice(), [Event::Message { lines, .. }] if lines.len() == 500)
                );
                conn.poll_transmit()
            },
            criterion::BatchSize::SmallInput,
        )
    });
    bytes.clear();
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
