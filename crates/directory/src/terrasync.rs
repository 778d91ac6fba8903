//! TerraSync scenery servers in NAPTR records, and the client's choice among them.

use crate::Error;
use rand::seq::SliceRandom;
use rand::Rng;

/// One NAPTR record's relevant fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NaptrEntry {
    /// Lower is tried first.
    pub order: u16,
    /// Lower is preferred within an order.
    pub preference: u16,
    /// Must be exactly `U`.
    pub flags: String,
    /// `ws20`, `o2c`, `https+ws20`, ...
    pub service: String,
    /// `!^.*$!URL!`
    pub regexp: String,
}

const PREFIX: &str = "!^.*$!";

/// The URL inside a regexp of the only form SimGear accepts, `!^.*$!URL!`.
pub fn url_of(regexp: &str) -> Option<&str> {
    let url = regexp.strip_prefix(PREFIX)?.strip_suffix('!')?;
    (!url.is_empty() && !url.contains('!')).then_some(url)
}

/// Builds the regexp for `url`, refusing URLs SimGear would mangle or that cannot
/// be carried (empty, containing `!` or whitespace, not http(s)).
pub fn regexp_for(url: &str) -> Result<String, Error> {
    if url.is_empty() || url.contains('!') || url.chars().any(char::is_whitespace) {
        return Err(Error::SceneryUrl(url.to_string()));
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Error::SceneryScheme(url.to_string()));
    }
    Ok(format!("{PREFIX}{url}!"))
}

/// A warning about an entry the selection skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The entry.
    pub entry: NaptrEntry,
    /// Why.
    pub reason: String,
}

/// The result of the classic selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The pick.
    pub url: String,
    /// Every candidate of the lowest order and preference, shuffled with the pick
    /// first (the launcher's fallback list).
    pub candidates: Vec<String>,
    /// Entries of the lowest order skipped for a malformed regexp.
    pub skipped: Vec<Skipped>,
}

/// SimGear's algorithm (≤ 2020.3, the launcher, the wiki): keep flags exactly `U`
/// and `service` exactly; keep the lowest order; drop malformed regexps (with a
/// warning); keep the lowest preference; pick uniformly at random. An empty result
/// is an error (SimGear would crash on it).
pub fn select(
    entries: &[NaptrEntry],
    service: &str,
    rng: &mut impl Rng,
) -> Result<Selection, Error> {
    let matching: Vec<&NaptrEntry> = entries
        .iter()
        .filter(|e| e.flags == "U" && e.service == service)
        .collect();
    let Some(order) = matching.iter().map(|e| e.order).min() else {
        return Err(Error::NoNaptr {
            service: service.to_string(),
        });
    };
    let mut skipped = Vec::new();
    let valid: Vec<&NaptrEntry> = matching
        .into_iter()
        .filter(|e| e.order == order)
        .filter(|e| {
            let ok = url_of(&e.regexp).is_some();
            if !ok {
                skipped.push(Skipped {
                    entry: (*e).clone(),
                    reason: format!("unsupported regexp {:?} (must be !^.*$!URL!)", e.regexp),
                });
            }
            ok
        })
        .collect();
    let unsupported = || Error::UnsupportedRegexps {
        service: service.to_string(),
        order,
    };
    let Some(pref) = valid.iter().map(|e| e.preference).min() else {
        return Err(unsupported());
    };
    let mut candidates: Vec<String> = valid
        .iter()
        .filter(|e| e.preference == pref)
        .filter_map(|e| url_of(&e.regexp).map(str::to_string))
        .collect();
    candidates.shuffle(rng);
    // Never empty: every valid entry of the lowest preference has a URL.
    let url = candidates.first().cloned().ok_or_else(unsupported)?;
    Ok(Selection {
        url,
        candidates,
        skipped,
    })
}

/// The environment variable that overrides DNS for `service`, as in SimGear.
pub fn override_var(service: &str) -> String {
    format!("SIMGEAR_TERRASYNC_SERVER_{service}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use std::collections::HashMap;

    fn e(order: u16, pref: u16, flags: &str, service: &str, url: &str) -> NaptrEntry {
        NaptrEntry {
            order,
            preference: pref,
            flags: flags.into(),
            service: service.into(),
            regexp: if url.starts_with('!') {
                url.into()
            } else {
                format!("!^.*$!{url}!")
            },
        }
    }

    /// The notes' test zone.
    fn zone() -> Vec<NaptrEntry> {
        vec![
            e(100, 50, "U", "ws20", "https://a.example.org/ws2"),
            e(100, 50, "U", "ws20", "https://b.example.org/ws2"),
            e(100, 100, "U", "ws20", "https://master.example.org/scenery"),
            e(200, 10, "U", "ws20", "https://backup.example.org/ws2"),
            e(100, 10, "U", "o2c", "https://o2c.example.org/o2c"),
        ]
    }

    #[test]
    fn uniform_over_the_lowest_order_and_preference_never_outside() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut counts: HashMap<String, u32> = HashMap::new();
        let n = 20_000;
        for _ in 0..n {
            let s = select(&zone(), "ws20", &mut rng).unwrap();
            assert_eq!(s.candidates.len(), 2);
            assert_eq!(s.candidates[0], s.url);
            *counts.entry(s.url).or_default() += 1;
        }
        assert_eq!(counts.len(), 2, "only a and b: {counts:?}");
        // Uniform: each side within 4 standard deviations of n/2 (sd = sqrt(n)/2).
        let a = counts["https://a.example.org/ws2"] as f64;
        let sd = (n as f64).sqrt() / 2.0;
        assert!((a - n as f64 / 2.0).abs() < 4.0 * sd, "{counts:?}");
        // Chi-square with 1 degree of freedom below the 99.9% quantile (10.83).
        let b = n as f64 - a;
        let chi = ((a - n as f64 / 2.0).powi(2) + (b - n as f64 / 2.0).powi(2)) / (n as f64 / 2.0);
        assert!(chi < 10.83, "chi2 = {chi}");
    }

    #[test]
    fn flags_and_service_are_exact() {
        let mut rng = StdRng::seed_from_u64(1);
        let s = select(&zone(), "o2c", &mut rng).unwrap();
        assert_eq!(s.url, "https://o2c.example.org/o2c");
        let lower = vec![e(1, 1, "u", "ws20", "https://x/")];
        assert!(
            select(&lower, "ws20", &mut rng).is_err(),
            "flags must be exactly U"
        );
        assert!(select(&zone(), "WS20", &mut rng).is_err());
    }

    #[test]
    fn malformed_regexps_are_skipped_and_all_malformed_is_an_error() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut z = zone();
        z.push(e(100, 1, "U", "ws20", "!^http.*$!https://evil/!"));
        let s = select(&z, "ws20", &mut rng).unwrap();
        assert_eq!(s.skipped.len(), 1);
        assert_eq!(
            s.candidates.len(),
            2,
            "the malformed pref-1 entry did not win"
        );
        let bad = vec![
            e(100, 1, "U", "ws20", "!bad!"),
            e(200, 1, "U", "ws20", "https://later/"),
        ];
        let err = select(&bad, "ws20", &mut rng).unwrap_err();
        assert!(err.to_string().contains("unsupported regexp"), "{err}");
        assert_eq!(
            err,
            Error::UnsupportedRegexps {
                service: "ws20".into(),
                order: 100
            }
        );
        assert!(matches!(
            select(&[], "ws20", &mut rng),
            Err(Error::NoNaptr { .. })
        ));
    }

    #[test]
    fn regexps() {
        assert_eq!(url_of("!^.*$!https://a/b!"), Some("https://a/b"));
        assert_eq!(url_of("!^.*$!!"), None);
        assert_eq!(url_of("^.*$!x!"), None);
        assert_eq!(
            regexp_for("https://a.example/ws2").unwrap(),
            "!^.*$!https://a.example/ws2!"
        );
        assert_eq!(
            regexp_for("https://a!b"),
            Err(Error::SceneryUrl("https://a!b".into()))
        );
        assert_eq!(
            regexp_for("ftp://x"),
            Err(Error::SceneryScheme("ftp://x".into()))
        );
        assert!(regexp_for("").is_err());
    }
}
