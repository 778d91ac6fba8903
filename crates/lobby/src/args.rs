//! Checks shared by command-line flags and configuration keys.

use anyhow::{bail, Result};
use std::time::Duration;

/// A number of seconds above 0 and at most `max`, as a duration. `what` names the
/// flag or key in the error (`--timeout`, `master.server_ttl`).
pub fn seconds(v: f64, what: &str, max: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        bail!("{what} must be a positive number of seconds (at most {max}), got {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

/// [`seconds`] for clap's value parsers: parses the text first.
pub fn parse_seconds(text: &str, max: f64) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    seconds(v, "the value", max).map_err(|e| e.to_string())?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_messages() {
        assert_eq!(
            seconds(2.5, "--t", 10.0).unwrap(),
            Duration::from_millis(2500)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 11.0] {
            let e = seconds(bad, "master.server_ttl", 10.0)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("master.server_ttl must be"), "{e}");
        }
        assert!(parse_seconds("0", 3600.0).is_err());
        assert!(parse_seconds("NaN", 3600.0).is_err());
        assert!(parse_seconds("x", 3600.0)
            .unwrap_err()
            .contains("not a number"));
        assert_eq!(parse_seconds(" 2.5", 3600.0).unwrap(), 2.5);
    }
}
