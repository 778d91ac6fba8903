//! Fuzzes the airport table's readers (a `bbox` query, a table's text, nearest) and
//! the aircraft class table: never panics, and every answer is inside what was asked.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::airports_query::run(data));
