//! Fetching a static server list as the engine does (`masterstatic URL`): `GET
//! <URL>/v1/servers/<gamedir>` with the base URL's trailing slashes stripped, under
//! the rules of the engine's HTTP client (`engine/common/http/net_http_xash.c`,
//! recorded in the notes' appendix "the static HTTP server list"):
//! - a bare GET: no body, no cookies, no `Accept-Encoding` (nothing compressed);
//! - the status must be exactly 200; a 3xx with a `Location` is followed (at most
//!   [`MAX_REDIRECTS`] times);
//! - any `Content-Encoding` in the answer fails the request;
//! - the body needs a `Content-Length` or `Transfer-Encoding: chunked`, and holds
//!   at most [`MAX_BODY`] bytes (read bounded: a larger body fails without being
//!   held); an empty body "returned no data".
//!
//! Then the body is read with the engine's own rules ([`masterlist::parse_body`]) and
//! the host names it lists are resolved as the engine would (the first IPv4 address,
//! each lookup bounded). Only `http://` is spoken: the engine's default list is
//! `http://xash.su/server-list`, and this workspace carries no TLS stack.
//!
//! The HTTP side is the workspace's client ([`httpclient`]: hyper's HTTP/1, one
//! connection per request, `Location` resolved with `Url::join`), the whole fetch
//! (redirects included) under one timeout.
//!
//! [`HttpLists`] hands all this to `lobby query` (`query::static_list`), which
//! cannot depend on this crate: this crate depends on `query`.

use crate::masterlist::{self, Directive, ListedAddr, MAX_BODY};
use httpclient::header::{self, HeaderMap};
use httpclient::{url, Client, StatusCode, Url};
use query::static_list::{BoxFuture, StaticList, StaticListError, StaticLists};
use query::Kind;
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;
/// How long one TCP connect may take (within the whole fetch's timeout).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one listed host name's lookup may take.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// Listed host names looked up at once.
const RESOLVE_CONCURRENCY: usize = 16;
/// What the requests say they are.
const USER_AGENT: &str = concat!("lobby/", env!("CARGO_PKG_VERSION"));

/// A list fetched, read with the engine's rules and resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchedList {
    /// The URL asked (`<base>/v1/servers/<gamedir>`).
    pub url: String,
    /// Every usable line, in body order (duplicates kept, as the engine keeps
    /// them), host names replaced by the address they resolved to.
    pub entries: Vec<(SocketAddr, Directive)>,
    /// Listed host names (`name:port`) that did not resolve, each once.
    pub unresolved: Vec<String>,
    /// Lines (1-based) whose address the engine cannot parse.
    pub bad_lines: Vec<usize>,
}

/// Why a fetch failed: the URL asked, where it failed if a redirect led elsewhere,
/// and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// The URL asked.
    pub url: String,
    /// The URL a redirect led to, when the failure happened there.
    pub at: Option<String>,
    /// What went wrong.
    pub reason: Reason,
}

/// What went wrong in a fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The URL (or the game directory in it) is malformed.
    BadUrl(String),
    /// An `https://` URL: no TLS here.
    Tls,
    /// The server's name did not resolve.
    Resolve(String),
    /// No connection could be made.
    Connect(String),
    /// The whole fetch took longer than allowed.
    Timeout(Duration),
    /// The exchange failed (a malformed answer, a connection closed early...).
    Http(String),
    /// An answer other than 200 (or a 3xx without a usable `Location`).
    Status(u16),
    /// A `Content-Encoding` in the answer, which the engine refuses.
    ContentEncoding(String),
    /// Neither `Content-Length` nor chunked: the engine cannot tell the body's end.
    NoLength,
    /// A body larger than [`MAX_BODY`].
    TooBig,
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// An empty body.
    NoData,
}

impl FetchError {
    /// A malformed or unsupported URL as given (a usage error, not a failed fetch).
    pub fn is_usage(&self) -> bool {
        self.at.is_none() && matches!(self.reason, Reason::BadUrl(_) | Reason::Tls)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::BadUrl(why) => write!(f, "not a usable URL: {why}"),
            Reason::Tls => write!(
                f,
                "https:// is not supported (no TLS here; the engine's own default list is http://)"
            ),
            Reason::Resolve(why) => write!(f, "cannot resolve the host: {why}"),
            Reason::Connect(why) => write!(f, "cannot connect: {why}"),
            Reason::Timeout(t) => write!(f, "no complete answer within {:.1} s", t.as_secs_f64()),
            Reason::Http(why) => write!(f, "HTTP exchange failed: {why}"),
            Reason::Status(s) => write!(f, "answered status {s} (the engine needs 200)"),
            Reason::ContentEncoding(e) => write!(
                f,
                "answered with Content-Encoding: {e} (the engine fails any encoded body)"
            ),
            Reason::NoLength => write!(
                f,
                "answered without Content-Length or chunked encoding (the engine needs one)"
            ),
            Reason::TooBig => write!(
                f,
                "the body is larger than {} bytes (the engine's limit)",
                MAX_BODY
            ),
            Reason::TooManyRedirects => write!(f, "more than {MAX_REDIRECTS} redirects"),
            Reason::NoData => write!(f, "returned no data (an empty body)"),
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.reason)?;
        if let Some(at) = &self.at {
            write!(f, " (at {at}, where it was redirected)")?;
        }
        Ok(())
    }
}

impl std::error::Error for FetchError {}

/// The URL the engine asks for `gamedir`'s list under `base_url`: trailing slashes
/// stripped, then `/v1/servers/<gamedir>`.
pub fn list_url(base_url: &str, gamedir: &str) -> Result<String, FetchError> {
    let url = format!("{}/v1/servers/{gamedir}", base_url.trim_end_matches('/'));
    let bad = |why: &str| FetchError {
        url: url.clone(),
        at: None,
        reason: Reason::BadUrl(why.into()),
    };
    if gamedir.is_empty()
        || gamedir
            .bytes()
            .any(|b| b <= b' ' || b >= 0x7f || b"/\\?#%".contains(&b))
    {
        return Err(bad("the game directory must be one plain path segment"));
    }
    Ok(url)
}

/// Fetches and reads `gamedir`'s list under `base_url`, as the engine does, all
/// within `timeout` (then as many listed names resolved as `timeout` allows again).
pub async fn fetch_list(
    base_url: &str,
    gamedir: &str,
    timeout: Duration,
) -> Result<FetchedList, FetchError> {
    let url = list_url(base_url, gamedir)?;
    let body = fetch_body(&url, timeout).await?;
    let parsed = masterlist::parse_body(&body);
    drop(body);
    let mut names: Vec<(String, u16)> = Vec::new();
    for e in &parsed.entries {
        if let ListedAddr::Host(h, p) = &e.addr {
            if !names.iter().any(|(n, q)| n == h && q == p) {
                names.push((h.clone(), *p));
            }
        }
    }
    let resolved = resolve_names(&names, timeout).await;
    let mut out = FetchedList {
        url,
        bad_lines: parsed.bad_addresses,
        ..FetchedList::default()
    };
    for e in parsed.entries {
        match e.addr {
            ListedAddr::Ip(a) => out.entries.push((a, e.directive)),
            ListedAddr::Host(h, p) => match resolved.get(&(h.clone(), p)) {
                Some(a) => out.entries.push((*a, e.directive)),
                None => {
                    let name = format!("{h}:{p}");
                    if !out.unresolved.contains(&name) {
                        out.unresolved.push(name);
                    }
                }
            },
        }
    }
    Ok(out)
}

/// Resolves each name (each lookup within [`RESOLVE_TIMEOUT`], all within
/// `within`); the first IPv4 address wins, as the engine's resolver picks. Names
/// missing from the answer did not resolve.
async fn resolve_names(
    names: &[(String, u16)],
    within: Duration,
) -> HashMap<(String, u16), SocketAddr> {
    let mut out = HashMap::new();
    let deadline = Instant::now() + within;
    let mut pending = names.iter().cloned();
    let mut running = tokio::task::JoinSet::new();
    loop {
        while running.len() < RESOLVE_CONCURRENCY {
            let Some((name, port)) = pending.next() else {
                break;
            };
            running.spawn(async move {
                let lookup = tokio::net::lookup_host((name.as_str(), port));
                let all: Vec<SocketAddr> = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await
                {
                    Ok(Ok(it)) => it.collect(),
                    _ => Vec::new(),
                };
                let addr = all.iter().find(|a| a.is_ipv4()).or(all.first()).copied();
                ((name, port), addr)
            });
        }
        match tokio::time::timeout_at(deadline, running.join_next()).await {
            Ok(Some(Ok((name, Some(addr))))) => {
                out.insert(name, addr);
            }
            Ok(Some(_)) => {}
            // All done, or out of time (dropping the set aborts the rest).
            Ok(None) | Err(_) => break,
        }
    }
    out
}

/// The body at `url` as the engine's HTTP client gets it, within `timeout` in all.
pub async fn fetch_body(url: &str, timeout: Duration) -> Result<Vec<u8>, FetchError> {
    let fail = |at: Option<&Url>, reason: Reason| FetchError {
        url: url.to_string(),
        at: at.map(Url::to_string),
        reason,
    };
    let first = httpclient::http_url(url).map_err(|e| fail(None, usage(e)))?;
    let client = Client::new()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout)
        .max_body(MAX_BODY)
        .user_agent(USER_AGENT);
    let exchange = async {
        let mut current = first;
        let mut redirects = 0;
        loop {
            let at = (redirects > 0).then_some(&current);
            match get_once(&client, &current).await.map_err(|r| fail(at, r))? {
                Answer::Body(b) => return Ok(b),
                Answer::Redirect(to) => {
                    if redirects == MAX_REDIRECTS {
                        return Err(fail(at, Reason::TooManyRedirects));
                    }
                    redirects += 1;
                    current = to;
                    tracing::debug!(%url, to = %current, "redirected");
                }
            }
        }
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(r) => r,
        Err(_) => Err(fail(None, Reason::Timeout(timeout))),
    }
}

/// What a URL the caller gave is found wrong with (a usage error).
fn usage(e: httpclient::Error) -> Reason {
    match e {
        httpclient::Error::Scheme(s) if s == "https" => Reason::Tls,
        httpclient::Error::Scheme(s) => Reason::BadUrl(format!("the scheme {s}:// (only http://)")),
        httpclient::Error::BadUrl(url::ParseError::RelativeUrlWithoutBase) => {
            Reason::BadUrl("no http:// scheme".into())
        }
        other => Reason::BadUrl(other.to_string()),
    }
}

/// What one request's failure is, in the engine's terms.
fn reason(e: httpclient::Error) -> Reason {
    match e {
        httpclient::Error::Resolve { host, source } => Reason::Resolve(format!("{host}: {source}")),
        httpclient::Error::Connect { why, .. } => Reason::Connect(why),
        httpclient::Error::Timeout(t) => Reason::Timeout(t),
        httpclient::Error::TooBig(_) => Reason::TooBig,
        other => Reason::Http(other.to_string()),
    }
}

/// What one GET got: the body, or where to go instead.
enum Answer {
    Body(Vec<u8>),
    Redirect(Url),
}

/// One GET over a fresh connection, and the engine's checks of its answer.
async fn get_once(client: &Client, url: &Url) -> Result<Answer, Reason> {
    let resp = client.get(url.clone()).await.map_err(reason)?;
    if let Some(to) = resp.redirect() {
        // A bad Location is the server's fault, not a usage error.
        let to = to.map_err(reason)?;
        return match httpclient::http_url(to.as_str()) {
            Ok(to) => Ok(Answer::Redirect(to)),
            Err(httpclient::Error::Scheme(s)) if s == "https" => Err(Reason::Http(format!(
                "redirected to {to}: https:// is not supported (no TLS here)"
            ))),
            Err(_) => Err(Reason::Http(format!(
                "redirected to {to:?}: not an http:// URL"
            ))),
        };
    }
    if resp.status() != StatusCode::OK {
        return Err(Reason::Status(resp.status().as_u16()));
    }
    checked_length(resp.headers())?;
    let body = resp.bytes().await.map_err(reason)?;
    if body.is_empty() {
        return Err(Reason::NoData);
    }
    Ok(Answer::Body(body.into()))
}

/// The engine's checks of a 200's headers: no `Content-Encoding`, a
/// `Content-Length` (at most [`MAX_BODY`]) or chunked.
fn checked_length(h: &HeaderMap) -> Result<(), Reason> {
    if let Some(e) = h.get(header::CONTENT_ENCODING) {
        return Err(Reason::ContentEncoding(
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
        ));
    }
    let chunked = h.get_all(header::TRANSFER_ENCODING).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("chunked"))
        })
    });
    let length = match h.get(header::CONTENT_LENGTH) {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| Reason::Http("a malformed Content-Length".into()))?,
        ),
        None => None,
    };
    match length {
        Some(n) if n > MAX_BODY as u64 => Err(Reason::TooBig),
        Some(_) => Ok(()),
        None if chunked => Ok(()),
        None => Err(Reason::NoLength),
    }
}

/// `lobby query`'s static lists over [`fetch_list`]: `ip` lines are asked `info`
/// ([`Kind::Info`]), `gs` lines A2S_INFO alone ([`Kind::A2sInfo`], what a GoldSrc
/// server answers). The binary passes it to `query::cli::run`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpLists;

impl StaticLists for HttpLists {
    fn fetch<'a>(
        &'a self,
        base_url: &'a str,
        gamedir: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<StaticList, StaticListError>> {
        Box::pin(async move {
            match fetch_list(base_url, gamedir, timeout).await {
                Ok(l) => Ok(StaticList {
                    url: l.url,
                    servers: l
                        .entries
                        .into_iter()
                        .map(|(a, d)| (a, kind_of(d)))
                        .collect(),
                    unresolved: l.unresolved,
                    bad_lines: l.bad_lines,
                }),
                Err(e) if e.is_usage() => Err(StaticListError::Usage(e.to_string())),
                Err(e) => Err(StaticListError::Failed(e.to_string())),
            }
        })
    }
}

/// What a listed server is asked.
pub fn kind_of(d: Directive) -> Kind {
    match d {
        Directive::Ip => Kind::Info,
        Directive::Gs => Kind::A2sInfo,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use httpclient::testing::{chunked, Canned};

    fn ok(body: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    fn with_headers(status: &str, headers: &str, body: &str) -> Vec<u8> {
        format!("HTTP/1.1 {status}\r\n{headers}\r\n{body}").into_bytes()
    }

    const T: Duration = Duration::from_secs(5);
    const LIST: &str = "// a list\nip 192.0.2.1:27015\ngs 192.0.2.2:27016\nip [::1\n";

    async fn reason(base: &str) -> Reason {
        fetch_list(base, "valve", T).await.unwrap_err().reason
    }

    #[tokio::test]
    async fn a_bare_get_of_the_list_with_trailing_slashes_stripped() {
        let s = Canned::start(|_| ok(LIST)).await;
        let l = fetch_list(&format!("{}/server-list///", s.base()), "valve", T)
            .await
            .unwrap();
        assert_eq!(l.url, format!("{}/server-list/v1/servers/valve", s.base()));
        assert_eq!(
            l.entries,
            vec![
                ("192.0.2.1:27015".parse().unwrap(), Directive::Ip),
                ("192.0.2.2:27016".parse().unwrap(), Directive::Gs),
            ]
        );
        assert_eq!(l.bad_lines, vec![4]);
        let heads = s.heads();
        assert_eq!(heads.len(), 1);
        let head = heads[0].to_ascii_lowercase();
        assert!(
            head.starts_with("get /server-list/v1/servers/valve http/1.1\r\n"),
            "{head}"
        );
        assert!(head.contains(&format!("host: {}\r\n", s.addr)), "{head}");
        for absent in [
            "accept-encoding",
            "cookie",
            "content-length",
            "transfer-encoding",
        ] {
            assert!(!head.contains(absent), "{absent} in {head}");
        }
        // A base without a path, with and without its slash.
        for base in [s.base(), format!("{}/", s.base())] {
            let l = fetch_list(&base, "cstrike", T).await.unwrap();
            assert_eq!(l.url, format!("{}/v1/servers/cstrike", s.base()));
        }
    }

    #[tokio::test]
    async fn redirects_are_followed_a_bounded_number_of_times() {
        let s = Canned::start(|path| match path {
            "/old/v1/servers/valve" => {
                with_headers("301 Moved", "Location: /mid\r\nContent-Length: 0\r\n", "")
            }
            "/mid" => with_headers(
                "302 Found",
                "Location: new/list\r\nContent-Length: 0\r\n",
                "",
            ),
            "/new/list" => ok(LIST),
            "/loop/v1/servers/valve" => with_headers(
                "307 Again",
                "Location: /loop/v1/servers/valve\r\nContent-Length: 0\r\n",
                "",
            ),
            "/tls/v1/servers/valve" => with_headers(
                "308 TLS",
                "Location: https://example.org/\r\nContent-Length: 0\r\n",
                "",
            ),
            "/bare/v1/servers/valve" => with_headers("302 Nowhere", "Content-Length: 0\r\n", ""),
            _ => with_headers("404 Not Found", "Content-Length: 0\r\n", ""),
        })
        .await;
        let l = fetch_list(&format!("{}/old", s.base()), "valve", T)
            .await
            .unwrap();
        assert_eq!(l.entries.len(), 2);
        assert_eq!(s.heads().len(), 3);
        // Absolute Location URLs too.
        let abs = format!("{}/new/list", s.base());
        let s2 = Canned::start(move |_| {
            with_headers(
                "302 Found",
                &format!("Location: {abs}\r\nContent-Length: 0\r\n"),
                "",
            )
        })
        .await;
        assert_eq!(
            fetch_list(&s2.base(), "valve", T)
                .await
                .unwrap()
                .entries
                .len(),
            2
        );

        let before = s.heads().len();
        let e = fetch_list(&format!("{}/loop", s.base()), "valve", T)
            .await
            .unwrap_err();
        assert_eq!(e.reason, Reason::TooManyRedirects);
        assert!(!e.is_usage());
        assert_eq!(s.heads().len() - before, 1 + MAX_REDIRECTS);
        let e = fetch_list(&format!("{}/tls", s.base()), "valve", T)
            .await
            .unwrap_err();
        assert!(
            matches!(e.reason, Reason::Http(ref m) if m.contains("https")),
            "{e}"
        );
        assert!(!e.is_usage());
        // A 3xx without a Location is a status the engine refuses.
        assert_eq!(
            reason(&format!("{}/bare", s.base())).await,
            Reason::Status(302)
        );
    }

    #[tokio::test]
    async fn anything_but_200_is_refused() {
        for status in [
            "404 Not Found",
            "500 Oops",
            "204 No Content",
            "203 Non-Authoritative",
            "304 Not Modified",
        ] {
            let s = Canned::start(move |_| with_headers(status, "Content-Length: 0\r\n", "")).await;
            let e = fetch_list(&s.base(), "valve", T).await.unwrap_err();
            let code: u16 = status[..3].parse().unwrap();
            assert_eq!(e.reason, Reason::Status(code));
            let text = e.to_string();
            assert!(
                text.contains(&format!("{}/v1/servers/valve", s.base()))
                    && text.contains(&status[..3]),
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn a_content_encoding_fails_the_fetch_whatever_it_is() {
        for enc in ["gzip", "identity", "br"] {
            let s = Canned::start(move |_| {
                with_headers(
                    "200 OK",
                    &format!(
                        "Content-Encoding: {enc}\r\nContent-Length: {}\r\n",
                        LIST.len()
                    ),
                    LIST,
                )
            })
            .await;
            assert_eq!(reason(&s.base()).await, Reason::ContentEncoding(enc.into()));
        }
    }

    #[tokio::test]
    async fn framing_and_size_rules() {
        // Chunked is fine.
        let s = Canned::start(|_| chunked(b"ip 192.0.2.1:27015\ngs 192.0.2.2:27015\n", 19)).await;
        assert_eq!(
            fetch_list(&s.base(), "valve", T)
                .await
                .unwrap()
                .entries
                .len(),
            2
        );
        // A body that ends with the connection: the engine cannot tell its end.
        let s = Canned::start(|_| with_headers("200 OK", "", LIST)).await;
        assert_eq!(reason(&s.base()).await, Reason::NoLength);
        // Announced larger than 4 MiB: refused before reading.
        let s = Canned::start(|_| {
            with_headers(
                "200 OK",
                &format!("Content-Length: {}\r\n", MAX_BODY + 1),
                "ip 192.0.2.1:27015\n",
            )
        })
        .await;
        assert_eq!(reason(&s.base()).await, Reason::TooBig);
        // Exactly 4 MiB is read; one byte more in chunks is refused while reading.
        let line = "ip 192.0.2.1:27015\n";
        let big = |extra: usize| {
            let mut body = line.repeat(MAX_BODY / line.len());
            body.push_str(&"#".repeat(MAX_BODY - body.len() + extra));
            body
        };
        let exact = big(0);
        let s = Canned::start(move |_| ok(&exact)).await;
        let l = fetch_list(&s.base(), "valve", T).await.unwrap();
        assert_eq!(l.entries.len(), MAX_BODY / line.len());
        let over = big(1);
        let s = Canned::start(move |_| chunked(over.as_bytes(), 65536)).await;
        assert_eq!(reason(&s.base()).await, Reason::TooBig);
        // An empty body "returned no data"; a body of comments is an empty list.
        let s = Canned::start(|_| ok("")).await;
        assert_eq!(reason(&s.base()).await, Reason::NoData);
        let s = Canned::start(|_| ok("# nothing yet\n")).await;
        assert_eq!(
            fetch_list(&s.base(), "valve", T).await.unwrap(),
            FetchedList {
                url: format!("{}/v1/servers/valve", s.base()),
                ..FetchedList::default()
            }
        );
    }

    #[tokio::test]
    async fn host_names_are_resolved_and_unresolvable_ones_reported() {
        let s = Canned::start(|_| ok("ip localhost:27015\ngs localhost\nip no-such-host.invalid:27015\nip localhost:27015\n")).await;
        let l = fetch_list(&s.base(), "valve", T).await.unwrap();
        let local: SocketAddr = "127.0.0.1:27015".parse().unwrap();
        assert_eq!(
            l.entries,
            vec![
                (local, Directive::Ip),
                (local, Directive::Gs),
                (local, Directive::Ip)
            ]
        );
        assert_eq!(l.unresolved, vec!["no-such-host.invalid:27015".to_string()]);
    }

    #[tokio::test]
    async fn urls_the_engine_could_not_use_are_usage_errors() {
        for (base, gamedir) in [
            ("https://example.org/list", "valve"),
            ("ftp://example.org/", "valve"),
            ("example.org/list", "valve"),
            ("http://", "valve"),
            ("http://example.org", ""),
            ("http://example.org", "a/b"),
            ("http://example.org", "a b"),
        ] {
            let e = fetch_list(base, gamedir, T).await.unwrap_err();
            assert!(e.is_usage(), "{base} {gamedir}: {e}");
        }
        let e = fetch_list("https://xash.su/server-list", "valve", T)
            .await
            .unwrap_err();
        assert_eq!(e.reason, Reason::Tls);
        assert!(e.to_string().contains("https:// is not supported"), "{e}");
    }

    #[tokio::test]
    async fn connection_failures_and_silence_are_bounded_failures() {
        // Nothing listens.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = fetch_list(&format!("http://127.0.0.1:{port}"), "valve", T)
            .await
            .unwrap_err();
        assert!(
            matches!(e.reason, Reason::Connect(_)) && !e.is_usage(),
            "{e}"
        );
        // A server that accepts and never answers.
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let hold = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = l.accept().await {
                held.push(s);
            }
        });
        let t0 = std::time::Instant::now();
        let e = fetch_list(
            &format!("http://{addr}"),
            "valve",
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
        assert_eq!(e.reason, Reason::Timeout(Duration::from_millis(300)));
        assert!(t0.elapsed() < Duration::from_secs(3));
        hold.abort();
    }

    #[tokio::test]
    async fn lobby_query_gets_ip_lines_asked_info_and_gs_lines_a2s() {
        let s = Canned::start(|_| ok(LIST)).await;
        let l = HttpLists.fetch(&s.base(), "valve", T).await.unwrap();
        assert_eq!(
            l.servers,
            vec![
                ("192.0.2.1:27015".parse().unwrap(), Kind::Info),
                ("192.0.2.2:27016".parse().unwrap(), Kind::A2sInfo),
            ]
        );
        assert_eq!(l.bad_lines, vec![4]);
        assert!(matches!(
            HttpLists.fetch("https://x/", "valve", T).await,
            Err(StaticListError::Usage(_))
        ));
        let s = Canned::start(|_| ok("")).await;
        match HttpLists.fetch(&s.base(), "valve", T).await {
            Err(StaticListError::Failed(m)) => {
                assert!(m.contains(&s.base()) && m.contains("no data"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}
