//! What both [`crate::flights`] and [`crate::logbook`] work on: a position
//! ([`Fix`]), the distance between two of them along the ground, and the fastest
//! ground speed believed between two. A leaf: it imports neither of them, so
//! `flights` (which applies the logbook's rules) and `logbook` (which reads
//! positions) depend on it and not on each other.

/// One position: degrees, feet, degrees true.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fix {
    /// Latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
    /// Altitude, feet.
    pub alt_ft: f64,
    /// Heading, degrees true.
    pub heading: f64,
}

/// Fastest ground speed believed between two positions, knots: a faster jump (a
/// teleport, a relocation in the simulator) is not counted as distance flown.
pub const MAX_SPEED_KT: f64 = 2000.0;

/// Great-circle distance between two fixes, nautical miles
/// ([`fgmp::geo::great_circle_nm`]: the workspace's one sphere).
pub fn distance_nm(a: Fix, b: Fix) -> f64 {
    fgmp::geo::great_circle_nm(a.lat, a.lon, b.lat, b.lon)
}
