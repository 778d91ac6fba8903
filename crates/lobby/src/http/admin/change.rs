//! fgms's `LIST add|delete ENTRY`: `POST /api/admin/{list}` and
//! `DELETE /api/admin/{list}/{entry}`.

use super::auth::AdminName;
use crate::http::reply::ApiError;
use crate::http::state::AppState;
use api::admin::{ChangeBody, ChangeRequest};
use api::ErrorBody;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{ConnectInfo, Path, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use config::overlay::parse_list;
use std::net::SocketAddr;

/// fgms's `LIST add ENTRY`: saved, then applied at once, kept across restarts and
/// reloads until deleted.
#[utoipa::path(post, path = "/api/admin/{name}", tag = "admin",
    params(("name" = String, Path, description = "blacklist, relays or crossfeeds")),
    request_body = ChangeRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the change is saved and in force", body = ChangeBody),
        (status = 400, description = "not an entry this list can hold", body = ErrorBody),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such list, or no relay runs here", body = ErrorBody),
        (status = 500, description = "the state file cannot be written: nothing changed", body = ErrorBody),
    ))]
pub async fn add(
    State(s): State<AppState>,
    Extension(who): Extension<AdminName>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    list: Result<Path<String>, PathRejection>,
    body: Result<Json<ChangeRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let entry = body.map(|Json(r)| r.entry).map_err(|e| {
        ApiError::bad_request(format!(
            "expected {{\"entry\": \"...\"}}: {}",
            e.body_text()
        ))
    });
    change_request(s, who, peer, list.map(|Path(l)| l), entry, true).await
}

/// fgms's `LIST delete ENTRY` (the entry percent-encoded; a CIDR's `/` may stay):
/// saved, then applied; an entry of the file stays deleted across reloads until it
/// is added again.
#[utoipa::path(delete, path = "/api/admin/{name}/{entry}", tag = "admin",
    params(
        ("name" = String, Path, description = "blacklist, relays or crossfeeds"),
        ("entry" = String, Path, description = "the entry to delete"),
    ),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the change is saved and in force", body = ChangeBody),
        (status = 400, description = "not an entry this list can hold", body = ErrorBody),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such list, or no relay runs here", body = ErrorBody),
        (status = 500, description = "the state file cannot be written: nothing changed", body = ErrorBody),
    ))]
pub async fn delete(
    State(s): State<AppState>,
    Extension(who): Extension<AdminName>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let (list, entry) = match path {
        Ok(Path((l, e))) => (Ok(l), Ok(e)),
        Err(e) => (Err(e), Ok(String::new())),
    };
    change_request(s, who, peer, list, entry, false).await
}

/// What `add` and `delete` share (authenticated already: [`super::auth`]): read the
/// list and the entry, then make the change.
async fn change_request(
    s: AppState,
    AdminName(by): AdminName,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    list: Result<String, PathRejection>,
    entry: Result<String, ApiError>,
    added: bool,
) -> Result<Response, ApiError> {
    let admin = s
        .admin
        .as_ref()
        .ok_or_else(|| ApiError::not_running("admin API"))?;
    let peer = peer.map(|Extension(ConnectInfo(a))| a);
    let (list, entry) = (list?, entry?);
    if let Some(r) = super::listing::change(&s, &list, &entry, added, &by) {
        return Ok(r);
    }
    let list = parse_list(&list).ok_or_else(|| {
        ApiError::not_found(format!(
            "{list:?} cannot be changed: blacklist, relays, crossfeeds, registrations, bans"
        ))
    })?;
    let body = admin.change(list, &entry, added, &by, peer).await?;
    Ok(Json(body).into_response())
}
