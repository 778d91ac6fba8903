//! The world's airports, from OurAirports' public-domain table embedded at build time
//! (`data/airports.tsv`, written by `scripts/airports-update`; `data/README.md` says
//! what is in it and what is left out). Lookups by ident, by area (for the map) and
//! the nearest to a point (for a flight's departure and arrival).
//!
//! Pure: the table is parsed once from the embedded text, on first use, into a
//! one-degree grid; nothing here reads a file, a socket or the clock.

use fgmp::geo::{great_circle_m, EARTH_RADIUS_M};
use std::sync::OnceLock;

/// The embedded table, as `scripts/airports-update` wrote it.
pub const EMBEDDED: &str = include_str!("../data/airports.tsv");

/// What kind of field an airport is, by OurAirports' `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A seaplane base (`W`).
    Seaplane,
    /// A small airport (`S`): a strip or a general-aviation field.
    Small,
    /// A medium airport (`M`): regional, with some scheduled service.
    Medium,
    /// A large airport (`L`): a major hub.
    Large,
}

impl Kind {
    /// The name used in the API (`large`, `medium`, `small`, `seaplane`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Large => "large",
            Kind::Medium => "medium",
            Kind::Small => "small",
            Kind::Seaplane => "seaplane",
        }
    }

    /// Parses [`Kind::as_str`]'s names.
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "large" => Kind::Large,
            "medium" => Kind::Medium,
            "small" => Kind::Small,
            "seaplane" => Kind::Seaplane,
            _ => return None,
        })
    }

    fn from_code(c: &str) -> Option<Kind> {
        Some(match c {
            "L" => Kind::Large,
            "M" => Kind::Medium,
            "S" => Kind::Small,
            "W" => Kind::Seaplane,
            _ => return None,
        })
    }

    /// How prominent it is on a map: larger draws first and at lower zoom. A seaplane
    /// base ranks with small airports.
    pub fn rank(self) -> u8 {
        match self {
            Kind::Large => 3,
            Kind::Medium => 2,
            Kind::Small | Kind::Seaplane => 1,
        }
    }
}

/// One airport.
#[derive(Debug, Clone, PartialEq)]
pub struct Airport<'a> {
    /// The ICAO code where it has one (`EGLL`), else its local or GPS code.
    pub ident: &'a str,
    /// Its kind.
    pub kind: Kind,
    /// Latitude, degrees north.
    pub lat: f64,
    /// Longitude, degrees east.
    pub lon: f64,
    /// Field elevation, feet, where known.
    pub elevation_ft: Option<i32>,
    /// ISO 3166-1 alpha-2 country code.
    pub country: &'a str,
    /// Its name.
    pub name: &'a str,
}

/// Why [`BBox::parse`] refused its text; the message names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BBoxError {
    /// Not four comma-separated parts (the text given).
    #[error("bbox: expected west,south,east,north, got {0:?}")]
    Shape(String),
    /// A part that is not a finite number (that part).
    #[error("bbox: {0:?} is not a number")]
    NotANumber(String),
    /// West or east outside -180..180.
    #[error("bbox: longitudes must be within -180..180")]
    Longitude,
    /// South or north outside -90..90.
    #[error("bbox: latitudes must be within -90..90")]
    Latitude,
    /// South greater than north.
    #[error("bbox: south is north of north")]
    SouthOfNorth,
}

/// A rectangle of the map, degrees; `west > east` crosses the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BBox {
    /// Western edge, longitude.
    pub west: f64,
    /// Southern edge, latitude.
    pub south: f64,
    /// Eastern edge, longitude.
    pub east: f64,
    /// Northern edge, latitude.
    pub north: f64,
}

impl BBox {
    /// The whole world.
    pub const WORLD: BBox = BBox {
        west: -180.0,
        south: -90.0,
        east: 180.0,
        north: 90.0,
    };

    /// Parses `west,south,east,north` (the order of GeoJSON and OpenStreetMap),
    /// naming what is wrong.
    pub fn parse(s: &str) -> Result<BBox, BBoxError> {
        let v: Vec<&str> = s.split(',').collect();
        if v.len() != 4 {
            return Err(BBoxError::Shape(s.to_string()));
        }
        let mut n = [0f64; 4];
        for (i, part) in v.iter().enumerate() {
            n[i] = part
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| BBoxError::NotANumber(part.to_string()))?;
        }
        let b = BBox {
            west: n[0],
            south: n[1],
            east: n[2],
            north: n[3],
        };
        if !(-180.0..=180.0).contains(&b.west) || !(-180.0..=180.0).contains(&b.east) {
            return Err(BBoxError::Longitude);
        }
        if !(-90.0..=90.0).contains(&b.south) || !(-90.0..=90.0).contains(&b.north) {
            return Err(BBoxError::Latitude);
        }
        if b.south > b.north {
            return Err(BBoxError::SouthOfNorth);
        }
        Ok(b)
    }

    /// Whether the point is inside (edges included).
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        if lat < self.south || lat > self.north {
            return false;
        }
        if self.west <= self.east {
            lon >= self.west && lon <= self.east
        } else {
            lon >= self.west || lon <= self.east
        }
    }
}

const COLS: usize = 360;
const ROWS: usize = 180;

/// The parsed table with its grid.
#[derive(Debug)]
pub struct Table<'a> {
    /// By ident, ascending.
    airports: Vec<Airport<'a>>,
    /// `cell_start[c]..cell_start[c + 1]` indexes `in_cells` for grid cell `c`.
    cell_start: Vec<u32>,
    /// Airport indexes, grouped by cell.
    in_cells: Vec<u32>,
    /// Airport indexes, the most prominent first: by rank, then ident (the order
    /// [`Table::within`] answers in).
    by_rank: Vec<u32>,
    /// Lines that did not parse (0 for the embedded table; its test says so).
    pub skipped: usize,
}

fn cell_of(lat: f64, lon: f64) -> (usize, usize) {
    let row = ((lat + 90.0).floor() as isize).clamp(0, ROWS as isize - 1) as usize;
    let col = ((lon + 180.0).floor() as isize).clamp(0, COLS as isize - 1) as usize;
    (row, col)
}

fn parse_line(line: &str) -> Option<Airport<'_>> {
    let mut f = line.split('\t');
    let ident = f.next()?;
    let kind = Kind::from_code(f.next()?)?;
    let lat: f64 = f.next()?.parse().ok()?;
    let lon: f64 = f.next()?.parse().ok()?;
    let elev = f.next()?;
    let elevation_ft = if elev.is_empty() {
        None
    } else {
        Some(elev.parse().ok()?)
    };
    let country = f.next()?;
    let name = f.next()?;
    // Idents are upper-case letters, digits and dashes (`EGLL`, `US-1234`): what
    // `get` looks up, upper-casing what it is asked.
    let ident_ok = !ident.is_empty()
        && ident
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-');
    if f.next().is_some() || !ident_ok {
        return None;
    }
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return None;
    }
    Some(Airport {
        ident,
        kind,
        lat,
        lon,
        elevation_ft,
        country,
        name,
    })
}

impl<'a> Table<'a> {
    /// Parses a table in `airports.tsv`'s format; `#` lines are comments and a line
    /// that does not parse is skipped and counted in [`Table::skipped`].
    pub fn parse(text: &'a str) -> Table<'a> {
        let mut skipped = 0;
        let mut airports: Vec<Airport<'a>> = Vec::new();
        for line in text.lines() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            match parse_line(line) {
                Some(a) => airports.push(a),
                None => skipped += 1,
            }
        }
        airports.sort_by(|a, b| a.ident.cmp(b.ident));
        airports.dedup_by(|b, a| a.ident == b.ident);
        // Airports by grid cell (then ident, the order they are in), and each cell's
        // first place in that order: written only where a cell's start differs from
        // zero's, so a small table (the fuzzer's) costs little more than its lines.
        let mut keyed: Vec<(u32, u32)> = airports
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (r, c) = cell_of(a.lat, a.lon);
                ((r * COLS + c) as u32, i as u32)
            })
            .collect();
        keyed.sort_unstable();
        let mut cell_start = vec![0u32; ROWS * COLS + 1];
        // Cells before `unset` have their start.
        let mut unset = 0;
        for (place, &(cell, _)) in keyed.iter().enumerate() {
            let cell = cell as usize;
            if cell >= unset {
                cell_start[unset..=cell].fill(place as u32);
                unset = cell + 1;
            }
        }
        cell_start[unset..].fill(keyed.len() as u32);
        let in_cells: Vec<u32> = keyed.into_iter().map(|(_, i)| i).collect();
        let mut by_rank: Vec<u32> = (0..airports.len() as u32).collect();
        // `airports` is in ident order, so a stable sort by rank keeps it within a rank.
        by_rank.sort_by_key(|&i| std::cmp::Reverse(airports[i as usize].kind.rank()));
        Table {
            airports,
            cell_start,
            in_cells,
            by_rank,
            skipped,
        }
    }

    /// How many airports it holds.
    pub fn len(&self) -> usize {
        self.airports.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.airports.is_empty()
    }

    /// The airport with this ident (case-insensitive).
    pub fn get(&self, ident: &str) -> Option<&Airport<'a>> {
        let up = ident.to_ascii_uppercase();
        self.airports
            .binary_search_by(|a| a.ident.cmp(up.as_str()))
            .ok()
            .map(|i| &self.airports[i])
    }

    fn cell(&self, row: usize, col: usize) -> impl Iterator<Item = &Airport<'a>> {
        let c = row * COLS + col;
        let (s, e) = (self.cell_start[c] as usize, self.cell_start[c + 1] as usize);
        self.in_cells[s..e]
            .iter()
            .map(|&i| &self.airports[i as usize])
    }

    /// The grid rows and columns that cover `lat`±`dlat` and `lon`±`dlon`, wrapping
    /// at the antimeridian.
    fn cells_around(
        lat: f64,
        lon: f64,
        dlat: f64,
        dlon: f64,
    ) -> (std::ops::RangeInclusive<usize>, Vec<usize>) {
        let (r0, _) = cell_of((lat - dlat).max(-90.0), 0.0);
        let (r1, _) = cell_of((lat + dlat).min(90.0), 0.0);
        let cols: Vec<usize> = if dlon >= 180.0 {
            (0..COLS).collect()
        } else {
            let first = (lon - dlon + 180.0).floor() as isize;
            let last = (lon + dlon + 180.0).floor() as isize;
            (first..=last)
                .map(|c| c.rem_euclid(COLS as isize) as usize)
                .collect()
        };
        (r0..=r1, cols)
    }

    /// The nearest airport within `within_m` metres of the point, with its distance;
    /// ties go to the larger kind, then the lower ident.
    pub fn nearest<'s>(
        &'s self,
        lat: f64,
        lon: f64,
        within_m: f64,
    ) -> Option<(&'s Airport<'a>, f64)> {
        if !lat.is_finite() || !lon.is_finite() || !within_m.is_finite() || within_m < 0.0 {
            return None;
        }
        let lat = lat.clamp(-90.0, 90.0);
        let lon = (lon + 180.0).rem_euclid(360.0) - 180.0;
        let dlat = (within_m / EARTH_RADIUS_M).to_degrees();
        let coslat = (lat.abs() + dlat).min(90.0).to_radians().cos();
        let dlon = if coslat < 1e-6 {
            180.0
        } else {
            (dlat / coslat).min(180.0)
        };
        let mut best: Option<(&'s Airport<'a>, f64)> = None;
        let mut consider = |a: &'s Airport<'a>| {
            let d = great_circle_m(lat, lon, a.lat, a.lon);
            if d > within_m {
                return;
            }
            // A total order (idents are unique): the answer does not depend on the
            // order the airports are seen in.
            let better = match best {
                None => true,
                Some((b, bd)) => {
                    d < bd
                        || (d == bd
                            && (a.kind, std::cmp::Reverse(a.ident))
                                > (b.kind, std::cmp::Reverse(b.ident)))
                }
            };
            if better {
                best = Some((a, d));
            }
        };
        let (rows, cols) = Self::cells_around(lat, lon, dlat, dlon);
        if rows.clone().count() * cols.len() >= self.airports.len() {
            // More cells to visit than airports (a wide radius, a small table): every
            // airport once instead.
            self.airports.iter().for_each(consider);
        } else {
            for r in rows {
                for &c in &cols {
                    self.cell(r, c).for_each(&mut consider);
                }
            }
        }
        best
    }

    /// The airports inside `bbox` of kind rank at least `min`'s, the most prominent
    /// first (by rank, then ident), at most `limit`; the flag says whether more were
    /// left out.
    ///
    /// Its cost is bounded by one pass over the table, with no sort of more than
    /// `limit` airports: when the box's grid cells hold more than `limit` airports
    /// (the whole world, a continent: what `GET /api/airports` asks by default), or
    /// are more than the table's airports, it walks the table in answer order and
    /// stops at `limit` + 1 found; otherwise it gathers the cells' airports and sorts
    /// those. (Before, it always gathered and
    /// sorted: 3-7 ms for the world at `small` and 500, about 20 times this.)
    pub fn within(&self, bbox: BBox, min: Kind, limit: usize) -> (Vec<&Airport<'a>>, bool) {
        let (r0, _) = cell_of(bbox.south, 0.0);
        let (r1, _) = cell_of(bbox.north, 0.0);
        let (_, c0) = cell_of(0.0, bbox.west);
        let (_, c1) = cell_of(0.0, bbox.east);
        // Column runs of one row (two when the box crosses the antimeridian; one, every
        // column, when it crosses it and its edges share a column: before, that column
        // was visited twice and its airports answered twice).
        let runs: [(usize, usize); 2] = if bbox.west <= bbox.east {
            [(c0, c1 + 1), (0, 0)]
        } else if c1 >= c0 {
            [(0, COLS), (0, 0)]
        } else {
            [(c0, COLS), (0, c1 + 1)]
        };
        let in_cells: usize = (r0..=r1)
            .flat_map(|r| {
                runs.iter().map(move |&(a, b)| {
                    (self.cell_start[r * COLS + b] - self.cell_start[r * COLS + a]) as usize
                })
            })
            .sum();
        let cells = (r1 - r0 + 1) * runs.iter().map(|&(a, b)| b - a).sum::<usize>();
        let wanted = |a: &&Airport<'a>| a.kind.rank() >= min.rank() && bbox.contains(a.lat, a.lon);
        let mut found: Vec<&Airport<'a>> = if in_cells > limit || cells >= self.airports.len() {
            self.by_rank
                .iter()
                .map(|&i| &self.airports[i as usize])
                .take_while(|a| a.kind.rank() >= min.rank())
                .filter(wanted)
                .take(limit.saturating_add(1))
                .collect()
        } else {
            let mut found: Vec<&Airport<'a>> = Vec::new();
            for r in r0..=r1 {
                for &(a, b) in &runs {
                    for c in a..b {
                        found.extend(self.cell(r, c).filter(wanted));
                    }
                }
            }
            // Idents are unique: an unstable sort gives the one order.
            found.sort_unstable_by(|a, b| {
                b.kind.rank().cmp(&a.kind.rank()).then(a.ident.cmp(b.ident))
            });
            found
        };
        let more = found.len() > limit;
        found.truncate(limit);
        (found, more)
    }
}

/// The embedded table, parsed on first use (about 45,000 airports; a few
/// milliseconds).
pub fn table() -> &'static Table<'static> {
    static TABLE: OnceLock<Table<'static>> = OnceLock::new();
    TABLE.get_or_init(|| Table::parse(EMBEDDED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_embedded_table_parses_whole() {
        let t = table();
        assert_eq!(t.skipped, 0);
        let lines = EMBEDDED.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(t.len(), lines, "no duplicate idents");
        assert!(t.len() > 40_000, "{}", t.len());
    }

    #[test]
    fn known_airports_are_where_they_are() {
        let egll = table().get("egll").unwrap();
        assert_eq!(egll.name, "London Heathrow Airport");
        assert_eq!(egll.kind, Kind::Large);
        assert_eq!(egll.country, "GB");
        assert!((egll.lat - 51.4706).abs() < 0.001 && (egll.lon + 0.46194).abs() < 0.001);
        assert_eq!(egll.elevation_ft, Some(83));
        assert_eq!(table().get("KSFO").unwrap().kind, Kind::Large);
        assert!(table().get("QQQQ").is_none());
        assert_eq!(
            table().get("ZZZZ").unwrap().name,
            "Satsuma Iōjima Airport",
            "UTF-8 names kept"
        );
    }

    #[test]
    fn nearest_finds_the_field_under_a_parked_aircraft() {
        // On Heathrow's northern runway (27R), 1.5 km from the reference point.
        let (a, d) = table().nearest(51.4775, -0.4614, 5_000.0).unwrap();
        assert_eq!(a.ident, "EGLL", "{a:?} at {d}");
        // Keflavik's apron.
        assert_eq!(
            table().nearest(63.985, -22.62, 5_000.0).unwrap().0.ident,
            "BIKF"
        );
        // The middle of the Atlantic: nothing within 5 km.
        assert!(table().nearest(40.0, -40.0, 5_000.0).is_none());
    }

    const SMALL: &str = "# test\n\
        AAAA\tS\t0.00000\t179.99000\t\tFJ\tEast edge\n\
        BBBB\tL\t0.00000\t-179.99000\t10\tFJ\tWest edge\n\
        CCCC\tM\t89.99000\t0.00000\t\tAQ\tPole\n\
        broken line\n\
        DDDD\tW\t10.0\t10.0\t5\tXX\tLake\n";

    #[test]
    fn nearest_and_within_wrap_at_the_antimeridian_and_poles() {
        let t = Table::parse(SMALL);
        assert_eq!(t.skipped, 1);
        // 0.02° of longitude at the equator is 2.2 km, across the date line.
        assert_eq!(t.nearest(0.0, 179.999, 5_000.0).unwrap().0.ident, "AAAA");
        assert_eq!(t.nearest(0.0, -179.999, 1_500.0).unwrap().0.ident, "BBBB");
        assert_eq!(t.nearest(89.999, 120.0, 5_000.0).unwrap().0.ident, "CCCC");
        let across = BBox {
            west: 179.0,
            south: -1.0,
            east: -179.0,
            north: 1.0,
        };
        let (got, more) = t.within(across, Kind::Small, 10);
        assert_eq!(
            got.iter().map(|a| a.ident).collect::<Vec<_>>(),
            ["BBBB", "AAAA"]
        );
        assert!(!more);
        let (got, more) = t.within(BBox::WORLD, Kind::Medium, 1);
        assert_eq!(got.iter().map(|a| a.ident).collect::<Vec<_>>(), ["BBBB"]);
        assert!(more);
        assert_eq!(
            t.within(BBox::WORLD, Kind::Small, 10).0.len(),
            4,
            "a seaplane base ranks with small fields"
        );
    }

    #[test]
    fn an_ident_that_get_could_not_find_is_refused() {
        // Found by the airports_query fuzzer: a lower-case ident was kept, and `get`,
        // which upper-cases what it is asked, could not find it.
        let t = Table::parse("de3\x00\x00raft\tW\t90\t180\t\t\t\nOK-1\tS\t1\t1\t\t\t\n");
        assert_eq!(t.skipped, 1);
        assert_eq!(t.len(), 1);
        assert!(t.get("ok-1").is_some());
    }

    #[test]
    fn a_box_across_the_antimeridian_with_both_edges_in_one_column_answers_each_airport_once() {
        // Found by the proptest below: west 45.7, east 45.3 is the whole world but
        // 45.3..45.7, and column 225 was visited twice.
        let t = Table::parse("AAAA\tS\t10\t45.1\t\tXX\tIn\nBBBB\tS\t10\t45.5\t\tXX\tOut\n");
        let b = BBox::parse("45.7,0,45.3,45").unwrap();
        let (got, more) = t.within(b, Kind::Small, 10);
        assert_eq!(got.iter().map(|a| a.ident).collect::<Vec<_>>(), ["AAAA"]);
        assert!(!more);
        let (got, _) = table().within(b, Kind::Small, usize::MAX);
        let mut idents: Vec<&str> = got.iter().map(|a| a.ident).collect();
        idents.dedup();
        assert_eq!(idents.len(), got.len(), "no airport twice");
    }

    #[test]
    fn bbox_parse_names_what_is_wrong() {
        assert_eq!(
            BBox::parse("-1,50,1,52").unwrap(),
            BBox {
                west: -1.0,
                south: 50.0,
                east: 1.0,
                north: 52.0
            }
        );
        assert!(BBox::parse("1,2,3")
            .unwrap_err()
            .to_string()
            .contains("west,south,east,north"));
        assert!(BBox::parse("a,2,3,4")
            .unwrap_err()
            .to_string()
            .contains("\"a\""));
        assert!(BBox::parse("0,95,1,96")
            .unwrap_err()
            .to_string()
            .contains("latitudes"));
        assert!(BBox::parse("0,10,1,5")
            .unwrap_err()
            .to_string()
            .contains("south"));
        assert!(BBox::parse("NaN,1,2,3").is_err());
    }

    #[test]
    fn the_world_at_large_kind_is_a_few_hundred_hubs() {
        let (got, more) = table().within(BBox::WORLD, Kind::Large, 10_000);
        assert!(!more);
        assert!((300..1_000).contains(&got.len()), "{}", got.len());
        assert!(got.iter().all(|a| a.kind == Kind::Large));
    }

    proptest! {
        /// `nearest` agrees with a scan of the whole table.
        #[test]
        fn nearest_agrees_with_a_full_scan(lat in -89.0f64..89.0, lon in -180.0f64..180.0, km in 1.0f64..300.0) {
            let t = table();
            let within = km * 1000.0;
            let got = t.nearest(lat, lon, within).map(|(a, _)| a.ident);
            let scan = t.airports.iter()
                .map(|a| (a, great_circle_m(lat, lon, a.lat, a.lon)))
                .filter(|(_, d)| *d <= within)
                .min_by(|x, y| x.1.partial_cmp(&y.1).unwrap()
                    .then((y.0.kind, std::cmp::Reverse(y.0.ident)).cmp(&(x.0.kind, std::cmp::Reverse(x.0.ident)))))
                .map(|(a, _)| a.ident);
            prop_assert_eq!(got, scan);
        }

        /// On a small table (fewer airports than the cells a wide radius covers, so it
        /// scans them all), `nearest` is the full scan's answer too.
        #[test]
        fn nearest_on_a_small_table_agrees_with_a_full_scan(
            pts in proptest::collection::vec((-90.0f64..=90.0, -180.0f64..=180.0, 0usize..4), 1..40),
            lat in -90.0f64..=90.0, lon in -180.0f64..=180.0, km in 1.0f64..20_000.0,
        ) {
            let text: String = pts.iter().enumerate()
                .map(|(i, (la, lo, k))| format!("A{i}\t{}\t{la}\t{lo}\t\tXX\tx\n", ["L", "M", "S", "W"][*k]))
                .collect();
            let t = Table::parse(&text);
            let within = km * 1000.0;
            let got = t.nearest(lat, lon, within).map(|(a, _)| a.ident);
            let scan = t.airports.iter()
                .map(|a| (a, great_circle_m(lat, lon, a.lat, a.lon)))
                .filter(|(_, d)| *d <= within)
                .min_by(|x, y| x.1.partial_cmp(&y.1).unwrap()
                    .then((y.0.kind, std::cmp::Reverse(y.0.ident)).cmp(&(x.0.kind, std::cmp::Reverse(x.0.ident)))))
                .map(|(a, _)| a.ident);
            prop_assert_eq!(got, scan);
        }

        /// `within` returns exactly the airports a full scan finds inside the box.
        #[test]
        fn within_agrees_with_a_full_scan(w in -180.0f64..180.0, s in -90.0f64..80.0, dw in 0.0f64..40.0, dh in 0.0f64..10.0) {
            let t = table();
            let e = { let x = w + dw; if x > 180.0 { x - 360.0 } else { x } };
            let b = BBox { west: w, south: s, east: e, north: (s + dh).min(90.0) };
            let (got, _) = t.within(b, Kind::Small, usize::MAX);
            let mut got: Vec<&str> = got.iter().map(|a| a.ident).collect();
            got.sort();
            let scan: Vec<&str> = t.airports.iter().filter(|a| b.contains(a.lat, a.lon)).map(|a| a.ident).collect();
            prop_assert_eq!(got, scan);
        }

        /// Any box, any kind, any limit: `within` answers what a full scan finds inside
        /// the box, sorted the most prominent first and cut at the limit, whichever of
        /// its two ways (the cells, or the table in answer order) it takes.
        #[test]
        fn within_any_box_and_limit_agrees_with_a_sorted_full_scan(
            w in -180.0f64..=180.0, e in -180.0f64..=180.0,
            s in -90.0f64..=90.0, dh in 0.0f64..=180.0,
            kind in 0usize..4, limit in prop_oneof![0usize..3, 0usize..600, 0usize..50_000],
        ) {
            let t = table();
            let min = [Kind::Seaplane, Kind::Small, Kind::Medium, Kind::Large][kind];
            let b = BBox { west: w, south: s, east: e, north: (s + dh).min(90.0) };
            let (got, more) = t.within(b, min, limit);
            let got: Vec<&str> = got.iter().map(|a| a.ident).collect();
            let mut scan: Vec<&Airport<'_>> = t.airports.iter()
                .filter(|a| a.kind.rank() >= min.rank() && b.contains(a.lat, a.lon))
                .collect();
            scan.sort_by(|x, y| y.kind.rank().cmp(&x.kind.rank()).then(x.ident.cmp(y.ident)));
            prop_assert_eq!(more, scan.len() > limit);
            let scan: Vec<&str> = scan.iter().take(limit).map(|a| a.ident).collect();
            prop_assert_eq!(got, scan);
        }

        /// Any text parses without a panic, and a table holds only valid coordinates.
        #[test]
        fn any_text_parses(text in "(([A-Z0-9]{0,5}|\t|[LMSWX]|-?[0-9]{1,3}(\\.[0-9]{0,5})?|#)\\t?){0,12}\n?") {
            let t = Table::parse(&text);
            for a in &t.airports {
                prop_assert!(a.lat.abs() <= 90.0 && a.lon.abs() <= 180.0);
            }
        }
    }
}
