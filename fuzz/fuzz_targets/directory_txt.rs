//! The TXT attribute decoder and the TerraSync selection on hostile DNS data:
//! never panics; a selection stays inside the lowest order and preference.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::directory_txt::run(data));
