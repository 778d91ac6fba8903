//! The curated server-list reader (`serverlist::curated`, FWGS/server-list's
//! `servers/<gamedir>.toml`) on arbitrary text: never panics, every entry it
//! accepts has a host, a port and the line of its `[[server]]` header, and every
//! warning or skipped entry names a line of the file.

/// The fuzz target's body: arbitrary bytes in (read as UTF-8, lossily).
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match serverlist::curated::parse(&text, "fuzz.toml") {
        Ok(parsed) => {
            let lines = text.lines().count().max(1);
            for s in &parsed.servers {
                assert!(s.port > 0 && !s.host_part.is_empty(), "{s:?}");
                assert!(s.line >= 1 && s.line <= lines, "{s:?}");
            }
            for i in &parsed.issues {
                assert!(i.line >= 1 && i.line <= lines, "{i:?}");
                assert_eq!(i.file, "fuzz.toml");
            }
        }
        Err(e) => assert_eq!(e.file, "fuzz.toml"),
    }
}
