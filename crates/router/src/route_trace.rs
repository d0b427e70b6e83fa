//! The record of the frame the router is routing, completed with where the frame went and
//! handed out before anything routing it queues, so a frame in precedes its effects.

use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;

use crate::link::LinkId;
use crate::output::{Output, Outputs};
use crate::trace_record::{ComponentEvent, Dir, Frame, Message, Route, TracePoint};

/// Held by the router when tracing is on.
#[derive(Debug, Default)]
pub(crate) struct RouteTrace {
    /// The frame being routed, not handed out yet.
    current: Option<Message>,
    /// Connections to each MCP server so far, for naming shim links.
    shims: HashMap<String, usize>,
}

impl RouteTrace {
    /// Names `link` (`position` is `None` for a bridge shim) for the records that follow.
    pub(crate) fn link(
        &self,
        out: &mut Outputs,
        link: LinkId,
        name: &str,
        position: Option<usize>,
    ) {
        out.push(Output::Trace(TracePoint::Link {
            link,
            name: name.to_owned(),
            position,
        }));
    }

    /// The name of the next connection to MCP server `server`: `shim:<server>#<n>`.
    pub(crate) fn shim_name(&mut self, server: &str) -> String {
        let n = self.shims.entry(server.to_owned()).or_default();
        *n += 1;
        format!("shim:{server}#{n}")
    }

    /// The router takes `frame`, read from `link`, at `at`.
    pub(crate) fn begin(&mut self, out: &mut Outputs, at: Instant, link: LinkId, frame: &Bytes) {
        self.begin_frame(out, at, link, Frame::Line(frame.clone()));
    }

    /// The router learns that a line over the limit was dropped unread on `link`.
    pub(crate) fn begin_too_long(
        &mut self,
        out: &mut Outputs,
        at: Instant,
        link: LinkId,
        len: usize,
        id: Option<String>,
    ) {
        self.begin_frame(out, at, link, Frame::TooLong { len, id });
    }

    fn begin_frame(&mut self, out: &mut Outputs, at: Instant, link: LinkId, frame: Frame) {
        self.flush(out);
        self.current = Some(Message {
            at,
            link,
            dir: Dir::In,
            frame,
            route: Route::default(),
        });
    }

    /// The frame is held (for a restarting component, or a shim connection not yet made):
    /// it is recorded when it is routed.
    pub(crate) fn held(&mut self) {
        self.current = None;
    }

    /// A request from `from` went to `to` as our request `id`.
    pub(crate) fn forwarded(&mut self, from: LinkId, to: LinkId, id: u64) {
        if let Some(current) = &mut self.current
            && current.link == from
            && current.route.forwarded.is_none()
        {
            current.route.forwarded = Some((to, id));
        }
    }

    /// A response went to `to` with id `id` (JSON text).
    pub(crate) fn answered(&mut self, to: LinkId, id: &str) {
        if let Some(current) = &mut self.current
            && current.route.answered.is_none()
        {
            current.route.answered = Some((to, id.into()));
        }
    }

    /// A `$/cancel_request` went to `to`, naming our request `id` there.
    pub(crate) fn cancels(&mut self, to: LinkId, id: u64) {
        if let Some(current) = &mut self.current
            && current.route.cancels.is_none()
        {
            current.route.cancels = Some((to, id));
        }
    }

    /// Hands out the record of the frame being routed, if not handed out yet: before
    /// anything is queued for a peer, and when the router is done with the frame.
    pub(crate) fn flush(&mut self, out: &mut Outputs) {
        if let Some(message) = self.current.take() {
            out.push(Output::Trace(TracePoint::Message(message)));
        }
    }

    pub(crate) fn component(
        &self,
        out: &mut Outputs,
        at: Instant,
        name: &str,
        event: ComponentEvent,
        detail: String,
    ) {
        out.push(Output::Trace(TracePoint::Component {
            at,
            name: name.to_owned(),
            event,
            detail,
        }));
    }
}
