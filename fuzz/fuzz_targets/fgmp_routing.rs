//! The relay's hot-path parser: never panics, and agrees with the strict decoder
//! about the header of every datagram it accepts.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::fgmp_routing::run(data));
