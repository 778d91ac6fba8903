//! What operators and monitors read: `/stats` (every part's counters as JSON),
//! `/metrics` (Prometheus), `/healthz` and `/readyz`.

use crate::http::counters::stats_json;
use crate::http::state::AppState;
use api::health::{HealthBody, PartStatus, ReadyBody};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

/// The routes of this file.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/stats", get(stats))
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

async fn stats(State(s): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        stats_json(&s).to_string(),
    )
        .into_response()
}

/// The Prometheus exposition (`crate::http::metrics`).
async fn metrics(State(s): State<AppState>) -> Response {
    let snap = s.publisher.current().await;
    match crate::http::metrics::render(&s, &snap) {
        Some(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "no metrics recorder in this process\n",
        )
            .into_response(),
    }
}

/// The process answers.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "alive", body = HealthBody)))]
pub async fn healthz() -> Json<HealthBody> {
    Json(HealthBody {
        status: "ok".into(),
    })
}

/// Whether every configured part serves.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "every part serves", body = ReadyBody),
        (status = 503, description = "some part does not serve yet", body = ReadyBody),
    ))]
pub async fn readyz(State(s): State<AppState>) -> Response {
    let parts = s.sources.ready.parts();
    let body = ReadyBody::of(
        parts
            .into_iter()
            .map(|(part, detail)| PartStatus {
                part,
                ready: detail.is_none(),
                detail,
            })
            .collect(),
    );
    let code = if body.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}
