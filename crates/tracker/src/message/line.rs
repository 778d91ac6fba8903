//! One report line: its fields, its encoding, and the tracker's verdict on it.

use super::field::PHP_TRIM;
use super::field::{contains_ignore_ascii_case, format_number, php_numeric, sanitize_field};
use super::time::{format_time, parse_time};

/// One report about one pilot.
///
/// `passwd` is always the literal `test` in fgms 0.13.10, and the tracker ignores any
/// line whose third field is something else; it is kept as a field so what was
/// received can be written back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A pilot joined (the tracker opens a flight).
    Connect {
        /// Callsign.
        callsign: String,
        /// Always `test` in practice.
        passwd: String,
        /// Aircraft: the model path's basename without `.xml` (see
        /// [`model_name`](super::model_name)).
        model: String,
        /// Unix time of the event (UTC).
        time: i64,
    },
    /// A pilot left (the tracker closes the flight).
    Disconnect {
        /// Callsign.
        callsign: String,
        /// Always `test` in practice.
        passwd: String,
        /// Aircraft, as in [`Line::Connect`].
        model: String,
        /// Unix time of the event (UTC).
        time: i64,
    },
    /// Where a pilot is (the tracker stores a waypoint).
    Position {
        /// Callsign.
        callsign: String,
        /// Always `test` in practice.
        passwd: String,
        /// Latitude, degrees.
        lat: f64,
        /// Longitude, degrees.
        lon: f64,
        /// Altitude, feet.
        alt_ft: f64,
        /// Heading, degrees.
        heading: f64,
        /// Pitch, degrees (not stored by the tracker).
        pitch: f64,
        /// Roll, degrees (not stored by the tracker).
        roll: f64,
        /// Unix time of the position (UTC).
        time: i64,
    },
}

impl Line {
    /// `CONNECT` when `began`, else `DISCONNECT`.
    pub fn session(
        began: bool,
        callsign: String,
        passwd: String,
        model: String,
        time: i64,
    ) -> Line {
        if began {
            Line::Connect {
                callsign,
                passwd,
                model,
                time,
            }
        } else {
            Line::Disconnect {
                callsign,
                passwd,
                model,
                time,
            }
        }
    }

    /// The line exactly as fgms writes it:
    /// `CONNECT <callsign> <passwd> <aircraft> <YYYY-MM-DD> <HH:MM:SS>` (6 fields),
    /// the same for `DISCONNECT`, and
    /// `POSITION <callsign> <passwd> <lat> <lon> <alt_ft> <heading> <pitch> <roll>
    /// <YYYY-MM-DD> <HH:MM:SS>` (11 fields).
    ///
    /// Text fields go through [`sanitize_field`] so the line always splits back into
    /// the same fields; numbers are written with six decimals (finite values only,
    /// see the crate's `format_number`: the tracker only checks they are numeric).
    pub fn encode(&self) -> String {
        match self {
            Line::Connect {
                callsign,
                passwd,
                model,
                time,
            } => event_line("CONNECT", callsign, passwd, model, *time),
            Line::Disconnect {
                callsign,
                passwd,
                model,
                time,
            } => event_line("DISCONNECT", callsign, passwd, model, *time),
            Line::Position {
                callsign,
                passwd,
                lat,
                lon,
                alt_ft,
                heading,
                pitch,
                roll,
                time,
            } => format!(
                "POSITION {} {} {} {} {} {} {} {} {}",
                sanitize_field(callsign),
                sanitize_field(passwd),
                format_number(*lat),
                format_number(*lon),
                format_number(*alt_ft),
                format_number(*heading),
                format_number(*pitch),
                format_number(*roll),
                format_time(*time)
            ),
        }
    }

    /// The pilot the line is about.
    pub fn callsign(&self) -> &str {
        match self {
            Line::Connect { callsign, .. }
            | Line::Disconnect { callsign, .. }
            | Line::Position { callsign, .. } => callsign,
        }
    }
}

fn event_line(kind: &str, callsign: &str, passwd: &str, model: &str, time: i64) -> String {
    format!(
        "{kind} {} {} {} {}",
        sanitize_field(callsign),
        sanitize_field(passwd),
        sanitize_field(model),
        format_time(time)
    )
}

/// What the tracker makes of one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// A report to store.
    Line(Line),
    /// Skipped without harm (the message is still committed and acknowledged); the
    /// reason, for logs.
    Ignored(&'static str),
    /// The tracker answers `ERROR Message "<line>" not recognized`, rolls back the
    /// whole message and closes the connection; the reason, for logs.
    Fatal(String),
}

/// The fields of a line split on single spaces (PHP `explode(" ", $line)`: a double
/// space makes an empty field), without collecting an unbounded list: the first
/// eleven are kept, the rest only counted.
struct Fields<'a> {
    first: [&'a str; 11],
    count: usize,
}

impl<'a> Fields<'a> {
    fn split(line: &'a str) -> Fields<'a> {
        let mut first = [""; 11];
        let mut count = 0;
        for (i, f) in line.split(' ').enumerate() {
            if let Some(slot) = first.get_mut(i) {
                *slot = f;
            }
            count += 1;
        }
        Fields { first, count }
    }

    /// Field `i`; `None` past the end (PHP's undefined index).
    fn get(&self, i: usize) -> Option<&'a str> {
        if i < self.count {
            self.first.get(i).copied()
        } else {
            None
        }
    }
}

/// The common guards of both protocols: fgms's known garbage lines, then the
/// password field. `None` when the line passes them.
fn guard(line: &str, fields: &Fields<'_>) -> Option<&'static str> {
    // fgms writes `* Bad Client *` for a client that sent garbage and `.` for
    // numbers it could not compute; the tracker drops such lines (`stripos`).
    if contains_ignore_ascii_case(line, "* Bad Client *") || line.contains(" . ") {
        return Some("fgms garbage (`* Bad Client *` or ` . `)");
    }
    // Checked before the message type: an unknown type with another third field is
    // only ignored.
    if fields.get(2) != Some("test") {
        return Some("third field is not `test`");
    }
    // lobby's own bounds (issue 20, item 7): what fgms sends is far shorter (its
    // callsigns have 7 characters, its model names come from a 96-byte path).
    if fields.get(1).is_some_and(|c| c.len() > MAX_CALLSIGN) {
        return Some("callsign longer than 16 bytes");
    }
    if matches!(fields.get(0), Some("CONNECT" | "DISCONNECT"))
        && fields.get(3).is_some_and(|m| m.len() > MAX_MODEL)
    {
        return Some("model longer than 128 bytes");
    }
    None
}

/// The longest callsign a report line may carry (longer lines are ignored).
pub(crate) const MAX_CALLSIGN: usize = 16;
/// The longest model a CONNECT or DISCONNECT line may carry.
pub(crate) const MAX_MODEL: usize = 128;

/// One line as fgtracker v2.4 (`fgt_read_V20151207.php`) judges it, in its order:
///
/// 1. lines containing `* Bad Client *` (any case) or ` . `: ignored;
/// 2. third field not `test` (or missing): ignored;
/// 3. `POSITION` without exactly 11 fields: ignored; with 11 but latitude,
///    longitude, altitude or heading not numeric (PHP `is_numeric`), or a date whose
///    first `-` is not its fifth character: fatal;
/// 4. `CONNECT`/`DISCONNECT` without exactly 6 fields: ignored;
/// 5. any other type: fatal.
///
/// Where the tracker would go on to a database error (which also drops the
/// connection and rolls the message back), this says fatal too: a date and time
/// that [`parse_time`] refuses (the tracker does not validate CONNECT dates itself),
/// and a number that is numeric but overflows to infinity (`1e999`).
///
/// Pitch and roll are not checked by the tracker and not stored: a non-numeric or
/// non-finite one is read as 0 and the line kept, as the tracker keeps it.
///
/// The line is trimmed first as the tracker does (PHP `trim`); an empty line is
/// ignored. (Before this function the tracker also ignores lines that are not valid
/// UTF-8; a `&str` always is.)
///
/// One deviation from the PHP, which follows the notes: fgtracker's CONNECT branch
/// is `type == CONNECT or type == DISCONNECT or strpos($data[4], "-") != 4`, so an
/// unknown type whose fifth field is not date-shaped is in fact ignored there; here
/// every unknown type is fatal, as the notes state. fgms never sends one.
pub fn parse_line(line: &str) -> Parsed {
    let line = line.trim_matches(PHP_TRIM);
    if line.is_empty() {
        return Parsed::Ignored("empty line");
    }
    let fields = Fields::split(line);
    if let Some(why) = guard(line, &fields) {
        return Parsed::Ignored(why);
    }
    let f = &fields.first;
    match f[0] {
        "POSITION" => {
            if fields.count != 11 {
                return Parsed::Ignored("POSITION without 11 fields");
            }
            let number = |i: usize, what: &str| match php_numeric(f[i]) {
                Some(v) if v.is_finite() => Ok(v),
                Some(_) => Err(format!("POSITION {what} {:?} is out of range", f[i])),
                None => Err(format!("POSITION {what} {:?} is not numeric", f[i])),
            };
            let values = (|| {
                Ok::<_, String>((
                    number(3, "latitude")?,
                    number(4, "longitude")?,
                    number(5, "altitude")?,
                    number(6, "heading")?,
                ))
            })();
            let (lat, lon, alt_ft, heading) = match values {
                Ok(v) => v,
                Err(why) => return Parsed::Fatal(why),
            };
            if f[9].find('-') != Some(4) {
                return Parsed::Fatal(format!("POSITION date {:?} is not YYYY-…", f[9]));
            }
            let Some(time) = parse_time(f[9], f[10]) else {
                return Parsed::Fatal(format!("POSITION time {:?} {:?} is invalid", f[9], f[10]));
            };
            let lenient = |i: usize| php_numeric(f[i]).filter(|v| v.is_finite()).unwrap_or(0.0);
            Parsed::Line(Line::Position {
                callsign: f[1].to_string(),
                passwd: f[2].to_string(),
                lat,
                lon,
                alt_ft,
                heading,
                pitch: lenient(7),
                roll: lenient(8),
                time,
            })
        }
        kind @ ("CONNECT" | "DISCONNECT") => {
            if fields.count != 6 {
                return Parsed::Ignored("CONNECT/DISCONNECT without 6 fields");
            }
            let Some(time) = parse_time(f[4], f[5]) else {
                return Parsed::Fatal(format!("{kind} time {:?} {:?} is invalid", f[4], f[5]));
            };
            Parsed::Line(Line::session(
                kind == "CONNECT",
                f[1].to_string(),
                f[2].to_string(),
                f[3].to_string(),
                time,
            ))
        }
        other => Parsed::Fatal(format!("unknown message type {other:?}")),
    }
}

/// One line of an old fgms that identified as `NOWAIT`
/// (`fgt_read_NOWAIT.php`): `POSITION <callsign> test <lat> <lon> <alt> <date>
/// <time>` (8 fields, no attitude) and the same CONNECT/DISCONNECT as today.
///
/// The tracker does no validation on this path (bad values become database errors);
/// here nothing is fatal: a line that cannot be read (too few fields, a number or
/// time that does not parse) is ignored. Positions come back as [`Line::Position`]
/// with heading, pitch and roll 0, which the old protocol does not carry. Extra
/// fields are ignored, as the tracker reads fields by index.
pub fn parse_nowait_line(line: &str) -> Parsed {
    let line = line.trim_matches(PHP_TRIM);
    if line.is_empty() {
        return Parsed::Ignored("empty line");
    }
    let fields = Fields::split(line);
    if let Some(why) = guard(line, &fields) {
        return Parsed::Ignored(why);
    }
    let f = &fields.first;
    match f[0] {
        "POSITION" => {
            if fields.count < 8 {
                return Parsed::Ignored("NOWAIT POSITION with fewer than 8 fields");
            }
            let number = |i: usize| php_numeric(f[i]).filter(|v| v.is_finite());
            match (number(3), number(4), number(5), parse_time(f[6], f[7])) {
                (Some(lat), Some(lon), Some(alt_ft), Some(time)) => Parsed::Line(Line::Position {
                    callsign: f[1].to_string(),
                    passwd: f[2].to_string(),
                    lat,
                    lon,
                    alt_ft,
                    heading: 0.0,
                    pitch: 0.0,
                    roll: 0.0,
                    time,
                }),
                _ => Parsed::Ignored("NOWAIT POSITION with unreadable values"),
            }
        }
        kind @ ("CONNECT" | "DISCONNECT") => {
            if fields.count < 6 {
                return Parsed::Ignored("NOWAIT CONNECT/DISCONNECT with fewer than 6 fields");
            }
            let Some(time) = parse_time(f[4], f[5]) else {
                return Parsed::Ignored("NOWAIT CONNECT/DISCONNECT with an unreadable time");
            };
            Parsed::Line(Line::session(
                kind == "CONNECT",
                f[1].to_string(),
                f[2].to_string(),
                f[3].to_string(),
                time,
            ))
        }
        _ => Parsed::Ignored("NOWAIT line of an unknown type"),
    }
}

/// The lines of a message: split on `\n`, each trimmed (PHP `trim`), empty ones
/// skipped, as the tracker reads a message before parsing its lines.
pub fn split_message(msg: &str) -> impl Iterator<Item = &str> {
    msg.split('\n')
        .map(|l| l.trim_matches(PHP_TRIM))
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_796_155_200; // 2026-12-01 20:00:00

    fn connect() -> Line {
        Line::Connect {
            callsign: "Pilot1".into(),
            passwd: "test".into(),
            model: "c172p".into(),
            time: T,
        }
    }

    #[test]
    fn encodes_as_fgms() {
        assert_eq!(
            connect().encode(),
            "CONNECT Pilot1 test c172p 2026-12-01 20:00:00"
        );
        let d = Line::Disconnect {
            callsign: "Pilot1".into(),
            passwd: "test".into(),
            model: "c172p".into(),
            time: T,
        };
        assert_eq!(
            d.encode(),
            "DISCONNECT Pilot1 test c172p 2026-12-01 20:00:00"
        );
        let p = Line::Position {
            callsign: "Pilot1".into(),
            passwd: "test".into(),
            lat: 37.618_852,
            lon: -122.375,
            alt_ft: 13.5,
            heading: 280.0,
            pitch: -2.25,
            roll: 0.0,
            time: T,
        };
        assert_eq!(
            p.encode(),
            "POSITION Pilot1 test 37.618852 -122.375000 13.500000 280.000000 -2.250000 \
             0.000000 2026-12-01 20:00:00"
        );
        assert_eq!(p.encode().split(' ').count(), 11);
        assert_eq!(connect().encode().split(' ').count(), 6);
    }

    #[test]
    fn a_model_or_callsign_past_its_bound_is_ignored_at_the_bound_kept() {
        let m = |n: usize| "m".repeat(n);
        for kind in ["CONNECT", "DISCONNECT"] {
            let at = format!("{kind} Pilot1 test {} 2026-12-01 20:00:00", m(MAX_MODEL));
            assert!(
                matches!(parse_line(&at), Parsed::Line(_)),
                "{kind} at the bound"
            );
            let past = format!(
                "{kind} Pilot1 test {} 2026-12-01 20:00:00",
                m(MAX_MODEL + 1)
            );
            assert_eq!(
                parse_line(&past),
                Parsed::Ignored("model longer than 128 bytes")
            );
        }
        let cs = "C".repeat(MAX_CALLSIGN + 1);
        let past = format!("CONNECT {cs} test c172p 2026-12-01 20:00:00");
        assert_eq!(
            parse_line(&past),
            Parsed::Ignored("callsign longer than 16 bytes")
        );
    }

    #[test]
    fn parses_what_fgms_writes() {
        assert_eq!(
            parse_line("CONNECT Pilot1 test c172p 2026-12-01 20:00:00"),
            Parsed::Line(connect())
        );
        // fgms's own NumToStr output (bare `0`) is numeric too.
        let p =
            parse_line("POSITION Pilot1 test 37.618852 -122.375 0 280.5 0 0 2026-12-01 20:00:00");
        assert!(
            matches!(p, Parsed::Line(Line::Position { lat, alt_ft, .. }) if lat == 37.618852 && alt_ft == 0.0)
        );
    }

    #[test]
    fn tracker_rules_in_order() {
        use Parsed::*;
        let cases: &[(&str, &str)] = &[
            // fgms garbage, from the tracker's own comment.
            ("POSITION * Bad Client *  0 0 . 2012-12-03 21:03:53", "ignored"),
            ("DISCONNECT * bad client *  * unknown * 2012-12-03 20:56:32", "ignored"),
            ("POSITION franck test  . . . 2012-12-08 14:28:42", "ignored"),
            (
                "POSITION edji-x test -15.325710 35.681043 . 313.231018 10.049998 -45.658264 2015-12-31 01:54:54",
                "ignored",
            ),
            // third field before type
            ("CONNECT Pilot1 secret c172p 2026-12-01 20:00:00", "ignored"),
            ("HELLO Pilot1 secret", "ignored"),
            ("HELLO", "ignored"),
            // POSITION field count
            ("POSITION Pilot1 test 1 2 3 4 5 6 2026-12-01", "ignored"),
            ("POSITION Pilot1 test 1 2 3 4 5 6 2026-12-01 20:00:00 extra", "ignored"),
            ("POSITION Pilot1 test 1 2 3 4 5 6  2026-12-01 20:00:00", "ignored"),
            // 11 fields, bad values
            ("POSITION Pilot1 test x 2 3 4 5 6 2026-12-01 20:00:00", "fatal"),
            ("POSITION Pilot1 test 1 2 3 nan 5 6 2026-12-01 20:00:00", "fatal"),
            ("POSITION Pilot1 test 1 2 1e999 4 5 6 2026-12-01 20:00:00", "fatal"),
            ("POSITION Pilot1 test 1 2 3 4 5 6 01-12-2026 20:00:00", "fatal"),
            ("POSITION Pilot1 test 1 2 3 4 5 6 2026-13-01 20:00:00", "fatal"),
            // pitch and roll are not checked
            ("POSITION Pilot1 test 1 2 3 4 x y 2026-12-01 20:00:00", "line"),
            // CONNECT field count and dates
            ("CONNECT Pilot1 test c172p 2026-12-01", "ignored"),
            ("DISCONNECT Pilot1 test c 172p 2026-12-01 20:00:00", "ignored"),
            ("CONNECT Pilot1 test c172p yesterday noon", "fatal"),
            // unknown type
            ("LOGIN Pilot1 test c172p 2026-12-01 20:00:00", "fatal"),
            ("position Pilot1 test 1 2 3 4 5 6 2026-12-01 20:00:00", "fatal"),
            // trimmed like PHP
            ("\t CONNECT Pilot1 test c172p 2026-12-01 20:00:00 \r", "line"),
            ("   ", "ignored"),
        ];
        for (line, want) in cases {
            let got = match parse_line(line) {
                Line(_) => "line",
                Ignored(_) => "ignored",
                Fatal(_) => "fatal",
            };
            assert_eq!(got, *want, "{line:?}");
        }
        assert_eq!(
            parse_line("POSITION Pilot1 test 1 2 3 4 x 1e999 2026-12-01 20:00:00"),
            Line(super::Line::Position {
                callsign: "Pilot1".into(),
                passwd: "test".into(),
                lat: 1.0,
                lon: 2.0,
                alt_ft: 3.0,
                heading: 4.0,
                pitch: 0.0,
                roll: 0.0,
                time: T,
            })
        );
    }

    #[test]
    fn sanitised_fields_survive_the_round_trip() {
        let l = Line::Connect {
            callsign: "Bad Pilot\n".into(),
            passwd: "test".into(),
            model: ".".into(),
            time: T,
        };
        assert_eq!(l.encode(), "CONNECT Bad_Pilot_ test _ 2026-12-01 20:00:00");
        assert!(matches!(parse_line(&l.encode()), Parsed::Line(_)));
    }

    #[test]
    fn nowait_positions_have_no_attitude() {
        assert_eq!(
            parse_nowait_line("POSITION Pilot1 test 37.5 -122.25 1500 2026-12-01 20:00:00"),
            Parsed::Line(Line::Position {
                callsign: "Pilot1".into(),
                passwd: "test".into(),
                lat: 37.5,
                lon: -122.25,
                alt_ft: 1500.0,
                heading: 0.0,
                pitch: 0.0,
                roll: 0.0,
                time: T,
            })
        );
        assert_eq!(
            parse_nowait_line("CONNECT Pilot1 test c172p 2026-12-01 20:00:00"),
            Parsed::Line(connect())
        );
        for l in [
            "POSITION Pilot1 test x 1 2 2026-12-01 20:00:00",
            "POSITION Pilot1 test 1 2 3 2026-12-01",
            "POSITION Pilot1 nope 1 2 3 2026-12-01 20:00:00",
            "HELLO Pilot1 test",
        ] {
            assert!(matches!(parse_nowait_line(l), Parsed::Ignored(_)), "{l}");
        }
    }

    #[test]
    fn split_message_trims_and_skips_empty() {
        let msg = "POSITION a\n\n  POSITION b \r\n\t\n";
        assert_eq!(
            split_message(msg).collect::<Vec<_>>(),
            ["POSITION a", "POSITION b"]
        );
        assert_eq!(split_message("").count(), 0);
    }
}
