// The macros are tried as a part declares its families, with `pub`.
#![allow(unreachable_pub)]

use super::*;

crate::families! {
    /// Demo families.
    pub const FAMILIES;
    IN = Family::counter("demo_in_total", "Datagrams in.");
    ACCEPTED = Family::counter("demo_accepted_total", "Accepted, by kind.").label("kind");
    DROPPED = Family::counter("demo_dropped_total", "Dropped, by reason.")
        .label("reason")
        .label_note("every drop reason");
    PILOTS = Family::gauge("demo_pilots", "Pilots now.");
    BUILD = Family::gauge("demo_build_info", "Always 1.")
        .label("version")
        .label_doc("`version`")
        .elsewhere();
    TIME = Family::histogram("demo_seconds", "Time.");
}

crate::counters! {
    /// Why.
    pub enum Reason;
    /// Drops.
    pub struct Drops;
    /// Too short.
    Runt => "runt", DROPPED["runt"];
    /// Too long.
    Oversize => "oversize", DROPPED["oversize"];
}

crate::fields! {
    /// Demo stats.
    pub struct Demo in FAMILIES {
        /// In.
        pub packets_in => IN;
        /// Positions.
        pub positions => ACCEPTED["position"];
        /// Chats.
        pub chats => ACCEPTED["chat"];
        /// Pilots.
        pub pilots => PILOTS;
    }
    tail drops: Drops;
}

crate::counters! {
    /// A counter.
    pub enum Counter;
    /// Storage.
    pub struct Stats in ENUM_FAMILIES;
    /// In.
    PacketsIn => "packets_in", IN;
    /// Accepted positions.
    Positions => "positions", ACCEPTED["position"];
}

const ENUM_FAMILIES: &[Family] = &[IN, ACCEPTED];

#[test]
fn enum_storage_counts_in_its_own_slot_and_snapshots_in_order() {
    let s = Stats::default();
    s.add(Counter::PacketsIn, 3);
    s.incr(Counter::Positions);
    s.set(Counter::Positions, 7);
    assert_eq!(s.get(Counter::PacketsIn), 3);
    assert_eq!(s.snapshot(), [("packets_in", 3), ("positions", 7)]);
    assert_eq!(s.total(), 10);
    assert_eq!(Counter::ALL, [Counter::PacketsIn, Counter::Positions]);
    assert_eq!(Counter::Positions.key(), "positions");
    assert_eq!(Counter::Positions.name(), "positions");
    let series = Counter::Positions.series();
    assert_eq!(series.family.name, "demo_accepted_total");
    assert_eq!(series.label, Some(("kind", "position")));
    assert_eq!(Counter::PacketsIn.series().label, None);
    let dynamic: &dyn Counters = &s;
    assert_eq!(dynamic.snapshot(), s.snapshot());
    assert!(Stats::TABLE.problems().is_empty());
}

#[test]
fn fields_then_tail_in_one_table() {
    let d = Demo::default();
    d.packets_in
        .fetch_add(2, std::sync::atomic::Ordering::Relaxed);
    d.drops.incr(Reason::Oversize);
    assert_eq!(d.drops.get(Reason::Runt), 0);
    let keys: Vec<_> = Demo::TABLE.counters.iter().map(|c| c.key).collect();
    assert_eq!(
        keys,
        [
            "packets_in",
            "positions",
            "chats",
            "pilots",
            "runt",
            "oversize"
        ]
    );
    assert_eq!(
        d.snapshot(),
        [
            ("packets_in", 2),
            ("positions", 0),
            ("chats", 0),
            ("pilots", 0),
            ("runt", 0),
            ("oversize", 1)
        ]
    );
    assert_eq!(Counters::value(&d, 99), 0);
    let r = Counters::readings(&d);
    assert_eq!(r[5].0.series().label, Some(("reason", "oversize")));
    assert!(Demo::TABLE.problems().is_empty());
}

#[test]
fn docs_rows_follow_the_api_document() {
    assert_eq!(
        Demo::TABLE.doc_rows(),
        "| `demo_in_total` | counter |  | Datagrams in. |\n\
         | `demo_accepted_total` | counter | `kind`: position, chat | Accepted, by kind. |\n\
         | `demo_dropped_total` | counter | `reason`: every drop reason (`runt`, `oversize`) | Dropped, by reason. |\n\
         | `demo_pilots` | gauge |  | Pilots now. |\n\
         | `demo_build_info` | gauge | `version` | Always 1. |\n\
         | `demo_seconds` | histogram |  | Time. |\n"
    );
    assert!(doc_table(&[Demo::TABLE])
        .starts_with("| family | type | labels | meaning |\n|---|---|---|---|\n| `demo_in_total`"));
}

const OTHER_IN: Family = Family::counter("demo_in_total", "Another help.");
const PLAIN: Family = Family::counter("demo_plain_total", "Plain.");

fn leak(counters: Vec<Def>) -> &'static [Def] {
    Box::leak(counters.into_boxed_slice())
}

fn problems(families: &'static [Family], counters: Vec<Def>) -> Vec<Problem> {
    Table {
        families,
        counters: leak(counters),
    }
    .problems()
}

#[test]
fn every_inconsistency_is_found() {
    // A family listed twice.
    assert_eq!(
        problems(&[IN, IN], vec![Def::new("a", &IN, None)]),
        [Problem::DuplicateFamily("demo_in_total")]
    );
    // A counter of a family not in the table, or of a same-named different one.
    assert_eq!(
        problems(
            &[IN],
            vec![Def::new("a", &IN, None), Def::new("b", &PLAIN, None)]
        ),
        [Problem::UndeclaredFamily("b")]
    );
    assert_eq!(
        problems(
            &[IN],
            vec![Def::new("a", &IN, None), Def::new("b", &OTHER_IN, None)]
        ),
        [Problem::UndeclaredFamily("b")]
    );
    // Histograms and families set elsewhere take no counter.
    assert_eq!(
        problems(&[TIME], vec![Def::new("a", &TIME, None)]),
        [Problem::FeedsHistogram("a")]
    );
    assert_eq!(
        problems(&[BUILD], vec![Def::new("a", &BUILD, Some("1"))]),
        [Problem::FeedsElsewhere("a")]
    );
    // Label values: present exactly when the family has a label.
    assert_eq!(
        problems(&[ACCEPTED], vec![Def::new("a", &ACCEPTED, None)]),
        [Problem::MissingLabelValue("a")]
    );
    assert_eq!(
        problems(&[IN], vec![Def::new("a", &IN, Some("x"))]),
        [Problem::StrayLabelValue("a")]
    );
    // One series per counter, one counter per key.
    assert_eq!(
        problems(
            &[ACCEPTED],
            vec![
                Def::new("a", &ACCEPTED, Some("x")),
                Def::new("b", &ACCEPTED, Some("x"))
            ]
        ),
        [Problem::DuplicateSeries("b")]
    );
    assert_eq!(
        problems(
            &[IN, PLAIN],
            vec![Def::new("a", &IN, None), Def::new("a", &PLAIN, None)]
        ),
        [Problem::DuplicateKey("a")]
    );
    // A counter family nobody feeds.
    assert_eq!(
        problems(&[IN, PLAIN], vec![Def::new("a", &IN, None)]),
        [Problem::Unfed("demo_plain_total")]
    );
    let t = Table {
        families: &[IN, PLAIN],
        counters: leak(vec![Def::new("a", &IN, None)]),
    };
    assert_eq!(t.check(), Some(Problem::Unfed("demo_plain_total")));
    assert_eq!(
        t.problems()[0].to_string(),
        "family demo_plain_total: no counter, not marked elsewhere"
    );
}

#[test]
fn a_family_in_two_tables_is_found() {
    let a = Table {
        families: &[IN],
        counters: leak(vec![Def::new("a", &IN, None)]),
    };
    assert_eq!(
        problems_across(&[&a, &a]),
        [Problem::DuplicateFamily("demo_in_total")]
    );
    assert!(
        problems_across(&[&a, Demo::TABLE]).contains(&Problem::DuplicateFamily("demo_in_total"))
    );
}

#[test]
fn concat_keeps_order() {
    let a = [Def::new("a", &IN, None)];
    let b = [Def::new("b", &IN, None), Def::new("c", &IN, None)];
    let c: [Def; 3] = concat(&a, &b);
    assert_eq!(c.map(|d| d.key), ["a", "b", "c"]);
}

#[test]
fn the_log_gate_lets_one_warning_out_per_second() {
    let g = crate::LogGate::new();
    assert!(g.warn_at(0), "the first line ever goes out");
    assert!(!g.warn_at(0));
    assert!(!g.warn_at(0));
    assert!(g.warn_at(1));
    assert!(!g.warn_at(1));
    assert!(g.warn_at(7));
}

#[test]
fn a_log_gate_of_several_lines_a_second_counts_what_it_holds_back() {
    use std::time::Duration;
    let g = crate::LogGate::per_second(20);
    for _ in 0..20 {
        assert_eq!(g.take(Duration::ZERO), Some(0), "twenty at once");
    }
    for _ in 0..5 {
        assert_eq!(g.take(Duration::from_millis(10)), None);
    }
    assert_eq!(
        g.take(Duration::from_millis(50)),
        Some(5),
        "one more every 50 ms"
    );
    assert_eq!(g.take(Duration::from_millis(50)), None);
    assert_eq!(crate::LogGate::per_second(0).take(Duration::ZERO), Some(0));
}
