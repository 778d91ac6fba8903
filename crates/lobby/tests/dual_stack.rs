//! Every listener binds IPv4 and IPv6 on the same port number: the IPv6 side of each
//! UDP and TCP listener is IPv6-only (found as issue 9, item 1: `lobby relay` with its
//! default configuration failed with "Address already in use" on Linux). Also the
//! parts with no arguments at all, inside a private network namespace where the
//! default ports are free.

mod common;

use common::*;
use std::time::Duration;

/// Starts `args(udp_port, tcp_port)` on two free port numbers, trying other numbers
/// when something else took one between the check and the bind (other processes'
/// ephemeral ports: the check cannot hold the port for the server).
fn start_on_free_ports(args: impl Fn(&str, &str) -> Vec<String>, expect: usize) -> Lobby {
    for attempt in 1..=5 {
        let (p, q) = (free_port().to_string(), free_port().to_string());
        let a = args(&p, &q);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        match std::panic::catch_unwind(|| Lobby::start(&refs, expect)) {
            Ok(l) => return l,
            Err(e) => {
                let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
                if !msg.contains("Address already in use") || attempt == 5 {
                    std::panic::resume_unwind(e);
                }
                eprintln!("port {p} or {q} was taken meanwhile; trying others");
            }
        }
    }
    unreachable!()
}

#[test]
fn each_part_listens_on_ipv4_and_ipv6_with_one_port_number() {
    let both = |p: &str| [format!("0.0.0.0:{p}"), format!("[::]:{p}")];
    let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let r = start_on_free_ports(
        |p, q| {
            let ([v4, v6], [t4, t6]) = (both(p), both(q));
            v(&[
                "relay", "--listen", &v4, "--listen", &v6, "--telnet", &t4, "--telnet", &t6,
            ])
        },
        4,
    );
    assert_eq!(r.addrs("relay", "telnet").len(), 2);
    assert!(r.stop().success());
    let m = start_on_free_ports(
        |p, q| {
            let ([v4, v6], [t4, t6]) = (both(p), both(q));
            v(&[
                "master", "--listen", &v4, "--listen", &v6, "--http", &t4, "--http", &t6,
            ])
        },
        4,
    );
    assert_eq!(m.addrs("http", "tcp").len(), 2);
    assert!(m.stop().success());
    let d = start_on_free_ports(
        |p, _| {
            let [v4, v6] = both(p);
            v(&[
                "dns",
                "--zone",
                "fg.lobby.test",
                "--listen",
                &v4,
                "--listen",
                &v6,
                "--http",
                "127.0.0.1:0",
            ])
        },
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
