//! The pilot list in fgms 0.13's exact telnet format (port 5001), which tools such
//! as FlightAirMap and mpmap scrape.

use crate::engine::PilotView;
use fgmp::geo::{from_ecef, FEET_PER_METRE};
use std::borrow::Cow;
use std::fmt::Write;

/// The version fgms prints; tools match on it, so lobby reports the fgms version it is compatible with.
pub const FGMS_VERSION: &str = "0.13.10";

/// Formats a number as fgms's `NumToStr(v, 6)`: truncated (not rounded) to 6
/// decimals and zero-padded; exactly 0 prints `0`; a fraction that truncates to
/// nothing prints `.0` only (`5.0`).
pub fn num_to_str(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    // Round at the 8th decimal first so binary noise (22.59145 stored as
    // 22.5914499999...) does not eat the last printed digit, then truncate to 6.
    let text = format!("{:.8}", v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = frac.get(..6).unwrap_or(frac).trim_end_matches('0');
    let sign = if v < 0.0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{int}.0")
    } else {
        format!("{sign}{int}.{:0<6}", frac)
    }
}

/// A field as printed: control characters (C0, DEL, C1) and the Unicode line and
/// paragraph separators become `\xNN` / `\u{NNNN}`, and a backslash becomes `\\`,
/// so a pilot cannot start a new line (or a fake one) in a list that scrapers
/// read line by line, and the escaping stays unambiguous.
pub fn escape_field(s: &str) -> Cow<'_, str> {
    let special = |c: char| c.is_control() || c == '\\' || c == '\u{2028}' || c == '\u{2029}';
    if !s.chars().any(special) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x100 && special(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if special(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One pilot line: `callsign@origin: x y z lat lon alt_ft ox oy oz model`. The
/// callsign, origin and model are escaped ([`escape_field`]).
pub fn pilot_line(p: &PilotView) -> String {
    let g = from_ecef(p.position);
    let [x, y, z] = p.position;
    let [ox, oy, oz] = p.orientation;
    format!(
        "{}@{}: {} {} {} {} {} {} {} {} {} {}",
        p.callsign,
        escape_field(&p.origin),
        num_to_str(x),
        num_to_str(y),
        num_to_str(z),
        num_to_str(g.lat_deg),
        num_to_str(g.lon_deg),
        num_to_str(g.alt_m * FEET_PER_METRE),
        num_to_str(f64::from(ox)),
        num_to_str(f64::from(oy)),
        num_to_str(f64::from(oz)),
        escape_field(&p.model)
    )
}

/// The whole telnet reply from a snapshot: the pilots and the counters
/// ([`crate::Stats::snapshot`]) taken together. `N pilot(s) online` counts every pilot,
/// observers included; observers' lines are not printed (as fgms does).
pub fn render(name: &str, pilots: &[PilotView], counters: &[(&str, u64)]) -> String {
    let mut s = String::with_capacity(256 + pilots.len() * 160);
    let _ = writeln!(s, "# This is {}", escape_field(name));
    let _ = writeln!(
        s,
        "# FlightGear Multiplayer Server v{FGMS_VERSION} (lobby {})",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(s, "# using protocol version v1.1 (LazyRelay enabled)");
    let counters: Vec<String> = counters
        .iter()
        .filter(|&&(_, v)| v != 0)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(s, "# stats: {}", counters.join(" "));
    let _ = writeln!(s, "# {} pilot(s) online", pilots.len());
    for p in pilots.iter().filter(|p| !p.callsign.is_observer()) {
        s.push_str(&pilot_line(p));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fgmp::Callsign;
    use std::time::Duration;

    #[test]
    fn numbers_as_fgms_prints_them() {
        assert_eq!(num_to_str(0.0), "0");
        assert_eq!(num_to_str(5.0), "5.0");
        assert_eq!(num_to_str(5.0000004), "5.0");
        assert_eq!(num_to_str(0.1f32 as f64), "0.100000");
        assert_eq!(num_to_str(4060104.9083769), "4060104.908376");
        assert_eq!(num_to_str(-22.59145), "-22.591450");
        assert_eq!(num_to_str(3280.8398959), "3280.839895");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_field("Aircraft/c172p/Models/c172p.xml"),
            "Aircraft/c172p/Models/c172p.xml"
        );
        assert_eq!(
            escape_field("a\nEVIL@LOCAL: 1 2 3"),
            "a\\x0aEVIL@LOCAL: 1 2 3"
        );
        assert_eq!(escape_field("a\r\t\x7f\u{85}b"), "a\\x0d\\x09\\x7f\\x85b");
        assert_eq!(escape_field("x\u{2028}y"), "x\\u{2028}y");
        assert_eq!(escape_field("back\\slash"), "back\\\\slash");
        assert_eq!(escape_field("Überflieger ✈"), "Überflieger ✈");
    }

    proptest::proptest! {
        /// Whatever the model and origin, a pilot is one line, and the escaped
        /// text decodes back to the original (nothing lost, nothing injected).
        #[test]
        fn every_pilot_is_one_line(model in "\\PC*|.*[\n\r\u{85}\u{2028}].*", origin in ".{0,20}") {
            let p = PilotView { model: model.clone(), origin, ..sample() };
            let line = pilot_line(&p);
            let breaks = ['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}'];
            proptest::prop_assert!(!line.contains(breaks), "{}", line);
            proptest::prop_assert_eq!(unescape(&escape_field(&model)), model);
        }
    }

    /// The inverse of [`escape_field`], for the property test.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut it = s.chars().peekable();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match it.next() {
                Some('\\') => out.push('\\'),
                Some('x') => {
                    let h: String = it.by_ref().take(2).collect();
                    out.push(char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap());
                }
                Some('u') => {
                    let h: String = it.by_ref().skip(1).take_while(|&c| c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap());
                }
                other => panic!("bad escape {other:?}"),
            }
        }
        out
    }

    fn sample() -> PilotView {
        PilotView {
            callsign: Callsign::new("TEST-A").unwrap(),
            origin: "LOCAL".into(),
            local: true,
            addr: "127.0.0.1:5000".parse().unwrap(),
            position: [4060104.908376, 611858.819160, 4865699.654797],
            orientation: [0.1, 0.2, 0.3],
            velocity: [0.0; 3],
            model: "Aircraft/c172p/Models/c172p.xml".into(),
            range_nm: 100.0,
            online_for: Duration::ZERO,
            silent_for: Duration::ZERO,
            last_datagram: Vec::new(),
            datagrams: 0,
        }
    }

    #[test]
    fn line_matches_the_notes_example() {
        let line = pilot_line(&sample());
        let want = "TEST-A@LOCAL: 4060104.908376 611858.819160 4865699.654797 50.030000 8.570000 3280.839895 0.100000 0.200000 0.300000 Aircraft/c172p/Models/c172p.xml";
        // lat/lon/alt come from our WGS-84 conversion; allow the last digit to differ.
        let (g, w): (Vec<&str>, Vec<&str>) = (line.split(' ').collect(), want.split(' ').collect());
        assert_eq!(g.len(), w.len());
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            if (4..=6).contains(&i) {
                let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
                assert!((a - b).abs() < 2e-5, "field {i}: {a} vs {b}");
            } else {
                assert_eq!(a, b, "field {i}");
            }
        }
    }
}
