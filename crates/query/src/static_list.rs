//! The seam between `lobby query` and the static HTTP server lists it reads
//! (`lobby query static`, `lobby query master --static`).
//!
//! Fetching and reading a list (an HTTP client, the engine's parsing rules) lives in
//! `serverlist::fetch`, and `serverlist` depends on this crate (its prober runs
//! query sessions), so this crate cannot call it without a dependency cycle. The
//! command line therefore takes the fetcher as a [`StaticLists`] trait object that
//! the binary passes in (`serverlist::fetch::HttpLists`); this module holds only
//! what the two sides exchange.

use crate::Kind;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

/// One static list, fetched, read with the engine's rules and resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticList {
    /// The URL fetched (`<base>/v1/servers/<gamedir>`).
    pub url: String,
    /// Every listed server with what it is asked: [`Kind::Info`] for `ip` lines,
    /// [`Kind::A2sInfo`] for `gs` lines; in list order, duplicates kept.
    pub servers: Vec<(SocketAddr, Kind)>,
    /// Host names listed that did not resolve (`name:port`).
    pub unresolved: Vec<String>,
    /// Lines (1-based) whose address the engine cannot parse.
    pub bad_lines: Vec<usize>,
}

/// Why a list could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaticListError {
    /// The URL or the game directory is malformed (a usage error).
    Usage(String),
    /// The fetch failed (connection, status, encoding, size...): the message names
    /// the URL and the reason.
    Failed(String),
}

impl std::fmt::Display for StaticListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StaticListError::Usage(m) | StaticListError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StaticListError {}

/// A boxed future, as a trait object's method returns one.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Fetches `<base_url>/v1/servers/<gamedir>` as the engine does.
pub trait StaticLists: Sync {
    /// The list, within `timeout` for the whole fetch.
    fn fetch<'a>(
        &'a self,
        base_url: &'a str,
        gamedir: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<StaticList, StaticListError>>;
}
