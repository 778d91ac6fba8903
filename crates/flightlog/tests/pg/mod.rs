//! A throwaway PostgreSQL cluster for tests (Debian's `postgresql` package, which
//! `scripts/ci-deps` installs): initdb into a temporary directory, the server on a
//! Unix socket there only (no TCP port), stopped by its pid through `pg_ctl` and
//! removed on drop. Shared by the flightlog and lobby tests (`#[path]`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lobby-pg-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A throwaway PostgreSQL cluster listening only on a Unix socket in its own
/// directory; stopped (by its pid, through pg_ctl) and removed on drop.
pub(crate) struct Pg {
    dir: PathBuf,
    bin: PathBuf,
    url: String,
}

fn pg_bin() -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed: run scripts/ci-deps (Debian package postgresql)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    v.sort();
    v.pop().expect("no initdb under /usr/lib/postgresql/*/bin")
}

/// Runs a PostgreSQL tool, as the `postgres` user when this test runs as root
/// (the server refuses to run as root).
fn pg_run(bin: &Path, tool: &str, args: &[&str]) {
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    };
    let out = c
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pg {
    pub(crate) fn start(tag: &str) -> Pg {
        let dir = tmp(tag);
        let bin = pg_bin();
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let data = dir.join("data");
        let (d, s) = (data.to_str().unwrap(), dir.to_str().unwrap());
        pg_run(
            &bin,
            "initdb",
            &[
                "-D",
                d,
                "-A",
                "trust",
                "-U",
                "lobby",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        let opts = format!("-k {s} -c listen_addresses='' -c fsync=off -c full_page_writes=off");
        let log = dir.join("log");
        pg_run(
            &bin,
            "pg_ctl",
            &[
                "-D",
                d,
                "-l",
                log.to_str().unwrap(),
                "-o",
                &opts,
                "-w",
                "-t",
                "30",
                "start",
            ],
        );
        let url = format!("postgres://lobby@localhost/postgres?host={s}");
        Pg { dir, bin, url }
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        pg_run(
            &self.bin,
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-m", "fast", "-w", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Pg {
    /// The URL to connect to it.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }
}
