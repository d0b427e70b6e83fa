//! When a served client was last heard from, shared by its transport (which hears it) and
//! its chain's editor link (which ends a silent connection at the idle limit).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// When the client was last heard from: a message, a WebSocket pong or ping, an HTTP
/// request. An open SSE stream counts as hearing it the whole time it is open (a client
/// that vanished fails its stream's keep-alive writes).
#[derive(Debug)]
pub(super) struct Heard {
    start: Instant,
    last_ms: AtomicU64,
    open_streams: AtomicUsize,
}

impl Heard {
    pub(super) fn new() -> Arc<Heard> {
        Arc::new(Heard {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            open_streams: AtomicUsize::new(0),
        })
    }

    pub(super) fn now(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    pub(super) fn stream_opened(&self) {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        self.now();
    }

    pub(super) fn stream_closed(&self) {
        self.open_streams.fetch_sub(1, Ordering::Relaxed);
        self.now();
    }

    /// How long nothing has been heard; zero while a stream is open.
    pub(super) fn silent_for(&self) -> Duration {
        if self.open_streams.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}
