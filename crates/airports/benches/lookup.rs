//! The airport lookups the flight log and the map make: `cargo bench -p airports`.

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn lookups(c: &mut Criterion) {
    let t = airports::table();
    c.bench_function("parse the embedded table", |b| {
        b.iter(|| airports::Table::parse(black_box(airports::EMBEDDED)).len())
    });
    c.bench_function("nearest within 5 km (Heathrow)", |b| {
        b.iter(|| {
            t.nearest(black_box(51.4775), black_box(-0.4614), 5_000.0)
                .map(|a| a.1)
        })
    });
    c.bench_function("nearest within 5 km (open sea)", |b| {
        b.iter(|| {
            t.nearest(black_box(40.0), black_box(-40.0), 5_000.0)
                .map(|a| a.1)
        })
    });
    c.bench_function("within: western Europe, small and up, 500", |b| {
        let bbox = airports::BBox {
            west: -10.0,
            south: 35.0,
            east: 20.0,
            north: 60.0,
        };
        b.iter(|| {
            t.within(black_box(bbox), airports::Kind::Small, 500)
                .0
                .len()
        })
    });
    // `GET /api/airports` without parameters: the world, small and up, 500.
    c.bench_function("within: world, small, 500 (the API's default)", |b| {
        b.iter(|| {
            t.within(black_box(airports::BBox::WORLD), airports::Kind::Small, 500)
                .0
                .len()
        })
    });
    c.bench_function("within: world, large", |b| {
        b.iter(|| {
            t.within(
                black_box(airports::BBox::WORLD),
                airports::Kind::Large,
                1_000,
            )
            .0
            .len()
        })
    });
}

criterion_group!(benches, lookups);
criterion_main!(benches);
