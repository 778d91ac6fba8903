//! WGS-84 conversions between ECEF metres and geodetic latitude/longitude/altitude.
//! Used for the telnet pilot list (which prints lat, lon and altitude in feet) and by
//! tools that place pilots at airports.

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

/// Straight-line distance between two ECEF points in nautical miles, as fgms measures range.
pub fn distance_nm(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / crate::METRES_PER_NM
}

/// Mean Earth radius in nautical miles (for great-circle navigation).
pub const EARTH_RADIUS_NM: f64 = 3440.065;

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
