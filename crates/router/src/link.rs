//! The core's names for links and what a link reports: ids that are never reused, and the
//! events a link's loops hand in. Plain data; the links layer produces them, the core takes them.

use acp_wire::FrameError;
use bytes::Bytes;

/// One link of a run, unique for the run: a component started again gets a new link, so
/// what its previous link still reports cannot be mistaken for the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub usize);

impl std::fmt::Display for LinkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "link {}", self.0)
    }
}

/// What a link's loops report to the router.
#[derive(Debug)]
pub enum LinkEvent {
    /// Frames read from the peer, in order.
    Frames(Vec<Bytes>),
    /// A line over the limit was dropped unread.
    TooLong(FrameError),
    /// End of the peer's output; `Some` if it ended with a read error.
    Closed(Option<String>),
    /// A congested outbox fell below its resume mark: senders paused on it may go on.
    Drained,
    /// Writing to the peer failed (`stalled: false`, usually because it is exiting) or
    /// made no progress for the write timeout (`stalled: true`).
    WriteFailed { reason: String, stalled: bool },
}
