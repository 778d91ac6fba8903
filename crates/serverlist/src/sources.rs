//! Reading a sources directory (`[master] sources`, a checkout of FWGS/server-list's
//! `servers/` or the same layout): every `<gamedir>.toml` in it, at start and on
//! SIGHUP. A file that cannot be read or is not TOML keeps its previous good copy (the
//! error is returned for the log); in a file that is read, a bad entry is skipped and
//! named and the rest of the file is used ([`curated::parse`]); a file removed drops
//! its gamedir; files whose name is not `<gamedir>.toml` are ignored.

use crate::catalog::TooManyServers;
use crate::curated::{self, gamedir_of, CuratedServer, Issue, Severity, MAX_FILE_BYTES};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most `.toml` files read from one directory.
pub const MAX_FILES: usize = 1024;

/// Curated servers by gamedir.
pub type Files = BTreeMap<String, Vec<CuratedServer>>;

/// What a reading found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The servers by gamedir (previous copies kept for files in error).
    pub files: Files,
    /// One line per file refused, naming the file, the line and the key.
    pub errors: Vec<String>,
    /// Entries skipped and warnings, per file read, naming the file, the line and
    /// what is wrong.
    pub issues: Vec<Issue>,
}

impl Loaded {
    /// How many entries were skipped.
    pub fn skipped(&self) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Skipped)
            .count()
    }

    /// How many warnings (entries kept).
    pub fn warnings(&self) -> usize {
        self.issues.len() - self.skipped()
    }
}

/// Reads `dir`; `previous` is what the last reading kept.
pub fn load_dir(dir: &Path, previous: &Files) -> Result<Loaded, SourcesError> {
    let rd = std::fs::read_dir(dir).map_err(|error| SourcesError::Dir {
        dir: dir.to_path_buf(),
        error,
    })?;
    let mut names: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = Loaded::default();
    if names.len() > MAX_FILES {
        out.errors.push(format!(
            "{}: {} .toml files; only the first {MAX_FILES} are read",
            dir.display(),
            names.len()
        ));
        names.truncate(MAX_FILES);
    }
    for name in names {
        let Some(gamedir) = gamedir_of(&name) else {
            out.errors.push(format!(
                "{}: not a game directory name (letters, digits, _ - . only)",
                dir.join(&name).display()
            ));
            continue;
        };
        let path = dir.join(&name);
        let shown = path.display().to_string();
        let parsed = read_capped(&path)
            .map_err(|e| format!("{shown}: {e}"))
            .and_then(|text| curated::parse(&text, &shown).map_err(|e| e.to_string()));
        match parsed {
            Ok(parsed) => {
                out.issues.extend(parsed.issues);
                out.files.insert(gamedir.to_string(), parsed.servers);
            }
            Err(e) => {
                let kept = previous.get(gamedir);
                out.errors.push(match kept {
                    Some(_) => format!("{e} (the previous copy is kept)"),
                    None => e,
                });
                if let Some(k) = kept {
                    out.files.insert(gamedir.to_string(), k.clone());
                }
            }
        }
    }
    Ok(out)
}

fn read_capped(path: &Path) -> Result<String, FileError> {
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() > MAX_FILE_BYTES {
        return Err(FileError::TooLarge);
    }
    String::from_utf8(buf).map_err(|_| FileError::NotUtf8)
}

/// Why the sources were not read at all (the catalog is then unchanged).
#[derive(Debug, thiserror::Error)]
pub enum SourcesError {
    /// The directory cannot be listed.
    #[error("cannot read the sources directory {}: {error}", dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The system's error (in the message, so not a `source`).
        error: std::io::Error,
    },
    /// More servers than the catalog holds.
    #[error(transparent)]
    TooMany(#[from] TooManyServers),
}

/// Why one file was not read (its copy from the last reading is kept).
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("larger than {MAX_FILE_BYTES} bytes")]
    TooLarge,
    #[error("not UTF-8")]
    NotUtf8,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_file_keeps_its_previous_copy() {
        let dir = std::env::temp_dir().join(format!("serverlist-sources-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("valve.toml"),
            "[[server]]\naddress = \"192.0.2.1:27015\"\n",
        )
        .unwrap();
        std::fs::write(dir.join("README.md"), "not a source").unwrap();
        std::fs::write(dir.join("bad name.toml"), "").unwrap();
        let first = load_dir(&dir, &Files::new()).unwrap();
        assert_eq!(first.files["valve"].len(), 1);
        assert_eq!(first.errors.len(), 1, "{:?}", first.errors);
        std::fs::write(
            dir.join("valve.toml"),
            "[[server]]\naddress = \"192.0.2.1:27015\"\nport = \"1\n",
        )
        .unwrap();
        let second = load_dir(&dir, &first.files).unwrap();
        assert_eq!(second.files["valve"], first.files["valve"]);
        let e = second
            .errors
            .iter()
            .find(|e| e.contains("valve.toml"))
            .unwrap();
        assert!(e.contains("valve.toml:3") && e.contains("kept"), "{e}");
        // A bad entry is skipped and named; the rest of its file is read.
        std::fs::write(
            dir.join("valve.toml"),
            "[[server]]\naddress = \"192.0.2.1:27015\"\nport = 1\n[[server]]\naddress = \"192.0.2.2\"\n",
        )
        .unwrap();
        let third = load_dir(&dir, &second.files).unwrap();
        assert_eq!(third.files["valve"], first.files["valve"]);
        assert_eq!((third.skipped(), third.warnings()), (1, 1));
        let shown: Vec<String> = third.issues.iter().map(|i| i.to_string()).collect();
        assert!(
            shown[0].ends_with(
                "valve.toml:3: warning: key `port` is unknown (ignored; the entry is kept)"
            ),
            "{shown:?}"
        );
        assert!(
            shown[1].contains("valve.toml:5: entry skipped: key `address`"),
            "{shown:?}"
        );
        std::fs::remove_file(dir.join("valve.toml")).unwrap();
        assert!(
            load_dir(&dir, &third.files).unwrap().files.is_empty(),
            "removed: gone"
        );
        assert!(load_dir(&dir.join("nope"), &Files::new()).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
