//! Fuzzes the extras decoder (chat, radio, transponder, protocol version, the ATC
//! rule): never panics, and what it returns is clean and bounded.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::fgmp_extras::run(data));
