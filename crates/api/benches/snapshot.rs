//! What one API snapshot costs with 10,000 pilots, each sending the real capture's
//! datagram (`testdata/fg`, a c172p with its full property list) under its own
//! callsign and address: the copy made under the relay's lock
//! (`Engine::pilots_with_datagrams`), the decode into API pilots outside it, the chat
//! log's look, the stream's diff and its JSON. `cargo bench -p api --bench snapshot`.

// criterion_group! defines a `pub fn` without a doc comment.
#![allow(missing_docs)]

use api::chat::{ChatLimits, ChatLog};
use api::stream::Sent;
use api::Clock;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use fgmp::message::{to_bytes, Message};
use relay::{Config, Engine, Outbox, Stats};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PILOTS: usize = 10_000;

fn capture_datagram() -> Vec<u8> {
    let p = format!(
        "{}/../../testdata/fg/c172p_TEST1_400.lpf",
        env!("CARGO_MANIFEST_DIR")
    );
    let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let n = u32::from_be_bytes(b[0..4].try_into().unwrap()) as usize;
    b[4..4 + n].to_vec()
}

/// Eight sources per /24, as the relay's nested quota allows.
fn source(i: usize) -> SocketAddr {
    let net = i / 8;
    let ip = Ipv4Addr::new(10, (net >> 8) as u8, (net & 0xff) as u8, (i % 8 + 1) as u8);
    SocketAddr::new(IpAddr::V4(ip), 5000)
}

fn engine(t0: Instant) -> Engine {
    let mut e = Engine::new(Config::default(), Arc::new(Stats::default()));
    let template = Message::decode(&capture_datagram()).unwrap();
    let mut out = Outbox::new();
    for i in 0..PILOTS {
        let mut m = template.clone();
        m.header.callsign = fgmp::Callsign::new(&format!("P{i:05}")).unwrap();
        e.handle(&to_bytes(&m).unwrap(), source(i), t0, &mut out);
        out.clear();
    }
    assert_eq!(e.pilots(t0).len(), PILOTS, "every pilot admitted");
    e
}

fn snapshot(c: &mut Criterion) {
    let t0 = Instant::now();
    let e = engine(t0);
    let later = t0 + Duration::from_millis(500);
    let clock = Clock {
        mono: later,
        unix: Duration::from_secs(1_796_155_200),
    };
    println!("datagram: {} bytes", capture_datagram().len());
    c.bench_function("10k: copy under the relay lock, with datagrams", |b| {
        b.iter(|| black_box(e.pilots_with_datagrams(later)).len())
    });
    c.bench_function("10k: copy under the relay lock, without datagrams", |b| {
        b.iter(|| black_box(e.pilots(later)).len())
    });
    let views = e.pilots_with_datagrams(later);
    c.bench_function("10k: decode into API pilots (outside the lock)", |b| {
        b.iter(|| api::pilots::pilots(black_box(&views), &clock).len())
    });
    let pilots = api::pilots::pilots(&views, &clock);
    let from: Vec<IpAddr> = api::pilots::shown(&views).map(|v| v.addr.ip()).collect();
    c.bench_function("10k: chat log look", |b| {
        let mut log = ChatLog::new(ChatLimits::default());
        log.observe(pilots.iter().zip(from.iter().copied()), 0);
        b.iter(|| {
            log.observe(pilots.iter().zip(from.iter().copied()), 1)
                .len()
        })
    });
    let mut moved = pilots.clone();
    for p in &mut moved {
        p.lat += 0.001;
    }
    let (_, sent) = Sent::default().diff(&pilots, 0);
    c.bench_function("10k: stream diff, every pilot moved, and its JSON", |b| {
        b.iter(|| {
            let (u, _) = sent.diff(black_box(&moved), 1);
            serde_json::to_string(&u).unwrap().len()
        })
    });
    c.bench_function("10k: GET /api/pilots body JSON", |b| {
        b.iter(|| serde_json::to_string(black_box(&pilots)).unwrap().len())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = snapshot
}
criterion_main!(benches);
