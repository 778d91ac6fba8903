//! Running the real `lobby` binary in tests: start it on 127.0.0.1 port 0, read its
//! `listening ...` lines, talk to it, stop it.

#![allow(dead_code)]

use fgmp::geo::{to_ecef, Geodetic};
use fgmp::message::{to_bytes, Message, Position};
use fgmp::Callsign;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub(crate) struct Lobby {
    pub child: Child,
    /// (part, proto, addr) for every `listening` line.
    pub listeners: Vec<(String, String, SocketAddr)>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Lobby {
    /// Starts `lobby ARGS...` and waits for `expect` listening lines.
    pub(crate) fn start(args: &[&str], expect: usize) -> Lobby {
        Lobby::start_with_env(args, expect, &[])
    }

    /// [`Lobby::start`] with extra environment variables (e.g. `LOBBY_TEST_PANIC`).
    pub(crate) fn start_with_env(args: &[&str], expect: usize, env: &[(&str, &str)]) -> Lobby {
        Lobby::spawn(env!("CARGO_BIN_EXE_lobby"), args, expect, env)
    }

    /// Starts lobby through another program (e.g. `unshare -n sh -c '... exec lobby'`),
    /// which must end up exec'ing it so signals reach lobby itself.
    pub(crate) fn start_cmd(program: &str, args: &[&str], expect: usize) -> Lobby {
        Lobby::spawn(program, args, expect, &[])
    }

    fn spawn(program: &str, args: &[&str], expect: usize, env: &[(&str, &str)]) -> Lobby {
        let mut child = Command::new(program)
            .args(args)
            .env("RUST_LOG", "debug")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lobby");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let log2 = log.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut line = String::new();
            while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                log2.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut listeners = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        // `expect` counts listeners; the `listening web http` line that follows each
        // HTTP listener names the same address (the page) and is not counted.
        let mut counted = 0;
        while counted < expect {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match rx.recv_timeout(left) {
                Ok(l) => l,
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "lobby {args:?} printed {counted} of {expect} listening lines; stderr:\n{}",
                        log.lock().unwrap()
                    );
                }
            };
            let parts: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(parts.len(), 4, "unexpected stdout line {line:?}");
            assert_eq!(parts[0], "listening");
            if parts[1] != "web" {
                counted += 1;
            }
            listeners.push((
                parts[1].to_string(),
                parts[2].to_string(),
                parts[3].parse().unwrap(),
            ));
        }
        Lobby {
            child,
            listeners,
            stderr: log,
        }
    }

    pub(crate) fn addr(&self, part: &str, proto: &str) -> SocketAddr {
        self.addrs(part, proto)[0]
    }

    pub(crate) fn addrs(&self, part: &str, proto: &str) -> Vec<SocketAddr> {
        let v: Vec<_> = self
            .listeners
            .iter()
            .filter(|(p, q, _)| p == part && q == proto)
            .map(|l| l.2)
            .collect();
        assert!(
            !v.is_empty(),
            "no {part} {proto} listener in {:?}",
            self.listeners
        );
        v
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub(crate) fn signal(&self, sig: i32) {
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    /// Sends SIGTERM and returns the exit status.
    pub(crate) fn stop(self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        self.wait_exit(Duration::from_secs(10))
    }

    /// Waits for the process to end by itself within `within`.
    pub(crate) fn wait_exit(mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "lobby did not stop within {within:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Lobby {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `lobby relay` with UDP and telnet on 127.0.0.1 port 0, plus `extra` flags.
pub(crate) fn start_relay(extra: &[&str]) -> Lobby {
    let mut args = vec![
        "relay",
        "--listen",
        "127.0.0.1:0",
        "--telnet",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    Lobby::start(&args, 2)
}

/// `lobby tracker --config CONFIG` with HTTP on 127.0.0.1 port 0.
pub(crate) fn start_tracker_config(config: &std::path::Path) -> Lobby {
    let config = config.to_str().unwrap();
    Lobby::start(&["tracker", "--config", config, "--http", "127.0.0.1:0"], 2)
}

/// `lobby tracker` listening and serving HTTP on 127.0.0.1 port 0, plus `extra` flags.
pub(crate) fn start_tracker(extra: &[&str]) -> Lobby {
    let mut args = vec![
        "tracker",
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    Lobby::start(&args, 2)
}

/// Reads the telnet pilot list.
pub(crate) fn telnet(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("telnet connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).expect("telnet read");
    text
}

/// The value of `name=` on the telnet list's `# stats:` line (0 when absent: only
/// non-zero counters are printed).
pub(crate) fn telnet_stat(t: &str, name: &str) -> u64 {
    t.lines()
        .find(|l| l.starts_with("# stats:"))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(|v| v.to_string()))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Polls the telnet list until `pred` holds (bounded).
pub(crate) fn telnet_until(addr: SocketAddr, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = telnet(addr);
        if pred(&t) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "telnet never showed {what}:\n{t}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A UDP client socket on loopback.
pub(crate) fn client(v6: bool) -> UdpSocket {
    let s = UdpSocket::bind(if v6 { "[::1]:0" } else { "127.0.0.1:0" }).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s
}

pub(crate) fn client_on(ip: &str) -> UdpSocket {
    let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s
}

pub(crate) fn ecef(lat: f64, lon: f64) -> [f64; 3] {
    to_ecef(Geodetic {
        lat_deg: lat,
        lon_deg: lon,
        alt_m: 1000.0,
    })
}

pub(crate) const BIKF: (f64, f64) = (63.985, -22.605);

pub(crate) fn pos(cs: &str, at: (f64, f64), range_nm: u16) -> Vec<u8> {
    let m = Message::position(
        Callsign::new(cs).unwrap(),
        range_nm,
        Position::at("Aircraft/c172p/Models/c172p.xml", ecef(at.0, at.1)),
    );
    to_bytes(&m).unwrap()
}

pub(crate) fn north(at: (f64, f64), nm: f64) -> (f64, f64) {
    (at.0 + nm / 60.0, at.1)
}

/// Every datagram that arrives on `s` within `window`.
pub(crate) fn drain(s: &UdpSocket, window: Duration) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let deadline = Instant::now() + window;
    let mut buf = [0u8; 2048];
    while Instant::now() < deadline {
        if let Ok((n, _)) = s.recv_from(&mut buf) {
            out.push(buf[..n].to_vec());
        }
    }
    out
}

/// Sends `d` from `s` to `to` until `rx` receives a datagram with callsign `cs`
/// (bounded: relays learn pilots from their first datagram, and UDP may race).
pub(crate) fn send_until_seen(
    s: &UdpSocket,
    d: &[u8],
    to: SocketAddr,
    rx: &UdpSocket,
    cs: &str,
) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 2048];
    loop {
        s.send_to(d, to).unwrap();
        while let Ok((n, _)) = rx.recv_from(&mut buf) {
            if callsign_of(&buf[..n]) == cs {
                return buf[..n].to_vec();
            }
        }
        assert!(Instant::now() < deadline, "{cs} never arrived");
    }
}

pub(crate) fn callsign_of(d: &[u8]) -> String {
    if d.len() < 32 {
        return String::new();
    }
    Callsign::from_wire(d[24..32].try_into().unwrap()).to_string()
}

/// A minimal HTTP/1.1 GET; returns (status code, body).
pub(crate) fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    use std::io::Write;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("http connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("http read");
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The entries of a `/v1/servers/<gamedir>` body as the engine reads them
/// (`serverlist::masterlist`, the engine's own rules): `ip ADDR` or `gs ADDR` each.
pub(crate) fn engine_entries(body: &str) -> Vec<String> {
    serverlist::masterlist::parse_body(body.as_bytes())
        .entries
        .iter()
        .map(|e| format!("{} {}", e.directive.as_str(), e.addr))
        .collect()
}

/// `lobby master` on 127.0.0.1 port 0 (UDP and HTTP) probing its list every second,
/// plus `extra` flags (a config, a state file, sources...).
pub(crate) fn list_master(extra: &[&str]) -> Lobby {
    let mut args = vec![
        "master",
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
        "--probe-interval",
        "1",
    ];
    args.extend_from_slice(extra);
    Lobby::start(&args, 2)
}

/// Registers the Xash3D server socket `s` with `master` by the full handshake
/// (challenge, then `info` carrying it); returns whether the master answered.
pub(crate) fn register_server(s: &UdpSocket, master: SocketAddr, info: &str) -> bool {
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        s.send_to(&[0x71, 0xff, 9, 8, 7, 6], master).unwrap();
        // A listed server's socket also gets the master's name queries (A2S info, from
        // another port): only the master's own answers count here.
        if let Ok((n, from)) = s.recv_from(&mut buf) {
            if from != master {
                continue;
            }
            let c = xash::master::ChallengeReply::decode(&buf[..n]).unwrap();
            assert_eq!(c.echo, Some(0x0607_0809));
            let p = format!("0\n\\protocol\\49\\challenge\\{}{info}", c.master_challenge);
            s.send_to(p.as_bytes(), master).unwrap();
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
    }
}

/// Whether the server closes `s` within `within` (EOF or reset), reading and dropping
/// whatever it sends; `tick` runs between reads (e.g. to trickle bytes).
pub(crate) fn closed_within(
    s: &mut TcpStream,
    within: Duration,
    mut tick: impl FnMut(&mut TcpStream),
) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                tick(s)
            }
            Err(_) => return true,
        }
    }
    false
}

/// A port number free right now for UDP and TCP on the IPv4 wildcard address (so
/// also on 127.0.0.1) and, where this machine has IPv6, on the IPv6 one: for a peer
/// that needs its port in its configuration (nsd, knot), for a port with nothing
/// on it, and for one number on both families. Lobby itself takes port 0 and prints
/// the port it got (`listening ...`): use that wherever it will do. Another process
/// may take the number between this check and its use: callers that start a server
/// on it try another when the bind fails.
pub(crate) fn free_port() -> u16 {
    use std::net::TcpListener;
    let v6 = UdpSocket::bind("[::]:0").is_ok();
    for _ in 0..50 {
        let p = UdpSocket::bind("0.0.0.0:0")
            .and_then(|u| u.local_addr())
            .expect("bind a UDP socket")
            .port();
        let free = TcpListener::bind(("0.0.0.0", p)).is_ok()
            && UdpSocket::bind(("0.0.0.0", p)).is_ok()
            && (!v6
                || (UdpSocket::bind(("::", p)).is_ok() && TcpListener::bind(("::", p)).is_ok()));
        if free {
            return p;
        }
    }
    panic!("no free port in 50 tries");
}

/// Polls `cond` (every 20 ms) until it holds or `within` has passed; whether it
/// held. For waiting on what a running process does, instead of a fixed sleep.
pub(crate) fn poll_until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A TCP connection to `addr` that holds little of what the server sends: a 2 KiB
/// receive buffer and 536-byte segments, so the server's send buffer stays tens of
/// KB (loopback's default grows to megabytes) and a server writing to it while it
/// reads nothing blocks after some 50 KB (44 KB measured on Linux 6).
pub(crate) fn narrow_client(addr: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )
    .unwrap();
    s.set_recv_buffer_size(2048).unwrap();
    s.set_tcp_mss(536).unwrap();
    s.connect_timeout(&addr.into(), Duration::from_secs(5))
        .unwrap();
    s.into()
}

/// A TCP connection to `to` from the local address `from` (every 127.0.0.0/8 address
/// is local, so each is a source of its own), with a 10 s read timeout.
pub(crate) fn tcp_from(from: &str, to: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::new(from.parse().unwrap(), 0).into())
        .unwrap();
    s.connect_timeout(&to.into(), Duration::from_secs(5))
        .unwrap();
    let s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}
