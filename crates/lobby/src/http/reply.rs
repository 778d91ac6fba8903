//! The shapes every handler answers errors in.

use api::ErrorBody;
use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::collections::BTreeMap;

/// An error answer: `code` with `{"error": what}`.
pub fn error(code: StatusCode, what: impl Into<String>) -> Response {
    (code, Json(ErrorBody::new(what))).into_response()
}

/// `404`: the part this path reads does not run in this process.
pub fn not_running(part: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no {part} runs in this process"),
    )
}

/// The query parameters read by `parse`, or the text of why they do not parse.
pub fn parsed<F>(
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
    parse: fn(&BTreeMap<String, String>) -> Result<F, String>,
) -> Result<F, String> {
    let q = q.map(|Query(m)| m).map_err(|e| e.body_text())?;
    parse(&q)
}

/// A JSON body already serialised.
pub fn json_text(body: String) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
