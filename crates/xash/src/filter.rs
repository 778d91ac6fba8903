//! Scan filters and the server facts they match, with xash3d-master's exact
//! semantics: gamedir, map and protocol are exact, case-sensitive equality; flag
//! keys are *literal* (`\full\1` lists only full servers, `\empty\1` only empty
//! ones); `nat` absent lists everything, `0` only direct servers, `1` only NAT
//! servers; flag values other than `0`/`1` make the whole request invalid.

use crate::info::{parse_flag, parse_num, InfoString};
use crate::Error;
use std::fmt;

/// An engine version `major.minor[.patch]`, each part 0-255.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version {
    /// Major part.
    pub major: u8,
    /// Minor part.
    pub minor: u8,
    /// Patch part (0 when absent).
    pub patch: u8,
}

impl Version {
    /// A version from its parts.
    pub const fn new(major: u8, minor: u8, patch: u8) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parses `a.b` or `a.b.c`.
    pub fn parse(v: &[u8]) -> Option<Version> {
        let mut it = v.split(|&b| b == b'.');
        let major = parse_num(it.next()?)?;
        let minor = parse_num(it.next()?)?;
        let patch = match it.next() {
            Some(p) => parse_num(p)?,
            None => 0,
        };
        if it.next().is_some() {
            return None;
        }
        Some(Version::new(major, minor, patch))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patch == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

/// Server flag bits, as filters see them.
pub mod flags {
    /// `type` is `d`.
    pub const DEDICATED: u8 = 1;
    /// `secure` is 1.
    pub const SECURE: u8 = 2;
    /// The server has a password (see [`crate::master::ServerAdd::password`]).
    pub const PASSWORD: u8 = 4;
    /// `lan` is 1.
    pub const LAN: u8 = 8;
    /// `bots` is non-zero.
    pub const BOTS: u8 = 16;
    /// `nat` is 1.
    pub const NAT: u8 = 32;
}

/// What a filter is matched against.
#[derive(Debug, Clone, Copy)]
pub struct ServerFacts<'a> {
    /// Game directory.
    pub gamedir: &'a [u8],
    /// Current map.
    pub map: &'a [u8],
    /// Network protocol.
    pub protocol: u8,
    /// [`flags`] bits.
    pub flags: u8,
    /// Players (without bots).
    pub players: u8,
    /// Maximum players.
    pub max: u8,
}

/// A parsed scan filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exact game directory.
    pub gamedir: Option<Vec<u8>>,
    /// Exact map.
    pub map: Option<Vec<u8>>,
    /// Exact protocol.
    pub protocol: Option<u8>,
    /// The client's engine version (gating).
    pub clver: Option<Version>,
    /// The client's build number (gating).
    pub buildnum: Option<u32>,
    /// Key to echo in the reply's `0x7F` block (hex in the request).
    pub key: Option<u32>,
    /// Required values of the flag bits in `mask`.
    pub flags: u8,
    /// Which flag bits the filter constrains.
    pub mask: u8,
    /// `empty` / `noplayers`: players == 0 must equal this.
    pub empty: Option<bool>,
    /// `full`: players >= max must equal this.
    pub full: Option<bool>,
}

impl Filter {
    /// Parses a filter info string. Unknown keys are ignored; a malformed value for
    /// a known key is an error (the master then sends no reply).
    pub fn from_info(info: &InfoString) -> Result<Filter, Error> {
        let mut f = Filter::default();
        for (k, v) in info.iter() {
            let bad = || Error::InvalidValue {
                key: String::from_utf8_lossy(k).into_owned(),
            };
            let flag = |f: &mut Filter, bit: u8| -> Result<(), Error> {
                let on = parse_flag(v).ok_or_else(bad)?;
                f.mask |= bit;
                if on {
                    f.flags |= bit;
                } else {
                    f.flags &= !bit;
                }
                Ok(())
            };
            match k {
                b"gamedir" => f.gamedir = Some(v.to_vec()),
                b"map" => f.map = Some(v.to_vec()),
                b"protocol" => f.protocol = Some(parse_num(v).ok_or_else(bad)?),
                b"clver" => f.clver = Some(Version::parse(v).ok_or_else(bad)?),
                b"buildnum" => f.buildnum = Some(parse_num(v).ok_or_else(bad)?),
                b"key" => {
                    let s = std::str::from_utf8(v).map_err(|_| bad())?;
                    if s.is_empty() || s.len() > 8 {
                        return Err(bad());
                    }
                    f.key = Some(u32::from_str_radix(s, 16).map_err(|_| bad())?);
                }
                b"dedicated" => flag(&mut f, flags::DEDICATED)?,
                b"secure" => flag(&mut f, flags::SECURE)?,
                b"password" => flag(&mut f, flags::PASSWORD)?,
                b"lan" => flag(&mut f, flags::LAN)?,
                b"bots" => flag(&mut f, flags::BOTS)?,
                b"nat" => flag(&mut f, flags::NAT)?,
                b"empty" | b"noplayers" => f.empty = Some(parse_flag(v).ok_or_else(bad)?),
                b"full" => f.full = Some(parse_flag(v).ok_or_else(bad)?),
                _ => {} // os, arch, branch, commit and unknown keys: ignored.
            }
        }
        Ok(f)
    }

    /// The `nat` key: `None` when absent.
    pub fn nat(&self) -> Option<bool> {
        (self.mask & flags::NAT != 0).then_some(self.flags & flags::NAT != 0)
    }

    /// Whether NAT servers in the result should be told about the client:
    /// when `nat` is absent or 1.
    pub fn announces_to_nat(&self) -> bool {
        self.nat() != Some(false)
    }

    /// Whether `s` passes the filter.
    pub fn matches(&self, s: &ServerFacts<'_>) -> bool {
        if let Some(g) = &self.gamedir {
            if g.as_slice() != s.gamedir {
                return false;
            }
        }
        if let Some(m) = &self.map {
            if m.as_slice() != s.map {
                return false;
            }
        }
        if let Some(p) = self.protocol {
            if p != s.protocol {
                return false;
            }
        }
        if s.flags & self.mask != self.flags {
            return false;
        }
        if let Some(e) = self.empty {
            if (s.players == 0) != e {
                return false;
            }
        }
        if let Some(full) = self.full {
            if (s.players >= s.max) != full {
                return false;
            }
        }
        true
    }

    /// Whether the filter constrains only what the cached per-gamedir lists can
    /// answer without a full pass (gamedir and NAT).
    pub fn is_simple(&self) -> bool {
        self.map.is_none()
            && self.protocol.is_none()
            && self.mask & !flags::NAT == 0
            && self.empty.is_none()
            && self.full.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(flags: u8, players: u8, max: u8) -> ServerFacts<'static> {
        ServerFacts {
            gamedir: b"valve",
            map: b"crossfire",
            protocol: 49,
            flags,
            players,
            max,
        }
    }

    fn filter(s: &str) -> Result<Filter, Error> {
        Filter::from_info(&InfoString::parse(s.as_bytes()).unwrap())
    }

    #[test]
    fn exact_case_sensitive_matches() {
        let f = filter("\\gamedir\\valve\\map\\crossfire\\protocol\\49").unwrap();
        assert!(f.matches(&facts(0, 1, 8)));
        assert!(!filter("\\gamedir\\Valve").unwrap().matches(&facts(0, 1, 8)));
        assert!(!filter("\\gamedir\\valv").unwrap().matches(&facts(0, 1, 8)));
        assert!(!filter("\\map\\crossfire2")
            .unwrap()
            .matches(&facts(0, 1, 8)));
        assert!(!filter("\\protocol\\48").unwrap().matches(&facts(0, 1, 8)));
    }

    #[test]
    fn flags_are_literal() {
        let full = filter("\\full\\1").unwrap();
        assert!(full.matches(&facts(0, 8, 8)));
        assert!(!full.matches(&facts(0, 7, 8)));
        let not_full = filter("\\full\\0").unwrap();
        assert!(not_full.matches(&facts(0, 7, 8)));
        let empty = filter("\\empty\\1").unwrap();
        assert!(empty.matches(&facts(0, 0, 8)));
        assert!(!empty.matches(&facts(0, 1, 8)));
        assert_eq!(filter("\\noplayers\\1").unwrap().empty, Some(true));
        let ded = filter("\\dedicated\\1\\password\\0").unwrap();
        assert!(ded.matches(&facts(flags::DEDICATED, 0, 8)));
        assert!(!ded.matches(&facts(flags::DEDICATED | flags::PASSWORD, 0, 8)));
        assert!(!ded.matches(&facts(0, 0, 8)));
        for key in ["secure", "lan", "bots"] {
            let f = filter(&format!("\\{key}\\1")).unwrap();
            assert_eq!(f.mask.count_ones(), 1, "{key}");
        }
    }

    #[test]
    fn nat_semantics() {
        let any = filter("").unwrap();
        assert!(any.matches(&facts(flags::NAT, 0, 8)) && any.matches(&facts(0, 0, 8)));
        assert!(any.announces_to_nat());
        let only = filter("\\nat\\1").unwrap();
        assert!(only.matches(&facts(flags::NAT, 0, 8)) && !only.matches(&facts(0, 0, 8)));
        assert!(only.announces_to_nat());
        let none = filter("\\nat\\0").unwrap();
        assert!(!none.matches(&facts(flags::NAT, 0, 8)) && none.matches(&facts(0, 0, 8)));
        assert!(!none.announces_to_nat());
    }

    #[test]
    fn malformed_values_are_errors_unknown_keys_are_not() {
        for bad in [
            "\\nat\\yes",
            "\\full\\2",
            "\\protocol\\x",
            "\\protocol\\300",
            "\\clver\\abc",
            "\\key\\zz",
            "\\buildnum\\-1",
        ] {
            assert!(filter(bad).is_err(), "{bad}");
        }
        let f = filter("\\clver\\0.21\\nat\\0\\commit\\abc\\branch\\master\\os\\linux\\arch\\amd64\\buildnum\\4000\\key\\1\\whatever\\x").unwrap();
        assert_eq!(f.clver, Some(Version::new(0, 21, 0)));
        assert_eq!(f.buildnum, Some(4000));
        assert_eq!(f.key, Some(1));
        assert_eq!(filter("\\key\\ffffffff").unwrap().key, Some(u32::MAX));
    }

    #[test]
    fn versions_order() {
        assert!(Version::parse(b"0.19.4").unwrap() < Version::parse(b"0.21").unwrap());
        assert!(Version::parse(b"0.21").unwrap() < Version::parse(b"0.21.1").unwrap());
        assert_eq!(Version::parse(b"0.21").unwrap().to_string(), "0.21");
        assert_eq!(Version::parse(b"1"), None);
        assert_eq!(Version::parse(b"1.2.3.4"), None);
        assert_eq!(Version::parse(b"1.256"), None);
    }
}
