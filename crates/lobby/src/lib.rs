//! The `lobby` binary's commands and parts, as a library so that the integration
//! tests and benchmarks can reach them. `main.rs` only parses the command line and
//! dispatches; the configuration is the `config` crate.

pub mod commands;
pub mod lifecycle;
pub mod parts;
pub mod udp_worker;
