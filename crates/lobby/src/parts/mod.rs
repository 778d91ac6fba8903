//! The parts a process runs, one module each. Every part binds its listeners,
//! prints its `listening` lines and runs its threads and tasks under the
//! [`crate::lifecycle::Supervisor`] it is given.

pub mod admin;
pub mod api;
pub mod dns;
pub mod history;
pub mod history_api;
pub mod http;
pub mod master;
pub mod metrics;
pub mod peers;
pub mod pilot_feed;
pub mod relay;
pub mod server_names;
pub mod sim;
pub mod tracker_client;
pub mod tracker_server;
pub mod web;
