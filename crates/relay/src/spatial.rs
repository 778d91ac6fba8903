//! A spatial index of pilots in ECEF space, so that finding who can see a sender
//! costs work proportional to the pilots near it, not to every pilot.
//!
//! Pilots request ranges from a few nm up to `max_radar_range` (2000 nm). One grid
//! cannot serve both well, so pilots are filed into *tiers* by requested range; each
//! tier is a uniform grid whose cell edge equals the tier's largest range. A pilot
//! with range `r` in tier `t` can only see senders inside the 3×3×3 block of cells
//! around its own cell, so a query visits 27 cells per non-empty tier.

use std::collections::HashMap;

/// Cell edges in metres of the tiers (the largest range a tier holds, in nm × 1852).
const TIER_NM: [f64; 8] = [2.0, 5.0, 10.0, 25.0, 100.0, 400.0, 1000.0, 4000.0];

type Cell = (i32, i32, i32);

/// Index of slot numbers (small dense `u32` ids chosen by the caller, such as
/// table slots) by position and range. Insert, move and remove cost O(1) whatever
/// the number of entries in the cell: each id remembers its offset in its cell.
#[derive(Debug, Default)]
pub struct SpatialIndex {
    tiers: [Tier; TIER_NM.len()],
    /// Offset of each id in its cell's list (indexed by id; stale for ids not filed).
    offset: Vec<u32>,
}

#[derive(Debug, Default)]
struct Tier {
    cells: HashMap<Cell, Vec<u32>>,
    count: usize,
}

/// Where an entry is filed, kept by the caller so moves and removals are cheap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    tier: u8,
    cell: Cell,
}

fn tier_for(range_nm: f64) -> usize {
    TIER_NM
        .iter()
        .position(|&t| range_nm <= t)
        .unwrap_or(TIER_NM.len() - 1)
}

fn cell_of(p: [f64; 3], edge_m: f64) -> Cell {
    // Finite positions within the earth's neighbourhood fit easily; clamp anything else.
    let c = |v: f64| (v / edge_m).floor().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
    (c(p[0]), c(p[1]), c(p[2]))
}

impl SpatialIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `(p, range_nm)` belongs.
    pub fn placement(p: [f64; 3], range_nm: f64) -> Placement {
        let tier = tier_for(range_nm);
        Placement {
            tier: tier as u8,
            cell: cell_of(p, TIER_NM[tier] * fgmp::METRES_PER_NM),
        }
    }

    /// Files `id` at `at`.
    pub fn insert(&mut self, id: u32, at: Placement) {
        let t = &mut self.tiers[at.tier as usize];
        let v = t.cells.entry(at.cell).or_default();
        let slot = id as usize;
        if self.offset.len() <= slot {
            self.offset.resize(slot + 1, 0);
        }
        self.offset[slot] = v.len() as u32;
        v.push(id);
        t.count += 1;
    }

    /// Removes `id` from `at` (where it was filed): O(1), the last id of the cell
    /// takes its place.
    pub fn remove(&mut self, id: u32, at: Placement) {
        let t = &mut self.tiers[at.tier as usize];
        let Some(v) = t.cells.get_mut(&at.cell) else {
            return;
        };
        let i = self
            .offset
            .get(id as usize)
            .map_or(usize::MAX, |&o| o as usize);
        if v.get(i) != Some(&id) {
            return; // not filed here: nothing to remove.
        }
        v.swap_remove(i);
        if let Some(&moved) = v.get(i) {
            self.offset[moved as usize] = i as u32;
        }
        t.count -= 1;
        if v.is_empty() {
            t.cells.remove(&at.cell);
        }
    }

    /// Moves `id` if its placement changed; returns the new placement.
    pub fn update(&mut self, id: u32, old: Placement, new: Placement) -> Placement {
        if old != new {
            self.remove(id, old);
            self.insert(id, new);
        }
        new
    }

    /// Calls `f` for every id whose range may cover `p` (a superset: the caller
    /// checks the exact distance against each candidate's own range).
    pub fn candidates(&self, p: [f64; 3], mut f: impl FnMut(u32)) {
        for (i, t) in self.tiers.iter().enumerate() {
            if t.count == 0 {
                continue;
            }
            let (cx, cy, cz) = cell_of(p, TIER_NM[i] * fgmp::METRES_PER_NM);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        let key = (
                            cx.saturating_add(dx),
                            cy.saturating_add(dy),
                            cz.saturating_add(dz),
                        );
                        if let Some(v) = t.cells.get(&key) {
                            v.iter().for_each(|&id| f(id));
                        }
                    }
                }
            }
        }
    }

    /// Number of filed entries.
    pub fn len(&self) -> usize {
        self.tiers.iter().map(|t| t.count).sum()
    }

    /// Whether nothing is filed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fgmp::geo::{chord_nm, to_ecef, Geodetic};
    use proptest::prelude::*;

    fn at(lat: f64, lon: f64) -> [f64; 3] {
        to_ecef(Geodetic {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: 1000.0,
        })
    }

    proptest! {
        /// Whatever the positions and ranges, the candidates include everyone whose
        /// range covers the query point (the index never hides a receiver).
        #[test]
        fn never_misses_a_receiver(
            pilots in prop::collection::vec((-89.0f64..89.0, -180.0f64..180.0, 1.0f64..2000.0), 1..60),
            q in (-89.0f64..89.0, -180.0f64..180.0),
        ) {
            let mut idx = SpatialIndex::new();
            let pos: Vec<_> = pilots.iter().map(|&(la, lo, r)| (at(la, lo), r)).collect();
            for (i, &(p, r)) in pos.iter().enumerate() {
                idx.insert(i as u32, SpatialIndex::placement(p, r));
            }
            let qp = at(q.0, q.1);
            let mut got = Vec::new();
            idx.candidates(qp, |id| got.push(id));
            for (i, &(p, r)) in pos.iter().enumerate() {
                if chord_nm(p, qp) < r {
                    prop_assert!(got.contains(&(i as u32)), "pilot {} at range {} missed", i, r);
                }
            }
        }
    }

    proptest! {
        /// Any sequence of inserts, moves and removes in a few crowded cells leaves
        /// exactly the live ids filed, each once (the O(1) removal keeps its offsets right).
        #[test]
        fn inserts_moves_and_removes_keep_exactly_the_live_ids(
            ops in prop::collection::vec((0u32..40, 0usize..3, any::<bool>()), 1..400),
        ) {
            let spots = [at(10.0, 10.0), at(10.0001, 10.0), at(-40.0, 100.0)];
            let mut idx = SpatialIndex::new();
            let mut live: std::collections::BTreeMap<u32, Placement> = Default::default();
            for (id, spot, remove) in ops {
                let p = SpatialIndex::placement(spots[spot], 50.0);
                match (live.get(&id).copied(), remove) {
                    (Some(old), true) => {
                        idx.remove(id, old);
                        live.remove(&id);
                    }
                    (Some(old), false) => {
                        live.insert(id, idx.update(id, old, p));
                    }
                    (None, _) => {
                        idx.insert(id, p);
                        live.insert(id, p);
                    }
                }
            }
            prop_assert_eq!(idx.len(), live.len());
            let mut got = Vec::new();
            for s in spots {
                idx.candidates(s, |id| got.push(id));
            }
            got.sort_unstable();
            got.dedup();
            prop_assert_eq!(got, live.keys().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn far_pilots_are_not_visited() {
        let mut idx = SpatialIndex::new();
        // 1000 pilots at 100 nm in Australia, a query in Iceland.
        for i in 0..1000 {
            let p = at(-33.0 + (i as f64) * 0.001, 151.0);
            idx.insert(i, SpatialIndex::placement(p, 100.0));
        }
        let mut n = 0;
        idx.candidates(at(64.0, -22.6), |_| n += 1);
        assert_eq!(n, 0);
        let mut n = 0;
        idx.candidates(at(-33.0, 151.0), |_| n += 1);
        assert_eq!(n, 1000);
    }

    #[test]
    fn remove_and_move() {
        let mut idx = SpatialIndex::new();
        let a = SpatialIndex::placement(at(10.0, 10.0), 100.0);
        let b = SpatialIndex::placement(at(-10.0, -10.0), 100.0);
        idx.insert(7, a);
        let now = idx.update(7, a, b);
        assert_eq!(now, b);
        let mut seen = vec![];
        idx.candidates(at(10.0, 10.0), |id| seen.push(id));
        assert!(seen.is_empty());
        idx.candidates(at(-10.0, -10.0), |id| seen.push(id));
        assert_eq!(seen, vec![7]);
        idx.remove(7, b);
        assert!(idx.is_empty());
    }
}
