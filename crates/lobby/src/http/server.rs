//! The HTTP server: binds the listeners, builds the one [`AppState`] and the router
//! (`crate::http::routes`) with the tower layers every request passes, and runs an
//! accept loop per listener (`crate::http::conn`).

use crate::http::admin_state::Admin;
use crate::http::conn::{accept_loop, Handler, HttpStats, Reason, Shared};
use crate::http::reply::ApiError;
use crate::http::snapshot::Publisher;
use crate::http::sources::Sources;
use crate::http::state::AppState;
use anyhow::Result;
use api::rate::{Class, RequestRates};
use axum::extract::{ConnectInfo, Request};
use axum::http::header::RETRY_AFTER;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use config::Limits;
use lifecycle::{listening, lock, tcp_listener, Supervisor};
use serverlist::beside_master::ListCache;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
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

/// The per-source request buckets and their epoch.
type Rates = Arc<(Mutex<RequestRates>, Instant)>;
/// The routes with the tower layers (outermost first): tower-http's `TimeoutLayer`
/// (408) and `RequestBodyLimitLayer` (413), the request-time histogram, and the
/// request counters (the codes the layers answer with are counted on the way out).
fn handler(state: AppState, limits: &Limits) -> Handler {
    let counters = state.stats.clone();
    // The document of the routes beside them (it reads their attributes; the
    // routes know nothing of it).
    let l = limits;
    let rates = RequestRates::with(l.request_rate, l.request_burst, l.request_rate_loopback);
    let (rates, stats) = (
        Arc::new((Mutex::new(rates), Instant::now())),
        counters.clone(),
    );
    let router = crate::http::routes::router(state)
        .merge(crate::http::openapi::routes())
        .layer(axum::middleware::from_fn(
            move |c: ConnectInfo<SocketAddr>, req, next| {
                let (rates, stats) = (rates.clone(), stats.clone());
                async move { fair(c.0.ip(), req, next, &rates, &stats).await }
            },
        ));
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

/// `429` with `Retry-After` past a source's `request_rate` (`api::rate`), after up to
/// a second of that wait (a flood on kept-alive connections gets one answer a second).
async fn fair(ip: IpAddr, req: Request, next: Next, rates: &Rates, stats: &HttpStats) -> Response {
    let class = Class::of(req.uri().path());
    let Err(refused) = lock(&rates.0).check(ip, class, rates.1.elapsed()) else {
        return next.run(req).await;
    };
    stats.count([Reason::RateCheap, Reason::RateNormal, Reason::RateHeavy][class as usize]);
    let what = format!("over this source's request rate ({} route)", class.name());
    tokio::time::sleep(refused.wait.min(Duration::from_secs(1))).await; // a flood slows down
    let wait = [(RETRY_AFTER, refused.retry_after().to_string())];
    (wait, ApiError::new(StatusCode::TOO_MANY_REQUESTS, what)).into_response()
}
