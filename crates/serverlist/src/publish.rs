//! The published texts, byte for byte as probe.py writes them: `v1/servers/<gamedir>`
//! and `v1/gamedirs` (header comments, a blank line, one line per entry, each line
//! ending in `\n`).

use crate::catalog::{GamedirCount, Published};
use std::collections::BTreeMap;
use std::fmt::Write;

/// `YYYY-MM-DD HH:MM:SS UTC` for Unix seconds `t` (probe.py's `Generated` stamp).
pub fn utc_stamp(t: i64) -> String {
    let d =
        time::OffsetDateTime::from_unix_timestamp(t).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    d.format(&f).unwrap_or_default()
}

/// The body of `v1/servers/<gamedir>`: `lines` are this gamedir's published lines
/// in order ([`crate::catalog::Catalog::published`] sorts them as probe.py does).
/// The address is always written with its port (the engine reads a portless IPv6
/// address as port 65,535), IPv6 bracketed.
pub fn servers_body<'a>(
    gamedir: &str,
    generated: i64,
    lines: impl IntoIterator<Item = &'a Published>,
) -> String {
    let mut s = format!(
        "# {gamedir} server list\n# Generated {}\n# Format: <ip|gs> <address>\n\n",
        utc_stamp(generated)
    );
    for p in lines {
        let _ = writeln!(s, "{} {}", p.directive.as_str(), p.addr);
    }
    s
}

/// The body of `v1/gamedirs`: `<gamedir> <total> <live>` per gamedir, sorted.
pub fn gamedirs_body(generated: i64, counts: &BTreeMap<String, GamedirCount>) -> String {
    let mut s = format!(
        "# gamedir list\n# Generated {}\n# Format: <gamedir> <total_server_count> <live_server_count>\n\n",
        utc_stamp(generated)
    );
    for (g, c) in counts {
        let _ = writeln!(s, "{g} {} {}", c.total, c.live);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::masterlist::{parse_body, Directive, ListedAddr};

    #[test]
    fn bodies_as_probe_py_writes_them() {
        let lines = [
            Published {
                gamedir: "valve".into(),
                addr: "192.0.2.1:27015".parse().unwrap(),
                directive: Directive::Ip,
                sources: 1,
                answer: None,
            },
            Published {
                gamedir: "valve".into(),
                addr: "[2001:db8::1]:27016".parse().unwrap(),
                directive: Directive::Gs,
                sources: 1,
                answer: None,
            },
        ];
        let body = servers_body("valve", 1_764_756_000, &lines);
        assert_eq!(
            body,
            "# valve server list\n# Generated 2025-12-03 10:00:00 UTC\n# Format: <ip|gs> <address>\n\nip 192.0.2.1:27015\ngs [2001:db8::1]:27016\n"
        );
        let read = parse_body(body.as_bytes());
        assert_eq!(read.entries.len(), 2);
        assert_eq!(read.entries[1].addr, ListedAddr::Ip(lines[1].addr));
        assert_eq!(
            servers_body("dmc", 0, &[]),
            "# dmc server list\n# Generated 1970-01-01 00:00:00 UTC\n# Format: <ip|gs> <address>\n\n"
        );
        let counts = BTreeMap::from([
            ("cstrike".to_string(), GamedirCount { total: 10, live: 3 }),
            ("valve".to_string(), GamedirCount { total: 2, live: 2 }),
        ]);
        assert_eq!(
            gamedirs_body(0, &counts),
            "# gamedir list\n# Generated 1970-01-01 00:00:00 UTC\n# Format: <gamedir> <total_server_count> <live_server_count>\n\ncstrike 10 3\nvalve 2 2\n"
        );
    }
}
