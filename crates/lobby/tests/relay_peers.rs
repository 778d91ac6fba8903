//! Relay peers and crossfeed targets given by name (issue 9, item 12): a name that
//! does not resolve never stops the relay, is retried with backoff, and a peer that
//! moves to another address is followed. Name resolution is controlled with a
//! private mount namespace whose `/etc/hosts` the test rewrites.

mod common;

use common::*;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lobby-peers-{}-{name}", std::process::id()))
}

/// Sends a local pilot's position every 100 ms until `rx` receives the relay's copy
/// (bounded).
fn reaches(relay: SocketAddr, pilot: &UdpSocket, rx: &UdpSocket, within: Duration) -> bool {
    let d = pos("LOCAL1", BIKF, 100);
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 2048];
    while Instant::now() < deadline {
        pilot.send_to(&d, relay).unwrap();
        if let Ok((n, _)) = rx.recv_from(&mut buf) {
            if n > 4 && &buf[..4] == b"SFGF" && callsign_of(&buf[..n]) == "LOCAL1" {
                return true;
            }
        }
    }
    false
}

fn udp_on(ip: &str) -> UdpSocket {
    let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    s
}

#[test]
fn a_name_that_does_not_resolve_does_not_stop_the_relay() {
    // Before: `lobby: error: cannot resolve "nosuch.invalid:5000"` and exit 1.
    let peer = udp_on("127.0.0.1");
    let peer_addr = peer.local_addr().unwrap().to_string();
    let r = start_relay(&[
        "--relay",
        "nosuch.invalid:5000",
        "--relay",
        &peer_addr,
        "--crossfeed",
        "nosuch-feed.invalid:5100",
    ]);
    // The peer given by IP works at once.
    assert!(reaches(
        r.addr("relay", "udp"),
        &client(false),
        &peer,
        Duration::from_secs(5)
    ));
    let t = telnet_until(r.addr("relay", "telnet"), "resolution failures", |t| {
        telnet_stat(t, "peer_resolve_failures") >= 2
    });
    assert_eq!(telnet_stat(&t, "peer_address_changes"), 0, "{t}");
    let status = r.stop();
    assert!(status.success());
}

#[test]
fn a_malformed_peer_is_still_a_start_up_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lobby"))
        .args(["relay", "--listen", "127.0.0.1:0", "--relay", "mpserver01"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mpserver01") && err.contains("HOST:PORT"),
        "{err}"
    );
}

/// Whether this machine lets the test make a mount namespace and bind-mount a file.
fn mount_namespace_works() -> bool {
    let probe = temp("probe");
    std::fs::write(&probe, "").unwrap();
    let ok = std::process::Command::new("unshare")
        .args([
            "-m",
            "mount",
            "--bind",
            probe.to_str().unwrap(),
            "/etc/hosts",
        ])
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(probe);
    ok
}

#[test]
fn names_are_retried_until_they_resolve_and_followed_when_they_move() {
    if !mount_namespace_works() {
        eprintln!("skipped: unshare -m is not permitted here");
        return;
    }
    let old = udp_on("127.0.0.2");
    let port = old.local_addr().unwrap().port();
    let new = match UdpSocket::bind(("127.0.0.3", port)) {
        Ok(s) => s,
        Err(e) => panic!("127.0.0.3:{port} is taken ({e}); run again"),
    };
    new.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let feed = udp_on("127.0.0.4");
    let feed_port = feed.local_addr().unwrap().port();
    // At start peer.test is 127.0.0.2 and late.test does not exist.
    let hosts = temp("hosts");
    std::fs::write(&hosts, "127.0.0.1 localhost\n127.0.0.2 peer.test\n").unwrap();
    let conf = temp("relay.toml");
    std::fs::write(
        &conf,
        format!(
            "[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n\
             relays = [\"peer.test:{port}\"]\ncrossfeeds = [\"late.test:{feed_port}\"]\n\
             peer_refresh = 1\n"
        ),
    )
    .unwrap();
    let script = format!(
        "mount --bind {} /etc/hosts && exec {} relay --config {}",
        hosts.display(),
        env!("CARGO_BIN_EXE_lobby"),
        conf.display()
    );
    let r = Lobby::start_cmd("unshare", &["-m", "sh", "-c", &script], 2);
    let (udp, pilot) = (r.addr("relay", "udp"), client(false));
    assert!(
        reaches(udp, &pilot, &old, Duration::from_secs(5)),
        "peer.test at .2"
    );
    // late.test appears: the crossfeed starts within the backoff (1, 2, 4 s ...).
    std::fs::write(
        &hosts,
        "127.0.0.1 localhost\n127.0.0.2 peer.test\n127.0.0.4 late.test\n",
    )
    .unwrap();
    assert!(
        reaches(udp, &pilot, &feed, Duration::from_secs(12)),
        "late.test resolved"
    );
    // peer.test moves: followed at the next refresh (1 s).
    std::fs::write(
        &hosts,
        "127.0.0.1 localhost\n127.0.0.3 peer.test\n127.0.0.4 late.test\n",
    )
    .unwrap();
    assert!(
        reaches(udp, &pilot, &new, Duration::from_secs(8)),
        "peer.test moved to .3"
    );
    let t = telnet_until(r.addr("relay", "telnet"), "the changes", |t| {
        telnet_stat(t, "peer_address_changes") >= 3 && telnet_stat(t, "peer_resolve_failures") >= 1
    });
    assert!(t.contains("# This is"), "{t}");
    let stderr = r.stderr();
    assert!(
        stderr.contains("could not resolve") && stderr.contains("late.test"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&hosts);
    let _ = std::fs::remove_file(&conf);
}

#[test]
fn fgms_production_peers_without_dns_still_serve() {
    // fgms's production sample relays to mpserver01 and mpserver14; in a network
    // namespace with no DNS, lobby must start and serve like fgms does.
    let ok = std::process::Command::new("unshare")
        .args(["-n", "ip", "link", "set", "lo", "up"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: unshare -n is not permitted here");
        return;
    }
    let conf = temp("fgms.conf");
    std::fs::write(
        &conf,
        "server.name = mpserver99\nserver.address = 127.0.0.1\nserver.port = 5000\n\
         server.telnet_port = 5001\nserver.is_hub = false\n\
         relay.host = mpserver01.flightgear.org\nrelay.port = 5000\n\
         relay.host = mpserver14.flightgear.org\nrelay.port = 5000\n",
    )
    .unwrap();
    let script = format!(
        "ip link set lo up && exec {} relay --fgms-config {}",
        env!("CARGO_BIN_EXE_lobby"),
        conf.display()
    );
    let r = Lobby::start_cmd("unshare", &["-n", "sh", "-c", &script], 2);
    std::thread::sleep(Duration::from_millis(500));
    let status = r.stop();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_file(&conf);
}
