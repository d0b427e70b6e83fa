//! The producers' handle on a trace: a clock started with the run and a channel to the trace
//! thread that never blocks; messages beyond the budget of queued bytes are dropped and counted.
//! A sink may feed a second consumer too ([`TraceSink::tee`]), and many sinks may feed one
//! consumer with their items tagged ([`tagged_channel`]: the OpenTelemetry export).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use bytes::Bytes;

use acp_router::trace_record::TracePoint;

use super::item::{ComponentEvent, Dir, Frame, Item, Message, Route};
use acp_router::LinkId;

/// What queuing a message costs besides its bytes (the item itself, the channel's slot).
const ITEM_COST: usize = 128;

/// Cheap to clone: every write loop, the router and the components hold one.
#[derive(Debug, Clone)]
pub struct TraceSink {
    tx: Destination,
    shared: Arc<Shared>,
    /// A second consumer that gets every item too (a trace file and the OTLP export).
    also: Option<Arc<TraceSink>>,
}

/// Where a sink's items go.
#[derive(Debug, Clone)]
enum Destination {
    /// One consumer for this sink's items (the trace thread of one run).
    Own(mpsc::Sender<Item>),
    /// One consumer for many sinks, each sink's items carrying its tag.
    Tagged {
        tag: u64,
        tx: mpsc::Sender<(u64, Item)>,
    },
}

impl Destination {
    /// Sends `item`; `Err` once the consumer has gone.
    fn send(&self, item: Item) -> Result<(), ()> {
        match self {
            Destination::Own(tx) => tx.send(item).map_err(drop),
            Destination::Tagged { tag, tx } => tx.send((*tag, item)).map_err(drop),
        }
    }
}

/// Makes the sinks of one consumer that many runs feed (`serve`'s chains), each sink's items
/// tagged; they share one byte budget. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TaggedSinks {
    tx: mpsc::Sender<(u64, Item)>,
    shared: Arc<Shared>,
}

impl TaggedSinks {
    /// A sink whose items arrive tagged with `tag`.
    pub fn sink(&self, tag: u64) -> TraceSink {
        TraceSink {
            tx: Destination::Tagged {
                tag,
                tx: self.tx.clone(),
            },
            shared: self.shared.clone(),
            also: None,
        }
    }
}

/// The consumer's end of [`tagged_channel`].
#[derive(Debug)]
pub struct TaggedItems {
    rx: mpsc::Receiver<(u64, Item)>,
    shared: Arc<Shared>,
}

impl TaggedItems {
    /// The next item, waiting at most `wait`; its bytes are no longer counted as queued.
    pub fn recv_timeout(
        &self,
        wait: std::time::Duration,
    ) -> Result<(u64, Item), mpsc::RecvTimeoutError> {
        let (tag, item) = self.rx.recv_timeout(wait)?;
        if let Item::Message(message) = &item {
            self.shared
                .queued
                .fetch_sub(cost_of(message), Ordering::Relaxed);
        }
        Ok((tag, item))
    }

    /// Messages dropped so far because the consumer was too far behind.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// Sinks for many runs and the one consumer of all their items: messages are dropped (and
/// counted) once more than `budget` bytes of them wait.
pub fn tagged_channel(budget: usize) -> (TaggedSinks, TaggedItems) {
    let (tx, rx) = mpsc::channel();
    let shared = Arc::new(Shared::new(budget));
    (
        TaggedSinks {
            tx,
            shared: shared.clone(),
        },
        TaggedItems { rx, shared },
    )
}

impl Shared {
    fn new(budget: usize) -> Shared {
        Shared {
            start: Instant::now(),
            queued: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            budget,
        }
    }
}

/// What the producers and the trace thread share.
#[derive(Debug)]
pub(super) struct Shared {
    /// `t` is measured from here.
    pub start: Instant,
    /// Bytes of messages queued and not yet taken by the trace thread.
    pub queued: AtomicUsize,
    /// Messages dropped because the trace thread was too far behind.
    pub dropped: AtomicU64,
    /// How many bytes may wait for the trace thread before messages are dropped.
    pub budget: usize,
}

impl TraceSink {
    /// A sink whose items arrive on the returned receiver; messages are dropped once more
    /// than `budget` bytes of them wait there.
    pub(crate) fn channel(budget: usize) -> (TraceSink, mpsc::Receiver<Item>) {
        let (tx, rx) = mpsc::channel();
        let shared = Arc::new(Shared::new(budget));
        (
            TraceSink {
                tx: Destination::Own(tx),
                shared,
                also: None,
            },
            rx,
        )
    }

    /// One sink feeding both `first` and `second`, either of which may be absent: what a
    /// run's producers hold when it is traced to a file and exported over OTLP.
    pub fn tee(first: Option<TraceSink>, second: Option<TraceSink>) -> Option<TraceSink> {
        match (first, second) {
            (Some(mut first), Some(second)) => {
                first.also = Some(Arc::new(second));
                Some(first)
            }
            (first, second) => first.or(second),
        }
    }

    pub(super) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// A frame a write loop is writing to its peer.
    pub fn frame_out(&self, link: LinkId, frame: &Bytes) {
        if let Some(also) = &self.also {
            also.frame_out(link, frame);
        }
        self.message(Message {
            at: Instant::now(),
            link,
            dir: Dir::Out,
            frame: Frame::Line(frame.clone()),
            route: Route::default(),
        });
    }

    /// A point the routing core recorded.
    pub fn point(&self, point: TracePoint) {
        if let Some(also) = &self.also {
            also.point(match &point {
                TracePoint::Link {
                    link,
                    name,
                    position,
                } => TracePoint::Link {
                    link: *link,
                    name: name.clone(),
                    position: *position,
                },
                TracePoint::Message(message) => TracePoint::Message(message.clone()),
                TracePoint::Component {
                    at,
                    name,
                    event,
                    detail,
                } => TracePoint::Component {
                    at: *at,
                    name: name.clone(),
                    event: *event,
                    detail: detail.clone(),
                },
            });
        }
        match point {
            TracePoint::Link {
                link,
                name,
                position,
            } => self.link(link, &name, position),
            TracePoint::Message(message) => self.message(message),
            TracePoint::Component {
                at,
                name,
                event,
                detail,
            } => {
                let _ = self.tx.send(Item::Component {
                    at,
                    name,
                    event,
                    detail,
                });
            }
        }
    }

    /// Queues a message unless the trace thread is too far behind, in which case it is
    /// counted as dropped. Never blocks.
    pub(crate) fn message(&self, message: Message) {
        let cost = message.frame.held_bytes() + ITEM_COST;
        let before = self.shared.queued.fetch_add(cost, Ordering::Relaxed);
        // One message always fits, however large: only a backlog is refused.
        if before > 0 && before + cost > self.shared.budget {
            self.shared.queued.fetch_sub(cost, Ordering::Relaxed);
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if self.tx.send(Item::Message(message)).is_err() {
            // The trace has ended; what comes after its end is not part of it.
            self.shared.queued.fetch_sub(cost, Ordering::Relaxed);
        }
    }

    /// Names `link` for the records that follow.
    pub(crate) fn link(&self, link: LinkId, name: &str, position: Option<usize>) {
        let _ = self.tx.send(Item::Link {
            link,
            name: name.to_owned(),
            position,
        });
    }

    /// Something that happened to component `name`.
    pub fn component(&self, name: &str, event: ComponentEvent, detail: String) {
        if let Some(also) = &self.also {
            also.component(name, event, detail.clone());
        }
        let _ = self.tx.send(Item::Component {
            at: Instant::now(),
            name: name.to_owned(),
            event,
            detail,
        });
    }

    /// The run's end, after everything it produced; its consumer lets go of the run. Not
    /// passed to a second consumer, which is ended by whoever holds its own sink.
    pub fn end(&self, reason: String) {
        let _ = self.tx.send(Item::End {
            at: Instant::now(),
            reason,
        });
    }
}

/// The cost `message` was counted with, given back once the trace thread has taken it.
pub(super) fn cost_of(message: &Message) -> usize {
    message.frame.held_bytes() + ITEM_COST
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &'static str) -> Message {
        Message {
            at: Instant::now(),
            link: LinkId(1),
            dir: Dir::In,
            frame: Frame::Line(Bytes::from_static(text.as_bytes())),
            route: Route::default(),
        }
    }

    #[test]
    fn messages_beyond_the_budget_are_dropped_and_counted_and_the_rest_still_goes() {
        let (sink, items) = TraceSink::channel(2 * ITEM_COST + 8);
        sink.message(line("1234"));
        sink.message(line("5678"));
        sink.message(line("too much"));
        sink.component("p1", ComponentEvent::Started, "pid 1".into());
        let shared = sink.shared().clone();
        assert_eq!(shared.dropped.load(Ordering::Relaxed), 1);
        assert_eq!(shared.queued.load(Ordering::Relaxed), 2 * ITEM_COST + 8);
        let taken: Vec<Item> = items.try_iter().collect();
        assert_eq!(taken.len(), 3, "two messages and the event: {taken:?}");
        // One message always fits, however large, when nothing waits.
        let (sink, items) = TraceSink::channel(1);
        sink.message(line("a line far larger than the budget"));
        assert_eq!(items.try_iter().count(), 1);
        assert_eq!(sink.shared().dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_tee_feeds_both_consumers_and_tagged_sinks_share_one_consumer_and_budget() {
        let (file, file_items) = TraceSink::channel(1 << 20);
        let (sinks, tagged) = tagged_channel(ITEM_COST + 8);
        let both = TraceSink::tee(Some(file), Some(sinks.sink(7))).expect("a sink");
        both.frame_out(LinkId(2), &Bytes::from_static(b"1234"));
        both.point(TracePoint::Link {
            link: LinkId(2),
            name: "p1".into(),
            position: Some(1),
        });
        both.component("p1", ComponentEvent::Started, "pid 1".into());
        assert_eq!(file_items.try_iter().count(), 3);
        let wait = std::time::Duration::from_millis(10);
        let mut seen = Vec::new();
        while let Ok((tag, item)) = tagged.recv_timeout(wait) {
            seen.push((tag, item));
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen.iter().all(|(tag, _)| *tag == 7));
        // Taken, a message no longer counts against the budget.
        assert_eq!(sinks.shared.queued.load(Ordering::Relaxed), 0);
        // Two chains' sinks share the budget: the second message waiting is dropped.
        sinks.sink(1).message(line("1234"));
        sinks.sink(2).message(line("5678"));
        assert_eq!(tagged.dropped(), 1);
        assert_eq!(tagged.recv_timeout(wait).map(|(tag, _)| tag).ok(), Some(1));
        // Either alone is itself.
        assert!(TraceSink::tee(None, None).is_none());
        assert!(TraceSink::tee(None, Some(sinks.sink(3))).is_some());
    }
}
