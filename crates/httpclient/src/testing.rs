//! A canned HTTP server for tests (feature `testing`): it answers each connection with
//! the bytes a closure makes of the request's path, exactly as given (any status,
//! framing or lie), records each request head and closes the connection.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server, on 127.0.0.1 and a port of its own; it runs until the runtime ends.
#[derive(Debug)]
pub struct Canned {
    /// Where it listens.
    pub addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Canned {
    /// Starts a server answering `answer(path)` to every request.
    pub async fn start(answer: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static) -> Canned {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = l.local_addr().expect("its address");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (answer, h) = (Arc::new(answer), heads.clone());
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let (answer, h) = (answer.clone(), h.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut b = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut b).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&b[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("").to_string();
                    h.lock().expect("heads").push(head);
                    let _ = s.write_all(&answer(&path)).await;
                    let _ = s.shutdown().await;
                });
            }
        });
        Canned { addr, heads }
    }

    /// `http://ADDR`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The requests' heads so far (with whatever of a body came in the same reads).
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads").clone()
    }
}

/// An answer of `status` with `headers` (each ending in CRLF), a `Content-Length`
/// and `body`.
pub fn answer(status: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A 200 answer with `body` sent chunked, `size` bytes a chunk (no length known
/// before the end).
pub fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for part in body.chunks(size.max(1)) {
        r.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        r.extend_from_slice(part);
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}
