//! The flight log's report ingestion on a hostile sequence of reports: never panics,
//! the rate, duration and memory caps hold.
#![no_main]
// The embedded airport table is parsed once, before the first input (not timed as
// that input's: the slowest-input figure of `scripts/fuzz` replays inputs one by one).
libfuzzer_sys::fuzz_target!(init: fuzzing::warm_airports(), |data: &[u8]| fuzzing::flightlog_reports::run(data));
