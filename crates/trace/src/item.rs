//! What the producers of a trace (the links' write loops, the router, the components) hand
//! the trace thread: plain data, taken as observed, formatted later on the trace thread.

use std::time::Instant;

pub use acp_router::trace_record::{ComponentEvent, Dir, Frame, Message, Route};

use acp_router::LinkId;

/// One thing to write, or to know before writing.
#[derive(Debug)]
pub enum Item {
    /// A message that crossed a link.
    Message(Message),
    /// The name and chain position (`None` for a bridge shim) records of `link` carry from
    /// now on.
    Link {
        link: LinkId,
        name: String,
        position: Option<usize>,
    },
    /// Something that happened to a component.
    Component {
        at: Instant,
        name: String,
        event: ComponentEvent,
        detail: String,
    },
    /// The run ends: the last record, then the file is flushed and closed.
    End { at: Instant, reason: String },
}
