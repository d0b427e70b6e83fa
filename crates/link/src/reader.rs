//! The one read loop every link runs: frames from the peer, handed to the router in arrival
//! order and in per-read batches, waiting at the read gate while the router has paused it.
//! Knows framing, not routing.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use acp_wire::frame::TopLevel;
use acp_wire::{FrameError, LineDecoder};
use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

use super::byte_stream::{ByteRead, READ_CHUNK};
use super::message_stream::MessageSource;
use super::read_gate::ReadGate;
use super::{LinkEvent, LinkId};
use crate::event::Event;

/// Where a link's frames come from: lines of a byte stream, or whole messages.
pub(super) trait FrameSource: Send + 'static {
    /// Waits for input and appends the frames (and framing errors) it completes to `batch`;
    /// `Ok(false)` once the input has ended.
    fn read(&mut self, batch: &mut ReadBatch) -> impl Future<Output = io::Result<bool>> + Send;
}

/// What one read produced, as the events the router will get: consecutive frames share one
/// event, a framing error is an event of its own, in stream order.
#[derive(Debug, Default)]
pub(super) struct ReadBatch(Vec<LinkEvent>);

impl ReadBatch {
    fn frame(&mut self, frame: Bytes) {
        match self.0.last_mut() {
            Some(LinkEvent::Frames(frames)) => frames.push(frame),
            _ => self.0.push(LinkEvent::Frames(vec![frame])),
        }
    }

    fn too_long(&mut self, error: FrameError) {
        self.0.push(LinkEvent::TooLong(error));
    }
}

/// Reads `source` until it ends, then reports the end; stops early if the router is gone.
pub(super) async fn read_loop(
    link: LinkId,
    mut source: impl FrameSource,
    events: mpsc::Sender<Event>,
    gate: Arc<ReadGate>,
) {
    let mut batch = ReadBatch::default();
    let closed = loop {
        let read = source.read(&mut batch).await;
        for event in batch.0.drain(..) {
            gate.wait_open().await;
            if events.send(Event::Link { link, event }).await.is_err() {
                return;
            }
        }
        match read {
            Ok(true) => {}
            Ok(false) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    let _ = events
        .send(Event::Link {
            link,
            event: LinkEvent::Closed(closed),
        })
        .await;
}

/// Frames as lines of a byte stream, each at most `max_line` bytes.
pub(super) struct Lines<R> {
    input: R,
    buf: BytesMut,
    decoder: LineDecoder,
    /// How long the peer may leave a line half written (bytes read, no newline yet) before
    /// its output counts as failed; `None` waits forever (the editor, who may be typing).
    partial_line_timeout: Option<Duration>,
}

impl<R: ByteRead> Lines<R> {
    pub(super) fn new(input: R, max_line: usize) -> Self {
        Lines {
            input,
            buf: BytesMut::with_capacity(READ_CHUNK),
            decoder: LineDecoder::new(max_line),
            partial_line_timeout: None,
        }
    }

    /// A component that stops in the middle of a line (a write cut short, a runtime that
    /// dropped the rest) would otherwise hold the chain forever: nobody times out a message
    /// that was never complete, and the component itself waits for input.
    pub(super) fn with_partial_line_timeout(mut self, limit: Duration) -> Self {
        self.partial_line_timeout = Some(limit);
        self
    }

    /// Everything decodable now; at the end of the stream an unterminated last line counts.
    fn decode(&mut self, batch: &mut ReadBatch, at_end: bool) {
        loop {
            let item = if at_end {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            match item {
                Some(Ok(frame)) => batch.frame(frame),
                Some(Err(error)) => batch.too_long(error),
                None => return,
            }
        }
    }
}

impl<R: ByteRead> FrameSource for Lines<R> {
    async fn read(&mut self, batch: &mut ReadBatch) -> io::Result<bool> {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 8 {
            self.buf.reserve(READ_CHUNK.max(self.buf.len()));
        }
        let read = match self.partial_line_timeout.filter(|_| !self.buf.is_empty()) {
            None => self.input.read_into(&mut self.buf).await,
            Some(limit) => {
                match tokio::time::timeout(limit, self.input.read_into(&mut self.buf)).await {
                    Ok(read) => read,
                    Err(_) => {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "wrote {} bytes of a line and nothing more for {limit:?}",
                                self.buf.len()
                            ),
                        ));
                    }
                }
            }
        };
        match read {
            Ok(0) => {
                self.decode(batch, true);
                Ok(false)
            }
            Ok(_) => {
                self.decode(batch, false);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(true),
            Err(e) => {
                // What arrived before the failure is still delivered.
                self.decode(batch, true);
                Err(e)
            }
        }
    }
}

/// Frames as whole messages, each at most `max_line` bytes.
pub(super) struct Messages<S> {
    source: S,
    max_line: usize,
}

impl<S: MessageSource> Messages<S> {
    pub(super) fn new(source: S, max_line: usize) -> Self {
        Messages { source, max_line }
    }
}

impl<S: MessageSource> FrameSource for Messages<S> {
    async fn read(&mut self, batch: &mut ReadBatch) -> io::Result<bool> {
        match self.source.next_message().await {
            None => Ok(false),
            Some(Err(e)) => Err(e),
            Some(Ok(message)) if message.len() > self.max_line => {
                batch.too_long(FrameError::TooLong {
                    limit: self.max_line,
                    len: message.len(),
                    seen: TopLevel::of(&message),
                });
                Ok(true)
            }
            Some(Ok(message)) => {
                if let Some(frame) = one_line(message) {
                    batch.frame(frame);
                }
                Ok(true)
            }
        }
    }
}

/// A message as a frame that can travel as one line: line breaks at its end removed, any
/// inside it (whitespace between JSON tokens; inside strings they must be escaped) turned
/// into spaces. `None` for a blank message, which lines skip too.
fn one_line(message: Bytes) -> Option<Bytes> {
    let end = message
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r' | b' ' | b'\t'))?;
    let message = message.slice(..=end);
    if memchr::memchr2(b'\n', b'\r', &message).is_none() {
        return Some(message);
    }
    let spaced: Vec<u8> = message
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    Some(Bytes::from(spaced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_becomes_one_line() {
        let line = |s: &'static str| one_line(Bytes::from_static(s.as_bytes()));
        assert_eq!(line("{\"a\":1}").unwrap(), &b"{\"a\":1}"[..]);
        assert_eq!(line("{\"a\":1}\r\n").unwrap(), &b"{\"a\":1}"[..]);
        assert_eq!(
            line("{\n  \"a\": \"x\\ny\"\r\n}\n").unwrap(),
            &b"{   \"a\": \"x\\ny\"  }"[..]
        );
        assert_eq!(line(" \r\n\t"), None);
        assert_eq!(line(""), None);
    }
}
