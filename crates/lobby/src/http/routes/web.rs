//! The web page (map, server browser, backbone), embedded in the binary: the files
//! `web/build.mjs` writes into `crates/lobby/web/` (committed, so `cargo build`
//! needs no Node).

use crate::http::state::AppState;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file: its path, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $ct:literal) => {
        Asset {
            path: $path,
            content_type: $ct,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/", $file)),
        }
    };
}

const ASSETS: [Asset; 5] = [
    asset!("/", "index.html", "text/html; charset=utf-8"),
    asset!("/app.js", "app.js", "text/javascript; charset=utf-8"),
    asset!("/app.css", "app.css", "text/css; charset=utf-8"),
    asset!("/land.json", "land.json", "application/json"),
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
    let tag = etag(a.body);
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
        ],
    );
    if fresh {
        return (StatusCode::NOT_MODIFIED, head).into_response();
    }
    (head, [(header::CONTENT_TYPE, a.content_type)], a.body).into_response()
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
