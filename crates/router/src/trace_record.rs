//! What the core records for the per-hop trace: messages with where the router sent them,
//! link names, component events. Plain data, formatted and written by the trace layer.

use std::time::Instant;

use bytes::Bytes;

use crate::link::LinkId;

/// One trace point the core hands its driver, in the order it happened.
#[derive(Debug)]
pub enum TracePoint {
    /// The name and chain position (`None` for a bridge shim) records of `link` carry from
    /// now on.
    Link {
        link: LinkId,
        name: String,
        position: Option<usize>,
    },
    /// A frame the router took, with where it went.
    Message(Message),
    /// Something that happened to a component.
    Component {
        at: Instant,
        name: String,
        event: ComponentEvent,
        detail: String,
    },
}

/// One message on one link.
#[derive(Debug, Clone)]
pub struct Message {
    pub at: Instant,
    pub link: LinkId,
    pub dir: Dir,
    pub frame: Frame,
    /// What the router did with it (frames in only).
    pub route: Route,
}

/// Read by the conductor from the link (`In`) or written by it to the link (`Out`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::In => "in",
            Dir::Out => "out",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Frame {
    /// The line as on the link, without its newline.
    Line(Bytes),
    /// A line over `max_line`, dropped unread: its length and the id its top level showed.
    TooLong { len: usize, id: Option<String> },
}

impl Frame {
    /// The bytes this frame holds in memory (what it costs to queue it).
    pub fn held_bytes(&self) -> usize {
        match self {
            Frame::Line(line) => line.len(),
            Frame::TooLong { .. } => 0,
        }
    }
}

/// Where the router sent a frame it read, as far as the frame's kind makes it meaningful.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Route {
    /// A request forwarded: the link it went to and the conductor's id for it there.
    pub forwarded: Option<(LinkId, u64)>,
    /// A response relayed: the link it went to and the id it carries there (JSON text).
    pub answered: Option<(LinkId, Box<str>)>,
    /// A `$/cancel_request` passed on: the link it went to and the request id it names there.
    pub cancels: Option<(LinkId, u64)>,
}

/// The `event` of a component record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentEvent {
    Started,
    Exited,
    Restarted,
    Bypassed,
    Failed,
    /// A reload's new instance took the component's place.
    Swapped,
    /// An instance a reload replaced or removed was stopped.
    Retired,
}

impl ComponentEvent {
    pub fn name(self) -> &'static str {
        match self {
            ComponentEvent::Started => "started",
            ComponentEvent::Exited => "exited",
            ComponentEvent::Restarted => "restarted",
            ComponentEvent::Bypassed => "bypassed",
            ComponentEvent::Failed => "failed",
            ComponentEvent::Swapped => "swapped",
            ComponentEvent::Retired => "retired",
        }
    }
}
