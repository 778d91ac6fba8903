//! Property tests of report ingestion (issue 20, item 1): any sequence of reports,
//! from a few callsigns, relays and sources, at times that go forward, stall or go
//! back, under limits drawn at random, keeps the caps: rows per slot and per relay
//! at most at their rates, flights at most `max_secs` long with at most the positions
//! their schedule allows, every row closed once, what is held bounded. The body is
//! the fuzz target's (`crates/fuzzing/src/flightlog_reports.rs`), here on random bytes.

#[path = "../../fuzzing/src/flightlog_reports.rs"]
// Its items are `pub` for the fuzzing crate, which is no reason here.
#[allow(dead_code, unreachable_pub)]
mod body;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_reports_keep_the_caps(data in proptest::collection::vec(any::<u8>(), 0..4000)) {
        body::run(&data);
    }

    #[test]
    fn floods_of_sessions_from_few_pilots_keep_the_caps(
        head in any::<[u8; 4]>(),
        steps in proptest::collection::vec((0u8..6, 0u8..72, 0u8..8, any::<u8>()), 0..2000),
    ) {
        // Mostly beginnings and positions a second or less apart: a flip-flop flood.
        let mut data = head.to_vec();
        for (what, who, when, r#where) in steps {
            data.extend([if what < 4 { what * 16 } else { 6 + what }, who, when, r#where]);
        }
        body::run(&data);
    }
}
