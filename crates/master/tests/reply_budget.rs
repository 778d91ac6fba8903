//! How much the master sends toward one source for what that source sends it (issue 9,
//! item 6): a spoofed scan flood aimed at a victim, driven through the engine in virtual
//! time with the default configuration. The counts are deterministic; `figures` prints
//! the table in docs/BENCHMARKS.md ("Issue 9: master reply budget"):
//!
//! ```text
//! cargo test -p master --test reply_budget -- --nocapture --test-threads 1
//! ```

use master::{Config, Engine, Outbox, Stats};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xash::master::ChallengeReply;

const INFO: &str = "\\players\\0\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\0\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve";
/// The engine's scan (clver, nat, a key).
const SCAN: &[u8] = b"1\xff0.0.0.0:0\0\\gamedir\\valve\\clver\\0.21\\nat\\0\\key\\1\0";
/// A scan with no nat key: NAT servers in the list are told about the client.
const SCAN_NAT: &[u8] = b"1\xff0.0.0.0:0\0\\gamedir\\valve\\clver\\0.21\\key\\1\0";
const VICTIM4: &str = "203.0.113.7:27005";
const VICTIM6: &str = "[2001:db8:77::7]:27005";

struct Rig {
    e: Engine,
    now: Instant,
}

impl Rig {
    fn new(config: Config) -> Rig {
        let now = Instant::now();
        Rig {
            e: Engine::new(config, Arc::new(Stats::default()), [9; 32], now),
            now,
        }
    }

    fn send(&mut self, p: &[u8], from: SocketAddr) -> Vec<(SocketAddr, Vec<u8>)> {
        let mut out = Outbox::new();
        self.e.handle(p, from, self.now, &mut out);
        out.drain_owned()
    }

    fn register(&mut self, from: SocketAddr, info: &str) {
        let out = self.send(&[0x71, 0xff, 1, 2, 3, 4], from);
        let c = ChallengeReply::decode(&out[0].1).unwrap();
        let p = format!("0\n\\protocol\\49\\challenge\\{}{info}", c.master_challenge);
        self.send(p.as_bytes(), from);
    }

    /// `n` servers, 20 per source address, of the family of `v6`.
    fn fleet(&mut self, n: usize, v6: bool, info: &str) {
        for i in 0..n {
            let (host, port) = (i / 20, 27015 + (i % 20) as u16);
            let a: SocketAddr = if v6 {
                format!("[2001:db8:{:x}::1]:{port}", host + 1)
                    .parse()
                    .unwrap()
            } else {
                format!("10.{}.{}.1:{port}", host / 250, host % 250)
                    .parse()
                    .unwrap()
            };
            self.register(a, info);
        }
        assert_eq!(self.e.table().len(), n);
    }

    fn step(&mut self, d: Duration) {
        self.now += d;
        self.e.handle_timeout(self.now, &mut Outbox::new());
    }
}

/// What one source sent and what the master sent back (to it, and to NAT servers
/// on its behalf).
#[derive(Debug, Default, Clone, Copy)]
struct Flow {
    requests: u64,
    bytes_in: u64,
    replies: u64,
    bytes_out: u64,
    nat_announces: u64,
}

impl Flow {
    fn ratio(&self) -> f64 {
        self.bytes_out as f64 / self.bytes_in as f64
    }
}

/// `rate` scans per second from `from` for `secs` seconds, evenly spaced.
fn flood(r: &mut Rig, from: SocketAddr, scan: &[u8], rate: u32, secs: u32) -> Flow {
    let mut f = Flow::default();
    let gap = Duration::from_secs(1) / rate;
    for _ in 0..rate * secs {
        f.requests += 1;
        f.bytes_in += scan.len() as u64;
        for (to, p) in r.send(scan, from) {
            if to == from {
                f.replies += 1;
                f.bytes_out += p.len() as u64;
            } else {
                f.nat_announces += 1;
            }
        }
        r.step(gap);
    }
    f
}

struct Case {
    name: &'static str,
    servers: usize,
    v6: bool,
    nat: bool,
    rate: u32,
    secs: u32,
}

const CASES: &[Case] = &[
    Case {
        name: "burst: 1,000 scans in 1 s",
        servers: 10_000,
        v6: false,
        nat: false,
        rate: 1000,
        secs: 1,
    },
    Case {
        name: "1 scan/s for 60 s",
        servers: 10_000,
        v6: false,
        nat: false,
        rate: 1,
        secs: 60,
    },
    Case {
        name: "10 scans/s for 60 s",
        servers: 10_000,
        v6: false,
        nat: false,
        rate: 10,
        secs: 60,
    },
    Case {
        name: "1,000 scans/s for 60 s",
        servers: 10_000,
        v6: false,
        nat: false,
        rate: 1000,
        secs: 60,
    },
    Case {
        name: "IPv6, 10 scans/s for 60 s",
        servers: 10_000,
        v6: true,
        nat: false,
        rate: 10,
        secs: 60,
    },
    Case {
        name: "32,768 servers, 10 scans/s for 60 s",
        servers: 32_768,
        v6: false,
        nat: false,
        rate: 10,
        secs: 60,
    },
    Case {
        name: "1,000 NAT servers, 10 scans/s for 60 s",
        servers: 1_000,
        v6: false,
        nat: true,
        rate: 10,
        secs: 60,
    },
];

fn run(c: &Case) -> Flow {
    let mut r = Rig::new(Config::default());
    let info = if c.nat {
        format!("{INFO}\\nat\\1")
    } else {
        format!("{INFO}\\nat\\0")
    };
    r.fleet(c.servers, c.v6, &info);
    r.step(Duration::from_secs(1));
    let victim: SocketAddr = if c.v6 { VICTIM6 } else { VICTIM4 }.parse().unwrap();
    let scan = if c.nat { SCAN_NAT } else { SCAN };
    flood(&mut r, victim, scan, c.rate, c.secs)
}

/// The default per-source reply budget, bytes per second (one full 10,000-server IPv4
/// scan of 1,400-byte pages is 60,792 bytes).
const BUDGET: u64 = 65_536;
/// The default NAT announces per client per second.
const NAT_PER_SEC: u64 = 32;

#[test]
fn figures() {
    println!("| case | requests | bytes in | replies | bytes out | out/in | NAT announces |");
    println!("|---|---|---|---|---|---|---|");
    let mut flows = Vec::new();
    for c in CASES {
        let f = run(c);
        println!(
            "| {} | {} | {} | {} | {} | {:.1} | {} |",
            c.name,
            f.requests,
            f.bytes_in,
            f.replies,
            f.bytes_out,
            f.ratio(),
            f.nat_announces
        );
        flows.push(f);
    }
    // Bounded toward any one address: the budget per second plus one burst and one
    // reply larger than the burst (the largest list, 32,768 servers).
    for (c, f) in CASES.iter().zip(&flows) {
        let largest = 32_768 * 18 + 32_768 / 50 * 20;
        let bound = BUDGET * (u64::from(c.secs) + 1) + largest;
        assert!(
            f.bytes_out <= bound,
            "{}: {} bytes toward one source, bound {bound}",
            c.name,
            f.bytes_out
        );
        assert!(
            f.nat_announces <= NAT_PER_SEC * (u64::from(c.secs) + 1),
            "{}: {} NAT announces for one client",
            c.name,
            f.nat_announces
        );
    }
}
