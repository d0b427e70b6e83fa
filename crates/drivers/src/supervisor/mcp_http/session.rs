//! One Streamable HTTP MCP session of the agent's client: a link the router sees as a bridge
//! shim's (its first frame the hello naming server and setup), the POSTs waiting for their
//! answers, and the GET stream that carries what the server sends on its own. Knows no routing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use acp_link::event::Event;
use acp_link::{LinkDone, Links};
use acp_router::mcp::bridge_hello;
use acp_wire::Envelope;
use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

/// What a POSTed request gets back.
#[derive(Debug)]
pub(super) enum Answer {
    /// The JSON-RPC response, as the router wrote it.
    Message(Bytes),
    /// The router refused the session's hello (a server nobody declared, a provider that is
    /// not running): why.
    Refused(String),
    /// The session ended before the answer came.
    Ended,
}

/// A message the agent's client POSTed, as far as the session needs to know it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Posted {
    /// A request: its id's JSON text and its method.
    Request { id: String, method: String },
    /// A notification or a response: nothing comes back for it.
    Other,
    /// Not one JSON-RPC message (a batch, not JSON).
    Invalid,
}

impl Posted {
    pub(super) fn read(body: &[u8]) -> Posted {
        match acp_wire::parse(body) {
            Ok(Envelope::Request { id, method, .. }) => Posted::Request {
                id: id.get().to_string(),
                method: method.to_string(),
            },
            Ok(Envelope::Notification { .. } | Envelope::Response { .. }) => Posted::Other,
            Err(_) => Posted::Invalid,
        }
    }
}

/// Why a session cannot take a message.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum PostError {
    Ended,
    IdInFlight,
}

#[derive(Debug, Default)]
struct State {
    /// Toward the router; `None` once the session ended.
    to_link: Option<mpsc::UnboundedSender<Bytes>>,
    /// Requests whose answers a POST waits for, by the id's JSON text.
    waiting: HashMap<String, oneshot::Sender<Answer>>,
    /// The open GET stream, if any.
    stream: Option<mpsc::UnboundedSender<Bytes>>,
    /// What the server sent while no GET stream was open.
    queued: VecDeque<Bytes>,
    /// The router's refusal of the hello, kept for the requests that come after it.
    refused: Option<String>,
}

/// One MCP session: created by the `initialize` POST, ended by DELETE, by the router closing
/// its link, or by the end of the run.
#[derive(Debug)]
pub(super) struct McpSession {
    /// The session setup (its URL token) and the server (its index there) it was opened on.
    pub(super) token: String,
    pub(super) index: usize,
    state: Mutex<State>,
}

impl McpSession {
    /// Opens a link for `server_id` and announces it to the router as a shim's; its first
    /// frame is the hello naming the server and the session setup's URL token (which tells the
    /// router the ACP session its calls belong to). Returns the session and the link's `done`.
    pub(super) async fn open(
        links: &Links,
        events: &mpsc::Sender<Event>,
        token: String,
        index: usize,
        server_id: &str,
    ) -> Option<(Arc<McpSession>, LinkDone)> {
        let (to_link, from_agent) = mpsc::unbounded_channel::<Bytes>();
        let (to_agent, from_router) = mpsc::channel::<Bytes>(64);
        let (link, done) = links.messages(from_agent, to_agent);
        let hello = bridge_hello::http_hello_line(server_id, &token);
        to_link
            .send(Bytes::from(hello.trim_end().to_string()))
            .expect("the link's reader holds the receiver");
        let session = Arc::new(McpSession {
            token,
            index,
            state: Mutex::new(State {
                to_link: Some(to_link),
                ..State::default()
            }),
        });
        events.send(Event::ShimConnected(link)).await.ok()?;
        acp_link::transport::spawn(session.clone().relay_from_router(from_router));
        Some((session, done))
    }

    /// Hands a POSTed message to the router; for a request, the receiver its answer comes on.
    pub(super) fn post(
        &self,
        body: Bytes,
        request_id: Option<&str>,
    ) -> Result<Option<oneshot::Receiver<Answer>>, PostError> {
        let mut state = self.state();
        if let Some(reason) = &state.refused {
            let (tell, answer) = oneshot::channel();
            let _ = tell.send(Answer::Refused(reason.clone()));
            return Ok(Some(answer));
        }
        let Some(to_link) = state.to_link.clone() else {
            return Err(PostError::Ended);
        };
        let answer = match request_id {
            Some(id) if state.waiting.contains_key(id) => return Err(PostError::IdInFlight),
            Some(id) => {
                let (tell, answer) = oneshot::channel();
                state.waiting.insert(id.to_string(), tell);
                Some(answer)
            }
            None => None,
        };
        if to_link.send(body).is_err() {
            return Err(PostError::Ended);
        }
        Ok(answer)
    }

    /// Opens the server-to-client stream: what was queued first. `None` when one is open
    /// already (the transport allows one GET stream per session here) or the session ended.
    pub(super) fn open_stream(&self) -> Option<mpsc::UnboundedReceiver<Bytes>> {
        let mut state = self.state();
        if state.to_link.is_none() || state.stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        for message in state.queued.drain(..) {
            let _ = tx.send(message);
        }
        state.stream = Some(tx);
        Some(rx)
    }

    pub(super) fn has_ended(&self) -> bool {
        self.state().to_link.is_none()
    }

    /// Ends the session: the link's input ends (the router then closes the server's
    /// connection at its provider), every waiting POST is answered, the stream closes.
    pub(super) fn end(&self) {
        let mut state = self.state();
        state.to_link = None;
        state.stream = None;
        for (_, tell) in state.waiting.drain() {
            let _ = tell.send(Answer::Ended);
        }
    }

    /// Everything the router writes on the link: the welcome or refusal first, then answers
    /// to the POSTs and the server's own messages for the GET stream.
    async fn relay_from_router(self: Arc<Self>, mut from_router: mpsc::Receiver<Bytes>) {
        let Some(welcome) = from_router.recv().await else {
            return self.end();
        };
        if let Some(reason) = refusal(&welcome) {
            let mut state = self.state();
            for (_, tell) in state.waiting.drain() {
                let _ = tell.send(Answer::Refused(reason.clone()));
            }
            state.refused = Some(reason);
            state.to_link = None;
            return;
        }
        while let Some(message) = from_router.recv().await {
            let mut state = self.state();
            match acp_wire::parse(&message) {
                Ok(Envelope::Response { id, .. }) => match state.waiting.remove(id.get()) {
                    Some(tell) => {
                        let _ = tell.send(Answer::Message(message));
                    }
                    None => tracing::debug!(
                        id = id.get(),
                        "MCP HTTP bridge: an answer whose POST is gone; dropped"
                    ),
                },
                _ => match state.stream.as_ref() {
                    Some(stream) if !stream.is_closed() => {
                        let _ = stream.send(message);
                    }
                    _ => state.queued.push_back(message),
                },
            }
        }
        self.end();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The reason of a refusal line; `None` for the welcome.
fn refusal(line: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    (value.get("mcpBridge")? == "refused").then(|| {
        value
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or("refused")
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posted_messages_are_told_apart() {
        assert_eq!(
            Posted::read(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#),
            Posted::Request {
                id: r#""a""#.into(),
                method: "tools/list".into()
            }
        );
        assert_eq!(
            Posted::read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Posted::Other
        );
        assert_eq!(
            Posted::read(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Posted::Other
        );
        assert_eq!(
            Posted::read(br#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#),
            Posted::Invalid
        );
        assert_eq!(Posted::read(b"nope"), Posted::Invalid);
    }

    #[test]
    fn refusal_lines() {
        assert_eq!(
            refusal(bridge_hello::welcome_line(None).trim_end().as_bytes()),
            None
        );
        assert_eq!(
            refusal(bridge_hello::welcome_line(Some("no such server")).as_bytes()).as_deref(),
            Some("no such server")
        );
    }
}
