//! The web page (map, server browser, backbone), embedded in the binary: the files
//! `web/build.mjs` writes into `crates/lobby/web/` (committed, so `cargo build`
//! needs no Node), each with its gzip copy, sent to clients that accept gzip (the
//! page's 181 KB are 68 KB so). Nothing is compressed at run time, and no other
//! route is ever compressed (the Xash3D engine fails on any `Content-Encoding`).

use crate::http::state::AppState;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file: its path, content type, bytes and gzip copy.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
    gzip: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $ct:literal) => {
        Asset {
            path: $path,
            content_type: $ct,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/", $file)),
            gzip: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/", $file, ".gz")),
        }
    };
}

/// Whether `Accept-Encoding` takes gzip (listed, and not with `q=0`).
fn accepts_gzip(req: &HeaderMap) -> bool {
    req.get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or("");
            let q0 = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !q0
        })
}

const ASSETS: [Asset; 6] = [
    asset!("/", "index.html", "text/html; charset=utf-8"),
    asset!("/app.js", "app.js", "text/javascript; charset=utf-8"),
    asset!("/app.css", "app.css", "text/css; charset=utf-8"),
    asset!("/land.json", "land.json", "application/json"),
    // Finer coasts, read by the map only when zoomed in.
    asset!("/land-50m.json", "land-50m.json", "application/json"),
    asset!("/licenses.txt", "licenses.txt", "text/plain; charset=utf-8"),
];

/// Every page response's defence in depth (issue 20, item 9): the page loads only
/// its own files, is framed by no one, and is never sniffed as another type.
const SECURITY: [(header::HeaderName, &str); 3] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// A strong validator of `body` (it changes with the binary).
fn etag(body: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    format!("\"{:016x}-{:x}\"", h.finish(), body.len())
}

fn serve(a: &'static Asset, req: &HeaderMap) -> Response {
    let gzip = accepts_gzip(req);
    let (body, tag) = if gzip {
        (a.gzip, etag(a.gzip))
    } else {
        (a.body, etag(a.body))
    };
    let fresh = req
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    // Small files that change with the binary: revalidate (a 304 when unchanged).
    let head = (
        SECURITY,
        [
            (header::CACHE_CONTROL, "no-cache".to_string()),
            (header::ETAG, tag),
            (header::VARY, "accept-encoding".to_string()),
        ],
    );
    if fresh {
        return (StatusCode::NOT_MODIFIED, head).into_response();
    }
    let encoding = [(header::CONTENT_ENCODING, "gzip")];
    let ct = [(header::CONTENT_TYPE, a.content_type)];
    if gzip {
        (head, ct, encoding, body).into_response()
    } else {
        (head, ct, body).into_response()
    }
}

/// The page's routes.
pub fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for a in &ASSETS {
        r = r.route(a.path, get(move |h: HeaderMap| async move { serve(a, &h) }));
    }
    r.route(
        "/index.html",
        get(|h: HeaderMap| async move { serve(&ASSETS[0], &h) }),
    )
}
