//! Batched send with `sendmmsg(2)`. Both shapes lobby needs go through one loop,
//! [`send_headers`]: [`SendBatch`] for many datagrams with their own payloads and
//! destinations (an engine's output), [`Destinations`] for one payload to a prepared
//! list of destinations (the reflector's fan-out).

use socket2::{SockAddr, SockAddrStorage};
use std::io;
use std::mem::zeroed;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

/// At most this many datagrams per `sendmmsg` call (the kernel's UIO_MAXIOV).
const MAX_PER_CALL: usize = 1024;

/// Datagrams sent and refused by one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Accepted by the kernel.
    pub sent: u64,
    /// Refused (unreachable peer, full buffer, ...): skipped, not retried.
    pub failed: u64,
}

impl std::ops::AddAssign for Sent {
    fn add_assign(&mut self, o: Sent) {
        self.sent += o.sent;
        self.failed += o.failed;
    }
}

/// Sends every prepared header, at most `per_call` per system call. A datagram the
/// kernel refuses is skipped and counted; without `sendmmsg` (ENOSYS), one `sendmsg`
/// per datagram.
fn send_headers(fd: i32, hdrs: &mut [libc::mmsghdr], per_call: usize) -> Sent {
    let per_call = per_call.clamp(1, MAX_PER_CALL);
    let mut out = Sent::default();
    let mut i = 0;
    while i < hdrs.len() {
        let n = (hdrs.len() - i).min(per_call);
        // SAFETY: hdrs[i..i+n] are initialised headers whose names and iovecs point at
        // storage the caller keeps alive for this call.
        let r = unsafe { libc::sendmmsg(fd, hdrs.as_mut_ptr().add(i), n as libc::c_uint, 0) };
        if r > 0 {
            let r = (r as usize).min(n);
            out.sent += r as u64;
            i += r;
            continue;
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
                for h in &hdrs[i..] {
                    // SAFETY: as above, one header at a time.
                    let r = unsafe { libc::sendmsg(fd, &h.msg_hdr, 0) };
                    if r < 0 {
                        out.failed += 1;
                    } else {
                        out.sent += 1;
                    }
                }
                return out;
            }
            _ => {
                // The first message of this chunk failed (ECONNREFUSED from an earlier
                // ICMP, EPERM, a full buffer): skip it and carry on with the rest.
                tracing::trace!(error = %err, "sendmmsg refused a datagram");
                out.failed += 1;
                i += 1;
            }
        }
    }
    out
}

/// Reusable buffers for sending datagrams that each have their own payload and
/// destination, in as few system calls as the kernel allows.
#[derive(Default)]
pub struct SendBatch {
    names: Vec<SockAddrStorage>,
    lens: Vec<libc::socklen_t>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the pointers it holds between calls are cleared before `send` returns.
unsafe impl Send for SendBatch {}

impl SendBatch {
    /// Empty buffers.
    pub fn new() -> SendBatch {
        SendBatch::default()
    }

    /// Sends every `(bytes, to)` on `sock`; returns what the kernel accepted and refused.
    pub fn send<'a>(
        &mut self,
        sock: &impl AsRawFd,
        items: impl Iterator<Item = (&'a [u8], SocketAddr)>,
    ) -> Sent {
        self.names.clear();
        self.lens.clear();
        self.iovs.clear();
        for (bytes, to) in items {
            let a = SockAddr::from(to);
            self.lens.push(a.len());
            self.names.push(a.as_storage());
            self.iovs.push(libc::iovec {
                iov_base: bytes.as_ptr() as *mut libc::c_void,
                iov_len: bytes.len(),
            });
        }
        self.hdrs.clear();
        for i in 0..self.iovs.len() {
            // SAFETY: all-zero is a valid mmsghdr.
            let mut h: libc::mmsghdr = unsafe { zeroed() };
            h.msg_hdr.msg_name = (&mut self.names[i] as *mut SockAddrStorage).cast();
            h.msg_hdr.msg_namelen = self.lens[i];
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        let sent = send_headers(sock.as_raw_fd(), &mut self.hdrs, MAX_PER_CALL);
        // Release the borrowed payload pointers.
        self.iovs.clear();
        self.hdrs.clear();
        sent
    }
}

/// A prepared list of destinations that all get the same payload: the addresses are
/// converted once, and each send only points the shared iovec at the payload.
pub struct Destinations {
    iov: Box<libc::iovec>,
    names: Vec<SockAddrStorage>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the pointers point into the struct's own heap allocations.
unsafe impl Send for Destinations {}

impl Destinations {
    /// Headers for `dests`, in order.
    pub fn new(dests: &[SocketAddr]) -> Destinations {
        let mut s = Destinations {
            // SAFETY: all-zero is a valid iovec (null, 0).
            iov: Box::new(unsafe { zeroed() }),
            names: Vec::with_capacity(dests.len()),
            // SAFETY: all-zero is a valid mmsghdr.
            hdrs: (0..dests.len()).map(|_| unsafe { zeroed() }).collect(),
        };
        let mut lens = Vec::with_capacity(dests.len());
        for &d in dests {
            let a = SockAddr::from(d);
            lens.push(a.len());
            s.names.push(a.as_storage());
        }
        let iov: *mut libc::iovec = &mut *s.iov;
        for (i, len) in lens.into_iter().enumerate() {
            let name: *mut SockAddrStorage = &mut s.names[i];
            let h = &mut s.hdrs[i].msg_hdr;
            h.msg_name = name.cast();
            h.msg_namelen = len;
            h.msg_iov = iov;
            h.msg_iovlen = 1;
        }
        s
    }

    /// Number of destinations.
    pub fn len(&self) -> usize {
        self.hdrs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hdrs.is_empty()
    }

    /// Sends `payload` to destinations `range` (clamped to the list), at most
    /// `per_call` per system call.
    pub fn send(
        &mut self,
        sock: &impl AsRawFd,
        payload: &[u8],
        range: std::ops::Range<usize>,
        per_call: usize,
    ) -> Sent {
        let end = range.end.min(self.hdrs.len());
        let start = range.start.min(end);
        self.iov.iov_base = payload.as_ptr() as *mut libc::c_void;
        self.iov.iov_len = payload.len();
        let sent = send_headers(sock.as_raw_fd(), &mut self.hdrs[start..end], per_call);
        self.iov.iov_base = std::ptr::null_mut();
        sent
    }
}
