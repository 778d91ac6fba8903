//! Strict whole-datagram decoding: never panics; what decodes re-encodes to something
//! that decodes to the same body.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::fgmp_datagram::run(data));
