//! Whether a probed server is up: `fall` consecutive failures mark it down, `rise`
//! consecutive successes mark it up again (the usual load-balancer hysteresis, so
//! one lost probe does not flap the DNS).

/// Published state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Not answered a probe yet: published as down (SRV port 0), so a relay that is
    /// not running is never advertised, not even for the first seconds (FlightGear
    /// keeps whatever list it got first). The first good probe brings it up.
    Unknown,
    /// Answering.
    Up,
    /// Not answering.
    Down,
}

/// The hysteresis state machine of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    state: State,
    fall: u32,
    rise: u32,
    failures: u32,
    successes: u32,
}

impl Health {
    /// `fall` failures to go down, `rise` successes to come back (each at least 1).
    pub fn new(fall: u32, rise: u32) -> Health {
        Health {
            state: State::Unknown,
            fall: fall.max(1),
            rise: rise.max(1),
            failures: 0,
            successes: 0,
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether it is published as active: only after a good probe.
    pub fn is_up(&self) -> bool {
        self.state == State::Up
    }

    /// Records one probe; returns true when the published state changed.
    pub fn record(&mut self, ok: bool) -> bool {
        let before = self.is_up();
        if ok {
            self.failures = 0;
            self.successes += 1;
            if self.state == State::Unknown
                || (self.state == State::Down && self.successes >= self.rise)
            {
                self.state = State::Up;
            }
        } else {
            self.successes = 0;
            self.failures += 1;
            if self.failures >= self.fall {
                self.state = State::Down;
            }
        }
        before != self.is_up()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis() {
        let mut h = Health::new(3, 2);
        assert!(!h.is_up(), "unprobed is published as down");
        assert!(h.record(true), "the first good probe brings it up");
        assert_eq!(h.state(), State::Up);
        assert!(!h.record(false));
        assert!(!h.record(false));
        assert!(h.is_up(), "two failures are not enough");
        assert!(!h.record(true), "a success resets the count");
        assert!(!h.record(false) && !h.record(false));
        assert!(h.record(false), "third consecutive failure: down");
        assert_eq!(h.state(), State::Down);
        assert!(!h.record(true));
        assert!(!h.is_up(), "one success is not enough");
        assert!(!h.record(false));
        assert!(!h.record(true));
        assert!(h.record(true), "two consecutive successes: up");
    }

    #[test]
    fn unknown_goes_down_after_fall_failures() {
        let mut h = Health::new(2, 2);
        assert!(!h.record(false));
        assert!(!h.record(false), "down was already what is published");
        assert_eq!(h.state(), State::Down);
    }

    proptest::proptest! {
        /// Whatever the probe history, a relay is published as up only after a good
        /// probe, and never up after `fall` failures in a row.
        #[test]
        fn up_only_after_a_good_probe(fall in 1u32..5, rise in 1u32..5,
                                       probes in proptest::collection::vec(proptest::bool::ANY, 0..40)) {
            let mut h = Health::new(fall, rise);
            let mut seen_ok = false;
            let mut fails = 0;
            for ok in probes {
                let before = h.is_up();
                let changed = h.record(ok);
                proptest::prop_assert_eq!(changed, before != h.is_up());
                seen_ok |= ok;
                fails = if ok { 0 } else { fails + 1 };
                if h.is_up() {
                    proptest::prop_assert!(seen_ok);
                }
                if fails >= fall {
                    proptest::prop_assert!(!h.is_up());
                }
            }
        }
    }
}
