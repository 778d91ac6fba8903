//! The server list's admin lists: `registrations` (`GET` shows pending and admitted
//! ones with their contacts; `POST {"entry": TOKEN}` approves a pending one; `DELETE
//! .../ADDR` removes one) and `bans` (the master's ban list: `POST {"entry": NET}`
//! bans, which also removes the network's servers and registrations; `DELETE
//! .../NET` unbans). Each change is logged with the admin's name.

use crate::http::reply::error;
use crate::http::state::AppState;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lifecycle::lock;

/// `GET /api/admin/{registrations|bans}`; `None` for other topics.
pub fn show(s: &AppState, topic: &str) -> Option<Response> {
    let (m, l) = match topic {
        "registrations" | "bans" => (s.sources.master.as_ref(), s.sources.list.as_ref()),
        _ => return None,
    };
    let (Some(m), Some(l)) = (m, l) else {
        return Some(error(
            StatusCode::NOT_FOUND,
            "no master runs in this process",
        ));
    };
    Some(match topic {
        "registrations" => Json(&*lock(&l.registrations)).into_response(),
        _ => {
            let bans: Vec<String> = lock(m).bans().iter().map(|n| n.to_string()).collect();
            Json(serde_json::json!({ "bans": bans })).into_response()
        }
    })
}

/// `POST`/`DELETE` on `registrations` or `bans`; `None` for other lists.
pub fn change(s: &AppState, list: &str, entry: &str, added: bool, by: &str) -> Option<Response> {
    if list != "registrations" && list != "bans" {
        return None;
    }
    let (Some(m), Some(l)) = (&s.sources.master, &s.sources.list) else {
        return Some(error(
            StatusCode::NOT_FOUND,
            "no master runs in this process",
        ));
    };
    let ok = |what: String| Json(serde_json::json!({ "ok": true, "done": what })).into_response();
    Some(match (list, added) {
        ("registrations", true) => match l.approve(entry.trim(), by) {
            Some(r) => ok(format!("{} admitted for {}", r.address, r.gamedir)),
            None => error(
                StatusCode::NOT_FOUND,
                format!("no pending registration has token {entry:?}"),
            ),
        },
        ("registrations", false) => match entry.trim().parse::<std::net::SocketAddr>() {
            Ok(a) => {
                let n = l.unregister(|ip, port| ip == a.ip() && port == a.port());
                tracing::info!(peer = %a, by, removed = n, "registration removed by an admin");
                ok(format!("{n} registrations of {a} removed"))
            }
            Err(_) => error(StatusCode::BAD_REQUEST, format!("{entry:?} is not IP:PORT")),
        },
        (_, ban) => {
            let Some(net) = master::bans::parse_net(entry.trim()) else {
                return Some(error(
                    StatusCode::BAD_REQUEST,
                    format!("{entry:?} is not an IP address or network"),
                ));
            };
            let removed = match lock(m).change_bans(ban, &[net]) {
                Ok(n) => n,
                Err(e) => return Some(error(StatusCode::CONFLICT, e.to_string())),
            };
            let unregistered = if ban {
                l.unregister(|ip, _| net.contains(&ip))
            } else {
                0
            };
            tracing::info!(%net, by, ban, removed, unregistered, "master ban list changed by an admin");
            ok(format!(
                "{} {net}: {removed} servers and {unregistered} registrations removed",
                if ban { "banned" } else { "unbanned" }
            ))
        }
    })
}
