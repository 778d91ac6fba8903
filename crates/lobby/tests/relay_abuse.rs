//! `lobby relay` against hostile clients, over real sockets (issue 9, items 2 and 4):
//! one socket announcing many callsigns, one address opening many sockets, model
//! paths carrying newlines, absurd positions, and telnet clients that never read.

mod common;

use common::*;
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use std::io::Read;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

fn relay(extra: &[&str]) -> Lobby {
    start_relay(extra)
}

fn position_with_model(cs: &str, model: &str, at: [f64; 3]) -> Vec<u8> {
    let m = Message::position(Callsign::new(cs).unwrap(), 10, Position::at(model, at));
    to_bytes(&m).unwrap()
}

#[test]
fn one_socket_with_many_callsigns_is_one_pilot_and_gets_one_copy() {
    // Before the fix the spammer's socket held 8 pilots and got 8 copies of each datagram.
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let (spam, victim) = (client(false), client(false));
    for i in 0..8 {
        spam.send_to(&pos(&format!("SPAM{i}"), BIKF, 100), udp)
            .unwrap();
    }
    telnet_until(r.addr("relay", "telnet"), "the replacements", |t| {
        telnet_stat(t, "pilots_replaced") == 7
    });
    let dv = pos("VICTIM", north(BIKF, 2.0), 100);
    send_until_seen(&victim, &dv, udp, &spam, "VICTIM");
    drain(&spam, Duration::from_millis(300));
    for _ in 0..10 {
        victim.send_to(&dv, udp).unwrap();
    }
    let got = drain(&spam, Duration::from_millis(500));
    assert_eq!(
        got.iter().filter(|d| callsign_of(d) == "VICTIM").count(),
        10,
        "one copy per datagram"
    );
    let t = telnet_until(r.addr("relay", "telnet"), "2 pilots", |t| {
        t.contains("# 2 pilot(s) online")
    });
    assert!(t.contains("SPAM7@LOCAL: "), "the last callsign wins: {t}");
    r.stop();
}

#[test]
fn one_address_holds_at_most_the_per_ip_cap_by_default() {
    // Before the fix all 20 sockets of one address became pilots.
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let socks: Vec<UdpSocket> = (0..20).map(|_| client(false)).collect();
    for (i, s) in socks.iter().enumerate() {
        s.send_to(&pos(&format!("P{i:02}"), BIKF, 100), udp)
            .unwrap();
    }
    telnet_until(r.addr("relay", "telnet"), "16 pilots and 4 refusals", |t| {
        telnet_stat(t, "per_ip_limit") == 4 && t.contains("# 16 pilot(s) online")
    });
    // Another address is still welcome.
    let other = client_on("127.0.0.2");
    other.send_to(&pos("OTHER", BIKF, 100), udp).unwrap();
    telnet_until(r.addr("relay", "telnet"), "17 pilots", |t| {
        t.contains("# 17 pilot(s) online")
    });
    r.stop();
}

#[test]
fn the_per_ip_cap_is_configurable() {
    let r = relay(&["--max-pilots-per-ip", "2"]);
    let udp = r.addr("relay", "udp");
    let socks: Vec<UdpSocket> = (0..3).map(|_| client(false)).collect();
    for (i, s) in socks.iter().enumerate() {
        s.send_to(&pos(&format!("P{i}"), BIKF, 100), udp).unwrap();
    }
    telnet_until(r.addr("relay", "telnet"), "2 pilots and 1 refusal", |t| {
        telnet_stat(t, "per_ip_limit") == 1 && t.contains("# 2 pilot(s) online")
    });
    r.stop();
}

#[test]
fn one_ipv4_24_holds_eight_sources_worth_of_pilots() {
    // Issue 20, item 6. Before the fix every address of a /24 had its own share, so
    // a /24 (or an IPv6 /48, with 65,536 /64s) could fill the whole table: all 12
    // addresses below became pilots.
    let r = relay(&["--max-pilots-per-ip", "1"]);
    let udp = r.addr("relay", "udp");
    let socks: Vec<UdpSocket> = (1..=12)
        .map(|h| client_on(&format!("127.0.5.{h}")))
        .collect();
    for (i, s) in socks.iter().enumerate() {
        s.send_to(&pos(&format!("N{i:02}"), BIKF, 100), udp)
            .unwrap();
    }
    telnet_until(r.addr("relay", "telnet"), "8 pilots and 4 refusals", |t| {
        telnet_stat(t, "per_network_limit") == 4 && t.contains("# 8 pilot(s) online")
    });
    // The next /24 is still welcome.
    let other = client_on("127.0.6.1");
    other.send_to(&pos("OTHER", BIKF, 100), udp).unwrap();
    telnet_until(r.addr("relay", "telnet"), "9 pilots", |t| {
        t.contains("# 9 pilot(s) online")
    });
    r.stop();
}

#[test]
fn a_source_that_sent_once_gets_at_most_reply_ratio_times_what_it_sent() {
    // Issue 20, item 2: a spoofed first position (one datagram, never followed)
    // made the relay send its victim every in-range pilot's datagrams until it
    // expired. Now a local pilot is sent at most `reply_ratio` (512) bytes per byte
    // it sent; a real pilot, which keeps sending, gets everything.
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let victim = client_on("127.0.7.1");
    let real = client_on("127.0.8.1");
    let dv = pos("VICTIM", north(BIKF, 1.0), 100);
    let dr = pos("REAL", north(BIKF, 2.0), 100);
    let senders: Vec<(UdpSocket, Vec<u8>)> = (0..20)
        .map(|i| {
            let s = client_on(&format!("127.0.10.{}", 1 + i / 10));
            (
                s,
                pos(&format!("S{i:02}"), north(BIKF, 0.1 * f64::from(i)), 100),
            )
        })
        .collect();
    for (s, d) in &senders {
        s.send_to(d, udp).unwrap();
    }
    send_until_seen(&real, &dr, udp, &senders[0].0, "REAL");
    victim.send_to(&dv, udp).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let count = |s: UdpSocket| {
        std::thread::spawn(move || {
            let mut n = 0usize;
            let mut buf = [0u8; 2048];
            let mut quiet = Instant::now();
            while quiet.elapsed() < Duration::from_millis(800) {
                if let Ok((_, _)) = s.recv_from(&mut buf) {
                    if callsign_of(&buf).starts_with('S') {
                        n += 1;
                    }
                    quiet = Instant::now();
                }
            }
            n
        })
    };
    let (to_victim, to_real) = (count(victim), count(real.try_clone().unwrap()));
    const ROUNDS: usize = 60;
    for _ in 0..ROUNDS {
        for (s, d) in &senders {
            s.send_to(d, udp).unwrap();
        }
        real.send_to(&dr, udp).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    let (got_victim, got_real) = (to_victim.join().unwrap(), to_real.join().unwrap());
    let sent = ROUNDS * senders.len();
    let budget = dv.len() * 512 / senders[0].1.len();
    assert!(
        got_real >= sent * 98 / 100,
        "the real pilot got {got_real} of {sent}"
    );
    assert!(
        got_victim <= budget + 1,
        "the one-shot source got {got_victim} copies, its budget is {budget} of {sent}"
    );
    let t = telnet(r.addr("relay", "telnet"));
    assert!(
        telnet_stat(&t, "copies_withheld") as usize >= sent - budget - 1,
        "{t}"
    );
    r.stop();
}

#[test]
fn a_model_path_cannot_inject_lines_into_the_telnet_list() {
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let evil = client(false);
    let model = "Aircraft/x\nFAKE@LOCAL: 1 2 3 4 5 6 7 8 9 m\r";
    evil.send_to(
        &position_with_model("EVIL", model, ecef(BIKF.0, BIKF.1)),
        udp,
    )
    .unwrap();
    let t = telnet_until(r.addr("relay", "telnet"), "EVIL", |t| t.contains("EVIL@"));
    assert!(!t.lines().any(|l| l.starts_with("FAKE@")), "{t}");
    let line = t.lines().find(|l| l.starts_with("EVIL@LOCAL: ")).unwrap();
    assert!(
        line.ends_with(r"Aircraft/x\x0aFAKE@LOCAL: 1 2 3 4 5 6 7 8 9 m\x0d"),
        "{line}"
    );
    r.stop();
}

#[test]
fn absurd_positions_are_dropped_and_counted() {
    // Before the fix 1e308 was accepted and printed as a 300-digit number.
    let r = relay(&[]);
    let udp = r.addr("relay", "udp");
    let c = client(false);
    c.send_to(
        &position_with_model("HUGE", "Aircraft/x", [1e308, 0.0, 0.0]),
        udp,
    )
    .unwrap();
    let t = telnet_until(r.addr("relay", "telnet"), "the drop", |t| {
        telnet_stat(t, "position_out_of_range") == 1 && t.contains("# 0 pilot(s) online")
    });
    assert!(t.lines().all(|l| l.len() < 400), "{t}");
    r.stop();
}

/// A telnet connection that reads nothing, with a tiny receive window, so the
/// relay cannot finish sending a long list to it.
fn stalled_reader(addr: SocketAddr, from: &str) -> socket2::Socket {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.set_recv_buffer_size(1024).unwrap();
    s.bind(&format!("{from}:0").parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.connect_timeout(&addr.into(), Duration::from_secs(5))
        .unwrap();
    s
}

/// Whether the relay closes this connection without sending anything.
fn closed_unserved(addr: SocketAddr, from: &str) -> bool {
    let s = stalled_reader(addr, from);
    let mut s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    matches!(s.read_to_end(&mut buf), Ok(0))
}

/// The telnet list, read from `from`.
fn telnet_from(addr: SocketAddr, from: &str) -> String {
    let mut s: TcpStream = stalled_reader(addr, from).into();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text
}

#[test]
fn a_telnet_client_that_reads_nothing_is_closed_after_the_write_timeout() {
    // `[relay] telnet_write_timeout` (10 s by default, 2 s here): 400 pilots whose
    // models are 95 control characters (four bytes each on the list: some 190 KB)
    // and a narrow client (2 KiB receive buffer, 536-byte segments: loopback holds
    // some 50 KB of the list) that reads nothing. It holds its address's one place
    // (`telnet_max_per_ip = 1`: another connection from there is closed unserved)
    // until the write gives up; then the next reader from the address gets the
    // list. Without the timeout the place is held for good.
    let path = std::env::temp_dir().join(format!("lobby-telnet-wt-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n\
         telnet_max_per_ip = 1\ntelnet_write_timeout = 2\nmax_pilots_per_ip = 1000\nplayer_expiry = 60\n",
    )
    .unwrap();
    let r = Lobby::start(&["relay", "--config", path.to_str().unwrap()], 2);
    let (udp, tn) = (r.addr("relay", "udp"), r.addr("relay", "telnet"));
    let model = "\u{1}".repeat(95);
    // 18 nm apart, ranges of 10 nm: the relay forwards nothing. All open at once, so
    // each pilot has a socket address of its own.
    let pilots: Vec<UdpSocket> = (0..400).map(|_| client(false)).collect();
    for (i, s) in pilots.iter().enumerate() {
        let at = ecef(-80.0 + i as f64 * 0.3, 10.0);
        s.send_to(&position_with_model(&format!("W{i}"), &model, at), udp)
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let list = loop {
        let t = telnet_from(tn, "127.0.0.2");
        if t.contains("# 400 pilot(s) online") {
            break t;
        }
        assert!(Instant::now() < deadline, "{}", &t[..t.len().min(500)]);
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(list.len() > 150_000, "a list of {} bytes", list.len());
    let mut stalled = narrow_client(tn);
    let began = Instant::now();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        closed_unserved(tn, "127.0.0.1"),
        "a second connection from the address while the first holds its place"
    );
    let mut served = None;
    while served.is_none() && began.elapsed() < Duration::from_secs(10) {
        if telnet_from(tn, "127.0.0.1").contains("# 400 pilot(s) online") {
            served = Some(began.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let served = served.unwrap_or_else(|| {
        panic!(
            "the client that reads nothing still holds its place after {:?}",
            began.elapsed()
        )
    });
    assert!(
        served > Duration::from_millis(1500),
        "freed after {served:?}"
    );
    assert!(
        r.stderr().contains("telnet client too slow: closed"),
        "{}",
        r.stderr()
    );
    // What it was sent before the close: far from the whole list.
    stalled
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    let _ = stalled.read_to_end(&mut got);
    eprintln!(
        "place freed {served:?} after the client stopped reading; it had been sent {} of {} bytes",
        got.len(),
        list.len()
    );
    assert!(got.len() < list.len() / 2, "{} bytes sent", got.len());
    let _ = std::fs::remove_file(&path);
    r.stop();
}

#[test]
fn telnet_connections_are_capped_per_source_and_in_total() {
    // Before the fix every connection was served, however many one source opened.
    let path = std::env::temp_dir().join(format!("lobby-telnet-cap-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[relay]\nlisten = [\"127.0.0.1:0\"]\ntelnet = [\"127.0.0.1:0\"]\n\
         telnet_max_per_ip = 2\ntelnet_max_connections = 3\nplayer_expiry = 60\n",
    )
    .unwrap();
    const N: u32 = 30_000;
    let r = Lobby::start(&["relay", "--config", path.to_str().unwrap()], 2);
    let (udp, tn) = (r.addr("relay", "udp"), r.addr("relay", "telnet"));
    // A list longer (about 6 MB) than the kernel buffers a connection that is never
    // read (up to 4 MB on Linux), so such a reader holds its place: 30,000 pilots,
    // 16 per address (the default cap), long model paths, each out of everyone
    // else's range (so the relay forwards nothing).
    let long_model = format!("Aircraft/{}", "m".repeat(85));
    let mut group = Vec::new(); // one address's sockets, open together so their ports differ
    for i in 0..N {
        // 16 pilots per address, 8 addresses per /24 (the defaults' shares).
        let ip = format!("127.3.{}.{}", i / 16 / 8, (i / 16) % 8 + 1);
        let at = ecef(
            -60.0 + f64::from(i / 120) * 0.48,
            -180.0 + f64::from(i % 120) * 3.0,
        );
        let d = position_with_model(&format!("L{i}"), &long_model, at);
        if i % 16 == 0 {
            group.clear();
        }
        group.push(client_on(&ip));
        group.last().unwrap().send_to(&d, udp).unwrap();
        if i % 1000 == 999 {
            std::thread::sleep(Duration::from_millis(5)); // within the relay's receive buffer
        }
    }
    // UDP may lose a few under load: wait until the count stops moving.
    let count = |t: &str| -> u32 {
        t.lines()
            .find_map(|l| {
                l.strip_prefix("# ")?
                    .strip_suffix(" pilot(s) online")?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    };
    let mut last = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    let n = loop {
        std::thread::sleep(Duration::from_millis(1100));
        let n = count(&telnet(tn));
        if (n == last && n > 0) || Instant::now() > deadline {
            break n;
        }
        last = n;
    };
    assert!(n > N * 9 / 10, "only {n} of {N} pilots arrived");
    let online = format!("# {n} pilot(s) online");
    let held: Vec<_> = (0..2).map(|_| stalled_reader(tn, "127.0.0.1")).collect();
    std::thread::sleep(Duration::from_millis(300));
    assert!(closed_unserved(tn, "127.0.0.1"), "a third from one source");
    let third = stalled_reader(tn, "127.0.0.2");
    std::thread::sleep(Duration::from_millis(300));
    assert!(closed_unserved(tn, "127.0.0.4"), "a fourth in total");
    drop(held);
    drop(third);
    // Places are given back when connections end; both refusals were counted (the
    // list is a snapshot up to a second old, so wait for one taken after them). A
    // poll made before the relay has seen the stalled readers close is refused and
    // counted too (a full local run under load failed on `== 1`), so the counts are at
    // least one each; that the two deliberate connections were refused unserved is
    // asserted above.
    telnet_until(tn, "the refusals", |t| {
        t.contains(&online)
            && telnet_stat(t, "telnet_refused_per_ip") >= 1
            && telnet_stat(t, "telnet_refused_total") >= 1
    });
    let _ = std::fs::remove_file(&path);
    r.stop();
}
