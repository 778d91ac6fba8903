//! The static list body and state.json readers on arbitrary bytes (see `fuzzing::serverlist_static`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::serverlist_static::run(data));
