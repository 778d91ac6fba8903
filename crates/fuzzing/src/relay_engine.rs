//! The relay engine fed arbitrary datagrams from a few addresses: never panics,
//! never sends a datagram back to its sender, never forwards invalid input, never
//! sends one address two copies of one datagram.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let cfg = relay::Config {
        relays: vec![relay::RelayPeer {
            addr: "127.0.0.1:7000".parse().unwrap(),
            label: "r".into(),
        }],
        hub: true,
        ..relay::Config::default()
    };
    let mut e = relay::Engine::new(cfg, Arc::new(relay::Stats::default()));
    let mut out = relay::Outbox::new();
    let t0 = Instant::now();
    // Split the input into datagrams: [from-selector, len-hi, len-lo, bytes...]*
    let mut rest = data;
    let mut step = 0u64;
    while rest.len() >= 3 {
        let sel = rest[0] % 4;
        let n = (usize::from(rest[1]) << 8 | usize::from(rest[2])).min(rest.len() - 3);
        let d = &rest[3..3 + n];
        rest = &rest[3 + n..];
        let from: SocketAddr = format!("127.0.0.1:{}", 7000 + u16::from(sel))
            .parse()
            .unwrap();
        step += 1;
        let now = t0 + Duration::from_millis(step * 300);
        out.clear();
        e.handle(d, from, now, &mut out);
        let valid = fgmp::RoutingInfo::parse(d).is_ok();
        for t in out.iter() {
            assert!(valid, "invalid input produced output");
            if fgmp::RoutingInfo::parse(d).map(|i| i.msg_id) != Ok(fgmp::MsgId::Ping) {
                assert_ne!(t.to, from, "echoed to sender");
            }
            assert_eq!(t.payload.len(), d.len());
        }
        let mut dests = out.destinations();
        let n = dests.len();
        dests.sort();
        dests.dedup();
        assert_eq!(
            dests.len(),
            n,
            "an address was sent two copies of one datagram"
        );
        e.handle_timeout(now, &mut out);
    }
}
