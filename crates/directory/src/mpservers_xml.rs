//! `mpservers.xml`, the list FlightGear's launcher downloads (it reads
//! `server/{name,location,hostname,port,online}` from a property-list XML).

use std::fmt::Write;

/// One server in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Display name.
    pub name: String,
    /// Location text.
    pub location: String,
    /// Host to connect to.
    pub hostname: String,
    /// UDP port.
    pub port: u16,
    /// Whether it answers.
    pub online: bool,
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if c.is_control() => {}
            c => o.push(c),
        }
    }
    o
}

/// Renders the list.
pub fn render(entries: &[Entry]) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PropertyList>\n");
    for e in entries {
        let _ = write!(
            s,
            "  <server>\n    <name>{}</name>\n    <location>{}</location>\n    <hostname>{}</hostname>\n    <port type=\"int\">{}</port>\n    <online type=\"bool\">{}</online>\n  </server>\n",
            esc(&e.name),
            esc(&e.location),
            esc(&e.hostname),
            e.port,
            e.online
        );
    }
    s.push_str("</PropertyList>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_escapes() {
        let x = render(&[Entry {
            name: "mp<1>".into(),
            location: "Köln & Bonn".into(),
            hostname: "mp1.example.org".into(),
            port: 5000,
            online: false,
        }]);
        assert!(x.contains("<name>mp&lt;1&gt;</name>"));
        assert!(x.contains("<location>Köln &amp; Bonn</location>"));
        assert!(x.contains("<port type=\"int\">5000</port>"));
        assert!(x.contains("<online type=\"bool\">false</online>"));
        assert!(x.starts_with("<?xml") && x.ends_with("</PropertyList>\n"));
    }
}
