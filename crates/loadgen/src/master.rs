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

fn source_ip(i: usize, base: u8) -> IpAddr {
    // 127.<base>.x.y, skipping .0 and .255 host parts.
    let n = i as u32;
    IpAddr::V4(Ipv4Addr::new(
        127,
        base,
        (n / 250) as u8,
        (n % 250 + 1) as u8,
    ))
}

fn hash_addr(a: &SocketAddr) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    a.hash(&mut h);
    h.finish()
}

async fn register_one(target: SocketAddr, ip: IpAddr, info: String) -> Result<SocketAddr> {
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

struct Outstanding {
    sent: Instant,
    last: Option<Instant>,
    servers: usize,
    hash: u64,
}

/// Runs `lobby load master`: registers, scans, prints the table or the JSON object on
/// standard output, and returns the exit status (0 when scans were answered, 1 when
/// none was).
pub async fn run(a: MasterLoadArgs) -> Result<ExitCode> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if a.per_source == 0 || a.clients == 0 || !positive(a.scans_per_sec) || !positive(a.seconds) {
        bail!("--per-source, --clients, --scans-per-sec and --seconds must be positive");
    }
    if !a.target.ip().is_loopback() {
        bail!("--target must be a loopback address: this tool sends from 127.0.0.0/8");
    }
    crate::limits::raise_nofile();
    // 1. Registration, at most 256 handshakes in flight.
    let info = "\\players\\3\\max\\16\\bots\\0\\gamedir\\valve\\map\\crossfire\\type\\d\\password\\1\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0".to_string();
    let reg_start = Instant::now();
    let sem = Arc::new(tokio::sync::Semaphore::new(256));
    let mut tasks = Vec::with_capacity(a.servers);
    for i in 0..a.servers {
        let permit = sem.clone().acquire_owned().await?;
        let ip = source_ip(i / a.per_source, 10);
        let info = info.clone();
        let target = a.target;
        tasks.push(tokio::spawn(async move {
            let r = register_one(target, ip, info).await;
            drop(permit);
            r
        }));
    }
    let mut registered = Vec::with_capacity(a.servers);
    let mut failures = 0;
    for t in tasks {
        match t.await? {
            Ok(addr) => registered.push(addr),
            Err(_) => failures += 1,
        }
    }
    let reg_secs = reg_start.elapsed().as_secs_f64();
    let expect_hash = registered
        .iter()
        .map(hash_addr)
        .fold(0u64, u64::wrapping_add);
    let expect_n = registered.len();
    // Let the last infos land before scanning.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // 2. Scans at a fixed rate from `clients` sockets.
    let outstanding: Arc<Mutex<HashMap<u32, Outstanding>>> = Arc::new(Mutex::new(HashMap::new()));
    let pages = Arc::new(AtomicU64::new(0));
    let mut sockets = Vec::new();
    for c in 0..a.clients {
        let s = Arc::new(UdpSocket::bind(SocketAddr::new(source_ip(c, 20), 0)).await?);
        sockets.push(s);
    }
    let mut receivers = Vec::new();
    for s in &sockets {
        let (s, out, pages) = (s.clone(), outstanding.clone(), pages.clone());
        receivers.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 65536];
            while let Ok((n, _)) = s.recv_from(&mut buf).await {
                let now = Instant::now();
                pages.fetch_add(1, Relaxed);
                let page = &buf[..n];
                // Header, 0x7F key block, records, 6-byte terminator.
                if n < 18 || !page.starts_with(xash::master::SERVER_LIST_HEADER) || page[6] != 0x7f
                {
                    continue;
                }
                let key = u32::from_le_bytes([page[7], page[8], page[9], page[10]]);
                // Every 16th scan is decoded and checked address by address; the others
                // are counted from the page length so the generator keeps up.
                let verify = key.is_multiple_of(16);
                let mut o = crate::lock(&out);
                let Some(st) = o.get_mut(&key) else { continue };
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
        }));
    }
    let cpu0 = a.target_pid.map(procstat::process_cpu_s).transpose()?;
    let total = (a.scans_per_sec * a.seconds).round() as u64;
    let start = Instant::now();
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
            let t = Instant::now();
            crate::lock(&outstanding).insert(
                key,
                Outstanding {
                    sent: t,
                    last: None,
                    servers: 0,
                    hash: 0,
                },
            );
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
    let send_secs = start.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs_f64(a.scan_timeout)).await;
    let cpu1 = a.target_pid.map(procstat::process_cpu_s).transpose()?;
    for r in receivers {
        r.abort();
    }
    // A scan is answered when pages came back for it; its latency runs to the last
    // page; it is correct when the pages list exactly the registered servers.
    let mut hist = Histogram::new();
    let (mut answered, mut correct, mut listed) = (0u64, 0u64, 0usize);
    let (mut checked, mut wrong) = (0u64, 0u64);
    for st in crate::lock(&outstanding).values() {
        if let Some(last) = st.last {
            answered += 1;
            listed = listed.max(st.servers);
            let verified = st.hash != 0 || expect_n == 0;
            if st.servers == expect_n && (!verified || st.hash == expect_hash) {
                correct += 1;
            }
            if verified {
                checked += 1;
                if st.servers != expect_n || st.hash != expect_hash {
                    wrong += 1;
                }
            }
            hist.record(last.saturating_duration_since(st.sent).as_micros() as u64);
        }
    }
    let master_cpu = cpu0.zip(cpu1).map(|(a, b)| b - a);
    let report = serde_json::json!({
        "servers_requested": a.servers,
        "servers_registered": expect_n,
        "registration_failures": failures,
        "registration_seconds": reg_secs,
        "scans_sent": sent,
        "scans_answered": answered,
        "scans_with_full_correct_list": correct,
        "scans_checked_address_by_address": checked,
        "scans_with_a_wrong_list": wrong,
        "most_servers_listed": listed,
        "list_pages_received": pages.load(Relaxed),
        "requested_scans_per_sec": a.scans_per_sec,
        "achieved_scans_per_sec": sent as f64 / send_secs,
        "generator_max_scans_per_sec": if busy.as_secs_f64() > 0.0 { sent as f64 / busy.as_secs_f64() } else { 0.0 },
        "latency_us": {"p50": hist.percentile(50.0), "p99": hist.percentile(99.0), "max": hist.max()},
        "master_cpu_seconds": master_cpu,
        "master_cpu_us_per_scan": master_cpu.map(|c| if answered > 0 { c * 1e6 / answered as f64 } else { 0.0 }),
    });
    if a.json {
        println!("{report}");
    } else {
        println!(
            "registered           {expect_n} of {} ({failures} failed) in {reg_secs:.2} s",
            a.servers
        );
        println!("scans sent           {sent} ({:.0}/s requested, {:.0}/s achieved; generator max {:.0}/s)", a.scans_per_sec, report["achieved_scans_per_sec"].as_f64().unwrap_or(0.0), report["generator_max_scans_per_sec"].as_f64().unwrap_or(0.0));
        println!("scans answered       {answered} ({correct} with the full list; at most {listed} servers listed)");
        println!("checked in full      {checked} scans address by address, {wrong} wrong");
        println!("list pages           {}", pages.load(Relaxed));
        println!(
            "latency              p50 {} us, p99 {} us, max {} us",
            hist.percentile(50.0),
            hist.percentile(99.0),
            hist.max()
        );
        if let Some(c) = master_cpu {
            println!(
                "master CPU           {c:.3} s ({:.1} us per answered scan)",
                if answered > 0 {
                    c * 1e6 / answered as f64
                } else {
                    0.0
                }
            );
        }
    }
    if sent as f64 * 1.0 < a.scans_per_sec * a.seconds * 0.99 {
        eprintln!("warning: the generator sent fewer scans than requested; the figures are limited by the generator");
    }
    Ok(if answered == 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
