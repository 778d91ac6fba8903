//! What `/metrics` costs the UDP workers: one histogram record per datagram handled
//! (the relay's fan-out), with the Prometheus recorder installed, against the no-op
//! handle a process without HTTP gets. Compare with the relay engine's work per
//! datagram (`cargo bench -p relay --bench engine`).
//!
//! `cargo bench -p lobby --bench metrics -- --warm-up-time 1 --measurement-time 3`

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

/// Fan-outs of one batch of 64 datagrams, as a worker records them.
fn batch() -> Vec<usize> {
    (0..64).map(|i| (i * 7) % 40).collect()
}

fn record(c: &mut Criterion) {
    let mut g = c.benchmark_group("fanout_record");
    g.throughput(Throughput::Elements(64));
    let counts = batch();
    let noop = metrics::Histogram::noop();
    g.bench_function("no recorder (64 datagrams)", |b| {
        b.iter(|| {
            for &n in &counts {
                noop.record(black_box(n) as f64);
            }
        })
    });
    let handle = lobby::recorder::install().expect("the recorder installs");
    let h = metrics::histogram!(lobby::recorder::RELAY_FANOUT);
    g.bench_function("prometheus recorder (64 datagrams)", |b| {
        let mut batches = 0u64;
        b.iter(|| {
            for &n in &counts {
                h.record(black_box(n) as f64);
            }
            // The HTTP part drains every 5 s; drain now and then here too, so the
            // pending samples stay as bounded as in the server.
            batches += 1;
            if batches.is_multiple_of(10_000) {
                handle.run_upkeep();
            }
        })
    });
    g.finish();
}

criterion_group!(benches, record);
criterion_main!(benches);
