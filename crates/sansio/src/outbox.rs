//! Datagrams an engine wants sent, kept in reusable buffers so the hot path does not
//! allocate once warmed up. One payload may go to many destinations (a relay's
//! fan-out), and a payload may be a shared, pre-encoded buffer (a master's cached
//! server-list page) that is referenced instead of copied.

use std::net::SocketAddr;
use std::sync::Arc;

/// One datagram to send: where, and the bytes (borrowed from the [`Outbox`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<'a> {
    /// Destination.
    pub to: SocketAddr,
    /// The datagram.
    pub payload: &'a [u8],
}

/// One payload: bytes encoded here (the buffer is kept across clears), or a shared,
/// pre-encoded buffer referenced instead.
#[derive(Debug, Default)]
struct Slot {
    owned: Vec<u8>,
    shared: Option<Arc<[u8]>>,
}

impl Slot {
    fn bytes(&self) -> &[u8] {
        match &self.shared {
            Some(s) => s,
            None => &self.owned,
        }
    }
}

/// The datagrams produced by one or more engine calls, until the driver sends them
/// and calls [`Outbox::clear`].
#[derive(Debug, Default)]
pub struct Outbox {
    payloads: Vec<Slot>,
    used: usize,
    sends: Vec<(usize, SocketAddr)>,
}

/// Handle to a payload in an [`Outbox`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadId(usize);

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every payload and send, keeping the buffers.
    pub fn clear(&mut self) {
        // Shared pages are released now, not when the slot is next reused.
        for s in &mut self.payloads[..self.used] {
            s.shared = None;
        }
        self.used = 0;
        self.sends.clear();
    }

    /// The next free slot, made ready for new bytes.
    fn next_slot(&mut self) -> &mut Slot {
        if self.used == self.payloads.len() {
            self.payloads.push(Slot {
                owned: Vec::with_capacity(1500),
                shared: None,
            });
        }
        self.used += 1;
        &mut self.payloads[self.used - 1]
    }

    /// A payload the engine encodes in place (`write` gets an empty buffer); returns
    /// its handle.
    pub fn encode(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> PayloadId {
        let slot = self.next_slot();
        slot.owned.clear();
        write(&mut slot.owned);
        PayloadId(self.used - 1)
    }

    /// A payload copied from `bytes`.
    pub fn payload(&mut self, bytes: &[u8]) -> PayloadId {
        self.encode(|b| b.extend_from_slice(bytes))
    }

    /// A shared, pre-encoded payload (referenced, not copied).
    pub fn shared(&mut self, bytes: Arc<[u8]>) -> PayloadId {
        self.next_slot().shared = Some(bytes);
        PayloadId(self.used - 1)
    }

    /// Mutable access to an owned payload, to rewrite header words in place. A shared
    /// payload is copied first.
    pub fn payload_mut(&mut self, id: PayloadId) -> &mut [u8] {
        let slot = &mut self.payloads[id.0];
        if let Some(s) = slot.shared.take() {
            slot.owned.clear();
            slot.owned.extend_from_slice(&s);
        }
        &mut slot.owned
    }

    /// Queues payload `id` for `to`.
    pub fn send(&mut self, id: PayloadId, to: SocketAddr) {
        self.sends.push((id.0, to));
    }

    /// Queues `bytes` (copied) for `to`: one payload, one destination.
    pub fn push(&mut self, to: SocketAddr, bytes: &[u8]) {
        let id = self.payload(bytes);
        self.send(id, to);
    }

    /// Encodes one payload with `write` and queues it for `to`.
    pub fn push_with(&mut self, to: SocketAddr, write: impl FnOnce(&mut Vec<u8>)) {
        let id = self.encode(write);
        self.send(id, to);
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty()
    }

    /// Number of queued datagrams.
    pub fn len(&self) -> usize {
        self.sends.len()
    }

    /// The queued datagrams, in the order they were queued.
    pub fn iter(&self) -> impl Iterator<Item = Transmit<'_>> + '_ {
        self.sends.iter().map(move |&(p, to)| Transmit {
            to,
            payload: self.payloads[p].bytes(),
        })
    }

    /// The queued datagram `i`, if any.
    pub fn get(&self, i: usize) -> Option<Transmit<'_>> {
        self.sends.get(i).map(|&(p, to)| Transmit {
            to,
            payload: self.payloads[p].bytes(),
        })
    }

    /// Destinations only, in order.
    pub fn destinations(&self) -> Vec<SocketAddr> {
        self.sends.iter().map(|&(_, to)| to).collect()
    }

    /// The queued datagrams as owned `(to, bytes)` pairs (for tests and the in-memory
    /// network), then clears the outbox.
    pub fn drain_owned(&mut self) -> Vec<(SocketAddr, Vec<u8>)> {
        let v = self.iter().map(|t| (t.to, t.payload.to_vec())).collect();
        self.clear();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_fan_out_and_buffers_are_reused() {
        let a: SocketAddr = "192.0.2.1:1".parse().unwrap();
        let b: SocketAddr = "192.0.2.2:2".parse().unwrap();
        let mut o = Outbox::new();
        let p = o.payload(b"hello");
        o.send(p, a);
        o.send(p, b);
        o.push_with(a, |w| w.extend_from_slice(b"x"));
        let page = o.shared(Arc::from(&b"page"[..]));
        o.send(page, b);
        let got: Vec<_> = o.iter().map(|t| (t.to, t.payload)).collect();
        assert_eq!(
            got,
            vec![
                (a, &b"hello"[..]),
                (b, &b"hello"[..]),
                (a, &b"x"[..]),
                (b, &b"page"[..])
            ]
        );
        o.payload_mut(p)[0] = b'j';
        assert_eq!(o.get(1).unwrap().payload, b"jello");
        o.clear();
        assert!(o.is_empty());
        // A slot that held a shared page is owned again.
        let id = o.payload(b"1");
        let _ = o.payload(b"2");
        let _ = o.payload(b"3");
        let s = o.payload(b"4");
        o.send(s, a);
        o.send(id, a);
        assert_eq!(
            o.drain_owned(),
            vec![(a, b"4".to_vec()), (a, b"1".to_vec())]
        );
    }
}
