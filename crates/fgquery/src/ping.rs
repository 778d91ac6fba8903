//! The fgms PING a relay answers with a PONG (as FlightGear's own client sends it):
//! one round trip, with failures an operator can act on. The directory's health
//! probes and `lobby fg servers --probe` both use it.

use directory::probe::Ping;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Why a relay did not answer a PING.
#[derive(Debug)]
pub enum PingError {
    /// No local UDP socket.
    Socket(std::io::Error),
    /// The address cannot be reached (no route, ...).
    Connect(SocketAddr, std::io::Error),
    /// The PING could not be sent.
    Send(SocketAddr, std::io::Error),
    /// No PONG in time.
    Timeout(SocketAddr, Duration),
    /// ICMP port unreachable: nothing listens there.
    Refused(SocketAddr),
    /// Receiving failed otherwise.
    Receive(SocketAddr, std::io::Error),
}

impl PingError {
    /// Whether this host failed, not the relay: no socket, no descriptor, no buffer
    /// or memory (issue 20, item 3: a process out of descriptors published every
    /// relay as down).
    pub fn is_local(&self) -> bool {
        let local = |e: &std::io::Error| {
            matches!(
                e.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
            )
        };
        match self {
            PingError::Socket(_) => true,
            PingError::Connect(_, e) | PingError::Send(_, e) | PingError::Receive(_, e) => local(e),
            PingError::Timeout(..) | PingError::Refused(_) => false,
        }
    }
}

impl std::fmt::Display for PingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PingError::Socket(e) => write!(f, "cannot open a UDP socket: {e}"),
            PingError::Connect(a, e) => write!(f, "cannot reach {a}: {e}"),
            PingError::Send(a, e) => write!(f, "cannot send the ping to {a}: {e}"),
            PingError::Timeout(a, t) => {
                write!(f, "no pong from {a} within {} s", t.as_secs_f64())
            }
            PingError::Refused(a) => write!(f, "{a} refused (nothing listens on that UDP port)"),
            PingError::Receive(a, e) => write!(f, "receiving from {a}: {e}"),
        }
    }
}

impl std::error::Error for PingError {}

/// fgms's health check, used by the directory's prober and by `lobby fg servers
/// --probe`: sends `ping` to `addr` from a fresh connected socket and waits up to
/// `timeout` for its PONG (other datagrams are ignored). Returns the round trip.
pub async fn ping_relay(
    ping: &Ping,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<Duration, PingError> {
    let bind: SocketAddr = if addr.is_ipv4() {
        SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0))
    };
    let sock = tokio::net::UdpSocket::bind(bind)
        .await
        .map_err(PingError::Socket)?;
    sock.connect(addr)
        .await
        .map_err(|e| PingError::Connect(addr, e))?;
    let start = Instant::now();
    let deadline = tokio::time::Instant::from_std(start + timeout);
    sock.send(ping.datagram())
        .await
        .map_err(|e| PingError::Send(addr, e))?;
    let mut buf = vec![0u8; 2048];
    loop {
        let n = match tokio::time::timeout_at(deadline, sock.recv(&mut buf)).await {
            Err(_) => return Err(PingError::Timeout(addr, timeout)),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(PingError::Refused(addr))
            }
            Ok(Err(e)) => return Err(PingError::Receive(addr, e)),
            Ok(Ok(n)) => n,
        };
        if ping.is_pong(&buf[..n]) {
            return Ok(start.elapsed());
        }
        tracing::debug!(%addr, len = n, "ignoring a datagram that is not our pong");
    }
}
