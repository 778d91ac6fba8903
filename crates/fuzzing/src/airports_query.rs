//! The airport table's readers on any text: a `bbox` query (what `GET /api/airports`
//! parses from a stranger), a table in `airports.tsv`'s format, the nearest-airport
//! search and the aircraft class table on any model path. Never panics; what `within`
//! returns is inside the box, of the kind asked, at most the limit, the most prominent
//! first; on the input's own table it is exactly what a full scan finds, whichever of
//! its two ways it takes (the grid cells, or the table in answer order when the cells
//! hold more than the limit); `nearest` is within its distance.

use airports::{Airport, BBox, Kind, Table};
use fgmp::geo::great_circle_m;

/// Whether `a` comes before `b` in `within`'s answer: larger kind, then lower ident.
fn in_order(a: &Airport<'_>, b: &Airport<'_>) -> bool {
    a.kind.rank() > b.kind.rank() || (a.kind.rank() == b.kind.rank() && a.ident < b.ident)
}

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (query, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let table = airports::table();
    if let Ok(b) = BBox::parse(query) {
        for min in [Kind::Large, Kind::Small] {
            let (found, more) = table.within(b, min, 50);
            assert!(found.len() <= 50);
            assert!(!more || found.len() == 50);
            assert!(found.windows(2).all(|w| in_order(w[0], w[1])), "{found:?}");
            for a in found {
                assert!(b.contains(a.lat, a.lon), "{a:?} outside {b:?}");
                assert!(a.kind.rank() >= min.rank());
            }
        }
        for (lat, lon) in [(b.south, b.west), (b.north, b.east)] {
            if let Some((a, d)) = table.nearest(lat, lon, 10_000.0) {
                assert!(d <= 10_000.0);
                assert!((great_circle_m(lat, lon, a.lat, a.lon) - d).abs() < 1e-6);
            }
        }
    }
    let small = Table::parse(rest);
    let all = small.within(BBox::WORLD, Kind::Seaplane, usize::MAX).0;
    assert_eq!(all.len(), small.len());
    for a in &all {
        assert!(a.lat.abs() <= 90.0 && a.lon.abs() <= 180.0);
        assert!(small.get(a.ident).is_some());
    }
    if let Ok(b) = BBox::parse(query) {
        for min in [Kind::Large, Kind::Medium, Kind::Small] {
            let mut scan: Vec<&Airport<'_>> = all
                .iter()
                .copied()
                .filter(|a| a.kind.rank() >= min.rank() && b.contains(a.lat, a.lon))
                .collect();
            scan.sort_by(|x, y| y.kind.rank().cmp(&x.kind.rank()).then(x.ident.cmp(y.ident)));
            for limit in [0, 1, 3, usize::MAX] {
                let (got, more) = small.within(b, min, limit);
                assert_eq!(more, scan.len() > limit, "{b:?} {min:?} {limit}");
                assert!(
                    got.iter()
                        .map(|a| a.ident)
                        .eq(scan.iter().take(limit).map(|a| a.ident)),
                    "{b:?} {min:?} {limit}: {got:?}"
                );
            }
        }
    }
    let _ = small.nearest(0.0, 0.0, 1e7);
    let class = fgmp::aircraft::class(query);
    assert!(fgmp::aircraft::Class::ALL.contains(&class));
    let _ = fgmp::aircraft::name(query);
}
