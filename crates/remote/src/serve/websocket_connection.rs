//! One WebSocket connection's state, which outlives any one socket: its chain's inbound
//! queue, the queue of the chain's messages toward the client, what was sent (for a client
//! that resumes with a cursor), how many client messages the chain has taken, and which socket
//! is the current one. The registry of connections by `Acp-Connection-Id`. Knows no socket.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use super::client_link::OpenConnection;
use super::cursor::Cursor;
use super::heard::Heard;
use super::ids::ConnectionId;
use super::mailbox::{Mailbox, Taken};
use super::replay::{ReplayBuffer, ReplayRefusal};

/// The live WebSocket connections, with a socket or waiting for their client to come back.
#[derive(Debug, Default)]
pub(super) struct Registry {
    connections: Mutex<HashMap<String, Arc<WsConnection>>>,
}

impl Registry {
    pub(super) fn insert(&self, connection: Arc<WsConnection>) {
        let id = connection.id.as_str().to_owned();
        self.connections
            .lock()
            .expect("registry")
            .insert(id, connection);
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<WsConnection>> {
        self.connections.lock().expect("registry").get(id).cloned()
    }

    pub(super) fn remove(&self, id: &str) {
        self.connections.lock().expect("registry").remove(id);
    }
}

/// A socket made the connection's current one.
pub(super) struct Attached {
    pub(super) generation: u64,
    /// Messages sent after the client's cursor, to send again first.
    pub(super) replay: Vec<(Cursor, Bytes)>,
    /// How many client messages the chain has taken.
    pub(super) received: u64,
}

/// What a socket's writer got.
pub(super) enum Next {
    Message(Bytes),
    Empty,
    /// A newer socket has the connection.
    Superseded,
}

#[derive(Debug)]
struct Sockets {
    replay: ReplayBuffer,
    /// The generation of the current socket.
    current: u64,
    /// The current socket's reader, stopped when another socket takes over.
    reader: Option<AbortHandle>,
    /// Client messages the chain has taken, over every socket.
    received: u64,
}

#[derive(Debug)]
pub(super) struct WsConnection {
    pub(super) id: ConnectionId,
    pub(super) heard: Arc<Heard>,
    to_chain: Mutex<Option<mpsc::Sender<Bytes>>>,
    outbox: Mailbox,
    sockets: Mutex<Sockets>,
    /// Set once the chain has ended: the socket sends what is queued, then a close frame.
    closed: watch::Sender<bool>,
    /// The socket generation a resume window was last started for.
    detached: AtomicU64,
}

impl WsConnection {
    pub(super) fn new(
        id: ConnectionId,
        heard: Arc<Heard>,
        to_chain: mpsc::Sender<Bytes>,
        replay_budget: usize,
    ) -> Arc<WsConnection> {
        Arc::new(WsConnection {
            id,
            heard,
            to_chain: Mutex::new(Some(to_chain)),
            outbox: Mailbox::new(),
            sockets: Mutex::new(Sockets {
                replay: ReplayBuffer::new(replay_budget),
                current: 0,
                reader: None,
                received: 0,
            }),
            closed: watch::Sender::new(false),
            detached: AtomicU64::new(0),
        })
    }

    /// Makes a new socket the current one: the first (`resume` is `None`), or one resuming
    /// after `resume`, which gets the messages sent after it first. The socket before it
    /// stops reading at once and writing at its next message.
    pub(super) fn attach(&self, resume: Option<Cursor>) -> Result<Attached, ReplayRefusal> {
        let mut sockets = self.sockets.lock().expect("sockets");
        let replay = match resume {
            Some(from) => sockets.replay.resume(&None, from)?,
            None => Vec::new(),
        };
        if let Some(reader) = sockets.reader.take() {
            reader.abort();
        }
        sockets.current += 1;
        let generation = sockets.current;
        self.outbox.set_reader(generation);
        Ok(Attached {
            generation,
            replay,
            received: sockets.received,
        })
    }

    /// The reader task of socket `generation`, stopped if another socket takes over.
    pub(super) fn reading(&self, generation: u64, reader: AbortHandle) {
        let mut sockets = self.sockets.lock().expect("sockets");
        if sockets.current == generation {
            sockets.reader = Some(reader);
        } else {
            reader.abort();
        }
    }

    /// Whether socket `generation` is still the connection's.
    pub(super) fn is_current(&self, generation: u64) -> bool {
        self.sockets.lock().expect("sockets").current == generation
    }

    /// Queues a client message read on socket `generation` for the chain, counted as taken
    /// in the same step, so that a resuming client is told exactly what to send again. False
    /// once the chain's input is closed or another socket has the connection.
    pub(super) async fn to_chain(&self, generation: u64, message: Bytes) -> bool {
        let sender = self.to_chain.lock().expect("to_chain").clone();
        let Some(sender) = sender else {
            return false;
        };
        let Ok(permit) = sender.reserve().await else {
            return false;
        };
        let mut sockets = self.sockets.lock().expect("sockets");
        if sockets.current != generation {
            return false;
        }
        permit.send(message);
        sockets.received += 1;
        true
    }

    /// Closes the chain's editor input: the chain answers what is pending and stops.
    pub(super) fn end_input(&self) {
        self.to_chain.lock().expect("to_chain").take();
    }

    /// The next message from the chain for socket `generation`, kept for resumes under the
    /// next cursor (the client counts the messages it processed: the same number).
    pub(super) fn take(&self, generation: u64) -> Next {
        let mut sockets = self.sockets.lock().expect("sockets");
        loop {
            return match self.outbox.take(generation) {
                // Not sent, so not counted: the client's count and the cursors stay in step.
                Taken::Message(message) if std::str::from_utf8(&message).is_err() => {
                    tracing::warn!("dropped a message to the client that is not UTF-8");
                    continue;
                }
                Taken::Message(message) => {
                    sockets.replay.record(&None, message.clone());
                    Next::Message(message)
                }
                Taken::Empty => Next::Empty,
                Taken::Superseded => Next::Superseded,
            };
        }
    }

    /// Resolves at the next message or change of socket, once enabled (see [`Mailbox`]).
    pub(super) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.outbox.changed()
    }

    pub(super) fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    pub(super) fn has_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Marks socket `generation` as lost; true the first time, when its resume window starts.
    pub(super) fn lost(&self, generation: u64) -> bool {
        self.detached.fetch_max(generation, Ordering::AcqRel) < generation
            && self.is_current(generation)
    }

    fn close(&self) {
        self.end_input();
        self.closed.send_replace(true);
        self.outbox.wake();
    }
}

/// The chain's messages to a WebSocket client: queued for whichever socket is current.
pub struct WsOutbound {
    connection: Arc<WsConnection>,
    registry: Arc<Registry>,
    /// Counted open until the chain has ended.
    open: Option<OpenConnection>,
}

impl WsOutbound {
    pub(super) fn new(
        connection: Arc<WsConnection>,
        registry: Arc<Registry>,
        open: OpenConnection,
    ) -> WsOutbound {
        WsOutbound {
            connection,
            registry,
            open: Some(open),
        }
    }

    /// Waits while the queue is full (no socket, or a client not reading).
    pub(super) async fn send(&mut self, message: Bytes) {
        self.connection.outbox.put(message).await;
    }

    /// The chain has ended: the socket ends once it has sent what is queued, and the id is
    /// forgotten.
    pub(super) fn close(&mut self) {
        if self.open.take().is_some() {
            self.connection.close();
            self.registry.remove(self.connection.id.as_str());
        }
    }
}

impl Drop for WsOutbound {
    fn drop(&mut self) {
        self.close();
    }
}
