//! One field of a report line: how text and numbers are written so the tracker's
//! `explode(" ", $line)` gives them back, and how it judges a number.

/// What PHP's `trim()` strips (the tracker trims every line): space, `\t`, `\n`,
/// `\r`, `\0` and `\x0B`. Not Rust's Unicode `trim`, which strips more.
pub(crate) const PHP_TRIM: [char; 6] = [' ', '\t', '\n', '\r', '\0', '\x0B'];

/// The whitespace PHP's `is_numeric()` allows around a number.
const PHP_NUMERIC_SPACE: [char; 6] = [' ', '\t', '\n', '\r', '\x0B', '\x0C'];

/// A text field made safe for a report line.
///
/// The tracker splits a message on `\n` and each line on single spaces, and the frame
/// ends at `\0`, so a space or any control character (`\n`, `\0`, `\t`…) in a
/// callsign or model would shift or cut the fields: each becomes `_`. A field that
/// is exactly `.` also becomes `_`, because the tracker drops every line containing
/// ` . ` (its guard against fgms's `POSITION franck test . . .` garbage). Everything
/// else, non-ASCII included, is kept: the tracker stores it as sent.
pub fn sanitize_field(text: &str) -> String {
    if text == "." {
        return "_".to_string();
    }
    text.chars()
        .map(|c| if c == ' ' || c.is_control() { '_' } else { c })
        .collect()
}

/// fgms's aircraft field: the model path's last `/` component, cut at its first
/// `.xml` (fgms `UpdateTracker`: `rfind("/")`, then `find(".xml")` and `erase`), then
/// [`sanitize_field`]ed (fgms's unsanitised `* unknown *` default is what the tracker
/// has to drop as `* Bad Client *`-style garbage).
///
/// `Aircraft/c172p/Models/c172p.xml` → `c172p`.
pub fn model_name(path: &str) -> String {
    let base = path.rfind('/').map_or(path, |i| &path[i + 1..]);
    let base = base.find(".xml").map_or(base, |i| &base[..i]);
    sanitize_field(base)
}

/// The value of a field PHP's `is_numeric()` accepts (PHP 8: optional surrounding
/// whitespace, a sign, decimal digits with an optional point, an optional exponent;
/// no hex, no `inf`/`nan`), or `None`.
pub(crate) fn php_numeric(field: &str) -> Option<f64> {
    let core = field.trim_matches(PHP_NUMERIC_SPACE);
    let b = core.as_bytes();
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits_from(i);
    let mut mantissa_digits = int_end - i;
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let frac_end = digits_from(i + 1);
        mantissa_digits += frac_end - (i + 1);
        i = frac_end;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_end = digits_from(i);
        if exp_end == i {
            return None;
        }
        i = exp_end;
    }
    if i != b.len() {
        return None;
    }
    core.parse().ok()
}

/// A POSITION number: fixed point with six decimals (`37.618852`).
///
/// fgms writes these with its own `NumToStr(x, 6)`: six decimals, truncated, and a
/// bare `0` for zero. Rust's `{:.6}` rounds instead (a difference of at most 1e-6°,
/// about 0.1 m) and writes zero as `0.000000`; the tracker only asks PHP's
/// `is_numeric()`, which accepts both, and stores the value as a number. A value
/// that is not finite is written `0`: `NaN` or `inf` would fail `is_numeric()`, which
/// the tracker treats as fatal for the whole connection.
pub(crate) fn format_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "0".to_string()
    }
}

/// Whether `haystack` contains `needle`, ignoring ASCII case (PHP `stripos`).
pub(crate) fn contains_ignore_ascii_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_of_real_paths() {
        assert_eq!(model_name("Aircraft/c172p/Models/c172p.xml"), "c172p");
        assert_eq!(model_name("Aircraft/ufo/Models/ufo.xml"), "ufo");
        assert_eq!(model_name("Aircraft/777/Models/777-200ER.xml"), "777-200ER");
        assert_eq!(model_name("ufo"), "ufo");
        assert_eq!(model_name("Aircraft/x/Models/"), "");
        // fgms erases from the first `.xml`, wherever it is.
        assert_eq!(model_name("Models/a.xml.bak"), "a");
        // fgms's default for a client that never sent a model.
        assert_eq!(model_name("* unknown *"), "*_unknown_*");
    }

    #[test]
    fn sanitize_keeps_fields_whole() {
        assert_eq!(sanitize_field("Pilot 1"), "Pilot_1");
        assert_eq!(sanitize_field("a\nb\0c\td"), "a_b_c_d");
        assert_eq!(sanitize_field("."), "_");
        assert_eq!(sanitize_field("..."), "...");
        assert_eq!(sanitize_field("Élan-7"), "Élan-7");
    }

    #[test]
    fn numeric_like_php() {
        for (s, v) in [
            ("1", 1.0),
            ("-1.5", -1.5),
            ("+.5", 0.5),
            ("1.", 1.0),
            ("1e3", 1000.0),
            ("1.E-1", 0.1),
            ("  7", 7.0),
            ("7\t", 7.0),
            ("007", 7.0),
        ] {
            assert_eq!(php_numeric(s), Some(v), "{s:?}");
        }
        for s in [
            "", ".", "-", "e5", "1e", "1e+", "0x1A", "inf", "NaN", "1,5", "1.5.5", "--1", "١",
        ] {
            assert_eq!(php_numeric(s), None, "{s:?}");
        }
    }

    #[test]
    fn numbers_have_six_decimals_and_never_nan() {
        assert_eq!(format_number(37.618_852_3), "37.618852");
        assert_eq!(format_number(-122.375), "-122.375000");
        assert_eq!(format_number(0.0), "0.000000");
        assert_eq!(format_number(f64::NAN), "0");
        assert_eq!(format_number(f64::NEG_INFINITY), "0");
    }
}
