//! `serve --admin-listen`: the operator's endpoints on a listener of their own: `/healthz` and
//! `/readyz` open to probes (they tell only alive and ready), `/metrics` and `POST /drain` behind
//! the same gate as `/acp` (token, origins). Knows the admission (ready or not, draining) and
//! the metrics' text, never a chain.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::admission::Admission;
use super::auth::{self, Gate};

/// The admin endpoints' routes. The probes pass without the token: a Kubernetes probe (or a
/// load balancer's health check) cannot carry a secret, and they show nothing but two bits.
pub(super) fn app(admission: Admission, gate: Arc<Gate>) -> Router {
    let gated = Router::new()
        .route("/metrics", get(metrics))
        .route("/drain", post(drain))
        .route_layer(axum::middleware::from_fn_with_state(gate, auth::admit));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .merge(gated)
        .with_state(admission)
}

/// The process is alive and its runtime answers.
async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// Whether a new connection would be taken now: 503 while draining or at
/// `--max-connections`, so a load balancer sends new clients elsewhere.
async fn readyz(State(admission): State<Admission>) -> Response {
    if admission.is_draining() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    if !admission.ready() {
        return (StatusCode::SERVICE_UNAVAILABLE, "at --max-connections\n").into_response();
    }
    (StatusCode::OK, "ready\n").into_response()
}

async fn metrics() -> Response {
    match acp_metrics::get() {
        Some(metrics) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, acp_metrics::CONTENT_TYPE)],
            metrics.encode(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "metrics are off\n").into_response(),
    }
}

/// Starts draining, as SIGTERM does; 202 whether or not it had started already.
async fn drain(State(admission): State<Admission>) -> Response {
    if admission.drain() {
        tracing::info!("POST /drain: draining");
    }
    (StatusCode::ACCEPTED, "draining\n").into_response()
}
