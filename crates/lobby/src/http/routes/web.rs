//! The web page (map, server browser, backbone), embedded in the binary: the files
//! `web/build.mjs` writes into `crates/lobby/web/` (committed, so `cargo build`
//! needs no Node).

use crate::http::state::AppState;
use axum::http::header;
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

fn serve(a: &'static Asset) -> Response {
    (
        [
            (header::CONTENT_TYPE, a.content_type),
            // Small files that change with the binary: revalidate, never stale.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        a.body,
    )
        .into_response()
}

/// The page's routes.
pub fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for a in &ASSETS {
        r = r.route(a.path, get(move || async move { serve(a) }));
    }
    r.route("/index.html", get(|| async { serve(&ASSETS[0]) }))
}
