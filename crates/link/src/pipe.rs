//! A pipe to or from a peer that grows once it carries a big message: Linux pipes hold
//! 64 KiB, so a 1 MiB line costs 16 wake-ups each way; grown, one or two. Bytes only.
//!
//! Only pipes that see a big message are grown (to `F_SETPIPE_SZ` 1 MiB, the default
//! `pipe-max-size`): a pipe's pages are allocated only while data sits in it, but its size
//! counts against the user's pipe budget (`pipe-user-pages-soft`), past which every new pipe
//! of that user gets a small buffer. A chain of small messages never grows any.

use std::io;
use std::os::fd::AsRawFd;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::byte_stream::{ByteRead, ByteWrite};

/// What Linux gives a pipe unless asked for more.
const DEFAULT_SIZE: usize = 64 * 1024;
/// What a pipe carrying big messages is grown to.
const GROWN_SIZE: usize = 1024 * 1024;

/// An async pipe end (a child's stdin or stdout, the conductor's own stdio) that asks the
/// kernel for a larger buffer the first time a message does not fit the default one.
pub(super) struct Pipe<T> {
    io: T,
    grown: bool,
}

impl<T: AsRawFd> Pipe<T> {
    pub(super) fn new(io: T) -> Self {
        Pipe { io, grown: false }
    }

    /// Asks once; when the kernel refuses (limits), the pipe keeps its size.
    fn grow(&mut self) {
        if self.grown {
            return;
        }
        self.grown = true;
        #[cfg(target_os = "linux")]
        // SAFETY: fcntl on a descriptor this value owns; F_SETPIPE_SZ changes only its size.
        unsafe {
            let size = libc::c_int::try_from(GROWN_SIZE).unwrap_or(libc::c_int::MAX);
            libc::fcntl(self.io.as_raw_fd(), libc::F_SETPIPE_SZ, size);
        }
    }
}

impl<R: AsyncRead + AsRawFd + Unpin + Send + 'static> ByteRead for Pipe<R> {
    async fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let n = self.io.read_buf(buf).await?;
        // A read that emptied a full pipe: the peer is writing more than it holds.
        if n >= DEFAULT_SIZE {
            self.grow();
        }
        Ok(n)
    }
}

impl<W: AsyncWrite + AsRawFd + Unpin + Send + 'static> ByteWrite for Pipe<W> {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() > DEFAULT_SIZE {
            self.grow();
        }
        AsyncWriteExt::write_all(&mut self.io, bytes).await
    }

    async fn flush(&mut self) -> io::Result<()> {
        AsyncWriteExt::flush(&mut self.io).await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        AsyncWriteExt::shutdown(&mut self.io).await
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn size(fd: &impl AsRawFd) -> usize {
        // SAFETY: F_GETPIPE_SZ only reads the size.
        let size = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(size).expect("a pipe's size")
    }

    #[tokio::test]
    async fn a_pipe_grows_for_a_big_write_and_not_for_small_ones() {
        let (tx, rx) = tokio::net::unix::pipe::pipe().unwrap();
        let mut tx = Pipe::new(tx);
        let reader = tokio::spawn(async move {
            let mut rx = Pipe::new(rx);
            let mut buf = BytesMut::with_capacity(2 * GROWN_SIZE);
            let mut total = 0;
            while total < 10 + 200_000 {
                total += rx.read_into(&mut buf).await.unwrap();
            }
            total
        });
        tx.write_all(&[b'x'; 10]).await.unwrap();
        assert_eq!(
            size(&tx.io),
            DEFAULT_SIZE,
            "small writes leave the pipe as it is"
        );
        tx.write_all(&vec![b'y'; 200_000]).await.unwrap();
        assert_eq!(size(&tx.io), GROWN_SIZE);
        assert_eq!(reader.await.unwrap(), 200_010);
    }
}
