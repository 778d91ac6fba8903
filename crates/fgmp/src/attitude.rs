//! Heading, pitch and roll from the orientation a position message carries, its inverse,
//! and the ground speed and track from the linear velocity.
//!
//! # Frames
//!
//! - **ECEF** (earth-centred, earth-fixed, WGS-84): x through latitude 0 / longitude 0,
//!   y through latitude 0 / longitude 90 E, z through the north pole. The position
//!   message's position is in this frame, in metres.
//! - **Local horizontal (NED)**: at the aircraft's geodetic latitude and longitude,
//!   x points north, y east, z down (along the ellipsoid normal).
//! - **Body**: x out of the nose, y out of the right wing, z down through the floor.
//!
//! Rotations are unit quaternions in SimGear's convention (`SGQuat`): the quaternion
//! `q` "from frame A to frame B" turns the A coordinates of a vector into its B
//! coordinates as `v_B = conj(q) * v_A * q`, and composes left to right:
//! `q(A→C) = q(A→B) * q(B→C)`.
//!
//! - `q(ECEF→NED)` is SimGear's `fromLonLatRad(lon, lat)`: a turn about z by the
//!   longitude, then about the new y by `-(90° + lat)`.
//! - `q(NED→body)` is `fromYawPitchRoll(heading, pitch, roll)`: the z-y-x Euler sequence
//!   (heading about down, pitch about the new right wing, roll about the nose).
//! - The message's **orientation** is `q(ECEF→body) = q(ECEF→NED) * q(NED→body)`, written
//!   as an angle-axis vector (`SGQuat::getAngleAxis`): the unit rotation axis times the
//!   angle in radians, the angle in `[0, 2π]` (FlightGear does not pick the shorter of
//!   `q` and `-q`). A zero vector is the identity.
//! - The **linear velocity** is in the body frame (u, v, w in m/s), so its north/east/down
//!   components are the body vector turned back through `q(NED→body)`.
//!
//! Reading an attitude back is what FlightGear's `FGAIMultiplayer` does:
//! `q(NED→body) = conj(fromLonLatRad(lon, lat)) * q(ECEF→body)`, then `getEulerDeg`.
//! Latitude and longitude are geodetic (WGS-84), from [`crate::geo::from_ecef`], as
//! SimGear's `SGGeod::fromCart` gives them.
//!
//! Everything here is pure and allocation-free; the arithmetic is `f64` throughout
//! (FlightGear uses `f32` quaternions, which differ by about 1e-5 degree). Non-finite
//! inputs give zeros, never a panic.

use crate::geo;

/// Metres per second in one knot (1852 m per hour).
pub const METRES_PER_SECOND_PER_KNOT: f64 = 1852.0 / 3600.0;

/// Heading, pitch and roll of the body relative to the local horizontal frame, in degrees.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Attitude {
    /// True heading of the nose, `[0, 360)`, 0 = north, 90 = east.
    pub heading_deg: f64,
    /// Nose above the horizon, `[-90, 90]`.
    pub pitch_deg: f64,
    /// Right wing down, `(-180, 180]`.
    pub roll_deg: f64,
}

/// A quaternion `w + xi + yj + zk` (SimGear's component order is x, y, z, w).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Quat {
    w: f64,
    x: f64,
    y: f64,
    z: f64,
}

impl Quat {
    const IDENTITY: Quat = Quat {
        w: 1.0,
        x: 0.0,
        y: 0.0,
        z: 0.0,
    };

    /// Hamilton product `self * o` (SimGear's `operator*`).
    fn mul(self, o: Quat) -> Quat {
        Quat {
            w: self.w * o.w - self.x * o.x - self.y * o.y - self.z * o.z,
            x: self.w * o.x + self.x * o.w + self.y * o.z - self.z * o.y,
            y: self.w * o.y - self.x * o.z + self.y * o.w + self.z * o.x,
            z: self.w * o.z + self.x * o.y - self.y * o.x + self.z * o.w,
        }
    }

    fn conj(self) -> Quat {
        Quat {
            w: self.w,
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }

    /// Coordinates in the frame this quaternion rotates *to* of a vector given in the frame
    /// it rotates *from* (SimGear's `transform`): `conj(q) * v * q` for a unit `q`.
    fn transform(self, v: [f64; 3]) -> [f64; 3] {
        self.conj().rotate(v)
    }

    /// The reverse of [`Quat::transform`] (SimGear's `backTransform`): `q * v * conj(q)`.
    fn back_transform(self, v: [f64; 3]) -> [f64; 3] {
        self.rotate(v)
    }

    /// `q * v * conj(q)` for a unit `q`, as `v + 2w (u × v) + 2 u × (u × v)` with `u` the
    /// imaginary part.
    fn rotate(self, v: [f64; 3]) -> [f64; 3] {
        let u = [self.x, self.y, self.z];
        let t = cross(u, v);
        let t = [2.0 * t[0], 2.0 * t[1], 2.0 * t[2]];
        let ut = cross(u, t);
        [
            v[0] + self.w * t[0] + ut[0],
            v[1] + self.w * t[1] + ut[1],
            v[2] + self.w * t[2] + ut[2],
        ]
    }

    /// The rotation from ECEF to the local NED frame at a geodetic longitude and latitude
    /// (radians): SimGear's `fromLonLatRad`, a turn about z by `lon`, then about the new y
    /// by `-(π/2 + lat)`.
    fn from_lon_lat(lon: f64, lat: f64) -> Quat {
        let (sz, cz) = (0.5 * lon).sin_cos();
        let (sy, cy) = (-0.25 * std::f64::consts::PI - 0.5 * lat).sin_cos();
        Quat {
            w: cz * cy,
            x: -sz * sy,
            y: cz * sy,
            z: sz * cy,
        }
    }

    /// The z-y-x Euler sequence (SimGear's `fromEulerRad(z, y, x)`, `fromYawPitchRoll`).
    fn from_euler(z: f64, y: f64, x: f64) -> Quat {
        let (sz, cz) = (0.5 * z).sin_cos();
        let (sy, cy) = (0.5 * y).sin_cos();
        let (sx, cx) = (0.5 * x).sin_cos();
        Quat {
            w: cx * cz * cy + sx * sz * sy,
            x: sx * cz * cy - cx * sz * sy,
            y: cx * cz * sy + sx * sz * cy,
            z: cx * sz * cy - sx * cz * sy,
        }
    }

    /// The z-y-x Euler angles in radians (SimGear's `getEulerRad`): z in `[0, 2π)`,
    /// y in `[-π/2, π/2]`, x in `(-π, π]`.
    fn euler(self) -> (f64, f64, f64) {
        let Quat { w, x, y, z } = self;
        let (ww, xx, yy, zz) = (w * w, x * x, y * y, z * z);
        // atan2(0, 0) is 0, which is what SimGear substitutes for the degenerate case.
        let roll = (2.0 * (y * z + w * x)).atan2(ww - xx - yy + zz);
        let pitch = -(2.0 * (x * z - w * y)).clamp(-1.0, 1.0).asin();
        let mut yaw = (2.0 * (x * y + w * z)).atan2(ww + xx - yy - zz);
        if yaw < 0.0 {
            yaw += std::f64::consts::TAU;
        }
        (yaw, pitch, roll)
    }

    /// A rotation from its angle-axis vector (SimGear's `fromAngleAxis(const SGVec3&)`):
    /// the length is the angle; a zero vector is the identity.
    fn from_angle_axis(v: [f64; 3]) -> Quat {
        let n = norm(v);
        if n <= f64::MIN_POSITIVE {
            return Quat::IDENTITY;
        }
        let (s, c) = (0.5 * n).sin_cos();
        let k = s / n;
        Quat {
            w: c,
            x: k * v[0],
            y: k * v[1],
            z: k * v[2],
        }
    }

    /// The angle-axis vector of this rotation as SimGear's `getAngleAxis(SGVec3&)` writes it:
    /// the angle is `2 acos(w / |q|)`, in `[0, 2π]`, with no sign flip to the shorter way.
    /// Computed as `2 atan2(|imag|, w)`, which is the same angle and stays accurate near 0
    /// and 2π.
    fn angle_axis(self) -> [f64; 3] {
        let imag = [self.x, self.y, self.z];
        let n = norm(imag);
        if n <= f64::MIN_POSITIVE {
            return [0.0; 3];
        }
        let k = 2.0 * n.atan2(self.w) / n;
        [k * imag[0], k * imag[1], k * imag[2]]
    }

    /// Scaled to unit length (the identity if it has none).
    fn normalized(self) -> Quat {
        let n = (self.w * self.w + self.x * self.x + self.y * self.y + self.z * self.z).sqrt();
        if !(n > f64::MIN_POSITIVE && n.is_finite()) {
            return Quat::IDENTITY;
        }
        Quat {
            w: self.w / n,
            x: self.x / n,
            y: self.y / n,
            z: self.z / n,
        }
    }
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn widen(v: [f32; 3]) -> [f64; 3] {
    [f64::from(v[0]), f64::from(v[1]), f64::from(v[2])]
}

fn all_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// `q(ECEF→NED)` at the geodetic latitude and longitude of an ECEF position.
fn ecef_to_ned(position_ecef: [f64; 3]) -> Quat {
    let g = geo::from_ecef(position_ecef);
    Quat::from_lon_lat(g.lon_deg.to_radians(), g.lat_deg.to_radians())
}

/// `q(NED→body)` from a position and an angle-axis orientation, or `None` when an input is
/// not finite.
fn ned_to_body(position_ecef: [f64; 3], orientation: [f32; 3]) -> Option<Quat> {
    let o = widen(orientation);
    if !all_finite(&position_ecef) || !all_finite(&o) {
        return None;
    }
    let q = ecef_to_ned(position_ecef)
        .conj()
        .mul(Quat::from_angle_axis(o))
        .normalized();
    all_finite(&[q.w, q.x, q.y, q.z]).then_some(q)
}

/// `[0, 360)` from any finite angle in degrees.
fn wrap_360(deg: f64) -> f64 {
    let d = deg.rem_euclid(360.0);
    // rem_euclid of a tiny negative number rounds up to exactly 360.
    if d >= 360.0 {
        0.0
    } else {
        d
    }
}

/// Heading, pitch and roll (degrees) of an aircraft at `position_ecef` (metres) whose
/// position message carries `orientation` (the ECEF→body angle-axis vector).
///
/// The heading is in `[0, 360)`, the pitch in `[-90, 90]`, the roll in `(-180, 180]`.
/// At pitch ±90 heading and roll are not separable; the split is SimGear's.
/// Any non-finite input gives all zeros.
pub fn attitude(position_ecef: [f64; 3], orientation: [f32; 3]) -> Attitude {
    let Some(q) = ned_to_body(position_ecef, orientation) else {
        return Attitude::default();
    };
    let (yaw, pitch, roll) = q.euler();
    let a = Attitude {
        heading_deg: wrap_360(yaw.to_degrees()),
        pitch_deg: pitch.to_degrees(),
        roll_deg: roll.to_degrees(),
    };
    if all_finite(&[a.heading_deg, a.pitch_deg, a.roll_deg]) {
        a
    } else {
        Attitude::default()
    }
}

/// The orientation (ECEF→body angle-axis vector) a FlightGear client sends for attitude `a`
/// at `position_ecef`: the inverse of [`attitude`]. Any non-finite input gives the zero
/// vector (the identity rotation).
pub fn orientation(position_ecef: [f64; 3], a: Attitude) -> [f32; 3] {
    let angles = [a.heading_deg, a.pitch_deg, a.roll_deg];
    if !all_finite(&position_ecef) || !all_finite(&angles) {
        return [0.0; 3];
    }
    let body = Quat::from_euler(
        a.heading_deg.to_radians(),
        a.pitch_deg.to_radians(),
        a.roll_deg.to_radians(),
    );
    let v = ecef_to_ned(position_ecef).mul(body).angle_axis();
    if !all_finite(&v) {
        return [0.0; 3];
    }
    [v[0] as f32, v[1] as f32, v[2] as f32]
}

/// The velocity in the local horizontal frame (north, east, down; m/s) of an aircraft at
/// `position_ecef` with `orientation` whose position message carries `linear_vel_body`
/// (body u, v, w in m/s). Any non-finite input gives zeros.
pub fn ned_velocity(
    position_ecef: [f64; 3],
    orientation: [f32; 3],
    linear_vel_body: [f32; 3],
) -> [f64; 3] {
    let v = widen(linear_vel_body);
    let Some(q) = ned_to_body(position_ecef, orientation) else {
        return [0.0; 3];
    };
    if !all_finite(&v) {
        return [0.0; 3];
    }
    let ned = q.back_transform(v);
    if all_finite(&ned) {
        ned
    } else {
        [0.0; 3]
    }
}

/// The body-frame velocity (u, v, w; m/s) a client sends for a north/east/down velocity:
/// the inverse of [`ned_velocity`]. Any non-finite input gives zeros.
pub fn body_velocity(
    position_ecef: [f64; 3],
    orientation: [f32; 3],
    ned_velocity: [f64; 3],
) -> [f32; 3] {
    let Some(q) = ned_to_body(position_ecef, orientation) else {
        return [0.0; 3];
    };
    if !all_finite(&ned_velocity) {
        return [0.0; 3];
    }
    let b = q.transform(ned_velocity);
    if all_finite(&b) {
        [b[0] as f32, b[1] as f32, b[2] as f32]
    } else {
        [0.0; 3]
    }
}

/// Horizontal speed over the ground in knots (the north and east components of
/// [`ned_velocity`]).
pub fn ground_speed_kt(
    position_ecef: [f64; 3],
    orientation: [f32; 3],
    linear_vel_body: [f32; 3],
) -> f64 {
    let [n, e, _] = ned_velocity(position_ecef, orientation, linear_vel_body);
    n.hypot(e) / METRES_PER_SECOND_PER_KNOT
}

/// True track over the ground in degrees, `[0, 360)` (0 = north, 90 = east); 0 when the
/// horizontal velocity is zero.
pub fn track_deg(position_ecef: [f64; 3], orientation: [f32; 3], linear_vel_body: [f32; 3]) -> f64 {
    let [n, e, _] = ned_velocity(position_ecef, orientation, linear_vel_body);
    wrap_360(e.atan2(n).to_degrees())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Quat, b: Quat) -> bool {
        (a.w - b.w).abs() < 1e-12
            && (a.x - b.x).abs() < 1e-12
            && (a.y - b.y).abs() < 1e-12
            && (a.z - b.z).abs() < 1e-12
    }

    #[test]
    fn lon_lat_is_two_euler_turns() {
        for (lon, lat) in [(0.0, 0.0), (0.3, 1.1), (-2.0, -0.7)] {
            let two = Quat::from_euler(lon, -std::f64::consts::FRAC_PI_2 - lat, 0.0);
            assert!(close(Quat::from_lon_lat(lon, lat), two));
        }
    }

    #[test]
    fn angle_axis_round_trip_keeps_the_sign() {
        for v in [[0.1, -0.2, 0.3], [3.0, 1.0, -4.0], [0.0, 0.0, 6.0]] {
            let q = Quat::from_angle_axis(v);
            let back = q.angle_axis();
            for i in 0..3 {
                assert!((back[i] - v[i]).abs() < 1e-12, "{v:?} -> {back:?}");
            }
        }
        assert_eq!(Quat::IDENTITY.angle_axis(), [0.0; 3]);
    }

    #[test]
    fn euler_round_trip() {
        let q = Quat::from_euler(4.0, 0.3, -1.2);
        let (z, y, x) = q.euler();
        assert!((z - 4.0).abs() < 1e-12 && (y - 0.3).abs() < 1e-12 && (x + 1.2).abs() < 1e-12);
    }

    #[test]
    fn transform_matches_the_quaternion_product() {
        let q = Quat::from_euler(1.0, 0.5, 0.25);
        let v = [1.0, 2.0, 3.0];
        let p = Quat {
            w: 0.0,
            x: v[0],
            y: v[1],
            z: v[2],
        };
        let r = q.conj().mul(p).mul(q);
        let t = q.transform(v);
        assert!((r.x - t[0]).abs() < 1e-12 && (r.y - t[1]).abs() < 1e-12);
        assert!((r.z - t[2]).abs() < 1e-12 && r.w.abs() < 1e-12);
        let b = q.back_transform(t);
        assert!((b[0] - 1.0).abs() < 1e-12 && (b[1] - 2.0).abs() < 1e-12);
    }

    #[test]
    fn wrap_360_never_gives_360() {
        assert_eq!(wrap_360(-1e-20), 0.0);
        assert_eq!(wrap_360(360.0), 0.0);
        assert_eq!(wrap_360(-90.0), 270.0);
        assert_eq!(wrap_360(725.0), 5.0);
    }
}
