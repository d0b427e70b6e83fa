//! The one write loop every link runs: frames from the link's outbox to the peer, gathered
//! into few writes, with progress reported for backpressure and a stall failing the peer.
//! Knows framing, not routing.

use std::io;
use std::time::Duration;

use acp_wire::LineEncoder;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::byte_stream::ByteWrite;
use super::message_stream::MessageSink;
use super::outbox::OutboxReceiver;
use super::{LinkEvent, LinkId};
use crate::event::Event;
use acp_trace::TraceSink;

/// Frames shorter than this are copied into one write; longer ones are written as they are.
const COALESCE: usize = 64 * 1024;

/// Where a link's frames go: lines of a byte stream, or whole messages.
pub(super) trait FrameSink: Send + 'static {
    /// Takes one frame; true when enough is waiting that it should be written out now.
    fn push(&mut self, frame: Bytes) -> bool;
    /// Writes out what was pushed; returns the bytes of the frames written.
    fn write_out(&mut self) -> impl Future<Output = io::Result<usize>> + Send;
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// Ends the output so the peer sees the end.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// Writes the outbox to `sink` until every handle on the outbox is dropped, then closes the
/// output. A write that makes no progress for `stall` fails the link; `None` waits forever.
/// In a traced run, every frame is recorded as it is handed to the sink (the trace point of
/// frames out, the same for every kind of link).
pub(super) async fn write_loop(
    link: LinkId,
    mut sink: impl FrameSink,
    mut outbox: OutboxReceiver,
    events: mpsc::Sender<Event>,
    stall: Option<Duration>,
    trace: Option<TraceSink>,
) {
    let pumped = async {
        while let Some(first) = outbox.recv().await {
            let mut next = Some(first);
            while let Some(frame) = next.take() {
                if let Some(trace) = &trace {
                    trace.frame_out(link, &frame);
                }
                if sink.push(frame) {
                    let written = within(stall, sink.write_out()).await?;
                    if outbox.written(written) {
                        report_drained(&events, link).await;
                    }
                }
                next = outbox.try_recv();
            }
            let written = within(stall, sink.write_out()).await?;
            within(stall, sink.flush()).await?;
            if outbox.written(written) {
                report_drained(&events, link).await;
            }
        }
        Ok::<(), WriteFailure>(())
    }
    .await;
    match pumped {
        Ok(()) => {
            let _ = within(stall, sink.close()).await;
        }
        Err(failure) => {
            let _ = events
                .send(Event::Link {
                    link,
                    event: LinkEvent::WriteFailed {
                        stalled: matches!(failure, WriteFailure::Stalled(_)),
                        reason: failure.to_string(),
                    },
                })
                .await;
        }
    }
}

/// The outbox fell below its resume mark: senders paused on it may go on.
async fn report_drained(events: &mpsc::Sender<Event>, link: LinkId) {
    let event = LinkEvent::Drained;
    let _ = events.send(Event::Link { link, event }).await;
}

#[derive(Debug, thiserror::Error)]
enum WriteFailure {
    #[error("stopped reading its input for more than {0:?}")]
    Stalled(Duration),
    #[error("write failed: {0}")]
    Io(#[from] io::Error),
}

async fn within<T>(
    limit: Option<Duration>,
    io: impl Future<Output = io::Result<T>>,
) -> Result<T, WriteFailure> {
    match limit {
        None => Ok(io.await?),
        Some(limit) => match tokio::time::timeout(limit, io).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(WriteFailure::Stalled(limit)),
        },
    }
}

/// Frames written as lines of a byte stream.
pub(super) struct Lines<W> {
    output: W,
    encoder: LineEncoder,
}

impl<W: ByteWrite> Lines<W> {
    pub(super) fn new(output: W) -> Self {
        Lines {
            output,
            encoder: LineEncoder::new(COALESCE),
        }
    }
}

impl<W: ByteWrite> FrameSink for Lines<W> {
    fn push(&mut self, frame: Bytes) -> bool {
        self.encoder.encode(frame)
    }

    async fn write_out(&mut self) -> io::Result<usize> {
        let Lines { output, encoder } = self;
        for chunk in encoder.chunks() {
            output.write_all(chunk).await?;
        }
        Ok(encoder.written())
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.output.flush().await
    }

    async fn close(&mut self) -> io::Result<()> {
        self.output.shutdown().await
    }
}

/// Frames sent as whole messages.
pub(super) struct Messages<S> {
    sink: S,
    waiting: Vec<Bytes>,
    waiting_bytes: usize,
}

impl<S: MessageSink> Messages<S> {
    pub(super) fn new(sink: S) -> Self {
        Messages {
            sink,
            waiting: Vec::new(),
            waiting_bytes: 0,
        }
    }
}

impl<S: MessageSink> FrameSink for Messages<S> {
    fn push(&mut self, frame: Bytes) -> bool {
        self.waiting_bytes += frame.len();
        self.waiting.push(frame);
        self.waiting_bytes >= COALESCE
    }

    async fn write_out(&mut self) -> io::Result<usize> {
        for message in self.waiting.drain(..) {
            self.sink.send(message).await?;
        }
        Ok(std::mem::take(&mut self.waiting_bytes))
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.sink.flush().await
    }

    async fn close(&mut self) -> io::Result<()> {
        self.sink.close().await
    }
}
