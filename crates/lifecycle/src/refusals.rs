//! Connections refused at accept (past a connection cap), answered after a pause.
//!
//! A client refused at once comes straight back: in issue 30's fairness benchmark, 16
//! flooding connections over their network's share were refused about 12,500 times a
//! second, and the accepts, handshakes and the flood's own reconnects cost the other
//! users more than the requests did. Held for a second first (as a request past its
//! rate waits before its `429`), a client that waits for its answer (a browser, a
//! script, most flood tools) comes back at most once a second a connection.
//!
//! What is held is bounded: at most `cap` connections in the process, each for the
//! pause. Past that, and for a client that does not wait, a refusal is answered at
//! once, as before; so the hold can only slow a refused client, never refuse more.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;

/// Refusals waiting for their answer, at most `cap` at once.
pub struct Refusals {
    held: AtomicUsize,
    cap: usize,
    pause: Duration,
}

impl Refusals {
    /// At most `cap` refused connections held, each `pause` before its answer.
    pub const fn new(cap: usize, pause: Duration) -> Refusals {
        Refusals {
            held: AtomicUsize::new(0),
            cap,
            pause,
        }
    }

    /// Answers `tcp` with `reply` (one non-blocking write) and closes it: after the
    /// pause while fewer than `cap` wait, else at once. True when it was held.
    /// Needs a tokio runtime (the held connection waits in a task of its own).
    pub fn refuse(&'static self, tcp: TcpStream, reply: &'static [u8]) -> bool {
        if self.held.fetch_add(1, Ordering::AcqRel) >= self.cap {
            self.held.fetch_sub(1, Ordering::AcqRel);
            let _ = tcp.try_write(reply);
            return false;
        }
        tokio::spawn(async move {
            tokio::time::sleep(self.pause).await;
            answer(&tcp, reply);
            self.held.fetch_sub(1, Ordering::AcqRel);
        });
        true
    }

    /// Refused connections waiting for their answer now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

/// Reads what the client sent while it waited (its request, at most 64 KiB) before
/// writing `reply`: a socket closed with unread bytes is reset, and a reset can
/// reach the client before it reads the reply.
fn answer(tcp: &TcpStream, reply: &[u8]) {
    let mut buf = [0u8; 4096];
    for _ in 0..16 {
        match tcp.try_read(&mut buf) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
    let _ = tcp.try_write(reply);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    /// One connection to `l`, accepted; the client side is a blocking std socket.
    async fn pair(l: &tokio::net::TcpListener) -> (std::net::TcpStream, TcpStream) {
        let addr = l.local_addr().unwrap();
        let client = tokio::task::spawn_blocking(move || std::net::TcpStream::connect(addr));
        let (server, _) = l.accept().await.unwrap();
        (client.await.unwrap().unwrap(), server)
    }

    /// The client sends a request, then reads to the end: what it got, and how long.
    async fn ask(mut c: std::net::TcpStream) -> (String, Duration) {
        tokio::task::spawn_blocking(move || {
            let t = Instant::now();
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut got = Vec::new();
            c.read_to_end(&mut got)
                .expect("the reply, then a close, not a reset");
            (String::from_utf8(got).unwrap(), t.elapsed())
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn a_refusal_waits_its_pause_and_past_the_cap_comes_at_once() {
        const PAUSE: Duration = Duration::from_secs(2);
        static R: Refusals = Refusals::new(1, PAUSE);
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (c1, s1) = pair(&l).await;
        let (c2, s2) = pair(&l).await;
        let t0 = Instant::now();
        assert!(R.refuse(s1, b"503\n"), "the first is held");
        assert_eq!(R.held(), 1);
        assert!(!R.refuse(s2, b"503\n"), "past the cap: answered at once");
        assert_eq!(ask(c2).await.0, "503\n");
        assert!(t0.elapsed() < PAUSE, "the second was not held");
        // The held one's request is drained, so its reply is read whole, then a close.
        assert_eq!(ask(c1).await.0, "503\n");
        assert!(t0.elapsed() >= PAUSE, "the first waited its pause");
        assert_eq!(R.held(), 0);
        // The place is free again: the next one is held.
        let (c3, s3) = pair(&l).await;
        assert!(R.refuse(s3, b"503\n"));
        assert_eq!(ask(c3).await.0, "503\n");
    }
}
