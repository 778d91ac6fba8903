//! The telnet pilot list from arbitrary pilots (see `fuzzing::telnet_render`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::telnet_render::run(data));
