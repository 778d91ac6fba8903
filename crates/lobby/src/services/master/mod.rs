//! The master part: [`master::Engine`] served over UDP, with its state file.

pub mod names;

use crate::lifecycle::{lock, Stop, Supervisor};
use crate::services::master::names::{poll_loop, NameBook, Names};
use crate::udp_worker::{self, Replies, Workers};
use anyhow::{bail, Context, Result};
use master::state::{SavedState, STATE_VERSION};
use master::{Engine, Stats};
use std::io::Read;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// 32 random bytes for the challenge key, from the kernel.
pub fn random_secret() -> Result<[u8; 32]> {
    let mut s = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut s))
        .context("cannot read /dev/urandom for the challenge secret")?;
    Ok(s)
}

/// Reads a state file; a missing file is an empty state, a corrupt one an error
/// (starting empty would silently lose the list the file was kept for).
pub fn load_state(path: &Path) -> Result<SavedState> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SavedState::default()),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read state file {}", path.display()))
        }
    };
    let s: SavedState = serde_json::from_str(&text).with_context(|| {
        format!(
            "state file {} is corrupt (move it aside to start with an empty list)",
            path.display()
        )
    })?;
    if s.version != STATE_VERSION {
        bail!(
            "state file {} has version {}, this lobby reads version {STATE_VERSION}",
            path.display(),
            s.version
        );
    }
    Ok(s)
}

fn dir_and_name(path: &Path) -> Result<(PathBuf, String)> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .context("state file path has no file name")?;
    Ok((dir.to_path_buf(), name.to_string_lossy().into_owned()))
}

/// Writes the state atomically ([`udp::atomic_write`]: a temporary file of its own
/// beside it, fsync, rename, fsync of the directory), so even concurrent calls cannot
/// corrupt one another (the master itself saves through one [`StateFile`], one save
/// at a time).
pub fn save_state(path: &Path, state: &SavedState) -> Result<()> {
    let text = serde_json::to_vec(state)?;
    udp::atomic_write(path, &text)
        .map_err(|e| anyhow::anyhow!("cannot save state file {}: {e}", path.display()))
}

/// The state file with its one writer: an exclusive lock (`.NAME.lock`, flock) held for
/// the life of the process, so a second master on the same file is refused; temporary
/// files left by a killed process removed at open; saves one at a time.
pub struct StateFile {
    path: PathBuf,
    _lock: std::fs::File,
    writer: Mutex<()>,
}

impl StateFile {
    /// Locks the state file and removes stale temporary files.
    pub fn open(path: &Path) -> Result<StateFile> {
        let (dir, name) = dir_and_name(path)?;
        let lock_path = dir.join(format!(".{name}.lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open lock file {}", lock_path.display()))?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                bail!(
                    "state file {} is in use by another running lobby (lock {})",
                    path.display(),
                    lock_path.display()
                );
            }
            return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()));
        }
        // Only this process writes the file now: any temporary file is a dead writer's.
        let prefix = udp::file::temp_prefix(&name);
        let mut stale = 0;
        for e in std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read directory {}", dir.display()))?
            .flatten()
        {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                match std::fs::remove_file(e.path()) {
                    Ok(()) => stale += 1,
                    Err(err) => {
                        tracing::warn!(file = %e.path().display(), "cannot remove stale temporary state file: {err}")
                    }
                }
            }
        }
        if stale > 0 {
            tracing::warn!(file = %path.display(), stale, "removed temporary state files left by an interrupted save");
        }
        Ok(StateFile {
            path: path.to_path_buf(),
            _lock: lock,
            writer: Mutex::new(()),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads it (see [`load_state`]).
    pub fn load(&self) -> Result<SavedState> {
        load_state(&self.path)
    }

    /// Exports `engine` and writes the file; one save at a time, each exporting after
    /// the previous one finished, so a newer list is never overwritten by an older one.
    /// Returns how many servers were saved.
    pub fn save(&self, engine: &Mutex<Engine>) -> Result<usize> {
        let _one_writer = lock(&self.writer);
        let state = lock(engine).export(Instant::now());
        save_state(&self.path, &state)?;
        Ok(state.servers.len())
    }
}

/// A running master.
pub struct MasterServer {
    engine: Arc<Mutex<Engine>>,
    udp: Vec<SocketAddr>,
    state_file: Option<Arc<StateFile>>,
    names: Option<Names>,
}

impl MasterServer {
    /// Restores the state file, binds, prints the `listening` lines and serves under
    /// `sup`; with a state file, a saver task writes it every `save_interval` and at once
    /// when the ban list changes.
    pub fn start(
        sup: &Supervisor,
        config: master::Config,
        listen: &[SocketAddr],
        workers: usize,
        state_file: Option<PathBuf>,
        save_interval: Duration,
        name_refresh: Option<Duration>,
    ) -> Result<MasterServer> {
        let now = Instant::now();
        let mut engine = Engine::new(config, Arc::new(Stats::default()), random_secret()?, now);
        let state_file = state_file
            .map(|p| StateFile::open(&p).map(Arc::new))
            .transpose()?;
        let bans_changed = Arc::new(Notify::new());
        if let Some(f) = &state_file {
            let saved = f.load()?;
            let n = engine.import(&saved, now);
            tracing::info!(file = %f.path().display(), servers = n, bans = saved.bans.len(), "state restored");
            let wake = bans_changed.clone();
            engine.on_bans_changed(move || wake.notify_one());
        }
        let engine = Arc::new(Mutex::new(engine));
        let workers = Workers {
            per_addr: workers,
            realtime_priority: 0,
            // Scan requests: the list pages sent for each.
            replies: Replies::new(crate::recorder::MASTER_SCAN_PAGES, |d| {
                d.starts_with(xash::master::ScanRequest::HEADER)
            }),
        };
        let udp = udp_worker::serve(sup, "master", engine.clone(), listen, workers)?;
        lock(&engine).set_local_addrs(udp.clone());
        if let Some(f) = state_file.clone() {
            let task = save_loop(
                f,
                engine.clone(),
                save_interval,
                bans_changed,
                sup.stop().clone(),
            );
            sup.spawn_task("master-saver", task);
        }
        let names = name_refresh.map(|r| {
            let names: Names = Arc::new(Mutex::new(NameBook::new(r)));
            let task = poll_loop(engine.clone(), names.clone(), sup.stop().clone());
            sup.spawn_task("master-names", task);
            names
        });
        Ok(MasterServer {
            engine,
            udp,
            state_file,
            names,
        })
    }

    /// Bound UDP addresses.
    pub fn udp_addrs(&self) -> &[SocketAddr] {
        &self.udp
    }

    /// The engine, for reloads and readers (HTTP).
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// The servers' names, when the master asks for them.
    pub fn names(&self) -> Option<&Names> {
        self.names.as_ref()
    }

    /// Applies a reloaded configuration; servers and bans are kept.
    pub fn reconfigure(&self, config: master::Config) {
        lock(&self.engine).reconfigure(config);
    }

    /// Saves the state one last time. Call once, after the supervisor has stopped the
    /// workers and the saver, so nothing changes the table after it; a save the saver
    /// left running (an abandoned task's blocking write) finishes first.
    pub fn final_save(&self) -> Result<()> {
        if let Some(f) = &self.state_file {
            let n = f.save(&self.engine)?;
            tracing::info!(file = %f.path().display(), servers = n, "state saved");
        }
        Ok(())
    }
}

/// Saves the state every `interval`, and at once when the ban list changed, until the
/// stop signal. A failed save is logged and retried at the next interval (a full disk
/// must not stop the master).
async fn save_loop(
    file: Arc<StateFile>,
    engine: Arc<Mutex<Engine>>,
    interval: Duration,
    bans_changed: Arc<Notify>,
    stop: Stop,
) -> Result<()> {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        let why = tokio::select! {
            _ = tick.tick() => "interval",
            _ = bans_changed.notified() => "bans changed",
            _ = stop.stopped() => return Ok(()),
        };
        crate::lifecycle::injected_panic("master-saver");
        let (f, e) = (file.clone(), engine.clone());
        match tokio::task::spawn_blocking(move || f.save(&e)).await {
            Ok(Err(e)) => tracing::error!("{e:#}"),
            Err(e) => tracing::error!("state saver failed: {e}"),
            Ok(Ok(n)) => tracing::debug!(servers = n, why, "state file written"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_files_are_written_atomically_and_read_back() {
        let dir = std::env::temp_dir().join(format!("lobby-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("master.json");
        assert_eq!(
            load_state(&p).unwrap(),
            SavedState::default(),
            "missing file: empty"
        );
        let s = SavedState {
            version: STATE_VERSION,
            servers: vec![],
            bans: vec!["192.0.2.1/32".parse().unwrap()],
        };
        save_state(&p, &s).unwrap();
        assert_eq!(load_state(&p).unwrap(), s);
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::write(&p, "{not json").unwrap();
        assert!(load_state(&p).unwrap_err().to_string().contains("corrupt"));
    }

    #[test]
    fn concurrent_saves_never_share_a_temporary_file() {
        // Issue 9, item 10. Before, every save of a process wrote `.NAME.tmpPID`: two at
        // once (the saver and the final save) truncated each other's file and one
        // rename failed or renamed the other's half-written bytes.
        let dir = std::env::temp_dir().join(format!("lobby-state-conc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("master.json");
        let s = SavedState {
            version: STATE_VERSION,
            servers: vec![],
            bans: (0..2000u32)
                .map(|i| ipnet::IpNet::from(std::net::IpAddr::from(i.to_be_bytes())))
                .collect(),
        };
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    for _ in 0..25 {
                        save_state(&p, &s).unwrap();
                    }
                });
            }
        });
        assert_eq!(load_state(&p).unwrap(), s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_state_file_has_one_writer_and_stale_temporary_files_are_removed() {
        let dir = std::env::temp_dir().join(format!("lobby-state-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("master.json");
        let stale = dir.join(".master.json.tmp999999");
        std::fs::write(&stale, "half a save").unwrap();
        let f = StateFile::open(&p).unwrap();
        assert!(!stale.exists(), "stale temporary file removed");
        let e = StateFile::open(&p)
            .err()
            .expect("a second writer is refused");
        assert!(e.to_string().contains("in use"), "{e}");
        drop(f);
        let f = StateFile::open(&p).expect("free again");
        let engine = Mutex::new(Engine::new(
            master::Config::default(),
            Arc::new(Stats::default()),
            [1; 32],
            Instant::now(),
        ));
        assert_eq!(f.save(&engine).unwrap(), 0);
        assert_eq!(f.load().unwrap().version, STATE_VERSION);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
