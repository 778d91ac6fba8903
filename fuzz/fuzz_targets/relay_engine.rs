//! The relay engine fed arbitrary datagrams from a few addresses: never panics,
//! never sends a datagram back to its sender, never forwards invalid input.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::relay_engine::run(data));
