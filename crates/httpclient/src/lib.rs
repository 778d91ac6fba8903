//! lobby's one small HTTP/1 client, for its command lines (`lobby admin`, `lobby query
//! static`): one request over one fresh connection, `http://` only (no TLS here).
//!
//! - The host's name is looked up and every address tried in turn, each connect
//!   within [`Client::connect_timeout`] (a silent address does not eat the others'
//!   time); the first that connects is used.
//! - hyper's HTTP/1 client connection, driven beside the request (no task of its
//!   own), so dropping a [`Response`] ends it.
//! - The whole request, from the lookup to the body's last byte, within
//!   [`Client::timeout`]; the body read frame by frame and refused past
//!   [`Client::max_body`] bytes without being held.
//! - A 3xx's `Location` is resolved against the URL asked with [`Url::join`]
//!   ([`Response::redirect`]); whether to follow it is the caller's choice.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
pub use hyper::{header, Method, StatusCode};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;
pub use url::{self, Url};

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not a URL.
    #[error("not a URL: {0}")]
    BadUrl(#[from] url::ParseError),
    /// A scheme other than `http` (`https` included: no TLS here).
    #[error("the scheme {0}:// is not supported (only http://)")]
    Scheme(String),
    /// A URL without a host.
    #[error("no host in the URL")]
    NoHost,
    /// The host's name did not resolve.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The name.
        host: String,
        /// What the resolver said.
        source: std::io::Error,
    },
    /// No address of the host took the connection.
    #[error("cannot connect to {host}: {why}")]
    Connect {
        /// The host as in the URL.
        host: String,
        /// The last address's failure.
        why: String,
    },
    /// The whole request took longer than [`Client::timeout`].
    #[error("no complete answer within {:.1} s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The exchange failed (a malformed answer, a connection closed early...).
    #[error("HTTP exchange failed: {0}")]
    Http(#[from] hyper::Error),
    /// A request that cannot be written (a header value that is not one).
    #[error("bad request: {0}")]
    Request(#[from] hyper::http::Error),
    /// A body larger than [`Client::max_body`].
    #[error("the body is larger than {0} bytes")]
    TooBig(usize),
    /// A `Location` that is not text or not a URL.
    #[error("redirected to {location:?}: {why}")]
    BadLocation {
        /// The header's value.
        location: String,
        /// What is wrong with it.
        why: String,
    },
}

/// An `http://` URL with a host (the only kind the client speaks), written out:
/// the scheme, `//` and the host (the lenient spellings a browser accepts, such as
/// `http:host` or `http:///host`, are refused).
pub fn http_url(url: &str) -> Result<Url, Error> {
    let u = Url::parse(url)?;
    check(&u)?;
    let rest = url.split_once(':').map_or("", |(_, r)| r);
    match rest.strip_prefix("//") {
        Some(host) if !host.starts_with(['/', '\\']) && !host.is_empty() => Ok(u),
        _ => Err(Error::NoHost),
    }
}

fn check(u: &Url) -> Result<(), Error> {
    if u.scheme() != "http" {
        return Err(Error::Scheme(u.scheme().to_string()));
    }
    match u.host_str() {
        Some(h) if !h.is_empty() => Ok(()),
        _ => Err(Error::NoHost),
    }
}

/// One request: a method, a URL, headers and a body (empty by default: then no
/// `Content-Length` is sent).
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Bytes,
}

impl Request {
    /// A request of `method` for `url`.
    pub fn new(method: Method, url: Url) -> Request {
        Request {
            method,
            url,
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    /// A GET of `url`.
    pub fn get(url: Url) -> Request {
        Request::new(Method::GET, url)
    }

    /// With the header `name: value` (a value that is not one fails the send).
    pub fn header(mut self, name: HeaderName, value: &str) -> Result<Request, Error> {
        let v = HeaderValue::from_str(value).map_err(hyper::http::Error::from)?;
        self.headers.insert(name, v);
        Ok(self)
    }

    /// With `body`, sent with its `Content-Length`.
    pub fn body(mut self, body: impl Into<Bytes>) -> Request {
        self.body = body.into();
        self
    }

    /// The URL asked.
    pub fn url(&self) -> &Url {
        &self.url
    }
}

/// The connection, driven while the request or its body is awaited.
type Conn = Pin<Box<dyn Future<Output = Result<(), hyper::Error>> + Send>>;

/// Awaits `fut` while driving `conn`; once the connection has ended, `fut` alone
/// (it then holds its answer or its error).
async fn beside<T>(conn: &mut Option<Conn>, fut: impl Future<Output = T>) -> T {
    let mut fut = std::pin::pin!(fut);
    if let Some(c) = conn.as_mut() {
        tokio::select! {
            biased;
            r = &mut fut => return r,
            _ = c => *conn = None,
        }
    }
    fut.await
}

/// An answer's head; its body is read with [`Response::bytes`].
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    url: Url,
    body: Incoming,
    conn: Option<Conn>,
    deadline: Instant,
    timeout: Duration,
    max_body: usize,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}

impl Response {
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The URL asked.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Where a 3xx with a `Location` leads (resolved against the URL asked: absolute,
    /// scheme-relative, absolute path or relative path); `None` for any other answer.
    /// The URL may have another scheme than `http`: [`Client::send`] refuses it.
    pub fn redirect(&self) -> Option<Result<Url, Error>> {
        if !self.status.is_redirection() {
            return None;
        }
        let loc = self.headers.get(header::LOCATION)?;
        let bad = |why: String| Error::BadLocation {
            location: String::from_utf8_lossy(loc.as_bytes()).into_owned(),
            why,
        };
        Some(match loc.to_str() {
            Ok(l) => self.url.join(l).map_err(|e| bad(e.to_string())),
            Err(_) => Err(bad("not text".into())),
        })
    }

    /// The body, at most [`Client::max_body`] bytes, within what is left of the
    /// request's time.
    pub async fn bytes(mut self) -> Result<Bytes, Error> {
        let (deadline, timeout) = (self.deadline, self.timeout);
        let read = async {
            let mut out = Vec::new();
            loop {
                let frame = beside(&mut self.conn, self.body.frame()).await;
                let Some(frame) = frame else { break };
                if let Ok(data) = frame?.into_data() {
                    if out.len() + data.len() > self.max_body {
                        return Err(Error::TooBig(self.max_body));
                    }
                    out.extend_from_slice(&data);
                }
            }
            Ok(Bytes::from(out))
        };
        match tokio::time::timeout_at(deadline, read).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout(timeout)),
        }
    }
}

/// The client's settings; each [`Client::send`] is one connection.
#[derive(Debug, Clone)]
pub struct Client {
    connect_timeout: Duration,
    timeout: Duration,
    max_body: usize,
    user_agent: Option<HeaderValue>,
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

impl Client {
    /// Connects within 5 s an address, answers within 10 s in all, bodies of 4 MiB at
    /// most, no `User-Agent`.
    pub fn new() -> Client {
        Client {
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(10),
            max_body: 4 << 20,
            user_agent: None,
        }
    }

    /// How long one address's connect may take.
    pub fn connect_timeout(mut self, t: Duration) -> Client {
        self.connect_timeout = t;
        self
    }

    /// How long a whole request may take, its body read included.
    pub fn timeout(mut self, t: Duration) -> Client {
        self.timeout = t;
        self
    }

    /// The largest body read.
    pub fn max_body(mut self, bytes: usize) -> Client {
        self.max_body = bytes;
        self
    }

    /// The `User-Agent` every request says.
    pub fn user_agent(mut self, ua: &'static str) -> Client {
        self.user_agent = Some(HeaderValue::from_static(ua));
        self
    }

    /// Sends `req` over a fresh connection; the answer's head (its body is read with
    /// [`Response::bytes`], within the same time).
    pub async fn send(&self, req: Request) -> Result<Response, Error> {
        let deadline = Instant::now() + self.timeout;
        match tokio::time::timeout_at(deadline, self.exchange(req, deadline)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout(self.timeout)),
        }
    }

    /// A GET of `url`.
    pub async fn get(&self, url: Url) -> Result<Response, Error> {
        self.send(Request::get(url)).await
    }

    async fn exchange(&self, req: Request, deadline: Instant) -> Result<Response, Error> {
        check(&req.url)?;
        let tcp = self.connect(&req.url).await?;
        let (mut send, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        let mut conn: Option<Conn> = Some(Box::pin(conn));
        let url = req.url;
        let host = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_string(),
        };
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let mut builder = hyper::Request::builder()
            .method(req.method)
            .uri(target)
            .header(header::HOST, host);
        if let Some(ua) = &self.user_agent {
            builder = builder.header(header::USER_AGENT, ua);
        }
        let mut request = builder.body(Full::new(req.body))?;
        request.headers_mut().extend(req.headers);
        let resp = beside(&mut conn, send.send_request(request)).await?;
        let (head, body) = resp.into_parts();
        Ok(Response {
            status: head.status,
            headers: head.headers,
            url,
            body,
            conn,
            deadline,
            timeout: self.timeout,
            max_body: self.max_body,
        })
    }

    /// A connection to the URL's host: every address in turn, each within
    /// [`Client::connect_timeout`].
    async fn connect(&self, url: &Url) -> Result<TcpStream, Error> {
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(url::Host::Ipv4(a)) => vec![(a, port).into()],
            Some(url::Host::Ipv6(a)) => vec![(a, port).into()],
            Some(url::Host::Domain(d)) => tokio::net::lookup_host((d, port))
                .await
                .map_err(|source| Error::Resolve {
                    host: d.to_string(),
                    source,
                })?
                .collect(),
            None => return Err(Error::NoHost),
        };
        let mut why = String::from("no address");
        for a in addrs {
            match tokio::time::timeout(self.connect_timeout, TcpStream::connect(a)).await {
                Ok(Ok(s)) => return Ok(s),
                Ok(Err(e)) => why = format!("{a}: {e}"),
                Err(_) => {
                    why = format!(
                        "{a}: no connection within {:.1} s",
                        self.connect_timeout.as_secs_f64()
                    )
                }
            }
        }
        Err(Error::Connect {
            host: url.host_str().unwrap_or_default().to_string(),
            why,
        })
    }
}

#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
