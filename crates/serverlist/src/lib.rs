//! The Xash3D server list of the HTTP era (issue 19).
//!
//! Since June 2026 the engine finds servers through a static HTTP list
//! (`masterstatic`, `GET <base>/v1/servers/<gamedir>`), built by FWGS/server-list
//! from curated TOML files and a nightly probe. This crate is that list as a library,
//! pure throughout (no socket, no clock):
//! - [`curated`]: the sources, FWGS/server-list's `servers/<gamedir>.toml`;
//! - [`catalog`]: every known server, what probes learnt, the publishing rule;
//! - [`prober`]: the continuous prober as a state machine over [`query::Session`]s;
//! - [`publish`]: `v1/servers/<gamedir>` and `v1/gamedirs`, as probe.py writes them;
//! - [`export`]: probe.py's `state.json`, `index.html` and the whole static tree;
//! - [`lists`]: the bodies served over HTTP, merged with heartbeat servers;
//! - [`registration`]: self-registration, pending until the server shows its token;
//! - [`sources`]: reading a sources directory, keeping good copies of bad files;
//! - [`masterlist`]: how the engine reads a list, line by line;
//! - [`beside_master`]: what the list reads of the master (heartbeats, bans) and
//!   the cache of the served bodies;
//! - [`merged`]: the master's heard servers and the curated list's published ones
//!   as one list;
//! - [`names`]: the names of the master's listed servers, asked by a bounded
//!   poller, for `/api/servers` and the page;
//! - [`driver`]: the tokio side (sockets, resolver, the one-shot probe);
//! - `details` (feature `details`): a listed server asked for the page, the heat
//!   maps;
//! - `cli` (feature `cli`): `lobby master probe` and `lobby master export`;
//! - `fetch` (feature `fetch`): a list fetched over HTTP as the engine's client
//!   does, for `lobby query static` and `lobby query master --static`.

pub mod beside_master;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
pub mod curated;
#[cfg(feature = "details")]
pub mod details;
pub mod driver;
pub mod export;
#[cfg(feature = "fetch")]
pub mod fetch;
pub mod lists;
pub mod masterlist;
pub mod merged;
pub mod names;
pub mod prober;
pub mod publish;
pub mod registration;
pub mod sources;
pub mod stats;

pub use catalog::{Catalog, Entry, ProbeInfo, Published};
pub use prober::{Prober, ProberConfig};
