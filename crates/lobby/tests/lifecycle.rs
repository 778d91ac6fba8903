//! The lifecycle of the real binary: a worker that panics is restarted and its part
//! keeps answering on its port; any other part that fails stops the process with its
//! name and exit status 1 (state still saved); SIGTERM ends everything, and the
//! master's final save runs exactly once, after its workers stopped.

mod common;

use common::*;
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn ping() -> Vec<u8> {
    fgmp::message::to_bytes(&fgmp::Message::ping(fgmp::Callsign::new("probe").unwrap())).unwrap()
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-lifecycle-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Polls `pred` on the child's standard error for up to 10 s.
fn wait_log(l: &Lobby, what: &str, pred: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pred(&l.stderr()) {
        assert!(Instant::now() < deadline, "no {what} in:\n{}", l.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_panicking_relay_worker_is_restarted_and_the_port_still_answers() {
    for workers in ["1", "2"] {
        let r = Lobby::start_with_env(
            &[
                "relay",
                "--listen",
                "127.0.0.1:0",
                "--telnet",
                "off",
                "--workers",
                workers,
            ],
            1,
            &[("LOBBY_TEST_PANIC", "relay-udp")],
        );
        let udp = r.addr("relay", "udp");
        let c = client(false);
        // The first datagram hits the injected panic and is lost.
        c.send_to(&ping(), udp).unwrap();
        wait_log(&r, "restart log line", |e| {
            e.contains("worker panicked; restarted on the same socket")
        });
        // The same socket (same source port, so the same SO_REUSEPORT worker) is
        // answered by the restarted worker.
        c.send_to(&ping(), udp).unwrap();
        let got = drain(&c, Duration::from_millis(500));
        assert_eq!(
            got.len(),
            1,
            "one pong after the restart ({workers} workers)"
        );
        assert_eq!(&got[0][8..12], &10u32.to_be_bytes(), "a pong");
        let status = r.stop();
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn worker_restarts_are_counted_in_stats() {
    let m = Lobby::start_with_env(
        &[
            "master",
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--workers",
            "1",
        ],
        2,
        &[("LOBBY_TEST_PANIC", "master-udp")],
    );
    let http = m.addr("http", "tcp");
    let (_, before) = http_get(http, "/stats");
    let v: serde_json::Value = serde_json::from_str(&before).unwrap();
    assert_eq!(v["worker_restarts"], serde_json::json!({}), "{before}");
    let c = client(false);
    c.send_to(b"\xff\xff\xff\xffinfo 49", m.addr("master", "udp"))
        .unwrap();
    wait_log(&m, "restart log line", |e| e.contains("worker panicked"));
    let (_, after) = http_get(http, "/stats");
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["worker_restarts"]["master-udp"], 1, "{after}");
    assert!(m.stop().success());
}

#[test]
fn a_failing_task_stops_the_process_naming_the_part() {
    let r = Lobby::start_with_env(
        &[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--telnet",
            "127.0.0.1:0",
        ],
        2,
        &[("LOBBY_TEST_PANIC", "relay-telnet")],
    );
    let telnet = r.addr("relay", "telnet");
    let _conn = TcpStream::connect(telnet).unwrap();
    let log = {
        let l = &r;
        wait_log(l, "failure line", |e| {
            e.contains("part relay-telnet failed")
        });
        l.stderr()
    };
    let status = r.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("injected panic in relay-telnet"), "{log}");
}

#[test]
fn the_master_saves_once_at_stop_and_still_saves_when_a_part_fails() {
    let dir = tmpdir("save");
    let state = dir.join("master.json");
    let cfg = dir.join("master.toml");
    std::fs::write(
        &cfg,
        "[master]\nlisten = [\"127.0.0.1:0\"]\nsave_interval = 0.2\n",
    )
    .unwrap();
    let args = [
        "master",
        "--config",
        cfg.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    // SIGTERM: periodic saves stop, then exactly one final save.
    let m = Lobby::start(&args, 1);
    std::thread::sleep(Duration::from_millis(500));
    let log = {
        m.signal(libc::SIGTERM);
        wait_log(&m, "final save", |e| e.contains("state saved"));
        m.stderr()
    };
    assert!(m.wait_exit(Duration::from_secs(10)).success());
    assert_eq!(log.matches("state saved").count(), 1, "{log}");
    assert!(state.exists());
    std::fs::remove_file(&state).unwrap();
    // The saver fails: the process stops with exit status 1 naming it, and the final
    // save still runs once.
    let m = Lobby::start_with_env(&args, 1, &[("LOBBY_TEST_PANIC", "master-saver")]);
    wait_log(&m, "failure line", |e| {
        e.contains("part master-saver failed")
    });
    wait_log(&m, "final save", |e| e.contains("state saved"));
    let log = m.stderr();
    assert_eq!(
        m.wait_exit(Duration::from_secs(10)).code(),
        Some(1),
        "{log}"
    );
    assert_eq!(log.matches("state saved").count(), 1, "{log}");
    assert!(state.exists(), "saved despite the failure");
}

#[test]
fn up_stops_every_part_promptly_on_sigterm() {
    let cfg = tmpdir("up").join("up.toml");
    std::fs::write(
        &cfg,
        concat!(
            "[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n",
            "[master]\nlisten = [\"127.0.0.1:0\"]\n",
            "[dns]\nlisten = [\"127.0.0.1:0\"]\nzone = \"fg.lobby.test\"\n",
            "[http]\nlisten = [\"127.0.0.1:0\"]\n",
            "[sim]\ncount = 2\n",
        ),
    )
    .unwrap();
    let up = Lobby::start(&["up", "--config", cfg.to_str().unwrap()], 8);
    std::thread::sleep(Duration::from_millis(300));
    up.signal(libc::SIGTERM);
    wait_log(&up, "stop", |e| e.contains("stopping"));
    let log = up.stderr();
    let status = up.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{log}");
    // Every task ended by itself: none was abandoned after the grace period.
    assert!(!log.contains("abandoned"), "{log}");
}
