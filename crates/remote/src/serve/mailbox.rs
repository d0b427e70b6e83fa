//! One stream's queue of messages from the chain, waiting for the client to read them: a
//! bounded queue any reader may take from, and the generation of the one reader allowed to.
//! A resuming reader takes over from one the server has not yet seen go. Knows no transport.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use tokio::sync::{Notify, Semaphore};

/// Messages a stream holds for a client that is not reading it (yet) before the chain's
/// writer waits; past the chain's `write_timeout` the connection fails.
pub(super) const STREAM_QUEUE: usize = 256;

/// No reader holds the stream.
pub(super) const NO_READER: u64 = 0;

#[derive(Debug)]
pub(super) struct Mailbox {
    queue: Mutex<VecDeque<Bytes>>,
    space: Semaphore,
    /// Woken when a message arrives, and when the reader changes (the old one then ends).
    changed: Notify,
    /// The generation of the reader allowed to take messages, or [`NO_READER`].
    reader: AtomicU64,
}

impl Mailbox {
    pub(super) fn new() -> Mailbox {
        Mailbox {
            queue: Mutex::new(VecDeque::new()),
            space: Semaphore::new(STREAM_QUEUE),
            changed: Notify::new(),
            reader: AtomicU64::new(NO_READER),
        }
    }

    /// Queues `message`, waiting while the queue is full.
    pub(super) async fn put(&self, message: Bytes) {
        self.space
            .acquire()
            .await
            .expect("the semaphore is never closed")
            .forget();
        self.queue.lock().expect("mailbox").push_back(message);
        self.changed.notify_waiters();
    }

    /// The oldest message, if `reader` is the reader allowed to take it.
    pub(super) fn take(&self, reader: u64) -> Taken {
        if self.reader.load(Ordering::Acquire) != reader {
            return Taken::Superseded;
        }
        match self.queue.lock().expect("mailbox").pop_front() {
            Some(message) => {
                self.space.add_permits(1);
                Taken::Message(message)
            }
            None => Taken::Empty,
        }
    }

    /// Makes `reader` the one reader, and wakes the one it replaces; returns the reader it
    /// replaced, or [`NO_READER`].
    pub(super) fn set_reader(&self, reader: u64) -> u64 {
        let before = self.reader.swap(reader, Ordering::AcqRel);
        self.changed.notify_waiters();
        before
    }

    /// The stream's reader, or [`NO_READER`].
    pub(super) fn reader(&self) -> u64 {
        self.reader.load(Ordering::Acquire)
    }

    /// `reader` lets go; false if another had already replaced it.
    pub(super) fn release(&self, reader: u64) -> bool {
        self.reader
            .compare_exchange(reader, NO_READER, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Resolves at the next arrival or change of reader, once enabled: create it, enable
    /// it, then `take`, so nothing in between is missed.
    pub(super) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// Wakes every reader waiting (the connection closed).
    pub(super) fn wake(&self) {
        self.changed.notify_waiters();
    }
}

/// What a reader got.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Taken {
    Message(Bytes),
    Empty,
    /// Another reader holds the stream now.
    Superseded,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_current_reader_takes_and_a_new_one_supersedes_the_old() {
        let mailbox = Mailbox::new();
        mailbox.put(Bytes::from_static(b"a")).await;
        assert_eq!(mailbox.take(1), Taken::Superseded);
        assert_eq!(mailbox.set_reader(1), NO_READER);
        assert_eq!(mailbox.take(1), Taken::Message(Bytes::from_static(b"a")));
        assert_eq!(mailbox.take(1), Taken::Empty);
        assert_eq!(mailbox.set_reader(2), 1);
        assert_eq!(mailbox.take(1), Taken::Superseded);
        assert!(!mailbox.release(1), "a superseded reader does not release");
        assert!(mailbox.release(2));
        assert_eq!(mailbox.reader(), NO_READER);
    }

    #[tokio::test]
    async fn a_full_queue_holds_the_writer_until_a_message_is_taken() {
        let mailbox = std::sync::Arc::new(Mailbox::new());
        for _ in 0..STREAM_QUEUE {
            mailbox.put(Bytes::from_static(b"m")).await;
        }
        let writer = {
            let mailbox = mailbox.clone();
            tokio::spawn(async move { mailbox.put(Bytes::from_static(b"last")).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!writer.is_finished());
        mailbox.set_reader(1);
        assert!(matches!(mailbox.take(1), Taken::Message(_)));
        tokio::time::timeout(std::time::Duration::from_secs(1), writer)
            .await
            .expect("the writer goes on")
            .unwrap();
    }
}
