//! Which database a URL names (pure, so the configuration can check a URL without
//! the database drivers).

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
    pub fn of(url: &str) -> Result<Backend, UnknownBackend> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            Err(UnknownBackend(url.to_string()))
        }
    }
}

/// A database URL of no backend here (the URL).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("database_url {0:?}: expected sqlite:PATH or postgres://USER@HOST/DB")]
pub struct UnknownBackend(pub String);
