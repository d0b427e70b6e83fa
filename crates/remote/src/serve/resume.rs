//! How `serve` answers a resume it cannot serve: `409 Conflict` with a JSON-RPC-shaped error
//! body saying why (RFD "Durable & Resumable HTTP/WS Transport"), and the resume counters.
//! Knows responses and metrics, never a connection's state.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::cursor::{Cursor, CursorError};
use super::replay::ReplayRefusal;
use crate::protocol;
use acp_metrics::labels::{Profile, ResumeOutcome};

/// The JSON-RPC error code of a refused resume (in the range JSON-RPC leaves to servers).
pub const RESUME_REFUSED: i64 = -32010;

/// Why a resume was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ResumeRefused {
    #[error(
        "connection {0} cannot be resumed: it has ended, its resume window passed, or this \
         server never had it; open a new connection (and session/load or session/resume the \
         session)"
    )]
    NoConnection(String),
    #[error(
        "messages after cursor {from} were dropped from the replay buffer (kept from {kept_from}); \
         open the stream without Last-Event-ID and recover the session with session/load"
    )]
    Dropped { from: Cursor, kept_from: Cursor },
    #[error("cursor {from} was never sent on this connection (the last is {last})")]
    Unknown { from: Cursor, last: Cursor },
    #[error("{0}")]
    Malformed(CursorError),
}

impl ResumeRefused {
    pub(super) fn of(from: Cursor, refusal: ReplayRefusal) -> ResumeRefused {
        match refusal {
            ReplayRefusal::Dropped { kept_from } => ResumeRefused::Dropped { from, kept_from },
            ReplayRefusal::Unknown { last } => ResumeRefused::Unknown { from, last },
        }
    }

    fn reason(&self) -> &'static str {
        match self {
            ResumeRefused::NoConnection(_) => "no_connection",
            ResumeRefused::Dropped { .. } => "buffer",
            ResumeRefused::Unknown { .. } => "unknown_cursor",
            ResumeRefused::Malformed(_) => "malformed_cursor",
        }
    }

    fn outcome(&self) -> ResumeOutcome {
        match self {
            ResumeRefused::NoConnection(_) => ResumeOutcome::RefusedWindow,
            ResumeRefused::Dropped { .. } => ResumeOutcome::RefusedBuffer,
            ResumeRefused::Unknown { .. } | ResumeRefused::Malformed(_) => {
                ResumeOutcome::RefusedCursor
            }
        }
    }

    /// The response: `400` for a malformed cursor, `409` otherwise; counted.
    pub(super) fn response(&self, profile: Profile) -> Response {
        counted(profile, self.outcome());
        let status = match self {
            ResumeRefused::Malformed(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::CONFLICT,
        };
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": RESUME_REFUSED,
                "message": self.to_string(),
                "data": { "reason": self.reason() },
            },
        });
        (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(protocol::JSON_MEDIA_TYPE),
            )],
            body.to_string(),
        )
            .into_response()
    }
}

/// Counts a resume's outcome.
pub(super) fn counted(profile: Profile, outcome: ResumeOutcome) {
    if let Some(metrics) = acp_metrics::get() {
        metrics.resume(profile, outcome);
    }
}

/// The `Last-Event-ID` a request carries, if any.
pub(super) fn last_event_id(
    headers: &axum::http::HeaderMap,
) -> Option<Result<Cursor, ResumeRefused>> {
    headers
        .get(protocol::LAST_EVENT_ID)
        .map(|value| Cursor::parse(value.as_bytes()).map_err(ResumeRefused::Malformed))
}
