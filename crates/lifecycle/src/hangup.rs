//! Noticing that a client closed a TCP connection while the server only writes to
//! it (issue 29, item 6). hyper reads nothing while it writes a response
//! (`half_close`), so a closed event stream was noticed only when a write failed, the
//! second keep-alive after the close (about 30 s), and its stream slot and connection
//! place stayed taken until then.

use std::io;
use std::time::Duration;
use tokio::net::TcpStream;

/// A second descriptor of a connection's socket, watched for the client's close. It
/// reads nothing: the bytes a client sends are the HTTP server's. One more file
/// descriptor per connection while it lives.
#[derive(Debug)]
pub struct Hangup(Option<TcpStream>);

impl Hangup {
    /// Watches `tcp` through a duplicate of its descriptor (none when it cannot be
    /// duplicated: [`Hangup::closed_while`] then never fires).
    pub fn watch(tcp: &TcpStream) -> Hangup {
        use std::os::fd::AsFd;
        let dup = tcp.as_fd().try_clone_to_owned().ok().and_then(|fd| {
            let s = std::net::TcpStream::from(fd);
            s.set_nonblocking(true).ok()?;
            TcpStream::from_std(s).ok()
        });
        Hangup(dup)
    }

    /// Ready once the client has closed its side (or reset the connection) and
    /// `on()` holds (the connection carries a stream); pending for ever otherwise.
    pub async fn closed_while(&self, on: impl Fn() -> bool) {
        let Some(s) = &self.0 else {
            return std::future::pending().await;
        };
        loop {
            match s.ready(tokio::io::Interest::READABLE).await {
                Ok(r) if r.is_read_closed() => break,
                Ok(_) => {
                    // Bytes of a request (the server reads them): wait for the next event.
                    let _ = s.try_io(tokio::io::Interest::READABLE, || {
                        Err::<(), _>(io::ErrorKind::WouldBlock.into())
                    });
                }
                Err(_) => return std::future::pending().await,
            }
        }
        // Closed for good (tokio keeps that state): a connection not streaming is
        // the server's to end; one that starts a stream still has to end now.
        while !on() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
