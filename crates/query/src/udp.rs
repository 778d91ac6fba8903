//! The client sockets queries and scans go out on.

use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::net::UdpSocket;

/// A UDP socket on an ephemeral port of one family, with a 4 MiB receive buffer
/// where the system allows: a scan's replies arrive in bursts of thousands. The
/// IPv6 socket is IPv6-only, so IPv4 replies always arrive on the IPv4 socket.
pub(crate) fn bind_any(v6: bool) -> io::Result<UdpSocket> {
    let (domain, addr) = if v6 {
        (Domain::IPV6, SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)))
    } else {
        (Domain::IPV4, SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)))
    };
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if v6 {
        s.set_only_v6(true)?;
    }
    let _ = s.set_recv_buffer_size(4 << 20);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    UdpSocket::from_std(s.into())
}
