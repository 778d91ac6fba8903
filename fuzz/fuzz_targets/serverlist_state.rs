//! A state file read and restored (see `fuzzing::serverlist_state`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::serverlist_state::run(data));
