//! The fgms.conf reader on arbitrary text (see `fuzzing::fgms_conf`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::fgms_conf::run(data));
