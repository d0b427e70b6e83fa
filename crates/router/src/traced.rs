//! The router's trace points: each frame it takes from a link, recorded with where it went
//! (`mapsTo`, `cancels`), and the component events only it knows. Nothing when tracing is off,
//! but the component events if the driver counts them.

use bytes::Bytes;

use super::{Components, Router};
use crate::link::LinkId;
use crate::route_trace::RouteTrace;
use crate::trace_record::ComponentEvent;

impl<C: Components> Router<C> {
    /// Records, as [`Output::Trace`](crate::Output::Trace) points, every frame this router
    /// takes and where it goes; the links it was given are named now, the ones it learns of
    /// later as it does.
    pub fn with_trace(mut self, traced: bool) -> Router<C> {
        self.trace = traced.then(RouteTrace::default);
        if let Some(trace) = &self.trace {
            for (id, link) in self.links.iter() {
                trace.link(&mut self.outputs, id, &link.name, link.position);
            }
        }
        self
    }

    /// Hands out the component events (failed, restarted, bypassed) as
    /// [`TracePoint::Component`](crate::trace_record::TracePoint::Component) points even when
    /// the run is not traced, for a driver that counts them; they are rare, so this costs
    /// nothing per message.
    pub fn with_component_events(mut self, on: bool) -> Router<C> {
        self.component_events = on;
        self
    }

    /// Whether this run is traced: the input loop routes frames one way or the other.
    pub(super) fn traced(&self) -> bool {
        self.trace.is_some()
    }

    /// Names `link` for the trace (a component started again, a bridge shim).
    pub(super) fn trace_link(&mut self, link: LinkId) {
        if let Some(trace) = &self.trace {
            let state = &self.links[link];
            trace.link(&mut self.outputs, link, &state.name, state.position);
        }
    }

    /// The name a bridge shim's link gets once it names its server.
    pub(super) fn trace_shim_named(&mut self, link: LinkId, server: &str) {
        if let Some(trace) = &mut self.trace {
            let name = trace.shim_name(server);
            trace.link(&mut self.outputs, link, &name, None);
        }
    }

    /// The router takes `frame` from `link`: its record waits for where it goes.
    pub(super) fn trace_in(&mut self, link: LinkId, frame: &Bytes) {
        if let Some(trace) = &mut self.trace {
            trace.begin(&mut self.outputs, self.now, link, frame);
        }
    }

    fn trace_too_long(&mut self, link: LinkId, len: usize, id: Option<String>) {
        if let Some(trace) = &mut self.trace {
            trace.begin_too_long(&mut self.outputs, self.now, link, len, id);
        }
    }

    /// The router learns that a line over the limit was dropped unread on `link`.
    pub(super) fn trace_too_long_line(&mut self, link: LinkId, error: &acp_wire::FrameError) {
        let acp_wire::FrameError::TooLong { len, seen, .. } = error;
        self.trace_too_long(link, *len, seen.id.clone());
    }

    /// The frame being routed is held; it is recorded when it is routed after all.
    pub(super) fn trace_held(&mut self) {
        if let Some(trace) = &mut self.trace {
            trace.held();
        }
    }

    /// The frame being routed, a request from `from`, went to `to` as our request `id`.
    pub(super) fn trace_forwarded(&mut self, from: LinkId, to: LinkId, id: u64) {
        if let Some(trace) = &mut self.trace {
            trace.forwarded(from, to, id);
        }
    }

    /// The frame being routed, a response, went to `to` with id `id` (JSON text).
    pub(super) fn trace_answered(&mut self, to: LinkId, id: &str) {
        if let Some(trace) = &mut self.trace {
            trace.answered(to, id);
        }
    }

    /// The frame being routed, a `$/cancel_request`, went to `to` naming our request `id`.
    pub(super) fn trace_cancels(&mut self, to: LinkId, id: u64) {
        if let Some(trace) = &mut self.trace {
            trace.cancels(to, id);
        }
    }

    /// The record of the frame being routed goes out now (before what it causes is queued,
    /// or once the router is done with it).
    pub(super) fn trace_flush(&mut self) {
        if let Some(trace) = &mut self.trace {
            trace.flush(&mut self.outputs);
        }
    }

    pub(super) fn trace_component(&mut self, name: &str, event: ComponentEvent, detail: String) {
        if let Some(trace) = &self.trace {
            trace.component(&mut self.outputs, self.now, name, event, detail);
        } else if self.component_events {
            self.outputs.push(crate::Output::Trace(
                crate::trace_record::TracePoint::Component {
                    at: self.now,
                    name: name.to_owned(),
                    event,
                    detail,
                },
            ));
        }
    }
}
