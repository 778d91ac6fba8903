//! The master part: [`master::Engine`] served over UDP, with its state file.

use crate::udp_service::{lock, Service, UdpServer};
use anyhow::{bail, Context, Result};
use master::state::{SavedState, STATE_VERSION};
use master::{Engine, Stats, Transmit};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

impl Service for Engine {
    type Out = Vec<Transmit>;
    fn handle(&mut self, d: &[u8], from: SocketAddr, now: Instant, out: &mut Vec<Transmit>) {
        Engine::handle(self, d, from, now, out);
    }
    fn timeout(&mut self, now: Instant) {
        self.handle_timeout(now);
    }
    fn sends(out: &Vec<Transmit>) -> impl Iterator<Item = (&[u8], SocketAddr)> {
        out.iter().map(|t| (t.payload.as_bytes(), t.to))
    }
    fn clear(out: &mut Vec<Transmit>) {
        out.clear();
    }
}

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
    udp: UdpServer,
    state_file: Option<PathBuf>,
    saver: Option<tokio::task::JoinHandle<()>>,
}

impl MasterServer {
    /// Restores the state file, binds, prints the `listening` lines and serves.
    pub fn start(
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
        let udp = UdpServer::start("master", engine.clone(), listen, workers, 0)?;
        lock(&engine).set_local_addrs(udp.addrs.clone());
        let saver = state_file.clone().map(|p| {
            let engine = engine.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(save_interval);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let state = lock(&engine).export(Instant::now());
                    let p2 = p.clone();
                    match tokio::task::spawn_blocking(move || save_state(&p2, &state)).await {
                        Ok(Err(e)) => tracing::error!("{e:#}"),
                        Err(e) => tracing::error!("state saver failed: {e}"),
                        Ok(Ok(())) => {}
                    }
                }
            })
        });
        Ok(MasterServer {
            engine,
            udp,
            state_file,
            saver,
        })
    }

    /// Bound UDP addresses.
    pub fn udp_addrs(&self) -> &[SocketAddr] {
        &self.udp.addrs
    }

    /// The engine, for reloads and readers (HTTP).
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// Applies a reloaded configuration; servers and bans are kept.
    pub fn reconfigure(&self, config: master::Config) {
        lock(&self.engine).reconfigure(config);
    }

    /// Stops serving and saves the state one last time.
    pub fn shutdown(self) -> Result<()> {
        if let Some(s) = self.saver {
            s.abort();
        }
        self.udp.shutdown();
        if let Some(p) = &self.state_file {
            let state = lock(&self.engine).export(Instant::now());
            save_state(p, &state)?;
            tracing::info!(file = %p.display(), servers = state.servers.len(), "state saved");
        }
        Ok(())
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
