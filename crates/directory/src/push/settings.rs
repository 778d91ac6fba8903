//! The push's and the zone transfers' settings as `[dns]` writes them: the push
//! target (`IP[:PORT]` or `HOST[:PORT]`) and a TSIG key. Errors name the setting.

use base64::Engine as _;
use hickory_proto::rr::rdata::tsig::TsigAlgorithm;
use hickory_proto::rr::{Name, TSigner};
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

/// Where updates go: an address, or a host name resolved when pushing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An address given as such.
    Addr(SocketAddr),
    /// A host name and port, resolved by whoever pushes.
    Host(String, u16),
}

/// `IP`, `IP:PORT`, `[IPv6]`, `[IPv6]:PORT`, `HOST` or `HOST:PORT` (port 53 by
/// default). Only the syntax is checked: a host name is not resolved here.
pub fn push_target(s: &str) -> Result<Target, SettingError> {
    let s = s.trim();
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(Target::Addr(a));
    }
    let bare = s.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
    if let Ok(ip) = bare.unwrap_or(s).parse::<IpAddr>() {
        return Ok(Target::Addr(SocketAddr::new(ip, 53)));
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => match p.parse::<u16>() {
            Ok(p) if p != 0 => (h, p),
            _ => {
                return Err(SettingError::Port {
                    target: s.to_string(),
                    port: p.to_string(),
                })
            }
        },
        None => (s, 53),
    };
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !valid {
        return Err(SettingError::Target(s.to_string()));
    }
    Ok(Target::Host(host.to_string(), port))
}

/// A TSIG key from its `[dns]` settings; `what` is the key prefix (`tsig` or
/// `axfr_tsig`) for the messages. An empty secret is a configuration error: an
/// empty HMAC key would make the signature worthless.
pub fn tsig_key(
    what: &str,
    name: &str,
    algorithm: &str,
    secret: &str,
) -> Result<TSigner, SettingError> {
    let what = what.to_string();
    let alg = match algorithm.to_ascii_lowercase().as_str() {
        "hmac-sha256" => TsigAlgorithm::HmacSha256,
        "hmac-sha384" => TsigAlgorithm::HmacSha384,
        "hmac-sha512" => TsigAlgorithm::HmacSha512,
        other => {
            return Err(SettingError::Algorithm {
                what,
                algorithm: other.to_string(),
            })
        }
    };
    if secret.trim().is_empty() {
        return Err(SettingError::EmptySecret {
            what,
            key: name.to_string(),
        });
    }
    let key = match base64::engine::general_purpose::STANDARD.decode(secret.trim()) {
        Ok(k) => k,
        Err(error) => return Err(SettingError::Base64 { what, error }),
    };
    if key.is_empty() {
        return Err(SettingError::EmptyKey(what));
    }
    let name = match Name::from_str(name) {
        Ok(n) => n,
        Err(error) => return Err(SettingError::KeyName { what, error }),
    };
    TSigner::new(key, alg, name, 300).map_err(|error| SettingError::Signer { what, error })
}

/// Why a `[dns]` push or TSIG setting was refused; the message names the setting.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// `dns.push` with a port that is not 1-65535.
    #[error("dns.push {target:?}: {port:?} is not a port (HOST:PORT)")]
    Port {
        /// The whole setting.
        target: String,
        /// The text after its last colon.
        port: String,
    },
    /// `dns.push` that is neither an address nor a host name (the setting).
    #[error("dns.push {0:?} is not IP[:PORT] or HOST[:PORT]")]
    Target(String),
    /// An algorithm other than the HMAC-SHA2 ones.
    #[error("dns.{what}_algorithm {algorithm:?}: use hmac-sha256, hmac-sha384 or hmac-sha512")]
    Algorithm {
        /// The key prefix (`tsig`, `axfr_tsig`).
        what: String,
        /// The algorithm given.
        algorithm: String,
    },
    /// No secret: an empty HMAC key would sign nothing.
    #[error("dns.{what}_secret is empty: give the base64 secret of key {key:?} (an empty key signs nothing)")]
    EmptySecret {
        /// The key prefix.
        what: String,
        /// The key's name.
        key: String,
    },
    /// A secret that is not base64.
    #[error("dns.{what}_secret must be base64: {error}")]
    Base64 {
        /// The key prefix.
        what: String,
        /// The decoder's error (in the message, so not a `source`).
        error: base64::DecodeError,
    },
    /// A secret that decodes to no bytes (the key prefix).
    #[error("dns.{0}_secret decodes to an empty key")]
    EmptyKey(String),
    /// A key name that is not a DNS name.
    #[error("dns.{what}_key_name is not a DNS name: {error}")]
    KeyName {
        /// The key prefix.
        what: String,
        /// Why the name is not one.
        error: hickory_proto::ProtoError,
    },
    /// The signer refused the key.
    #[error("dns.{what}: {error}")]
    Signer {
        /// The key prefix.
        what: String,
        /// Its error.
        error: hickory_proto::dnssec::DnsSecError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_targets_are_checked_for_syntax_only() {
        assert_eq!(
            push_target("192.0.2.53").unwrap(),
            Target::Addr("192.0.2.53:53".parse().unwrap())
        );
        assert_eq!(
            push_target("[2001:db8::1]:5353").unwrap(),
            Target::Addr("[2001:db8::1]:5353".parse().unwrap())
        );
        assert_eq!(
            push_target("[2001:db8::1]").unwrap(),
            Target::Addr("[2001:db8::1]:53".parse().unwrap())
        );
        assert_eq!(
            push_target("primary.does-not-exist.invalid:53").unwrap(),
            Target::Host("primary.does-not-exist.invalid".into(), 53)
        );
        assert_eq!(
            push_target("ns1.example.org").unwrap(),
            Target::Host("ns1.example.org".into(), 53)
        );
        for bad in [
            "",
            "ns1:notaport",
            "ns1:0",
            "a..b:53",
            "has space:53",
            ":53",
        ] {
            let e = push_target(bad).unwrap_err().to_string();
            assert!(e.contains("dns.push"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn empty_tsig_secrets_are_refused() {
        let Err(e) = tsig_key("tsig", "k", "hmac-sha256", " ") else {
            panic!("an empty secret was accepted")
        };
        assert!(e.to_string().contains("dns.tsig_secret is empty"), "{e}");
        assert!(tsig_key("tsig", "k", "hmac-sha256", "=").is_err());
        assert!(tsig_key("tsig", "k", "hmac-md5", "c2VjcmV0").is_err());
        assert!(tsig_key("tsig", "k", "HMAC-SHA256", "c2VjcmV0").is_ok());
    }

    proptest::proptest! {
        /// Whatever is typed as `push`, parsing never panics, and what it accepts
        /// is an address or a host name of DNS labels with a non-zero port.
        #[test]
        fn push_target_never_panics(s in "\\PC{0,80}") {
            if let Ok(Target::Host(h, p)) = push_target(&s) {
                proptest::prop_assert!(p != 0 && !h.is_empty() && !h.contains(' '));
            }
        }
    }
}
