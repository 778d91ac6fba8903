//! Every master-side decoder of the xash crate, and the master engine fed the input
//! as datagrams: never panics, and replies stay within the page size.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::xash_master::run(data));
