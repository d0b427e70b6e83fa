//! A WASM guest's stdin, stdout and stderr: in-process byte pipes whose guest ends are WASI
//! streams and whose host ends are tokio I/O for the transport. Knows bytes, not messages.
//!
//! Readiness never wakes early: a guest waiting on stdin resumes only when bytes (or the end)
//! are there, and one waiting on stdout only when there is room. WASI's blocking calls give
//! up after a few spurious wake-ups, and each one would cost a task switch per message.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use super::limits::ComputeClock;
use crate::component::stderr_relay;
use crate::component::stderr_tail::StderrTail;

/// What stderr lets one guest write hand over at once (WASI's usual permit size); stderr
/// never waits, so any permit is as good.
const STDERR_PERMIT: usize = 64 * 1024;
/// A stderr line longer than this is logged in pieces.
const STDERR_LINE: usize = 4096;

/// A bounded single-stream byte queue shared by one writing side and one reading side.
#[derive(Debug)]
struct Pipe {
    state: Mutex<PipeState>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct PipeState {
    chunks: VecDeque<Bytes>,
    queued: usize,
    writer_closed: bool,
    reader_closed: bool,
    reader_waiting: Option<Waker>,
    writer_waiting: Option<Waker>,
}

impl Pipe {
    fn new(capacity: usize) -> Arc<Pipe> {
        Arc::new(Pipe {
            state: Mutex::new(PipeState::default()),
            capacity,
        })
    }

    fn lock(&self) -> MutexGuard<'_, PipeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Up to `max` bytes, `Some(empty)` at the end, `None` when nothing is queued yet.
    fn take(&self, max: usize) -> Option<Bytes> {
        let mut state = self.lock();
        let Some(front) = state.chunks.front_mut() else {
            return state.writer_closed.then(Bytes::new);
        };
        let chunk = if front.len() > max {
            front.split_to(max)
        } else {
            state.chunks.pop_front().expect("there is a front chunk")
        };
        state.queued -= chunk.len();
        if let Some(writer) = state.writer_waiting.take() {
            writer.wake();
        }
        Some(chunk)
    }

    /// Ready when bytes are queued or the writer is gone.
    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if !state.chunks.is_empty() || state.writer_closed {
            return Poll::Ready(());
        }
        state.reader_waiting = Some(cx.waker().clone());
        Poll::Pending
    }

    /// How many bytes may be written now; `Err` once the reader is gone.
    fn room(&self) -> Result<usize, ()> {
        let state = self.lock();
        if state.reader_closed {
            return Err(());
        }
        Ok(self.capacity.saturating_sub(state.queued))
    }

    /// Ready when there is room or the reader is gone.
    fn poll_writable(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if state.reader_closed || state.queued < self.capacity {
            return Poll::Ready(());
        }
        state.writer_waiting = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Queues `chunk` whatever the room (callers check [`Pipe::room`] first); `Err` once the
    /// reader is gone.
    fn put(&self, chunk: Bytes) -> Result<(), ()> {
        let mut state = self.lock();
        if state.reader_closed {
            return Err(());
        }
        if chunk.is_empty() {
            return Ok(());
        }
        state.queued += chunk.len();
        state.chunks.push_back(chunk);
        if let Some(reader) = state.reader_waiting.take() {
            reader.wake();
        }
        Ok(())
    }

    fn close_writer(&self) {
        let mut state = self.lock();
        state.writer_closed = true;
        if let Some(reader) = state.reader_waiting.take() {
            reader.wake();
        }
    }

    fn close_reader(&self) {
        let mut state = self.lock();
        state.reader_closed = true;
        state.chunks.clear();
        state.queued = 0;
        if let Some(writer) = state.writer_waiting.take() {
            writer.wake();
        }
    }

    fn poll_read_into(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            if let Some(chunk) = self.take(buf.remaining()) {
                buf.put_slice(&chunk);
                return Poll::Ready(Ok(()));
            }
            if self.poll_readable(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }

    fn poll_write_from(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            match self.room() {
                Err(()) => return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
                Ok(0) => {
                    if self.poll_writable(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
                Ok(room) => {
                    let n = buf.len().min(room);
                    return Poll::Ready(
                        self.put(Bytes::copy_from_slice(&buf[..n]))
                            .map(|()| n)
                            .map_err(|()| io::ErrorKind::BrokenPipe.into()),
                    );
                }
            }
        }
    }
}

/// Creates the guest's stdin: the transport writes into [`HostStdin`], the guest reads
/// [`GuestStdin`]. Reading input rests the guest's compute clock.
pub fn stdin(capacity: usize, clock: Arc<ComputeClock>) -> (HostStdin, GuestStdin) {
    let pipe = Pipe::new(capacity);
    (
        HostStdin(pipe.clone()),
        GuestStdin {
            pipe,
            clock: Some(clock),
        },
    )
}

/// Creates the guest's stdout: the guest writes [`GuestStdout`], the transport reads
/// [`HostStdout`]. Waiting for room rests the guest's compute clock.
///
/// While the queue holds less than `capacity`, one write of up to `permit` bytes is taken
/// whole. A permit the size of the guest's memory cap means any write it can make: a WASI
/// libc `write` (and so Python's unbuffered `sys.stdout.buffer.write`) writes at most the
/// permit and returns the count, and a caller that does not loop on a short count (most do
/// not, on a blocking stdout) would lose the rest. The queue can exceed `capacity` by one
/// write, which is bytes the guest held in its own capped memory a moment before.
pub fn stdout(
    capacity: usize,
    permit: usize,
    clock: Arc<ComputeClock>,
) -> (GuestStdout, HostStdout) {
    let pipe = Pipe::new(capacity);
    (
        GuestStdout {
            pipe: pipe.clone(),
            permit,
            clock,
        },
        HostStdout(pipe),
    )
}

/// The transport's end of the guest's stdin; closing it (shutdown or drop) is the guest's EOF.
#[derive(Debug)]
pub struct HostStdin(Arc<Pipe>);

impl AsyncWrite for HostStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_write_from(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Written bytes are in the guest's queue already.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.close_writer();
        Poll::Ready(Ok(()))
    }
}

impl Drop for HostStdin {
    fn drop(&mut self) {
        self.0.close_writer();
    }
}

/// The transport's end of the guest's stdout; dropping it makes the guest's writes fail.
#[derive(Debug)]
pub struct HostStdout(Arc<Pipe>);

impl AsyncRead for HostStdout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.0.poll_read_into(cx, buf)
    }
}

impl Drop for HostStdout {
    fn drop(&mut self) {
        self.0.close_reader();
    }
}

/// The guest's stdin. Every handle the guest opens shares one queue; the instance closes
/// it (with [`GuestStdin::close`]) when the guest is gone.
#[derive(Debug, Clone)]
pub struct GuestStdin {
    pipe: Arc<Pipe>,
    /// `None` in handles given out as plain `AsyncRead`, which only WASIp3 would use.
    clock: Option<Arc<ComputeClock>>,
}

impl GuestStdin {
    /// Stops accepting input: the transport's writes fail from now on.
    pub fn close(&self) {
        self.pipe.close_reader();
    }
}

impl IsTerminal for GuestStdin {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for GuestStdin {
    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(GuestStdin {
            pipe: self.pipe.clone(),
            clock: None,
        })
    }

    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestStdin {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.pipe.poll_readable(cx)).await;
        if let Some(clock) = &self.clock {
            clock.rest();
        }
    }
}

#[wasmtime_wasi::async_trait]
impl InputStream for GuestStdin {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        match self.pipe.take(size) {
            None => Ok(Bytes::new()),
            Some(chunk) if chunk.is_empty() && size > 0 => Err(StreamError::Closed),
            Some(chunk) => {
                if let Some(clock) = &self.clock {
                    clock.rest();
                }
                Ok(chunk)
            }
        }
    }
}

impl AsyncRead for GuestStdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.pipe.poll_read_into(cx, buf)
    }
}

/// The guest's stdout. Every handle shares one queue; at most the pipe's capacity is ever
/// queued, so a guest that writes faster than the chain reads waits instead of growing
/// the conductor's memory.
#[derive(Debug, Clone)]
pub struct GuestStdout {
    pipe: Arc<Pipe>,
    /// The most one write may hand over while there is room.
    permit: usize,
    clock: Arc<ComputeClock>,
}

impl GuestStdout {
    /// The guest is gone: the transport sees EOF once it has read what was written.
    pub fn close(&self) {
        self.pipe.close_writer();
    }
}

impl IsTerminal for GuestStdout {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestStdout {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestStdout {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.pipe.poll_writable(cx)).await;
        self.clock.rest();
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for GuestStdout {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.pipe.put(bytes).map_err(|()| StreamError::Closed)
    }

    fn flush(&mut self) -> StreamResult<()> {
        // Nothing is buffered on the guest's side of the queue.
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        match self.pipe.room() {
            Err(()) => Err(StreamError::Closed),
            Ok(0) => Ok(0),
            Ok(_) => Ok(self.permit),
        }
    }
}

impl AsyncWrite for GuestStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write_from(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.pipe.close_writer();
        Poll::Ready(Ok(()))
    }
}

/// The guest's stderr: each line goes to the log under the proxy's name and into the tail
/// kept for error reports. Never blocks the guest.
#[derive(Clone)]
pub struct GuestStderr {
    component: Arc<str>,
    tail: StderrTail,
    partial: Arc<Mutex<Vec<u8>>>,
}

impl GuestStderr {
    pub fn new(component: &str, tail: StderrTail) -> Self {
        Self {
            component: component.into(),
            tail,
            partial: Arc::default(),
        }
    }

    fn take_bytes(&self, bytes: &[u8]) {
        let mut partial = self.partial.lock().unwrap_or_else(|p| p.into_inner());
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            partial.extend_from_slice(piece);
            if partial.last() == Some(&b'\n') || partial.len() >= STDERR_LINE {
                self.log_line(&partial);
                partial.clear();
            }
        }
    }

    /// Logs what is left of an unterminated last line.
    pub fn finish(&self) {
        let mut partial = self.partial.lock().unwrap_or_else(|p| p.into_inner());
        if !partial.is_empty() {
            self.log_line(&partial);
            partial.clear();
        }
    }

    fn log_line(&self, line: &[u8]) {
        stderr_relay::relay(&self.component, line, &self.tail);
    }
}

impl IsTerminal for GuestStderr {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestStderr {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestStderr {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl OutputStream for GuestStderr {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.take_bytes(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(STDERR_PERMIT)
    }
}

impl AsyncWrite for GuestStderr {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.take_bytes(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn clock() -> Arc<ComputeClock> {
        Arc::new(ComputeClock::new())
    }

    #[tokio::test]
    async fn stdin_delivers_what_the_host_writes_then_the_end() {
        let (mut host, mut guest) = stdin(8, clock());
        assert_eq!(
            InputStream::read(&mut guest, 4).unwrap(),
            Bytes::new(),
            "nothing queued yet"
        );
        host.write_all(b"hello").await.unwrap();
        guest.ready().await;
        assert_eq!(
            InputStream::read(&mut guest, 3).unwrap(),
            Bytes::from_static(b"hel")
        );
        assert_eq!(
            InputStream::read(&mut guest, 10).unwrap(),
            Bytes::from_static(b"lo")
        );
        host.shutdown().await.unwrap();
        guest.ready().await;
        assert!(matches!(
            InputStream::read(&mut guest, 10),
            Err(StreamError::Closed)
        ));
    }

    #[tokio::test]
    async fn stdin_holds_the_host_back_at_capacity() {
        let (mut host, mut guest) = stdin(4, clock());
        let writer = tokio::spawn(async move {
            host.write_all(b"0123456789").await.unwrap();
            host
        });
        let mut received = Vec::new();
        while received.len() < 10 {
            guest.ready().await;
            let chunk = InputStream::read(&mut guest, 100).unwrap();
            assert!(chunk.len() <= 4, "never more than the capacity is queued");
            received.extend_from_slice(&chunk);
        }
        assert_eq!(received, b"0123456789");
        drop(writer.await.unwrap());
    }

    #[tokio::test]
    async fn stdin_ready_does_not_wake_without_input() {
        let (_host, mut guest) = stdin(8, clock());
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(50), guest.ready()).await;
        assert!(waited.is_err());
    }

    #[tokio::test]
    async fn stdout_budgets_the_guest_and_ends_when_it_closes() {
        let (mut guest, mut host) = stdout(4, 4, clock());
        assert_eq!(guest.check_write().unwrap(), 4);
        OutputStream::write(&mut guest, Bytes::from_static(b"abcd")).unwrap();
        assert_eq!(guest.check_write().unwrap(), 0, "full until the host reads");
        let mut buf = [0u8; 3];
        let n = host.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"abc");
        guest.ready().await;
        assert_eq!(guest.check_write().unwrap(), 4, "room again: a whole write");
        guest.close();
        let mut rest = Vec::new();
        host.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"d");
    }

    #[tokio::test]
    async fn stdout_writes_fail_once_the_host_stops_reading() {
        let (mut guest, host) = stdout(4, 4, clock());
        drop(host);
        assert!(matches!(guest.check_write(), Err(StreamError::Closed)));
        assert!(matches!(
            OutputStream::write(&mut guest, Bytes::from_static(b"x")),
            Err(StreamError::Closed)
        ));
    }

    #[tokio::test]
    async fn one_write_larger_than_the_queue_is_taken_whole() {
        // A 70 KB line written once, as Python's unbuffered stdout does: the permit is the
        // whole write, not a 64 KiB slice of it whose rest the guest would drop.
        let line = Bytes::from(vec![b'x'; 70_000]);
        let (mut guest, mut host) = stdout(1024, 1 << 20, clock());
        let permit = guest.check_write().unwrap();
        assert!(permit >= line.len(), "permit {permit}");
        OutputStream::write(&mut guest, line.clone()).unwrap();
        assert_eq!(guest.check_write().unwrap(), 0, "over capacity until read");
        guest.close();
        let mut received = Vec::new();
        host.read_to_end(&mut received).await.unwrap();
        assert_eq!(received, line);
    }

    #[test]
    fn stderr_is_split_into_lines_and_kept_in_the_tail() {
        let tail = StderrTail::default();
        let stderr = GuestStderr::new("p", tail.clone());
        stderr.take_bytes(b"one\ntw");
        stderr.take_bytes(b"o\nthree");
        assert_eq!(tail.lines(), ["one", "two"]);
        stderr.finish();
        assert_eq!(tail.lines(), ["one", "two", "three"]);
    }
}
