//! What lobby reads from others' files in the HTTP-era server list: a static list
//! body as the engine reads it (`serverlist::masterlist`, which `lobby query static`
//! uses on any server's answer) and probe.py's `state.json`
//! (`serverlist::export::restore_state`). Never panics; every entry read has a
//! directive and an address, and a state read back writes and reads again to the
//! same catalog.

/// The fuzz target's body.
pub fn run(data: &[u8]) {
    let parsed = serverlist::masterlist::parse_body(data);
    let lines = data.split(|&b| b == b'\n').count();
    assert!(parsed.entries.len() + parsed.bad_addresses.len() <= lines);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        let mut c = serverlist::Catalog::new();
        serverlist::export::restore_state(&mut c, &v);
        let again = serverlist::export::state_json(&c);
        let mut d = serverlist::Catalog::new();
        serverlist::export::restore_state(&mut d, &again);
        assert_eq!(serverlist::export::state_json(&d), again);
    }
}
