//! Property tests for the directory's decoders and encoders.

use directory::mpserver;
use directory::terrasync::{self, NaptrEntry};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;

proptest! {
    /// Whatever attributes fit, encoding then decoding gives them back, within 255 bytes.
    #[test]
    fn txt_round_trip(name in "[ -~]{1,30}", location in "\\PC{0,30}", extra in prop::collection::btree_map("[a-z]{1,8}", "[ -~]{0,10}", 0..3)) {
        let mut attrs: BTreeMap<String, String> = extra;
        attrs.insert("name".into(), name);
        attrs.insert("location".into(), location);
        match mpserver::encode(&attrs) {
            Ok(s) => {
                prop_assert!(s.len() <= 255);
                let d = mpserver::decode(&[s]).unwrap();
                prop_assert_eq!(d.attrs, attrs);
                prop_assert!(d.non_string.is_empty());
            }
            Err(mpserver::TxtError::TooLong(n)) => prop_assert!(n > 255),
            Err(e) => prop_assert!(false, "unexpected {e}"),
        }
    }

    /// Hostile TXT data never panics.
    #[test]
    fn txt_decode_never_panics(strings in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..4)) {
        let _ = mpserver::decode(&strings);
        let prefixed: Vec<Vec<u8>> = strings.iter().map(|s| [b"flightgear-mpserver=".as_slice(), s].concat()).collect();
        let _ = mpserver::decode(&prefixed);
    }

    /// The selection never picks outside the lowest order and preference of valid
    /// entries, and never panics on hostile records.
    #[test]
    fn selection_stays_inside_the_best_set(entries in prop::collection::vec((0u16..4, 0u16..4, prop_oneof![Just("U".to_string()), Just("u".to_string()), Just("".to_string())], prop_oneof![Just("ws20".to_string()), Just("o2c".to_string())], prop_oneof![Just(true), Just(false)], "[a-z]{1,5}"), 0..12), seed in any::<u64>()) {
        let entries: Vec<NaptrEntry> = entries.into_iter().map(|(order, preference, flags, service, good, host)| NaptrEntry {
            order, preference, flags, service,
            regexp: if good { format!("!^.*$!https://{host}.example!") } else { format!("!{host}!") },
        }).collect();
        let mut rng = StdRng::seed_from_u64(seed);
        if let Ok(sel) = terrasync::select(&entries, "ws20", &mut rng) {
            let cands: Vec<&NaptrEntry> = entries.iter().filter(|e| e.flags == "U" && e.service == "ws20").collect();
            let order = cands.iter().map(|e| e.order).min().unwrap();
            let valid: Vec<&&NaptrEntry> = cands.iter().filter(|e| e.order == order && terrasync::url_of(&e.regexp).is_some()).collect();
            let pref = valid.iter().map(|e| e.preference).min().unwrap();
            let allowed: Vec<&str> = valid.iter().filter(|e| e.preference == pref).filter_map(|e| terrasync::url_of(&e.regexp)).collect();
            prop_assert!(allowed.contains(&sel.url.as_str()));
            prop_assert!(sel.candidates.iter().all(|c| allowed.contains(&c.as_str())));
        }
    }
}
