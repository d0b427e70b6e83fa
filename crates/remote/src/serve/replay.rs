//! What one connection keeps of the messages it sent, for a client that resumes a stream
//! with a cursor: every message in cursor order, bounded in bytes for the whole connection.
//! Pure bookkeeping: no I/O, no clock; knows streams only as keys.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use super::cursor::Cursor;

/// Which stream of a connection a message went out on: the connection's (`None`) or a
/// session's.
pub(super) type StreamKey = Option<Arc<str>>;

/// Why a stream cannot be resumed from a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplayRefusal {
    /// Messages after the cursor were dropped to keep within the budget.
    Dropped { kept_from: Cursor },
    /// The cursor is past the last message sent: not one this connection wrote.
    Unknown { last: Cursor },
}

/// The messages sent on one connection and not yet acknowledged, oldest first.
#[derive(Debug)]
pub(super) struct ReplayBuffer {
    budget: usize,
    used: usize,
    last: Cursor,
    sent: VecDeque<(Cursor, StreamKey, Bytes)>,
    /// Per stream, the last cursor dropped for room (not acknowledged): a resume from before
    /// it cannot be served. A connection has a few streams: a list, looked up in place.
    dropped_through: Vec<(StreamKey, Cursor)>,
}

impl ReplayBuffer {
    /// Keeps at most `budget` bytes of messages (a message larger than the budget is not
    /// kept at all, and counts as dropped).
    pub(super) fn new(budget: usize) -> ReplayBuffer {
        ReplayBuffer {
            budget,
            used: 0,
            last: Cursor::START,
            sent: VecDeque::new(),
            dropped_through: Vec::new(),
        }
    }

    /// The last cursor given out.
    #[cfg(test)]
    pub(super) fn last(&self) -> Cursor {
        self.last
    }

    /// Bytes kept.
    #[cfg(test)]
    pub(super) fn used(&self) -> usize {
        self.used
    }

    /// Gives `message`, sent on `stream`, the next cursor and keeps it, dropping the oldest
    /// messages of the connection while over budget.
    pub(super) fn record(&mut self, stream: &StreamKey, message: Bytes) -> Cursor {
        self.last = self.last.next();
        self.used += message.len();
        self.sent.push_back((self.last, stream.clone(), message));
        while self.used > self.budget {
            let Some((cursor, stream, message)) = self.sent.pop_front() else {
                break;
            };
            self.used -= message.len();
            match self
                .dropped_through
                .iter_mut()
                .find(|(key, _)| *key == stream)
            {
                Some((_, through)) => *through = cursor,
                None => self.dropped_through.push((stream, cursor)),
            }
        }
        self.last
    }

    /// The messages of `stream` after `from`, in order, for a client that has processed
    /// everything up to `from`; what it acknowledges (the stream's messages up to `from`)
    /// is dropped.
    pub(super) fn resume(
        &mut self,
        stream: &StreamKey,
        from: Cursor,
    ) -> Result<Vec<(Cursor, Bytes)>, ReplayRefusal> {
        if from > self.last {
            return Err(ReplayRefusal::Unknown { last: self.last });
        }
        if let Some(&(_, dropped)) = self.dropped_through.iter().find(|(key, _)| key == stream)
            && dropped > from
        {
            return Err(ReplayRefusal::Dropped {
                kept_from: dropped.next(),
            });
        }
        let mut used = self.used;
        self.sent.retain(|(cursor, key, message)| {
            let acknowledged = key == stream && *cursor <= from;
            if acknowledged {
                used -= message.len();
            }
            !acknowledged
        });
        self.used = used;
        Ok(self
            .sent
            .iter()
            .filter(|(_, key, _)| key == stream)
            .map(|(cursor, _, message)| (*cursor, message.clone()))
            .collect())
    }

    /// Forgets `stream`'s messages: its client opened it afresh, without a cursor.
    pub(super) fn forget(&mut self, stream: &StreamKey) {
        let mut used = self.used;
        self.sent.retain(|(_, key, message)| {
            let mine = key == stream;
            if mine {
                used -= message.len();
            }
            !mine
        });
        self.used = used;
        self.dropped_through.retain(|(key, _)| key != stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    fn cursors(replayed: Vec<(Cursor, Bytes)>) -> Vec<u64> {
        replayed.into_iter().map(|(c, _)| c.0).collect()
    }

    #[test]
    fn cursors_increase_across_the_connections_streams() {
        let mut buffer = ReplayBuffer::new(1000);
        let session = Some(Arc::from("s"));
        assert_eq!(buffer.record(&None, msg(1)), Cursor(1));
        assert_eq!(buffer.record(&session, msg(1)), Cursor(2));
        assert_eq!(buffer.record(&None, msg(1)), Cursor(3));
        assert_eq!(buffer.last(), Cursor(3));
    }

    #[test]
    fn a_resume_replays_the_streams_messages_after_the_cursor_in_order() {
        let mut buffer = ReplayBuffer::new(1000);
        let session = Some(Arc::from("s"));
        for stream in [&None, &session, &session, &None, &session] {
            buffer.record(stream, msg(10));
        }
        assert_eq!(cursors(buffer.resume(&session, Cursor(2)).unwrap()), [3, 5]);
        assert_eq!(
            cursors(buffer.resume(&None, Cursor::START).unwrap()),
            [1, 4]
        );
        // A second resume from the same point converges on the same messages.
        assert_eq!(cursors(buffer.resume(&session, Cursor(2)).unwrap()), [3, 5]);
    }

    #[test]
    fn acknowledged_messages_are_dropped() {
        let mut buffer = ReplayBuffer::new(1000);
        for _ in 0..4 {
            buffer.record(&None, msg(10));
        }
        assert_eq!(buffer.used(), 40);
        assert_eq!(cursors(buffer.resume(&None, Cursor(3)).unwrap()), [4]);
        assert_eq!(buffer.used(), 10);
    }

    #[test]
    fn the_budget_bounds_the_bytes_kept_for_the_whole_connection() {
        let mut buffer = ReplayBuffer::new(100);
        let session = Some(Arc::from("s"));
        for i in 0..50 {
            let stream = if i % 2 == 0 { &None } else { &session };
            buffer.record(stream, msg(7));
            assert!(buffer.used() <= 100, "{} bytes kept", buffer.used());
        }
        // 14 messages of 7 bytes fit in 100: cursors 37..=50.
        assert_eq!(buffer.used(), 98);
        assert_eq!(
            cursors(buffer.resume(&None, Cursor(37)).unwrap()),
            [39, 41, 43, 45, 47, 49]
        );
    }

    #[test]
    fn a_resume_from_before_what_was_dropped_is_refused() {
        let mut buffer = ReplayBuffer::new(25);
        for _ in 0..5 {
            buffer.record(&None, msg(10));
        }
        // Kept: 4 and 5; 1..=3 dropped.
        assert_eq!(
            buffer.resume(&None, Cursor(2)),
            Err(ReplayRefusal::Dropped {
                kept_from: Cursor(4)
            })
        );
        assert_eq!(cursors(buffer.resume(&None, Cursor(3)).unwrap()), [4, 5]);
    }

    #[test]
    fn dropping_another_streams_messages_does_not_refuse_this_one() {
        let mut buffer = ReplayBuffer::new(20);
        let session = Some(Arc::from("s"));
        buffer.record(&session, msg(10));
        buffer.record(&None, msg(10));
        buffer.record(&None, msg(10));
        assert!(buffer.resume(&session, Cursor::START).is_err());
        assert_eq!(
            cursors(buffer.resume(&None, Cursor::START).unwrap()),
            [2, 3]
        );
    }

    #[test]
    fn a_message_larger_than_the_budget_is_not_kept() {
        let mut buffer = ReplayBuffer::new(10);
        buffer.record(&None, msg(11));
        assert_eq!(buffer.used(), 0);
        assert_eq!(
            buffer.resume(&None, Cursor::START),
            Err(ReplayRefusal::Dropped {
                kept_from: Cursor(2)
            })
        );
    }

    #[test]
    fn a_cursor_never_given_out_is_refused() {
        let mut buffer = ReplayBuffer::new(100);
        buffer.record(&None, msg(1));
        assert_eq!(
            buffer.resume(&None, Cursor(2)),
            Err(ReplayRefusal::Unknown { last: Cursor(1) })
        );
    }

    #[test]
    fn forgetting_a_stream_frees_its_bytes_and_its_refusals() {
        let mut buffer = ReplayBuffer::new(15);
        buffer.record(&None, msg(10));
        buffer.record(&None, msg(10));
        buffer.forget(&None);
        assert_eq!(buffer.used(), 0);
        assert_eq!(
            cursors(buffer.resume(&None, Cursor(2)).unwrap()),
            Vec::<u64>::new()
        );
    }
}
