//! One declaration per counter.
//!
//! A part declares its Prometheus families once ([`families!`]) and each of its
//! counters once ([`counters!`] for an enum of counters, [`fields!`] for a struct of
//! named atomic fields): the `/stats` key, the family it feeds and, for a labelled
//! family, its label value. From that come:
//!
//! - the atomic storage (relaxed `AtomicU64`s, no lock, no allocation per increment)
//!   and its `snapshot()` (the `/stats` keys in declaration order);
//! - a [`Table`] of plain `&'static` data (families and [`Def`]s) and the
//!   object-safe [`Counters`] view, so a binary renders `/stats`, `/metrics` and the
//!   docs table ([`doc_table`]) without knowing each part's types;
//! - consistency checks ([`Table::problems`]), also run at compile time by the
//!   macros: a counter of an unlisted family, a missing or stray label value, two
//!   counters on one series, a duplicate key or an unfed family do not compile.
//!
//! ```
//! telemetry::families! {
//!     /// Every family of this part.
//!     pub const FAMILIES;
//!     RECEIVED = telemetry::Family::counter("demo_received_total", "Datagrams received.");
//!     DROPPED = telemetry::Family::counter("demo_dropped_total", "Dropped, by reason.")
//!         .label("reason");
//!     TIME = telemetry::Family::histogram("demo_seconds", "Time per datagram.");
//! }
//! telemetry::counters! {
//!     /// A counter.
//!     pub enum Counter;
//!     /// The counters.
//!     pub struct Stats in FAMILIES;
//!     /// Datagrams received.
//!     PacketsIn => "packets_in", RECEIVED;
//!     /// Too short.
//!     Runt => "drop_runt", DROPPED["runt"];
//! }
//! let s = Stats::default();
//! s.incr(Counter::Runt);
//! assert_eq!(s.snapshot(), [("packets_in", 0), ("drop_runt", 1)]);
//! assert_eq!(Counter::Runt.series().label, Some(("reason", "runt")));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use sansio::rate::{Limit, TokenBucket};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Only goes up (the name ends in `_total`).
    Counter,
    /// Goes up and down.
    Gauge,
    /// Observations in buckets (never backed by a counter here).
    Histogram,
}

impl Kind {
    /// `counter`, `gauge` or `histogram`, as Prometheus and the docs spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// How the labels column of the docs table describes a labelled family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LabelDoc {
    /// `` `label`: a, b `` (the values of the counters feeding it).
    Values,
    /// `` `label`: note (`a`, `b`) ``.
    Note(&'static str),
    /// This text, verbatim (for families set elsewhere).
    Text(&'static str),
}

/// One metric family: name, type, help text and at most one label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family {
    /// The exposed name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// `# HELP` text, also the docs table's meaning column.
    pub help: &'static str,
    /// The label's name, if the family has one.
    pub label: Option<&'static str>,
    /// How the docs describe the label.
    pub label_doc: LabelDoc,
    /// Set by someone else (at scrape time, or a histogram): no counter feeds it.
    pub elsewhere: bool,
}

impl Family {
    const fn new(name: &'static str, kind: Kind, help: &'static str) -> Family {
        Family {
            name,
            kind,
            help,
            label: None,
            label_doc: LabelDoc::Values,
            elsewhere: matches!(kind, Kind::Histogram),
        }
    }

    /// A counter family.
    pub const fn counter(name: &'static str, help: &'static str) -> Family {
        Family::new(name, Kind::Counter, help)
    }

    /// A gauge family.
    pub const fn gauge(name: &'static str, help: &'static str) -> Family {
        Family::new(name, Kind::Gauge, help)
    }

    /// A histogram family (always set elsewhere).
    pub const fn histogram(name: &'static str, help: &'static str) -> Family {
        Family::new(name, Kind::Histogram, help)
    }

    /// With a label: every counter feeding it gives a value.
    pub const fn label(mut self, label: &'static str) -> Family {
        self.label = Some(label);
        self
    }

    /// Docs: `` `label`: note (`a`, `b`) `` instead of `` `label`: a, b ``.
    pub const fn label_note(mut self, note: &'static str) -> Family {
        self.label_doc = LabelDoc::Note(note);
        self
    }

    /// Docs: this labels column, verbatim.
    pub const fn label_doc(mut self, text: &'static str) -> Family {
        self.label_doc = LabelDoc::Text(text);
        self
    }

    /// Set elsewhere (e.g. at scrape time from a snapshot): no counter feeds it.
    pub const fn elsewhere(mut self) -> Family {
        self.elsewhere = true;
        self
    }

    /// The docs table row, its labels column listing the values of `counters`
    /// that feed this family.
    pub fn doc_row(&self, counters: &[Def]) -> String {
        let values: Vec<&str> = counters
            .iter()
            .filter(|d| d.family.name == self.name)
            .filter_map(|d| d.value)
            .collect();
        let labels = match (self.label_doc, self.label) {
            (LabelDoc::Text(t), _) => t.to_string(),
            (_, None) => String::new(),
            (_, Some(l)) if values.is_empty() => format!("`{l}`"),
            (LabelDoc::Values, Some(l)) => format!("`{l}`: {}", values.join(", ")),
            (LabelDoc::Note(n), Some(l)) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                format!("`{l}`: {n} ({})", quoted.join(", "))
            }
        };
        format!(
            "| `{}` | {} | {} | {} |",
            self.name,
            self.kind.as_str(),
            labels,
            self.help
        )
    }
}

/// One series: a family and at most one (label, value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Series {
    /// The family.
    pub family: &'static Family,
    /// (label, value), if the family has a label.
    pub label: Option<(&'static str, &'static str)>,
}

/// The declaration of one counter: its `/stats` key and the series it feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Def {
    /// The key in `/stats`.
    pub key: &'static str,
    /// The family it feeds.
    pub family: &'static Family,
    /// Its label value, if the family has a label.
    pub value: Option<&'static str>,
}

impl Def {
    /// A declaration (the macros write these).
    pub const fn new(
        key: &'static str,
        family: &'static Family,
        value: Option<&'static str>,
    ) -> Def {
        Def { key, family, value }
    }

    /// Its series.
    pub const fn series(&self) -> Series {
        Series {
            family: self.family,
            label: match (self.family.label, self.value) {
                (Some(l), Some(v)) => Some((l, v)),
                _ => None,
            },
        }
    }
}

const PLACEHOLDER_FAMILY: Family = Family::counter("", "");
const PLACEHOLDER: Def = Def::new("", &PLACEHOLDER_FAMILY, None);

/// `a` then `b` as one array (for a table built from two macro invocations).
pub const fn concat<const N: usize>(a: &[Def], b: &[Def]) -> [Def; N] {
    assert!(a.len() + b.len() == N, "concat: wrong length");
    let mut out = [PLACEHOLDER; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - a.len()];
        i += 1;
    }
    out
}

/// What is wrong with a [`Table`] (each names the key or family at fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Two families with this name.
    DuplicateFamily(&'static str),
    /// This counter's family is not (exactly) in the table's families.
    UndeclaredFamily(&'static str),
    /// This counter feeds a histogram.
    FeedsHistogram(&'static str),
    /// This counter feeds a family marked as set elsewhere.
    FeedsElsewhere(&'static str),
    /// This counter feeds a labelled family without a label value.
    MissingLabelValue(&'static str),
    /// This counter gives a label value to a family without a label.
    StrayLabelValue(&'static str),
    /// This counter feeds the same series as an earlier one.
    DuplicateSeries(&'static str),
    /// Two counters with this `/stats` key.
    DuplicateKey(&'static str),
    /// No counter feeds this family and it is not marked as set elsewhere.
    Unfed(&'static str),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::DuplicateFamily(n) => write!(f, "family {n} declared twice"),
            Problem::UndeclaredFamily(k) => write!(f, "counter {k}: its family is not declared"),
            Problem::FeedsHistogram(k) => write!(f, "counter {k} feeds a histogram"),
            Problem::FeedsElsewhere(k) => {
                write!(f, "counter {k} feeds a family marked as set elsewhere")
            }
            Problem::MissingLabelValue(k) => write!(f, "counter {k}: no label value"),
            Problem::StrayLabelValue(k) => write!(f, "counter {k}: a label value, no label"),
            Problem::DuplicateSeries(k) => write!(f, "counter {k}: its series is taken"),
            Problem::DuplicateKey(k) => write!(f, "/stats key {k} twice"),
            Problem::Unfed(n) => write!(f, "family {n}: no counter, not marked elsewhere"),
        }
    }
}

impl Problem {
    /// The key or family name at fault.
    pub const fn subject(self) -> &'static str {
        match self {
            Problem::DuplicateFamily(s)
            | Problem::UndeclaredFamily(s)
            | Problem::FeedsHistogram(s)
            | Problem::FeedsElsewhere(s)
            | Problem::MissingLabelValue(s)
            | Problem::StrayLabelValue(s)
            | Problem::DuplicateSeries(s)
            | Problem::DuplicateKey(s)
            | Problem::Unfed(s) => s,
        }
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn opt_eq(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => str_eq(a, b),
        _ => false,
    }
}

const fn label_doc_eq(a: LabelDoc, b: LabelDoc) -> bool {
    match (a, b) {
        (LabelDoc::Values, LabelDoc::Values) => true,
        (LabelDoc::Note(a), LabelDoc::Note(b)) | (LabelDoc::Text(a), LabelDoc::Text(b)) => {
            str_eq(a, b)
        }
        _ => false,
    }
}

const fn family_eq(a: &Family, b: &Family) -> bool {
    str_eq(a.name, b.name)
        && a.kind as u8 == b.kind as u8
        && str_eq(a.help, b.help)
        && opt_eq(a.label, b.label)
        && label_doc_eq(a.label_doc, b.label_doc)
        && a.elsewhere == b.elsewhere
}

/// A part's declarations: its families (in docs order) and its counters (in
/// `/stats` order). Plain `&'static` data.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The families, in the order `/metrics` describes and the docs list them.
    pub families: &'static [Family],
    /// The counters, in `/stats` order.
    pub counters: &'static [Def],
}

impl Table {
    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&'static Family> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The counter with `/stats` key `key`.
    pub fn counter(&self, key: &str) -> Option<&'static Def> {
        self.counters.iter().find(|d| d.key == key)
    }

    const fn family_problem(&self, i: usize) -> Option<Problem> {
        let f = &self.families[i];
        let mut j = 0;
        while j < i {
            if str_eq(self.families[j].name, f.name) {
                return Some(Problem::DuplicateFamily(f.name));
            }
            j += 1;
        }
        if f.elsewhere {
            return None;
        }
        let mut k = 0;
        while k < self.counters.len() {
            if str_eq(self.counters[k].family.name, f.name) {
                return None;
            }
            k += 1;
        }
        Some(Problem::Unfed(f.name))
    }

    const fn counter_problem(&self, i: usize) -> Option<Problem> {
        let d = &self.counters[i];
        let mut found = None;
        let mut j = 0;
        while j < self.families.len() {
            if family_eq(&self.families[j], d.family) {
                found = Some(&self.families[j]);
            }
            j += 1;
        }
        let Some(f) = found else {
            return Some(Problem::UndeclaredFamily(d.key));
        };
        if matches!(f.kind, Kind::Histogram) {
            return Some(Problem::FeedsHistogram(d.key));
        }
        if f.elsewhere {
            return Some(Problem::FeedsElsewhere(d.key));
        }
        match (f.label, d.value) {
            (Some(_), None) => return Some(Problem::MissingLabelValue(d.key)),
            (None, Some(_)) => return Some(Problem::StrayLabelValue(d.key)),
            _ => {}
        }
        let mut j = 0;
        while j < i {
            let e = &self.counters[j];
            if str_eq(e.key, d.key) {
                return Some(Problem::DuplicateKey(d.key));
            }
            if str_eq(e.family.name, d.family.name) && opt_eq(e.value, d.value) {
                return Some(Problem::DuplicateSeries(d.key));
            }
            j += 1;
        }
        None
    }

    /// The first problem, if any (usable in a constant).
    pub const fn check(&self) -> Option<Problem> {
        let mut i = 0;
        while i < self.families.len() {
            if let Some(p) = self.family_problem(i) {
                return Some(p);
            }
            i += 1;
        }
        let mut i = 0;
        while i < self.counters.len() {
            if let Some(p) = self.counter_problem(i) {
                return Some(p);
            }
            i += 1;
        }
        None
    }

    /// Panics (at compile time in a `const _`) with the key or family at fault;
    /// [`Table::problems`] says what is wrong.
    pub const fn assert_valid(&self) {
        if let Some(p) = self.check() {
            panic!("{}", p.subject());
        }
    }

    /// Every problem.
    pub fn problems(&self) -> Vec<Problem> {
        let fams = (0..self.families.len()).filter_map(|i| self.family_problem(i));
        let ctrs = (0..self.counters.len()).filter_map(|i| self.counter_problem(i));
        fams.chain(ctrs).collect()
    }

    /// A plain-text rendering for frozen-copy tests: `# type name help` per family,
    /// then `key family{label="value"}` per counter.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for f in self.families {
            out.push_str(&format!("# {} {} {}\n", f.kind.as_str(), f.name, f.help));
        }
        for d in self.counters {
            out.push_str(&format!("{} {}", d.key, d.family.name));
            if let Some((l, v)) = d.series().label {
                out.push_str(&format!("{{{l}=\"{v}\"}}"));
            }
            out.push('\n');
        }
        out
    }

    /// Its families' docs rows, one per line.
    pub fn doc_rows(&self) -> String {
        doc_rows(&[self])
    }
}

/// Problems across tables: a family name declared in two of them.
pub fn problems_across(tables: &[&Table]) -> Vec<Problem> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for t in tables {
        for f in t.families {
            if !seen.insert(f.name) {
                out.push(Problem::DuplicateFamily(f.name));
            }
        }
        out.extend(t.problems());
    }
    out
}

/// The docs rows of every family of `tables`, in order, one per line (the labels
/// column lists the values of every table's counters feeding the family).
pub fn doc_rows(tables: &[&Table]) -> String {
    let counters: Vec<Def> = tables
        .iter()
        .flat_map(|t| t.counters.iter().copied())
        .collect();
    let mut out = String::new();
    for f in tables.iter().flat_map(|t| t.families) {
        out.push_str(&f.doc_row(&counters));
        out.push('\n');
    }
    out
}

/// The docs table (header, separator, [`doc_rows`]), as in `docs/API.md`.
pub fn doc_table(tables: &[&Table]) -> String {
    format!(
        "| family | type | labels | meaning |\n|---|---|---|---|\n{}",
        doc_rows(tables)
    )
}

/// A part's live counters, without its types: what a binary iterates to render
/// `/stats` and `/metrics`. Object safe.
pub trait Counters: Send + Sync {
    /// The declarations.
    fn table(&self) -> &'static Table;

    /// The value of `table().counters[i]` now (0 out of range).
    fn value(&self, i: usize) -> u64;

    /// (`/stats` key, value) of every counter, in declaration order.
    fn snapshot(&self) -> Vec<(&'static str, u64)> {
        self.readings()
            .into_iter()
            .map(|(d, v)| (d.key, v))
            .collect()
    }

    /// (declaration, value) of every counter, in declaration order.
    fn readings(&self) -> Vec<(&'static Def, u64)> {
        self.table()
            .counters
            .iter()
            .enumerate()
            .map(|(i, d)| (d, self.value(i)))
            .collect()
    }
}

/// Lets a repeated log line out at warn at most so many times a second (once, by
/// default), and at a lower level the rest of the time: what strangers can trigger at
/// will (refused requests, failed accepts) is counted every time but never floods the
/// log. The caller gives the time. A [`sansio::rate::TokenBucket`] kept in an atomic,
/// so a `static` gate serves every thread.
#[derive(Debug)]
pub struct LogGate {
    limit: Limit,
    bucket: AtomicU64,
    suppressed: AtomicU64,
}

impl LogGate {
    /// A gate letting one line a second out, that has let nothing through yet.
    pub const fn new() -> LogGate {
        LogGate::per_second(1)
    }

    /// A gate letting `lines` a second out (at least 1), that many at once.
    pub const fn per_second(lines: u32) -> LogGate {
        let lines = if lines == 0 { 1 } else { lines };
        LogGate {
            limit: Limit::every(Duration::from_nanos(1_000_000_000 / lines as u64), lines),
            bucket: AtomicU64::new(TokenBucket::new().to_bits()),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether a line at Unix second `now` goes out at warn.
    pub fn warn_at(&self, now: u64) -> bool {
        self.take(Duration::from_secs(now)).is_some()
    }

    /// `Some(lines held back since the last one let out)` when a line at `now` (a
    /// [`Duration`] since any fixed epoch) goes out; `None` counts it held back.
    pub fn take(&self, now: Duration) -> Option<u64> {
        let taken = self
            .bucket
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                let mut b = TokenBucket::from_bits(bits);
                b.try_take(self.limit, now).then(|| b.to_bits())
            })
            .is_ok();
        if taken {
            Some(self.suppressed.swap(0, Ordering::Relaxed))
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

impl Default for LogGate {
    fn default() -> LogGate {
        LogGate::new()
    }
}

#[doc(hidden)]
#[macro_export]
macro_rules! __opt {
    () => {
        ::core::option::Option::None
    };
    ($v:literal) => {
        ::core::option::Option::Some($v)
    };
}

/// Declares families as constants and lists them, in order, in one more constant.
///
/// ```
/// telemetry::families! {
///     /// The part's families.
///     pub const FAMILIES;
///     IN = telemetry::Family::counter("x_in_total", "Datagrams in.");
///     UP = telemetry::Family::gauge("x_up", "Relays by state.").label("state").elsewhere();
/// }
/// assert_eq!(FAMILIES.len(), 2);
/// ```
#[macro_export]
macro_rules! families {
    (
        $(#[$lm:meta])* $vis:vis const $list:ident;
        $( $(#[$m:meta])* $name:ident = $e:expr; )+
    ) => {
        $(
            $(#[$m])*
            #[doc = concat!("The `", stringify!($name), "` metric family.")]
            $vis const $name: $crate::Family = $e;
        )+
        $(#[$lm])*
        $vis const $list: &[$crate::Family] = &[$($name),+];
    };
}

/// A typo in a family, a missing label value or a duplicate key does not compile:
///
/// ```compile_fail
/// telemetry::families! { pub const F; A = telemetry::Family::counter("a_total", "A."); }
/// telemetry::counters! { pub enum C; pub struct S in F; X => "x", B; }
/// ```
///
/// ```compile_fail
/// telemetry::families! {
///     pub const F;
///     A = telemetry::Family::counter("a_total", "A.").label("reason");
/// }
/// telemetry::counters! { pub enum C; pub struct S in F; X => "x", A; }
/// ```
///
/// ```compile_fail
/// telemetry::families! { pub const F; A = telemetry::Family::counter("a_total", "A.").label("r"); }
/// telemetry::counters! { pub enum C; pub struct S in F; X => "x", A["1"]; Y => "x", A["2"]; }
/// ```
///
/// ```
/// telemetry::families! { pub const F; A = telemetry::Family::counter("a_total", "A.").label("r"); }
/// telemetry::counters! { pub enum C; pub struct S in F; X => "x", A["1"]; Y => "y", A["2"]; }
/// ```
///
/// Declares counters as an enum and their storage as an array of `AtomicU64`
/// indexed by it. Each line: `Variant => "stats_key", FAMILY;` or, for a labelled
/// family, `Variant => "stats_key", FAMILY["label value"];`.
///
/// `struct Stats in FAMILIES;` also gives `Stats::TABLE`, implements [`Counters`]
/// and checks the table at compile time; without `in`, the counters are a part of
/// a larger table (see [`fields!`]'s `tail`).
#[macro_export]
macro_rules! counters {
    (
        $(#[$em:meta])* $evis:vis enum $E:ident;
        $(#[$sm:meta])* $svis:vis struct $S:ident $(in $fams:path)?;
        $( $(#[$m:meta])* $V:ident => $key:literal, $fam:path $([$val:literal])?; )+
    ) => {
        $(#[$em])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $evis enum $E { $( $(#[$m])* $V, )+ }

        #[allow(dead_code)]
        impl $E {
            /// How many.
            pub const COUNT: usize = [$($key),+].len();
            /// Every one, in declaration (`/stats`) order.
            pub const ALL: [$E; $E::COUNT] = [$($E::$V),+];
            /// Their declarations, in [`Self::ALL`] order.
            pub const DEFS: &'static [$crate::Def; $E::COUNT] =
                &[$($crate::Def::new($key, &$fam, $crate::__opt!($($val)?))),+];

            /// Its declaration.
            pub const fn def(self) -> &'static $crate::Def {
                &Self::DEFS[self as usize]
            }

            /// Its `/stats` key.
            pub const fn key(self) -> &'static str {
                self.def().key
            }

            /// Its `/stats` key (the same as [`Self::key`]).
            pub const fn name(self) -> &'static str {
                self.key()
            }

            /// Its Prometheus series.
            pub const fn series(self) -> $crate::Series {
                self.def().series()
            }

            /// Its position in [`Self::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        $(#[$sm])*
        #[derive(Debug)]
        $svis struct $S {
            slots: [::std::sync::atomic::AtomicU64; $E::COUNT],
        }

        impl ::core::default::Default for $S {
            fn default() -> Self {
                $S { slots: ::std::array::from_fn(|_| ::std::sync::atomic::AtomicU64::new(0)) }
            }
        }

        #[allow(dead_code)]
        impl $S {
            /// The declarations, in storage order.
            pub const DEFS: &'static [$crate::Def] = $E::DEFS;

            /// Adds `n`.
            #[inline]
            pub fn add(&self, c: $E, n: u64) {
                self.slots[c as usize].fetch_add(n, ::std::sync::atomic::Ordering::Relaxed);
            }

            /// Adds one.
            #[inline]
            pub fn incr(&self, c: $E) {
                self.add(c, 1);
            }

            /// Sets (a gauge).
            #[inline]
            pub fn set(&self, c: $E, v: u64) {
                self.slots[c as usize].store(v, ::std::sync::atomic::Ordering::Relaxed);
            }

            /// The value now.
            #[inline]
            pub fn get(&self, c: $E) -> u64 {
                self.slots[c as usize].load(::std::sync::atomic::Ordering::Relaxed)
            }

            /// The sum of all.
            pub fn total(&self) -> u64 {
                self.slots
                    .iter()
                    .map(|s| s.load(::std::sync::atomic::Ordering::Relaxed))
                    .sum()
            }

            /// The value of the `i`th (0 out of range).
            pub fn value(&self, i: usize) -> u64 {
                self.slots
                    .get(i)
                    .map_or(0, |s| s.load(::std::sync::atomic::Ordering::Relaxed))
            }

            /// (`/stats` key, value) of every one, in declaration order.
            pub fn snapshot(&self) -> ::std::vec::Vec<(&'static str, u64)> {
                $E::ALL.iter().map(|&c| (c.key(), self.get(c))).collect()
            }
        }

        $(
            impl $S {
                /// The declarations: families and counters.
                pub const TABLE: &'static $crate::Table =
                    &$crate::Table { families: $fams, counters: $E::DEFS };
            }

            const _: () = $S::TABLE.assert_valid();

            impl $crate::Counters for $S {
                fn table(&self) -> &'static $crate::Table {
                    $S::TABLE
                }

                fn value(&self, i: usize) -> u64 {
                    $S::value(self, i)
                }
            }
        )?
    };
}

/// Declares counters as named public `AtomicU64` fields of a struct (the field
/// name is the `/stats` key). Each line: `pub field => FAMILY;` or
/// `pub field => FAMILY["label value"];`. An optional `tail name: Type;` appends a
/// [`counters!`] storage (declared without `in`) as a private field: its counters
/// follow the fields in the table and in `/stats`. Gives `TABLE`, `snapshot()`,
/// [`Counters`], and a compile-time check of the table.
#[macro_export]
macro_rules! fields {
    (
        $(#[$sm:meta])* $svis:vis struct $S:ident in $fams:path {
            $( $(#[$m:meta])* $fvis:vis $field:ident => $fam:path $([$val:literal])?; )+
        }
        $( tail $tail:ident: $T:ident; )?
    ) => {
        $(#[$sm])*
        #[derive(Debug, Default)]
        $svis struct $S {
            $( $(#[$m])* $fvis $field: ::std::sync::atomic::AtomicU64, )+
            $( $tail: $T, )?
        }

        #[allow(dead_code)]
        impl $S {
            const FIELDS: &'static [$crate::Def] =
                &[$($crate::Def::new(stringify!($field), &$fam, $crate::__opt!($($val)?))),+];
            const FIELD_COUNT: usize = [$(stringify!($field)),+].len();
            const COUNT: usize = $S::FIELD_COUNT $(+ $T::DEFS.len())?;

            /// The declarations: families, then the counters in `/stats` order.
            pub const TABLE: &'static $crate::Table = &$crate::Table {
                families: $fams,
                counters: &$crate::concat::<{ $S::COUNT }>(
                    $S::FIELDS,
                    $crate::__tail_defs!($($T)?),
                ),
            };

            /// The value of the `i`th counter of [`Self::TABLE`] (0 out of range).
            #[allow(unreachable_code)]
            pub fn value(&self, i: usize) -> u64 {
                let fields: [&::std::sync::atomic::AtomicU64; $S::FIELD_COUNT] = [$(&self.$field),+];
                if let Some(f) = fields.get(i) {
                    return f.load(::std::sync::atomic::Ordering::Relaxed);
                }
                $( return self.$tail.value(i - $S::FIELD_COUNT); )?
                0
            }

            /// (`/stats` key, value) of every counter, in declaration order.
            pub fn snapshot(&self) -> ::std::vec::Vec<(&'static str, u64)> {
                $S::TABLE
                    .counters
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d.key, self.value(i)))
                    .collect()
            }
        }

        const _: () = $S::TABLE.assert_valid();

        impl $crate::Counters for $S {
            fn table(&self) -> &'static $crate::Table {
                $S::TABLE
            }

            fn value(&self, i: usize) -> u64 {
                $S::value(self, i)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tail_defs {
    () => {
        &[]
    };
    ($T:ident) => {
        $T::DEFS
    };
}

#[cfg(test)]
mod tests;
