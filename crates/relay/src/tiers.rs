//! Distance-tiered forwarding (issue 28), the pure decision: whether one position
//! datagram of a sender goes to one receiver, given the distance between them, the
//! datagram's own `time` field (the sender's multiplayer clock) and what this pair
//! was last sent. Near pairs get every datagram; farther ones a datagram at most
//! every tier's interval of the sender's clock, so what is forwarded is whole
//! original datagrams, in order, evenly spaced on the sender's own grid (every Nth
//! packet, `time` untouched: `docs/notes/fg-client-motion.md`, section 3).
//!
//! - A pair moving **inward** takes the nearer tier at once (more data is never
//!   late); moving **outward** it keeps its tier until the distance passes the
//!   boundary by [`Tiers::hysteresis_nm`], so a pilot flying along a boundary does
//!   not flip the receiver's filter (about 40 s to settle after a rate change).
//! - What must arrive at once is the caller's to say ([`Gate::offer`]'s `must`): a
//!   pair's first datagram (it carries the model the client loads, and nothing later
//!   corrects it), a chat line the receiver has not had; a datagram whose `time` went
//!   backwards (a new session, a clock reset) also passes, and restarts the grid.
//! - No interval is longer than [`MAX_INTERVAL_S`]: past about 1.5 s a client
//!   extrapolates, pulls back and replays (the note's "keep gaps short").
//!
//! The engine ([`crate::engine`]) keeps a [`Gate`] per thinned pair and none for a
//! pair in a full-rate first tier, so where everyone is near the forwarding path
//! costs one comparison more. Written as text (`--tiers`, `[relay] tiers`):
//! `full@10,2hz@40,1hz` (full rate within 10 nm, 2 Hz to 40 nm, 1 Hz beyond), `off`.

/// The longest interval a tier may have, seconds of the sender's clock.
pub const MAX_INTERVAL_S: f64 = 1.5;

/// A datagram is due at least once this share of its tier's interval has passed
/// (the sender's grid carries rounding: 10 Hz stamps 0.1 s apart may read 0.0999);
/// with the sender's own period known, once less than half a period is left, so the
/// datagram nearest the due time goes.
const DUE_SHARE: f64 = 0.95;

/// The most tiers a configuration may have (each has its counters).
pub const MAX_TIERS: usize = 4;

/// One tier: pairs up to `up_to_nm` apart (and beyond the tier before) get at most
/// one datagram every `interval_s` of the sender's clock (0: every datagram).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tier {
    /// The tier's outer bound, nautical miles (`f64::INFINITY` for the last).
    pub up_to_nm: f64,
    /// Seconds between two datagrams forwarded; 0: the sender's full rate.
    pub interval_s: f64,
}

/// The tiers, nearest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Tiers {
    tiers: Vec<Tier>,
    /// How far past a tier's bound a pair must be before it moves out to the next.
    pub hysteresis_nm: f64,
}

/// Why a set of tiers cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TiersError {
    /// Bounds must grow from one tier to the next.
    #[error("tier {index}: its bound {up_to_nm} nm is not beyond the tier before")]
    NotIncreasing {
        /// The tier, from 0.
        index: usize,
        /// Its bound.
        up_to_nm: f64,
    },
    /// An interval outside 0 to [`MAX_INTERVAL_S`] (or not a number).
    #[error("tier {index}: interval {interval_s} s must be 0 (full rate) to {MAX_INTERVAL_S} s")]
    Interval {
        /// The tier, from 0.
        index: usize,
        /// Its interval.
        interval_s: f64,
    },
    /// The hysteresis must be a distance, 0 or more.
    #[error("hysteresis {0} nm must be 0 or more")]
    Hysteresis(f64),
    /// More than [`MAX_TIERS`] tiers.
    #[error("{0} tiers: at most {MAX_TIERS}")]
    TooMany(usize),
    /// A tier written as text that does not read (`RATE@NM`, RATE `full` or `<n>hz`).
    #[error("tier {0:?}: expected RATE@NM (the last may be RATE alone), RATE being `full` or a rate like `2hz`")]
    Syntax(String),
}

impl Tiers {
    /// Checked tiers, nearest first; pairs beyond the last bound are in the last
    /// tier. No tier at all is fgms's behaviour: every datagram to every receiver
    /// in range.
    pub fn new(tiers: Vec<Tier>, hysteresis_nm: f64) -> Result<Tiers, TiersError> {
        if !(hysteresis_nm >= 0.0 && hysteresis_nm.is_finite()) {
            return Err(TiersError::Hysteresis(hysteresis_nm));
        }
        if tiers.len() > MAX_TIERS {
            return Err(TiersError::TooMany(tiers.len()));
        }
        for (index, t) in tiers.iter().enumerate() {
            if !(0.0..=MAX_INTERVAL_S).contains(&t.interval_s) {
                return Err(TiersError::Interval {
                    index,
                    interval_s: t.interval_s,
                });
            }
            let before = index.checked_sub(1).map_or(0.0, |i| tiers[i].up_to_nm);
            if t.up_to_nm.partial_cmp(&before) != Some(std::cmp::Ordering::Greater) {
                return Err(TiersError::NotIncreasing {
                    index,
                    up_to_nm: t.up_to_nm,
                });
            }
        }
        Ok(Tiers {
            tiers,
            hysteresis_nm,
        })
    }

    /// No tiers: every datagram forwarded (fgms's behaviour).
    pub fn off() -> Tiers {
        Tiers {
            tiers: Vec::new(),
            hysteresis_nm: 0.0,
        }
    }

    /// Full rate within 10 nm, 2 Hz to 40 nm, 1 Hz beyond, 2 nm of hysteresis:
    /// lobby's default (the README says why: a real client shows these as it shows
    /// full rate).
    pub fn recommended() -> Tiers {
        Tiers::parse("full@10,2hz@40,1hz", DEFAULT_HYSTERESIS_NM)
            .expect("the recommended tiers are valid")
    }

    /// Tiers written as text: `off` (or nothing) for none, else tiers nearest
    /// first separated by commas, each `RATE@NM` (its outer bound) but the last,
    /// which may be `RATE` alone (everything beyond); RATE is `full` or a rate like
    /// `2hz` (at least 1/[`MAX_INTERVAL_S`] Hz). A last tier with a bound extends
    /// to every distance beyond it.
    pub fn parse(text: &str, hysteresis_nm: f64) -> Result<Tiers, TiersError> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("off") {
            return Tiers::new(Vec::new(), hysteresis_nm);
        }
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        let mut tiers = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let bad = || TiersError::Syntax(item.to_string());
            let (rate, bound) = match item.split_once('@') {
                Some((r, b)) => (r.trim(), Some(b.trim())),
                None if i + 1 == items.len() => (*item, None),
                None => return Err(bad()),
            };
            let interval_s = if rate.eq_ignore_ascii_case("full") {
                0.0
            } else {
                let hz: f64 = rate
                    .strip_suffix("hz")
                    .or_else(|| rate.strip_suffix("Hz"))
                    .and_then(|n| n.trim().parse().ok())
                    .ok_or_else(bad)?;
                if hz.is_nan() || hz <= 0.0 {
                    return Err(bad());
                }
                1.0 / hz
            };
            let up_to_nm = match bound {
                Some(b) => b
                    .strip_suffix("nm")
                    .unwrap_or(b)
                    .trim()
                    .parse()
                    .map_err(|_| bad())?,
                None => f64::INFINITY,
            };
            tiers.push(Tier {
                up_to_nm,
                interval_s,
            });
        }
        Tiers::new(tiers, hysteresis_nm)
    }

    /// Whether there are no tiers (every datagram to every receiver in range).
    pub fn is_off(&self) -> bool {
        self.tiers.is_empty()
    }

    /// The tiers, nearest first.
    pub fn tiers(&self) -> &[Tier] {
        &self.tiers
    }

    /// The distance within which every datagram goes (the first tier's bound when
    /// it is full rate), nautical miles; `None` when the first tier is thinned.
    pub fn full_rate_within_nm(&self) -> Option<f64> {
        match self.tiers.first() {
            Some(t) if t.interval_s == 0.0 => Some(t.up_to_nm),
            Some(_) => None,
            None => Some(f64::INFINITY),
        }
    }

    /// The tier a pair `distance_nm` apart falls in, without hysteresis.
    pub fn tier_of(&self, distance_nm: f64) -> usize {
        self.tiers
            .iter()
            .position(|t| distance_nm <= t.up_to_nm)
            .unwrap_or(self.tiers.len().saturating_sub(1))
    }

    /// The tier a pair in tier `was` is in at `distance_nm`: nearer at once, farther
    /// only past the boundary by the hysteresis.
    pub fn next_tier(&self, was: usize, distance_nm: f64) -> usize {
        let plain = self.tier_of(distance_nm);
        if plain <= was {
            return plain;
        }
        // Moving out: leave `was` only once past its bound by the hysteresis, then
        // take the farthest tier that distance has also cleared by it.
        let mut t = was;
        while t < plain && distance_nm > self.tiers[t].up_to_nm + self.hysteresis_nm {
            t += 1;
        }
        t
    }
}

/// The default hysteresis, nautical miles.
pub const DEFAULT_HYSTERESIS_NM: f64 = 2.0;

impl std::fmt::Display for Tiers {
    /// The text [`Tiers::parse`] reads back (`off` for none).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tiers.is_empty() {
            return f.write_str("off");
        }
        for (i, t) in self.tiers.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if t.interval_s == 0.0 {
                f.write_str("full")?;
            } else {
                write!(f, "{}hz", round6(1.0 / t.interval_s))?;
            }
            if t.up_to_nm.is_finite() {
                write!(f, "@{}", t.up_to_nm)?;
            }
        }
        Ok(())
    }
}

/// `x` to six decimals (1/3 Hz written back as 0.333333hz, not 0.33333333333333331).
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// What one (sender, receiver) pair was last sent: a tier and the sender's `time`
/// of the last datagram forwarded. 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    tier: u32,
    last_time: f64,
}

impl Gate {
    /// The gate of a pair's first datagram, which always passes (it carries the
    /// model): `time` is its `time` field. A pair new to a receiver is taken to
    /// come from the first tier: it is in a farther one only past the hysteresis.
    pub fn first(tiers: &Tiers, distance_nm: f64, time: f64) -> Gate {
        Gate {
            tier: tiers.next_tier(0, distance_nm) as u32,
            last_time: time,
        }
    }

    /// The tier the pair is in now.
    pub fn tier(&self) -> usize {
        self.tier as usize
    }

    /// Whether the datagram stamped `time` (the sender's clock) goes to this
    /// receiver `distance_nm` away; `period`: the sender's last gap between two
    /// datagrams (its clock; 0 when not known); `must`: it carries what the receiver
    /// needs at once (a chat line not yet sent, say). Records it when it goes.
    pub fn offer(
        &mut self,
        tiers: &Tiers,
        distance_nm: f64,
        time: f64,
        period: f64,
        must: bool,
    ) -> bool {
        if tiers.tiers.is_empty() {
            return true;
        }
        self.tier = tiers.next_tier(self.tier(), distance_nm) as u32;
        let interval = tiers.tiers[self.tier()].interval_s;
        let since = time - self.last_time;
        // The datagram nearest the due time goes: once less than half the sender's
        // period is left (a 3 Hz sender in a 2 Hz tier keeps its 3 Hz).
        let period = if period.is_finite() {
            period.clamp(0.0, interval)
        } else {
            0.0
        };
        let slack = (interval * (1.0 - DUE_SHARE)).max(period * 0.55);
        // A clock that went backwards (or is not a number) restarts the grid.
        let due = interval == 0.0 || since.is_nan() || since < 0.0 || since >= interval - slack;
        if due || must {
            self.last_time = time;
        }
        due || must
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fly_in() -> Tiers {
        Tiers::new(
            vec![
                Tier {
                    up_to_nm: 10.0,
                    interval_s: 0.0,
                },
                Tier {
                    up_to_nm: 40.0,
                    interval_s: 0.5,
                },
                Tier {
                    up_to_nm: f64::INFINITY,
                    interval_s: 1.0,
                },
            ],
            2.0,
        )
        .unwrap()
    }

    /// The `time` fields a sender at `hz` stamps from `t0` for `secs`.
    fn stamps(t0: f64, hz: f64, secs: f64) -> Vec<f64> {
        (0..(secs * hz) as usize)
            .map(|i| t0 + i as f64 / hz)
            .collect()
    }

    #[test]
    fn near_pairs_get_everything_far_ones_every_nth_datagram_evenly() {
        let tiers = fly_in();
        for (distance, want_gap) in [(5.0, 0.1), (25.0, 0.5), (80.0, 1.0)] {
            let times = stamps(1000.0, 10.0, 60.0);
            let mut g = Gate::first(&tiers, distance, times[0]);
            let sent: Vec<f64> = times[1..]
                .iter()
                .copied()
                .filter(|&t| g.offer(&tiers, distance, t, 0.1, false))
                .collect();
            let gaps: Vec<f64> = sent.windows(2).map(|w| w[1] - w[0]).collect();
            assert!(
                gaps.iter().all(|g| (g - want_gap).abs() < 1e-6),
                "{distance} nm: gaps {gaps:?}"
            );
            let rate = sent.len() as f64 / 60.0;
            assert!(
                (rate - 1.0 / want_gap).abs() <= 0.1 / want_gap,
                "{distance} nm: {rate} Hz"
            );
        }
    }

    #[test]
    fn a_sender_at_30_hz_with_a_jittery_clock_keeps_an_even_grid() {
        let tiers = fly_in();
        // 30 Hz stamps, each off the grid by up to 2 ms.
        let times: Vec<f64> = (0..1800)
            .map(|i| 5000.0 + i as f64 / 30.0 + ((i * 7919) % 5) as f64 * 0.0005)
            .collect();
        let mut g = Gate::first(&tiers, 25.0, times[0]);
        let sent: Vec<f64> = times[1..]
            .iter()
            .copied()
            .filter(|&t| g.offer(&tiers, 25.0, t, 1.0 / 30.0, false))
            .collect();
        for w in sent.windows(2) {
            let gap = w[1] - w[0];
            assert!((0.47..0.54).contains(&gap), "gap {gap}");
        }
        assert!(
            (sent.len() as f64 / 60.0 - 2.0).abs() <= 0.2,
            "{} sent",
            sent.len()
        );
    }

    #[test]
    fn inward_at_once_outward_only_past_the_hysteresis() {
        let tiers = fly_in();
        assert_eq!(tiers.next_tier(1, 9.0), 0, "in: at once");
        assert_eq!(tiers.next_tier(0, 11.0), 0, "out by 1 nm: kept");
        assert_eq!(tiers.next_tier(0, 12.5), 1, "out past 10 + 2 nm");
        assert_eq!(tiers.next_tier(0, 45.0), 2, "out past both bounds");
        assert_eq!(
            tiers.next_tier(0, 41.0),
            1,
            "past the first, not the second"
        );
        // A pilot weaving across 10 nm keeps one tier.
        let mut g = Gate::first(&tiers, 9.5, 0.0);
        for (i, d) in [10.5, 9.8, 11.9, 10.1, 11.5].into_iter().enumerate() {
            g.offer(&tiers, d, 0.1 * (i + 1) as f64, 0.1, false);
            assert_eq!(g.tier(), 0, "{d} nm");
        }
    }

    #[test]
    fn a_sender_crossing_inward_gets_full_rate_within_one_datagram() {
        let tiers = fly_in();
        let mut g = Gate::first(&tiers, 30.0, 0.0);
        assert!(!g.offer(&tiers, 30.0, 0.1, 0.1, false));
        assert!(
            g.offer(&tiers, 9.0, 0.2, 0.1, false),
            "near now: every datagram"
        );
        assert!(g.offer(&tiers, 9.0, 0.3, 0.1, false));
    }

    #[test]
    fn what_must_arrive_passes_and_restarts_the_grid() {
        let tiers = fly_in();
        let mut g = Gate::first(&tiers, 80.0, 10.0);
        assert!(!g.offer(&tiers, 80.0, 10.3, 0.1, false));
        assert!(g.offer(&tiers, 80.0, 10.4, 0.1, true), "a chat line");
        assert!(
            !g.offer(&tiers, 80.0, 11.3, 0.1, false),
            "the grid restarted at 10.4"
        );
        assert!(g.offer(&tiers, 80.0, 11.4, 0.1, false));
        // A clock that went backwards (a new session) passes at once.
        assert!(g.offer(&tiers, 80.0, 3.0, 0.1, false));
        assert!(!g.offer(&tiers, 80.0, 3.5, 0.1, false));
        assert!(
            g.offer(&tiers, 80.0, f64::NAN, 0.1, false),
            "no number: passes"
        );
    }

    #[test]
    fn no_tiers_forward_everything_and_bad_tiers_say_why() {
        let off = Tiers::off();
        let mut g = Gate::first(&off, 500.0, 0.0);
        assert!((1..100).all(|i| g.offer(&off, 500.0, i as f64 * 0.01, 0.1, false)));
        let t = |up_to_nm, interval_s| Tier {
            up_to_nm,
            interval_s,
        };
        assert_eq!(
            Tiers::new(vec![t(10.0, 0.0), t(10.0, 1.0)], 1.0),
            Err(TiersError::NotIncreasing {
                index: 1,
                up_to_nm: 10.0
            })
        );
        assert!(matches!(
            Tiers::new(vec![t(10.0, 2.0)], 1.0),
            Err(TiersError::Interval { index: 0, .. })
        ));
        assert!(matches!(
            Tiers::new(vec![t(10.0, f64::NAN)], 1.0),
            Err(TiersError::Interval { .. })
        ));
        assert_eq!(
            Tiers::new(vec![t(10.0, 0.0)], -1.0),
            Err(TiersError::Hysteresis(-1.0))
        );
        assert!(Tiers::new(vec![t(f64::NAN, 0.0)], 1.0).is_err());
    }

    #[test]
    fn a_slow_sender_keeps_at_least_its_tier_rate() {
        let tiers = fly_in();
        // 3 Hz into a 2 Hz tier: every datagram (the nearest to each 0.5 s).
        let times = stamps(0.0, 3.0, 30.0);
        let mut g = Gate::first(&tiers, 25.0, times[0]);
        let n = times[1..]
            .iter()
            .filter(|&&t| g.offer(&tiers, 25.0, t, 1.0 / 3.0, false))
            .count();
        assert_eq!(n, times.len() - 1);
        // 4 Hz into a 1 Hz tier: every 4th, 1 Hz.
        let times = stamps(0.0, 4.0, 30.0);
        let mut g = Gate::first(&tiers, 80.0, times[0]);
        let n = times[1..]
            .iter()
            .filter(|&&t| g.offer(&tiers, 80.0, t, 0.25, false))
            .count();
        assert_eq!(n, 29);
    }

    #[test]
    fn tiers_read_and_write_as_text() {
        let t = Tiers::parse("full@10, 2hz@40 ,1hz", 2.0).unwrap();
        assert_eq!(t, fly_in());
        assert_eq!(t.to_string(), "full@10,2hz@40,1hz");
        assert_eq!(Tiers::recommended(), fly_in());
        assert_eq!(Tiers::parse("off", 2.0).unwrap().to_string(), "off");
        assert!(Tiers::parse("", 2.0).unwrap().is_off());
        assert_eq!(
            Tiers::parse("5hz@20nm,0.75hz", 1.0).unwrap().to_string(),
            "5hz@20,0.75hz"
        );
        for bad in [
            "2hz,1hz",
            "fast@10",
            "2@10",
            "0hz",
            "0.5hz",
            "full@x",
            "1hz@5,full@3",
        ] {
            assert!(Tiers::parse(bad, 2.0).is_err(), "{bad}");
        }
        assert_eq!(
            Tiers::parse("full@1,full@2,full@3,full@4,1hz", 2.0),
            Err(TiersError::TooMany(5))
        );
        assert_eq!(t.full_rate_within_nm(), Some(10.0));
        assert_eq!(Tiers::off().full_rate_within_nm(), Some(f64::INFINITY));
        assert_eq!(
            Tiers::parse("1hz", 0.0).unwrap().full_rate_within_nm(),
            None
        );
    }
}
