//! The HTTP listener shared by every part: the Xash3D engine's static server list,
//! the JSON API of `docs/API.md`, the live pilot stream, the admin API, `/stats`,
//! `/metrics`, health and readiness, and the page.
//!
//! How it reads: [`server`] starts it (one [`state::AppState`], the router of
//! [`routes`] and [`admin`], the tower layers); [`conn`] is one connection from accept
//! to close (timeouts, caps, counters); the handlers answer from [`sources`] (the
//! services running here), [`snapshot`] (the engines copied at most once a second)
//! and [`lists`]; [`counters`] walks every part's counters for `/stats` and
//! [`metrics`]; [`reply`] is the one error answer (`ApiError`) and the typed query
//! extractor (`Params`, over the `api` crate's query structs); [`openapi`] documents
//! every path (it reads the routes, which do not read it). Nothing below this module
//! imports from it.

pub mod admin;
pub mod admin_state;
pub mod conn;
pub mod counters;
pub mod lists;
pub mod metrics;
pub mod openapi;
pub mod reply;
pub mod routes;
pub mod server;
pub mod snapshot;
pub mod sources;
pub mod state;
