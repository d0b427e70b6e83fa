//! Peers reached as whole messages, each already one frame: a WebSocket, an in-memory
//! channel. No line splitting on the way in, no newline on the way out. Knows no framing.

use std::io;

use bytes::Bytes;
use tokio::sync::mpsc;

/// Where a message-framed peer's messages come from.
pub trait MessageSource: Send + 'static {
    /// The next message; `None` once the peer has ended, an error if the transport failed.
    fn next_message(&mut self) -> impl Future<Output = Option<io::Result<Bytes>>> + Send;
}

/// Where messages to a message-framed peer go.
pub trait MessageSink: Send + 'static {
    /// Sends one message; may wait while the peer is not taking any.
    fn send(&mut self, message: Bytes) -> impl Future<Output = io::Result<()>> + Send;
    /// Pushes out whatever the transport buffers.
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// Ends the stream, so the peer sees the end.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

impl MessageSource for mpsc::UnboundedReceiver<Bytes> {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        self.recv().await.map(Ok)
    }
}

impl MessageSink for mpsc::Sender<Bytes> {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        mpsc::Sender::send(self, message)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the peer is gone"))
    }

    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// The channel closes when the sender is dropped, which the write loop does next.
    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl MessageSource for mpsc::Receiver<Bytes> {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        self.recv().await.map(Ok)
    }
}
