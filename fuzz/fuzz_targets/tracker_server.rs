//! The tracker server's connection on hostile bytes in hostile pieces: never panics,
//! whole frames out, bounded, recorded lines re-encode stably.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::tracker_server::run(data));
