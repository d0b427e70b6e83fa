//! `serve --admin-listen`: the operator's endpoints on a listener of their own: `/healthz` and
//! `/readyz` open to probes (they tell only alive and ready), `/metrics`, `POST /drain` and
//! `POST /reload` behind the same gate as `/acp` (token, origins). Knows the admission (ready
//! or not, draining), the metrics' text and how to ask for a reload, never a chain.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::admission::Admission;
use super::auth::{self, Gate};
use super::reload_asks::{AskError, ReloadAnswer, ReloadAsker};

/// What the admin endpoints act on.
#[derive(Clone)]
pub(super) struct Operated {
    pub(super) admission: Admission,
    pub(super) reloads: ReloadAsker,
}

/// The admin endpoints' routes. The probes pass without the token: a Kubernetes probe (or a
/// load balancer's health check) cannot carry a secret, and they show nothing but two bits.
pub(super) fn app(operated: Operated, gate: Arc<Gate>) -> Router {
    let gated = Router::new()
        .route("/metrics", get(metrics))
        .route("/drain", post(drain))
        .route("/reload", post(reload))
        .route_layer(axum::middleware::from_fn_with_state(gate, auth::admit));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .merge(gated)
        .with_state(operated)
}

/// The process is alive and its runtime answers.
async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// Whether a new connection would be taken now: 503 while draining or at
/// `--max-connections`, so a load balancer sends new clients elsewhere.
async fn readyz(State(Operated { admission, .. }): State<Operated>) -> Response {
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
async fn drain(State(Operated { admission, .. }): State<Operated>) -> Response {
    if admission.drain() {
        tracing::info!("POST /drain: draining");
    }
    (StatusCode::ACCEPTED, "draining\n").into_response()
}

/// Reads the configuration again, as SIGHUP does, and answers with what came of it: 200 and
/// a line per change (or `unchanged`), 422 and the file's problems when it cannot be used, 503
/// when other reloads wait or `serve` is stopping.
async fn reload(State(Operated { reloads, .. }): State<Operated>) -> Response {
    tracing::info!("POST /reload: reading the configuration again");
    match reloads.ask().await {
        Ok(ReloadAnswer::Applied(changes)) => (
            StatusCode::OK,
            format!("reloaded:\n{}\n", changes.join("\n")),
        )
            .into_response(),
        Ok(ReloadAnswer::Unchanged) => (StatusCode::OK, "unchanged\n").into_response(),
        Ok(ReloadAnswer::Rejected(why)) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("not reloaded: {why}\n"),
        )
            .into_response(),
        Err(error @ (AskError::Busy | AskError::Gone)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("{error}\n")).into_response()
        }
    }
}
