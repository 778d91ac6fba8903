//! Batched receive with `recvmmsg(2)`: one system call per batch instead of one per
//! datagram, with each datagram's source address, truncation flag and (optionally) the
//! kernel's receive timestamp.
//!
//! Every pointer handed to the kernel points into heap buffers owned by the batch and
//! sized at construction; the vectors are never resized afterwards, so the pointers
//! stay valid for the batch's lifetime (moving the batch moves no heap memory). Counts
//! returned by the kernel are clamped to the batch size before any buffer is indexed.

use crate::wake::Wake;
use socket2::{SockAddr, SockAddrStorage};
use std::io;
use std::mem::{size_of, zeroed};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Receive buffer per datagram: above FlightGear's 1200-byte limit and the Xash
/// master's 1400-byte pages, so a truncated datagram is recognisable by its length.
pub const SLOT_SIZE: usize = 2048;

/// How late [`RecvBatch::recv_until`] may return for a deadline, so that it
/// changes the socket's receive timeout about a hundred times a second at most.
pub const DEADLINE_SLACK: Duration = Duration::from_millis(10);

/// Control-message space per datagram, in u64 words (for one `SCM_TIMESTAMPNS`).
const CTRL_WORDS: usize = 8;

/// What [`RecvBatch::recv_until`] returned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// This many datagrams arrived (at least one).
    Datagrams(usize),
    /// The deadline passed first.
    Deadline,
    /// The [`Wake`] was raised.
    Woken,
}

/// Reusable buffers for receiving up to `capacity` datagrams per call.
pub struct RecvBatch {
    bufs: Vec<u8>,
    iovs: Vec<libc::iovec>,
    names: Vec<libc::sockaddr_storage>,
    /// u64 words keep every control buffer aligned for `cmsghdr`.
    ctrl: Vec<u64>,
    hdrs: Vec<libc::mmsghdr>,
    with_addr: bool,
    with_ctrl: bool,
    filled: usize,
    /// The receive timeout last set with [`RecvBatch::recv_until`]: (socket,
    /// timeout); `None` timeout = wait forever.
    rcvtimeo: Option<(i32, Option<Duration>)>,
}

// SAFETY: the raw pointers inside point only into the batch's own heap buffers, which
// move with it; nothing is shared with another thread.
unsafe impl Send for RecvBatch {}

impl RecvBatch {
    /// Buffers for `capacity` datagrams (at least 1), with source addresses.
    pub fn new(capacity: usize) -> RecvBatch {
        RecvBatch::with_options(capacity, true, false)
    }

    /// `with_addr` asks for each datagram's source address, `with_ctrl` makes room for
    /// control messages (see [`RecvBatch::kernel_time`]).
    pub fn with_options(capacity: usize, with_addr: bool, with_ctrl: bool) -> RecvBatch {
        let n = capacity.max(1);
        let mut b = RecvBatch {
            bufs: vec![0u8; n * SLOT_SIZE],
            // SAFETY: iovec, sockaddr_storage and mmsghdr are plain C structs for which
            // all-zero bytes (null pointers, zero lengths) is a valid value.
            iovs: (0..n).map(|_| unsafe { zeroed() }).collect(),
            names: (0..n).map(|_| unsafe { zeroed() }).collect(),
            ctrl: vec![0u64; if with_ctrl { n * CTRL_WORDS } else { 0 }],
            hdrs: (0..n).map(|_| unsafe { zeroed() }).collect(),
            with_addr,
            with_ctrl,
            filled: 0,
            rcvtimeo: None,
        };
        let base = b.bufs.as_mut_ptr();
        for i in 0..n {
            // SAFETY: i * SLOT_SIZE < n * SLOT_SIZE = bufs.len().
            b.iovs[i].iov_base = unsafe { base.add(i * SLOT_SIZE) }.cast();
            b.iovs[i].iov_len = SLOT_SIZE;
            let iov: *mut libc::iovec = &mut b.iovs[i];
            let name: *mut libc::sockaddr_storage = &mut b.names[i];
            let h = &mut b.hdrs[i].msg_hdr;
            h.msg_iov = iov;
            h.msg_iovlen = 1;
            if with_addr {
                h.msg_name = name.cast();
            }
        }
        if with_ctrl {
            let base = b.ctrl.as_mut_ptr();
            for i in 0..n {
                // SAFETY: i * CTRL_WORDS < n * CTRL_WORDS = ctrl.len().
                b.hdrs[i].msg_hdr.msg_control = unsafe { base.add(i * CTRL_WORDS) }.cast();
            }
        }
        b
    }

    /// Receives up to the batch size. With `block`, waits (up to the socket's read
    /// timeout, if any) for at least one datagram and takes whatever else is queued;
    /// without, returns `WouldBlock` when nothing is queued. Returns how many arrived.
    pub fn recv(&mut self, sock: &impl AsRawFd, block: bool) -> io::Result<usize> {
        let flags = if block {
            libc::MSG_WAITFORONE
        } else {
            libc::MSG_DONTWAIT
        };
        self.filled = 0;
        // A message that carries no datagram (a socket shut down for reading, always
        // the first and only one of its call) leaves the name untouched: clear the
        // family so no stale address is read back. Every datagram gets its name written.
        if self.with_addr {
            self.names[0].ss_family = 0;
        }
        for h in &mut self.hdrs {
            h.msg_len = 0;
            h.msg_hdr.msg_flags = 0;
            h.msg_hdr.msg_namelen = if self.with_addr {
                size_of::<libc::sockaddr_storage>() as libc::socklen_t
            } else {
                0
            };
            h.msg_hdr.msg_controllen = if self.with_ctrl { CTRL_WORDS * 8 } else { 0 };
        }
        // SAFETY: hdrs holds hdrs.len() initialised headers whose iovecs, names and
        // control buffers point into live buffers of the advertised sizes (see `new`).
        let r = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                self.hdrs.len() as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSYS) {
                return self.recv_one(sock, flags);
            }
            return Err(e);
        }
        self.filled = (r as usize).min(self.hdrs.len());
        Ok(self.filled)
    }

    /// Waits for the earliest of: datagrams on `sock`, `deadline` (none = no deadline),
    /// and `wake`, blocked in the receive itself: one system call per batch whether the
    /// socket is busy or idle (the deadline is the socket's receive timeout, changed only
    /// when it would make the wait overshoot the deadline by more than
    /// [`DEADLINE_SLACK`] or end it far too early). `sock` must be given to
    /// [`Wake::watch`] first, or raising `wake` will not interrupt the wait.
    pub fn recv_until(
        &mut self,
        sock: &impl AsRawFd,
        deadline: Option<Instant>,
        wake: &Wake,
    ) -> io::Result<Ready> {
        loop {
            if wake.is_raised() {
                return Ok(Ready::Woken);
            }
            let now = Instant::now();
            let left = match deadline {
                Some(t) if t <= now => return Ok(Ready::Deadline),
                Some(t) => Some(t - now),
                None => None,
            };
            self.set_timeout(sock, left)?;
            match self.recv(sock, true) {
                // A socket shut down for reading (the wake) yields one empty message
                // without a source address.
                Ok(1) if self.datagram(0).is_empty() && self.addr(0).is_none() => {}
                Ok(n) if n > 0 => return Ok(Ready::Datagrams(n)),
                // Nothing: shut down (the wake) or a zero-length datagram; look again.
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sets SO_RCVTIMEO to `left` unless the current one is close enough.
    fn set_timeout(&mut self, sock: &impl AsRawFd, left: Option<Duration>) -> io::Result<()> {
        let fd = sock.as_raw_fd();
        let keep = match (self.rcvtimeo, left) {
            (Some((f, cur)), None) => f == fd && cur.is_none(),
            // A wait started now may last `cur` (the timeout restarts with every call):
            // keep it if that ends within the slack after the deadline and not long
            // before it.
            (Some((f, Some(cur))), Some(left)) => {
                f == fd && cur <= left + DEADLINE_SLACK && cur * 2 >= left
            }
            _ => false,
        };
        if keep {
            return Ok(());
        }
        // Round up to whole microseconds (0 would mean "forever").
        let tv = match left {
            None => libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            Some(d) => {
                let us = d.as_micros().max(1);
                libc::timeval {
                    tv_sec: (us / 1_000_000) as libc::time_t,
                    tv_usec: (us % 1_000_000) as libc::suseconds_t,
                }
            }
        };
        // SAFETY: a timeval that lives for the call, on a socket the caller owns.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.rcvtimeo = Some((fd, left));
        Ok(())
    }

    fn recv_one(&mut self, sock: &impl AsRawFd, flags: i32) -> io::Result<usize> {
        let flags = flags & libc::MSG_DONTWAIT;
        let h = &mut self.hdrs[0];
        // SAFETY: header 0 points at slot 0 and name 0, both live (see `new`).
        let r = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut h.msg_hdr, flags) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        h.msg_len = r as libc::c_uint;
        self.filled = 1;
        Ok(1)
    }

    /// Number of datagrams of the last receive.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Whether the last receive got nothing.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Datagram `i` of the last receive (empty if out of range).
    pub fn datagram(&self, i: usize) -> &[u8] {
        if i >= self.filled {
            return &[];
        }
        let len = (self.hdrs[i].msg_len as usize).min(SLOT_SIZE);
        &self.bufs[i * SLOT_SIZE..i * SLOT_SIZE + len]
    }

    /// Whether datagram `i` was cut to the buffer size.
    pub fn truncated(&self, i: usize) -> bool {
        i < self.filled && self.hdrs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0
    }

    /// The kernel's receive time of datagram `i` (`SO_TIMESTAMPNS`, `CLOCK_REALTIME`),
    /// if the socket has timestamps on and the batch has control space.
    pub fn kernel_time(&self, i: usize) -> Option<libc::timespec> {
        if i >= self.filled || !self.with_ctrl {
            return None;
        }
        let h = &self.hdrs[i].msg_hdr;
        if h.msg_controllen > CTRL_WORDS * 8 || h.msg_flags & libc::MSG_CTRUNC != 0 {
            return None;
        }
        // SAFETY: the header's control pointer and length describe our own buffer (the
        // kernel only shrinks msg_controllen); the CMSG_* helpers stay inside it, and
        // each cmsg is checked to hold a whole timespec before it is read.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                let need = libc::CMSG_LEN(size_of::<libc::timespec>() as u32) as usize;
                if (*c).cmsg_level == libc::SOL_SOCKET
                    && (*c).cmsg_type == libc::SCM_TIMESTAMPNS
                    && (*c).cmsg_len as usize >= need
                {
                    return Some(std::ptr::read_unaligned(
                        libc::CMSG_DATA(c).cast::<libc::timespec>(),
                    ));
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }

    /// Source address of datagram `i` (needs addresses on).
    pub fn addr(&self, i: usize) -> Option<SocketAddr> {
        if i >= self.filled || !self.with_addr {
            return None;
        }
        let len = self.hdrs[i].msg_hdr.msg_namelen;
        if len as usize > size_of::<libc::sockaddr_storage>() {
            return None;
        }
        let mut storage = SockAddrStorage::zeroed();
        // SAFETY: sockaddr_storage is one of this platform's sockaddr types (the one
        // SockAddrStorage wraps), and the kernel wrote a socket address of `len` bytes
        // into names[i].
        let a = unsafe {
            *storage.view_as::<libc::sockaddr_storage>() = self.names[i];
            SockAddr::new(storage, len)
        };
        a.as_socket()
    }

    /// The datagrams of the last receive with their source addresses (those without a
    /// readable address are skipped).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        (0..self.filled).filter_map(move |i| Some((self.datagram(i), self.addr(i)?)))
    }
}
