use super::*;
use crate::testing::{answer, chunked, Canned};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

impl Canned {
    fn url(&self, path: &str) -> Url {
        http_url(&format!("{}{path}", self.base())).unwrap()
    }
}

/// A port nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn a_get_and_a_post_say_what_they_should() {
    let s = Canned::start(|path| answer("200 OK", "X-Path: yes\r\n", path)).await;
    let c = Client::new().user_agent("test/1");
    let r = c.get(s.url("/a/b?c=d")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["x-path"], "yes");
    assert!(r.redirect().is_none());
    assert_eq!(r.bytes().await.unwrap(), "/a/b?c=d");
    let head = s.heads()[0].to_ascii_lowercase();
    assert!(head.starts_with("get /a/b?c=d http/1.1\r\n"), "{head}");
    assert!(head.contains(&format!("host: {}\r\n", s.addr)), "{head}");
    assert!(head.contains("user-agent: test/1\r\n"), "{head}");
    for absent in ["content-length", "transfer-encoding", "accept-encoding"] {
        assert!(!head.contains(absent), "{absent} in {head}");
    }

    let req = Request::new(Method::POST, s.url("/p"))
        .header(header::CONTENT_TYPE, "application/json")
        .unwrap()
        .body("{}");
    assert_eq!(req.url().path(), "/p");
    c.send(req).await.unwrap();
    let head = s.heads()[1].to_ascii_lowercase();
    assert!(head.starts_with("post /p http/1.1\r\n"), "{head}");
    assert!(head.contains("content-length: 2\r\n"), "{head}");
    assert!(
        head.contains("content-type: application/json\r\n"),
        "{head}"
    );
    assert!(matches!(
        Request::get(s.url("/")).header(header::ACCEPT, "a\nb"),
        Err(Error::Request(_))
    ));
}

#[tokio::test]
async fn redirects_are_resolved_against_the_url_asked() {
    let s = Canned::start(|path| {
        let to = match path {
            "/dir/rel" => "next/list?x=1",
            "/dir/abs-path" => "/top",
            "/dir/abs" => "http://example.org:8080/elsewhere",
            "/dir/scheme-relative" => "//example.net/x",
            "/dir/tls" => "https://example.org/",
            _ => return answer("302 Found", "", ""),
        };
        answer("301 Moved", &format!("Location: {to}\r\n"), "")
    })
    .await;
    let c = Client::new();
    for (from, to) in [
        ("/dir/rel", format!("http://{}/dir/next/list?x=1", s.addr)),
        ("/dir/abs-path", format!("http://{}/top", s.addr)),
        ("/dir/abs", "http://example.org:8080/elsewhere".to_string()),
        ("/dir/scheme-relative", "http://example.net/x".to_string()),
        ("/dir/tls", "https://example.org/".to_string()),
    ] {
        let r = c.get(s.url(from)).await.unwrap();
        assert!(r.status().is_redirection());
        assert_eq!(r.redirect().unwrap().unwrap().as_str(), to, "{from}");
    }
    // A 3xx without a Location leads nowhere.
    let r = c.get(s.url("/none")).await.unwrap();
    assert_eq!(r.status(), StatusCode::FOUND);
    assert!(r.redirect().is_none());
    // The client itself speaks only http://.
    let tls = Url::parse("https://example.org/").unwrap();
    assert!(matches!(c.get(tls).await, Err(Error::Scheme(s)) if s == "https"));
}

#[tokio::test]
async fn a_body_past_the_cap_is_refused_and_one_at_it_is_read() {
    let s = Canned::start(|path| {
        let n: usize = path[1..].parse().unwrap();
        if n.is_multiple_of(2) {
            answer("200 OK", "", &"x".repeat(n))
        } else {
            chunked("y".repeat(n).as_bytes(), 100)
        }
    })
    .await;
    let c = Client::new().max_body(1000);
    for (path, len) in [("/1000", 1000), ("/999", 999)] {
        let body = c.get(s.url(path)).await.unwrap().bytes().await.unwrap();
        assert_eq!(body.len(), len, "{path}");
    }
    for n in ["/1002", "/1001", "/100001"] {
        let r = c.get(s.url(n)).await.unwrap();
        assert!(matches!(r.bytes().await, Err(Error::TooBig(1000))), "{n}");
    }
}

#[tokio::test]
async fn silence_and_a_stalled_body_time_out() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut s, _)) = l.accept().await {
            let mut b = [0u8; 1024];
            let _ = s.read(&mut b).await;
            if b.starts_with(b"GET /half") {
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
                    .await;
            }
            held.push(s);
        }
    });
    let t = Duration::from_millis(300);
    let c = Client::new().timeout(t);
    let t0 = std::time::Instant::now();
    let url = http_url(&format!("http://{addr}/silent")).unwrap();
    assert!(matches!(c.get(url).await, Err(Error::Timeout(d)) if d == t));
    let url = http_url(&format!("http://{addr}/half")).unwrap();
    let r = c.get(url).await.unwrap();
    assert!(matches!(r.bytes().await, Err(Error::Timeout(d)) if d == t));
    assert!(t0.elapsed() < Duration::from_secs(3));
    hold.abort();
}

#[tokio::test]
async fn a_refused_connection_on_every_address_is_a_connect_error() {
    let port = closed_port();
    let c = Client::new();
    // `localhost` may be 127.0.0.1 and ::1: both are tried, both refuse.
    for host in ["127.0.0.1", "localhost"] {
        let url = http_url(&format!("http://{host}:{port}/")).unwrap();
        match c.get(url).await {
            Err(e @ Error::Connect { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains(host) && text.contains(&port.to_string()),
                    "{text}"
                );
            }
            other => panic!("{host}: {other:?}"),
        }
    }
    let url = http_url("http://no-such-host.invalid/").unwrap();
    assert!(matches!(c.get(url).await, Err(Error::Resolve { .. })));
}

#[test]
fn only_http_urls_with_a_host() {
    assert!(http_url("http://example.org").is_ok());
    assert!(http_url("HTTP://Example.org/x").is_ok());
    assert!(matches!(http_url("https://x/"), Err(Error::Scheme(s)) if s == "https"));
    assert!(matches!(http_url("ftp://x/"), Err(Error::Scheme(_))));
    assert!(matches!(
        http_url("example.org/list"),
        Err(Error::BadUrl(_))
    ));
    assert!(matches!(http_url("http://"), Err(Error::BadUrl(_))));
    for lenient in [
        "http:///v1/x",
        "http:example.org",
        "http:/example.org",
        "http:\\\\x/",
    ] {
        assert!(matches!(http_url(lenient), Err(Error::NoHost)), "{lenient}");
    }
    assert!(matches!(http_url("unix:/run/x"), Err(Error::Scheme(_))));
}
