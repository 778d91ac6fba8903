//! The TXT record FlightGear reads on each relay host:
//! `flightgear-mpserver=<standard base64 of a JSON object whose values are strings>`,
//! in one character-string of at most 255 bytes (c-ares clients and mpmap read only
//! the first string; see the notes).

use base64::Engine as _;
use std::collections::BTreeMap;

/// The attribute name.
pub const ATTRIBUTE: &str = "flightgear-mpserver";
/// Longest DNS character-string.
pub const MAX_STRING: usize = 255;

/// Why a TXT value could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxtError {
    /// The encoded attribute exceeds one 255-byte character-string.
    #[error(
        "TXT string of {0} bytes exceeds 255 (shorten the name, location or extra attributes)"
    )]
    TooLong(usize),
    /// `name` or `location` is missing.
    #[error("missing {0:?}")]
    Missing(&'static str),
    /// No `flightgear-mpserver=` attribute.
    #[error("no flightgear-mpserver attribute")]
    NoAttribute,
    /// Not base64.
    #[error("not base64: {0}")]
    Base64(String),
    /// Not a JSON object.
    #[error("not a JSON object: {0}")]
    Json(String),
}

/// Builds the TXT string for a relay: `name`, `location` and any extra string
/// attributes. Keys are ordered (BTreeMap) so the output is stable.
pub fn encode(attrs: &BTreeMap<String, String>) -> Result<String, TxtError> {
    for key in ["name", "location"] {
        if !attrs.contains_key(key) {
            return Err(TxtError::Missing(key));
        }
    }
    let json = serde_json::to_string(attrs).map_err(|e| TxtError::Json(e.to_string()))?;
    let s = format!(
        "{ATTRIBUTE}={}",
        base64::engine::general_purpose::STANDARD.encode(json)
    );
    if s.len() > MAX_STRING {
        return Err(TxtError::TooLong(s.len()));
    }
    Ok(s)
}

/// Builds the TXT string of a relay from its typed fields: `name` and `location`
/// always, `extra` attributes beside them (an extra `name` or `location` key is
/// overridden by the typed field).
pub fn encode_relay(
    name: &str,
    location: &str,
    extra: &BTreeMap<String, String>,
) -> Result<String, TxtError> {
    let mut attrs = extra.clone();
    attrs.insert("name".into(), name.to_string());
    attrs.insert("location".into(), location.to_string());
    encode(&attrs)
}

/// What a TXT record yielded, with what SimGear would have dropped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decoded {
    /// String members.
    pub attrs: BTreeMap<String, String>,
    /// Members whose values were not strings (SimGear drops them; newer builds throw).
    pub non_string: Vec<String>,
}

/// Reads the attribute from the TXT character-strings of one RR set, as SimGear
/// does: each string split at its first `=`, the last duplicate wins; then
/// base64 and JSON. udns concatenates the strings of one RR; `strings` are
/// treated as separate entries (c-ares), so a split value is reported as broken.
pub fn decode<S: AsRef<[u8]>>(strings: &[S]) -> Result<Decoded, TxtError> {
    let mut value = None;
    for s in strings {
        let s = String::from_utf8_lossy(s.as_ref());
        if let Some((k, v)) = s.split_once('=') {
            if k == ATTRIBUTE {
                value = Some(v.to_string());
            }
        }
    }
    let value = value.ok_or(TxtError::NoAttribute)?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .map_err(|e| TxtError::Base64(e.to_string()))?;
    let v: serde_json::Value =
        serde_json::from_slice(&raw).map_err(|e| TxtError::Json(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| TxtError::Json("not an object".into()))?;
    let mut d = Decoded::default();
    for (k, v) in obj {
        match v.as_str() {
            Some(s) => {
                d.attrs.insert(k.clone(), s.to_string());
            }
            None => d.non_string.push(k.clone()),
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_notes_example() {
        let a = attrs(&[("name", "mpserver01"), ("location", "Frankfurt,Germany")]);
        // serde orders keys: location before name.
        let s = encode(&a).unwrap();
        assert!(s.starts_with("flightgear-mpserver="));
        assert_eq!(decode(&[s]).unwrap().attrs, a);
        // The zone in the notes (name first) decodes to the same attributes.
        let z = "flightgear-mpserver=eyJuYW1lIjoibXBzZXJ2ZXIwMSIsImxvY2F0aW9uIjoiRnJhbmtmdXJ0LEdlcm1hbnkifQ==";
        assert_eq!(decode(&[z]).unwrap().attrs, a);
        // The wiki's value carries a trailing newline inside the base64; still JSON.
        let wiki = base64::engine::general_purpose::STANDARD
            .encode("{\"name\":\"mpserver01\",\"location\":\"Frankfurt,Germany\"}\n");
        assert_eq!(
            decode(&[format!("flightgear-mpserver={wiki}")])
                .unwrap()
                .attrs,
            a
        );
    }

    #[test]
    fn typed_fields_win_over_extra_keys() {
        let extra = attrs(&[("name", "spoof"), ("software", "lobby")]);
        let s = encode_relay("mp1", "Köln", &extra).unwrap();
        assert_eq!(
            decode(&[s]).unwrap().attrs,
            attrs(&[("name", "mp1"), ("location", "Köln"), ("software", "lobby")])
        );
    }

    #[test]
    fn limits_and_tolerance() {
        let long = "x".repeat(200);
        let e = encode(&attrs(&[("name", "n"), ("location", &long)])).unwrap_err();
        assert!(matches!(e, TxtError::TooLong(n) if n > 255));
        // JSON of 174 bytes is the most that fits.
        assert!(encode(&attrs(&[("name", "n"), ("location", "")])).is_ok());
        assert!(matches!(
            encode(&attrs(&[("name", "n")])),
            Err(TxtError::Missing("location"))
        ));
        let b64 = base64::engine::general_purpose::STANDARD
            .encode("{\"name\":\"a\",\"location\":\"b\",\"port\":5000}");
        let d = decode(&[format!("flightgear-mpserver={b64}")]).unwrap();
        assert_eq!(d.non_string, vec!["port".to_string()]);
        assert_eq!(d.attrs.len(), 2);
        assert!(matches!(
            decode(&["flightgear-mpserver=!!!"]),
            Err(TxtError::Base64(_))
        ));
        let bad = base64::engine::general_purpose::STANDARD.encode("{not json");
        assert!(matches!(
            decode(&[format!("flightgear-mpserver={bad}")]),
            Err(TxtError::Json(_))
        ));
        assert!(matches!(decode(&["other=1"]), Err(TxtError::NoAttribute)));
    }
}
