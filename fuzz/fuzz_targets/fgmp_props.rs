//! Fuzzes the property-list codec: decoding arbitrary bytes must never panic, must
//! re-encode to exactly the input, and a fully parsed list must survive a rebuild
//! through the validating builder and decode to the same list again.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::fgmp_props::run(data));
