//! The relay's tracker client against a hostile tracker: never panics, whole frames
//! out, queue and window bounded, no accepted message lost.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::tracker_client::run(data));
