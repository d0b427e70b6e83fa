//! One Streamable HTTP connection's state: its chain's inbound queue, the streams the chain's
//! messages wait in until the client reads them (one for the connection, one per session),
//! what was sent on them for a client that resumes one by cursor, and the route each answer
//! takes. The registry of live connections by `Acp-Connection-Id`.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};

use super::client_link::OpenConnection;
use super::cursor::Cursor;
use super::heard::Heard;
use super::ids::ConnectionId;
use super::mailbox::{Mailbox, NO_READER, Taken};
use super::replay::{ReplayBuffer, ReplayRefusal, StreamKey};
use acp_trace::classify::{Kind, classify};

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

/// A connection's streams: each a queue lent to at most one GET at a time, so what arrives
/// between two GETs waits for the next; a GET resuming with a cursor takes a stream over.
#[derive(Debug)]
struct Streams {
    connection: Arc<Mailbox>,
    sessions: HashMap<String, Arc<Mailbox>>,
    /// Answers owed, by the request's id as the client wrote it (the chain answers with the
    /// id byte for byte).
    pending: HashMap<String, Route>,
    /// What was sent on every stream and not acknowledged, for resumes.
    replay: ReplayBuffer,
    /// The generation of the last reader lent a stream.
    readers: u64,
}

impl Streams {
    fn session(&mut self, session: &str) -> Arc<Mailbox> {
        self.sessions
            .entry(session.to_owned())
            .or_insert_with(|| Arc::new(Mailbox::new()))
            .clone()
    }
}

/// What to do with one message from the chain.
enum Delivery {
    Stream(Arc<Mailbox>),
    Opening(oneshot::Sender<Bytes>),
}

/// Why a GET cannot have a stream.
#[derive(Debug)]
pub(super) enum LendRefusal {
    /// Another GET reads it (and this one gave no cursor to take over with).
    Busy,
    /// No such session (yet).
    UnknownSession,
    /// The cursor cannot be resumed from.
    Resume(ReplayRefusal),
}

/// What a stream's reader got.
enum Next {
    Message(Cursor, Bytes),
    Empty,
    Superseded,
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
    /// `replay_budget` bounds what is kept for resumes (`--resume-buffer`).
    pub(super) fn new(
        id: ConnectionId,
        heard: Arc<Heard>,
        to_chain: mpsc::Sender<Bytes>,
        replay_budget: usize,
    ) -> Arc<HttpConnection> {
        Arc::new(HttpConnection {
            id,
            heard,
            to_chain: Mutex::new(Some(to_chain)),
            streams: Mutex::new(Streams {
                connection: Arc::new(Mailbox::new()),
                sessions: HashMap::new(),
                pending: HashMap::new(),
                replay: ReplayBuffer::new(replay_budget),
                readers: 0,
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

    /// The stream a GET reads: the connection's, or a known session's. Without a cursor
    /// (`resume`) the stream must have no reader, and what was sent on it before is
    /// forgotten; with one, the stream's messages after it are sent again first, and the GET
    /// takes the stream over from a reader the server has not yet seen go.
    pub(super) fn lend_stream(
        self: &Arc<Self>,
        session: Option<&str>,
        resume: Option<Cursor>,
    ) -> Result<StreamLease, LendRefusal> {
        let mut streams = self.streams.lock().expect("streams");
        let mailbox = match session {
            None => streams.connection.clone(),
            Some(session) => streams
                .sessions
                .get(session)
                .cloned()
                .ok_or(LendRefusal::UnknownSession)?,
        };
        let key: StreamKey = session.map(Arc::from);
        let replay = match resume {
            None if mailbox.reader() != NO_READER => return Err(LendRefusal::Busy),
            None => {
                streams.replay.forget(&key);
                Vec::new()
            }
            Some(from) => streams
                .replay
                .resume(&key, from)
                .map_err(LendRefusal::Resume)?,
        };
        streams.readers += 1;
        let generation = streams.readers;
        let replaced = mailbox.set_reader(generation);
        drop(streams);
        if replaced == NO_READER {
            self.heard.stream_opened();
        } else {
            self.heard.now();
        }
        Ok(StreamLease {
            connection: self.clone(),
            key,
            mailbox,
            generation,
            closed: self.closed.subscribe(),
            replay: replay.into(),
        })
    }

    /// The next message of `mailbox` for its reader `generation`, with its cursor, kept for
    /// resumes.
    fn take(&self, key: &StreamKey, mailbox: &Mailbox, generation: u64) -> Next {
        let mut streams = self.streams.lock().expect("streams");
        match mailbox.take(generation) {
            Taken::Message(message) => {
                let cursor = streams.replay.record(key, message.clone());
                Next::Message(cursor, message)
            }
            Taken::Empty => Next::Empty,
            Taken::Superseded => Next::Superseded,
        }
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
        Delivery::Stream(mailbox)
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
            Delivery::Stream(mailbox) => {
                mailbox.put(message).await;
                Ok(())
            }
        }
    }

    /// The chain has ended: the streams end once drained, and the id is forgotten.
    pub(super) fn close(&mut self) {
        self.connection.close();
        self.registry.remove(self.connection.id.as_str());
        self.open.take();
    }
}

/// One GET's hold on a stream, until the GET ends or a resuming GET takes the stream over.
pub(super) struct StreamLease {
    connection: Arc<HttpConnection>,
    key: StreamKey,
    mailbox: Arc<Mailbox>,
    generation: u64,
    closed: watch::Receiver<bool>,
    /// Messages sent before and not acknowledged, sent again first.
    replay: std::collections::VecDeque<(Cursor, Bytes)>,
}

impl StreamLease {
    /// The next message and its cursor; `None` once the connection has closed and the stream
    /// is drained, or once another GET has taken the stream over.
    pub(super) async fn next(&mut self) -> Option<(Cursor, Bytes)> {
        if let Some(message) = self.replay.pop_front() {
            return Some(message);
        }
        loop {
            match self
                .connection
                .take(&self.key, &self.mailbox, self.generation)
            {
                Next::Message(cursor, message) => return Some((cursor, message)),
                Next::Superseded => return None,
                Next::Empty => {}
            }
            // Only now register for a wake-up (not per message), then look once more so that
            // nothing arriving in between is missed.
            let changed = self.mailbox.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match self
                .connection
                .take(&self.key, &self.mailbox, self.generation)
            {
                Next::Message(cursor, message) => return Some((cursor, message)),
                Next::Superseded => return None,
                Next::Empty => {}
            }
            if *self.closed.borrow() {
                return None;
            }
            tokio::select! {
                () = &mut changed => {}
                closed = self.closed.changed() => {
                    if closed.is_err() {
                        return None;
                    }
                }
            }
        }
    }
}

impl Drop for StreamLease {
    fn drop(&mut self) {
        if self.mailbox.release(self.generation) {
            self.connection.heard.stream_closed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Arc<HttpConnection> {
        let (to_chain, _) = mpsc::channel(1);
        HttpConnection::new(ConnectionId::random(), Heard::new(), to_chain, 1 << 20)
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

    async fn next_with_cursor(lease: &mut StreamLease) -> (u64, String) {
        let (cursor, message) =
            tokio::time::timeout(std::time::Duration::from_secs(1), lease.next())
                .await
                .expect("a message")
                .expect("the stream is open");
        (cursor.0, String::from_utf8(message.to_vec()).unwrap())
    }

    async fn next(lease: &mut StreamLease) -> String {
        next_with_cursor(lease).await.1
    }

    #[tokio::test]
    async fn answers_follow_their_request_and_session_messages_their_session() {
        let c = connection();
        let mut conn_stream = c.lend_stream(None, None).unwrap();
        assert!(
            matches!(c.lend_stream(None, None), Err(LendRefusal::Busy)),
            "one reader at a time"
        );
        assert!(
            matches!(
                c.lend_stream(Some("s1"), None),
                Err(LendRefusal::UnknownSession)
            ),
            "unknown session"
        );

        c.expect_answer("2", None);
        let new = r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
        deliver(&c, new).await;
        assert_eq!(next(&mut conn_stream).await, new);

        let mut session_stream = c.lend_stream(Some("s1"), None).unwrap();
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
        let first = c.lend_stream(None, None).unwrap();
        drop(first);
        let note = r#"{"jsonrpc":"2.0","method":"_x/note","params":{}}"#;
        deliver(&c, note).await;
        let mut again = c.lend_stream(None, None).unwrap();
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
        let mut stream = c.lend_stream(None, None).unwrap();
        assert_eq!(next(&mut stream).await, early);
    }

    #[tokio::test]
    async fn a_resuming_reader_takes_over_and_gets_what_followed_its_cursor() {
        let c = connection();
        let mut first = c.lend_stream(None, None).unwrap();
        let notes: Vec<String> = (0..4)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"_x/n","params":{{"i":{i}}}}}"#))
            .collect();
        for note in &notes[..3] {
            deliver(&c, note).await;
        }
        // The first reader got three messages out, the client processed only the first.
        assert_eq!(next_with_cursor(&mut first).await, (1, notes[0].clone()));
        assert_eq!(next_with_cursor(&mut first).await, (2, notes[1].clone()));
        assert_eq!(next_with_cursor(&mut first).await, (3, notes[2].clone()));
        let mut resumed = c.lend_stream(None, Some(Cursor(1))).unwrap();
        assert!(first.next().await.is_none(), "the old reader ends");
        drop(first);
        deliver(&c, &notes[3]).await;
        assert_eq!(next_with_cursor(&mut resumed).await, (2, notes[1].clone()));
        assert_eq!(next_with_cursor(&mut resumed).await, (3, notes[2].clone()));
        assert_eq!(next_with_cursor(&mut resumed).await, (4, notes[3].clone()));
        assert!(
            matches!(c.lend_stream(None, None), Err(LendRefusal::Busy)),
            "the resumed reader holds the stream"
        );
        assert!(matches!(
            c.lend_stream(None, Some(Cursor(9))),
            Err(LendRefusal::Resume(ReplayRefusal::Unknown { .. }))
        ));
    }

    #[tokio::test]
    async fn a_resume_from_before_the_replay_budget_is_refused() {
        let (to_chain, _) = mpsc::channel(1);
        let c = HttpConnection::new(ConnectionId::random(), Heard::new(), to_chain, 100);
        let mut reader = c.lend_stream(None, None).unwrap();
        let note = r#"{"jsonrpc":"2.0","method":"_x/a_note_of_some_length","params":{}}"#;
        for _ in 0..3 {
            deliver(&c, note).await;
            next(&mut reader).await;
        }
        assert!(matches!(
            c.lend_stream(None, Some(Cursor(1))),
            Err(LendRefusal::Resume(ReplayRefusal::Dropped { .. }))
        ));
    }
}
