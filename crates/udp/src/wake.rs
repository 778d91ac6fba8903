//! A wake-up every waiting worker sees: an eventfd that, once raised, stays readable.

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Raised once, seen by every thread that waits with it; used to stop worker threads
/// at once, without a read timeout to poll a flag. Threads waiting in `poll(2)`
/// ([`crate::RecvBatch::recv_until`]) see its eventfd; threads blocked in a receive on
/// a socket given to [`Wake::watch`] ([`crate::RecvBatch::recv_blocking_until`]) are
/// woken by shutting that socket down for reading.
#[derive(Debug)]
pub struct Wake {
    fd: OwnedFd,
    /// Mirrors the eventfd, so [`Wake::is_raised`] is a load, not a system call (busy
    /// loops check it every iteration).
    raised: AtomicBool,
    /// Sockets shut down for reading when raised (held, so their descriptors cannot be
    /// closed and reused by another socket before that).
    watched: Mutex<Vec<Arc<UdpSocket>>>,
}

impl Wake {
    /// A new, lowered wake-up.
    pub fn new() -> io::Result<Wake> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        Ok(Wake {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            raised: AtomicBool::new(false),
            watched: Mutex::new(Vec::new()),
        })
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

    /// Raises it: every current and future waiter returns at once. Nobody reads the
    /// counter, so it stays raised.
    pub fn raise(&self) {
        let w = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        self.raised.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
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

impl AsRawFd for Wake {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_once_stays_raised() {
        let w = Wake::new().unwrap();
        assert!(!w.is_raised());
        w.raise();
        assert!(w.is_raised());
        assert!(w.is_raised());
    }
}
