//! The admin API's bearer tokens: the tokens file (one `NAME TOKEN` per line) and
//! the constant-time lookup of a presented token.

use anyhow::{bail, Result};
use subtle::ConstantTimeEq;

/// Shortest token accepted: guessing one is out of reach.
pub const MIN_TOKEN_LEN: usize = 16;

/// One admin: a name (for the logs) and its bearer token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// Who, in logs and in the change records.
    pub name: String,
    secret: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token({}, <redacted>)", self.name)
    }
}

/// Parses a tokens file: one `NAME TOKEN` per line, blank lines and `#` comments
/// skipped. Errors name the line.
pub fn parse_tokens(text: &str, origin: &str) -> Result<Vec<Token>> {
    let mut out: Vec<Token> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{origin}:{}", i + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, secret] = fields[..] else {
            bail!("{}: expected NAME TOKEN", at());
        };
        if name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
        {
            bail!(
                "{}: admin name {name:?} must be 1-64 letters, digits or ._@-",
                at()
            );
        }
        if secret.len() < MIN_TOKEN_LEN || secret.len() > 256 {
            bail!(
                "{}: the token of {name:?} must be {MIN_TOKEN_LEN}-256 characters (`lobby admin new-token` makes one)",
                at()
            );
        }
        if !secret.chars().all(|c| c.is_ascii_graphic()) {
            bail!("{}: the token of {name:?} must be printable ASCII", at());
        }
        if out.iter().any(|t| t.name == name) {
            bail!("{}: admin {name:?} is listed twice", at());
        }
        if out.iter().any(|t| t.secret == secret) {
            bail!("{}: two admins share one token", at());
        }
        out.push(Token {
            name: name.to_string(),
            secret: secret.to_string(),
        });
    }
    if out.is_empty() {
        bail!("{origin}: no tokens (expected NAME TOKEN lines)");
    }
    Ok(out)
}

/// Whose token this is; every token is compared, whatever matches.
pub fn who<'a>(tokens: &'a [Token], given: &str) -> Option<&'a str> {
    let mut found = None;
    for t in tokens {
        if bool::from(t.secret.as_bytes().ct_eq(given.as_bytes())) {
            found = Some(t.name.as_str());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_files_are_checked_line_by_line() {
        let t = parse_tokens(
            "# admins\n\ngordon 0123456789abcdefXYZ\n alyx  fedcba9876543210fedc \n",
            "tokens",
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].name, "alyx");
        assert_eq!(who(&t, "fedcba9876543210fedc"), Some("alyx"));
        assert_eq!(who(&t, "fedcba9876543210fedd"), None);
        assert_eq!(who(&t, ""), None);
        for (text, says) in [
            (
                "gordon short\n",
                "tokens:1: the token of \"gordon\" must be 16-256",
            ),
            ("\n\ngordon\n", "tokens:3: expected NAME TOKEN"),
            ("a b c\n", "tokens:1: expected NAME TOKEN"),
            ("gor/don 0123456789abcdef\n", "tokens:1: admin name"),
            (
                "g 0123456789abcdef\ng 0123456789abcdeX\n",
                "tokens:2: admin \"g\" is listed twice",
            ),
            (
                "g 0123456789abcdef\nh 0123456789abcdef\n",
                "tokens:2: two admins share one token",
            ),
            ("# nothing\n", "tokens: no tokens"),
        ] {
            let e = parse_tokens(text, "tokens").unwrap_err().to_string();
            assert!(e.starts_with(says), "{text:?}: {e}");
        }
        // The debug form never shows a token.
        assert!(!format!("{t:?}").contains("0123456789"));
    }
}
