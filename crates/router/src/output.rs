//! What the core asks its driver to do with links and the trace, in the order it decided it:
//! send a frame, pause or resume a reader, close an output, record a trace point.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::link::LinkId;
use crate::trace_record::TracePoint;

#[derive(Debug)]
pub enum Output {
    /// Queue `frame` (one message, without its newline) toward the peer of `to`. If that
    /// queue is now over its limit, the driver tells the core with
    /// [`Router::congested`](crate::Router::congested)`(to, from)`.
    Send {
        to: LinkId,
        frame: Bytes,
        from: LinkId,
    },
    /// Stop reading from the peer of `link` until it is resumed.
    Pause(LinkId),
    /// Read from the peer of `link` again.
    Resume(LinkId),
    /// Nothing more goes to `link`: its writer finishes what is queued and closes the output.
    Close(LinkId),
    /// A point of the per-hop trace (a traced run only).
    Trace(TracePoint),
    /// The editor asked for a reload (`_acp-conductor/reload`): the driver has the
    /// configuration read again and hands the core what was found
    /// ([`Router::reload`](crate::Router::reload), [`Router::reload_rejected`](crate::Router::reload_rejected)
    /// or [`Router::reload_unchanged`](crate::Router::reload_unchanged)).
    ReloadWanted,
}

/// The outputs not yet taken by the driver, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Outputs(VecDeque<Output>);

impl Outputs {
    pub(crate) fn push(&mut self, output: Output) {
        self.0.push_back(output);
    }

    pub(crate) fn pop(&mut self) -> Option<Output> {
        self.0.pop_front()
    }
}
