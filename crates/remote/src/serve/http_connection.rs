//! One Streamable HTTP connection's state: its chain's inbound queue, the streams the chain's
//! messages wait in until the client reads them (one for the connection, one per session),
//! and the route each answer takes. The registry of live connections by `Acp-Connection-Id`.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};

use super::client_link::OpenConnection;
use super::heard::Heard;
use super::ids::ConnectionId;
use acp_trace::classify::{Kind, classify};

/// Messages a stream holds for a client that is not reading it (yet) before the chain's
/// writer waits; past the chain's `write_timeout` the connection fails.
const STREAM_QUEUE: usize = 256;

/// The live connections.
#[derive(Debug, Default)]
pub(super) struct Registry {
    connections: Mutex<HashMap<String, Arc<HttpConnection>>>,
}

impl Registry {
    pub(super) fn insert(&self, connection: Arc<HttpConnection>) {
        let id = connection.id.as_str().to_owned();
        self.connections
            .lock()
            .expect("registry")
            .insert(id, connection);
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<HttpConnection>> {
        self.connections.lock().expect("registry").get(id).cloned()
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<HttpConnection>> {
        self.connections.lock().expect("registry").remove(id)
    }
}

/// Where the answer to a client's request goes.
#[derive(Debug)]
enum Route {
    /// The connection-scoped stream.
    Connection,
    /// A session's stream.
    Session(String),
    /// The body of the POST that opened the connection.
    Opening(oneshot::Sender<Bytes>),
}

/// One stream's queue. Its receiver is lent to at most one GET at a time and taken back when
/// that GET ends, so what arrives between two GETs waits for the next.
#[derive(Debug)]
pub(super) struct Mailbox {
    sender: mpsc::Sender<Bytes>,
    receiver: Mutex<Option<mpsc::Receiver<Bytes>>>,
}

impl Mailbox {
    fn new() -> Arc<Mailbox> {
        let (sender, receiver) = mpsc::channel(STREAM_QUEUE);
        Arc::new(Mailbox {
            sender,
            receiver: Mutex::new(Some(receiver)),
        })
    }
}

#[derive(Debug)]
struct Streams {
    connection: Arc<Mailbox>,
    sessions: HashMap<String, Arc<Mailbox>>,
    /// Answers owed, by the request's id as the client wrote it (the chain answers with the
    /// id byte for byte).
    pending: HashMap<String, Route>,
}

impl Streams {
    fn session(&mut self, session: &str) -> Arc<Mailbox> {
        self.sessions
            .entry(session.to_owned())
            .or_insert_with(Mailbox::new)
            .clone()
    }
}

/// What to do with one message from the chain.
enum Delivery {
    Stream(mpsc::Sender<Bytes>),
    Opening(oneshot::Sender<Bytes>),
}

#[derive(Debug)]
pub(super) struct HttpConnection {
    pub(super) id: ConnectionId,
    pub(super) heard: Arc<Heard>,
    /// The chain's inbound queue; taken (closing the chain's editor input) on DELETE.
    to_chain: Mutex<Option<mpsc::Sender<Bytes>>>,
    streams: Mutex<Streams>,
    /// Set once the chain has ended: streams send what they hold, then end.
    closed: watch::Sender<bool>,
}

impl HttpConnection {
    pub(super) fn new(
        id: ConnectionId,
        heard: Arc<Heard>,
        to_chain: mpsc::Sender<Bytes>,
    ) -> Arc<HttpConnection> {
        Arc::new(HttpConnection {
            id,
            heard,
            to_chain: Mutex::new(Some(to_chain)),
            streams: Mutex::new(Streams {
                connection: Mailbox::new(),
                sessions: HashMap::new(),
                pending: HashMap::new(),
            }),
            closed: watch::Sender::new(false),
        })
    }

    /// Queues a client message for the chain; false once the connection is closing.
    pub(super) async fn to_chain(&self, message: Bytes) -> bool {
        let sender = self.to_chain.lock().expect("to_chain").clone();
        match sender {
            Some(sender) => sender.send(message).await.is_ok(),
            None => false,
        }
    }

    /// Closes the chain's editor input: the chain answers what is pending and stops.
    pub(super) fn end_input(&self) {
        self.to_chain.lock().expect("to_chain").take();
    }

    /// The answer to request `id` is the body of the POST that opened the connection.
    pub(super) fn answer_opening(&self, id: &str) -> oneshot::Receiver<Bytes> {
        let (sender, receiver) = oneshot::channel();
        self.streams
            .lock()
            .expect("streams")
            .pending
            .insert(id.to_owned(), Route::Opening(sender));
        receiver
    }

    /// The client sent request `id`, scoped to `session` if any: its answer goes to that
    /// session's stream, or to the connection's.
    pub(super) fn expect_answer(&self, id: &str, session: Option<&str>) {
        let mut streams = self.streams.lock().expect("streams");
        let route = match session {
            Some(session) => {
                streams.session(session);
                Route::Session(session.to_owned())
            }
            None => Route::Connection,
        };
        streams.pending.insert(id.to_owned(), route);
    }

    /// Makes sure `session` has a stream (a POST scoped to it may come before any message).
    pub(super) fn know_session(&self, session: &str) {
        self.streams.lock().expect("streams").session(session);
    }

    /// The stream a GET reads: the connection's, or a known session's. `Err(true)` when that
    /// stream already has a reader, `Err(false)` for a session never seen.
    pub(super) fn lend_stream(
        self: &Arc<Self>,
        session: Option<&str>,
    ) -> Result<StreamLease, bool> {
        let mailbox = {
            let streams = self.streams.lock().expect("streams");
            match session {
                None => streams.connection.clone(),
                Some(session) => streams.sessions.get(session).cloned().ok_or(false)?,
            }
        };
        let receiver = mailbox
            .receiver
            .lock()
            .expect("mailbox")
            .take()
            .ok_or(true)?;
        self.heard.stream_opened();
        Ok(StreamLease {
            receiver: Some(receiver),
            mailbox,
            heard: self.heard.clone(),
            closed: self.closed.subscribe(),
        })
    }

    /// Where one message from the chain goes: a response to the route its request set (the
    /// connection's stream when none); a request or notification to the stream of the
    /// session it names, except the connection's own `$/` methods. A result naming a
    /// session (`session/new`) gives that session its stream before the client hears of it.
    fn route(&self, message: &[u8]) -> Delivery {
        let seen = classify(message);
        let mut streams = self.streams.lock().expect("streams");
        let session = match seen.kind {
            Kind::Response | Kind::Error => {
                if let (Kind::Response, Some(session)) = (seen.kind, seen.session.as_deref()) {
                    streams.session(session);
                }
                match seen.id.as_deref().and_then(|id| streams.pending.remove(id)) {
                    Some(Route::Opening(sender)) => return Delivery::Opening(sender),
                    Some(Route::Session(session)) => Some(session),
                    Some(Route::Connection) | None => None,
                }
            }
            Kind::Request | Kind::Notification => {
                let own = seen
                    .method
                    .as_deref()
                    .is_some_and(|method| method.starts_with("$/"));
                match seen.session {
                    Some(session) if !own => Some(session.into_owned()),
                    _ => None,
                }
            }
            Kind::Invalid => None,
        };
        let mailbox = match session {
            Some(session) => streams.session(&session),
            None => streams.connection.clone(),
        };
        Delivery::Stream(mailbox.sender.clone())
    }

    fn close(&self) {
        self.end_input();
        self.closed.send_replace(true);
        // An opening POST still waiting hears that no answer will come.
        self.streams
            .lock()
            .expect("streams")
            .pending
            .retain(|_, route| !matches!(route, Route::Opening(_)));
    }
}

/// The chain's messages to an HTTP client: each into the stream its route names.
pub struct Outbound {
    connection: Arc<HttpConnection>,
    registry: Arc<Registry>,
    /// Counted open until the chain has ended.
    open: Option<OpenConnection>,
}

impl Outbound {
    pub(super) fn new(
        connection: Arc<HttpConnection>,
        registry: Arc<Registry>,
        open: OpenConnection,
    ) -> Outbound {
        Outbound {
            connection,
            registry,
            open: Some(open),
        }
    }

    /// Waits while the stream is full (a client not reading it): the chain's writer stalls,
    /// and past its write timeout the connection fails.
    pub(super) async fn send(&mut self, message: Bytes) -> io::Result<()> {
        match self.connection.route(&message) {
            Delivery::Opening(sender) => {
                let _ = sender.send(message);
                Ok(())
            }
            Delivery::Stream(sender) => sender
                .send(message)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the stream is gone")),
        }
    }

    /// The chain has ended: the streams end once drained, and the id is forgotten.
    pub(super) fn close(&mut self) {
        self.connection.close();
        self.registry.remove(self.connection.id.as_str());
        self.open.take();
    }
}

/// One GET's hold on a stream: gives the receiver back when the GET ends.
pub(super) struct StreamLease {
    receiver: Option<mpsc::Receiver<Bytes>>,
    mailbox: Arc<Mailbox>,
    heard: Arc<Heard>,
    closed: watch::Receiver<bool>,
}

impl StreamLease {
    /// The next message; `None` once the connection has closed and the stream is drained.
    pub(super) async fn next(&mut self) -> Option<Bytes> {
        let receiver = self.receiver.as_mut().expect("a lease holds its receiver");
        loop {
            if let Ok(message) = receiver.try_recv() {
                return Some(message);
            }
            if *self.closed.borrow() {
                return None;
            }
            tokio::select! {
                biased;
                message = receiver.recv() => return message,
                changed = self.closed.changed() => {
                    if changed.is_err() {
                        return receiver.try_recv().ok();
                    }
                }
            }
        }
    }
}

impl Drop for StreamLease {
    fn drop(&mut self) {
        if let Some(receiver) = self.receiver.take() {
            *self.mailbox.receiver.lock().expect("mailbox") = Some(receiver);
        }
        self.heard.stream_closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Arc<HttpConnection> {
        let (to_chain, _) = mpsc::channel(1);
        HttpConnection::new(ConnectionId::random(), Heard::new(), to_chain)
    }

    async fn deliver(connection: &Arc<HttpConnection>, line: &str) {
        let mut out = Outbound::new(
            connection.clone(),
            Arc::new(Registry::default()),
            OpenConnection::counted(acp_metrics::labels::Profile::Http),
        );
        out.send(Bytes::copy_from_slice(line.as_bytes()))
            .await
            .unwrap();
    }

    async fn next(lease: &mut StreamLease) -> String {
        let message = tokio::time::timeout(std::time::Duration::from_secs(1), lease.next())
            .await
            .expect("a message")
            .expect("the stream is open");
        String::from_utf8(message.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn answers_follow_their_request_and_session_messages_their_session() {
        let c = connection();
        let mut conn_stream = c.lend_stream(None).unwrap();
        assert!(
            matches!(c.lend_stream(None), Err(true)),
            "one reader at a time"
        );
        assert!(
            matches!(c.lend_stream(Some("s1")), Err(false)),
            "unknown session"
        );

        c.expect_answer("2", None);
        let new = r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
        deliver(&c, new).await;
        assert_eq!(next(&mut conn_stream).await, new);

        let mut session_stream = c.lend_stream(Some("s1")).unwrap();
        c.expect_answer("\"p\"", Some("s1"));
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#;
        let ask = r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1"}}"#;
        let done = r#"{"jsonrpc":"2.0","id":"p","result":{"stopReason":"end_turn"}}"#;
        let cancel = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"sessionId":"s1","requestId":1}}"#;
        for line in [update, ask, done, cancel] {
            deliver(&c, line).await;
        }
        assert_eq!(next(&mut session_stream).await, update);
        assert_eq!(next(&mut session_stream).await, ask);
        assert_eq!(next(&mut session_stream).await, done);
        assert_eq!(next(&mut conn_stream).await, cancel);
    }

    #[tokio::test]
    async fn a_stream_keeps_what_arrives_between_readers_and_ends_after_close() {
        let c = connection();
        let first = c.lend_stream(None).unwrap();
        drop(first);
        let note = r#"{"jsonrpc":"2.0","method":"_x/note","params":{}}"#;
        deliver(&c, note).await;
        let mut again = c.lend_stream(None).unwrap();
        assert_eq!(next(&mut again).await, note);
        deliver(&c, note).await;
        c.close();
        assert_eq!(next(&mut again).await, note);
        assert!(again.next().await.is_none());
    }

    #[tokio::test]
    async fn the_opening_answer_goes_to_its_post() {
        let c = connection();
        let answer = c.answer_opening("0");
        let early = r#"{"jsonrpc":"2.0","method":"_x/early","params":{}}"#;
        let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#;
        deliver(&c, early).await;
        deliver(&c, init).await;
        assert_eq!(&answer.await.unwrap()[..], init.as_bytes());
        let mut stream = c.lend_stream(None).unwrap();
        assert_eq!(next(&mut stream).await, early);
    }
}
