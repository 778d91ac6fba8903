//! A wake-up every waiting worker sees: raised once, it stays raised.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Raised once, seen by every thread that waits with it; used to stop worker threads
/// at once, without a read timeout to poll a flag. A thread blocked in
/// [`crate::RecvBatch::recv_until`] on a socket given to [`Wake::watch`] is woken by
/// shutting that socket down for reading; a busy loop checks [`Wake::is_raised`] (an
/// atomic load).
#[derive(Debug, Default)]
pub struct Wake {
    raised: AtomicBool,
    /// Sockets shut down for reading when raised (held, so their descriptors cannot be
    /// closed and reused by another socket before that).
    watched: Mutex<Vec<Arc<UdpSocket>>>,
}

impl Wake {
    /// A new, lowered wake-up.
    pub fn new() -> Wake {
        Wake::default()
    }

    /// Wakes threads blocked in a receive on `sock` when raised (at once if it already
    /// was). Linux wakes every reader of a UDP socket that is shut down for reading,
    /// connected or not (the call itself reports ENOTCONN for an unconnected socket);
    /// their receive returns no datagram.
    pub fn watch(&self, sock: Arc<UdpSocket>) {
        let mut w = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_raised() {
            shut_read(&sock);
        }
        w.push(sock);
    }

    /// Raises it: every current and future waiter returns at once.
    pub fn raise(&self) {
        let w = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        self.raised.store(true, Ordering::Release);
        for s in w.iter() {
            shut_read(s);
        }
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }
}

fn shut_read(sock: &UdpSocket) {
    // SAFETY: a socket we hold; the result (ENOTCONN for an unconnected socket, which
    // still wakes its readers) is deliberately ignored.
    unsafe { libc::shutdown(sock.as_raw_fd(), libc::SHUT_RD) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_once_stays_raised() {
        let w = Wake::new();
        assert!(!w.is_raised());
        w.raise();
        assert!(w.is_raised());
        assert!(w.is_raised());
    }
}
