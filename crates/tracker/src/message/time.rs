//! The report time: fgms writes `gmtime()` as `%04d-%02d-%02d %02d:%02d:%02d`, two
//! space-separated fields; the tracker reads it back as UTC.

use ::time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

/// Seconds in 400 Gregorian years (146,097 days): the calendar repeats with this
/// period, so any Unix time is one inside the `time` crate's range plus whole cycles.
const CYCLE_SECS: i64 = 146_097 * 86_400;

/// `YYYY-MM-DD HH:MM:SS` in UTC, exactly as fgms prints a report's time.
///
/// Years outside 0000-9999 print with more digits or a sign; [`parse_time`] refuses
/// them, as no real report carries one.
pub fn format_time(unix_secs: i64) -> String {
    // The `time` crate reads the calendar of the cycle 1970-2369; the whole cycles
    // before or after it move only the year (so every i64 has its date).
    let cycles = unix_secs.div_euclid(CYCLE_SECS);
    let t = OffsetDateTime::from_unix_timestamp(unix_secs.rem_euclid(CYCLE_SECS))
        .expect("1970-2369 is inside the time crate's range");
    let year = i64::from(t.year()) + 400 * cycles;
    format!(
        "{year:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Digits of a fixed-width field, or `None` if any byte is not an ASCII digit.
fn digits(field: &[u8]) -> Option<u32> {
    field.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// The Unix time of a report's date and time fields (`YYYY-MM-DD`, `HH:MM:SS`, UTC),
/// or `None` unless both have exactly that shape and name a real instant (no leap
/// second, no 31 April).
pub fn parse_time(date: &str, time: &str) -> Option<i64> {
    let (d, t) = (date.as_bytes(), time.as_bytes());
    if d.len() != 10 || d[4] != b'-' || d[7] != b'-' {
        return None;
    }
    if t.len() != 8 || t[2] != b':' || t[5] != b':' {
        return None;
    }
    let year = i32::try_from(digits(&d[0..4])?).ok()?;
    let month = Month::try_from(u8::try_from(digits(&d[5..7])?).ok()?).ok()?;
    let day = u8::try_from(digits(&d[8..10])?).ok()?;
    let [hour, minute, second] =
        [&t[0..2], &t[3..5], &t[6..8]].map(|f| digits(f).and_then(|n| u8::try_from(n).ok()));
    let date = Date::from_calendar_date(year, month, day).ok()?;
    let clock = Time::from_hms(hour?, minute?, second?).ok()?;
    Some(
        PrimitiveDateTime::new(date, clock)
            .assume_utc()
            .unix_timestamp(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00:00");
        // `date -u -d @1796155200` → Tue Dec  1 20:00:00 UTC 2026
        assert_eq!(format_time(1_796_155_200), "2026-12-01 20:00:00");
        // `date -u -d @-1` → Wed Dec 31 23:59:59 UTC 1969
        assert_eq!(format_time(-1), "1969-12-31 23:59:59");
        // `date -u -d @4107542399` → Sun Feb 28 23:59:59 UTC 2100 (not a leap year)
        assert_eq!(format_time(4_107_542_399), "2100-02-28 23:59:59");
        assert_eq!(format_time(4_107_542_400), "2100-03-01 00:00:00");
    }

    #[test]
    fn years_past_the_format_print_wider_and_do_not_parse() {
        // Outside the `time` crate's own range too: whole 400-year cycles move the year.
        assert_eq!(format_time(253_402_300_799), "9999-12-31 23:59:59");
        assert_eq!(format_time(253_402_300_800), "10000-01-01 00:00:00");
        assert_eq!(format_time(-62_167_219_201), "-001-12-31 23:59:59");
        assert_eq!(parse_time("10000-01-01", "00:00:00"), None);
        for t in [i64::MIN, i64::MAX] {
            let s = format_time(t);
            let (date, clock) = s.split_once(' ').unwrap();
            assert_eq!(parse_time(date, clock), None, "{s}");
        }
    }

    #[test]
    fn parse_is_the_inverse() {
        assert_eq!(parse_time("1970-01-01", "00:00:00"), Some(0));
        assert_eq!(parse_time("2000-02-29", "00:00:00"), Some(951_782_400));
        assert_eq!(parse_time("2026-12-01", "20:00:00"), Some(1_796_155_200));
        assert_eq!(parse_time("1969-12-31", "23:59:59"), Some(-1));
    }

    #[test]
    fn parse_is_strict() {
        for (d, t) in [
            ("2100-02-29", "00:00:00"),
            ("2026-04-31", "00:00:00"),
            ("2026-13-01", "00:00:00"),
            ("2026-00-01", "00:00:00"),
            ("2026-01-00", "00:00:00"),
            ("2026-1-01", "00:00:00"),
            ("2026-01-01", "24:00:00"),
            ("2026-01-01", "23:60:00"),
            ("2026-01-01", "23:59:60"),
            ("2026-01-01", "1:00:00"),
            ("2026/01/01", "00:00:00"),
            ("+026-01-01", "00:00:00"),
            ("2026-01-01", "00:00:0a"),
            ("", ""),
            ("２０２６-01-01", "00:00:00"),
        ] {
            assert_eq!(parse_time(d, t), None, "{d} {t}");
        }
    }
}
