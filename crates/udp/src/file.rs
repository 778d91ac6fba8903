//! [`atomic_write`]: the one way lobby replaces a state file (the master's table, the
//! admin's run-time changes, the tracker link's queue); [`WriterLock`]: one writing
//! process per state file.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// An exclusive lock on a state file's `.NAME.lock` (flock), held while it lives, so
/// a second process on the same file is refused; taking it removes the temporary
/// files a killed writer left (only the lock's holder writes, so they are dead).
#[derive(Debug)]
pub struct WriterLock {
    _file: std::fs::File,
    /// The lock file's path.
    pub path: PathBuf,
    /// Temporary files removed when it was taken.
    pub stale_removed: usize,
}

impl WriterLock {
    /// Takes the lock of `path`; an error of kind `WouldBlock` when another process
    /// holds it.
    pub fn take(path: &Path) -> std::io::Result<WriterLock> {
        let name = path
            .file_name()
            .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?
            .to_string_lossy()
            .into_owned();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let lock_path = dir.join(format!(".{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let prefix = temp_prefix(&name);
        let mut stale_removed = 0;
        for e in std::fs::read_dir(dir)?.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix)
                && std::fs::remove_file(e.path()).is_ok()
            {
                stale_removed += 1;
            }
        }
        Ok(WriterLock {
            _file: file,
            path: lock_path,
            stale_removed,
        })
    }
}

/// Replaces `path` with `bytes` so that a crash at any moment leaves either the old
/// file or the new one: a temporary file of a unique name beside it
/// (`.NAME.tmpXXXXXX`, so concurrent writers never share one), written and fsynced,
/// renamed over `path`, then the directory fsynced so the rename itself is durable.
/// On an error the temporary file is removed and `path` is untouched.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(&name.to_string_lossy()))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

/// The prefix of the temporary files [`atomic_write`] makes for a file `name`
/// (`.NAME.tmp`), so a reader can remove those a crash left behind.
pub fn temp_prefix(name: &str) -> String {
    format!(".{name}.tmp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_at_a_time_and_stale_temporary_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("master.json");
        let stale = dir.path().join(".master.json.tmp999999");
        std::fs::write(&stale, "half a save").unwrap();
        let l = WriterLock::take(&p).unwrap();
        assert_eq!(l.stale_removed, 1);
        assert!(!stale.exists());
        let e = WriterLock::take(&p).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
        drop(l);
        WriterLock::take(&p).expect("free again");
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect()
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        atomic_write(&p, b"old").unwrap();
        // A directory where the file should go: the rename fails.
        let blocked = dir.path().join("sub");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), b"").unwrap();
        assert!(atomic_write(&blocked, b"new").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }

    #[test]
    fn concurrent_writers_never_share_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q");
        let big = vec![b'x'; 1 << 16];
        std::thread::scope(|s| {
            for i in 0..4u8 {
                let (p, mut body) = (&p, big.clone());
                body[0] = i;
                s.spawn(move || {
                    for _ in 0..20 {
                        atomic_write(p, &body).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), big.len());
        assert!(got[1..].iter().all(|&b| b == b'x'));
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_path_without_a_file_name_is_an_error() {
        assert!(atomic_write(Path::new("/"), b"x").is_err());
    }
}
