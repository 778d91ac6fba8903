//! Batched UDP receive and send (Linux `recvmmsg`/`sendmmsg`), so a busy relay pays
//! one system call per batch instead of one per datagram. Falls back to
//! `recv_from`/`send_to` where the batched calls are unavailable.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

/// Largest datagram kept; anything longer is truncated (and then fails MsgLen checks).
pub const SLOT_SIZE: usize = 2048;

/// Reusable buffers for receiving up to `capacity` datagrams per call.
pub struct RecvBatch {
    bufs: Vec<[u8; SLOT_SIZE]>,
    addrs: Vec<libc::sockaddr_storage>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    lens: Vec<usize>,
    from: Vec<Option<SocketAddr>>,
    count: usize,
}

// The raw pointers inside point only into the batch's own vectors.
unsafe impl Send for RecvBatch {}

impl RecvBatch {
    /// Buffers for `capacity` datagrams.
    pub fn new(capacity: usize) -> RecvBatch {
        let capacity = capacity.max(1);
        RecvBatch {
            bufs: vec![[0u8; SLOT_SIZE]; capacity],
            addrs: vec![unsafe { zeroed() }; capacity],
            iovs: vec![unsafe { zeroed() }; capacity],
            hdrs: vec![unsafe { zeroed() }; capacity],
            lens: vec![0; capacity],
            from: vec![None; capacity],
            count: 0,
        }
    }

    /// Blocks (up to the socket's read timeout) for at least one datagram and takes
    /// whatever else is already queued. Returns how many arrived.
    pub fn recv(&mut self, sock: &UdpSocket) -> io::Result<usize> {
        let n = self.bufs.len();
        for i in 0..n {
            self.iovs[i] = libc::iovec {
                iov_base: self.bufs[i].as_mut_ptr().cast(),
                iov_len: SLOT_SIZE,
            };
            let mut h: libc::msghdr = unsafe { zeroed() };
            h.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            self.hdrs[i] = libc::mmsghdr {
                msg_hdr: h,
                msg_len: 0,
            };
        }
        // SAFETY: every header points into buffers owned by self that outlive the call.
        let got = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSYS) {
                return self.recv_one(sock);
            }
            return Err(e);
        }
        let got = got as usize;
        for i in 0..got {
            self.lens[i] = (self.hdrs[i].msg_len as usize).min(SLOT_SIZE);
            self.from[i] = sockaddr_to(&self.addrs[i]);
        }
        self.count = got;
        Ok(got)
    }

    fn recv_one(&mut self, sock: &UdpSocket) -> io::Result<usize> {
        let (n, from) = sock.recv_from(&mut self.bufs[0])?;
        self.lens[0] = n.min(SLOT_SIZE);
        self.from[0] = Some(from);
        self.count = 1;
        Ok(1)
    }

    /// The datagrams of the last `recv`, with their source addresses.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        (0..self.count).filter_map(move |i| Some((&self.bufs[i][..self.lens[i]], self.from[i]?)))
    }
}

/// Reusable buffers for sending a batch of datagrams with one call.
#[derive(Default)]
pub struct SendBatch {
    addrs: Vec<libc::sockaddr_storage>,
    addr_lens: Vec<libc::socklen_t>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

unsafe impl Send for SendBatch {}

/// At most this many datagrams per `sendmmsg` call (the kernel's UIO_MAXIOV).
const MAX_PER_CALL: usize = 1024;

impl SendBatch {
    /// Empty buffers.
    pub fn new() -> SendBatch {
        SendBatch::default()
    }

    /// Sends every `(bytes, to)` on `sock`; returns how many the kernel accepted.
    /// Datagrams it refuses (unreachable peer, full buffer) are skipped, not retried.
    pub fn send<'a>(
        &mut self,
        sock: &UdpSocket,
        items: impl Iterator<Item = (&'a [u8], SocketAddr)>,
    ) -> usize {
        self.addrs.clear();
        self.addr_lens.clear();
        self.iovs.clear();
        for (bytes, to) in items {
            let (st, len) = sockaddr_from(to);
            self.addrs.push(st);
            self.addr_lens.push(len);
            self.iovs.push(libc::iovec {
                iov_base: bytes.as_ptr() as *mut libc::c_void,
                iov_len: bytes.len(),
            });
        }
        let total = self.iovs.len();
        self.hdrs.clear();
        for i in 0..total {
            let mut h: libc::msghdr = unsafe { zeroed() };
            h.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = self.addr_lens[i];
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            self.hdrs.push(libc::mmsghdr {
                msg_hdr: h,
                msg_len: 0,
            });
        }
        let mut done = 0;
        let mut sent = 0;
        while done < total {
            let chunk = (total - done).min(MAX_PER_CALL);
            // SAFETY: the headers point at addresses and iovecs owned by self and at
            // payload slices borrowed for the duration of this call.
            let r = unsafe {
                libc::sendmmsg(
                    sock.as_raw_fd(),
                    self.hdrs.as_mut_ptr().add(done),
                    chunk as libc::c_uint,
                    0,
                )
            };
            if r <= 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The first message of the chunk failed (e.g. ECONNREFUSED from an
                // earlier ICMP, or EPERM): skip it and carry on with the rest.
                tracing::trace!(error = %e, "sendmmsg refused a datagram");
                done += 1;
                continue;
            }
            done += r as usize;
            sent += r as usize;
        }
        // Release borrowed pointers.
        self.iovs.clear();
        sent
    }
}

fn sockaddr_from(a: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    let mut st: libc::sockaddr_storage = unsafe { zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin) };
            (st, size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin6) };
            (st, size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

fn sockaddr_to(st: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(st.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin: &libc::sockaddr_in = unsafe { &*(st as *const libc::sockaddr_storage).cast() };
            let ip = std::net::Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6: &libc::sockaddr_in6 =
                unsafe { &*(st as *const libc::sockaddr_storage).cast() };
            let ip = std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn batches_round_trip_over_loopback() {
        for (a, b) in [("127.0.0.1:0", "127.0.0.1:0"), ("[::1]:0", "[::1]:0")] {
            let rx = UdpSocket::bind(a).unwrap();
            let tx = UdpSocket::bind(b).unwrap();
            rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let to = rx.local_addr().unwrap();
            let payloads: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 100 + i as usize]).collect();
            let mut sb = SendBatch::new();
            let n = sb.send(&tx, payloads.iter().map(|p| (p.as_slice(), to)));
            assert_eq!(n, 10);
            let mut rb = RecvBatch::new(16);
            let mut got = Vec::new();
            while got.len() < 10 {
                rb.recv(&rx).unwrap();
                for (d, from) in rb.iter() {
                    assert_eq!(from, tx.local_addr().unwrap());
                    got.push(d.to_vec());
                }
            }
            assert_eq!(got, payloads);
        }
    }
}
