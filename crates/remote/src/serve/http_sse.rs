//! The Streamable HTTP profile: POST carries each client message (the opening `initialize`
//! answered in the response body with the new `Acp-Connection-Id`, everything else 202), GET
//! opens a connection's or a session's SSE stream, DELETE ends the connection.
//!
//! A served proxy chain's opening `proxy/initialize` is answered in two steps: the headers
//! (with the connection id) at once, the body once the chain answers. The chain's proxy
//! initializes its successor (the client) before it answers, with a request that can only
//! travel on the connection's stream, and a client can open that stream only once it knows
//! the connection id.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;

use super::Served;
use super::admission::refused;
use super::client_link::{ClientState, FromClient, OpenConnection, ToClient, Way};
use super::heard::Heard;
use super::http_connection::{HttpConnection, LendRefusal, Outbound, StreamLease};
use super::in_flight::InFlight;
use super::resume::{self, ResumeRefused};
use crate::protocol;
use acp_metrics::labels::Profile;
use acp_trace::classify::{Kind, classify};

/// How long the opening POST waits for the chain's answer to `initialize` (the chain's own
/// startup timeouts answer it with an error first when a component hangs).
const OPENING_WAIT: Duration = Duration::from_secs(300);
/// SSE comments sent on an idle stream, so that intermediaries keep it and a vanished
/// client is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Client methods that act on one session: a POST of one must name it (`Acp-Session-Id`, or
/// `params.sessionId` as the official SDK's client allows).
fn needs_session(method: &str) -> bool {
    matches!(
        method,
        "session/prompt"
            | "session/cancel"
            | "session/close"
            | "session/delete"
            | "session/fork"
            | "session/load"
            | "session/resume"
            | "session/set_config_option"
            | "session/set_mode"
            | "session/set_model"
    )
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, format!("{why}\n")).into_response()
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// POST /acp: one JSON-RPC message.
pub(super) async fn post(served: &Served, headers: &HeaderMap, body: Bytes) -> Response {
    let json = header_text(headers, header::CONTENT_TYPE.as_str())
        .is_some_and(|kind| kind.trim_start().starts_with(protocol::JSON_MEDIA_TYPE));
    if !json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    if body.trim_ascii_start().starts_with(b"[") {
        return refuse(StatusCode::NOT_IMPLEMENTED, "batches are not supported");
    }
    let seen = classify(&body);
    let connection_id = header_text(headers, protocol::CONNECTION_ID);
    let opening = seen.kind == Kind::Request
        && seen.wrapped.is_none()
        && seen
            .method
            .as_deref()
            .is_some_and(protocol::opens_connection);
    let Some(connection_id) = connection_id else {
        if opening {
            let id = seen.id.as_deref().unwrap_or("null").to_owned();
            let proxy = seen.method.as_deref() != Some("initialize");
            return open(served, id, body, proxy).await;
        }
        return refuse(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required");
    };
    let Some(connection) = served.http.get(connection_id) else {
        return refuse(StatusCode::NOT_FOUND, "no such connection");
    };
    connection.heard.now();
    let named = header_text(headers, protocol::SESSION_ID);
    let session = match (named, seen.session.as_deref()) {
        (Some(named), Some(inside)) if named != inside => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Acp-Session-Id header does not match params.sessionId",
            );
        }
        (Some(named), _) => Some(named),
        (None, inside) => inside,
    };
    let own = seen
        .method
        .as_deref()
        .is_some_and(|method| method.starts_with("$/"));
    let session = session.filter(|_| !own);
    if let Some(method) = seen.method.as_deref()
        && session.is_none()
        && needs_session(method)
    {
        return refuse(StatusCode::BAD_REQUEST, "Acp-Session-Id header required");
    }
    match (seen.kind, seen.id.as_deref()) {
        (Kind::Request, Some(id)) => connection.expect_answer(id, session),
        _ => {
            if let Some(session) = session {
                connection.know_session(session);
            }
        }
    }
    if !connection.to_chain(body).await {
        return refuse(StatusCode::NOT_FOUND, "the connection has closed");
    }
    StatusCode::ACCEPTED.into_response()
}

/// The POST that opens a connection: starts its chain, hands it the message, and answers
/// with the chain's answer. A refused `initialize` leaves no connection behind. For a
/// `proxy/initialize` (`early`) the headers go first, see the module's comment.
async fn open(served: &Served, request_id: String, body: Bytes, early: bool) -> Response {
    let admitted = match served.admission.admit() {
        Ok(admitted) => admitted,
        Err(refusal) => return refused(refusal),
    };
    let id = served.new_id();
    let heard = Heard::new();
    let state = ClientState {
        connection: id.clone(),
        heard: heard.clone(),
        in_flight: InFlight::new(),
    };
    let (to_chain, from_client) =
        FromClient::new(&state, served.limits.idle, served.admission.draining());
    let connection = HttpConnection::new(id.clone(), heard, to_chain, served.limits.resume_buffer);
    let answer = connection.answer_opening(&request_id);
    served.http.insert(connection.clone());
    let open = OpenConnection::counted(Profile::Http);
    let outbound = Outbound::new(connection.clone(), served.http.clone(), open);
    let to_client = ToClient::new(Way::Http(outbound), &state);
    if !served
        .admission
        .start(admitted, id.clone(), from_client, to_client)
    {
        served.http.remove(id.as_str());
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping");
    }
    if !connection.to_chain(body).await {
        return refuse(StatusCode::BAD_GATEWAY, "the chain stopped");
    }
    if early {
        return answer_later(served, connection, request_id, answer);
    }
    let answer = match tokio::time::timeout(OPENING_WAIT, answer).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => {
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the chain stopped before answering",
            );
        }
        Err(_) => {
            end(served, &connection);
            return refuse(
                StatusCode::GATEWAY_TIMEOUT,
                "the chain did not answer in time",
            );
        }
    };
    let refused = classify(&answer).kind != Kind::Response;
    let mut response = (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(protocol::JSON_MEDIA_TYPE),
        )],
        answer,
    )
        .into_response();
    if refused {
        end(served, &connection);
    } else {
        let value = HeaderValue::from_str(id.as_str()).expect("hex is a valid header value");
        response
            .headers_mut()
            .insert(protocol::CONNECTION_ID, value);
        served.advertise_resume(response.headers_mut());
        tracing::info!(connection = %id, "HTTP connection open");
    }
    response
}

/// `200` with the connection id now; the body is the chain's answer when it comes, or an
/// error naming why none came (the status is sent already). A refused or missing answer ends
/// the connection, as it leaves none behind when answered at once.
fn answer_later(
    served: &Served,
    connection: Arc<HttpConnection>,
    request_id: String,
    answer: tokio::sync::oneshot::Receiver<Bytes>,
) -> Response {
    let registry = served.http.clone();
    let id = connection.id.clone();
    let body = async move {
        let failed = |why: &str| {
            let mut out = Vec::new();
            acp_wire::encode::error_response(
                &mut out,
                &request_id,
                acp_wire::error_code::COMPONENT_FAILED,
                why,
                None,
            );
            Bytes::from(out)
        };
        let answer = match tokio::time::timeout(OPENING_WAIT, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => failed("the chain stopped before answering"),
            Err(_) => failed("the chain did not answer in time"),
        };
        if classify(&answer).kind != Kind::Response {
            registry.remove(connection.id.as_str());
            connection.end_input();
        }
        Ok::<_, Infallible>(answer)
    };
    let mut response = (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(protocol::JSON_MEDIA_TYPE),
        )],
        axum::body::Body::from_stream(stream::once(body)),
    )
        .into_response();
    let value = HeaderValue::from_str(id.as_str()).expect("hex is a valid header value");
    response
        .headers_mut()
        .insert(protocol::CONNECTION_ID, value);
    served.advertise_resume(response.headers_mut());
    tracing::info!(connection = %id, "HTTP connection open (proxy/initialize answered later)");
    response
}

fn end(served: &Served, connection: &Arc<HttpConnection>) {
    served.http.remove(connection.id.as_str());
    connection.end_input();
}

/// GET /acp without an upgrade: the connection's SSE stream, or a session's.
pub(super) async fn stream(served: &Served, headers: &HeaderMap) -> Response {
    let accepts = header_text(headers, header::ACCEPT.as_str())
        .is_some_and(|accept| accept.contains(protocol::EVENT_STREAM_MEDIA_TYPE));
    if !accepts {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must include text/event-stream",
        );
    }
    let Some(connection_id) = header_text(headers, protocol::CONNECTION_ID) else {
        return refuse(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required");
    };
    let resume = match resume::last_event_id(headers).transpose() {
        Ok(resume) => resume,
        Err(refused) => return refused.response(Profile::Http),
    };
    let Some(connection) = served.http.get(connection_id) else {
        if resume.is_some() {
            return ResumeRefused::NoConnection(connection_id.to_owned()).response(Profile::Http);
        }
        return refuse(StatusCode::NOT_FOUND, "no such connection");
    };
    let session = header_text(headers, protocol::SESSION_ID);
    let lease = match connection.lend_stream(session, resume) {
        Ok(lease) => lease,
        Err(LendRefusal::Busy) => {
            return refuse(StatusCode::CONFLICT, "this stream already has a reader");
        }
        Err(LendRefusal::UnknownSession) => {
            return refuse(StatusCode::NOT_FOUND, "no such session");
        }
        Err(LendRefusal::Resume(refusal)) => {
            let from = resume.expect("only a resume is refused for its cursor");
            return ResumeRefused::of(from, refusal).response(Profile::Http);
        }
    };
    if let Some(from) = resume {
        resume::counted(Profile::Http, acp_metrics::labels::ResumeOutcome::Resumed);
        tracing::info!(connection = %connection.id, session, cursor = %from, "SSE stream resumed");
    }
    let events = stream::unfold(lease, |mut lease: StreamLease| async move {
        loop {
            let (cursor, message) = lease.next().await?;
            match std::str::from_utf8(&message) {
                Ok(text) => {
                    let event = Event::default().id(cursor.to_string()).data(text);
                    return Some((Ok::<_, Infallible>(event), lease));
                }
                Err(_) => tracing::warn!("dropped a message to the client that is not UTF-8"),
            }
        }
    });
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    let value = HeaderValue::from_str(connection.id.as_str()).expect("hex is a valid header value");
    response
        .headers_mut()
        .insert(protocol::CONNECTION_ID, value);
    if let Some(session) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        response.headers_mut().insert(protocol::SESSION_ID, session);
    }
    response
}

/// DELETE /acp: ends the connection; its chain answers what is pending and stops.
pub(super) fn delete(served: &Served, headers: &HeaderMap) -> Response {
    let Some(connection_id) = header_text(headers, protocol::CONNECTION_ID) else {
        return refuse(StatusCode::BAD_REQUEST, "Acp-Connection-Id header required");
    };
    let Some(connection) = served.http.remove(connection_id) else {
        return refuse(StatusCode::NOT_FOUND, "no such connection");
    };
    connection.end_input();
    tracing::info!(connection = %connection.id, "HTTP connection ended by the client");
    StatusCode::ACCEPTED.into_response()
}
