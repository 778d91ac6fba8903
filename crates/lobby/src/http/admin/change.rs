//! fgms's `LIST add|delete ENTRY`: `POST /api/admin/{list}` and
//! `DELETE /api/admin/{list}/{entry}`.

use super::auth::AdminName;
use crate::http::reply::{error, not_running};
use crate::http::state::AppState;
use api::admin::{ChangeBody, ChangeRequest};
use api::ErrorBody;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use config::overlay::parse_list;
use config::overlay::List;
use std::net::SocketAddr;

#[allow(clippy::result_large_err)] // the refusal is the handler's answer, sent at once
fn list_or_404(name: &str) -> Result<List, Response> {
    parse_list(name).ok_or_else(|| {
        error(
            StatusCode::NOT_FOUND,
            format!(
                "{name:?} cannot be changed: blacklist, relays, crossfeeds, registrations, bans"
            ),
        )
    })
}

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
) -> Response {
    let list = list.map(|Path(l)| l).map_err(|e| e.body_text());
    let entry = body.map(|Json(r)| r.entry).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!("expected {{\"entry\": \"...\"}}: {}", e.body_text()),
        )
    });
    change_request(s, who, peer, list, entry, true).await
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
) -> Response {
    let (list, entry) = match path {
        Ok(Path((l, e))) => (Ok(l), Ok(e)),
        Err(e) => (Err(e.body_text()), Ok(String::new())),
    };
    change_request(s, who, peer, list, entry, false).await
}

/// What `add` and `delete` share (authenticated already: [`super::auth`]): read the
/// list and the entry, then make the change.
async fn change_request(
    s: AppState,
    AdminName(by): AdminName,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    list: Result<String, String>,
    entry: Result<String, Response>,
    added: bool,
) -> Response {
    let Some(admin) = &s.admin else {
        return not_running("admin API");
    };
    let peer = peer.map(|Extension(ConnectInfo(a))| a);
    let list = match list {
        Ok(l) => l,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let entry = match entry {
        Ok(e) => e,
        Err(r) => return r,
    };
    if let Some(r) = super::listing::change(&s, &list, &entry, added, &by) {
        return r;
    }
    let list = match list_or_404(&list) {
        Ok(l) => l,
        Err(r) => return r,
    };
    match admin.change(list, &entry, added, &by, peer).await {
        Ok(b) => Json(b).into_response(),
        Err(r) => r,
    }
}
