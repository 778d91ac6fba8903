//! Batched UDP I/O with Linux `recvmmsg(2)` / `sendmmsg(2)`.
//!
//! Every pointer handed to the kernel points into heap buffers owned by the batch
//! and sized at construction; the vectors are never resized afterwards, so the
//! pointers stay valid for the batch's lifetime. Counts returned by the kernel are
//! clamped to the batch size before any buffer is indexed.

use socket2::SockAddr;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// Receive buffer per datagram: above FlightGear's 1200-byte limit, so a
/// truncated datagram is recognisable by its length.
pub const RECV_BUF: usize = 2048;

/// Control-message space per datagram, in u64 words (for one `SCM_TIMESTAMPNS`).
const CTRL_WORDS: usize = 8;

/// A set of receive buffers for one `recvmmsg` call.
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
}

impl RecvBatch {
    /// `n` buffers (at least 1); `with_addr` asks for each datagram's source address,
    /// `with_ctrl` makes room for control messages (see [`RecvBatch::kernel_time`]).
    pub fn new(n: usize, with_addr: bool, with_ctrl: bool) -> RecvBatch {
        let n = n.max(1);
        let mut b = RecvBatch {
            bufs: vec![0u8; n * RECV_BUF],
            // SAFETY: iovec, sockaddr_storage and mmsghdr are plain C structs for
            // which all-zero bytes (null pointers, zero lengths) is a valid value.
            iovs: (0..n).map(|_| unsafe { zeroed() }).collect(),
            names: (0..n).map(|_| unsafe { zeroed() }).collect(),
            ctrl: vec![0u64; if with_ctrl { n * CTRL_WORDS } else { 0 }],
            hdrs: (0..n).map(|_| unsafe { zeroed() }).collect(),
            with_addr,
            with_ctrl,
            filled: 0,
        };
        let base = b.bufs.as_mut_ptr();
        for i in 0..n {
            // SAFETY: i * RECV_BUF < n * RECV_BUF = bufs.len().
            b.iovs[i].iov_base = unsafe { base.add(i * RECV_BUF) }.cast();
            b.iovs[i].iov_len = RECV_BUF;
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

    /// Receives up to the batch size; `flags` e.g. `MSG_DONTWAIT` or `MSG_WAITFORONE`.
    /// Returns how many datagrams arrived.
    pub fn recv(&mut self, fd: RawFd, flags: i32) -> io::Result<usize> {
        self.filled = 0;
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
        // SAFETY: hdrs holds hdrs.len() initialised headers whose iovecs and names
        // point into live buffers of the advertised sizes (see `new`).
        let r = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                self.hdrs.len() as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.filled = (r as usize).min(self.hdrs.len());
        Ok(self.filled)
    }

    /// Datagram `i` of the last receive (empty if out of range).
    pub fn datagram(&self, i: usize) -> &[u8] {
        if i >= self.filled {
            return &[];
        }
        let len = (self.hdrs[i].msg_len as usize).min(RECV_BUF);
        &self.bufs[i * RECV_BUF..i * RECV_BUF + len]
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
        // SAFETY: the header's control pointer and length describe our own buffer
        // (the kernel only shrinks msg_controllen); the CMSG_* helpers stay inside
        // it, and each cmsg is checked to hold a whole timespec before it is read.
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

    /// Source address of datagram `i` (needs `with_addr`).
    pub fn addr(&self, i: usize) -> Option<SocketAddr> {
        if i >= self.filled || !self.with_addr {
            return None;
        }
        let len = self.hdrs[i].msg_hdr.msg_namelen;
        if len as usize > size_of::<libc::sockaddr_storage>() {
            return None;
        }
        // SAFETY: the kernel wrote a socket address of `len` bytes into names[i].
        let a = unsafe { SockAddr::new(self.names[i], len) };
        a.as_socket()
    }
}

/// `sendmmsg` headers for a list of destinations that all get the same payload.
pub struct SendList {
    iov: Box<libc::iovec>,
    names: Vec<libc::sockaddr_storage>,
    lens: Vec<libc::socklen_t>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SendList {
    /// Headers for `dests`, in order.
    pub fn new(dests: &[SocketAddr]) -> SendList {
        let mut s = SendList {
            // SAFETY: all-zero is a valid iovec (null, 0).
            iov: Box::new(unsafe { zeroed() }),
            names: dests
                .iter()
                .map(|&a| SockAddr::from(a).as_storage())
                .collect(),
            lens: dests.iter().map(|&a| SockAddr::from(a).len()).collect(),
            // SAFETY: all-zero is a valid mmsghdr.
            hdrs: (0..dests.len()).map(|_| unsafe { zeroed() }).collect(),
        };
        let iov: *mut libc::iovec = &mut *s.iov;
        for i in 0..dests.len() {
            let name: *mut libc::sockaddr_storage = &mut s.names[i];
            let h = &mut s.hdrs[i].msg_hdr;
            h.msg_name = name.cast();
            h.msg_namelen = s.lens[i];
            h.msg_iov = iov;
            h.msg_iovlen = 1;
        }
        s
    }

    /// Number of destinations.
    pub fn len(&self) -> usize {
        self.hdrs.len()
    }

    /// Sends `payload` to destinations `range` (clamped to the list), at most
    /// `batch` per system call. Destinations the kernel refuses are skipped and
    /// counted; if `sendmmsg` itself is unavailable, falls back to `sendto`.
    /// Returns (sent, failed).
    pub fn send(
        &mut self,
        fd: RawFd,
        payload: &[u8],
        range: std::ops::Range<usize>,
        batch: usize,
    ) -> (u64, u64) {
        let end = range.end.min(self.hdrs.len());
        let mut i = range.start.min(end);
        let batch = batch.max(1);
        self.iov.iov_base = payload.as_ptr() as *mut libc::c_void;
        self.iov.iov_len = payload.len();
        let (mut sent, mut failed) = (0u64, 0u64);
        while i < end {
            let n = (end - i).min(batch);
            // SAFETY: hdrs[i..i+n] are initialised; each points at its own sockaddr in
            // `names` and at `iov`, which points at `payload` (alive for this call).
            let r =
                unsafe { libc::sendmmsg(fd, self.hdrs.as_mut_ptr().add(i), n as libc::c_uint, 0) };
            if r > 0 {
                let r = (r as usize).min(n);
                sent += r as u64;
                i += r;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
                    // No sendmmsg: one sendto per destination.
                    for k in i..end {
                        match send_to(fd, payload, &self.names[k], self.lens[k]) {
                            Ok(()) => sent += 1,
                            Err(_) => failed += 1,
                        }
                    }
                    return (sent, failed);
                }
                _ => {
                    // The first message of this chunk failed (buffer full, unreachable...): skip it.
                    failed += 1;
                    i += 1;
                }
            }
        }
        (sent, failed)
    }
}

/// Turns on kernel receive timestamps (`SO_TIMESTAMPNS`) on a socket.
pub fn enable_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a valid c_int for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `CLOCK_REALTIME` in nanoseconds (the clock `SO_TIMESTAMPNS` uses).
pub fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts_ns(ts)
}

/// A timespec in nanoseconds.
// time_t and c_long are i64 on 64-bit Linux but not everywhere.
#[allow(clippy::unnecessary_cast)]
pub fn ts_ns(ts: libc::timespec) -> i64 {
    (ts.tv_sec as i64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as i64)
}

/// One `sendto` to a raw socket address.
fn send_to(
    fd: RawFd,
    payload: &[u8],
    name: &libc::sockaddr_storage,
    len: libc::socklen_t,
) -> io::Result<()> {
    // SAFETY: payload and name are valid for the given lengths during the call.
    let r = unsafe {
        libc::sendto(
            fd,
            payload.as_ptr().cast(),
            payload.len(),
            0,
            (name as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn send_list_and_recv_batch_round_trip() -> io::Result<()> {
        let rx1 = UdpSocket::bind("127.0.0.1:0")?;
        let rx2 = UdpSocket::bind("127.0.0.1:0")?;
        let tx = UdpSocket::bind("127.0.0.1:0")?;
        let mut list = SendList::new(&[rx1.local_addr()?, rx2.local_addr()?]);
        assert_eq!(list.send(tx.as_raw_fd(), b"hello", 0..2, 64), (2, 0));
        assert_eq!(list.send(tx.as_raw_fd(), b"again", 1..9, 1), (1, 0));
        rx1.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
        let mut b = RecvBatch::new(8, true, false);
        let n = b.recv(rx1.as_raw_fd(), libc::MSG_WAITFORONE)?;
        assert_eq!(n, 1);
        assert_eq!(b.datagram(0), b"hello");
        assert_eq!(b.addr(0), Some(tx.local_addr()?));
        assert!(b.datagram(5).is_empty());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut b = RecvBatch::new(8, false, true);
        assert_eq!(b.recv(rx2.as_raw_fd(), libc::MSG_DONTWAIT)?, 2);
        assert_eq!(
            (b.datagram(0), b.datagram(1)),
            (&b"hello"[..], &b"again"[..])
        );
        assert_eq!(b.addr(0), None);
        // Timestamps were off when these arrived.
        assert!(b.kernel_time(0).is_none());
        enable_timestamps(rx2.as_raw_fd())?;
        let before = realtime_ns();
        list.send(tx.as_raw_fd(), b"stamped", 1..2, 1);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(b.recv(rx2.as_raw_fd(), libc::MSG_DONTWAIT)?, 1);
        let t = ts_ns(b.kernel_time(0).expect("a kernel timestamp"));
        assert!(t >= before && t <= realtime_ns(), "{before} <= {t}");
        assert_eq!(b.datagram(0), b"stamped");
        Ok(())
    }
}
