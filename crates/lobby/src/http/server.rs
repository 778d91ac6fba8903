//! The HTTP server: binds the listeners, builds the one [`AppState`] and the router
//! (`crate::http::routes`) with the tower layers every request passes, and runs an
//! accept loop per listener (`crate::http::conn`).

use crate::http::admin_state::Admin;
use crate::http::conn::{accept_loop, Handler, HttpStats, Reason, Shared};
use crate::http::snapshot::Publisher;
use crate::http::sources::Sources;
use crate::http::state::AppState;
use anyhow::Result;
use axum::http::StatusCode;
use config::Limits;
use lifecycle::{listening, tcp_listener, Supervisor};
use serverlist::beside_master::ListCache;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use udp::ConnLimiter;

/// A running HTTP listener.
pub struct HttpServer {
    /// Bound addresses.
    pub addrs: Vec<SocketAddr>,
}

impl HttpServer {
    /// Binds, prints `listening http tcp ADDR` lines, serves under `sup` until its stop
    /// signal (then finishes the requests in flight, for at most a few seconds).
    pub async fn start(
        sup: &Supervisor,
        listen: &[SocketAddr],
        limits: Limits,
        sources: Sources,
        admin: Option<Arc<Admin>>,
    ) -> Result<HttpServer> {
        let stats = Arc::new(HttpStats::default());
        let publisher = Publisher::new(
            sources.clone(),
            limits.max_streams,
            limits.max_streams_per_ip,
            limits.stream_lifetime,
        );
        sup.spawn_task("http", publisher.clone().run(sup.stop().clone()));
        sup.spawn_task("http", crate::recorder::upkeep(sup.stop().clone()));
        let state = AppState {
            sources,
            stats: stats.clone(),
            lists: Arc::new(ListCache::default()),
            details: Default::default(),
            publisher,
            admin,
        };
        let handler = handler(state, &limits);
        let shared = Arc::new(Shared {
            limits,
            stats,
            open: ConnLimiter::new(limits.max_connections, limits.max_connections_per_ip),
            waiting: udp::Waiting::default(),
        });
        let mut addrs = Vec::new();
        for &a in listen {
            let l = tcp_listener(a, "HTTP")?;
            let bound = l.local_addr()?;
            listening("http", "tcp", bound);
            listening("web", "http", bound); // the page, at `/`
            addrs.push(bound);
            let (shared, stop) = (shared.clone(), sup.stop().clone());
            sup.spawn_task("http", accept_loop(l, handler.clone(), shared, stop));
        }
        Ok(HttpServer { addrs })
    }
}

/// The routes with the tower layers (outermost first): tower-http's `TimeoutLayer`
/// (408) and `RequestBodyLimitLayer` (413), the request-time histogram, and the
/// request counters (the codes the layers answer with are counted on the way out).
fn handler(state: AppState, limits: &Limits) -> Handler {
    let counters = state.stats.clone();
    // The document of the routes beside them (it reads their attributes; the
    // routes know nothing of it).
    let router = crate::http::routes::router(state).merge(crate::http::openapi::routes());
    let svc = ServiceBuilder::new()
        .map_response(move |r: hyper::Response<_>| {
            counters.requests.fetch_add(1, Ordering::Relaxed);
            match r.status() {
                StatusCode::PAYLOAD_TOO_LARGE => counters.count(Reason::BodyTooLarge),
                StatusCode::REQUEST_TIMEOUT => counters.count(Reason::RequestTimeout),
                _ => {}
            }
            r.map(axum::body::Body::new)
        })
        // Request time until the response head, by status code (a stream's head
        // goes out at once; its length is not a request time).
        .layer(
            TraceLayer::new_for_http()
                .on_request(())
                .on_failure(())
                .on_response(
                    |r: &hyper::Response<_>, took: Duration, _: &tracing::Span| {
                        ::metrics::histogram!(
                            crate::recorder::HTTP_REQUEST_TIME,
                            "code" => r.status().as_u16().to_string()
                        )
                        .record(took.as_secs_f64());
                    },
                ),
        )
        .layer(RequestBodyLimitLayer::new(limits.max_request_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .service(router);
    tower::util::BoxCloneService::new(svc)
}
