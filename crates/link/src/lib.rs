//! acp-link: the one place that makes links. A link is the router's handle on one peer (an outbox to send
//! frames, a gate to pause what the peer sends) plus the read loop and write loop that move
//! frames between that handle and the peer. Knows framing and I/O, never routing.
//!
//! Every way a peer is reached has a constructor on [`Links`], and every link gets the same
//! configured limits and reports to the same event channel:
//!
//! | constructor | peer | loops run on |
//! |---|---|---|
//! | [`Links::streams`] | a pair of async byte streams: a socket, an in-memory duplex | tasks |
//! | [`Links::pipes`] | a child's stdout and stdin, grown for big messages | tasks |
//! | [`Links::stdio`] | the conductor's own stdin and stdout: pipes and sockets non-blocking | tasks (else threads) |
//! | [`Links::blocking`] | blocking descriptors | threads |
//! | [`Links::messages`] | a message-framed transport, each message one frame (a WebSocket) | tasks |
//! | [`Links::memory`] | an in-memory [`MemoryPeer`], for tests | tasks |
//!
//! [`Links::held`] makes any of these with its reader held at a closed gate, for a link the
//! router learns of from an event: the router opens it once the link is registered.
//!
//! Backpressure works without the router ever waiting on a peer: a frame is queued on the
//! destination's [`Outbox`] at once; when that outbox holds more than its limit, the router
//! pauses the *source* link's [`ReadGate`], so only the path into the slow peer stalls. The
//! writer reports [`LinkEvent::Drained`] once the queue falls below half the limit.

mod byte_stream;
pub mod event;
mod memory;
mod message_stream;
mod outbox;
mod pipe;
mod read_gate;
mod reader;
mod stdio;
pub mod transport;
mod writer;

#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

pub use acp_router::{LinkEvent, LinkId};

pub use crate::event::{Event, ExitStatus};
use acp_trace::TraceSink;
use byte_stream::{AsyncStream, BlockingStream};
pub use memory::MemoryPeer;
pub use message_stream::{MessageSink, MessageSource};
pub use outbox::{Outbox, OutboxReceiver, Queued};
use pipe::Pipe;
pub use read_gate::ReadGate;

/// The router's handle on one peer.
#[derive(Debug)]
pub struct Link {
    pub id: LinkId,
    pub outbox: Outbox,
    pub gate: Arc<ReadGate>,
}

/// The limits every link of a run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkLimits {
    /// Longest accepted frame, in bytes; longer ones are dropped unread.
    pub max_line: usize,
    /// Bytes queued toward the peer before senders to it are paused.
    pub queue_limit: usize,
    /// How long a write may make no progress before the peer is failed; also how long a
    /// component (a child, a WASM guest, a shim) may leave a line half written.
    pub write_timeout: Duration,
}

/// Learns when a link's loops have ended: the reader after it reported the end of the
/// peer's output, the writer after it wrote everything queued and closed the output.
#[derive(Debug, Clone)]
pub struct LinkDone {
    reader: watch::Receiver<bool>,
    writer: watch::Receiver<bool>,
}

impl LinkDone {
    pub async fn reader_finished(&self) {
        let _ = self.reader.clone().wait_for(|done| *done).await;
    }

    pub async fn writer_finished(&self) {
        let _ = self.writer.clone().wait_for(|done| *done).await;
    }

    pub fn writer_has_finished(&self) -> bool {
        *self.writer.borrow()
    }
}

/// Marks a loop finished when dropped, whether it returned, panicked or was cancelled.
struct Finished(watch::Sender<bool>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

async fn until_finished<F: Future>(work: F, finished: Finished) -> F::Output {
    let _finished = finished;
    work.await
}

/// Makes the links of one run: each gets a fresh id, the run's limits, and reports to the
/// router's event channel. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Links {
    events: mpsc::Sender<Event>,
    limits: LinkLimits,
    last_id: Arc<AtomicUsize>,
    /// Links made start with their read gate closed.
    held: bool,
    /// Where write loops record what they write, when the run is traced.
    trace: Option<TraceSink>,
}

/// What every constructor makes before it starts the loops.
struct Parts {
    link: Link,
    outbox: OutboxReceiver,
    reader_done: Finished,
    writer_done: Finished,
    done: LinkDone,
}

impl Links {
    pub fn new(events: mpsc::Sender<Event>, limits: LinkLimits) -> Links {
        Links {
            events,
            limits,
            last_id: Arc::new(AtomicUsize::new(0)),
            held: false,
            trace: None,
        }
    }

    /// The same maker, for a traced run: the write loops of the links it makes record every
    /// frame they write.
    pub fn traced(self, trace: Option<TraceSink>) -> Links {
        Links { trace, ..self }
    }

    /// The run's trace, when it is traced.
    pub fn trace(&self) -> Option<&TraceSink> {
        self.trace.as_ref()
    }

    /// The same maker for links the router learns of from an event (a bridge shim dialing
    /// in): each one's reader is held at its gate until the router opens it, so that nothing
    /// the peer sends can reach the router before the news of the link does.
    pub fn held(&self) -> Links {
        Links {
            held: true,
            ..self.clone()
        }
    }

    pub fn limits(&self) -> LinkLimits {
        self.limits
    }

    fn next_id(&self) -> LinkId {
        LinkId(self.last_id.fetch_add(1, Ordering::Relaxed))
    }

    fn parts(&self) -> Parts {
        let (outbox, receiver) = Outbox::new(self.limits.queue_limit);
        let gate = ReadGate::default();
        if self.held {
            gate.pause();
        }
        let (reader_tx, reader) = watch::channel(false);
        let (writer_tx, writer) = watch::channel(false);
        Parts {
            link: Link {
                id: self.next_id(),
                outbox,
                gate: Arc::new(gate),
            },
            outbox: receiver,
            reader_done: Finished(reader_tx),
            writer_done: Finished(writer_tx),
            done: LinkDone { reader, writer },
        }
    }

    /// A peer reached through a pair of async byte streams: a child's stdout and stdin, a
    /// socket's halves, an in-memory duplex pipe. Its loops run as tasks; the write closes
    /// `to_peer` when the link is dropped, so the peer reads its end.
    pub fn streams<R, W>(&self, from_peer: R, to_peer: W) -> (Link, LinkDone)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let source = reader::Lines::new(AsyncStream(from_peer), self.limits.max_line)
            .with_partial_line_timeout(self.limits.write_timeout);
        let sink = writer::Lines::new(AsyncStream(to_peer));
        self.spawn_tasks(source, sink)
    }

    /// A peer reached through pipes (a child's stdout and stdin): as [`Links::streams`], and
    /// each pipe is grown the first time a message does not fit it.
    pub fn pipes<R, W>(&self, from_peer: R, to_peer: W) -> (Link, LinkDone)
    where
        R: AsyncRead + AsRawFd + Unpin + Send + 'static,
        W: AsyncWrite + AsRawFd + Unpin + Send + 'static,
    {
        let source = reader::Lines::new(Pipe::new(from_peer), self.limits.max_line)
            .with_partial_line_timeout(self.limits.write_timeout);
        let sink = writer::Lines::new(Pipe::new(to_peer));
        self.spawn_tasks(source, sink)
    }

    /// A peer whose transport delivers whole messages (a WebSocket): each message is one
    /// frame. Its loops run as tasks.
    pub fn messages<S, K>(&self, from_peer: S, to_peer: K) -> (Link, LinkDone)
    where
        S: MessageSource,
        K: MessageSink,
    {
        let source = reader::Messages::new(from_peer, self.limits.max_line);
        self.spawn_tasks(source, writer::Messages::new(to_peer))
    }

    /// The conductor's own stdin and stdout (the editor, or a parent conductor). A pipe or
    /// socket is made non-blocking and served by a task, on the runtime's thread like the
    /// router (no hand-over between threads per message); anything else (a terminal, a file)
    /// by a thread of its own, as [`Links::blocking`] does. Neither way has a write timeout:
    /// a peer that stops reading pauses what is sent toward it, and memory stays bounded by
    /// the queue limit.
    ///
    /// Must be called inside the runtime.
    pub fn stdio(&self, input: OwnedFd, output: OwnedFd) -> (Link, LinkDone) {
        let runtime = tokio::runtime::Handle::current();
        let parts = self.parts();
        let id = parts.link.id;
        let events = &self.events;
        let gate = &parts.link.gate;
        let max_line = self.limits.max_line;
        match stdio::input(input) {
            Ok(pipe) => {
                let source = reader::Lines::new(Pipe::new(pipe), max_line);
                let read = reader::read_loop(id, source, events.clone(), gate.clone());
                transport::spawn(until_finished(read, parts.reader_done));
            }
            Err(fd) => {
                let source = reader::Lines::new(BlockingStream::new(File::from(fd)), max_line);
                let read = reader::read_loop(id, source, events.clone(), gate.clone());
                let read = until_finished(read, parts.reader_done);
                on_thread(&runtime, id, "reader", read);
            }
        }
        let trace = self.trace.clone();
        match stdio::output(output) {
            Ok(pipe) => {
                let sink = writer::Lines::new(Pipe::new(pipe));
                let write = writer::write_loop(id, sink, parts.outbox, events.clone(), None, trace);
                transport::spawn(until_finished(write, parts.writer_done));
            }
            Err(fd) => {
                let sink = writer::Lines::new(BlockingStream::new(File::from(fd)));
                let write = writer::write_loop(id, sink, parts.outbox, events.clone(), None, trace);
                on_thread(
                    &runtime,
                    id,
                    "writer",
                    until_finished(write, parts.writer_done),
                );
            }
        }
        (parts.link, parts.done)
    }

    /// An in-memory peer, for tests: the link, and the peer's end. The peer reads through a
    /// queue of `capacity` frames; a peer that stops reading holds up the link's writer.
    pub fn memory(&self, capacity: usize) -> (Link, MemoryPeer) {
        let (to_link, from_peer) = mpsc::unbounded_channel();
        let (to_peer, from_link) = mpsc::channel(capacity.max(1));
        let (link, _done) = self.messages(from_peer, to_peer);
        (link, MemoryPeer::new(to_link, from_link))
    }

    /// A peer reached through blocking descriptors (what [`Links::stdio`] does for a
    /// terminal or a file). Each loop runs on a thread of its own, named after the link. A blocking write cannot
    /// be interrupted, so this link has no write timeout: a peer that stops reading pauses
    /// what is sent toward it, and memory stays bounded by the queue limit.
    ///
    /// Must be called inside the runtime.
    pub fn blocking<R, W>(&self, from_peer: R, to_peer: W) -> (Link, LinkDone)
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let runtime = tokio::runtime::Handle::current();
        let parts = self.parts();
        let id = parts.link.id;
        let source = reader::Lines::new(BlockingStream::new(from_peer), self.limits.max_line);
        let sink = writer::Lines::new(BlockingStream::new(to_peer));
        let read = reader::read_loop(id, source, self.events.clone(), parts.link.gate.clone());
        let write = writer::write_loop(
            id,
            sink,
            parts.outbox,
            self.events.clone(),
            None,
            self.trace.clone(),
        );
        on_thread(
            &runtime,
            id,
            "reader",
            until_finished(read, parts.reader_done),
        );
        on_thread(
            &runtime,
            id,
            "writer",
            until_finished(write, parts.writer_done),
        );
        (parts.link, parts.done)
    }

    /// A link to a peer that never started: what is sent to it is dropped, and it reports
    /// nothing. The component's failure is reported on its own.
    pub fn unconnected(&self) -> Link {
        Link {
            id: self.next_id(),
            outbox: Outbox::closed(),
            gate: Arc::new(ReadGate::default()),
        }
    }

    fn spawn_tasks(
        &self,
        source: impl reader::FrameSource,
        sink: impl writer::FrameSink,
    ) -> (Link, LinkDone) {
        let parts = self.parts();
        let id = parts.link.id;
        let read = reader::read_loop(id, source, self.events.clone(), parts.link.gate.clone());
        let stall = Some(self.limits.write_timeout);
        let write = writer::write_loop(
            id,
            sink,
            parts.outbox,
            self.events.clone(),
            stall,
            self.trace.clone(),
        );
        transport::spawn(until_finished(read, parts.reader_done));
        transport::spawn(until_finished(write, parts.writer_done));
        (parts.link, parts.done)
    }
}

/// Runs one loop of a blocking link on a thread of its own, inside the runtime's context.
fn on_thread(
    runtime: &tokio::runtime::Handle,
    link: LinkId,
    role: &str,
    work: impl Future<Output = ()> + Send + 'static,
) {
    let runtime = runtime.clone();
    std::thread::Builder::new()
        .name(format!("link-{}-{role}", link.0))
        .spawn(move || runtime.block_on(work))
        .expect("spawn a link thread");
}
