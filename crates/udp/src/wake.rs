//! A wake-up every waiting worker sees: an eventfd that, once raised, stays readable.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Raised once, seen by every thread that waits with it (see
/// [`crate::RecvBatch::recv_until`]); used to stop worker threads at once, without a
/// read timeout to poll a flag.
#[derive(Debug)]
pub struct Wake {
    fd: OwnedFd,
    /// Mirrors the eventfd, so [`Wake::is_raised`] is a load, not a system call (busy
    /// loops check it every iteration).
    raised: AtomicBool,
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
        })
    }

    /// Raises it: every current and future waiter returns at once. Nobody reads the
    /// counter, so it stays raised.
    pub fn raise(&self) {
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
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }
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
