//! The `lobby` binary's commands and parts, as a library so that the fuzz targets
//! and benchmarks can reach the parsers that live here (the fgms.conf reader, the
//! TOML configuration). `main.rs` only parses the command line and dispatches.

pub mod admin_overlay;
pub mod args;
pub mod commands;
pub mod config;
pub mod fgms_conf;
pub mod lifecycle;
pub mod parts;
pub mod udp_worker;
