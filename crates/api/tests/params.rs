//! The routes' query parameters: the bounds the OpenAPI document states are the ones
//! enforced, the defaults, and the errors naming what is wrong.

mod common;

use api::airports::AirportsQuery;
use api::chat::ChatFilter;
use api::flights::{
    CallsignQuery, FlightFilter, LeaderboardQuery, Period, RankBy, ServerHistoryQuery, TrackQuery,
};
use api::params::{parse, Bounds, NoParams};
use api::pilots::PilotFilter;
use api::servers::ServerFilter;
use common::q;
use serde::de::DeserializeOwned;
use serde_json::Value;
use utoipa::IntoParams;

/// Each parameter of `T` with a documented `minimum` and `maximum`: both accepted,
/// one past either refused with an error naming it. Returns the parameters checked.
fn documented_bounds_hold<T>() -> Vec<String>
where
    T: DeserializeOwned + IntoParams + Bounds + std::fmt::Debug,
{
    let mut checked = Vec::new();
    for p in T::into_params(|| None) {
        let v = serde_json::to_value(&p).unwrap();
        let (Some(lo), Some(hi)) = (
            v["schema"]["minimum"].as_i64(),
            v["schema"]["maximum"].as_i64(),
        ) else {
            continue;
        };
        let name = v["name"].as_str().unwrap().to_string();
        for ok in [lo, hi] {
            let r = parse::<T>(&format!("{name}={ok}"));
            assert!(r.is_ok(), "{name}={ok}: {r:?}");
        }
        for bad in [lo - 1, hi + 1] {
            let e = parse::<T>(&format!("{name}={bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("{name}:")), "{name}={bad}: {e}");
        }
        checked.push(name);
    }
    checked
}

#[test]
fn every_documented_bound_is_the_enforced_one() {
    assert_eq!(documented_bounds_hold::<FlightFilter>(), ["limit"]);
    assert_eq!(documented_bounds_hold::<TrackQuery>(), ["points"]);
    assert_eq!(
        documented_bounds_hold::<CallsignQuery>(),
        ["recent", "aircraft", "airports"]
    );
    assert_eq!(documented_bounds_hold::<LeaderboardQuery>(), ["limit"]);
    assert_eq!(documented_bounds_hold::<ServerHistoryQuery>(), ["limit"]);
    assert_eq!(documented_bounds_hold::<AirportsQuery>(), ["limit"]);
    assert_eq!(documented_bounds_hold::<ChatFilter>(), ["limit"]);
    assert_eq!(
        documented_bounds_hold::<ServerFilter>(),
        ["nat", "full", "empty", "password", "dedicated"]
    );
    assert!(documented_bounds_hold::<PilotFilter>().is_empty());
}

/// The documented default of `T`'s parameter `name`.
fn default_of<T: IntoParams>(name: &str) -> Value {
    T::into_params(|| None)
        .into_iter()
        .map(|p| serde_json::to_value(&p).unwrap())
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name}"))["schema"]["default"]
        .clone()
}

#[test]
fn defaults_are_the_documented_ones() {
    let f: FlightFilter = parse("").unwrap();
    assert_eq!(f, FlightFilter::default());
    assert_eq!(default_of::<FlightFilter>("limit"), f.limit);
    let t: TrackQuery = parse("").unwrap();
    assert_eq!(default_of::<TrackQuery>("points"), t.points);
    let c: CallsignQuery = parse("").unwrap();
    assert_eq!(
        (c.recent, c.aircraft, c.airports),
        (api::flights::DEFAULT_RECENT, 20, 20)
    );
    for (k, v) in [
        ("recent", c.recent),
        ("aircraft", c.aircraft),
        ("airports", c.airports),
    ] {
        assert_eq!(default_of::<CallsignQuery>(k), v, "{k}");
    }
    let l: LeaderboardQuery = parse("").unwrap();
    assert_eq!(l, LeaderboardQuery::default());
    assert_eq!(default_of::<LeaderboardQuery>("limit"), l.limit);
    let h: ServerHistoryQuery = parse("").unwrap();
    assert_eq!((h.since, h.limit), (None, 1000));
    assert_eq!(default_of::<ServerHistoryQuery>("limit"), h.limit);
    let a: AirportsQuery = parse("").unwrap();
    assert_eq!(a, AirportsQuery::default());
    assert_eq!(default_of::<AirportsQuery>("limit"), a.limit);
    let ch: ChatFilter = parse("").unwrap();
    assert_eq!(ch, ChatFilter::default());
    assert_eq!(default_of::<ChatFilter>("limit"), ch.limit);
}

#[test]
fn flight_filters_name_what_is_wrong() {
    let f = q::<FlightFilter>(&[
        ("callsign", "TEST1"),
        ("since", "10"),
        ("limit", "5"),
        ("before", "9"),
    ])
    .unwrap();
    assert_eq!(
        (f.callsign.as_deref(), f.since, f.limit, f.before),
        (Some("TEST1"), Some(10), 5, Some(9))
    );
    assert_eq!(
        q::<FlightFilter>(&[("callsign", "")]).unwrap().callsign,
        None
    );
    let e = q::<FlightFilter>(&[("limit", "501")]).unwrap_err();
    assert_eq!(e, "limit: must be 1 to 500, got 501");
    assert!(q::<FlightFilter>(&[("limit", "")])
        .unwrap_err()
        .starts_with("limit:"));
    let e = q::<FlightFilter>(&[("since", "yesterday")]).unwrap_err();
    assert!(e.starts_with("since:"), "{e}");
    let e = q::<FlightFilter>(&[("bogus", "1")]).unwrap_err();
    assert_eq!(
        e,
        "unknown parameter \"bogus\" (known: callsign, since, until, limit, before)"
    );
}

#[test]
fn leaderboard_queries_have_defaults_and_name_what_is_wrong() {
    let a = q::<LeaderboardQuery>(&[("period", "all"), ("by", "flights"), ("limit", "3")]).unwrap();
    assert_eq!(
        (a.period, a.period.name(), a.by, a.by_name(), a.limit),
        (Period::All, "all", RankBy::Flights, "flights", 3)
    );
    assert_eq!(
        q::<LeaderboardQuery>(&[("period", "30d")])
            .unwrap()
            .since(3_000_000),
        Some(3_000_000 - 2_592_000)
    );
    for (k, v) in [
        ("period", "1y"),
        ("by", "miles"),
        ("limit", "0"),
        ("limit", "101"),
        ("limit", "x"),
        ("sort", "1"),
    ] {
        let e = q::<LeaderboardQuery>(&[(k, v)]).unwrap_err();
        assert!(e.contains(k), "{k}={v}: {e}");
    }
}

#[test]
fn a_path_that_takes_none_says_so() {
    assert_eq!(parse::<NoParams>(""), Ok(NoParams {}));
    let e = parse::<NoParams>("points=5").unwrap_err().to_string();
    assert_eq!(e, "unknown parameter \"points\" (this path takes none)");
    // Every unknown key is refused, even one with no value.
    let e = parse::<TrackQuery>("points=5&x").unwrap_err().to_string();
    assert_eq!(e, "unknown parameter \"x\" (known: points)");
}

#[test]
fn a_parameter_given_twice_is_refused() {
    // Read as a map before, the last one won silently; now it is named.
    let e = parse::<FlightFilter>("limit=5&limit=6")
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit"), "{e}");
}
