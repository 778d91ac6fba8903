//! Datagrams the engine wants sent, kept in reusable buffers so the hot path
//! does not allocate once warmed up.

use std::net::SocketAddr;

/// One input datagram yields at most a few distinct payloads (to clients, to relays,
/// a pong), each sent to many destinations.
#[derive(Debug, Default)]
pub struct Outbox {
    payloads: Vec<Vec<u8>>,
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
        self.used = 0;
        self.sends.clear();
    }

    /// Adds a payload copied from `bytes` and returns its handle.
    pub fn payload(&mut self, bytes: &[u8]) -> PayloadId {
        if self.used == self.payloads.len() {
            self.payloads.push(Vec::with_capacity(fgmp::MAX_DATAGRAM));
        }
        let buf = &mut self.payloads[self.used];
        buf.clear();
        buf.extend_from_slice(bytes);
        self.used += 1;
        PayloadId(self.used - 1)
    }

    /// Mutable access to a payload, to rewrite header words in place.
    pub fn payload_mut(&mut self, id: PayloadId) -> &mut [u8] {
        &mut self.payloads[id.0]
    }

    /// Queues `payload` for `to`.
    pub fn send(&mut self, payload: PayloadId, to: SocketAddr) {
        self.sends.push((payload.0, to));
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty()
    }

    /// Number of queued datagrams.
    pub fn len(&self) -> usize {
        self.sends.len()
    }

    /// The queued datagrams: (bytes, destination).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        self.sends
            .iter()
            .map(move |&(p, to)| (self.payloads[p].as_slice(), to))
    }

    /// Destinations only (for tests).
    pub fn destinations(&self) -> Vec<SocketAddr> {
        self.sends.iter().map(|&(_, to)| to).collect()
    }
}
