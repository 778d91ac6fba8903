//! Fuzzes the airport table's readers (a `bbox` query, a table's text, nearest) and
//! the aircraft class table: never panics, and every answer is inside what was asked.
#![no_main]
// The embedded airport table is parsed once, before the first input (not timed as
// that input's: the slowest-input figure of `scripts/fuzz` replays inputs one by one).
libfuzzer_sys::fuzz_target!(init: fuzzing::warm_airports(), |data: &[u8]| fuzzing::airports_query::run(data));
