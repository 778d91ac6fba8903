//! The Xash3D engine's static server list (`GET /v1/servers/<gamedir>`) and
//! `GET /v1/gamedirs`: the bodies of `serverlist::lists` (cached by
//! `serverlist::beside_master::ListCache`), answered with `ETag`, `Last-Modified` and
//! 304s.

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serverlist::lists::Body;
use std::sync::Arc;

/// A body shared by every response that sends it.
struct Shared(Arc<Body>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.text.as_bytes()
    }
}

/// `body` as the engine's HTTP client wants it: `200` with `Content-Length`, no
/// `Content-Encoding`, `Cache-Control: max-age=60`, `ETag` and `Last-Modified`; a
/// `304` when the request's `If-None-Match` (or, without it, `If-Modified-Since`)
/// says the client has it.
pub fn reply(body: Arc<Body>, req: &HeaderMap) -> Response {
    let h = |name| req.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let fresh = body.is_fresh(h(header::IF_NONE_MATCH), h(header::IF_MODIFIED_SINCE));
    let last_modified = body.last_modified();
    let headers = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=60"),
        ),
        (
            header::ETAG,
            HeaderValue::from_str(&body.etag).unwrap_or(HeaderValue::from_static("\"\"")),
        ),
        (
            header::LAST_MODIFIED,
            HeaderValue::from_str(&last_modified).unwrap_or(HeaderValue::from_static("")),
        ),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    let text = Bytes::from_owner(Shared(body));
    (
        headers,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}
