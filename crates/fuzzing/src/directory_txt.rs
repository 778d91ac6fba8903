//! The TXT attribute decoder and the TerraSync selection on hostile DNS data:
//! never panics; a selection stays inside the lowest order and preference.
use rand::SeedableRng;

/// The fuzz target's body: arbitrary bytes in; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let strings: Vec<&[u8]> = data.split(|&b| b == 0).collect();
    let _ = directory::mpserver::decode(&strings);
    let entries: Vec<directory::terrasync::NaptrEntry> = data
        .chunks(8)
        .map(|c| directory::terrasync::NaptrEntry {
            order: u16::from(*c.first().unwrap_or(&0) % 3),
            preference: u16::from(*c.get(1).unwrap_or(&0) % 3),
            flags: if c.get(2).is_some_and(|b| b % 2 == 0) {
                "U".into()
            } else {
                "u".into()
            },
            service: "ws20".into(),
            regexp: String::from_utf8_lossy(c.get(3..).unwrap_or(&[])).into_owned(),
        })
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(data.len() as u64);
    if let Ok(sel) = directory::terrasync::select(&entries, "ws20", &mut rng) {
        assert!(sel.candidates.contains(&sel.url));
    }
}
