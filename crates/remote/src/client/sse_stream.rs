//! One long-lived GET stream of a Streamable HTTP connection: its SSE events, each one
//! JSON-RPC message, go to the connection's source in order, with the bookkeeping the
//! headers of later POSTs need; a stream that fails is resumed after its last event's id
//! where the server allows. The events are parsed by `eventsource-stream`.

use std::pin::Pin;
use std::sync::Arc;

use acp_wire::{Envelope, IdKey, Outcome};
use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;

use super::http_sse::{Incoming, Shared, describe};
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

async fn read_events(
    shared: Arc<Shared>,
    mut response: reqwest::Response,
    session: Option<String>,
) {
    let shown = shared.target.shown.clone();
    let mut last_event_id: Option<String> = None;
    loop {
        let mut events = response.bytes_stream().eventsource();
        let failure = loop {
            let event = match events.next().await {
                None => break None,
                Some(Ok(event)) => event,
                Some(Err(eventsource_stream::EventStreamError::Transport(e))) => {
                    break Some(describe(e));
                }
                Some(Err(other)) => break Some(other.to_string()),
            };
            if !event.id.is_empty() {
                last_event_id = Some(event.id);
            }
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
        };
        let Some(failure) = failure else {
            break;
        };
        match shared
            .resume_stream(session.as_deref(), last_event_id.as_deref(), failure)
            .await
        {
            Ok(resumed) => response = resumed,
            Err(failed) => {
                shared.fail(failed).await;
                return;
            }
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
