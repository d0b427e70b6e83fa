//! An in-memory peer: the far end of a link whose frames travel over channels, for tests that
//! drive the router without processes. Knows frames, not what they mean.

use bytes::Bytes;
use tokio::sync::mpsc;

/// The peer's end of an in-memory link: what it sends arrives on the link as frames, what
/// the router queues on the link arrives here. Reading is bounded, so a peer that stops
/// reading holds up the link's writer as a slow process would.
#[derive(Debug)]
pub struct MemoryPeer {
    to_link: Option<mpsc::UnboundedSender<Bytes>>,
    from_link: mpsc::Receiver<Bytes>,
}

impl MemoryPeer {
    pub(super) fn new(
        to_link: mpsc::UnboundedSender<Bytes>,
        from_link: mpsc::Receiver<Bytes>,
    ) -> Self {
        MemoryPeer {
            to_link: Some(to_link),
            from_link,
        }
    }

    /// Sends one message (one line's worth, without a newline) to the link.
    ///
    /// # Panics
    /// After [`close`](Self::close).
    pub fn send(&self, message: impl Into<Bytes>) {
        let to_link = self.to_link.as_ref().expect("the peer closed its output");
        // The link's reader may be gone (the router stopped); like a pipe nobody reads.
        let _ = to_link.send(message.into());
    }

    /// The next frame the link wrote; `None` once the link closed its side.
    pub async fn recv(&mut self) -> Option<Bytes> {
        self.from_link.recv().await
    }

    /// A frame the link has written already, if any.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        self.from_link.try_recv().ok()
    }

    /// Ends the peer's output: the link reads the end, as of a process closing its stdout.
    pub fn close(&mut self) {
        self.to_link = None;
    }
}
