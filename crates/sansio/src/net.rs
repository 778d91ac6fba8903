//! An in-memory network with virtual time, for tests: engines at addresses, datagrams
//! in flight with a fixed latency, timers run when their time comes. Nothing sleeps
//! and nothing touches a socket, so every run is deterministic and every loss case
//! reproducible (see [`Network::set_filter`]).
//!
//! Addresses without an engine are outside sockets (a pilot's FlightGear, a query
//! tool): tests send from them with [`Network::send`] and read what reached them with
//! [`Network::take_inbox`]. [`Network::record`] keeps every hop (engine to engine
//! too), so a test can count what crossed a link.

use crate::{Engine, Outbox};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// An engine the network can also hand back by its concrete type.
trait Node: Engine {
    fn as_any(&mut self) -> &mut dyn Any;
}

impl<E: Engine + Any> Node for E {
    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// A datagram that reached an outside address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    /// When it arrived.
    pub at: Instant,
    /// Who sent it.
    pub from: SocketAddr,
    /// The bytes.
    pub payload: Vec<u8>,
}

/// A datagram the network handed over, to an engine or an outside address (see
/// [`Network::record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// When it arrived.
    pub at: Instant,
    /// Who sent it.
    pub from: SocketAddr,
    /// Where it arrived.
    pub to: SocketAddr,
    /// The bytes.
    pub payload: Vec<u8>,
}

type Filter = Box<dyn FnMut(SocketAddr, SocketAddr, &[u8]) -> bool>;

/// Engines joined by a perfect (or filtered) network with a fixed one-way latency.
pub struct Network {
    start: Instant,
    now: Instant,
    latency: Duration,
    nodes: BTreeMap<SocketAddr, Box<dyn Node>>,
    /// (arrival, sequence) → (from, to, bytes); the sequence keeps arrival order stable.
    in_flight: BinaryHeap<Reverse<(Instant, u64)>>,
    packets: HashMap<u64, (SocketAddr, SocketAddr, Vec<u8>)>,
    seq: u64,
    inboxes: HashMap<SocketAddr, Vec<Delivered>>,
    filter: Option<Filter>,
    out: Outbox,
    delivered: u64,
    dropped: u64,
    /// Every hop since [`Network::record`] was turned on, when it is.
    hops: Option<Vec<Hop>>,
}

impl Network {
    /// An empty network whose clock starts at `start`; every datagram takes `latency`.
    pub fn new(start: Instant, latency: Duration) -> Network {
        Network {
            start,
            now: start,
            latency,
            nodes: BTreeMap::new(),
            in_flight: BinaryHeap::new(),
            packets: HashMap::new(),
            seq: 0,
            inboxes: HashMap::new(),
            filter: None,
            out: Outbox::new(),
            delivered: 0,
            dropped: 0,
            hops: None,
        }
    }

    /// The virtual clock.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Time since the network started.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Puts `engine` at `addr`; datagrams to `addr` are handed to it from now on.
    pub fn add<E: Engine + Any>(&mut self, addr: SocketAddr, engine: E) {
        self.nodes.insert(addr, Box::new(engine));
    }

    /// The engine at `addr`, by its type (panics if there is none of that type: a
    /// mistake in the test).
    pub fn engine<E: Engine + Any>(&mut self, addr: SocketAddr) -> &mut E {
        self.nodes
            .get_mut(&addr)
            .and_then(|n| n.as_any().downcast_mut::<E>())
            .unwrap_or_else(|| panic!("no engine of that type at {addr}"))
    }

    /// Drops every datagram for which `keep(from, to, bytes)` is false (loss, a cut
    /// link, a partition).
    pub fn set_filter(
        &mut self,
        keep: impl FnMut(SocketAddr, SocketAddr, &[u8]) -> bool + 'static,
    ) {
        self.filter = Some(Box::new(keep));
    }

    /// Removes the filter.
    pub fn clear_filter(&mut self) {
        self.filter = None;
    }

    /// Sends `bytes` from `from` (an outside socket or an engine's address) to `to`, now.
    pub fn send(&mut self, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        if let Some(f) = &mut self.filter {
            if !f(from, to, bytes) {
                self.dropped += 1;
                return;
            }
        }
        self.seq += 1;
        self.in_flight
            .push(Reverse((self.now + self.latency, self.seq)));
        self.packets.insert(self.seq, (from, to, bytes.to_vec()));
    }

    /// Takes what reached outside address `addr` so far.
    pub fn take_inbox(&mut self, addr: SocketAddr) -> Vec<Delivered> {
        self.inboxes.remove(&addr).unwrap_or_default()
    }

    /// Datagrams handed to an engine or an inbox, and datagrams the filter dropped.
    pub fn counts(&self) -> (u64, u64) {
        (self.delivered, self.dropped)
    }

    /// Starts (or stops, dropping what was kept) recording every delivered datagram.
    pub fn record(&mut self, on: bool) {
        self.hops = on.then(Vec::new);
    }

    /// Takes the hops recorded so far, oldest first (empty when not recording).
    pub fn take_hops(&mut self) -> Vec<Hop> {
        self.hops.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The earliest engine timer: (when, whose).
    fn next_timer(&self) -> Option<(Instant, SocketAddr)> {
        self.nodes
            .iter()
            .filter_map(|(a, n)| Some((n.poll_timeout()?.max(self.now), *a)))
            .min()
    }

    /// Runs the next event (a datagram arriving or a timer firing) if it is due by
    /// `until`; returns false when nothing is.
    fn step(&mut self, until: Instant) -> bool {
        let packet = self.in_flight.peek().map(|Reverse((t, s))| (*t, *s));
        let timer = self.next_timer();
        match (packet, timer) {
            (Some((t, seq)), timer) if t <= until && timer.is_none_or(|(tt, _)| t <= tt) => {
                self.in_flight.pop();
                self.now = self.now.max(t);
                let (from, to, bytes) = self.packets.remove(&seq).expect("queued packet");
                self.deliver(from, to, &bytes);
                true
            }
            (_, Some((t, addr))) if t <= until => {
                self.now = self.now.max(t);
                let now = self.now;
                let node = self.nodes.get_mut(&addr).expect("timer of a node");
                node.handle_timeout(now, &mut self.out);
                if node.poll_timeout().is_some_and(|next| next <= now) {
                    panic!(
                        "engine at {addr} still asks for {now:?} after handle_timeout ran at it"
                    );
                }
                self.flush(addr);
                true
            }
            _ => false,
        }
    }

    fn deliver(&mut self, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        self.delivered += 1;
        if let Some(hops) = &mut self.hops {
            hops.push(Hop {
                at: self.now,
                from,
                to,
                payload: bytes.to_vec(),
            });
        }
        match self.nodes.get_mut(&to) {
            Some(node) => {
                node.handle(bytes, from, self.now, &mut self.out);
                self.flush(to);
            }
            None => self.inboxes.entry(to).or_default().push(Delivered {
                at: self.now,
                from,
                payload: bytes.to_vec(),
            }),
        }
    }

    /// Puts what the engine at `from` queued on the wire.
    fn flush(&mut self, from: SocketAddr) {
        let sent = self.out.drain_owned();
        for (to, bytes) in sent {
            self.send(from, to, &bytes);
        }
    }

    /// Runs every event due up to `t`, then sets the clock to `t`.
    pub fn run_until(&mut self, t: Instant) {
        while self.step(t) {}
        self.now = self.now.max(t);
    }

    /// Runs the network for `d` of virtual time.
    pub fn run_for(&mut self, d: Duration) {
        self.run_until(self.now + d);
    }

    /// Runs events until `done(self)` holds (checked before the first event and after
    /// each one) and returns the virtual time it first held; `None`, with the clock at
    /// `deadline`, when it did not hold by then.
    pub fn run_until_met(
        &mut self,
        deadline: Instant,
        mut done: impl FnMut(&mut Network) -> bool,
    ) -> Option<Instant> {
        loop {
            if done(self) {
                return Some(self.now);
            }
            if !self.step(deadline) {
                self.now = self.now.max(deadline);
                return done(self).then_some(self.now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Echoes every datagram back, and says "tick" to a peer every second.
    struct Echo {
        peer: SocketAddr,
        next: Instant,
    }

    impl Engine for Echo {
        fn handle(&mut self, d: &[u8], from: SocketAddr, _now: Instant, out: &mut Outbox) {
            out.push(from, d);
        }
        fn poll_timeout(&self) -> Option<Instant> {
            Some(self.next)
        }
        fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
            if now >= self.next {
                out.push(self.peer, b"tick");
                self.next = now + Duration::from_secs(1);
            }
        }
    }

    #[test]
    fn datagrams_and_timers_run_in_virtual_time() {
        let t0 = Instant::now();
        let e: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let c: SocketAddr = "10.0.0.2:2".parse().unwrap();
        let mut net = Network::new(t0, Duration::from_millis(10));
        net.add(
            e,
            Echo {
                peer: c,
                next: t0 + Duration::from_secs(1),
            },
        );
        net.send(c, e, b"hi");
        net.run_for(Duration::from_millis(500));
        let got = net.take_inbox(c);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].payload, b"hi");
        assert_eq!(
            got[0].at,
            t0 + Duration::from_millis(20),
            "two hops of 10 ms"
        );
        net.run_for(Duration::from_millis(2600));
        let ticks: Vec<_> = net.take_inbox(c).iter().map(|d| d.at - t0).collect();
        assert_eq!(
            ticks,
            [1010, 2010, 3010].map(Duration::from_millis).to_vec()
        );
        net.set_filter(move |_, to, _| to != c);
        net.run_for(Duration::from_secs(1));
        assert!(net.take_inbox(c).is_empty());
        assert_eq!(net.counts().1, 1);
        let _: &mut Echo = net.engine(e);
    }

    #[test]
    fn hops_are_recorded_engine_to_engine_and_conditions_stop_the_run() {
        let t0 = Instant::now();
        let e1: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let e2: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let mut net = Network::new(t0, Duration::from_millis(10));
        let ticks_at = |n: u64| t0 + Duration::from_secs(n);
        net.add(
            e1,
            Echo {
                peer: e2,
                next: ticks_at(1),
            },
        );
        net.add(
            e2,
            Echo {
                peer: e1,
                next: ticks_at(100),
            },
        );
        assert!(
            net.take_hops().is_empty(),
            "nothing kept before record(true)"
        );
        net.record(true);
        // e1 ticks at 1 s, e2 echoes it back, e1 echoes that... a ping-pong every 10 ms.
        let hops = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = hops.clone();
        let met = net.run_until_met(ticks_at(2), move |n| {
            seen.set(seen.get() + n.take_hops().len());
            seen.get() >= 3
        });
        assert_eq!(met, Some(t0 + Duration::from_millis(1030)), "third hop");
        assert_eq!(hops.get(), 3);
        net.run_for(Duration::from_millis(20));
        let h = net.take_hops();
        assert_eq!(h.len(), 2);
        assert_eq!(
            (h[0].from, h[0].to, h[0].payload.as_slice()),
            (e2, e1, &b"tick"[..])
        );
        assert_eq!(h[1].at, t0 + Duration::from_millis(1050));
        // A condition that never holds: the clock ends at the deadline.
        net.record(false);
        assert_eq!(net.run_until_met(ticks_at(3), |_| false), None);
        assert_eq!(net.now(), ticks_at(3));
        assert!(net.take_hops().is_empty(), "recording stopped");
    }
}
