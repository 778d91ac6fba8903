//! The curated server-list reader on arbitrary text (see `fuzzing::serverlist_curated`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::serverlist_curated::run(data));
