//! The client sockets queries and scans go out on.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::net::UdpSocket;
use udp::BindOptions;

/// A UDP socket on an ephemeral port of one family, with a 4 MiB receive buffer
/// where the system allows: a scan's replies arrive in bursts of thousands. The
/// IPv6 socket is IPv6-only, so IPv4 replies always arrive on the IPv4 socket.
pub fn bind_any(v6: bool) -> io::Result<UdpSocket> {
    let addr = if v6 {
        SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))
    };
    let options = BindOptions {
        reuse_port: false,
        recv_buffer: 4 << 20,
        send_buffer: 0,
        pmtu_probe: false,
    };
    let s = udp::bind(addr, options)?;
    s.set_nonblocking(true)?;
    UdpSocket::from_std(s)
}
