//! One long-lived GET stream of a Streamable HTTP connection: its SSE events, each one
//! JSON-RPC message, go to the connection's source in order, with the bookkeeping the
//! headers of later POSTs need. The events are parsed by `eventsource-stream`.

use std::pin::Pin;
use std::sync::Arc;

use acp_wire::{Envelope, IdKey, Outcome};
use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;

use super::http_sse::{Incoming, Shared, describe};
use super::{ConnectionError, Stream};
use crate::protocol::session_in_result;

/// Reads `response`, the stream of `session` (`None`: the connection's), until it ends. Boxed:
/// reading a stream may open another, whose reader is this same future.
pub(super) fn read(
    shared: Arc<Shared>,
    response: reqwest::Response,
    session: Option<String>,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(read_events(shared, response, session))
}

async fn read_events(shared: Arc<Shared>, response: reqwest::Response, session: Option<String>) {
    let shown = shared.target.shown.clone();
    let mut events = response.bytes_stream().eventsource();
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                let error = match error {
                    eventsource_stream::EventStreamError::Transport(e) => describe(e),
                    other => other.to_string(),
                };
                let stream = match &session {
                    Some(session) => Stream::Session(session.clone()),
                    None => Stream::Connection,
                };
                let failed = ConnectionError::StreamFailed {
                    shown,
                    stream,
                    detail: error,
                };
                shared.fail(failed).await;
                return;
            }
        };
        if event.data.trim().is_empty() {
            continue;
        }
        let message = Bytes::from(event.data);
        note(&shared, &message, session.as_deref()).await;
        if shared
            .incoming
            .send(Incoming::Message(message))
            .await
            .is_err()
        {
            return;
        }
    }
    match session {
        Some(session) => tracing::debug!(url = %shown, session, "session stream ended"),
        None => {
            shared.ended.set(format!("closed its connection ({shown})"));
            let _ = shared.incoming.send(Incoming::End(None)).await;
        }
    }
}

/// What later POSTs need to know of `message`: a request asked on a session's stream is
/// answered with that session's header; a response naming a new session gets that
/// session's stream opened before it is passed on.
async fn note(shared: &Arc<Shared>, message: &[u8], session: Option<&str>) {
    match acp_wire::parse(message) {
        Ok(Envelope::Request { id, .. }) => {
            if let Some(session) = session {
                shared
                    .asked_in
                    .lock()
                    .expect("asked lock")
                    .insert(IdKey::of(id), session.to_owned());
            }
        }
        Ok(Envelope::Response {
            outcome: Outcome::Result(result),
            ..
        }) => {
            if let Some(new) = session_in_result(result)
                && session != Some(&*new)
                && let Err(reason) = shared.open_stream(Some(&new)).await
            {
                tracing::warn!(url = %shared.target.shown, "{reason}");
            }
        }
        _ => {}
    }
}
