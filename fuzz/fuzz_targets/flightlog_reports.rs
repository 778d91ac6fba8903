//! The flight log's report ingestion on a hostile sequence of reports: never panics,
//! the rate, duration and memory caps hold.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::flightlog_reports::run(data));
