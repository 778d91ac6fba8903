//! Quake info strings: `\key\value\key\value...`.
//!
//! Rules (the engine's `Info_IsValid` and xash3d-master's parser): the text starts
//! with `\` (or is empty), keys and values alternate, neither contains `\`, `"` or
//! NUL, keys are not empty, each is at most [`MAX_KV`] bytes, and the whole string
//! is at most [`MAX_INFO`] bytes. Unknown keys are kept; lookups return the first
//! occurrence, as the engine's `Info_ValueForKey` does.

use crate::Error;

/// Longest key or value (engine MAX_KV_SIZE - 1).
pub const MAX_KV: usize = 127;
/// Longest info string accepted (engine MAX_SERVERINFO_STRING).
pub const MAX_INFO: usize = 512;

/// A validated info string, pairs kept in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InfoString {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
}

fn check_part(p: &[u8], what: &'static str) -> Result<(), Error> {
    if p.len() > MAX_KV {
        return Err(Error::InvalidInfo(what));
    }
    if p.iter().any(|&b| b == b'\\' || b == b'"' || b == 0) {
        return Err(Error::InvalidInfo("forbidden character (\\, \" or NUL)"));
    }
    Ok(())
}

/// Iterates `(key, value)` pairs of `text` without copying; stops with an error at
/// the first rule broken.
pub fn pairs(text: &[u8]) -> impl Iterator<Item = Result<(&[u8], &[u8]), Error>> {
    let mut rest = text;
    let mut failed = false;
    let mut started = false;
    std::iter::from_fn(move || {
        if failed || rest.is_empty() {
            return None;
        }
        if !started {
            started = true;
            if text.len() > MAX_INFO {
                failed = true;
                return Some(Err(Error::InvalidInfo("longer than 512 bytes")));
            }
        }
        let r = (|| {
            let body = rest
                .strip_prefix(b"\\")
                .ok_or(Error::InvalidInfo("must start with a backslash"))?;
            let k_end = body
                .iter()
                .position(|&b| b == b'\\')
                .ok_or(Error::InvalidInfo("key without value"))?;
            let key = &body[..k_end];
            let after = &body[k_end + 1..];
            let v_end = after
                .iter()
                .position(|&b| b == b'\\')
                .unwrap_or(after.len());
            let value = &after[..v_end];
            if key.is_empty() {
                return Err(Error::InvalidInfo("empty key"));
            }
            check_part(key, "key longer than 127 bytes")?;
            check_part(value, "value longer than 127 bytes")?;
            rest = &after[v_end..];
            if rest == b"\\" {
                return Err(Error::InvalidInfo("stray trailing backslash"));
            }
            Ok((key, value))
        })();
        if r.is_err() {
            failed = true;
        }
        Some(r)
    })
}

impl InfoString {
    /// An empty info string.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses and validates `text` (no trailing newline or NUL; strip those first).
    pub fn parse(text: &[u8]) -> Result<InfoString, Error> {
        let mut s = InfoString::new();
        for p in pairs(text) {
            let (k, v) = p?;
            s.pairs.push((k.to_vec(), v.to_vec()));
        }
        Ok(s)
    }

    /// The first value for `key`.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| v.as_slice())
    }

    /// The first value for `key` as UTF-8 text (lossy).
    pub fn get_str(&self, key: &str) -> Option<String> {
        self.get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Sets `key` (replacing its first occurrence, or appending).
    pub fn set(&mut self, key: &str, value: impl AsRef<[u8]>) -> Result<(), Error> {
        let value = value.as_ref();
        if key.is_empty() {
            return Err(Error::InvalidInfo("empty key"));
        }
        check_part(key.as_bytes(), "key longer than 127 bytes")?;
        check_part(value, "value longer than 127 bytes")?;
        match self.pairs.iter_mut().find(|(k, _)| k == key.as_bytes()) {
            Some(p) => p.1 = value.to_vec(),
            None => self.pairs.push((key.as_bytes().to_vec(), value.to_vec())),
        }
        if self.encoded_len() > MAX_INFO {
            self.pairs.retain(|(k, _)| k != key.as_bytes());
            return Err(Error::InvalidInfo("longer than 512 bytes"));
        }
        Ok(())
    }

    /// Builder form of [`InfoString::set`].
    pub fn with(mut self, key: &str, value: impl AsRef<[u8]>) -> Result<Self, Error> {
        self.set(key, value)?;
        Ok(self)
    }

    /// Pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.pairs.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        self.pairs.iter().map(|(k, v)| 2 + k.len() + v.len()).sum()
    }

    /// Appends `\k\v...`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        for (k, v) in &self.pairs {
            out.push(b'\\');
            out.extend_from_slice(k);
            out.push(b'\\');
            out.extend_from_slice(v);
        }
    }

    /// The encoded bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.encoded_len());
        self.encode(&mut v);
        v
    }
}

/// The engine's rule for flag values: exactly `0` or `1`.
pub fn parse_flag(v: &[u8]) -> Option<bool> {
    match v {
        b"0" => Some(false),
        b"1" => Some(true),
        _ => None,
    }
}

/// A decimal number that fits `T` (no sign, no spaces, no leading `+`).
pub fn parse_num<T: std::str::FromStr>(v: &[u8]) -> Option<T> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_real_heartbeat_info() {
        let text = b"\\protocol\\49\\challenge\\3237998081\\players\\0\\max\\4\\bots\\0\\gamedir\\valve\\map\\tiny\\type\\d\\password\\1\\os\\w\\secure\\0\\lan\\0\\version\\0.21\\region\\255\\product\\valve\\nat\\0";
        let s = InfoString::parse(text).unwrap();
        assert_eq!(s.len(), 16);
        assert_eq!(s.get("challenge"), Some(&b"3237998081"[..]));
        assert_eq!(s.get("nat"), Some(&b"0"[..]));
        assert_eq!(s.to_bytes(), text);
    }

    #[test]
    fn rejects_what_the_engine_rejects() {
        for bad in [
            &b"protocol\\49"[..],
            b"\\protocol",
            b"\\protocol\\49\\",
            b"\\\\49",
            b"\\a\\b\0c",
            b"\\a\\b\"c",
        ] {
            assert!(
                InfoString::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(InfoString::parse(b"").unwrap().is_empty());
        assert_eq!(
            InfoString::parse(b"\\a\\").unwrap().get("a"),
            Some(&b""[..])
        );
        let long = format!("\\k\\{}", "x".repeat(128));
        assert!(InfoString::parse(long.as_bytes()).is_err());
        let huge: String = (0..60).map(|i| format!("\\k{i}\\valuevalue")).collect();
        assert!(
            InfoString::parse(huge.as_bytes()).is_err(),
            "over 512 bytes"
        );
    }

    #[test]
    fn set_validates_and_replaces() {
        let mut s = InfoString::new();
        s.set("map", "crossfire").unwrap();
        s.set("map", "tiny").unwrap();
        assert_eq!(s.to_bytes(), b"\\map\\tiny");
        assert!(s.set("bad\\key", "x").is_err());
        assert!(s.set("k", "a\\b").is_err());
        assert!(s.set("", "x").is_err());
    }

    #[test]
    fn flags_and_numbers() {
        assert_eq!(parse_flag(b"1"), Some(true));
        assert_eq!(parse_flag(b"0"), Some(false));
        assert_eq!(parse_flag(b"yes"), None);
        assert_eq!(parse_flag(b"2"), None);
        assert_eq!(parse_num::<u8>(b"255"), Some(255));
        assert_eq!(parse_num::<u8>(b"256"), None);
        assert_eq!(parse_num::<u8>(b"-1"), None);
        assert_eq!(parse_num::<u32>(b""), None);
    }
}
