//! The master part: [`master::Engine`] served over UDP, with its state file.

pub mod list;

use crate::udp_worker::{self, Replies, Workers};
use anyhow::{Context, Result};
use lifecycle::{lock, Stop, Supervisor};
use master::state::SavedState;
use master::{Engine, Stats};
use rand::RngCore;
use serverlist::names::{poll_loop, NameBook, Names};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// 32 random bytes for the challenge key, from the kernel.
pub fn random_secret() -> Result<[u8; 32]> {
    let mut s = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut s)
        .context("cannot read the kernel's random bytes for the challenge secret")?;
    Ok(s)
}

/// Reads a state file ([`SavedState::read`]); a missing file is an empty state,
/// a corrupt one an error. A server list's `state.json` (probe.py's) is read as the
/// list's state, and the file is saved in the master's format from then on.
pub fn load_state(path: &Path) -> Result<SavedState> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let (s, origin) = SavedState::read(&text)
                .map_err(|e| anyhow::anyhow!("state file {} {e}", path.display()))?;
            if origin == master::state::StateOrigin::ListState {
                tracing::warn!(file = %path.display(), "state file is a server list state.json (probe.py's): its last-seen times are imported; it is saved in the master's format from now on (`lobby master export` writes probe.py's form)");
            }
            Ok(s)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SavedState::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read state file {}", path.display())),
    }
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
    _lock: udp::file::WriterLock,
    writer: Mutex<()>,
}

impl StateFile {
    /// Locks the state file ([`udp::file::WriterLock`]: a second lobby on it is
    /// refused) and removes stale temporary files.
    pub fn open(path: &Path) -> Result<StateFile> {
        let lock = udp::file::WriterLock::take(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => anyhow::anyhow!(
                "state file {} is in use by another running lobby",
                path.display()
            ),
            _ => anyhow::anyhow!("cannot lock state file {}: {e}", path.display()),
        })?;
        if lock.stale_removed > 0 {
            tracing::warn!(file = %path.display(), stale = lock.stale_removed, "removed temporary state files left by an interrupted save");
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

    /// Exports `engine` (and the server list's state) and writes the file; one save
    /// at a time, each exporting after the previous one finished, so a newer list is
    /// never overwritten by an older one. Returns how many servers were saved.
    pub fn save(&self, engine: &Mutex<Engine>, list: Option<&list::List>) -> Result<usize> {
        let _one_writer = lock(&self.writer);
        let mut state = lock(engine).export(Instant::now());
        if let Some(l) = list {
            state.list = Some(list::state(l));
            state.registrations = serde_json::to_value(&*lock(&l.registrations)).ok();
        }
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
    list: list::List,
}

impl MasterServer {
    /// Restores the state file, binds, prints the `listening` lines and serves under
    /// `sup`; with a state file, a saver task writes it every `save_interval` and at once
    /// when the ban list changes. The server list (`list`) reads its sources and
    /// probes beside it.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        sup: &Supervisor,
        config: master::Config,
        listen: &[SocketAddr],
        workers: usize,
        state_file: Option<PathBuf>,
        save_interval: Duration,
        name_refresh: Option<Duration>,
        list: serverlist::driver::Options,
    ) -> Result<MasterServer> {
        let now = Instant::now();
        let mut engine = Engine::new(config, Arc::new(Stats::default()), random_secret()?, now);
        let state_file = state_file
            .map(|p| StateFile::open(&p).map(Arc::new))
            .transpose()?;
        let bans_changed = Arc::new(Notify::new());
        let mut saved_list = (None, None);
        if let Some(f) = &state_file {
            let mut saved = f.load()?;
            saved_list = (saved.list.take(), saved.registrations.take());
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
        let list = list::start(sup, list, engine.clone(), saved_list)?;
        if let Some(f) = state_file.clone() {
            let task = save_loop(
                f,
                engine.clone(),
                list.clone(),
                save_interval,
                bans_changed,
                sup.stop().clone(),
            );
            sup.spawn_task("master-saver", task);
        }
        let names = name_refresh.map(|r| {
            let names: Names = Arc::new(Mutex::new(NameBook::new(r)));
            let (engine, book, stop) = (engine.clone(), names.clone(), sup.stop().clone());
            sup.spawn_task("master-names", async move {
                poll_loop(engine, book, stop.stopped()).await;
                Ok(())
            });
            names
        });
        Ok(MasterServer {
            engine,
            udp,
            state_file,
            names,
            list,
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

    /// The HTTP-era server list.
    pub fn list(&self) -> &list::List {
        &self.list
    }

    /// Applies a reloaded configuration; servers and bans are kept, the list's
    /// sources are read again.
    pub fn reconfigure(&self, config: master::Config, list: serverlist::driver::Options) {
        lock(&self.engine).reconfigure(config);
        self.list.reload(list);
    }

    /// Saves the state one last time. Call once, after the supervisor has stopped the
    /// workers and the saver, so nothing changes the table after it; a save the saver
    /// left running (an abandoned task's blocking write) finishes first.
    pub fn final_save(&self) -> Result<()> {
        if let Some(f) = &self.state_file {
            let n = f.save(&self.engine, Some(&self.list))?;
            tracing::info!(file = %f.path().display(), servers = n, "state saved");
        }
        Ok(())
    }
}

/// Saves the state every `interval`, and when bans or registrations change (at most once a second),
/// until stopped; a failed save is logged and retried (a full disk must not stop the master).
async fn save_loop(
    file: Arc<StateFile>,
    engine: Arc<Mutex<Engine>>,
    list: list::List,
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
            _ = list.registrations_changed.notified() => "registrations changed",
            _ = stop.stopped() => return Ok(()),
        };
        lifecycle::injected_panic("master-saver");
        let (f, e, l) = (file.clone(), engine.clone(), list.clone());
        match tokio::task::spawn_blocking(move || f.save(&e, Some(&l))).await {
            Ok(Err(e)) => tracing::error!("{e:#}"),
            Err(e) => tracing::error!("state saver failed: {e}"),
            Ok(Ok(n)) => tracing::debug!(servers = n, why, "state file written"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use master::state::STATE_VERSION;

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
            list: Some(serde_json::json!({"samples": {}})),
            registrations: None,
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
    fn the_state_file_has_one_writer_and_keeps_the_list() {
        let dir = std::env::temp_dir().join(format!("lobby-state-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("master.json");
        let f = StateFile::open(&p).unwrap();
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
        assert_eq!(f.save(&engine, None).unwrap(), 0);
        assert_eq!(f.load().unwrap().version, STATE_VERSION);
        assert_eq!(f.load().unwrap().list, None);
        let list = Arc::new(serverlist::driver::Shared::default());
        f.save(&engine, Some(&list)).unwrap();
        assert_eq!(
            f.load().unwrap().list,
            Some(serde_json::json!({"samples": {}}))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
