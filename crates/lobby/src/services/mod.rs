//! The services a process runs, one module each: each binds its listeners, prints its
//! `listening` lines and runs its threads and tasks under the
//! [`lifecycle::Supervisor`] it is given. None of them knows about HTTP: the
//! HTTP layer (`crate::http`) reads their engines.

pub mod feed;
pub mod history;
pub mod master;
pub mod relay;
pub mod sim;
pub mod tracker;
