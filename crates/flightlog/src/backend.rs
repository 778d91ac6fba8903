//! Which database a URL names (pure, so the configuration can check a URL without
//! the database drivers).

use anyhow::Result;

/// Which database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite:PATH` (created when missing).
    Sqlite,
    /// `postgres://...` or `postgresql://...`.
    Postgres,
}

impl Backend {
    /// The backend of `url`, or an error naming what is accepted.
    pub fn of(url: &str) -> Result<Backend> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            anyhow::bail!("database_url {url:?}: expected sqlite:PATH or postgres://USER@HOST/DB")
        }
    }
}
