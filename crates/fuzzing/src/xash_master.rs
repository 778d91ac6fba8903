//! Every master-side decoder of the xash crate, and the master engine fed the input
//! as datagrams: never panics, and replies stay within the page size.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xash::master::*;

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let _ = Heartbeat::decode(data);
    let _ = ChallengeReply::decode(data);
    if let Ok(i) = ServerInfo::decode(data) {
        let _ = ServerAdd::from_info(&i.info);
    }
    if let Ok(r) = ScanRequest::decode(data) {
        let _ = xash::filter::Filter::from_info(&r.filter);
    }
    let _ = ServerListPage::decode(data, false, true);
    let _ = ServerListPage::decode(data, true, true);
    let _ = NatConnect::decode(data);
    let _ = xash::text::InfoQuery::decode(data);
    let _ = xash::text::InfoReply::decode(data);
    let _ = xash::admin::AdminCommand::decode(data, 64);

    let t0 = Instant::now();
    // Small per-source tables: cheap to build per input, and full after a few
    // sources, so the eviction paths are fuzzed too.
    let config = master::Config {
        rate_table_size: 64,
        ..master::Config::default()
    };
    let mut e = master::Engine::new(config, Arc::new(master::Stats::default()), [3; 32], t0);
    let mut out = master::Outbox::new();
    for (i, chunk) in data.split(|&b| b == 0xfe).enumerate() {
        let from: SocketAddr = format!("127.0.0.{}:27015", i % 4 + 1).parse().unwrap();
        let now = t0 + Duration::from_millis(i as u64 * 100);
        e.handle(chunk, from, now, &mut out);
        e.handle_timeout(now, &mut out);
        for t in out.iter() {
            assert!(t.payload.len() <= 1400);
        }
        out.clear();
    }
}
