//! Every listener binds IPv4 and IPv6 on the same port number: the IPv6 side of each
//! UDP and TCP listener is IPv6-only (found as issue 9, item 1: `lobby relay` with its
//! default configuration failed with "Address already in use" on Linux). Also the
//! parts with no arguments at all, inside a private network namespace where the
//! default ports are free.

mod common;

use common::*;
use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

/// A port number free for UDP and TCP on 127.0.0.1 and ::1 right now.
fn free_port() -> u16 {
    for _ in 0..50 {
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        let p = u.local_addr().unwrap().port();
        let free = TcpListener::bind(("127.0.0.1", p)).is_ok()
            && UdpSocket::bind(("::1", p)).is_ok()
            && TcpListener::bind(("::1", p)).is_ok();
        if free {
            return p;
        }
    }
    panic!("no free port");
}

#[test]
fn each_part_listens_on_ipv4_and_ipv6_with_one_port_number() {
    let p = free_port().to_string();
    let (v4, v6) = (format!("0.0.0.0:{p}"), format!("[::]:{p}"));
    let q = free_port().to_string();
    let (t4, t6) = (format!("0.0.0.0:{q}"), format!("[::]:{q}"));
    let r = Lobby::start(
        &[
            "relay", "--listen", &v4, "--listen", &v6, "--telnet", &t4, "--telnet", &t6,
        ],
        4,
    );
    assert_eq!(r.addrs("relay", "telnet").len(), 2);
    assert!(r.stop().success());
    let m = Lobby::start(
        &[
            "master", "--listen", &v4, "--listen", &v6, "--http", &t4, "--http", &t6,
        ],
        4,
    );
    assert_eq!(m.addrs("http", "tcp").len(), 2);
    assert!(m.stop().success());
    let d = Lobby::start(
        &[
            "dns",
            "--zone",
            "fg.lobby.test",
            "--listen",
            &v4,
            "--listen",
            &v6,
            "--http",
            "127.0.0.1:0",
        ],
        5,
    );
    assert_eq!(d.addrs("dns", "tcp").len(), 2);
    assert!(d.stop().success());
}

/// Whether this machine lets the test make a network namespace (root or user
/// namespaces) and bring its loopback up (iproute2's `ip`).
fn unshare_works() -> bool {
    std::process::Command::new("unshare")
        .args(["-n", "ip", "link", "set", "lo", "up"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_parts_start_with_their_defaults_in_a_private_network_namespace() {
    if !unshare_works() {
        eprintln!("skipped: unshare -n is not permitted here");
        return;
    }
    // The defaults: relay UDP and telnet on both families; master UDP on both; the
    // directory serves nothing unless told to (no lines), but must start.
    for (part, lines) in [("relay", 4), ("master", 2), ("dns", 0)] {
        // Loopback up, then lobby with no arguments; the namespace and its ports vanish
        // with the process.
        let script = format!(
            "ip link set lo up && exec {} {part}",
            env!("CARGO_BIN_EXE_lobby")
        );
        let l = Lobby::start_cmd("unshare", &["-n", "sh", "-c", &script], lines);
        std::thread::sleep(Duration::from_millis(100));
        let status = l.stop();
        assert!(status.success(), "{part}: {status:?}");
    }
}
