//! A remote component over Streamable HTTP (`http://`, `https://`): each message to it is
//! the body of one POST, each message from it one SSE event on a long-lived GET stream.
//!
//! - `initialize` is POSTed without a connection id and answered `200` with the response
//!   as the body and `Acp-Connection-Id` as a header. The connection-scoped stream is opened
//!   as soon as the headers are in, before the body is read, and so before that response is
//!   passed on: nothing sent in answer to it can go unheard. The body is read by a task while
//!   later messages are POSTed: a served proxy chain sends it only after a request on that
//!   stream has been answered.
//! - Every later POST carries `Acp-Connection-Id`; a session-scoped one
//!   (`remote::protocol::call_scope`, or a response to a request the server sent on a
//!   session's stream) also `Acp-Session-Id`, after that session's stream is open. They are
//!   answered `202 Accepted`; the answers come on the streams.
//! - A response carrying a new `sessionId` (`session/new`, `session/fork`) opens that
//!   session's stream before it is passed on.
//! - POSTs are made one at a time, in the order the router queued them, so the server reads
//!   a cancel after the prompt it cancels. Cookies the server sets are kept for the
//!   connection, as the RFD requires.
//! - Closing sends `DELETE` with the connection id. The connection-scoped stream ending ends
//!   the connection. A stream that fails is reopened with `Last-Event-ID` (the last event's
//!   id) when the server advertised resumption (`Acp-Resumable`), with backoff within its
//!   window, and so is a POST that could not connect; a refused resume (409) or the window
//!   passing ends the connection, as any failed stream did before.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use acp_wire::{Envelope, IdKey, error_code};
use bytes::Bytes;
use tokio::sync::{OnceCell, mpsc, oneshot};

use super::resumption::{Backoff, Resumable};
use super::{CONNECT_TIMEOUT, ConnectionError, Ended, Stream, Target, sse_stream};
use crate::protocol::{
    CONNECTION_ID, JSON_MEDIA_TYPE, LAST_EVENT_ID, RESUMABLE, SESSION_ID, Scope, call_scope,
    opens_connection,
};
use acp_link::{MessageSink, MessageSource};

/// Messages read from the streams and not yet taken by the link's reader.
const INCOMING_QUEUE: usize = 64;

/// What the streams (and the `initialize` answer) hand to the source.
pub(super) enum Incoming {
    Message(Bytes),
    /// The connection is over: `None` when the server ended it, else why it failed.
    End(Option<String>),
}

/// What the sink and the stream readers of one connection share.
pub(super) struct Shared {
    http: Result<reqwest::Client, ConnectionError>,
    pub(super) target: Target,
    /// Set from the `initialize` answer.
    connection: OnceLock<http::HeaderValue>,
    /// Set from the `initialize` answer when the server can resume streams.
    resumable: OnceLock<Resumable>,
    /// The session streams opened or being opened.
    sessions: Mutex<HashMap<String, Arc<OnceCell<()>>>>,
    /// Requests the server sent on a session's stream, by id: the answer is POSTed with
    /// that session's header.
    pub(super) asked_in: Mutex<HashMap<IdKey, String>>,
    pub(super) incoming: mpsc::Sender<Incoming>,
    pub(super) ended: Ended,
    /// The stream readers, ended with the source.
    readers: Mutex<Vec<tokio::task::AbortHandle>>,
}

/// What the server sends, from every stream of the connection.
pub struct HttpSource {
    incoming: mpsc::Receiver<Incoming>,
    stop: oneshot::Receiver<()>,
    shared: Arc<Shared>,
}

/// What is sent to the server, one POST per message.
pub struct HttpSink {
    shared: Arc<Shared>,
}

/// The halves of a connection not made yet: the first message sent (`initialize`) makes it.
pub(super) fn open(
    target: Target,
    ended: Ended,
    stop: oneshot::Receiver<()>,
) -> (HttpSource, HttpSink) {
    let (incoming_tx, incoming) = mpsc::channel(INCOMING_QUEUE);
    let shared = Arc::new(Shared {
        http: client(&target),
        target,
        connection: OnceLock::new(),
        resumable: OnceLock::new(),
        sessions: Mutex::new(HashMap::new()),
        asked_in: Mutex::new(HashMap::new()),
        incoming: incoming_tx,
        ended,
        readers: Mutex::new(Vec::new()),
    });
    let source = HttpSource {
        incoming,
        stop,
        shared: shared.clone(),
    };
    (source, HttpSink { shared })
}

/// The HTTP client of one connection: its own cookie jar, HTTP/2 where TLS negotiates it.
fn client(target: &Target) -> Result<reqwest::Client, ConnectionError> {
    // Always our own TLS configuration: reqwest has no crypto provider of its own here.
    let tls = (*crate::client_tls::client_config(&[b"h2", b"http/1.1"])
        .map_err(ConnectionError::Tls)?)
    .clone();
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .cookie_store(true)
        .default_headers(target.headers.clone())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| ConnectionError::HttpSetup {
            shown: target.shown.clone(),
            detail: describe(e),
        })
}

impl Shared {
    fn http(&self) -> Result<&reqwest::Client, ConnectionError> {
        self.http.as_ref().map_err(Clone::clone)
    }

    /// Ends the connection for the source: it reads `reason` and then nothing more.
    pub(super) async fn fail(&self, reason: ConnectionError) {
        let reason = reason.to_string();
        self.ended.set(reason.clone());
        let _ = self.incoming.send(Incoming::End(Some(reason))).await;
    }

    /// Opens the stream of `session` (or the connection's, for `None`) unless it is open or
    /// being opened; returns once the server has answered the GET.
    pub(super) async fn open_stream(
        self: &Arc<Self>,
        session: Option<&str>,
    ) -> Result<(), ConnectionError> {
        let Some(session) = session else {
            return self.start_stream(None).await;
        };
        let cell = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            sessions.entry(session.to_owned()).or_default().clone()
        };
        cell.get_or_try_init(|| self.start_stream(Some(session)))
            .await
            .map(|_| ())
    }

    /// The GET of `session`'s stream (or the connection's), resuming after `last_event_id`.
    fn stream_request(
        &self,
        session: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, ConnectionError> {
        let mut request = self.http()?.get(self.target.url.clone()).header(
            http::header::ACCEPT,
            crate::protocol::EVENT_STREAM_MEDIA_TYPE,
        );
        if let Some(connection) = self.connection.get() {
            request = request.header(CONNECTION_ID, connection.clone());
        }
        if let Some(session) = session {
            request = request.header(SESSION_ID, session);
        }
        if let Some(last) = last_event_id {
            request = request.header(LAST_EVENT_ID, last);
        }
        Ok(request)
    }

    /// Reopens the failed stream of `session` (or the connection's) after the last event
    /// received (`0` when none was), retrying with backoff within the server's window; `Err`
    /// when the server cannot resume, refuses (409), or the window passes.
    pub(super) async fn resume_stream(
        &self,
        session: Option<&str>,
        last_event_id: Option<&str>,
        failure: String,
    ) -> Result<reqwest::Response, ConnectionError> {
        let stream = match session {
            Some(session) => Stream::Session(session.to_owned()),
            None => Stream::Connection,
        };
        let failed = |detail: String| ConnectionError::StreamFailed {
            shown: self.target.shown.clone(),
            stream: stream.clone(),
            detail,
        };
        let Some(resumable) = self.resumable.get() else {
            return Err(failed(failure));
        };
        tracing::info!(url = %self.target.shown, %stream, "{failure}: resuming");
        let deadline = tokio::time::Instant::now() + resumable.window;
        let mut backoff = Backoff::default();
        loop {
            let request = self.stream_request(session, Some(last_event_id.unwrap_or("0")))?;
            let error = match request.send().await {
                Ok(response) if response.status().is_success() => {
                    tracing::info!(url = %self.target.shown, %stream, "stream resumed");
                    return Ok(response);
                }
                Ok(response) => {
                    return Err(ConnectionError::StreamRefused {
                        stream,
                        shown: self.target.shown.clone(),
                        answer: answered(response).await,
                    });
                }
                Err(error) => describe(error),
            };
            let delay = backoff.next().expect("the backoff never ends");
            if tokio::time::Instant::now() + delay >= deadline {
                return Err(failed(format!(
                    "{failure}; not resumed within the server's {} s window: {error}",
                    resumable.window.as_secs()
                )));
            }
            tokio::time::sleep(delay).await;
        }
    }

    async fn start_stream(self: &Arc<Self>, session: Option<&str>) -> Result<(), ConnectionError> {
        let stream = match session {
            Some(session) => Stream::Session(session.to_owned()),
            None => Stream::Connection,
        };
        let request = self.stream_request(session, None)?;
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                return Err(ConnectionError::StreamUnopened {
                    stream,
                    shown: self.target.shown.clone(),
                    detail: describe(e),
                });
            }
        };
        if !response.status().is_success() {
            let answer = answered(response).await;
            return Err(ConnectionError::StreamRefused {
                stream,
                shown: self.target.shown.clone(),
                answer,
            });
        }
        let reader = acp_link::transport::spawn(sse_stream::read(
            self.clone(),
            response,
            session.map(str::to_owned),
        ));
        self.readers
            .lock()
            .expect("readers lock")
            .push(reader.abort_handle());
        Ok(())
    }

    /// `initialize`, the first message: the connection is made from its answer.
    async fn initialize(self: &Arc<Self>, message: Bytes) -> Result<(), ConnectionError> {
        let shown = &self.target.shown;
        let response = self
            .http()?
            .post(self.target.url.clone())
            .header(http::header::CONTENT_TYPE, JSON_MEDIA_TYPE)
            .body(message)
            .send()
            .await
            .map_err(|e| ConnectionError::Unreachable {
                shown: shown.clone(),
                detail: describe(e),
            })?;
        if response.status() != http::StatusCode::OK {
            return Err(refused(shown, "initialize", response).await);
        }
        let Some(connection) = response.headers().get(CONNECTION_ID).cloned() else {
            // An initialize refused (an error answer): no connection was made, and the next
            // initialize may try again.
            tracing::debug!(url = %shown, "initialize answered without a connection");
            let body =
                response
                    .bytes()
                    .await
                    .map_err(|e| ConnectionError::LostInitializeAnswer {
                        shown: shown.clone(),
                        detail: describe(e),
                    })?;
            let _ = self.incoming.send(Incoming::Message(body)).await;
            return Ok(());
        };
        tracing::debug!(url = %shown, connection = ?connection, "Streamable HTTP connected");
        let _ = self.connection.set(connection);
        if let Some(resumable) = response
            .headers()
            .get(RESUMABLE)
            .and_then(|h| Resumable::parse(h.as_bytes()))
        {
            let _ = self.resumable.set(resumable);
        }
        // Opened as soon as the headers are in, before the body is read, and the body read by
        // a task while later messages are POSTed: a served proxy chain answers
        // `proxy/initialize` only after it has initialized its successor (this side) through a
        // request on this stream, whose answer is the next POST.
        self.open_stream(None).await?;
        let shared = self.clone();
        let answer = acp_link::transport::spawn(async move {
            match response.bytes().await {
                Ok(body) => {
                    let _ = shared.incoming.send(Incoming::Message(body)).await;
                }
                Err(e) => {
                    let reason = ConnectionError::LostInitializeAnswer {
                        shown: shared.target.shown.clone(),
                        detail: describe(e),
                    };
                    shared.fail(reason).await;
                }
            }
        });
        self.readers
            .lock()
            .expect("readers lock")
            .push(answer.abort_handle());
        Ok(())
    }

    /// One message after `initialize`, with the headers its scope needs.
    async fn post(self: &Arc<Self>, message: Bytes) -> Result<(), ConnectionError> {
        let Some(connection) = self.connection.get().cloned() else {
            return Err(ConnectionError::NotInitialized(self.target.shown.clone()));
        };
        let in_session = |method, params| match call_scope(method, params) {
            Scope::Session(session) => Some(session.into_owned()),
            Scope::Connection => None,
        };
        // The session it belongs to, and for a request its id, to answer a refusal with.
        let (session, asking) = match acp_wire::parse(&message) {
            Ok(Envelope::Request { id, method, params }) => {
                (in_session(method, params), Some(id.get().to_owned()))
            }
            Ok(Envelope::Notification { method, params }) => (in_session(method, params), None),
            Ok(Envelope::Response { id, .. }) => {
                let asked = self
                    .asked_in
                    .lock()
                    .expect("asked lock")
                    .remove(&IdKey::of(id));
                (asked, None)
            }
            Err(_) => (None, None),
        };
        if let Some(session) = &session
            && let Err(reason) = self.open_stream(Some(session)).await
        {
            // A session the server does not know: whatever it answered would go to a stream
            // that is not there. A request is answered here instead, the rest is dropped.
            tracing::warn!(url = %self.target.shown, "{reason}");
            match asking {
                Some(id) => {
                    let message = format!("the request was not sent: {reason}");
                    self.answer_error(&id, &message).await;
                }
                None => tracing::warn!(url = %self.target.shown, session, "a message was dropped"),
            }
            return Ok(());
        }
        let mut request = self
            .http()?
            .post(self.target.url.clone())
            .header(http::header::CONTENT_TYPE, JSON_MEDIA_TYPE)
            .header(CONNECTION_ID, connection);
        if let Some(session) = &session {
            request = request.header(SESSION_ID, session.as_str());
        }
        let shown = &self.target.shown;
        let response = self.send_post(request.body(message)).await?;
        match response.status() {
            http::StatusCode::ACCEPTED | http::StatusCode::NO_CONTENT => Ok(()),
            // A server may answer in the body; each is a message like those of the streams.
            http::StatusCode::OK => {
                let body = response.bytes().await.map_err(|e| lost(shown, e))?;
                if !body.iter().all(u8::is_ascii_whitespace) {
                    let _ = self.incoming.send(Incoming::Message(body)).await;
                }
                Ok(())
            }
            // One message the server will not take (an unknown session, a bad request): the
            // request is answered with the refusal, the connection goes on. Not for a refused
            // authorization, which no later message will get past either.
            status
                if status.is_client_error()
                    && !matches!(
                        status,
                        http::StatusCode::UNAUTHORIZED | http::StatusCode::FORBIDDEN
                    ) =>
            {
                let answer = answered(response).await;
                match asking {
                    Some(id) => {
                        let message = format!("{shown} refused the request: {answer}");
                        self.answer_error(&id, &message).await;
                    }
                    None => {
                        tracing::warn!(url = %shown, "a message was refused and dropped: {answer}")
                    }
                }
                Ok(())
            }
            _ => Err(refused(shown, "a message", response).await),
        }
    }

    /// Sends a POST; one that could not connect (so was not delivered) is sent again with
    /// backoff within the server's resume window, when it has one.
    async fn send_post(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ConnectionError> {
        let shown = &self.target.shown;
        let mut retry = self.resumable.get().map(|resumable| {
            (
                tokio::time::Instant::now() + resumable.window,
                Backoff::default(),
            )
        });
        loop {
            let attempt = request
                .try_clone()
                .expect("a POST's body is in memory")
                .send()
                .await;
            match (attempt, &mut retry) {
                (Ok(response), _) => return Ok(response),
                (Err(error), Some((deadline, backoff))) if error.is_connect() => {
                    let delay = backoff.next().expect("the backoff never ends");
                    if tokio::time::Instant::now() + delay >= *deadline {
                        return Err(lost(shown, error));
                    }
                    tracing::debug!(url = %shown, "a POST could not connect: trying again");
                    tokio::time::sleep(delay).await;
                }
                (Err(error), _) => return Err(lost(shown, error)),
            }
        }
    }

    /// Answers the request whose id is `id` (JSON text) with an error, as if the server had.
    async fn answer_error(&self, id: &str, message: &str) {
        let error = serde_json::json!({ "code": error_code::INTERNAL_ERROR, "message": message });
        let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#);
        let _ = self
            .incoming
            .send(Incoming::Message(Bytes::from(reply)))
            .await;
    }

    /// `DELETE`: the server ends the connection and its sessions' streams.
    async fn delete(&self) {
        let (Some(connection), Ok(http)) = (self.connection.get(), &self.http) else {
            return;
        };
        let request = http
            .delete(self.target.url.clone())
            .header(CONNECTION_ID, connection.clone())
            .send();
        match tokio::time::timeout(CONNECT_TIMEOUT, request).await {
            Ok(Ok(response)) => {
                tracing::debug!(url = %self.target.shown, status = %response.status(), "connection ended")
            }
            Ok(Err(e)) => {
                tracing::debug!(url = %self.target.shown, "DELETE failed: {}", describe(e))
            }
            Err(_) => tracing::debug!(url = %self.target.shown, "DELETE timed out"),
        }
    }
}

/// A refusal, for a person: what was refused, the status and the start of the body.
async fn refused(shown: &str, what: &'static str, response: reqwest::Response) -> ConnectionError {
    ConnectionError::Refused {
        shown: shown.to_owned(),
        what,
        answer: answered(response).await,
    }
}

/// The connection failed under a POST or while reading its answer.
fn lost(shown: &str, error: reqwest::Error) -> ConnectionError {
    ConnectionError::Lost {
        shown: shown.to_owned(),
        detail: describe(error),
    }
}

/// "the server answered STATUS: the start of the body".
async fn answered(response: reqwest::Response) -> String {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    let body: String = body.trim().chars().take(200).collect();
    let body = if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    };
    format!("the server answered {status}{body}")
}

/// A request's error with its causes (reqwest's own message alone says only "error sending
/// request"), without the URL, whose query may carry a credential.
pub(super) fn describe(error: reqwest::Error) -> String {
    error_chain(&error.without_url())
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl MessageSource for HttpSource {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        let incoming = tokio::select! {
            incoming = self.incoming.recv() => incoming,
            _ = &mut self.stop => None,
        };
        match incoming {
            Some(Incoming::Message(message)) => Some(Ok(message)),
            Some(Incoming::End(Some(reason))) => Some(Err(io::Error::other(reason))),
            Some(Incoming::End(None)) | None => None,
        }
    }
}

impl Drop for HttpSource {
    /// The streams end with the source: nothing would read them any more.
    fn drop(&mut self) {
        for reader in self.shared.readers.lock().expect("readers lock").drain(..) {
            reader.abort();
        }
    }
}

impl MessageSink for HttpSink {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        let shared = &self.shared;
        let initializing = shared.connection.get().is_none()
            && matches!(
                acp_wire::parse(&message),
                Ok(Envelope::Request { method, .. }) if opens_connection(method)
            );
        let sent = if initializing {
            shared.initialize(message).await
        } else {
            shared.post(message).await
        };
        if let Err(reason) = sent {
            shared.fail(reason.clone()).await;
            return Err(io::Error::other(reason));
        }
        Ok(())
    }

    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        self.shared.delete().await;
        Ok(())
    }
}
