//! The switch the router uses to stop a link's reader from handing it more frames while the
//! path that reader feeds is congested. Knows nothing of what is read.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Lets the router pause a reader; the reader waits at the gate before each hand-over.
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

    /// Returns once the gate is open (at once when it is).
    pub(super) async fn wait_open(&self) {
        if !self.is_paused() {
            return;
        }
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
