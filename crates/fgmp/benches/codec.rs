//! Codec benchmarks on a real FlightGear 2020.3 position datagram (892 bytes, c172p).
//!
//! Run: `cargo bench -p fgmp --bench codec -- --warm-up-time 1 --measurement-time 3`

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use fgmp::message::{Message, RoutingInfo};
use fgmp::props::PropertyList;

/// The real capture: TEST1's c172p near BIKF, v2 properties, empty chat.
const POSITION: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/fg/samples/c172p_TEST1_position.bin"
));

/// Where the property list starts (header 32 + position body 200).
const PROPS_OFFSET: usize = 232;

fn codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("c172p_position_892B");
    g.throughput(Throughput::Bytes(POSITION.len() as u64));

    g.bench_function("RoutingInfo::parse", |b| {
        b.iter(|| RoutingInfo::parse(black_box(POSITION)))
    });

    g.bench_function("Message::decode", |b| {
        b.iter(|| Message::decode(black_box(POSITION)))
    });

    let msg = Message::decode(POSITION).expect("the capture decodes");
    let mut out = Vec::with_capacity(fgmp::MAX_DATAGRAM);
    g.bench_function("Message::encode", |b| {
        b.iter(|| {
            out.clear();
            black_box(&msg).encode(&mut out).expect("encodes");
            black_box(out.len())
        })
    });

    let props = &POSITION[PROPS_OFFSET..];
    g.throughput(Throughput::Bytes(props.len() as u64));
    g.bench_function("PropertyList::decode", |b| {
        b.iter(|| PropertyList::decode(black_box(props)))
    });

    let list = PropertyList::decode(props);
    let mut out = Vec::with_capacity(fgmp::MAX_DATAGRAM);
    g.bench_function("PropertyList::encode", |b| {
        b.iter(|| {
            out.clear();
            black_box(&list).encode(&mut out);
            black_box(out.len())
        })
    });
    g.finish();

    // The encoders must reproduce the capture, or the numbers above mean little.
    let mut whole = Vec::new();
    msg.encode(&mut whole).expect("encodes");
    assert_eq!(whole, POSITION, "Message round trip");
    assert_eq!(list.to_bytes(), props, "PropertyList round trip");
}

criterion_group!(benches, codec);
criterion_main!(benches);
