//! Peers reached as a byte stream: async streams (child pipes, sockets, in-memory duplex
//! pipes) and blocking file descriptors (the editor's stdio, driven from threads). Bytes only.
//!
//! Both kinds present the same two small async traits to the read and write loops. A blocking
//! stream's futures do their I/O when polled and are always ready: its loop runs on a thread
//! of its own under `Handle::block_on`, where blocking is what we want. Measured: a dedicated
//! thread with a blocking `write` is one syscall per batch, where tokio's `Stdout` hops to
//! the blocking pool on every write.

use std::io::{self, Read, Write};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How many bytes one read asks for.
pub(super) const READ_CHUNK: usize = 64 * 1024;

/// Reads bytes from a peer.
pub(super) trait ByteRead: Send + 'static {
    /// Appends what arrives next to `buf` (which has room); 0 at the end of the stream.
    fn read_into(&mut self, buf: &mut BytesMut) -> impl Future<Output = io::Result<usize>> + Send;
}

/// Writes bytes to a peer.
pub(super) trait ByteWrite: Send + 'static {
    fn write_all(&mut self, bytes: &[u8]) -> impl Future<Output = io::Result<()>> + Send;
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// Ends the stream, so the peer reads its end.
    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// A tokio byte stream.
pub(super) struct AsyncStream<T>(pub T);

impl<R: AsyncRead + Unpin + Send + 'static> ByteRead for AsyncStream<R> {
    async fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        self.0.read_buf(buf).await
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> ByteWrite for AsyncStream<W> {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        AsyncWriteExt::write_all(&mut self.0, bytes).await
    }

    async fn flush(&mut self) -> io::Result<()> {
        AsyncWriteExt::flush(&mut self.0).await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        AsyncWriteExt::shutdown(&mut self.0).await
    }
}

/// A blocking reader or writer, for a loop that runs on a thread of its own.
pub(super) struct BlockingStream<T> {
    io: T,
    /// Where a blocking read lands before it is appended (reads need initialized memory).
    scratch: Vec<u8>,
}

impl<T> BlockingStream<T> {
    pub(super) fn new(io: T) -> Self {
        BlockingStream {
            io,
            scratch: Vec::new(),
        }
    }
}

impl<R: Read + Send + 'static> ByteRead for BlockingStream<R> {
    async fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if self.scratch.is_empty() {
            self.scratch = vec![0; READ_CHUNK];
        }
        let n = self.io.read(&mut self.scratch)?;
        buf.extend_from_slice(&self.scratch[..n]);
        Ok(n)
    }
}

impl<W: Write + Send + 'static> ByteWrite for BlockingStream<W> {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes)
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.io.flush()
    }

    /// Dropping the writer closes the descriptor; nothing to do before that.
    async fn shutdown(&mut self) -> io::Result<()> {
        self.io.flush()
    }
}
