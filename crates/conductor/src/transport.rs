//! Moves frames between a peer's byte stream and the router: one reader and one writer per
//! link, with byte-counted outboxes and pausable readers for backpressure. Knows framing, not routing.
//!
//! Backpressure works without the router ever waiting on a peer: a frame is queued on the
//! destination's [`Outbox`] at once; when that outbox holds more than its limit, the router
//! pauses the *source* link's [`ReadGate`], so only the path into the slow peer stalls. The
//! writer reopens the gate (via [`Event::Drained`]) once the queue falls below half the limit.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use acp_wire::LineDecoder;
use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};

use crate::event::{Event, LinkId, ReadEvent};

/// Frames smaller than this are copied into one write buffer; larger ones are written as-is.
const COALESCE: usize = 64 * 1024;
const READ_CHUNK: usize = 64 * 1024;

/// Lets the router stop a reader from handing it more frames.
#[derive(Debug, Default)]
pub struct ReadGate {
    paused: AtomicBool,
    notify: Notify,
}

impl ReadGate {
    pub fn pause(&self) {
        self.paused.store(true, Ordering::SeqCst);
    }

    pub fn resume(&self) {
        self.paused.store(false, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    async fn wait_open(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.is_paused() {
                return;
            }
            notified.await;
        }
    }
}

/// Shared between the router (adds) and the writer (subtracts).
#[derive(Debug)]
struct OutboxLevel {
    queued: AtomicUsize,
    congested: AtomicBool,
    limit: usize,
}

/// The router's handle for sending frames to one peer. Never blocks.
#[derive(Debug, Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Bytes>,
    level: Arc<OutboxLevel>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Queued; the peer is keeping up.
    Flowing,
    /// Queued, but the peer is behind: pause whoever sent this until [`Event::Drained`].
    Congested,
    /// The peer's writer is gone; the frame was dropped.
    Closed,
}

impl Outbox {
    pub fn new(limit: usize) -> (Outbox, OutboxReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let level = Arc::new(OutboxLevel {
            queued: AtomicUsize::new(0),
            congested: AtomicBool::new(false),
            limit,
        });
        (
            Outbox {
                tx,
                level: level.clone(),
            },
            OutboxReceiver { rx, level },
        )
    }

    /// An outbox with no writer: whatever is sent to it is dropped. Replacing a link's
    /// outbox with it lets that link's writer finish its queue and close the output.
    pub fn closed() -> Outbox {
        Outbox::new(1).0
    }

    /// Queues one frame (without its newline).
    pub fn send(&self, frame: Bytes) -> Queued {
        let len = frame.len();
        let level = &self.level;
        // Count before handing over, so the writer never subtracts bytes not yet added.
        let queued = level.queued.fetch_add(len, Ordering::SeqCst) + len;
        if self.tx.send(frame).is_err() {
            level.queued.fetch_sub(len, Ordering::SeqCst);
            return Queued::Closed;
        }
        if queued <= level.limit {
            return Queued::Flowing;
        }
        level.congested.store(true, Ordering::SeqCst);
        // The writer may have drained below the resume mark before it could see the flag.
        if level.queued.load(Ordering::SeqCst) < level.limit / 2 {
            level.congested.store(false, Ordering::SeqCst);
            return Queued::Flowing;
        }
        Queued::Congested
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.level.queued.load(Ordering::SeqCst)
    }
}

/// The writer's end of an [`Outbox`].
#[derive(Debug)]
pub struct OutboxReceiver {
    rx: mpsc::UnboundedReceiver<Bytes>,
    level: Arc<OutboxLevel>,
}

impl OutboxReceiver {
    /// Accounts for `written` bytes; true when a paused sender should be resumed.
    fn written(&self, written: usize) -> bool {
        let left = self.level.queued.fetch_sub(written, Ordering::SeqCst) - written;
        left < self.level.limit / 2 && self.level.congested.swap(false, Ordering::SeqCst)
    }
}

/// Gathers frames into newline-terminated write batches.
struct Batch {
    buf: Vec<u8>,
    frame_bytes: usize,
}

impl Batch {
    fn new() -> Self {
        Batch {
            buf: Vec::with_capacity(COALESCE),
            frame_bytes: 0,
        }
    }

    /// Adds a small frame; returns the frame back when it is too big to copy.
    fn push(&mut self, frame: Bytes) -> Option<Bytes> {
        if frame.len() >= COALESCE {
            return Some(frame);
        }
        self.frame_bytes += frame.len();
        self.buf.extend_from_slice(&frame);
        self.buf.push(b'\n');
        None
    }

    fn is_full(&self) -> bool {
        self.buf.len() >= COALESCE
    }
}

/// Writes an outbox to an async byte stream (a child's stdin, an in-memory pipe) until the
/// outbox is dropped, then closes the stream so the peer sees EOF.
pub async fn write_async<W: AsyncWrite + Unpin>(
    link: LinkId,
    mut out: W,
    mut rx: OutboxReceiver,
    events: mpsc::Sender<Event>,
    stall_timeout: Duration,
) {
    let result = async {
        while let Some(first) = rx.rx.recv().await {
            let mut batch = Batch::new();
            let mut next = Some(first);
            while let Some(frame) = next.take() {
                if let Some(big) = batch.push(frame) {
                    write_stalled(&mut out, &batch.buf, stall_timeout).await?;
                    write_stalled(&mut out, &big, stall_timeout).await?;
                    write_stalled(&mut out, b"\n", stall_timeout).await?;
                    let done = batch.frame_bytes + big.len();
                    batch = Batch::new();
                    if rx.written(done) {
                        let _ = events.send(Event::Drained { link }).await;
                    }
                }
                if !batch.is_full() {
                    next = rx.rx.try_recv().ok();
                }
            }
            write_stalled(&mut out, &batch.buf, stall_timeout).await?;
            timeout_io(out.flush(), stall_timeout).await?;
            if rx.written(batch.frame_bytes) {
                let _ = events.send(Event::Drained { link }).await;
            }
        }
        Ok::<(), WriteFailure>(())
    }
    .await;
    match result {
        Ok(()) => {
            let _ = tokio::time::timeout(stall_timeout, out.shutdown()).await;
        }
        Err(failure) => {
            let _ = events
                .send(Event::WriteFailed {
                    link,
                    stalled: matches!(failure, WriteFailure::Stalled(_)),
                    reason: failure.to_string(),
                })
                .await;
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum WriteFailure {
    #[error("stopped reading its input for more than {0:?}")]
    Stalled(Duration),
    #[error("write failed: {0}")]
    Io(#[from] std::io::Error),
}

async fn write_stalled<W: AsyncWrite + Unpin>(
    out: &mut W,
    bytes: &[u8],
    limit: Duration,
) -> Result<(), WriteFailure> {
    if bytes.is_empty() {
        return Ok(());
    }
    timeout_io(out.write_all(bytes), limit).await
}

async fn timeout_io(
    io: impl Future<Output = std::io::Result<()>>,
    limit: Duration,
) -> Result<(), WriteFailure> {
    match tokio::time::timeout(limit, io).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(WriteFailure::Stalled(limit)),
    }
}

/// Writes an outbox to a blocking writer (the conductor's own stdout) on a dedicated thread:
/// blocking writes on a thread beat tokio's stdout, which hops to the blocking pool per write.
pub fn write_blocking<W: Write + Send + 'static>(
    link: LinkId,
    mut out: W,
    mut rx: OutboxReceiver,
    events: mpsc::Sender<Event>,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("link-{link}-writer"))
        .spawn(move || {
            let result = (|| {
                while let Some(first) = rx.rx.blocking_recv() {
                    let mut batch = Batch::new();
                    let mut next = Some(first);
                    while let Some(frame) = next.take() {
                        if let Some(big) = batch.push(frame) {
                            out.write_all(&batch.buf)?;
                            out.write_all(&big)?;
                            out.write_all(b"\n")?;
                            let done = batch.frame_bytes + big.len();
                            batch = Batch::new();
                            if rx.written(done) {
                                let _ = events.blocking_send(Event::Drained { link });
                            }
                        }
                        if !batch.is_full() {
                            next = rx.rx.try_recv().ok();
                        }
                    }
                    out.write_all(&batch.buf)?;
                    out.flush()?;
                    if rx.written(batch.frame_bytes) {
                        let _ = events.blocking_send(Event::Drained { link });
                    }
                }
                Ok::<(), std::io::Error>(())
            })();
            if let Err(e) = result {
                let _ = events.blocking_send(Event::WriteFailed {
                    link,
                    reason: format!("write failed: {e}"),
                    stalled: false,
                });
            }
        })
        .expect("spawn writer thread")
}

/// Splits bytes into frames and hands them to the router in per-read batches.
struct FrameReader {
    link: LinkId,
    buf: BytesMut,
    decoder: LineDecoder,
}

impl FrameReader {
    fn new(link: LinkId, max_line: usize) -> Self {
        FrameReader {
            link,
            buf: BytesMut::with_capacity(READ_CHUNK),
            decoder: LineDecoder::new(max_line),
        }
    }

    fn make_room(&mut self) {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 8 {
            self.buf.reserve(READ_CHUNK.max(self.buf.len()));
        }
    }

    /// Everything decodable now, in order: frames batched, framing errors as their own events.
    fn drain(&mut self, eof: bool) -> Vec<Event> {
        let mut events = Vec::new();
        let mut frames = Vec::new();
        loop {
            let item = if eof {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            match item {
                Some(Ok(frame)) => frames.push(frame),
                Some(Err(e)) => {
                    if !frames.is_empty() {
                        events.push(self.event(ReadEvent::Frames(std::mem::take(&mut frames))));
                    }
                    events.push(self.event(ReadEvent::TooLong(e)));
                }
                None => break,
            }
        }
        if !frames.is_empty() {
            events.push(self.event(ReadEvent::Frames(frames)));
        }
        events
    }

    fn event(&self, event: ReadEvent) -> Event {
        Event::Read {
            link: self.link,
            event,
        }
    }
}

/// Reads an async byte stream (a child's stdout, an in-memory pipe) until EOF.
pub async fn read_async<R: AsyncRead + Unpin>(
    link: LinkId,
    mut input: R,
    events: mpsc::Sender<Event>,
    gate: Arc<ReadGate>,
    max_line: usize,
) {
    let mut reader = FrameReader::new(link, max_line);
    let closed = loop {
        reader.make_room();
        match input.read_buf(&mut reader.buf).await {
            Ok(0) => break None,
            Ok(_) => {
                for ev in reader.drain(false) {
                    gate.wait_open().await;
                    if events.send(ev).await.is_err() {
                        return;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Some(e.to_string()),
        }
    };
    for ev in reader.drain(true) {
        gate.wait_open().await;
        if events.send(ev).await.is_err() {
            return;
        }
    }
    let _ = events
        .send(Event::Read {
            link,
            event: ReadEvent::Closed(closed),
        })
        .await;
}

/// Reads a blocking byte stream (the conductor's own stdin) on a dedicated thread.
pub fn read_blocking<R: Read + Send + 'static>(
    link: LinkId,
    mut input: R,
    events: mpsc::Sender<Event>,
    gate: Arc<ReadGate>,
    max_line: usize,
    runtime: tokio::runtime::Handle,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("link-{link}-reader"))
        .spawn(move || {
            let mut reader = FrameReader::new(link, max_line);
            let mut chunk = vec![0u8; READ_CHUNK];
            let send = |ev: Event| {
                if gate.is_paused() {
                    runtime.block_on(gate.wait_open());
                }
                events.blocking_send(ev).is_ok()
            };
            let closed = loop {
                match input.read(&mut chunk) {
                    Ok(0) => break None,
                    Ok(n) => {
                        reader.make_room();
                        reader.buf.extend_from_slice(&chunk[..n]);
                        for ev in reader.drain(false) {
                            if !send(ev) {
                                return;
                            }
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => break Some(e.to_string()),
                }
            };
            for ev in reader.drain(true) {
                if !send(ev) {
                    return;
                }
            }
            let _ = events.blocking_send(Event::Read {
                link,
                event: ReadEvent::Closed(closed),
            });
        })
        .expect("spawn reader thread")
}
