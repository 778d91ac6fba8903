//! The one error every handler answers with ([`ApiError`]: a status and the
//! `{"error": what}` body), and the extractor of typed query parameters ([`Params`]),
//! whose refusal is that same body.

use api::params::{Bounds, ParamError};
use api::ErrorBody;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;

/// An error answer: `status` with `{"error": what}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
}

impl ApiError {
    /// `status` saying `what`.
    pub fn new(status: StatusCode, what: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: ErrorBody::new(what),
        }
    }

    /// `400`: a bad request, `what` naming what is wrong.
    pub fn bad_request(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, what)
    }

    /// `404`: nothing here, `what` saying what.
    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }

    /// `404`: the part this path reads does not run in this process.
    pub fn not_running(part: &str) -> ApiError {
        ApiError::not_found(format!("no {part} runs in this process"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

impl From<ParamError> for ApiError {
    fn from(e: ParamError) -> ApiError {
        ApiError::bad_request(e.to_string())
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(e: JsonRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

/// An error answer as a response: `code` with `{"error": what}` (for the answers
/// that are a response either way: the admin listings', the authentication's).
pub fn error(code: StatusCode, what: impl Into<String>) -> Response {
    ApiError::new(code, what).into_response()
}

/// A route's query parameters, `T` (its serde struct in `api`, documented by its
/// `IntoParams`), read by `api::params::parse`: an unknown parameter, a bad value or
/// one out of bounds is refused as a `400` [`ApiError`] naming it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Params<T>(pub T);

impl<T, S> FromRequestParts<S> for Params<T>
where
    T: DeserializeOwned + utoipa::IntoParams + Bounds,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        Ok(Params(api::params::parse(parts.uri.query().unwrap_or(""))?))
    }
}

/// A JSON body already serialised.
pub fn json_text(body: String) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
