//! `GET /metrics` with the real Prometheus tools: `lobby up` (relay, master, DNS,
//! HTTP on 127.0.0.1 port 0) gets traffic of every kind, then
//! - `promtool check metrics` passes on the exposition, lint included;
//! - every counter of `/stats` is in it under its documented series, with the same
//!   value, and the histograms hold the events sent (fan-out, scan pages, probes);
//! - Debian's `prometheus` scrapes it, and the values read back through
//!   Prometheus's HTTP query API are the ones sent.
//!
//! Needs `promtool` and `prometheus` on PATH (`scripts/ci-deps` installs them).

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use telemetry::{Series, Table};

fn tmpdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-metrics-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// relay udp, master udp, dns udp + tcp, http.
fn start(dir: &std::path::Path) -> Lobby {
    let cfg = dir.join("up.toml");
    std::fs::write(
        &cfg,
        format!("[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = []\n[master]\nlisten = [\"127.0.0.1:0\"]\n\
         [dns]\nlisten = [\"127.0.0.1:0\"]\nzone = \"fg.lobby.test\"\n\
         [directory]\nprobe_interval = 1\ninclude_local_relay = true\n\
         [sim]\ncount = 0\n[http]\nlisten = [\"127.0.0.1:0\"]\n\
         [tracker]\nlisten = [\"127.0.0.1:0\"]\n[history]\ndatabase_url = \"sqlite:{}\"\n",
            dir.join("history.sqlite").display()
        ),
    )
    .unwrap();
    Lobby::start(&["up", "--config", cfg.to_str().unwrap()], 6)
}

/// `name{labels}` → value, from a text exposition.
fn parse(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            (
                k.to_string(),
                v.parse().unwrap_or_else(|_| panic!("bad value {l:?}")),
            )
        })
        .collect()
}

fn key(s: Series) -> String {
    match s.label {
        Some((k, v)) => format!("{}{{{k}=\"{v}\"}}", s.family.name),
        None => s.family.name.to_string(),
    }
}

fn scrape(http: SocketAddr) -> (String, HashMap<String, f64>) {
    let (code, body) = http_get(http, "/metrics");
    assert_eq!(code, 200, "{body}");
    let m = parse(&body);
    (body, m)
}

/// Waits until `pred` holds on a scrape.
fn scrape_until(http: SocketAddr, what: &str, pred: impl Fn(&HashMap<String, f64>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (body, m) = scrape(http);
        if pred(&m) {
            return;
        }
        assert!(Instant::now() < deadline, "never {what}:\n{body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A scan request for valve servers, as the engine sends it.
const SCAN: &[u8] = b"1\xff0.0.0.0:0\0\\gamedir\\valve\0";

/// Traffic of every kind: two pilots that see each other, one datagram with a bad
/// magic, one scan. Returns once the relay has forwarded between the pilots.
fn traffic(relay: SocketAddr, master: SocketAddr) -> (UdpSocket, UdpSocket) {
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), relay).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), relay, &a, "BRAVO");
    let mut junk = pos("JUNK", BIKF, 100);
    junk[..4].copy_from_slice(b"XXXX");
    a.send_to(&junk, relay).unwrap();
    let scanner = UdpSocket::bind("127.0.0.1:0").unwrap();
    scanner
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    scanner.send_to(SCAN, master).unwrap();
    let mut buf = [0u8; 2048];
    scanner
        .recv_from(&mut buf)
        .expect("the master answers a scan");
    (a, b)
}

#[test]
fn the_exposition_passes_promtool_and_carries_every_stats_counter() {
    let dir = tmpdir("promtool");
    let up = start(&dir);
    let http = up.addr("http", "tcp");
    let _pilots = traffic(up.addr("relay", "udp"), up.addr("master", "udp"));
    // The scan's pages, the drop and a probe are in once they are counted.
    scrape_until(http, "the events counted", |m| {
        m.get("lobby_relay_datagrams_dropped_total{reason=\"bad_magic\"}") == Some(&1.0)
            && m.get("lobby_master_scan_reply_pages_count") == Some(&1.0)
            && m.get("lobby_dns_probe_rtt_seconds_count")
                .is_some_and(|&n| n >= 1.0)
    });
    let (text, m) = scrape(http);

    // promtool: the format and Prometheus's naming lint.
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; scripts/ci-deps installs it)");
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Every /stats counter, under its series, with the same value (the traffic has
    // stopped; HTTP counters move with each request and are checked for presence).
    let (_, stats) = http_get(http, "/stats");
    let stats: Value = serde_json::from_str(&stats).unwrap();
    let (_, m2) = scrape(http);
    let parts: [(&str, &Table); 6] = [
        ("relay", relay::Stats::TABLE),
        ("master", master::Stats::TABLE),
        ("dns", directory::stats::Stats::TABLE),
        ("http", lobby::http::conn::HttpStats::TABLE),
        ("history", lobby::services::history::HistoryStats::TABLE),
        (
            "tracker",
            lobby::services::tracker::server::TrackerStats::TABLE,
        ),
    ];
    let mut checked = 0;
    for (part, table) in parts {
        let obj = stats[part]
            .as_object()
            .unwrap_or_else(|| panic!("no {part} in /stats"));
        assert_eq!(
            obj.len(),
            table.counters.len(),
            "/stats {part}: every counter"
        );
        for (k, v) in obj {
            let def = table
                .counters
                .iter()
                .find(|d| d.key == k)
                .unwrap_or_else(|| panic!("/stats {part}.{k}: not declared"));
            let name = key(def.series());
            let got = m2
                .get(&name)
                .unwrap_or_else(|| panic!("/stats {part}.{k}: no {name}"));
            if part != "http" && part != "history" {
                assert_eq!(*got, v.as_u64().unwrap() as f64, "{part}.{k} as {name}");
            }
            checked += 1;
        }
    }
    assert!(checked > 80, "only {checked} counters");

    // Gauges and histograms hold what happened.
    assert_eq!(m["lobby_relay_pilots{origin=\"local\"}"], 2.0);
    assert_eq!(m["lobby_dns_relays{state=\"up\"}"], 1.0);
    assert_eq!(m["lobby_build_info{version=\"0.1.0\"}"], 1.0);
    // The scan got one page (no valve server is listed): le="1" holds it, le="0" not.
    assert_eq!(m["lobby_master_scan_reply_pages_bucket{le=\"0\"}"], 0.0);
    assert_eq!(m["lobby_master_scan_reply_pages_bucket{le=\"1\"}"], 1.0);
    // Both pilots' datagrams went to the other one: some datagram had one copy, and
    // the bad one none.
    assert!(m["lobby_relay_fanout_datagrams_count"] >= 3.0);
    assert!(m["lobby_relay_fanout_datagrams_bucket{le=\"0\"}"] >= 1.0);
    assert!(
        m["lobby_relay_fanout_datagrams_bucket{le=\"1\"}"]
            > m["lobby_relay_fanout_datagrams_bucket{le=\"0\"}"]
    );
    assert!(
        m.keys()
            .any(|k| k.starts_with("lobby_http_request_duration_seconds_count{code=\"200\"}")),
        "{text}"
    );
    up.stop();
}

/// Debian's prometheus on 127.0.0.1 port 0, scraping `target` every second; stopped
/// by its pid on drop.
struct Prometheus {
    child: Child,
    api: SocketAddr,
}

impl Prometheus {
    fn start(dir: &std::path::Path, target: SocketAddr) -> Prometheus {
        let cfg = dir.join("prometheus.yml");
        std::fs::write(
            &cfg,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: lobby\n    static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        )
        .unwrap();
        let log = dir.join("prometheus.log");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg("--web.listen-address=127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("prometheus (Debian's prometheus package; scripts/ci-deps installs it)");
        let mut p = Prometheus {
            child,
            api: "0.0.0.0:0".parse().unwrap(),
        };
        // It logs the address it bound: `msg="Listening on" address=127.0.0.1:PORT`.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let found = text
                .lines()
                .filter(|l| l.contains("Listening on"))
                .find_map(|l| {
                    l.split("address=")
                        .nth(1)?
                        .split_whitespace()
                        .next()?
                        .parse()
                        .ok()
                });
            if let Some(a) = found {
                p.api = a;
                // Listening comes before ready: until its storage is up, queries
                // answer 503 (a CI run on a loaded machine met it).
                if http_get(a, "/-/ready").0 == 200 {
                    return p;
                }
            }
            if let Ok(Some(st)) = p.child.try_wait() {
                panic!("prometheus exited ({st}):\n{text}");
            }
            assert!(
                Instant::now() < deadline,
                "prometheus never listened:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The value of an instant query's single result, if there is one.
    fn query(&self, q: &str) -> Option<f64> {
        let enc: String = q
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (code, body) = http_get(self.api, &format!("/api/v1/query?query={enc}"));
        assert_eq!(code, 200, "{q}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{body}");
        let r = v["data"]["result"].as_array()?;
        let [one] = r.as_slice() else { return None };
        one["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn prometheus_scrapes_lobby_and_reads_the_values_back() {
    let dir = tmpdir("scrape");
    let up = start(&dir);
    let http = up.addr("http", "tcp");
    let _pilots = traffic(up.addr("relay", "udp"), up.addr("master", "udp"));
    let prom = Prometheus::start(&dir, http);
    let want = [
        ("up{job=\"lobby\"}", 1.0),
        (
            "lobby_relay_datagrams_dropped_total{reason=\"bad_magic\"}",
            1.0,
        ),
        ("lobby_relay_pilots{origin=\"local\"}", 2.0),
        ("lobby_master_scans_total", 1.0),
        ("lobby_master_scan_reply_pages_count", 1.0),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    for (q, v) in want {
        loop {
            let got = prom.query(q);
            if got == Some(v) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "prometheus reads {q} as {got:?}, not {v}; lobby serves:\n{}",
                http_get(http, "/metrics").1
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    drop(prom);
    up.stop();
}

#[test]
fn a_relay_alone_serves_its_metrics_with_http_and_none_without() {
    let r = Lobby::start(
        &[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "off",
            "--http",
            "127.0.0.1:0",
        ],
        2,
    );
    let http = r.addr("http", "tcp");
    let relay = r.addr("relay", "udp");
    let (a, b) = (client(false), client(false));
    a.send_to(&pos("ALPHA", BIKF, 100), relay).unwrap();
    send_until_seen(&b, &pos("BRAVO", BIKF, 100), relay, &a, "BRAVO");
    scrape_until(http, "both pilots counted", |m| {
        m.get("lobby_relay_pilots{origin=\"local\"}") == Some(&2.0)
            && m.get("lobby_relay_fanout_datagrams_count")
                .is_some_and(|&n| n >= 2.0)
    });
    let (text, _) = scrape(http);
    assert!(
        !text.contains("lobby_master_"),
        "no master runs here:\n{text}"
    );
    assert_eq!(http_get(http, "/api/pilots").0, 200);
    r.stop();
    // Without --http nothing listens on TCP but the telnet list.
    let r = Lobby::start(
        &[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "127.0.0.1:0",
        ],
        2,
    );
    assert!(
        r.listeners.iter().all(|(p, _, _)| p == "relay"),
        "{:?}",
        r.listeners
    );
    r.stop();
}

#[test]
fn a_gamedir_with_no_server_left_leaves_the_exposition() {
    // Issue 20, item 9: per-gamedir series never expired, so every gamedir a
    // stranger ever registered stayed in /metrics with its last count.
    let dir = tmpdir("gamedir-idle");
    let cfg = dir.join("m.toml");
    std::fs::write(
        &cfg,
        "[master]\nlisten = [\"127.0.0.1:0\"]\nserver_ttl = 3\n\
         [http]\nlisten = [\"127.0.0.1:0\"]\nmetrics_idle = 1\n",
    )
    .unwrap();
    let m = Lobby::start(&["master", "--config", cfg.to_str().unwrap()], 2);
    let (master, http) = (m.addr("master", "udp"), m.addr("http", "tcp"));
    let s = client(false);
    let info =
        "\\players\\0\\max\\8\\gamedir\\doomed\\map\\c1a0\\type\\d\\os\\l\\version\\0.21\\nat\\0";
    assert!(register_server(&s, master, info));
    let series = "lobby_master_servers{gamedir=\"doomed\"}";
    scrape_until(http, "the doomed gamedir", |m| m.get(series) == Some(&1.0));
    // The server expires after its 3 s; a second later its series is gone.
    scrape_until(http, "the series gone", |m| !m.contains_key(series));
}
