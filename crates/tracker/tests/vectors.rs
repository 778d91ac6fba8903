//! The message shapes in the notes (flightgear-multiplayer.md §2.10, fgtracker.md), as
//! named vectors so nobody "fixes" them away.

use tracker::control;
use tracker::message::{format_time, model_name, parse_line, parse_time, split_message};
use tracker::{Line, Parsed};

#[test]
fn fgms_identification_line() {
    // `V20151207 <fgms VERSION> <FQDN> <server.name>`, after a lone `\0`.
    let line = control::ident_line("0.13.10", "mpserver01.flightgear.org", "mpserver01");
    assert_eq!(
        line,
        "V20151207 0.13.10 mpserver01.flightgear.org mpserver01"
    );
    assert_eq!(line.split(' ').count(), 4);
    assert_eq!(
        control::parse_ident(&line),
        Some(tracker::Ident::V20151207 {
            version: "0.13.10".into(),
            fqdn: "mpserver01.flightgear.org".into(),
            name: "mpserver01".into()
        })
    );
}

#[test]
fn connect_and_disconnect_have_six_fields() {
    // `CONNECT <callsign> <passwd> <aircraft> <YYYY-MM-DD HH:MM:SS>`
    let c = Line::Connect {
        callsign: "D-EBHX".into(),
        passwd: "test".into(),
        model: model_name("Aircraft/c172p/Models/c172p.xml"),
        time: 1_796_155_200,
    };
    assert_eq!(c.encode(), "CONNECT D-EBHX test c172p 2026-12-01 20:00:00");
    let d = Line::Disconnect {
        callsign: "D-EBHX".into(),
        passwd: "test".into(),
        model: model_name("Aircraft/c172p/Models/c172p.xml"),
        time: 1_796_155_200 + 3600,
    };
    assert_eq!(
        d.encode(),
        "DISCONNECT D-EBHX test c172p 2026-12-01 21:00:00"
    );
    for l in [&c, &d] {
        assert_eq!(l.encode().split(' ').count(), 6);
        assert_eq!(parse_line(&l.encode()), Parsed::Line(l.clone()));
    }
}

#[test]
fn position_has_eleven_fields_and_batches_join_with_newlines() {
    // `POSITION <callsign> <passwd> <lat> <lon> <alt_ft> <heading> <pitch> <roll> <UTC time>`
    let pilots = [
        ("D-EBHX", 50.033_333, 8.570_556),
        ("N172SP", 37.618_852, -122.375),
    ];
    let lines: Vec<Line> = pilots
        .iter()
        .map(|&(cs, lat, lon)| Line::Position {
            callsign: cs.into(),
            passwd: "test".into(),
            lat,
            lon,
            alt_ft: 364.0,
            heading: 250.5,
            pitch: 2.0,
            roll: -0.25,
            time: 1_796_155_210,
        })
        .collect();
    let msg = lines
        .iter()
        .map(Line::encode)
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        msg,
        "POSITION D-EBHX test 50.033333 8.570556 364.000000 250.500000 2.000000 -0.250000 2026-12-01 20:00:10\n\
         POSITION N172SP test 37.618852 -122.375000 364.000000 250.500000 2.000000 -0.250000 2026-12-01 20:00:10"
    );
    let parsed: Vec<Parsed> = split_message(&msg).map(parse_line).collect();
    assert_eq!(
        parsed,
        lines.into_iter().map(Parsed::Line).collect::<Vec<_>>()
    );
    for l in split_message(&msg) {
        assert_eq!(l.split(' ').count(), 11);
    }
}

#[test]
fn model_names_of_real_flightgear_paths() {
    assert_eq!(model_name("Aircraft/c172p/Models/c172p.xml"), "c172p");
    assert_eq!(model_name("Aircraft/ufo/Models/ufo.xml"), "ufo");
    assert_eq!(
        model_name("Aircraft/A320-family/Models/A320-200-CFM.xml"),
        "A320-200-CFM"
    );
    assert_eq!(
        model_name("Aircraft/Generic/Human/Models/walker.xml"),
        "walker"
    );
}

#[test]
fn fgms_own_number_format_is_accepted() {
    // fgms's NumToStr(x, 6) writes a bare `0` for zero and truncates to 6 decimals.
    let l = "POSITION mpdummy2 test 0 0 -9999.000000 0 0 0 2026-12-01 20:00:00";
    assert!(
        matches!(parse_line(l), Parsed::Line(Line::Position { alt_ft, .. }) if alt_ft == -9999.0)
    );
}

#[test]
fn the_trackers_own_examples_of_fgms_garbage_are_ignored() {
    // From fgt_read_V20151207.php's comment.
    for l in [
        "POSITION * Bad Client *  0 0 . 2012-12-03 21:03:53",
        "DISCONNECT * Bad Client *  * unknown * 2012-12-03 20:56:32",
        "POSITION franck test  . . . 2012-12-08 14:28:42",
        "POSITION edji-x test -15.325710 35.681043 . 313.231018 10.049998 -45.658264 2015-12-31 01:54:54",
    ] {
        assert!(matches!(parse_line(l), Parsed::Ignored(_)), "{l}");
    }
}

#[test]
fn reply_spellings() {
    assert_eq!(control::identified("mpserver01"), "IDENTIFIED mpserver01");
    assert_eq!(
        control::CLOSING,
        "ERROR FGTracker is closing your connection"
    );
    assert_eq!(
        control::not_recognized("LOGIN a test"),
        "ERROR Message \"LOGIN a test\" not recognized"
    );
    assert_eq!(
        control::unrecognized("HELLO"),
        "ERROR Unrecognized message \"HELLO\""
    );
}

#[test]
fn utc_times() {
    assert_eq!(format_time(0), "1970-01-01 00:00:00");
    assert_eq!(format_time(951_782_400), "2000-02-29 00:00:00");
    // `date -u -d @1796155200` → Tue Dec  1 20:00:00 UTC 2026
    assert_eq!(format_time(1_796_155_200), "2026-12-01 20:00:00");
    assert_eq!(parse_time("2026-12-01", "20:00:00"), Some(1_796_155_200));
}
