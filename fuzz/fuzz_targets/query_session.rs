//! The query session against a hostile server (see `fuzzing::query_session`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::query_session::run(data));
