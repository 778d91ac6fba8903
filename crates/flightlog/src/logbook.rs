//! What makes a flight a logbook entry (issue 21, section 3): its departure and
//! arrival airports and its moving ("effective") time. Pure: positions in, answers
//! out; [`crate::flights::Flights`] applies these rules to every flight as its
//! positions come (the local relay's pilots and the tracker's alike).
//!
//! # The airport rule
//!
//! A position is **at an airport** when the nearest airport of the embedded table
//! (`airports`, OurAirports: large, medium and small airports and seaplane bases)
//! within [`AIRPORT_RADIUS_M`] (5 km) of it exists and the position is **on or near
//! the ground** there:
//!
//! - **slow**: its ground speed is below [`SLOW_KT`] (40 kt): taxiing, parked, or
//!   the first seconds of a take-off roll; no aeroplane flies that slowly, so a
//!   low pass or an approach is not counted. A position's speed is the average
//!   over the interval to the next position (the first) or from the previous one
//!   (the last): positions come every 10 s. A flight of a single position has no
//!   speed: it counts as slow.
//! - **and low**: its altitude is within [`ALT_TOLERANCE_FT`] (±500 ft) of the
//!   airport's field elevation. Positions carry the height above the WGS84
//!   *ellipsoid* (FlightGear's ECEF position), not above mean sea level: the geoid
//!   lies up to about 106 m (350 ft) above or below the ellipsoid, the field
//!   elevation is one point of the field, and the aircraft's reference point sits
//!   some feet above its wheels, so the tolerance is generous. A slow helicopter
//!   or balloon higher than that is not at the airport. Where the table has no
//!   field elevation (about 13% of its airports, mostly small strips), low is
//!   below [`HIGHEST_FIELD_FT`] (16,200 ft, the table's highest field) plus the
//!   tolerance: there the speed all but decides alone.
//!
//! 5 km covers the largest fields from their reference point (Heathrow's runways
//! are 3.9 km long, its stands about 2 km from the reference point). The nearest
//! airport wins (ties: the larger kind, then the lower ident: the table's rule).
//!
//! The **departure** is the airport the flight's first placed position is at; the
//! **arrival** the airport its last placed position is at. A pilot who joins in
//! mid-air (FlightGear's `--in-air`, or a relay that saw the pilot only later) has
//! no departure; one who disconnects in cruise, or over the open sea, has no
//! arrival. A position is **placed** when its altitude is above
//! [`UNPLACED_BELOW_FT`] (-2,000 ft): FlightGear sends -9,999 ft before its scenery
//! has loaded (the on-ground capture in `testdata/fg/samples` shows it), and no
//! airport lies lower than about -1,300 ft (Bar Yehuda, by the Dead Sea).
//!
//! # Moving time
//!
//! A flight's moving time is the sum of the intervals between its consecutive
//! positions whose average ground speed is above [`MOVING_KT`] (5 kt, 26 m in 10 s:
//! more than a parked aircraft's jitter) and at most
//! [`crate::track::MAX_SPEED_KT`] (a faster jump is a relocation, not a move).
//! Every position reported counts (every 10 s), not only the stored ones.

use crate::track::{distance_nm, Fix, MAX_SPEED_KT};

/// How far from an airport's reference point a position may be to be at it, metres.
pub const AIRPORT_RADIUS_M: f64 = 5_000.0;
/// Ground speed below which a position is slow (on the ground), knots.
pub const SLOW_KT: f64 = 40.0;
/// How far above or below the field elevation a position may be to be low, feet.
pub const ALT_TOLERANCE_FT: f64 = 500.0;
/// Positions at or below this altitude are not placed yet (FlightGear's -9,999 ft
/// before the scenery loads), feet.
pub const UNPLACED_BELOW_FT: f64 = -2_000.0;
/// Ground speed above which an interval counts as moving, knots.
pub const MOVING_KT: f64 = 5.0;
/// The highest field elevation in the table (Daulat Beg Oldi, 16,200 ft): what a
/// field of unknown elevation is taken to be at most, feet.
pub const HIGHEST_FIELD_FT: f64 = 16_200.0;

/// Whether `fix` is placed (not FlightGear's altitude before its scenery loaded).
pub fn placed(fix: Fix) -> bool {
    fix.alt_ft.is_finite()
        && fix.alt_ft > UNPLACED_BELOW_FT
        && fix.lat.is_finite()
        && fix.lon.is_finite()
}

/// The average ground speed from `a` at `ta` to `b` at `tb`, knots; `None` when no
/// time passed.
pub fn speed_kt(ta: i64, a: Fix, tb: i64, b: Fix) -> Option<f64> {
    let dt = tb.checked_sub(ta)?;
    if dt <= 0 {
        return None;
    }
    Some(distance_nm(a, b) / (dt as f64 / 3600.0))
}

/// The seconds the interval from `a` at `ta` to `b` at `tb` adds to the moving
/// time: all of them when moving (its average speed above [`MOVING_KT`], at most
/// [`MAX_SPEED_KT`]) between two placed positions, none otherwise.
pub fn moving_secs(ta: i64, a: Fix, tb: i64, b: Fix) -> i64 {
    match speed_kt(ta, a, tb, b) {
        Some(kt) if placed(a) && placed(b) && kt > MOVING_KT && kt <= MAX_SPEED_KT => tb - ta,
        _ => 0,
    }
}

/// The airport `fix` is at, moving at `speed_kt` (`None`: unknown, counted as
/// slow), by the rule of this module: its ident.
pub fn airport_at(fix: Fix, speed_kt: Option<f64>) -> Option<&'static str> {
    if !placed(fix) || speed_kt.is_some_and(|s| s.is_nan() || s >= SLOW_KT) {
        return None;
    }
    let (a, _) = airports::table().nearest(fix.lat, fix.lon, AIRPORT_RADIUS_M)?;
    let low = match a.elevation_ft {
        Some(e) => (fix.alt_ft - f64::from(e)).abs() <= ALT_TOLERANCE_FT,
        None => fix.alt_ft <= HIGHEST_FIELD_FT + ALT_TOLERANCE_FT,
    };
    low.then_some(a.ident)
}

/// A track's logbook facts, from its positions in time order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Logbook {
    /// The departure airport's ident.
    pub departure: Option<&'static str>,
    /// The arrival airport's ident.
    pub arrival: Option<&'static str>,
    /// Moving seconds.
    pub moving_s: i64,
}

/// The departure, arrival and moving time of a whole track (positions in time
/// order; what [`crate::flights::Flights`] computes as they come).
pub fn of_track(track: &[(i64, Fix)]) -> Logbook {
    let mut out = Logbook::default();
    for w in track.windows(2) {
        let ((ta, a), (tb, b)) = (w[0], w[1]);
        out.moving_s += moving_secs(ta, a, tb, b);
    }
    let placed_at: Vec<usize> = (0..track.len()).filter(|&i| placed(track[i].1)).collect();
    if let Some(&i) = placed_at.first() {
        let speed = track
            .get(i + 1)
            .and_then(|n| speed_kt(track[i].0, track[i].1, n.0, n.1));
        out.departure = airport_at(track[i].1, speed);
    }
    if let Some(&i) = placed_at.last() {
        let speed = i
            .checked_sub(1)
            .and_then(|p| speed_kt(track[p].0, track[p].1, track[i].0, track[i].1));
        out.arrival = airport_at(track[i].1, speed);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fix(lat: f64, lon: f64, alt_ft: f64) -> Fix {
        Fix {
            lat,
            lon,
            alt_ft,
            heading: 0.0,
        }
    }

    /// Every 10 s from `t0`: `n` positions moving from `a` to `b` linearly in
    /// latitude, longitude and altitude.
    fn leg(t0: i64, n: i64, a: Fix, b: Fix) -> Vec<(i64, Fix)> {
        (0..n)
            .map(|i| {
                let k = i as f64 / (n - 1).max(1) as f64;
                (
                    t0 + 10 * i,
                    fix(
                        a.lat + (b.lat - a.lat) * k,
                        a.lon + (b.lon - a.lon) * k,
                        a.alt_ft + (b.alt_ft - a.alt_ft) * k,
                    ),
                )
            })
            .collect()
    }

    // Heathrow's stands and Gatwick's, at about their field elevations (83, 202 ft).
    const EGLL_STAND: (f64, f64) = (51.4710, -0.4545);
    const EGKK_STAND: (f64, f64) = (51.1565, -0.1616);

    /// Parked 2 minutes at EGLL, taxi and take-off, cruise at 4,000 ft, landing and
    /// taxi at EGKK, parked 2 minutes.
    pub(crate) fn egll_to_egkk() -> Vec<(i64, Fix)> {
        let mut t = vec![];
        let stand = fix(EGLL_STAND.0, EGLL_STAND.1, 90.0);
        t.extend(leg(0, 12, stand, stand));
        // Taxi 1 km in 2 minutes (16 kt), roll 2 km in 40 s (97 kt), climb.
        let hold = fix(51.4645, -0.4700, 90.0);
        t.extend(leg(120, 12, stand, hold));
        let lift = fix(51.4645, -0.4410, 90.0);
        t.extend(leg(240, 4, hold, lift));
        let top = fix(51.30, -0.30, 4000.0);
        t.extend(leg(280, 50, lift, top));
        let short = fix(51.1480, -0.2200, 210.0);
        t.extend(leg(780, 40, top, short));
        // Roll out and taxi to the stand at 15 kt.
        let vacate = fix(51.1520, -0.1750, 210.0);
        t.extend(leg(1180, 6, short, vacate));
        let gate = fix(EGKK_STAND.0, EGKK_STAND.1, 205.0);
        t.extend(leg(1240, 8, vacate, gate));
        t.extend(leg(1320, 12, gate, gate));
        t
    }

    #[test]
    fn a_flight_from_heathrow_to_gatwick_departs_and_arrives_and_moved_while_it_moved() {
        let t = egll_to_egkk();
        let l = of_track(&t);
        assert_eq!(l.departure, Some("EGLL"));
        assert_eq!(l.arrival, Some("EGKK"));
        // Parked 2 minutes at each end: not moving; every interval between moves.
        let total = t.last().unwrap().0 - t[0].0;
        assert!(l.moving_s < total - 200, "{} of {total}", l.moving_s);
        assert!(l.moving_s > total - 300, "{} of {total}", l.moving_s);
    }

    #[test]
    fn a_mid_air_join_has_no_departure_and_a_mid_air_leave_no_arrival() {
        let t = egll_to_egkk();
        // Joined at 2,000 ft over Heathrow, 120 kt: no departure.
        let over = fix(51.4706, -0.4619, 2000.0);
        let mut joined = leg(0, 3, over, fix(51.4706, -0.4150, 2100.0));
        let off = joined[2].0;
        joined.extend(t[40..].iter().map(|(s, f)| (s + off, *f)));
        let l = of_track(&joined);
        assert_eq!((l.departure, l.arrival), (None, Some("EGKK")));
        // Left at cruise: no arrival.
        let l = of_track(&t[..60]);
        assert_eq!((l.departure, l.arrival), (Some("EGLL"), None));
        // A low, fast pass over Gatwick's runway at 100 ft (120 kt) is no arrival.
        let pass = leg(
            0,
            3,
            fix(51.1480, -0.2200, 300.0),
            fix(51.1480, -0.1630, 300.0),
        );
        assert_eq!(of_track(&pass).arrival, None);
        // Hovering slowly 2,000 ft above Gatwick is not at Gatwick.
        let hover = leg(
            0,
            3,
            fix(51.1481, -0.1903, 2200.0),
            fix(51.1482, -0.1903, 2200.0),
        );
        assert_eq!(of_track(&hover), Logbook::default());
    }

    #[test]
    fn the_open_sea_has_no_airport_and_the_antimeridian_is_no_edge() {
        // Parked on a ship in the North Atlantic: slow and low, no airport within 5 km.
        let sea = fix(50.0, -30.0, 30.0);
        let l = of_track(&leg(0, 10, sea, sea));
        assert_eq!((l.departure, l.arrival, l.moving_s), (None, None, 0));
        // Across the antimeridian: from Rabi Island (NFFR, 179.9757 E, 88 ft) east
        // over the line to 179.99 W, 3.7 km in 10 minutes (12 kt): distance and
        // speed are measured across it, and Rabi is still the nearest field.
        let across: Vec<(i64, Fix)> = (0..61)
            .map(|i| {
                let lon = 179.9757 + 0.0343 * f64::from(i) / 60.0;
                let lon = if lon > 180.0 { lon - 360.0 } else { lon };
                (10 * i64::from(i), fix(-16.5337, lon, 95.0))
            })
            .collect();
        assert!(across.last().unwrap().1.lon < -179.98);
        assert!(across.windows(2).all(|w| {
            let s = speed_kt(w[0].0, w[0].1, w[1].0, w[1].1).unwrap();
            s > 10.0 && s < 14.0
        }));
        let l = of_track(&across);
        assert_eq!(
            (l.departure, l.arrival, l.moving_s),
            (Some("NFFR"), Some("NFFR"), 600)
        );
    }

    #[test]
    fn unplaced_positions_and_the_field_elevation_decide_nothing_alone() {
        // FlightGear's -9999 ft before the scenery loaded: the next placed position
        // decides.
        let stand = fix(EGLL_STAND.0, EGLL_STAND.1, 90.0);
        let mut t = vec![(0, fix(EGLL_STAND.0, EGLL_STAND.1, -9999.0))];
        t.extend(leg(10, 5, stand, stand));
        assert_eq!(of_track(&t).departure, Some("EGLL"));
        assert_eq!(of_track(&t[..1]), Logbook::default());
        // One position: no speed, counted as slow.
        assert_eq!(of_track(&t[1..2]).departure, Some("EGLL"));
        // 600 ft above the field elevation (83 ft) is too high, 400 ft is not.
        let at = |alt| {
            of_track(&leg(
                0,
                2,
                fix(51.4706, -0.4619, alt),
                fix(51.4706, -0.4619, alt),
            ))
        };
        assert_eq!(at(83.0 + 600.0).departure, None);
        assert_eq!(at(83.0 + 400.0).departure, Some("EGLL"));
        assert_eq!(at(83.0 - 400.0).departure, Some("EGLL"));
        assert!(!placed(fix(f64::NAN, 0.0, 0.0)));
        let (all, _) =
            airports::table().within(airports::BBox::WORLD, airports::Kind::Seaplane, usize::MAX);
        let highest = all.iter().filter_map(|a| a.elevation_ft).max().unwrap();
        assert_eq!(f64::from(highest), HIGHEST_FIELD_FT);
        let lowest = all.iter().filter_map(|a| a.elevation_ft).min().unwrap();
        assert!(
            f64::from(lowest) - ALT_TOLERANCE_FT > UNPLACED_BELOW_FT,
            "{lowest}"
        );
        // 5 kt for 10 s is 0.01389 nm: just below and above it.
        let a = fix(0.0, 0.0, 0.0);
        let east = |nm: f64| fix(0.0, nm / 60.0, 0.0);
        assert_eq!(moving_secs(0, a, 10, east(0.0135)), 0);
        assert_eq!(moving_secs(0, a, 10, east(0.0143)), 10);
        assert_eq!(
            moving_secs(0, a, 10, east(2000.0 / 360.0 + 0.1)),
            0,
            "a jump"
        );
        assert_eq!(
            moving_secs(0, fix(0.0, 0.0, -9999.0), 10, east(1.0)),
            0,
            "unplaced"
        );
        assert_eq!(moving_secs(10, a, 10, east(1.0)), 0, "no time");
    }

    #[test]
    fn a_real_on_ground_capture_is_at_keflavik() {
        // testdata/fg: the on-ground recording at BIKF (FlightGear 2020.3.16).
        // Its first datagram was sent before the scenery loaded (-9999 ft); a later
        // one is parked at 44.3 m above the ellipsoid (BIKF: 171 ft).
        let read = |name: &str| -> (Fix, f64) {
            let path = format!(
                "{}/../../testdata/fg/samples/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let d = std::fs::read(path).unwrap();
            let p = fgmp::message::Position::decode(&d[fgmp::HEADER_LEN..]).unwrap();
            let g = fgmp::geo::from_ecef(p.position);
            let kt = fgmp::attitude::ground_speed_kt(p.position, p.orientation, p.linear_vel);
            (
                fix(g.lat_deg, g.lon_deg, g.alt_m * fgmp::geo::FEET_PER_METRE),
                kt,
            )
        };
        let (before, _) = read("c172p_TEST1_onground_before_scenery_-9999ft.bin");
        let (parked, kt) = read("c172p_TEST1_telnet_chat_run1.bin");
        assert!(!placed(before), "{before:?}");
        assert!(kt < 1.0, "parked: {kt} kt");
        assert_eq!(airport_at(parked, Some(kt)), Some("BIKF"));
        let l = of_track(&[(0, before), (10, parked), (20, parked)]);
        assert_eq!(
            (l.departure, l.arrival, l.moving_s),
            (Some("BIKF"), Some("BIKF"), 0)
        );
        // The .lpf flight started in the air: 3,000 ft and 100 kt by BIKF.
        let (air, kt) = read("c172p_TEST1_first_datagram.bin");
        assert!(placed(air) && air.alt_ft > 2900.0, "{air:?} {kt}");
        assert_eq!(airport_at(air, Some(100.0)), None);
        assert_eq!(airport_at(air, None), None, "too high even if slow");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn never_panics_and_fast_or_high_first_positions_depart_from_nowhere(
            pts in proptest::collection::vec(
                (-1000i64..100_000, -100.0f64..100.0, -400.0f64..400.0, -20_000.0f64..60_000.0),
                0..20,
            ),
            first_kt in 41.0f64..1000.0,
            alt in 17_000.0f64..60_000.0,
            lat in -90.0f64..90.0,
            lon in -180.0f64..180.0,
        ) {
            let mut t: Vec<(i64, Fix)> = pts.iter().map(|&(s, la, lo, a)| (s, fix(la, lo, a))).collect();
            t.sort_by_key(|p| p.0);
            let l = of_track(&t);
            prop_assert!(l.moving_s >= 0);
            prop_assert!(l.moving_s <= t.last().map_or(0, |p| p.0) - t.first().map_or(0, |p| p.0));
            // Fast: the next position 10 s on, first_kt away; high: no airport is
            // higher than 16,200 ft (Daulat Beg Oldi), so above it plus the tolerance nothing is low.
            let a = fix(lat, lon, 100.0);
            let (blat, blon) = fgmp::geo::destination(lat, lon, 90.0, first_kt * 10.0 / 3600.0);
            let fast = [(0, a), (10, fix(blat, blon, 100.0))];
            prop_assert_eq!(of_track(&fast).departure, None);
            let high = [(0, fix(lat, lon, alt)), (10, fix(lat, lon, alt))];
            prop_assert_eq!(of_track(&high).departure, None);
            prop_assert_eq!(airport_at(fix(lat, lon, alt), None), None);
        }
    }
}
