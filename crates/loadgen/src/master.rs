//! `lobby load master`: registers N simulated servers with the full challenge
//! handshake from many loopback source addresses, then scans at a fixed rate and
//! measures answered scans, full-list correctness, latency and the master's CPU.

use crate::histogram::Histogram;
use crate::procstat;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;
use xash::info::InfoString;
use xash::master::{ChallengeReply, ScanRequest, ServerListPage};

/// The info string every simulated server registers with.
const SERVER_INFO: &str = "\\players\\3\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\1\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";
/// Registration handshakes in flight at once.
const REGISTER_CONCURRENCY: usize = 256;
/// Every this-many-th scan is decoded and checked address by address; the others
/// are counted from the page length so the generator keeps up.
const VERIFY_EVERY: u32 = 16;

/// Flags of `lobby load master`.
#[derive(clap::Args, Debug, Clone)]
pub struct MasterLoadArgs {
    /// The master, IP:PORT (loopback).
    #[arg(long)]
    pub target: SocketAddr,
    /// Servers to register.
    #[arg(long, default_value_t = 1000)]
    pub servers: usize,
    /// Servers registered per source address (must not exceed the master's quota).
    #[arg(long, default_value_t = 16)]
    pub per_source: usize,
    /// Scans per second to send after registration.
    #[arg(long, default_value_t = 100.0)]
    pub scans_per_sec: f64,
    /// Seconds to scan for.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Client sockets the scans are spread over (each on its own 127.x address).
    #[arg(long, default_value_t = 64)]
    pub clients: usize,
    /// Seconds a scan may take before it counts as unanswered.
    #[arg(long, default_value_t = 2.0)]
    pub scan_timeout: f64,
    /// PID of the master, to report its CPU time per scan.
    #[arg(long)]
    pub target_pid: Option<u32>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The `i`-th loopback source address from 127.`base`.0.1, eight per /24 (a
/// master's /24 holds eight sources' worth of servers).
fn source_ip(i: usize, base: u8) -> IpAddr {
    IpAddr::V4(crate::spread_v4(Ipv4Addr::new(127, base, 0, 1), i as u64))
}

/// One address's share of a list's order-independent checksum (the wrapping sum).
fn hash_addr(a: &SocketAddr) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    a.hash(&mut h);
    h.finish()
}

/// Registers one server from a fresh socket on `ip`: heartbeat, challenge, info.
async fn register_one(target: SocketAddr, ip: IpAddr, info: &str) -> Result<SocketAddr> {
    let sock = UdpSocket::bind(SocketAddr::new(ip, 0))
        .await
        .with_context(|| format!("bind {ip}"))?;
    let me = sock.local_addr()?;
    let mut buf = [0u8; 64];
    for attempt in 0..4u32 {
        let token = 0x1000_0000 + attempt;
        let mut hb = Vec::new();
        xash::master::Heartbeat {
            challenge: Some(token),
        }
        .encode(&mut hb);
        sock.send_to(&hb, target).await?;
        let wait = Duration::from_millis(500 << attempt.min(2));
        if let Ok(Ok((n, from))) = tokio::time::timeout(wait, sock.recv_from(&mut buf)).await {
            if from != target {
                continue;
            }
            let Ok(c) = ChallengeReply::decode(&buf[..n]) else {
                continue;
            };
            if c.echo != Some(token) {
                continue;
            }
            let p = format!("0\n\\protocol\\49\\challenge\\{}{info}", c.master_challenge);
            sock.send_to(p.as_bytes(), target).await?;
            return Ok(me);
        }
    }
    bail!("{me}: no challenge from {target}")
}

/// A scan sent, and what came back for it.
struct Outstanding {
    sent: Instant,
    /// When its last page arrived.
    last: Option<Instant>,
    servers: usize,
    /// Checksum of the listed addresses (verified scans only).
    hash: u64,
}

/// The scans in flight, by the key their filter carries.
type Scans = Mutex<HashMap<u32, Outstanding>>;

/// Runs `lobby load master`: registers, scans, prints the table or the JSON object on
/// standard output, and returns the exit status (0 when scans were answered, 1 when
/// none was).
pub async fn run(a: MasterLoadArgs) -> Result<ExitCode> {
    validate(&a)?;
    udp::raise_nofile();
    let reg = register_all(&a).await?;
    // Let the last infos land before scanning.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let scans = scan(&a).await?;
    let tally = Tally::of(&crate::lock(&scans.outstanding), &reg);
    if a.json {
        println!("{}", json_report(&a, &reg, &scans, &tally));
    } else {
        print_table(&a, &reg, &scans, &tally);
    }
    if (scans.sent as f64) < a.scans_per_sec * a.seconds * 0.99 {
        eprintln!("warning: the generator sent fewer scans than requested; the figures are limited by the generator");
    }
    Ok(if tally.answered == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn validate(a: &MasterLoadArgs) -> Result<()> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if a.per_source == 0 || a.clients == 0 || !positive(a.scans_per_sec) || !positive(a.seconds) {
        bail!("--per-source, --clients, --scans-per-sec and --seconds must be positive");
    }
    if !a.target.ip().is_loopback() {
        bail!("--target must be a loopback address: this tool sends from 127.0.0.0/8");
    }
    Ok(())
}

/// The servers registered.
struct Registration {
    addrs: Vec<SocketAddr>,
    failures: usize,
    secs: f64,
}

impl Registration {
    /// The checksum a full list of the registered servers has.
    fn hash(&self) -> u64 {
        self.addrs
            .iter()
            .map(hash_addr)
            .fold(0u64, u64::wrapping_add)
    }
}

/// Registers `--servers` servers, `--per-source` per source address, at most
/// [`REGISTER_CONCURRENCY`] handshakes in flight.
async fn register_all(a: &MasterLoadArgs) -> Result<Registration> {
    let start = Instant::now();
    let sem = Arc::new(tokio::sync::Semaphore::new(REGISTER_CONCURRENCY));
    let mut tasks = Vec::with_capacity(a.servers);
    for i in 0..a.servers {
        let permit = sem.clone().acquire_owned().await?;
        let ip = source_ip(i / a.per_source, 10);
        let target = a.target;
        tasks.push(tokio::spawn(async move {
            let r = register_one(target, ip, SERVER_INFO).await;
            drop(permit);
            r
        }));
    }
    let mut addrs = Vec::with_capacity(a.servers);
    let mut failures = 0;
    for t in tasks {
        match t.await? {
            Ok(addr) => addrs.push(addr),
            Err(_) => failures += 1,
        }
    }
    Ok(Registration {
        addrs,
        failures,
        secs: start.elapsed().as_secs_f64(),
    })
}

/// What the scan phase sent and received.
struct ScanRun {
    outstanding: Arc<Scans>,
    sent: u64,
    /// Time spent encoding and sending.
    busy: Duration,
    /// Wall time of the sending.
    send_secs: f64,
    pages: u64,
    master_cpu: Option<f64>,
}

impl ScanRun {
    fn achieved_per_sec(&self) -> f64 {
        self.sent as f64 / self.send_secs
    }

    /// The generator's own ceiling: scans per second of send time.
    fn generator_max_per_sec(&self) -> f64 {
        if self.busy.as_secs_f64() > 0.0 {
            self.sent as f64 / self.busy.as_secs_f64()
        } else {
            0.0
        }
    }
}

/// Scans at `--scans-per-sec` for `--seconds` from `--clients` sockets, then waits
/// `--scan-timeout` for the last pages; the master's CPU is read around it.
async fn scan(a: &MasterLoadArgs) -> Result<ScanRun> {
    let outstanding: Arc<Scans> = Arc::default();
    let pages = Arc::new(AtomicU64::new(0));
    let mut sockets = Vec::new();
    for c in 0..a.clients {
        let s = Arc::new(UdpSocket::bind(SocketAddr::new(source_ip(c, 64), 0)).await?);
        sockets.push(s);
    }
    let receivers: Vec<_> = sockets
        .iter()
        .map(|s| tokio::spawn(receive_pages(s.clone(), outstanding.clone(), pages.clone())))
        .collect();
    let cpu0 = a.target_pid.map(procstat::process_cpu_s).transpose()?;
    let start = Instant::now();
    let (sent, busy) = send_scans(a, &sockets, &outstanding, start).await?;
    let send_secs = start.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs_f64(a.scan_timeout)).await;
    let cpu1 = a.target_pid.map(procstat::process_cpu_s).transpose()?;
    for r in receivers {
        r.abort();
    }
    Ok(ScanRun {
        outstanding,
        sent,
        busy,
        send_secs,
        pages: pages.load(Relaxed),
        master_cpu: cpu0.zip(cpu1).map(|(a, b)| b - a),
    })
}

/// Sends the scans on schedule (bounded in count and in time); returns how many
/// went out and the time spent sending them.
async fn send_scans(
    a: &MasterLoadArgs,
    sockets: &[Arc<UdpSocket>],
    outstanding: &Scans,
    start: Instant,
) -> Result<(u64, Duration)> {
    let total = (a.scans_per_sec * a.seconds).round() as u64;
    let mut sent = 0u64;
    let mut busy = Duration::ZERO;
    let mut key: u32 = 0x1000;
    let filter = InfoString::new()
        .with("gamedir", "valve")?
        .with("clver", "0.21")?
        .with("nat", "0")?;
    while sent < total {
        let due = ((start.elapsed().as_secs_f64() * a.scans_per_sec) as u64 + 1).min(total);
        while sent < due {
            key = key.wrapping_add(1);
            let req = scan_request(&filter, key)?;
            let t = Instant::now();
            let scan = Outstanding {
                sent: t,
                last: None,
                servers: 0,
                hash: 0,
            };
            crate::lock(outstanding).insert(key, scan);
            let s = &sockets[sent as usize % sockets.len()];
            let _ = s.send_to(&req, a.target).await;
            busy += t.elapsed();
            sent += 1;
        }
        if start.elapsed() > Duration::from_secs_f64(a.seconds + 5.0) {
            break; // the generator fell far behind; stop, bounded in time
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok((sent, busy))
}

/// A scan of every region with `filter` and the scan's `key` (the master echoes
/// it in every page, which is how pages are matched to scans).
fn scan_request(filter: &InfoString, key: u32) -> Result<Vec<u8>> {
    let mut f = filter.clone();
    f.set("key", format!("{key:x}"))?;
    let mut req = Vec::new();
    ScanRequest {
        region: 0xff,
        last: None,
        filter: f,
        final_nul: true,
        malformed_last: false,
    }
    .encode(&mut req);
    Ok(req)
}

/// One client socket's receive loop: credits every page to its scan.
async fn receive_pages(sock: Arc<UdpSocket>, outstanding: Arc<Scans>, pages: Arc<AtomicU64>) {
    let mut buf = vec![0u8; 65536];
    while let Ok((n, _)) = sock.recv_from(&mut buf).await {
        let now = Instant::now();
        pages.fetch_add(1, Relaxed);
        note_page(&buf[..n], now, &outstanding);
    }
}

/// Credits one server-list page, arrived at `now`, to the scan whose key it carries.
fn note_page(page: &[u8], now: Instant, outstanding: &Scans) {
    let n = page.len();
    // Header, 0x7F key block, records, 6-byte terminator.
    if n < 18 || !page.starts_with(xash::master::SERVER_LIST_HEADER) || page[6] != 0x7f {
        return;
    }
    let key = u32::from_le_bytes([page[7], page[8], page[9], page[10]]);
    let verify = key.is_multiple_of(VERIFY_EVERY);
    let mut o = crate::lock(outstanding);
    let Some(st) = o.get_mut(&key) else { return };
    st.last = Some(now);
    if verify {
        if let Ok(p) = ServerListPage::decode(page, false, true) {
            st.servers += p.servers.len();
            st.hash = p
                .servers
                .iter()
                .map(hash_addr)
                .fold(st.hash, u64::wrapping_add);
        }
    } else {
        st.servers += (n - 18) / 6;
    }
}

/// The scans' outcome. A scan is answered when pages came back for it; its latency
/// runs to the last page; it is correct when the pages list exactly the registered
/// servers.
#[derive(Default)]
struct Tally {
    hist: Histogram,
    answered: u64,
    correct: u64,
    /// Most servers one scan listed.
    listed: usize,
    /// Scans decoded and checked address by address.
    checked: u64,
    /// Checked scans whose list was not exactly the registered servers.
    wrong: u64,
}

impl Tally {
    fn of(scans: &HashMap<u32, Outstanding>, reg: &Registration) -> Tally {
        let (expect_n, expect_hash) = (reg.addrs.len(), reg.hash());
        let mut t = Tally::default();
        for st in scans.values() {
            let Some(last) = st.last else { continue };
            t.answered += 1;
            t.listed = t.listed.max(st.servers);
            let verified = st.hash != 0 || expect_n == 0;
            if st.servers == expect_n && (!verified || st.hash == expect_hash) {
                t.correct += 1;
            }
            if verified {
                t.checked += 1;
                if st.servers != expect_n || st.hash != expect_hash {
                    t.wrong += 1;
                }
            }
            t.hist
                .record(last.saturating_duration_since(st.sent).as_micros() as u64);
        }
        t
    }

    /// The master's CPU microseconds per answered scan.
    fn cpu_us_per_scan(&self, cpu_s: f64) -> f64 {
        if self.answered > 0 {
            cpu_s * 1e6 / self.answered as f64
        } else {
            0.0
        }
    }
}

/// The `--json` object.
fn json_report(
    a: &MasterLoadArgs,
    reg: &Registration,
    run: &ScanRun,
    t: &Tally,
) -> serde_json::Value {
    let hist = &t.hist;
    serde_json::json!({
        "servers_requested": a.servers,
        "servers_registered": reg.addrs.len(),
        "registration_failures": reg.failures,
        "registration_seconds": reg.secs,
        "scans_sent": run.sent,
        "scans_answered": t.answered,
        "scans_with_full_correct_list": t.correct,
        "scans_checked_address_by_address": t.checked,
        "scans_with_a_wrong_list": t.wrong,
        "most_servers_listed": t.listed,
        "list_pages_received": run.pages,
        "requested_scans_per_sec": a.scans_per_sec,
        "achieved_scans_per_sec": run.achieved_per_sec(),
        "generator_max_scans_per_sec": run.generator_max_per_sec(),
        "latency_us": {"p50": hist.percentile(50.0), "p99": hist.percentile(99.0), "max": hist.max()},
        "master_cpu_seconds": run.master_cpu,
        "master_cpu_us_per_scan": run.master_cpu.map(|c| t.cpu_us_per_scan(c)),
    })
}

/// The human-readable table.
fn print_table(a: &MasterLoadArgs, reg: &Registration, run: &ScanRun, t: &Tally) {
    println!(
        "registered           {} of {} ({} failed) in {:.2} s",
        reg.addrs.len(),
        a.servers,
        reg.failures,
        reg.secs
    );
    println!(
        "scans sent           {} ({:.0}/s requested, {:.0}/s achieved; generator max {:.0}/s)",
        run.sent,
        a.scans_per_sec,
        run.achieved_per_sec(),
        run.generator_max_per_sec()
    );
    println!(
        "scans answered       {} ({} with the full list; at most {} servers listed)",
        t.answered, t.correct, t.listed
    );
    println!(
        "checked in full      {} scans address by address, {} wrong",
        t.checked, t.wrong
    );
    println!("list pages           {}", run.pages);
    println!(
        "latency              p50 {} us, p99 {} us, max {} us",
        t.hist.percentile(50.0),
        t.hist.percentile(99.0),
        t.hist.max()
    );
    if let Some(c) = run.master_cpu {
        println!(
            "master CPU           {c:.3} s ({:.1} us per answered scan)",
            t.cpu_us_per_scan(c)
        );
    }
}
