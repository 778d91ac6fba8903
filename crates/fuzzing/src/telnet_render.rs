//! The fgms telnet pilot list rendered from arbitrary pilots: never panics, one
//! line per non-observer pilot after the five header lines, whatever bytes the
//! callsigns, origins and model paths hold (no injected lines).

use fgmp::Callsign;
use relay::PilotView;
use std::time::Duration;

fn f64_at(c: &[u8], at: usize) -> f64 {
    let mut b = [0u8; 8];
    for (i, x) in b.iter_mut().enumerate() {
        *x = c.get(at + i).copied().unwrap_or(0);
    }
    f64::from_le_bytes(b)
}

/// The fuzz target's body: the input split at `0xff` into pilots, each holding a
/// callsign (8 bytes), a position (24 bytes), then `origin \0 model`.
pub fn run(data: &[u8]) {
    let pilots: Vec<PilotView> = data
        .split(|&b| b == 0xff)
        .take(8)
        .map(|c| {
            let mut cs = [0u8; 8];
            for (i, x) in cs.iter_mut().enumerate() {
                *x = c.get(i).copied().unwrap_or(0);
            }
            let rest = c.get(32..).unwrap_or(&[]);
            let (origin, model) = match rest.iter().position(|&b| b == 0) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &[][..]),
            };
            PilotView {
                callsign: Callsign::from_wire(cs),
                origin: String::from_utf8_lossy(origin).into_owned(),
                local: true,
                addr: "127.0.0.1:5000".parse().unwrap(),
                position: [f64_at(c, 8), f64_at(c, 16), f64_at(c, 24)],
                orientation: [f64_at(c, 8) as f32, 0.5, -0.25],
                velocity: [0.0; 3],
                model: String::from_utf8_lossy(model).into_owned(),
                range_nm: 100.0,
                online_for: Duration::ZERO,
                silent_for: Duration::ZERO,
                last_datagram: Vec::new(),
                datagrams: 0,
            }
        })
        .collect();
    let text = relay::telnet::render("fuzz\nname", &pilots, &[("packets_in", 1)]);
    let shown = pilots.iter().filter(|p| !p.callsign.is_observer()).count();
    assert_eq!(text.lines().count(), 5 + shown, "{text}");
    assert!(text.ends_with('\n'));
    assert!(!text.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']));
    assert_eq!(text.matches('\n').count(), 5 + shown);
}
