//! The router's side of a trace: the record of the frame it is routing, completed with where
//! the frame went and sent before anything routing it queues, so a frame in precedes its effects.

use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;

use super::item::{ComponentEvent, Dir, Frame, Message, Route};
use super::sink::TraceSink;
use crate::link::LinkId;

/// Held by the router when tracing is on.
#[derive(Debug)]
pub struct RouteTrace {
    sink: TraceSink,
    /// The frame being routed, not sent yet.
    current: Option<Message>,
    /// Connections to each MCP server so far, for naming shim links.
    shims: HashMap<String, usize>,
}

impl RouteTrace {
    pub fn new(sink: TraceSink) -> RouteTrace {
        RouteTrace {
            sink,
            current: None,
            shims: HashMap::new(),
        }
    }

    /// Names `link` (`position` is `None` for a bridge shim) for the records that follow.
    pub fn link(&self, link: LinkId, name: &str, position: Option<usize>) {
        self.sink.link(link, name, position);
    }

    /// The name of the next connection to MCP server `server`: `shim:<server>#<n>`.
    pub fn shim_name(&mut self, server: &str) -> String {
        let n = self.shims.entry(server.to_owned()).or_default();
        *n += 1;
        format!("shim:{server}#{n}")
    }

    /// The router takes `frame`, read from `link`.
    pub fn begin(&mut self, link: LinkId, frame: &Bytes) {
        self.begin_frame(link, Frame::Line(frame.clone()));
    }

    /// The router learns that a line over the limit was dropped unread on `link`.
    pub fn begin_too_long(&mut self, link: LinkId, len: usize, id: Option<String>) {
        self.begin_frame(link, Frame::TooLong { len, id });
    }

    fn begin_frame(&mut self, link: LinkId, frame: Frame) {
        self.flush();
        self.current = Some(Message {
            at: Instant::now(),
            link,
            dir: Dir::In,
            frame,
            route: Route::default(),
        });
    }

    /// The frame is held (for a restarting component, or a shim connection not yet made):
    /// it is recorded when it is routed.
    pub fn held(&mut self) {
        self.current = None;
    }

    /// A request from `from` went to `to` as our request `id`.
    pub fn forwarded(&mut self, from: LinkId, to: LinkId, id: u64) {
        if let Some(current) = &mut self.current
            && current.link == from
            && current.route.forwarded.is_none()
        {
            current.route.forwarded = Some((to, id));
        }
    }

    /// A response went to `to` with id `id` (JSON text).
    pub fn answered(&mut self, to: LinkId, id: &str) {
        if let Some(current) = &mut self.current
            && current.route.answered.is_none()
        {
            current.route.answered = Some((to, id.into()));
        }
    }

    /// A `$/cancel_request` went to `to`, naming our request `id` there.
    pub fn cancels(&mut self, to: LinkId, id: u64) {
        if let Some(current) = &mut self.current
            && current.route.cancels.is_none()
        {
            current.route.cancels = Some((to, id));
        }
    }

    /// Sends the record of the frame being routed, if not sent yet: before anything is
    /// queued for a peer, and when the router is done with the frame.
    pub fn flush(&mut self) {
        if let Some(message) = self.current.take() {
            self.sink.message(message);
        }
    }

    pub fn component(&self, name: &str, event: ComponentEvent, detail: String) {
        self.sink.component(name, event, detail);
    }
}
