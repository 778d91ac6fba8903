//! Debian's `nsd` as a real authoritative DNS peer for tests: zone files and config in
//! a private temporary directory, served on 127.0.0.1 at a free high port, stopped
//! (process group killed) on drop.
//!
//! nsd is required, never skipped: install it with `scripts/ci-deps-dns`.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A running nsd.
pub(crate) struct Nsd {
    /// UDP and TCP port on 127.0.0.1.
    pub port: u16,
    /// Scratch directory holding config, zones, pid, log and state files.
    pub dir: PathBuf,
    child: Child,
}

/// Finds a program in PATH or the sbin directories (often missing from PATH for
/// non-root users).
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The path of a program the tests need, or a failure that says how to install it.
pub(crate) fn require(name: &str) -> PathBuf {
    find_program(name).unwrap_or_else(|| {
        panic!(
            "`{name}` (Debian package nsd) is not installed; run scripts/ci-deps-dns \
             to install the DNS peers these tests use"
        )
    })
}

fn scratch_dir() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "lobby-nsd-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create the nsd scratch directory");
    dir
}

/// The shared one: nsd needs its port in its configuration.
pub(crate) use super::common::free_port;

fn config(dir: &Path, port: u16, zones: &[(&str, String)]) -> String {
    let d = dir.display();
    let mut c = format!(
        "server:\n  ip-address: 127.0.0.1\n  port: {port}\n  do-ip6: no\n  username: \"\"\n  \
         chroot: \"\"\n  zonesdir: \"{d}\"\n  database: \"\"\n  zonelistfile: \"{d}/zone.list\"\n  \
         xfrdfile: \"{d}/xfrd.state\"\n  xfrdir: \"{d}\"\n  pidfile: \"{d}/nsd.pid\"\n  \
         logfile: \"{d}/nsd.log\"\n  server-count: 1\n  verbosity: 1\n\
         remote-control:\n  control-enable: no\n"
    );
    for (origin, _) in zones {
        c.push_str(&format!(
            "zone:\n  name: \"{origin}\"\n  zonefile: \"{origin}.zone\"\n"
        ));
    }
    c
}

/// A minimal query (RD clear) for `name`'s SOA.
fn soa_query(id: u16, name: &str) -> Vec<u8> {
    let mut q = Vec::new();
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 6, 0, 1]);
    q
}

/// True when nsd answers the SOA of `origin` authoritatively with NOERROR and data.
fn answers_soa(port: u16, origin: &str) -> bool {
    let Ok(s) = UdpSocket::bind("127.0.0.1:0") else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let q = soa_query(0x4242, origin);
    if s.send_to(&q, ("127.0.0.1", port)).is_err() {
        return false;
    }
    let mut buf = [0u8; 1500];
    match s.recv_from(&mut buf) {
        Ok((n, _)) if n >= 12 => {
            let id = u16::from_be_bytes([buf[0], buf[1]]);
            let qr = buf[2] & 0x80 != 0;
            let aa = buf[2] & 0x04 != 0;
            let rcode = buf[3] & 0x0f;
            let ancount = u16::from_be_bytes([buf[6], buf[7]]);
            id == 0x4242 && qr && aa && rcode == 0 && ancount >= 1
        }
        _ => false,
    }
}

impl Nsd {
    /// Starts nsd serving `zones` (origin without trailing dot, zone file text).
    /// Retries on another port when the chosen one was taken in between.
    pub(crate) fn start(zones: &[(&str, String)]) -> Nsd {
        let nsd = require("nsd");
        let dir = scratch_dir();
        for (origin, text) in zones {
            std::fs::write(dir.join(format!("{origin}.zone")), text).expect("write the zone");
        }
        if let Some(check) = find_program("nsd-checkzone") {
            for (origin, _) in zones {
                let out = Command::new(&check)
                    .arg(origin)
                    .arg(dir.join(format!("{origin}.zone")))
                    .output()
                    .expect("run nsd-checkzone");
                assert!(
                    out.status.success(),
                    "nsd-checkzone {origin}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        let mut last_log = String::new();
        for _attempt in 0..8 {
            let port = free_port();
            let conf = dir.join("nsd.conf");
            std::fs::write(&conf, config(&dir, port, zones)).expect("write nsd.conf");
            let _ = std::fs::remove_file(dir.join("nsd.log"));
            let out = std::fs::File::create(dir.join("nsd.out")).expect("nsd.out");
            let err = out.try_clone().expect("clone nsd.out");
            let mut child = Command::new(&nsd)
                .arg("-d")
                .arg("-c")
                .arg(&conf)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", nsd.display()));
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                if zones.iter().all(|(o, _)| answers_soa(port, o)) {
                    return Nsd { port, dir, child };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // exited: most likely the port was taken meanwhile
                }
                if Instant::now() > deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            stop_group(&mut child);
            last_log = read_log(&dir);
            if !(last_log.contains("bind") || last_log.contains("in use")) {
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        panic!("nsd did not come up serving {zones:?}; its log:\n{last_log}");
    }

    /// nsd's log file and its standard output and error.
    pub(crate) fn log(&self) -> String {
        read_log(&self.dir)
    }

    /// `127.0.0.1:PORT`.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Nsd {
    fn drop(&mut self) {
        stop_group(&mut self.child);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn read_log(dir: &Path) -> String {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    format!("{}{}", read("nsd.log"), read("nsd.out"))
}

/// SIGTERM to the process group this harness created for nsd (nsd's main process
/// takes its server children down), SIGKILL after 5 s, and a final SIGKILL to the
/// group for any straggler.
fn stop_group(child: &mut Child) {
    let pgid = child.id() as libc::pid_t;
    if let Ok(None) = child.try_wait() {
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
}
