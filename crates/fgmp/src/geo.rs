//! WGS-84 conversions between ECEF metres and geodetic latitude/longitude/altitude,
//! and the workspace's one great-circle geometry.
//!
//! - [`to_ecef`], [`from_ecef`]: the telnet pilot list (which prints lat, lon and
//!   altitude in feet) and tools that place pilots at airports.
//! - [`chord_nm`]: the straight line through the Earth between two ECEF points,
//!   fgms's range (who receives whom).
//! - [`great_circle_m`], [`great_circle_nm`], [`destination`], [`initial_course`]:
//!   distances and courses over the surface, on a sphere of the mean radius
//!   [`EARTH_RADIUS_M`]. Every crate measuring along the ground calls these (the
//!   airport table, the API's `near` filters, the flight log's distance flown).

const A: f64 = 6_378_137.0;
const F: f64 = 1.0 / 298.257_223_563;
const E2: f64 = F * (2.0 - F);
/// Feet per metre, as SimGear converts.
pub const FEET_PER_METRE: f64 = 3.280_839_895_013_123;

/// Geodetic coordinates: degrees and metres above the ellipsoid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geodetic {
    /// Latitude in degrees, north positive.
    pub lat_deg: f64,
    /// Longitude in degrees, east positive.
    pub lon_deg: f64,
    /// Height above the WGS-84 ellipsoid, metres.
    pub alt_m: f64,
}

/// ECEF metres from geodetic coordinates.
pub fn to_ecef(g: Geodetic) -> [f64; 3] {
    let (lat, lon) = (g.lat_deg.to_radians(), g.lon_deg.to_radians());
    let n = A / (1.0 - E2 * lat.sin().powi(2)).sqrt();
    [
        (n + g.alt_m) * lat.cos() * lon.cos(),
        (n + g.alt_m) * lat.cos() * lon.sin(),
        (n * (1.0 - E2) + g.alt_m) * lat.sin(),
    ]
}

/// Geodetic coordinates from ECEF metres (Bowring's method refined by iteration;
/// sub-millimetre for any point near the earth's surface).
pub fn from_ecef(p: [f64; 3]) -> Geodetic {
    let [x, y, z] = p;
    let lon = y.atan2(x);
    let r = (x * x + y * y).sqrt();
    if r < 1e-9 {
        let b = A * (1.0 - F);
        let lat = if z >= 0.0 { 90.0 } else { -90.0 };
        return Geodetic {
            lat_deg: lat,
            lon_deg: 0.0,
            alt_m: z.abs() - b,
        };
    }
    let mut lat = (z / (r * (1.0 - E2))).atan();
    let mut alt = 0.0;
    for _ in 0..6 {
        let n = A / (1.0 - E2 * lat.sin().powi(2)).sqrt();
        alt = r / lat.cos() - n;
        lat = (z / (r * (1.0 - E2 * n / (n + alt)))).atan();
    }
    Geodetic {
        lat_deg: lat.to_degrees(),
        lon_deg: lon.to_degrees(),
        alt_m: alt,
    }
}

/// Straight-line (chord) distance between two ECEF points in nautical miles, through
/// the Earth rather than along it: how fgms measures range. Along the surface, see
/// [`great_circle_nm`].
pub fn chord_nm(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / crate::METRES_PER_NM
}

/// Mean Earth radius, metres: the IUGG's R1, (2a + b) / 3 of WGS-84. Every
/// great-circle figure in the workspace is on a sphere of this radius.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// [`EARTH_RADIUS_M`] in nautical miles (1,852 m each).
pub const EARTH_RADIUS_NM: f64 = EARTH_RADIUS_M / crate::METRES_PER_NM;

/// Great-circle distance between two points (degrees), metres, on the sphere of
/// [`EARTH_RADIUS_M`] (the haversine formula: well conditioned for short distances,
/// clamped for antipodes).
pub fn great_circle_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// [`great_circle_m`] in nautical miles.
pub fn great_circle_nm(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    great_circle_m(lat1, lon1, lat2, lon2) / crate::METRES_PER_NM
}

/// The point `distance_nm` from (`lat_deg`, `lon_deg`) along the great circle that
/// starts on true course `course_deg` (on a sphere of the mean radius; longitude
/// normalised to `[-180, 180)`). Tools fly simulated pilots with it.
pub fn destination(lat_deg: f64, lon_deg: f64, course_deg: f64, distance_nm: f64) -> (f64, f64) {
    let (p1, l1) = (lat_deg.to_radians(), lon_deg.to_radians());
    let c = course_deg.to_radians();
    let d = distance_nm / EARTH_RADIUS_NM;
    let p2 = (p1.sin() * d.cos() + p1.cos() * d.sin() * c.cos())
        .clamp(-1.0, 1.0)
        .asin();
    let l2 = l1 + (c.sin() * d.sin() * p1.cos()).atan2(d.cos() - p1.sin() * p2.sin());
    let lon = (l2.to_degrees() + 540.0).rem_euclid(360.0) - 180.0;
    (p2.to_degrees(), lon)
}

/// The true course, degrees `[0, 360)`, at the start of the great circle from the
/// first point to the second.
pub fn initial_course(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dl = (lon2 - lon1).to_radians();
    let y = dl.sin() * p2.cos();
    let x = p1.cos() * p2.sin() - p1.sin() * p2.cos() * dl.cos();
    y.atan2(x).to_degrees().rem_euclid(360.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The central angle between two points (radians) from their unit vectors,
    /// `atan2(|u x v|, u . v)`: a formula independent of the haversine's.
    fn angle_by_vectors(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
        let unit = |lat: f64, lon: f64| {
            let (p, l) = (lat.to_radians(), lon.to_radians());
            [p.cos() * l.cos(), p.cos() * l.sin(), p.sin()]
        };
        let (u, v) = (unit(lat1, lon1), unit(lat2, lon2));
        let x = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let cross = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        cross.atan2(u[0] * v[0] + u[1] * v[1] + u[2] * v[2])
    }

    /// The spherical law of cosines (poorly conditioned below a few metres).
    fn angle_by_cosines(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
        let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
        let dl = (lon2 - lon1).to_radians();
        (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos())
            .clamp(-1.0, 1.0)
            .acos()
    }

    #[test]
    fn known_great_circle_distances() {
        // One degree of latitude on the mean sphere: 111.195 km, 60.04 nm.
        assert!((great_circle_m(0.0, 0.0, 1.0, 0.0) - 111_195.0).abs() < 1.0);
        assert!((great_circle_nm(0.0, 0.0, 1.0, 0.0) - 60.04).abs() < 0.05);
        // Heathrow to San Francisco: about 8,620 km on the sphere.
        let d = great_circle_m(51.4706, -0.46194, 37.619, -122.375);
        assert!((d - 8_620_000.0).abs() < 20_000.0, "{d}");
        // Half way round the Earth: pi R, 10,807.4 nm.
        let half = great_circle_nm(0.0, 0.0, 0.0, 180.0);
        assert!((half - 10_807.4).abs() < 1.0, "{half}");
        assert!((half - std::f64::consts::PI * EARTH_RADIUS_NM).abs() < 1e-9);
        assert_eq!(great_circle_nm(10.0, 20.0, 10.0, 20.0), 0.0);
        assert_eq!(EARTH_RADIUS_NM, EARTH_RADIUS_M / 1852.0);
    }

    #[test]
    fn great_circles_cross_the_antimeridian_and_the_poles() {
        // 0.2 degrees of longitude either side of the antimeridian as at Greenwich.
        let across = great_circle_m(10.0, 179.9, 10.0, -179.9);
        assert!((across - great_circle_m(10.0, 0.0, 10.0, 0.2)).abs() < 1e-6);
        assert!((great_circle_m(10.0, 180.0, 10.0, -180.0)).abs() < 1e-6);
        // Every longitude is the same point at a pole.
        assert!(great_circle_m(90.0, 0.0, 90.0, 123.0) < 1e-6);
        assert!(great_circle_m(-90.0, -45.0, -90.0, 135.0) < 1e-6);
        // Pole to equator is a quarter, pole to pole a half, whatever the longitudes.
        let quarter = std::f64::consts::FRAC_PI_2 * EARTH_RADIUS_M;
        for lon in [-180.0, -77.0, 0.0, 33.3, 180.0] {
            assert!((great_circle_m(90.0, 0.0, 0.0, lon) - quarter).abs() < 1e-6);
            assert!((great_circle_m(-90.0, lon, 0.0, 12.0) - quarter).abs() < 1e-6);
            assert!((great_circle_m(90.0, lon, -90.0, 0.0) - 2.0 * quarter).abs() < 1e-6);
        }
        // Antipodes: the haversine's argument reaches 1 and is clamped there.
        let anti = great_circle_m(37.5, -122.0, -37.5, 58.0);
        assert!((anti - 2.0 * quarter).abs() < 1e-3, "{anti}");
    }

    #[test]
    fn the_chord_is_shorter_than_the_great_circle() {
        // fgms's range is the straight line: a quarter of the way round, R sqrt(2).
        let g = |lat_deg, lon_deg| {
            to_ecef(Geodetic {
                lat_deg,
                lon_deg,
                alt_m: 0.0,
            })
        };
        let (a, b) = (g(0.0, 0.0), g(0.0, 90.0));
        let chord = chord_nm(a, b);
        assert!((chord - 6_378_137.0 * 2f64.sqrt() / 1852.0).abs() < 1e-6);
        assert!(chord < great_circle_nm(0.0, 0.0, 0.0, 90.0));
        assert_eq!(chord_nm(a, b), chord_nm(b, a));
        assert_eq!(chord_nm(a, a), 0.0);
    }

    fn lat() -> impl Strategy<Value = f64> {
        -90.0f64..=90.0
    }

    fn lon() -> impl Strategy<Value = f64> {
        -180.0f64..=180.0
    }

    proptest! {
        /// The haversine agrees with the vector formula everywhere, and with the law
        /// of cosines where that is well conditioned (beyond a few kilometres).
        #[test]
        fn great_circle_agrees_with_independent_formulas(a in lat(), b in lon(), c in lat(), d in lon()) {
            let m = great_circle_m(a, b, c, d);
            let by_vectors = angle_by_vectors(a, b, c, d) * EARTH_RADIUS_M;
            prop_assert!((m - by_vectors).abs() < 1e-3, "{} vs {}", m, by_vectors);
            let by_cosines = angle_by_cosines(a, b, c, d) * EARTH_RADIUS_M;
            prop_assert!((m - by_cosines).abs() < 1.0, "{} vs {}", m, by_cosines);
            prop_assert!((great_circle_nm(a, b, c, d) - m / 1852.0).abs() < 1e-9);
        }

        /// Symmetric, zero to itself, at most half way round, and the triangle
        /// inequality holds.
        #[test]
        fn great_circle_is_a_metric(a in lat(), b in lon(), c in lat(), d in lon(), e in lat(), f in lon()) {
            let ab = great_circle_m(a, b, c, d);
            prop_assert_eq!(ab, great_circle_m(c, d, a, b));
            prop_assert_eq!(great_circle_m(a, b, a, b), 0.0);
            prop_assert!((0.0..=std::f64::consts::PI * EARTH_RADIUS_M + 1e-6).contains(&ab));
            // Shifting both longitudes by a whole turn changes nothing.
            prop_assert!((great_circle_m(a, b + 360.0, c, d - 360.0) - ab).abs() < 1e-6);
            let via = great_circle_m(a, b, e, f) + great_circle_m(e, f, c, d);
            prop_assert!(ab <= via + 1e-6);
        }

        /// `destination` lands `distance_nm` away by `great_circle_nm`, and
        /// `initial_course` points back along the path it took.
        #[test]
        fn destination_is_that_far(a in -89.0f64..89.0, b in lon(), course in 0.0f64..360.0, nm in 0.0f64..5_000.0) {
            let (c, d) = destination(a, b, course, nm);
            prop_assert!((great_circle_nm(a, b, c, d) - nm).abs() < 1e-6, "{}", great_circle_nm(a, b, c, d));
            prop_assert!((-180.0..180.0).contains(&d));
            if nm > 1.0 {
                let k = initial_course(a, b, c, d);
                let off = (k - course).rem_euclid(360.0);
                prop_assert!(off.min(360.0 - off) < 1e-6, "{} vs {}", k, course);
            }
        }
    }

    #[test]
    fn destinations_follow_the_great_circle() {
        // One minute of arc of a great circle is (about) one nautical mile.
        let (lat, lon) = destination(0.0, 0.0, 0.0, 60.0);
        assert!(
            (lat - 0.99939).abs() < 1e-4 && lon.abs() < 1e-12,
            "{lat} {lon}"
        );
        let (lat, lon) = destination(0.0, 179.9, 90.0, 60.0);
        assert!(
            lat.abs() < 1e-9 && (lon - -179.100_6).abs() < 1e-3,
            "{lon}: across the antimeridian"
        );
        // Going and coming back.
        let (lat, lon) = destination(63.985, -22.605, 280.0, 250.0);
        let back = initial_course(lat, lon, 63.985, -22.605);
        let (lat2, lon2) = destination(lat, lon, back, 250.0);
        assert!((lat2 - 63.985).abs() < 1e-6 && (lon2 - -22.605).abs() < 1e-6);
        assert!((initial_course(63.985, -22.605, lat, lon) - 280.0).abs() < 1e-9);
    }

    #[test]
    fn round_trip_is_close() {
        for (lat, lon, alt) in [
            (63.983133, -22.59145, 914.4),
            (50.03, 8.57, 1000.0),
            (-33.9, 151.2, 10.0),
            (0.0, 0.0, 0.0),
        ] {
            let g = from_ecef(to_ecef(Geodetic {
                lat_deg: lat,
                lon_deg: lon,
                alt_m: alt,
            }));
            assert!((g.lat_deg - lat).abs() < 1e-9, "{lat} -> {}", g.lat_deg);
            assert!((g.lon_deg - lon).abs() < 1e-9);
            assert!((g.alt_m - alt).abs() < 1e-4);
        }
    }

    #[test]
    fn telnet_example_from_the_notes() {
        // fgms telnet example: 4060104.908376 611858.819160 4865699.654797 -> 50.03 8.57 3280.839895 ft
        let g = from_ecef([4060104.908376, 611858.819160, 4865699.654797]);
        assert!((g.lat_deg - 50.03).abs() < 1e-6);
        assert!((g.lon_deg - 8.57).abs() < 1e-6);
        assert!((g.alt_m * FEET_PER_METRE - 3280.839895).abs() < 1e-3);
    }
}
