//! The report time: fgms writes `gmtime()` as `%04d-%02d-%02d %02d:%02d:%02d`, two
//! space-separated fields; the tracker reads it back as UTC.

const SECS_PER_DAY: i64 = 86_400;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// `YYYY-MM-DD HH:MM:SS` in UTC, exactly as fgms prints a report's time.
///
/// Years outside 0000-9999 print with more digits or a sign; [`parse_time`] refuses
/// them, as no real report carries one.
pub fn format_time(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(SECS_PER_DAY);
    let secs = unix_secs.rem_euclid(SECS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
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
    let year = i64::from(digits(&d[0..4])?);
    let month = digits(&d[5..7])?;
    let day = digits(&d[8..10])?;
    let (hour, minute, second) = (digits(&t[0..2])?, digits(&t[3..5])?, digits(&t[6..8])?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let secs = i64::from(hour * 3600 + minute * 60 + second);
    Some(days_from_civil(year, month, day) * SECS_PER_DAY + secs)
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
