//! The master part: [`master::Engine`] served over UDP, with its state file.

use crate::lifecycle::{lock, Stop, Supervisor};
use crate::udp_worker::{self, Workers};
use anyhow::{bail, Context, Result};
use master::state::{SavedState, STATE_VERSION};
use master::{Engine, Stats};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Writes the state atomically: a temporary file in the same directory, fsync, rename.
pub fn save_state(path: &Path, state: &SavedState) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .context("state file path has no file name")?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let text = serde_json::to_vec(state)?;
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot save state file {}: {e}", path.display())
    })
}

/// A running master.
pub struct MasterServer {
    engine: Arc<Mutex<Engine>>,
    udp: Vec<SocketAddr>,
    state_file: Option<PathBuf>,
}

impl MasterServer {
    /// Restores the state file, binds, prints the `listening` lines and serves under
    /// `sup`; with a state file, a saver task writes it every `save_interval`.
    pub fn start(
        sup: &Supervisor,
        config: master::Config,
        listen: &[SocketAddr],
        workers: usize,
        state_file: Option<PathBuf>,
        save_interval: Duration,
    ) -> Result<MasterServer> {
        let now = Instant::now();
        let mut engine = Engine::new(config, Arc::new(Stats::default()), random_secret()?, now);
        if let Some(p) = &state_file {
            let saved = load_state(p)?;
            let n = engine.import(&saved, now);
            tracing::info!(file = %p.display(), servers = n, bans = saved.bans.len(), "state restored");
        }
        let engine = Arc::new(Mutex::new(engine));
        let workers = Workers {
            per_addr: workers,
            realtime_priority: 0,
        };
        let udp = udp_worker::serve(sup, "master", engine.clone(), listen, workers)?;
        lock(&engine).set_local_addrs(udp.clone());
        if let Some(p) = state_file.clone() {
            let task = save_loop(p, engine.clone(), save_interval, sup.stop().clone());
            sup.spawn_task("master-saver", task);
        }
        Ok(MasterServer {
            engine,
            udp,
            state_file,
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

    /// Applies a reloaded configuration; servers and bans are kept.
    pub fn reconfigure(&self, config: master::Config) {
        lock(&self.engine).reconfigure(config);
    }

    /// Saves the state one last time. Call once, after the supervisor has stopped the
    /// workers and the saver, so nothing changes the table or writes the file after it.
    pub fn final_save(&self) -> Result<()> {
        if let Some(p) = &self.state_file {
            let state = lock(&self.engine).export(Instant::now());
            save_state(p, &state)?;
            tracing::info!(file = %p.display(), servers = state.servers.len(), "state saved");
        }
        Ok(())
    }
}

/// Saves the state every `interval` until the stop signal. A failed save is logged
/// and retried at the next interval (a full disk must not stop the master).
async fn save_loop(
    path: PathBuf,
    engine: Arc<Mutex<Engine>>,
    interval: Duration,
    stop: Stop,
) -> Result<()> {
    let mut tick = tokio::time::interval(interval);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.stopped() => return Ok(()),
        }
        crate::lifecycle::injected_panic("master-saver");
        let state = lock(&engine).export(Instant::now());
        let p = path.clone();
        match tokio::task::spawn_blocking(move || save_state(&p, &state)).await {
            Ok(Err(e)) => tracing::error!("{e:#}"),
            Err(e) => tracing::error!("state saver failed: {e}"),
            Ok(Ok(())) => {}
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
            bans: vec!["192.0.2.1".parse().unwrap()],
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
}
