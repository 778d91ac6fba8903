//! `fgmp::attitude` against the real FlightGear 2020.3.16 captures in `testdata/fg`
//! (TEST1, a c172p started in the air near BIKF at 3000 ft, 100 kt, heading 280; see
//! its README), hand-computed vectors, and properties.

use fgmp::attitude::*;
use fgmp::geo::{self, Geodetic};
use fgmp::message::{Body, Message};
use fgmp::Position;
use proptest::prelude::*;
use std::f64::consts::PI;
use std::fs;

mod capture;
use capture::{data_path, lpf, read};

fn position(dgram: &[u8]) -> Position {
    match Message::decode(dgram).expect("valid datagram").body {
        Body::Position(p) => p,
        other => panic!("not a position: {other:?}"),
    }
}

/// The 400 positions of `c172p_TEST1_400.lpf`, index 0 = datagram 1.
fn positions() -> Vec<Position> {
    let ps: Vec<Position> = lpf("c172p_TEST1_400.lpf")
        .iter()
        .map(|d| position(d))
        .collect();
    assert_eq!(ps.len(), 400);
    ps
}

/// `t_rel_s` (receive time) of each datagram from the index, index 0 = datagram 1.
fn receive_times() -> Vec<f64> {
    let index = fs::read_to_string(data_path("c172p_TEST1_400.index.tsv")).expect("index");
    let t: Vec<f64> = index
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split('\t')
                .nth(2)
                .and_then(|s| s.parse().ok())
                .expect("t_rel_s column")
        })
        .collect();
    assert_eq!(t.len(), 400);
    t
}

/// `a - b` in degrees, wrapped to `(-180, 180]`.
fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    if d > 180.0 {
        d - 360.0
    } else {
        d
    }
}

/// North, east, down components of the ECEF displacement `to - from`, in the local frame
/// at `from` (written out here from the geodetic latitude and longitude, independently of
/// the module's quaternions).
fn ned_displacement(from: [f64; 3], to: [f64; 3]) -> [f64; 3] {
    let g = geo::from_ecef(from);
    let (sl, cl) = g.lat_deg.to_radians().sin_cos();
    let (so, co) = g.lon_deg.to_radians().sin_cos();
    let d = [to[0] - from[0], to[1] - from[1], to[2] - from[2]];
    [
        -sl * co * d[0] - sl * so * d[1] + cl * d[2],
        -so * d[0] + co * d[1],
        -cl * co * d[0] - cl * so * d[1] - sl * d[2],
    ]
}

fn speed_ms(p: &Position) -> f64 {
    ground_speed_kt(p.position, p.orientation, p.linear_vel) * METRES_PER_SECOND_PER_KNOT
}

fn assert_vec_close(got: [f32; 3], want: [f64; 3], tol: f64, what: &str) {
    for i in 0..3 {
        assert!(
            (f64::from(got[i]) - want[i]).abs() < tol,
            "{what}: {got:?} vs {want:?}"
        );
    }
}

#[test]
fn datagram_1_is_the_trimmed_start_near_bikf() {
    let p = position(&lpf("c172p_TEST1_400.lpf")[0]);
    let g = geo::from_ecef(p.position);
    assert!((g.lat_deg - 63.985).abs() < 0.5, "lat {}", g.lat_deg);
    assert!((g.lon_deg + 22.605).abs() < 0.5, "lon {}", g.lon_deg);
    // The README's figures, to the digits it prints.
    assert!((g.lat_deg - 63.983133).abs() < 1e-6, "lat {}", g.lat_deg);
    assert!((g.lon_deg + 22.59145).abs() < 1e-6, "lon {}", g.lon_deg);
    assert!((g.alt_m - 914.4).abs() < 0.01, "alt {} (3000 ft)", g.alt_m);

    let a = attitude(p.position, p.orientation);
    assert!(
        angle_diff(a.heading_deg, 280.0).abs() < 1.0,
        "heading {}",
        a.heading_deg
    );
    // Seen: heading 280.000, pitch 0.424, roll 0.000.
    assert!(a.pitch_deg.abs() < 2.0, "pitch {}", a.pitch_deg);
    assert!(a.roll_deg.abs() < 1.0, "roll {}", a.roll_deg);
    // The README: linear velocity 0 in the first datagram.
    assert_eq!(p.linear_vel, [0.0; 3]);
    assert_eq!(
        ground_speed_kt(p.position, p.orientation, p.linear_vel),
        0.0
    );
    assert_eq!(track_deg(p.position, p.orientation, p.linear_vel), 0.0);
}

#[test]
fn orientation_reproduces_what_flightgear_sent() {
    // FlightGear writes getAngleAxis of qEc2Hl * fromYawPitchRoll(h, p, r) with h in
    // [0, 2π) (JSBSim's psi): the inverse gives the very vectors of the captures, sign and
    // all (angles above π included), to f32 precision.
    let mut all = positions();
    all.push(position(&read("samples/c172p_TEST1_position.bin")));
    let mut above_pi = 0;
    for (i, p) in all.iter().enumerate() {
        let a = attitude(p.position, p.orientation);
        let o = orientation(p.position, a);
        let sent = [
            f64::from(p.orientation[0]),
            f64::from(p.orientation[1]),
            f64::from(p.orientation[2]),
        ];
        assert_vec_close(o, sent, 2e-5, &format!("datagram {}", i + 1));
        if sent.iter().map(|v| v * v).sum::<f64>().sqrt() > PI {
            above_pi += 1;
        }
    }
    assert!(
        above_pi > 50,
        "the captures hold angles above π ({above_pi})"
    );
}

#[test]
fn heading_is_smooth_over_datagrams_101_to_400() {
    let ps = positions();
    let atts: Vec<Attitude> = ps[100..]
        .iter()
        .map(|p| attitude(p.position, p.orientation))
        .collect();
    let mut crossed_north = false;
    for (k, w) in atts.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        let n = k + 101;
        let d = angle_diff(b.heading_deg, a.heading_deg);
        assert!(
            d.abs() < 3.0,
            "datagram {n} -> {}: heading {a:?} -> {b:?}",
            n + 1
        );
        assert!(
            (b.pitch_deg - a.pitch_deg).abs() < 3.0,
            "datagram {n}: {a:?} -> {b:?}"
        );
        assert!(
            angle_diff(b.roll_deg, a.roll_deg).abs() < 3.0,
            "datagram {n}: {a:?} -> {b:?}"
        );
        if (a.heading_deg - b.heading_deg).abs() > 180.0 {
            crossed_north = true;
        }
    }
    // A left turn through north: seen from 12.8 down through 0/360 to 109.9.
    assert!(crossed_north, "the turn crosses 0/360");
    for a in &atts {
        assert!((0.0..360.0).contains(&a.heading_deg), "{a:?}");
        assert!(a.pitch_deg.abs() < 20.0 && a.roll_deg.abs() < 45.0, "{a:?}");
    }
}

#[test]
fn ground_speed_matches_the_positions_over_datagrams_101_to_400() {
    let ps = positions();
    let t_recv = receive_times();
    let block = &ps[100..];

    let mut min_kt = f64::INFINITY;
    let mut max_kt = 0.0f64;
    for (k, w) in block.windows(2).enumerate() {
        let (a, b) = (&w[0], &w[1]);
        let n = k + 101;
        let kt = ground_speed_kt(a.position, a.orientation, a.linear_vel);
        min_kt = min_kt.min(kt);
        max_kt = max_kt.max(kt);
        assert!((60.0..=130.0).contains(&kt), "datagram {n}: {kt} kt");

        // The message's own clock (the sender's simulation time) dates each position.
        let dt = b.time - a.time;
        assert!(dt > 0.03 && dt < 0.3, "datagram {n}: dt {dt}");
        let d = ned_displacement(a.position, b.position);
        let moved = d[0].hypot(d[1]) / dt;
        let reported = 0.5 * (speed_ms(a) + speed_ms(b));
        assert!(
            (moved - reported).abs() < 0.005 * reported,
            "datagram {n}: moved {moved} m/s, velocity says {reported} m/s"
        );
        // The direction of travel: the velocity's track against the displacement's.
        let moved_track = d[1].atan2(d[0]).to_degrees();
        let ta = track_deg(a.position, a.orientation, a.linear_vel);
        let tb = track_deg(b.position, b.orientation, b.linear_vel);
        let track = ta + 0.5 * angle_diff(tb, ta);
        assert!(
            angle_diff(moved_track, track).abs() < 0.5,
            "datagram {n}: moved along {moved_track}, velocity track {track}"
        );
        // And the vertical: down velocity against the altitude change.
        let climb = (geo::from_ecef(b.position).alt_m - geo::from_ecef(a.position).alt_m) / dt;
        let down = 0.5
            * (ned_velocity(a.position, a.orientation, a.linear_vel)[2]
                + ned_velocity(b.position, b.orientation, b.linear_vel)[2]);
        assert!(
            (climb + down).abs() < 0.3,
            "datagram {n}: climbs {climb} m/s, down velocity {down} m/s"
        );
    }
    // Seen: 64.1 to 77.3 kt; the steps agree with the velocity to 0.04 % in speed,
    // 0.05° in track and 0.1 m/s vertically.
    assert!(min_kt > 60.0 && max_kt < 90.0, "{min_kt} .. {max_kt} kt");

    // Over the whole 30 s by the receive times of the index: the path length against the
    // mean ground speed.
    let path: f64 = block
        .windows(2)
        .map(|w| {
            let d = ned_displacement(w[0].position, w[1].position);
            d[0].hypot(d[1])
        })
        .sum();
    let elapsed = t_recv[399] - t_recv[100];
    assert!(
        (elapsed - 30.0).abs() < 0.5,
        "t = 97.5 .. 127.5 s: {elapsed}"
    );
    let mean: f64 =
        block[..block.len() - 1].iter().map(speed_ms).sum::<f64>() / (block.len() - 1) as f64;
    let moved = path / elapsed;
    assert!(
        (moved - mean).abs() < 0.005 * mean,
        "path {path} m in {elapsed} s = {moved} m/s, velocity mean {mean} m/s"
    );
}

#[test]
fn position_sample_speed() {
    // README: altitude 732.5 m, about 40.7 m/s.
    let p = position(&read("samples/c172p_TEST1_position.bin"));
    assert!((geo::from_ecef(p.position).alt_m - 732.5).abs() < 0.1);
    let v = p.linear_vel.map(f64::from);
    let magnitude = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    assert!((magnitude - 40.7).abs() < 0.5, "|v| {magnitude} m/s");
    let ned = ned_velocity(p.position, p.orientation, p.linear_vel);
    let ned_mag = (ned[0] * ned[0] + ned[1] * ned[1] + ned[2] * ned[2]).sqrt();
    assert!(
        (ned_mag - magnitude).abs() < 1e-4,
        "a rotation keeps the length"
    );
    let ground = speed_ms(&p);
    // Seen: 79.3 kt = 40.80 m/s over the ground, 0.77 m/s climbing.
    assert!(
        ground <= magnitude + 1e-9 && ground > 0.98 * magnitude,
        "{ground} m/s of {magnitude}"
    );
    let kt = ground_speed_kt(p.position, p.orientation, p.linear_vel);
    assert!(
        (kt - 40.7 / METRES_PER_SECOND_PER_KNOT).abs() < 1.5,
        "{kt} kt"
    );
}

const C: f64 = 2.0 * PI / (3.0 * 1.732_050_807_568_877_2); // (2π/3) / √3

#[test]
fn hand_computed_vectors() {
    let equator_greenwich = geo::to_ecef(Geodetic {
        lat_deg: 0.0,
        lon_deg: 0.0,
        alt_m: 0.0,
    });
    let equator_90e = geo::to_ecef(Geodetic {
        lat_deg: 0.0,
        lon_deg: 90.0,
        alt_m: 0.0,
    });
    let north_pole = geo::to_ecef(Geodetic {
        lat_deg: 90.0,
        lon_deg: 0.0,
        alt_m: 0.0,
    });
    let level = |h: f64| Attitude {
        heading_deg: h,
        pitch_deg: 0.0,
        roll_deg: 0.0,
    };
    let cases = [
        // fromLonLatRad(0, 0) is a turn of -90° about y: w = cos 45°, y = -sin 45°,
        // so angle π/2 about -y.
        (equator_greenwich, level(0.0), [0.0, -PI / 2.0, 0.0]),
        // Then heading 90: (½, -½, -½, ½), 120° about (-1, -1, 1)/√3.
        (equator_greenwich, level(90.0), [-C, -C, C]),
        // fromLonLatRad(π/2, 0): (½, ½, -½, ½), 120° about (1, -1, 1)/√3.
        (equator_90e, level(0.0), [C, -C, C]),
        // fromLonLatRad(0, π/2) is a turn of -180° about y: angle π about -y.
        (north_pole, level(0.0), [0.0, -PI, 0.0]),
    ];
    for (p, a, want) in cases {
        let o = orientation(p, a);
        assert_vec_close(o, want, 1e-6, &format!("{a:?} at {p:?}"));
        let back = attitude(p, o);
        assert!(
            angle_diff(back.heading_deg, a.heading_deg).abs() < 1e-4,
            "{back:?}"
        );
        assert!(
            back.pitch_deg.abs() < 1e-4 && back.roll_deg.abs() < 1e-4,
            "{back:?}"
        );
    }

    // The nose of a level aircraft heading east on the equator at 0 E points along ECEF +y;
    // body velocity along it is all east.
    let o = orientation(equator_greenwich, level(90.0));
    let ned = ned_velocity(equator_greenwich, o, [10.0, 0.0, 0.0]);
    assert!(ned[0].abs() < 1e-5 && (ned[1] - 10.0).abs() < 1e-5 && ned[2].abs() < 1e-5);
    // Body z (down) is always local down, whatever the heading.
    let ned = ned_velocity(
        equator_90e,
        orientation(equator_90e, level(123.0)),
        [0.0, 0.0, 5.0],
    );
    assert!(ned[0].abs() < 1e-5 && ned[1].abs() < 1e-5 && (ned[2] - 5.0).abs() < 1e-5);
    // 100 kt along the nose.
    let v = (100.0 * METRES_PER_SECOND_PER_KNOT) as f32;
    let kt = ground_speed_kt(equator_greenwich, o, [v, 0.0, 0.0]);
    assert!((kt - 100.0).abs() < 1e-4, "{kt}");
    assert!((track_deg(equator_greenwich, o, [v, 0.0, 0.0]) - 90.0).abs() < 1e-4);
}

#[test]
fn zero_vector_is_the_identity() {
    // The identity ECEF→body rotation at 0 N 0 E: the nose along ECEF x (up), the right
    // wing along y (east), the belly along z (north). fromLonLatRad(0, 0) is 90° of pitch
    // away from it: the nose straight up, heading and roll split as SimGear does.
    let p = geo::to_ecef(Geodetic {
        lat_deg: 0.0,
        lon_deg: 0.0,
        alt_m: 0.0,
    });
    let a = attitude(p, [0.0; 3]);
    assert!((a.pitch_deg - 90.0).abs() < 1e-6, "{a:?}");
    let ned = ned_velocity(p, [0.0; 3], [1.0, 2.0, 3.0]);
    // body x = up, y = east, z = north.
    assert!((ned[0] - 3.0).abs() < 1e-9 && (ned[1] - 2.0).abs() < 1e-9);
    assert!((ned[2] + 1.0).abs() < 1e-9, "{ned:?}");
}

#[test]
fn non_finite_inputs_give_zeros() {
    let p = [2_664_000.0, -1_109_000.0, 5_709_000.0];
    let o = [-1.6, 2.96, 0.6];
    let zero = Attitude::default();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(attitude([bad, 0.0, 0.0], o), zero);
        assert_eq!(ned_velocity([0.0, bad, 0.0], o, [1.0; 3]), [0.0; 3]);
        assert_eq!(ground_speed_kt([0.0, 0.0, bad], o, [1.0; 3]), 0.0);
        assert_eq!(track_deg([0.0, 0.0, bad], o, [1.0; 3]), 0.0);
        let a = Attitude {
            heading_deg: bad,
            ..zero
        };
        assert_eq!(orientation(p, a), [0.0; 3]);
        assert_eq!(body_velocity(p, o, [bad, 0.0, 0.0]), [0.0; 3]);
    }
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(attitude(p, [0.0, bad, 0.0]), zero);
        assert_eq!(ned_velocity(p, [0.0, 0.0, bad], [1.0; 3]), [0.0; 3]);
        assert_eq!(ned_velocity(p, o, [bad, 1.0, 1.0]), [0.0; 3]);
        assert_eq!(ground_speed_kt(p, o, [1.0, bad, 1.0]), 0.0);
        assert_eq!(track_deg(p, o, [1.0, 1.0, bad]), 0.0);
    }
}

fn earth_position() -> impl Strategy<Value = [f64; 3]> {
    (-90.0f64..=90.0, -180.0f64..180.0, -500.0f64..20_000.0).prop_map(|(lat, lon, alt)| {
        geo::to_ecef(Geodetic {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: alt,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn attitude_inverts_orientation(
        p in earth_position(),
        heading in 0.0f64..360.0,
        pitch in -85.0f64..85.0,
        roll in -180.0f64..180.0,
    ) {
        let a = Attitude { heading_deg: heading, pitch_deg: pitch, roll_deg: roll };
        let back = attitude(p, orientation(p, a));
        prop_assert!(angle_diff(back.heading_deg, heading).abs() < 1e-3, "{a:?} -> {back:?}");
        prop_assert!((back.pitch_deg - pitch).abs() < 1e-3, "{a:?} -> {back:?}");
        prop_assert!(angle_diff(back.roll_deg, roll).abs() < 1e-3, "{a:?} -> {back:?}");
    }

    #[test]
    fn nose_velocity_at_zero_pitch_is_ground_speed_and_track(
        p in earth_position(),
        heading in 0.0f64..360.0,
        roll in -180.0f64..180.0,
        v in 1.0f32..400.0,
    ) {
        let a = Attitude { heading_deg: heading, pitch_deg: 0.0, roll_deg: roll };
        let o = orientation(p, a);
        let kt = ground_speed_kt(p, o, [v, 0.0, 0.0]);
        let want = f64::from(v) / METRES_PER_SECOND_PER_KNOT;
        prop_assert!((kt - want).abs() < 1e-5 * want, "{kt} kt, want {want}");
        let track = track_deg(p, o, [v, 0.0, 0.0]);
        prop_assert!(angle_diff(track, heading).abs() < 1e-3, "track {track}, heading {heading}");
        prop_assert!((0.0..360.0).contains(&track));
    }

    #[test]
    fn body_velocity_inverts_ned_velocity(
        p in earth_position(),
        o in prop::array::uniform3(-7.0f32..7.0),
        ned in prop::array::uniform3(-300.0f64..300.0),
    ) {
        let body = body_velocity(p, o, ned);
        let back = ned_velocity(p, o, body);
        for i in 0..3 {
            prop_assert!((back[i] - ned[i]).abs() < 1e-3, "{ned:?} -> {body:?} -> {back:?}");
        }
    }

    #[test]
    fn any_finite_input_gives_finite_output_in_range(
        p in prop::array::uniform3(prop::num::f64::NORMAL | prop::num::f64::ZERO | prop::num::f64::SUBNORMAL),
        o in prop::array::uniform3(prop::num::f32::NORMAL | prop::num::f32::ZERO | prop::num::f32::SUBNORMAL),
        v in prop::array::uniform3(prop::num::f32::NORMAL | prop::num::f32::ZERO),
        angles in prop::array::uniform3(prop::num::f64::NORMAL | prop::num::f64::ZERO),
    ) {
        let a = attitude(p, o);
        prop_assert!((0.0..360.0).contains(&a.heading_deg), "{a:?}");
        prop_assert!((-90.0..=90.0).contains(&a.pitch_deg), "{a:?}");
        prop_assert!((-180.0..=180.0).contains(&a.roll_deg), "{a:?}");
        let ned = ned_velocity(p, o, v);
        prop_assert!(ned.iter().all(|x| x.is_finite()), "{ned:?}");
        let kt = ground_speed_kt(p, o, v);
        prop_assert!(kt.is_finite() && kt >= 0.0);
        let t = track_deg(p, o, v);
        prop_assert!((0.0..360.0).contains(&t));
        let back = orientation(p, Attitude { heading_deg: angles[0], pitch_deg: angles[1], roll_deg: angles[2] });
        prop_assert!(back.iter().all(|x| x.is_finite()), "{back:?}");
        let b = body_velocity(p, o, ned);
        prop_assert!(b.iter().all(|x| x.is_finite()), "{b:?}");
    }
}
