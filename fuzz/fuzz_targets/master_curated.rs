//! The curated server-list reader on arbitrary text (see `fuzzing::master_curated`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::master_curated::run(data));
