//! The airport table's readers on any text: a `bbox` query (what `GET /api/airports`
//! parses from a stranger), a table in `airports.tsv`'s format, the nearest-airport
//! search and the aircraft class table on any model path. Never panics; what `within`
//! returns is inside the box, of the kind asked, and at most the limit; `nearest` is
//! within its distance.

use airports::{BBox, Kind, Table};
use fgmp::geo::great_circle_m;

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (query, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let table = airports::table();
    if let Ok(b) = BBox::parse(query) {
        for min in [Kind::Large, Kind::Small] {
            let (found, _) = table.within(b, min, 50);
            assert!(found.len() <= 50);
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
    for a in small.within(BBox::WORLD, Kind::Seaplane, usize::MAX).0 {
        assert!(a.lat.abs() <= 90.0 && a.lon.abs() <= 180.0);
        assert!(small.get(a.ident).is_some());
    }
    let _ = small.nearest(0.0, 0.0, 1e7);
    let class = fgmp::aircraft::class(query);
    assert!(fgmp::aircraft::Class::ALL.contains(&class));
    let _ = fgmp::aircraft::name(query);
}
