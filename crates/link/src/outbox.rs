//! A link's outgoing queue: the router's never-blocking handle for sending frames to one
//! peer, counted in bytes so that a peer falling behind can be noticed. Knows no I/O.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc;

/// Shared between the router (adds) and the writer (subtracts).
#[derive(Debug)]
struct OutboxLevel {
    queued: AtomicUsize,
    congested: AtomicBool,
    limit: usize,
    /// `acp_queued_bytes`, every outbox's bytes together, when `serve` counts.
    total: Option<acp_metrics::Gauge>,
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
    /// Queued, but the peer is behind: pause whoever sent this until the writer reports
    /// that the queue drained.
    Congested,
    /// The peer's writer is gone; the frame was dropped.
    Closed,
}

impl Outbox {
    /// A queue that counts as congested above `limit` bytes and as drained below half.
    pub fn new(limit: usize) -> (Outbox, OutboxReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let level = Arc::new(OutboxLevel {
            queued: AtomicUsize::new(0),
            congested: AtomicBool::new(false),
            limit,
            total: acp_metrics::get().map(|metrics| metrics.queued_bytes.clone()),
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
        if let Some(total) = &level.total {
            total.inc_by(len as i64);
        }
        if self.tx.send(frame).is_err() {
            level.queued.fetch_sub(len, Ordering::SeqCst);
            if let Some(total) = &level.total {
                total.dec_by(len as i64);
            }
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
    /// The next frame; `None` once every [`Outbox`] handle is dropped and the queue is empty.
    pub(super) async fn recv(&mut self) -> Option<Bytes> {
        self.rx.recv().await
    }

    /// The next frame if one is queued now.
    pub(super) fn try_recv(&mut self) -> Option<Bytes> {
        self.rx.try_recv().ok()
    }

    /// Accounts for `written` frame bytes; true when a paused sender should be resumed.
    pub(super) fn written(&self, written: usize) -> bool {
        if let Some(total) = &self.level.total {
            total.dec_by(written as i64);
        }
        let left = self.level.queued.fetch_sub(written, Ordering::SeqCst) - written;
        left < self.level.limit / 2 && self.level.congested.swap(false, Ordering::SeqCst)
    }
}

impl Drop for OutboxReceiver {
    /// What was never written no longer counts as queued.
    fn drop(&mut self) {
        if let Some(total) = &self.level.total {
            total.dec_by(self.level.queued.swap(0, Ordering::SeqCst) as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn congestion_is_reported_above_the_limit_and_cleared_below_half() {
        let (outbox, mut rx) = Outbox::new(10);
        assert_eq!(outbox.send(Bytes::from_static(b"12345")), Queued::Flowing);
        assert_eq!(
            outbox.send(Bytes::from_static(b"123456")),
            Queued::Congested
        );
        assert_eq!(outbox.queued(), 11);
        assert_eq!(rx.recv().await.unwrap().len(), 5);
        assert!(!rx.written(5), "6 bytes left is not below half of 10");
        assert_eq!(rx.recv().await.unwrap().len(), 6);
        assert!(rx.written(6), "drained: the paused sender may go on");
        assert!(!rx.written(0), "reported once");
        assert_eq!(outbox.queued(), 0);
    }

    #[test]
    fn a_closed_outbox_drops_what_it_is_given() {
        let outbox = Outbox::closed();
        assert_eq!(outbox.send(Bytes::from_static(b"x")), Queued::Closed);
        assert_eq!(outbox.queued(), 0);
    }
}
