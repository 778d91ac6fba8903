//! What the sim tests share: the server's output, copied out of its outbox.

use sim::Outbox;
use std::net::SocketAddr;

/// One datagram the server queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub to: SocketAddr,
    pub payload: Vec<u8>,
}

/// Runs `f` on a fresh outbox and returns what it queued.
pub(crate) fn sent(f: impl FnOnce(&mut Outbox)) -> Vec<Sent> {
    let mut o = Outbox::new();
    f(&mut o);
    o.drain_owned()
        .into_iter()
        .map(|(to, payload)| Sent { to, payload })
        .collect()
}
