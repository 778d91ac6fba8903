//! The `lobby` binary's commands, services and HTTP layer, as a library so that the
//! integration tests and benchmarks can reach them. `main.rs` only parses the command
//! line and dispatches; the configuration is the `config` crate.
//!
//! The modules stack without cycles (checked by `tests/layout.rs`): `commands` use
//! `http` and `services`; `http` uses `services`; `services` use `udp_worker` and
//! `recorder`; every part runs under the `lifecycle` crate's supervisor; nothing below `http` imports from it.

pub mod commands;
pub mod http;
pub mod recorder;
pub mod services;
pub mod udp_worker;
