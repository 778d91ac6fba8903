//! A flight as GPX 1.1 and KML 2.2, a callsign's flights as CSV (RFC 4180): what
//! `GET /api/flights/{id}/gpx`, `/api/flights/{id}/kml` and
//! `/api/callsigns/{callsign}/csv` send. Pure: written here, by hand (the formats
//! are small), with every text a stranger chose (callsigns, model names) escaped.
//!
//! - **XML text** ([`xml_text`]): `&`, `<`, `>`, `"` and `'` become entities, and
//!   a carriage return `&#xD;` (a parser would read a raw one as a line feed), and
//!   the characters XML 1.0 does not allow at all (control characters other than
//!   tab, line feed and carriage return; U+FFFE, U+FFFF) become U+FFFD.
//! - **CSV fields** ([`csv_field`]): a field holding a comma, a quote, a carriage
//!   return or a line feed is quoted, its quotes doubled; lines end in CRLF. A text
//!   field (callsign, model, name) that begins with `=`, `+`, `-`, `@`, a tab or a
//!   carriage return gets a leading `'`, so that a spreadsheet does not run it as a
//!   formula (OWASP's advice on CSV injection).
//! - **Altitudes**: positions carry the height above the WGS84 ellipsoid, in feet;
//!   GPX's `<ele>` and KML's coordinates get it in metres, as it is (no geoid
//!   correction: FlightGear places its scenery on the ellipsoid).

use crate::flights::FlightEntry;

const M_PER_FT: f64 = 0.3048;

/// One position of a track: Unix seconds, latitude, longitude, altitude in feet.
pub type TrackPoint = (i64, f64, f64, f64);

/// `s` as XML character data or an attribute value (either quote).
pub fn xml_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // A parser reads a raw CR as LF (XML's end-of-line rule): kept as a reference.
            '\r' => out.push_str("&#xD;"),
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Unix seconds as ISO 8601 UTC, `2026-12-03T16:50:09Z` (the `time` crate's
/// RFC 3339; a time outside its years -9999 to 9999, which no flight has, as the
/// epoch).
pub fn iso8601(t: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(t)
        .ok()
        .and_then(|d| {
            d.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
}

/// A latitude for GPX's `latitudeType` (-90 to 90), to 7 decimals (1 cm: a
/// decimal of at most 10 digits, which every schema validator takes).
fn lat(x: f64) -> f64 {
    if x.is_finite() {
        crate::round(x.clamp(-90.0, 90.0), 7)
    } else {
        0.0
    }
}

/// A longitude for GPX's `longitudeType` (-180 inclusive to 180 exclusive), to 7
/// decimals.
fn lon(x: f64) -> f64 {
    let x = if (-180.0..180.0).contains(&x) {
        x
    } else if x.is_finite() {
        (x + 180.0).rem_euclid(360.0) - 180.0
    } else {
        0.0
    };
    match crate::round(x, 7) {
        l if l >= 180.0 => -180.0,
        l => l,
    }
}

/// Metres, one decimal, from feet; within ±10,000 km (a number written without an
/// exponent, as `xsd:decimal` wants, and never `inf`).
fn metres(ft: f64) -> f64 {
    if ft.is_finite() {
        crate::round((ft * M_PER_FT).clamp(-1e10, 1e10), 1)
    } else {
        0.0
    }
}

/// `CALLSIGN (Aircraft name)`: the track's name.
fn title(f: &FlightEntry) -> String {
    format!("{} ({})", f.callsign, f.aircraft_name)
}

/// A download's file name: `CALLSIGN-tail`, of the callsign only ASCII letters,
/// digits, `-` and `_` (anything else becomes `_`; 32 characters at most), so it
/// is safe in a `Content-Disposition` header and on any file system.
pub fn file_name(callsign: &str, tail: &str) -> String {
    let cs: String = callsign
        .chars()
        .take(32)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{cs}-{tail}")
}

/// The airports of a flight that the table knows: (`Departure`/`Arrival`, ident,
/// name, lat, lon).
fn endpoints(f: &FlightEntry) -> Vec<(&'static str, String, String, f64, f64)> {
    [("Departure", &f.departure), ("Arrival", &f.arrival)]
        .into_iter()
        .filter_map(|(what, ident)| {
            let ident = ident.as_ref()?;
            let a = airports::table().get(ident)?;
            Some((what, ident.clone(), a.name.to_string(), a.lat, a.lon))
        })
        .collect()
}

/// The flight as GPX 1.1: its departure and arrival airports as waypoints, its
/// track as one `<trk>` of one `<trkseg>`, a `<trkpt>` per position (`<ele>` in
/// metres, then `<time>`).
pub fn gpx(f: &FlightEntry, track: &[TrackPoint]) -> String {
    let mut out = String::with_capacity(200 + 120 * track.len());
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(
        "<gpx version=\"1.1\" creator=\"lobby\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n",
    );
    out.push_str(&format!(
        "  <metadata><name>{}</name><time>{}</time></metadata>\n",
        xml_text(&title(f)),
        iso8601(f.start)
    ));
    for (what, ident, name, la, lo) in endpoints(f) {
        out.push_str(&format!(
            "  <wpt lat=\"{}\" lon=\"{}\"><name>{}</name><desc>{}</desc></wpt>\n",
            lat(la),
            lon(lo),
            xml_text(&ident),
            xml_text(&format!("{what}: {name}"))
        ));
    }
    out.push_str(&format!(
        "  <trk>\n    <name>{}</name>\n    <desc>{}</desc>\n    <trkseg>\n",
        xml_text(&title(f)),
        xml_text(&format!(
            "lobby flight {}: {} on {}",
            f.id, f.model, f.relay
        ))
    ));
    for &(t, la, lo, alt) in track {
        out.push_str(&format!(
            "      <trkpt lat=\"{}\" lon=\"{}\"><ele>{}</ele><time>{}</time></trkpt>\n",
            lat(la),
            lon(lo),
            metres(alt),
            iso8601(t)
        ));
    }
    out.push_str("    </trkseg>\n  </trk>\n</gpx>\n");
    out
}

/// The flight as KML 2.2: a Placemark with its track as a LineString at absolute
/// altitudes (`lon,lat,metres` per position), and a Placemark per known departure
/// and arrival airport.
pub fn kml(f: &FlightEntry, track: &[TrackPoint]) -> String {
    let mut out = String::with_capacity(400 + 40 * track.len());
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<kml xmlns=\"http://www.opengis.net/kml/2.2\">\n<Document>\n");
    out.push_str(&format!("  <name>{}</name>\n", xml_text(&title(f))));
    out.push_str(&format!(
        "  <Placemark>\n    <name>{}</name>\n    <description>{}</description>\n",
        xml_text(&f.callsign),
        xml_text(&format!(
            "lobby flight {}: {} ({}) on {}, {}",
            f.id,
            f.aircraft_name,
            f.model,
            f.relay,
            iso8601(f.start)
        ))
    ));
    out.push_str(
        "    <LineString>\n      <altitudeMode>absolute</altitudeMode>\n      <coordinates>",
    );
    for (i, &(_, la, lo, alt)) in track.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format!("{},{},{}", lon(lo), lat(la), metres(alt)));
    }
    out.push_str("</coordinates>\n    </LineString>\n  </Placemark>\n");
    for (what, ident, name, la, lo) in endpoints(f) {
        out.push_str(&format!(
            "  <Placemark>\n    <name>{}</name>\n    <description>{}</description>\n    <Point><coordinates>{},{}</coordinates></Point>\n  </Placemark>\n",
            xml_text(&format!("{what}: {ident}")),
            xml_text(&name),
            lon(lo),
            lat(la)
        ));
    }
    out.push_str("</Document>\n</kml>\n");
    out
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A text field a stranger chose: a leading `'` when it could start a formula.
fn csv_text(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        csv_field(&format!("'{s}"))
    } else {
        csv_field(s)
    }
}

/// The CSV export's columns, in order.
pub const CSV_COLUMNS: &[&str] = &[
    "id",
    "callsign",
    "model",
    "aircraft_name",
    "aircraft_class",
    "relay",
    "departure",
    "arrival",
    "start",
    "end",
    "duration_s",
    "moving_s",
    "distance_nm",
    "max_alt_ft",
];

/// Flights as CSV: a header row ([`CSV_COLUMNS`]), then a row per flight, CRLF
/// after each; times ISO 8601 UTC, an unknown value empty.
pub fn csv(flights: &[FlightEntry]) -> String {
    let mut out = String::with_capacity(64 + 160 * flights.len());
    out.push_str(&CSV_COLUMNS.join(","));
    out.push_str("\r\n");
    let opt = |x: Option<String>| x.unwrap_or_default();
    for f in flights {
        let row = [
            f.id.to_string(),
            csv_text(&f.callsign),
            csv_text(&f.model),
            csv_text(&f.aircraft_name),
            csv_text(&f.aircraft_class),
            csv_text(&f.relay),
            csv_text(&opt(f.departure.clone())),
            csv_text(&opt(f.arrival.clone())),
            iso8601(f.start),
            opt(f.end.map(iso8601)),
            f.duration_s.to_string(),
            opt(f.moving_s.map(|m| m.to_string())),
            format!("{:.1}", f.distance_nm),
            opt(f.max_alt_ft.map(|a| format!("{a:.0}"))),
        ];
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GPX_NS: &str = "http://www.topografix.com/GPX/1/1";
    const KML_NS: &str = "http://www.opengis.net/kml/2.2";

    fn flight(callsign: &str, model: &str) -> FlightEntry {
        FlightEntry {
            id: 42,
            callsign: callsign.into(),
            model: model.into(),
            aircraft_name: fgmp::aircraft::name(model),
            aircraft_class: fgmp::aircraft::class(model).as_str().into(),
            relay: "edge".into(),
            start: 1_764_780_609,
            end: Some(1_764_781_809),
            duration_s: 1200,
            start_position: None,
            end_position: None,
            distance_nm: 23.456,
            max_alt_ft: Some(4000.4),
            samples: 3,
            moving_s: Some(1100),
            departure: Some("EGLL".into()),
            arrival: Some("EGKK".into()),
        }
    }

    fn track() -> Vec<TrackPoint> {
        vec![
            (1_764_780_609, 51.4710, -0.4545, 90.0),
            (1_764_781_209, 51.30, -0.30, 4000.0),
            (1_764_781_809, 51.1565, -0.1616, 205.0),
        ]
    }

    /// The GPX 1.1 schema's rules that a track of ours could break, checked on the
    /// parsed document: the root, its version and creator, the namespace on every
    /// element, the children's order (metadata, wpt*, trk*; trk: name, desc,
    /// trkseg; trkpt: ele, then time), latitudes in [-90, 90], longitudes in
    /// [-180, 180), decimals and dateTimes that parse.
    ///
    /// With `GPX_XSD` naming a copy of the GPX 1.1 schema (`gpx.xsd`, not in this
    /// repository) and `xmllint` installed, the text is also validated against it.
    fn check_gpx(text: &str) -> roxmltree::Document<'_> {
        if let Ok(xsd) = std::env::var("GPX_XSD") {
            xmllint_schema(text, &xsd);
        }
        let doc = roxmltree::Document::parse(text).expect("well-formed");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "gpx");
        assert_eq!(root.attribute("version"), Some("1.1"));
        assert!(root.attribute("creator").is_some_and(|c| !c.is_empty()));
        for n in doc.descendants().filter(|n| n.is_element()) {
            assert_eq!(n.tag_name().namespace(), Some(GPX_NS), "{:?}", n.tag_name());
        }
        let order = |n: roxmltree::Node, rank: &dyn Fn(&str) -> usize| {
            let ranks: Vec<usize> = n
                .children()
                .filter(|c| c.is_element())
                .map(|c| rank(c.tag_name().name()))
                .collect();
            assert!(
                ranks.windows(2).all(|w| w[0] <= w[1]),
                "order under {:?}: {ranks:?}",
                n.tag_name()
            );
        };
        order(root, &|t| match t {
            "metadata" => 0,
            "wpt" => 1,
            "rte" => 2,
            "trk" => 3,
            other => panic!("{other} under gpx"),
        });
        let point = |n: roxmltree::Node| {
            let la: f64 = n.attribute("lat").unwrap().parse().unwrap();
            let lo: f64 = n.attribute("lon").unwrap().parse().unwrap();
            assert!(
                (-90.0..=90.0).contains(&la) && (-180.0..180.0).contains(&lo),
                "{la} {lo}"
            );
            order(n, &|t| match t {
                "ele" => 0,
                "time" => 1,
                "name" => 5,
                "desc" => 7,
                other => panic!("{other} in a point"),
            });
            for a in ["lat", "lon"] {
                assert!(
                    decimal(n.attribute(a).unwrap()),
                    "{a}: {:?}",
                    n.attribute(a)
                );
            }
            for c in n.children().filter(|c| c.is_element()) {
                let v = c.text().unwrap_or("");
                match c.tag_name().name() {
                    "ele" => assert!(decimal(v), "{v}"),
                    "time" => assert!(
                        v.len() == 20 && v.ends_with('Z') && v.as_bytes()[10] == b'T',
                        "{v}"
                    ),
                    _ => {}
                }
            }
        };
        for n in doc
            .descendants()
            .filter(|n| n.has_tag_name("wpt") || n.has_tag_name("trkpt"))
        {
            point(n);
        }
        for trk in root.children().filter(|n| n.has_tag_name("trk")) {
            order(trk, &|t| match t {
                "name" => 0,
                "cmt" => 1,
                "desc" => 2,
                "trkseg" => 8,
                other => panic!("{other} in trk"),
            });
            for seg in trk.children().filter(|n| n.has_tag_name("trkseg")) {
                assert!(seg
                    .children()
                    .filter(|c| c.is_element())
                    .all(|c| c.has_tag_name("trkpt")));
            }
        }
        doc
    }

    /// `xmllint --noout --schema xsd` over `text`: valid, or the test fails.
    fn xmllint_schema(text: &str, xsd: &str) {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let file = std::env::temp_dir().join(format!("lobby-gpx-{}-{n}.gpx", std::process::id()));
        std::fs::write(&file, text).unwrap();
        let out = std::process::Command::new("xmllint")
            .args(["--noout", "--schema", xsd])
            .arg(&file)
            .output()
            .expect("xmllint (Debian's libxml2-utils)");
        let _ = std::fs::remove_file(&file);
        assert!(
            out.status.success(),
            "{}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// An `xsd:decimal`: a sign, digits, a point and digits; no exponent, no `inf`;
    /// not too many digits.
    fn decimal(v: &str) -> bool {
        let v = v.strip_prefix(['-', '+']).unwrap_or(v);
        let (int, frac) = v.split_once('.').unwrap_or((v, ""));
        !(int.is_empty() && frac.is_empty())
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.bytes().all(|b| b.is_ascii_digit())
            // libxml2's validator takes at most 24 digits (a 1e-300 written out fails).
            && int.len() + frac.len() <= 18
    }

    #[test]
    fn a_flight_is_gpx_1_1_with_its_airports_and_track() {
        let text = gpx(
            &flight("TEST1", "Aircraft/c172p/Models/c172p.xml"),
            &track(),
        );
        let doc = check_gpx(&text);
        let names: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("name"))
            .filter_map(|n| n.text())
            .collect();
        assert_eq!(
            names,
            [
                "TEST1 (Cessna 172P Skyhawk)",
                "EGLL",
                "EGKK",
                "TEST1 (Cessna 172P Skyhawk)"
            ]
        );
        let pts: Vec<roxmltree::Node> = doc
            .descendants()
            .filter(|n| n.has_tag_name("trkpt"))
            .collect();
        assert_eq!(pts.len(), 3);
        assert_eq!(pts[1].attribute("lat"), Some("51.3"));
        let ele = pts[1].children().find(|c| c.has_tag_name("ele")).unwrap();
        assert_eq!(ele.text(), Some("1219.2"), "4,000 ft in metres");
        let time = pts[0].children().find(|c| c.has_tag_name("time")).unwrap();
        assert_eq!(time.text(), Some("2025-12-03T16:50:09Z"));
    }

    #[test]
    fn strangers_text_is_escaped_in_gpx_and_kml() {
        let evil = "<a&'\"\u{1}>";
        let f = FlightEntry {
            departure: None,
            arrival: Some("NOWHERE".into()),
            ..flight(evil, "Aircraft/x</name>&/Models/y\"z.xml")
        };
        let text = gpx(&f, &track());
        let doc = check_gpx(&text);
        let name = doc.descendants().find(|n| n.has_tag_name("name")).unwrap();
        assert_eq!(name.text(), Some("<a&'\"\u{FFFD}> (y\"z)"));
        assert_eq!(
            doc.descendants().filter(|n| n.has_tag_name("wpt")).count(),
            0
        );
        let text = kml(&f, &track());
        let doc = roxmltree::Document::parse(&text).unwrap();
        let pm = doc
            .descendants()
            .find(|n| n.has_tag_name("Placemark"))
            .unwrap();
        let name = pm.children().find(|n| n.has_tag_name("name")).unwrap();
        assert_eq!(name.text(), Some("<a&'\"\u{FFFD}>"));
    }

    #[test]
    fn a_flight_is_kml_2_2_with_an_absolute_line_and_its_airports() {
        let text = kml(
            &flight("TEST1", "Aircraft/c172p/Models/c172p.xml"),
            &track(),
        );
        let doc = roxmltree::Document::parse(&text).expect("well-formed");
        let root = doc.root_element();
        assert_eq!(
            (root.tag_name().name(), root.tag_name().namespace()),
            ("kml", Some(KML_NS))
        );
        assert!(doc
            .descendants()
            .filter(|n| n.is_element())
            .all(|n| n.tag_name().namespace() == Some(KML_NS)));
        let marks: Vec<roxmltree::Node> = doc
            .descendants()
            .filter(|n| n.has_tag_name("Placemark"))
            .collect();
        assert_eq!(marks.len(), 3);
        let line = marks[0]
            .children()
            .find(|n| n.has_tag_name("LineString"))
            .unwrap();
        let mode = line
            .children()
            .find(|n| n.has_tag_name("altitudeMode"))
            .unwrap();
        assert_eq!(mode.text(), Some("absolute"));
        let coords: Vec<Vec<f64>> = line
            .children()
            .find(|n| n.has_tag_name("coordinates"))
            .unwrap()
            .text()
            .unwrap()
            .split_whitespace()
            .map(|t| t.split(',').map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(
            coords,
            [
                vec![-0.4545, 51.471, 27.4],
                vec![-0.3, 51.3, 1219.2],
                vec![-0.1616, 51.1565, 62.5]
            ]
        );
        let names: Vec<&str> = marks[1..]
            .iter()
            .map(|m| {
                m.children()
                    .find(|n| n.has_tag_name("name"))
                    .unwrap()
                    .text()
                    .unwrap()
            })
            .collect();
        assert_eq!(names, ["Departure: EGLL", "Arrival: EGKK"]);
        let egll = marks[1]
            .descendants()
            .find(|n| n.has_tag_name("coordinates"))
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(egll, "-0.46194,51.4706");
    }

    /// RFC 4180's grammar, read back: fields, quoted ones with doubled quotes,
    /// records ending in CRLF.
    fn parse_csv(text: &str) -> Vec<Vec<String>> {
        let mut rows = vec![];
        let mut row = vec![];
        let mut field = String::new();
        let mut chars = text.chars().peekable();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => field.push(c),
                (false, '"') if field.is_empty() => quoted = true,
                (false, ',') => row.push(std::mem::take(&mut field)),
                (false, '\r') => {
                    assert_eq!(chars.next(), Some('\n'), "CRLF");
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                (false, c) => {
                    assert!(c != '"' && c != '\n', "a bare {c:?} in {text:?}");
                    field.push(c);
                }
            }
        }
        assert!(
            field.is_empty() && row.is_empty() && !quoted,
            "ends with CRLF"
        );
        rows
    }

    #[test]
    fn a_callsigns_flights_are_csv_that_reads_back() {
        let odd = FlightEntry {
            end: None,
            moving_s: None,
            departure: None,
            max_alt_ft: None,
            ..flight("A,\"B\"\r\nC", "=cmd|' /C calc'!A0")
        };
        let text = csv(&[flight("TEST1", "Aircraft/c172p/Models/c172p.xml"), odd]);
        let rows = parse_csv(&text);
        assert_eq!(rows[0], CSV_COLUMNS);
        assert!(rows.iter().all(|r| r.len() == CSV_COLUMNS.len()));
        assert_eq!(
            rows[1],
            [
                "42",
                "TEST1",
                "Aircraft/c172p/Models/c172p.xml",
                "Cessna 172P Skyhawk",
                "single_prop",
                "edge",
                "EGLL",
                "EGKK",
                "2025-12-03T16:50:09Z",
                "2025-12-03T17:10:09Z",
                "1200",
                "1100",
                "23.5",
                "4000"
            ]
        );
        assert_eq!(rows[2][1], "A,\"B\"\r\nC");
        assert_eq!(rows[2][2], "'=cmd|' /C calc'!A0", "no formula");
        assert_eq!(
            (
                rows[2][6].as_str(),
                rows[2][9].as_str(),
                rows[2][11].as_str(),
                rows[2][13].as_str()
            ),
            ("", "", "", "")
        );
    }

    #[test]
    fn times_are_iso_8601_utc_and_file_names_are_safe() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
        assert_eq!(file_name("TEST-1_a", "7.gpx"), "TEST-1_a-7.gpx");
        assert_eq!(file_name("a\"b\r\n/..é", "7.kml"), "a_b______-7.kml");
        assert_eq!(
            (lon(180.0), lon(-180.0), lon(190.0), lat(91.0)),
            (-180.0, -180.0, -170.0, 90.0)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_callsign_model_and_track_make_valid_gpx_kml_and_csv(
            cs in any::<String>(),
            model in any::<String>(),
            pts in proptest::collection::vec((any::<i32>(), any::<f64>(), any::<f64>(), any::<f64>()), 0..20),
        ) {
            let f = flight(&cs, &model);
            let f = FlightEntry { aircraft_name: fgmp::aircraft::name(&model), ..f };
            let track: Vec<TrackPoint> = pts.iter().map(|&(t, a, b, c)| (i64::from(t), a, b, c)).collect();
            let g = gpx(&f, &track);
            let doc = check_gpx(&g);
            let name = doc.descendants().find(|n| n.has_tag_name("name")).unwrap();
            prop_assert_eq!(name.text().unwrap_or(""), xml_back(&title(&f)));
            let k = kml(&f, &track);
            prop_assert!(roxmltree::Document::parse(&k).is_ok());
            let rows = parse_csv(&csv(std::slice::from_ref(&f)));
            prop_assert_eq!(rows.len(), 2);
            let cs_back = rows[1][1].strip_prefix('\'').filter(|_| cs.starts_with(['=', '+', '-', '@', '\t', '\r'])).unwrap_or(&rows[1][1]);
            prop_assert_eq!(cs_back, cs.as_str());
        }
    }

    /// What a parser reads back of [`xml_text`]: the text, with U+FFFD for the
    /// characters XML cannot carry.
    fn xml_back(s: &str) -> String {
        s.chars()
            .map(|c| {
                if ((c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
                    || c == '\u{FFFE}'
                    || c == '\u{FFFF}'
                {
                    '\u{FFFD}'
                } else {
                    c
                }
            })
            .collect()
    }
}
