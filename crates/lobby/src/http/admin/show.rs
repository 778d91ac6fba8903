//! fgms's `show TOPIC`: `GET /api/admin/{topic}`.

use crate::http::admin_state::Admin;
use crate::http::counters::stats_json;
use crate::http::reply::{error, ApiError};
use crate::http::snapshot::wall_clock;
use crate::http::state::AppState;
use api::admin::{TrackerBody, UptimeBody, User, UsersBody, VersionBody};
use api::ErrorBody;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lifecycle::lock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Instant, UNIX_EPOCH};

/// fgms's `show TOPIC`: `stats` and `settings` (objects as `/stats` and the
/// configuration write them), `version` (VersionBody), `uptime` (UptimeBody),
/// `whitelist`, `blacklist`, `relays`, `crossfeeds` (ListBody), `tracker` (TrackerBody),
/// `users` (UsersBody).
#[utoipa::path(get, path = "/api/admin/{name}", tag = "admin",
    params(("name" = String, Path, description = "stats, settings, version, uptime, whitelist, blacklist, crossfeeds, relays, tracker or users")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the topic's body (see the description)", body = Object),
        (status = 401, description = "no valid bearer token", body = ErrorBody),
        (status = 403, description = "the source is not in [admin] allow", body = ErrorBody),
        (status = 404, description = "the admin API is off, no such topic, or no relay runs here", body = ErrorBody),
    ))]
pub async fn show(
    State(s): State<AppState>,
    topic: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let admin = s
        .admin
        .as_ref()
        .ok_or_else(|| ApiError::not_running("admin API"))?;
    let Path(topic) = topic?;
    if let Some(r) = super::listing::show(&s, &topic) {
        return Ok(r);
    }
    Ok(topic_body(&s, admin, &topic))
}

/// The body of `topic` (not a listing's), or the answer why not.
fn topic_body(s: &AppState, admin: &Admin, topic: &str) -> Response {
    let src = &s.sources;
    let no_relay = || error(StatusCode::NOT_FOUND, "no relay runs in this process");
    match topic {
        "stats" => Json(stats_json(s)).into_response(),
        "settings" => {
            let parts = [
                ("relay", src.relay.is_some()),
                ("master", src.master.is_some()),
                ("dns", src.directory.is_some()),
                ("tracker", src.tracker.is_some()),
                ("history", src.history.is_some()),
            ]
            .into_iter()
            .filter_map(|(n, on)| on.then_some(n))
            .collect();
            Json(admin.settings(parts)).into_response()
        }
        "version" => Json(VersionBody {
            version: env!("CARGO_PKG_VERSION").into(),
            fgmp_protocol: format!("{}.{}", fgmp::VERSION >> 16, fgmp::VERSION & 0xffff),
            tracker_protocol: tracker::control::V20151207.into(),
        })
        .into_response(),
        "uptime" => {
            let started = admin
                .started
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Json(UptimeBody {
                started,
                uptime_s: admin.started.elapsed().map_or(0, |d| d.as_secs()),
                reloads: admin.reloads.load(Relaxed),
            })
            .into_response()
        }
        "whitelist" | "blacklist" | "relays" | "relay" | "crossfeeds" | "crossfeed" => {
            let links = s.publisher.links_now();
            match admin.list_body(topic, &links) {
                Some(b) => Json(b).into_response(),
                None => no_relay(),
            }
        }
        "tracker" => {
            let Some(r) = &src.relay else { return no_relay() };
            let st = lock(r).stats().clone();
            let g = |c: &AtomicU64| c.load(Relaxed);
            let server = admin.effective().relay.tracker;
            Json(TrackerBody {
                server: (!server.is_empty()).then_some(server),
                connected: g(&st.tracker_connected) > 0,
                queued: g(&st.tracker_queued),
                acked: g(&st.tracker_acked),
                dropped: g(&st.tracker_dropped),
                backlog: g(&st.tracker_backlog),
                reconnects: g(&st.tracker_reconnects),
            })
            .into_response()
        }
        "users" => {
            let Some(r) = &src.relay else { return no_relay() };
            let now = Instant::now();
            let clock = api::Clock {
                mono: now,
                ..wall_clock()
            };
            let views = lock(r).pilots_with_datagrams(now);
            let users = views
                .iter()
                .map(|v| User {
                    pilot: api::pilots::pilot(v, &clock),
                    address: v.addr.to_string(),
                    range_nm: v.range_nm,
                })
                .collect();
            Json(UsersBody {
                online: views.len(),
                users,
            })
            .into_response()
        }
        other => error(
            StatusCode::NOT_FOUND,
            format!("no such topic {other:?}: stats, settings, version, uptime, whitelist, blacklist, crossfeeds, relays, tracker, users"),
        ),
    }
}
