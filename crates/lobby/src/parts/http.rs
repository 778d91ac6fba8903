//! The HTTP listener shared by every part: the Xash3D engine's static server list
//! (`GET /v1/servers/<gamedir>`) from the master's live table, and `/stats`.

use crate::lifecycle::{listening, lock, tcp_listener, Supervisor};
use anyhow::{Context, Result};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What the HTTP handlers read.
#[derive(Clone, Default)]
pub struct Sources {
    /// The master, when this process runs one.
    pub master: Option<Arc<Mutex<master::Engine>>>,
    /// The relay, when this process runs one.
    pub relay: Option<Arc<Mutex<relay::Engine>>>,
    /// The directory, when this process runs one.
    pub directory: Option<Arc<Mutex<directory::Directory>>>,
    /// Worker restarts per part (see `lifecycle`).
    pub restarts: Option<crate::lifecycle::RestartCounts>,
}

/// The server list in the engine's static HTTP format: one `ip <addr>` line per
/// protocol-49 server of `gamedir` (IPv6 addresses bracketed).
pub fn server_list(engine: &master::Engine, gamedir: &str) -> String {
    let mut out = String::new();
    for (addr, s, _) in engine.table().iter() {
        if &*s.gamedir == gamedir.as_bytes() {
            out.push_str("ip ");
            out.push_str(&addr.to_string());
            out.push('\n');
        }
    }
    out
}

async fn servers(State(src): State<Sources>, Path(gamedir): Path<String>) -> Response {
    let Some(m) = &src.master else {
        return (StatusCode::NOT_FOUND, "no master runs in this process\n").into_response();
    };
    let body = server_list(&lock(m), &gamedir);
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

async fn stats(State(src): State<Sources>) -> Response {
    let mut obj = serde_json::Map::new();
    if let Some(r) = &src.relay {
        let e = lock(r);
        let m: serde_json::Map<String, serde_json::Value> = e
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("relay".into(), m.into());
    }
    if let Some(m) = &src.master {
        let e = lock(m);
        let c: serde_json::Map<String, serde_json::Value> = e
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("master".into(), c.into());
    }
    if let Some(d) = &src.directory {
        let c: serde_json::Map<String, serde_json::Value> = lock(d)
            .stats()
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        obj.insert("dns".into(), c.into());
    }
    if let Some(r) = &src.restarts {
        let c: serde_json::Map<String, serde_json::Value> = lock(r)
            .iter()
            .map(|(k, v)| (k.clone(), (*v).into()))
            .collect();
        obj.insert("worker_restarts".into(), c.into());
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::Value::Object(obj).to_string(),
    )
        .into_response()
}

async fn mpservers(State(src): State<Sources>) -> Response {
    let Some(d) = &src.directory else {
        return (StatusCode::NOT_FOUND, "no directory runs in this process\n").into_response();
    };
    let body = lock(d).mpservers_xml();
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        body,
    )
        .into_response()
}

async fn index() -> &'static str {
    "lobby\n/v1/servers/<gamedir>  Xash3D server list (one `ip ADDR` line per server)\n/stats                 counters as JSON\n/mpservers.xml          FlightGear relays for the launcher\n"
}

/// A running HTTP listener.
pub struct HttpServer {
    /// Bound addresses.
    pub addrs: Vec<SocketAddr>,
}

impl HttpServer {
    /// Binds, prints `listening http tcp ADDR` lines, serves under `sup` until its stop
    /// signal (then finishes the requests in flight).
    pub async fn start(
        sup: &Supervisor,
        listen: &[SocketAddr],
        sources: Sources,
    ) -> Result<HttpServer> {
        let app = Router::new()
            .route("/", get(index))
            .route("/v1/servers/{gamedir}", get(servers))
            .route("/stats", get(stats))
            .route("/mpservers.xml", get(mpservers))
            .route("/mpstatus/mpservers.xml", get(mpservers))
            .with_state(sources);
        let mut addrs = Vec::new();
        for &a in listen {
            let l = tcp_listener(a, "HTTP")?;
            let bound = l.local_addr()?;
            listening("http", "tcp", bound);
            addrs.push(bound);
            let (app, stop) = (app.clone(), sup.stop().clone());
            sup.spawn_task("http", async move {
                axum::serve(l, app)
                    .with_graceful_shutdown(async move { stop.stopped().await })
                    .await
                    .context("HTTP server stopped")
            });
        }
        Ok(HttpServer { addrs })
    }
}
