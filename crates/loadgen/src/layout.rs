//! Where the simulated pilots fly, and who should receive whom.
//!
//! Pilots are placed around real airports. The expected deliveries follow the
//! fgms rule (notes 2.5): receiver `r` gets sender `s`'s datagram iff `s != r`
//! and the ECEF distance between them is below `r`'s own range.

use fgmp::geo::{chord_nm, to_ecef, Geodetic};

/// An airport: ICAO code, latitude and longitude in degrees.
#[derive(Debug, Clone, Copy)]
pub struct Airport {
    /// ICAO code.
    pub icao: &'static str,
    /// Latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
}

const fn ap(icao: &'static str, lat: f64, lon: f64) -> Airport {
    Airport { icao, lat, lon }
}

/// The airport every pilot of the `cluster` layout circles.
pub(crate) const CLUSTER_AIRPORT: Airport = ap("BIKF", 63.985, -22.605);

/// Thirty real airports on every continent, at least 180 nm apart from each other.
pub(crate) const WORLD_AIRPORTS: [Airport; 30] = [
    ap("BIKF", 63.985, -22.605),
    ap("KJFK", 40.6413, -73.7781),
    ap("KLAX", 33.9416, -118.4085),
    ap("KSFO", 37.6213, -122.3790),
    ap("KORD", 41.9742, -87.9073),
    ap("KATL", 33.6407, -84.4277),
    ap("KDEN", 39.8561, -104.6737),
    ap("KSEA", 47.4502, -122.3088),
    ap("CYYZ", 43.6777, -79.6248),
    ap("MMMX", 19.4361, -99.0719),
    ap("SBGR", -23.4356, -46.4731),
    ap("SAEZ", -34.8222, -58.5358),
    ap("SCEL", -33.3930, -70.7858),
    ap("EGLL", 51.4700, -0.4543),
    ap("LFPG", 49.0097, 2.5479),
    ap("EDDF", 50.0379, 8.5622),
    ap("LEMD", 40.4983, -3.5676),
    ap("LIRF", 41.8003, 12.2389),
    ap("UUEE", 55.9726, 37.4146),
    ap("LTFM", 41.2753, 28.7519),
    ap("HECA", 30.1219, 31.4056),
    ap("FAOR", -26.1367, 28.2411),
    ap("OMDB", 25.2532, 55.3657),
    ap("VIDP", 28.5562, 77.1000),
    ap("VHHH", 22.3080, 113.9185),
    ap("ZBAA", 40.0799, 116.6031),
    ap("RJTT", 35.5494, 139.7798),
    ap("WSSS", 1.3644, 103.9915),
    ap("YSSY", -33.9399, 151.1753),
    ap("NZAA", -37.0082, 174.7850),
];

/// How the pilots are spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Everyone within about 2 nm of BIKF: everyone is in range of everyone.
    Cluster,
    /// Round-robin over 30 airports worldwide, within about 5 nm of each.
    World,
}

impl Layout {
    /// The airports of this layout.
    pub fn airports(self) -> &'static [Airport] {
        match self {
            Layout::Cluster => std::slice::from_ref(&CLUSTER_AIRPORT),
            Layout::World => &WORLD_AIRPORTS,
        }
    }

    /// Default radius around each airport, nm.
    pub fn default_spread_nm(self) -> f64 {
        match self {
            Layout::Cluster => 2.0,
            Layout::World => 5.0,
        }
    }
}

/// A group of pilots around one airport, with a bound for skipping far-apart groups.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// ECEF centre (the airport at ground level).
    pub center: [f64; 3],
    /// Largest distance of a member from the centre, nm.
    pub radius_nm: f64,
    /// Pilot indices.
    pub members: Vec<u32>,
}

/// Pilot positions, grouped by airport.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// ECEF metres per pilot.
    pub pos: Vec<[f64; 3]>,
    /// The groups; every pilot is in exactly one.
    pub groups: Vec<Group>,
}

/// SplitMix64: a small deterministic generator, so every run places pilots identically.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn unit(state: &mut u64) -> f64 {
    (splitmix(state) >> 11) as f64 / (1u64 << 53) as f64
}

/// Places `n` pilots: pilot `i` goes to airport `i % airports.len()`, uniformly
/// within `spread_nm` of it (horizontally), 300-1500 m above the ellipsoid.
pub(crate) fn place(airports: &[Airport], n: usize, spread_nm: f64) -> Placement {
    let mut groups: Vec<Group> = airports
        .iter()
        .map(|a| Group {
            center: to_ecef(Geodetic {
                lat_deg: a.lat,
                lon_deg: a.lon,
                alt_m: 0.0,
            }),
            radius_nm: 0.0,
            members: Vec::new(),
        })
        .collect();
    let mut pos = Vec::with_capacity(n);
    let mut rng = 0x1fac_e002_u64;
    for i in 0..n {
        let k = i % airports.len().max(1);
        let a = airports[k];
        let d = spread_nm * unit(&mut rng).sqrt();
        let bearing = unit(&mut rng) * std::f64::consts::TAU;
        let alt_m = 300.0 + 1200.0 * unit(&mut rng);
        let lat = a.lat + d * bearing.cos() / 60.0;
        let lon = a.lon + d * bearing.sin() / (60.0 * a.lat.to_radians().cos().max(0.01));
        let p = to_ecef(Geodetic {
            lat_deg: lat,
            lon_deg: lon,
            alt_m,
        });
        let g = &mut groups[k];
        g.radius_nm = g.radius_nm.max(chord_nm(g.center, p));
        g.members.push(i as u32);
        pos.push(p);
    }
    Placement { pos, groups }
}

/// Whether receiver `r` (at `pos_r`, asking for `range_r` nm) gets a datagram from `pos_s`.
#[inline]
pub(crate) fn receives(pos_r: [f64; 3], range_r: f64, pos_s: [f64; 3]) -> bool {
    chord_nm(pos_r, pos_s) < range_r
}

/// For each sender, how many other pilots receive its datagrams.
#[cfg(test)]
pub(crate) fn fanout(pl: &Placement, range_nm: &[f64]) -> Vec<u64> {
    fanout_tiered(pl, range_nm, &relay::Tiers::off(), 10.0).in_range
}

/// Per sender: who receives it, and how much of it under distance tiers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fan {
    /// Receivers in range.
    pub in_range: Vec<u64>,
    /// Receivers in range within the full-rate distance ([`relay::Tiers::full_rate_within_nm`]).
    pub near: Vec<u64>,
    /// Copies of each of its datagrams the receivers get together: 1 per near
    /// receiver, the tier's rate over the send rate per farther one.
    pub expected: Vec<f64>,
}

/// For each sender, who receives its datagrams sent at `hz` through a relay with
/// `tiers` (static positions: a pair is in the tier the relay gives a pair it
/// first sees at that distance, the nearer one within the hysteresis of a bound).
///
/// Exact: pairs of groups whose members cannot come within the largest range of
/// each other (by the triangle inequality on their centres and radii) are skipped,
/// every other pair of pilots is tested with [`receives`].
pub(crate) fn fanout_tiered(
    pl: &Placement,
    range_nm: &[f64],
    tiers: &relay::Tiers,
    hz: f64,
) -> Fan {
    let n = pl.pos.len();
    assert_eq!(range_nm.len(), n, "one range per pilot");
    let max_range = range_nm.iter().copied().fold(0.0, f64::max);
    let near_nm = tiers.full_rate_within_nm().unwrap_or(-1.0);
    let share = |d: f64| match tiers.tiers().get(tiers.next_tier(0, d)) {
        Some(t) if t.interval_s > 0.0 => (1.0 / (t.interval_s * hz)).min(1.0),
        _ => 1.0,
    };
    let mut out = Fan {
        in_range: vec![0; n],
        near: vec![0; n],
        expected: vec![0.0; n],
    };
    let mut pair = |a: u32, b: u32| {
        let (a, b) = (a as usize, b as usize);
        let d = chord_nm(pl.pos[a], pl.pos[b]);
        for (r, s) in [(a, b), (b, a)] {
            if d < range_nm[r] {
                // r receives s
                out.in_range[s] += 1;
                out.near[s] += u64::from(d <= near_nm);
                out.expected[s] += share(d);
            }
        }
    };
    for (gi, ga) in pl.groups.iter().enumerate() {
        for (x, &a) in ga.members.iter().enumerate() {
            for &b in &ga.members[x + 1..] {
                pair(a, b);
            }
        }
        for gb in &pl.groups[gi + 1..] {
            let gap = chord_nm(ga.center, gb.center) - ga.radius_nm - gb.radius_nm;
            if gap >= max_range {
                continue;
            }
            for &a in &ga.members {
                for &b in &gb.members {
                    pair(a, b);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(pos: &[[f64; 3]], range: &[f64]) -> Vec<u64> {
        (0..pos.len())
            .map(|s| {
                (0..pos.len())
                    .filter(|&r| r != s && receives(pos[r], range[r], pos[s]))
                    .count() as u64
            })
            .collect()
    }

    #[test]
    fn tiny_layout_receiver_range_decides() {
        // Three pilots on a line, 0, 3 and 10 nm east of a point on the equator.
        let nm = fgmp::METRES_PER_NM;
        let base = 6_378_137.0;
        let pos = vec![
            [base, 0.0, 0.0],
            [base, 3.0 * nm, 0.0],
            [base, 10.0 * nm, 0.0],
        ];
        // Pilot 0 listens 5 nm, pilot 1 listens 100 nm, pilot 2 listens 7 nm (exactly 7 to pilot 1: not received).
        let range = vec![5.0, 100.0, 7.0];
        let pl = Placement {
            pos: pos.clone(),
            groups: vec![
                Group {
                    center: pos[0],
                    radius_nm: 0.0,
                    members: vec![0],
                },
                Group {
                    center: pos[1],
                    radius_nm: 7.0,
                    members: vec![1, 2],
                },
            ],
        };
        // Sender 0 -> receiver 1 (3 < 100); receiver 2 is 10 away (>= 7): 1.
        // Sender 1 -> receiver 0 (3 < 5); receiver 2: 7 is not < 7: 1.
        // Sender 2 -> receiver 1 only (0 is 10 away, its range is 5): 1.
        assert_eq!(fanout(&pl, &range), vec![1, 1, 1]);
        assert_eq!(brute(&pos, &range), vec![1, 1, 1]);
        let range = vec![50.0, 100.0, 50.0];
        assert_eq!(fanout(&pl, &range), vec![2, 2, 2]);
    }

    #[test]
    fn tiered_fan_out_counts_near_pairs_whole_and_far_ones_at_their_rate() {
        // Four pilots on a line east of a point on the equator: 0, 5, 11 and 50 nm.
        let nm = fgmp::METRES_PER_NM;
        let base = 6_378_137.0;
        let at = |x: f64| [base, x * nm, 0.0];
        let pos = vec![at(0.0), at(5.0), at(11.0), at(50.0)];
        let pl = Placement {
            pos: pos.clone(),
            groups: vec![Group {
                center: pos[0],
                radius_nm: 50.0,
                members: vec![0, 1, 2, 3],
            }],
        };
        let tiers = relay::Tiers::recommended();
        let fan = fanout_tiered(&pl, &[100.0; 4], &tiers, 10.0);
        assert_eq!(fan.in_range, vec![3, 3, 3, 3]);
        // Pilot 0: 5 nm (near), 11 nm (within the hysteresis: full), 50 nm (1 Hz of 10).
        assert_eq!(fan.near[0], 1);
        assert!((fan.expected[0] - 2.1).abs() < 1e-9, "{}", fan.expected[0]);
        // Pilot 3: 50, 45 and 39 nm away: 1 Hz, 1 Hz and 2 Hz of 10.
        assert!((fan.expected[3] - 0.4).abs() < 1e-9, "{}", fan.expected[3]);
        let off = fanout_tiered(&pl, &[100.0; 4], &relay::Tiers::off(), 10.0);
        assert_eq!(off.expected, vec![3.0; 4]);
        assert_eq!(off.near, vec![3; 4]);
    }

    #[test]
    fn grouped_count_equals_brute_force() {
        for (layout, n, range) in [
            (Layout::World, 300, 100.0),
            (Layout::World, 300, 1000.0),
            (Layout::Cluster, 120, 1.5),
        ] {
            let pl = place(layout.airports(), n, layout.default_spread_nm());
            let ranges = vec![range; n];
            assert_eq!(
                fanout(&pl, &ranges),
                brute(&pl.pos, &ranges),
                "{layout:?} {range}"
            );
        }
    }

    #[test]
    fn world_airports_are_far_apart() {
        let pl = place(&WORLD_AIRPORTS, 30, 0.0);
        for (i, a) in WORLD_AIRPORTS.iter().enumerate() {
            for (j, b) in WORLD_AIRPORTS.iter().enumerate().skip(i + 1) {
                let d = chord_nm(pl.groups[i].center, pl.groups[j].center);
                assert!(d > 180.0, "{} {} only {d} nm", a.icao, b.icao);
            }
        }
        // 100 nm, 5 nm spread: each pilot sees exactly the others at its airport.
        let pl = place(&WORLD_AIRPORTS, 3000, 5.0);
        assert!(fanout(&pl, &vec![100.0; 3000]).iter().all(|&f| f == 99));
    }
}
