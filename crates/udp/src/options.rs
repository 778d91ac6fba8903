//! Socket options, set in one place so every server and load tool binds alike.

use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// How a UDP socket is bound.
#[derive(Debug, Clone, Copy)]
pub struct BindOptions {
    /// SO_REUSEPORT, so several worker sockets can share one port (the kernel spreads
    /// datagrams over them by source address).
    pub reuse_port: bool,
    /// Kernel receive buffer size in bytes (bursts arrive together); 0 keeps the
    /// system default.
    pub recv_buffer: usize,
    /// Kernel send buffer size in bytes; 0 keeps the system default.
    pub send_buffer: usize,
    /// IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE: never fragment and skip the kernel's
    /// per-datagram path-MTU bookkeeping (about 10% of a send on Linux). Every lobby
    /// datagram fits one packet.
    pub pmtu_probe: bool,
}

impl Default for BindOptions {
    fn default() -> Self {
        BindOptions {
            reuse_port: false,
            recv_buffer: 8 << 20,
            send_buffer: 8 << 20,
            pmtu_probe: true,
        }
    }
}

/// Binds a UDP socket with `options`. IPv6 sockets are always IPv6-only, so an IPv4
/// and an IPv6 socket can share a port number. The error names the address.
pub fn bind(addr: SocketAddr, options: BindOptions) -> io::Result<UdpSocket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    if options.reuse_port {
        sock.set_reuse_port(true)?;
    }
    if options.pmtu_probe {
        // Failure only loses the optimisation.
        let _ = set_pmtu_probe(&sock, addr.is_ipv6());
    }
    // The kernel caps these at net.core.*mem_max; a smaller buffer still works.
    if options.recv_buffer > 0 {
        let _ = sock.set_recv_buffer_size(options.recv_buffer);
    }
    if options.send_buffer > 0 {
        let _ = sock.set_send_buffer_size(options.send_buffer);
    }
    sock.bind(&addr.into()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot bind UDP {addr} (is another server using it?): {e}"),
        )
    })?;
    Ok(sock.into())
}

/// Binds a TCP listener the way every lobby listener is bound (telnet, HTTP, DNS over
/// TCP): IPv6 listeners are IPv6-only, as the UDP sockets are, so `0.0.0.0:P` and
/// `[::]:P` can both be bound; SO_REUSEADDR so a restart does not wait for old
/// connections in TIME_WAIT; non-blocking, ready for tokio. The error names the address.
pub fn bind_tcp(addr: SocketAddr, backlog: i32) -> io::Result<std::net::TcpListener> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    sock.set_reuse_address(true)?;
    sock.set_nonblocking(true)?;
    sock.bind(&addr.into()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot bind TCP {addr} (is another server using it?): {e}"),
        )
    })?;
    sock.listen(backlog)?;
    Ok(sock.into())
}

/// Sets IP_PMTUDISC_PROBE (IPv4) or IPV6_PMTUDISC_PROBE (IPv6) on `sock`.
pub fn set_pmtu_probe(sock: &impl AsRawFd, v6: bool) -> io::Result<()> {
    let (level, name, value) = if v6 {
        (
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_PROBE,
        )
    } else {
        (
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
        )
    };
    set_int(sock, level, name, value)
}

/// Turns on kernel receive timestamps (`SO_TIMESTAMPNS`, `CLOCK_REALTIME`), read back
/// with [`crate::RecvBatch::kernel_time`].
pub fn enable_timestamps(sock: &impl AsRawFd) -> io::Result<()> {
    set_int(sock, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

fn set_int(sock: &impl AsRawFd, level: i32, name: i32, value: libc::c_int) -> io::Result<()> {
    // SAFETY: a plain int option on a socket the caller owns; `value` lives for the call.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Puts the calling thread under SCHED_FIFO at `priority` (1-99), so a worker woken
/// by a datagram runs at once instead of waiting for a CPU slice behind other
/// processes: on a busy 2-core machine this took the relay's p99 from 3-4 ms to about
/// 0.6 ms. The kernel's RT throttling keeps 5% of each second for everything else even
/// under a flood. Needs CAP_SYS_NICE (or root).
pub fn set_realtime_priority(priority: u8) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority.clamp(1, 99)),
    };
    // SAFETY: pid 0 = the calling thread; param is a valid struct for the call.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r != 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_and_ipv6_share_a_port_and_reuse_port_shares_it_again() {
        let v4 = bind("127.0.0.1:0".parse().unwrap(), BindOptions::default()).unwrap();
        let port = v4.local_addr().unwrap().port();
        let v6 = bind(
            SocketAddr::new("::".parse().unwrap(), port),
            BindOptions::default(),
        )
        .unwrap();
        assert_eq!(v6.local_addr().unwrap().port(), port);
        let shared = BindOptions {
            reuse_port: true,
            ..BindOptions::default()
        };
        let a = bind("127.0.0.1:0".parse().unwrap(), shared).unwrap();
        let b = bind(a.local_addr().unwrap(), shared).unwrap();
        assert_eq!(a.local_addr().unwrap(), b.local_addr().unwrap());
        let err = bind(v4.local_addr().unwrap(), BindOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("cannot bind UDP 127.0.0.1:"),
            "{err}"
        );
    }
}
