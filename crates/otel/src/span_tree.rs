//! One chain's trace points made spans: a span per request per hop, the editor's request the
//! root, each forwarded copy a child of the span it came from. Pure; knows no exporter nor I/O.
//!
//! What the core's points say, and what is made of them:
//!
//! - A request read from the editor's link (position 0) opens the **root** span (kind server),
//!   whose parent is the editor's own span when the request's `_meta.traceparent` names one.
//!   It ends when its response is written to the editor, whoever wrote it (a component's
//!   answer relayed, or the core's own: a failure, a timeout, a cancel).
//! - A request the router **forwards** (`Route::forwarded`: to link L as our id N) opens a
//!   **hop** span (kind client) for the copy sent to L, a child of the span of what was
//!   forwarded. It ends when L answers N, or when the request it copies is answered by the
//!   core before that (the copy's outcome is then that answer's).
//! - A request read from a component (a proxy's `proxy/successor`, the agent's
//!   `session/request_permission`, `fs/*`) belongs to the open hop span of the request sent
//!   to that component with the same method and session (what the proxy passes on), else to
//!   the latest open one with the same session (what the agent asks while it works on a
//!   prompt); its forwarded copy is that span's child. With neither, it starts a trace.
//! - Notifications are **events** on the span of the request they belong to: on a
//!   component's link, the latest open hop span sent to it for the same session (a
//!   `session/update` on the prompt's span at that hop); on the editor's link, the root span
//!   of the same session. A notification with no such span open is dropped.
//!
//! Attributes are names, ids, sizes and outcomes, never payloads, and every string goes
//! through the run's redaction.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use acp_router::LinkId;
use acp_router::trace_record::{Dir, Frame, Message, Route};
use acp_trace::Item;
use acp_trace::Redactor;
use acp_trace::classify::{Kind, classify};
use acp_wire::{Envelope, Outcome as WireOutcome, error_code};
use opentelemetry::trace::{Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{IdGenerator, SpanData, SpanEvents, SpanLinks};
use serde::Deserialize;

use crate::attributes as attr;
use crate::trace_context;

/// Spans open at once in one chain; a request past it gets no span (and is counted).
pub const MAX_OPEN: usize = 4096;
/// Events one span keeps; later ones are counted in its `dropped_count`.
pub const MAX_EVENTS: usize = 128;

/// Turns the core's clock (`Instant`s) into wall-clock time, from one reading of both.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    instant: Instant,
    system: SystemTime,
}

impl Clock {
    pub fn now() -> Clock {
        Clock {
            instant: Instant::now(),
            system: SystemTime::now(),
        }
    }

    fn at(&self, at: Instant) -> SystemTime {
        match at.checked_duration_since(self.instant) {
            Some(after) => self.system + after,
            None => self.system - self.instant.duration_since(at),
        }
    }
}

/// How a request ended, as its span says it (`acp.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with a result.
    Result,
    /// Answered with an error (its code).
    Error(i64),
    /// Answered with the conductor's error for a component that did not answer in time.
    Timeout(i64),
    /// Cancelled: a `$/cancel_request` was passed on for it, or its answer says so (the
    /// `-32800` error, or a prompt's `stopReason: "cancelled"`).
    Cancelled,
    /// Never answered: the chain ended first.
    Unanswered,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Result => "result",
            Outcome::Error(_) => "error",
            Outcome::Timeout(_) => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Unanswered => "unanswered",
        }
    }

    /// The outcome a response line says.
    pub fn of_response(line: &[u8]) -> Outcome {
        #[derive(Deserialize)]
        struct Answer<'a> {
            #[serde(rename = "stopReason", borrow)]
            stop_reason: Option<std::borrow::Cow<'a, str>>,
        }
        #[derive(Deserialize)]
        struct ErrorObject<'a> {
            code: i64,
            #[serde(borrow)]
            message: Option<std::borrow::Cow<'a, str>>,
        }
        match acp_wire::parse(line) {
            Ok(Envelope::Response {
                outcome: WireOutcome::Result(result),
                ..
            }) => match serde_json::from_str::<Answer<'_>>(result.get()) {
                Ok(answer) if answer.stop_reason.as_deref() == Some("cancelled") => {
                    Outcome::Cancelled
                }
                _ => Outcome::Result,
            },
            Ok(Envelope::Response {
                outcome: WireOutcome::Error(error),
                ..
            }) => match serde_json::from_str::<ErrorObject<'_>>(error.get()) {
                Ok(error) if error.code == error_code::REQUEST_CANCELLED => Outcome::Cancelled,
                // The core's answer for a component past its request_timeout or
                // startup_timeout (router/src/deadlines.rs, event_loop.rs).
                Ok(error)
                    if error.code == error_code::COMPONENT_FAILED
                        && error
                            .message
                            .as_deref()
                            .is_some_and(|m| m.contains("did not answer")) =>
                {
                    Outcome::Timeout(error.code)
                }
                Ok(error) => Outcome::Error(error.code),
                Err(_) => Outcome::Error(error_code::INTERNAL_ERROR),
            },
            _ => Outcome::Error(error_code::INVALID_REQUEST),
        }
    }
}

/// What a link is called in spans.
#[derive(Debug, Clone)]
struct LinkName {
    name: String,
    /// `None` for a bridge shim.
    position: Option<usize>,
}

/// A span not ended yet.
#[derive(Debug)]
struct Open {
    context: SpanContext,
    parent: SpanId,
    parent_is_remote: bool,
    kind: SpanKind,
    method: String,
    session: Option<String>,
    /// The link the request was read from (a root) or sent to (a hop).
    link: LinkId,
    started: Instant,
    attributes: Vec<KeyValue>,
    events: Vec<Event>,
    dropped_events: u32,
    cancelled: bool,
}

/// A request read from a link, waiting for the response written back to it.
#[derive(Debug)]
enum Received {
    /// The editor's request: the root span, and the hop its copy went to.
    Root {
        span: Box<Open>,
        forwarded: Option<(LinkId, u64)>,
    },
    /// A component's request, forwarded as this hop.
    Forwarded((LinkId, u64)),
}

/// The spans of one chain, built from its trace items in order.
#[derive(Debug)]
pub struct ChainSpans {
    links: HashMap<LinkId, LinkName>,
    /// The requests the conductor sent, by link and our id there: each copy's hop span.
    sent: HashMap<(LinkId, u64), Open>,
    /// The requests read from links, by link and their id (JSON text).
    received: HashMap<(LinkId, Box<str>), Received>,
    clock: Clock,
    ids: Arc<dyn IdGenerator>,
    redactor: Option<Arc<Redactor>>,
    scope: InstrumentationScope,
    /// Requests that got no span because [`MAX_OPEN`] were open.
    pub skipped: u64,
}

impl ChainSpans {
    pub fn new(
        clock: Clock,
        ids: Arc<dyn IdGenerator>,
        redactor: Option<Arc<Redactor>>,
    ) -> ChainSpans {
        ChainSpans {
            links: HashMap::new(),
            sent: HashMap::new(),
            received: HashMap::new(),
            clock,
            ids,
            redactor,
            scope: InstrumentationScope::builder("acp-conductor")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            skipped: 0,
        }
    }

    /// Takes one item of the chain's trace; the spans it ends are appended to `ended`.
    /// After [`Item::End`] every span still open has ended, as unanswered.
    pub fn item(&mut self, item: Item, ended: &mut Vec<SpanData>) {
        match item {
            Item::Link {
                link,
                name,
                position,
            } => {
                self.links.insert(link, LinkName { name, position });
            }
            Item::Message(message) => self.message(message, ended),
            Item::Component { .. } => {}
            Item::End { at, .. } => self.end(at, ended),
        }
    }

    /// Spans open now (sent copies and the editor's requests).
    pub fn open(&self) -> usize {
        self.sent.len()
            + self
                .received
                .values()
                .filter(|r| matches!(r, Received::Root { .. }))
                .count()
    }

    fn message(&mut self, message: Message, ended: &mut Vec<SpanData>) {
        let Message {
            at,
            link,
            dir,
            frame,
            route,
        } = message;
        let Frame::Line(line) = frame else {
            return;
        };
        let seen = classify(&line);
        match (dir, seen.kind) {
            (Dir::In, Kind::Request) => {
                let (Some(method), Some(id)) = (seen.method, seen.id) else {
                    return;
                };
                self.request_in(
                    at,
                    link,
                    &line,
                    &method,
                    &id,
                    seen.session.as_deref(),
                    &route,
                );
            }
            (Dir::In, Kind::Notification) => {
                let Some(method) = seen.method else { return };
                self.notification_in(at, link, &method, seen.session.as_deref(), line.len());
                if let Some((to, id)) = route.cancels
                    && let Some(span) = self.sent.get_mut(&(to, id))
                {
                    span.cancelled = true;
                }
            }
            (Dir::In, Kind::Response | Kind::Error) => {
                let Some(id) = seen.id.and_then(|id| id.parse::<u64>().ok()) else {
                    return;
                };
                if let Some(span) = self.sent.remove(&(link, id)) {
                    let outcome = Outcome::of_response(&line);
                    ended.push(self.finish(span, at, outcome, Some(line.len())));
                }
            }
            (Dir::Out, Kind::Response | Kind::Error) => {
                let Some(id) = seen.id else { return };
                let Some(received) = self.received.remove(&(link, Box::from(id.as_ref()))) else {
                    return;
                };
                let outcome = Outcome::of_response(&line);
                let copy = match received {
                    Received::Root { span, forwarded } => {
                        ended.push(self.finish(*span, at, outcome, Some(line.len())));
                        forwarded
                    }
                    Received::Forwarded(copy) => Some(copy),
                };
                // A copy still open was not answered by its component: the core answered
                // for it (a failure, a timeout, a cancel).
                if let Some(span) = copy.and_then(|copy| self.sent.remove(&copy)) {
                    ended.push(self.finish(span, at, outcome, None));
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn request_in(
        &mut self,
        at: Instant,
        link: LinkId,
        line: &[u8],
        method: &str,
        id: &str,
        session: Option<&str>,
        route: &Route,
    ) {
        if self.sent.len() + self.received.len() >= MAX_OPEN {
            self.skipped += 1;
            return;
        }
        let from_editor = self.position(link) == Some(0);
        if from_editor {
            let remote = match acp_wire::parse(line) {
                Ok(Envelope::Request {
                    params: Some(params),
                    ..
                }) => trace_context::from_params(params.get()),
                _ => None,
            };
            let span = self.open_span(
                at,
                link,
                method,
                session,
                SpanKind::Server,
                remote.as_ref(),
                line.len(),
            );
            let context = span.context.clone();
            let forwarded = route.forwarded;
            if let Some(sent) = forwarded {
                self.open_hop(at, sent, method, session, Some(&context), line.len());
            }
            self.received.insert(
                (link, id.into()),
                Received::Root {
                    span: Box::new(span),
                    forwarded,
                },
            );
            return;
        }
        let Some((to, n)) = route.forwarded else {
            return;
        };
        let parent = self.parent_of(link, method, session);
        self.open_hop(at, (to, n), method, session, parent.as_ref(), line.len());
        self.received
            .insert((link, id.into()), Received::Forwarded((to, n)));
    }

    /// The span a request read from component link `link` belongs to: the latest open copy
    /// sent to it with the same method and session, else with the same session.
    fn parent_of(&self, link: LinkId, method: &str, session: Option<&str>) -> Option<SpanContext> {
        let on_link = || self.sent.values().filter(|span| span.link == link);
        let latest = |spans: &mut dyn Iterator<Item = &Open>| {
            spans
                .max_by_key(|span| span.started)
                .map(|span| span.context.clone())
        };
        latest(
            &mut on_link()
                .filter(|span| span.method == method && span.session.as_deref() == session),
        )
        .or_else(|| {
            session.and_then(|session| {
                latest(&mut on_link().filter(|span| span.session.as_deref() == Some(session)))
            })
        })
    }

    fn notification_in(
        &mut self,
        at: Instant,
        link: LinkId,
        method: &str,
        session: Option<&str>,
        bytes: usize,
    ) {
        let time = self.clock.at(at);
        let attributes = vec![
            KeyValue::new(attr::LINK, self.redacted(&self.link_name(link))),
            KeyValue::new(attr::BYTES, bytes as i64),
        ];
        let name = self.redacted(method);
        let span = if self.position(link) == Some(0) {
            self.received
                .values_mut()
                .filter_map(|received| match received {
                    Received::Root { span, .. } if span.link == link => Some(&mut **span),
                    _ => None,
                })
                .filter(|span| session.is_none() || span.session.as_deref() == session)
                .max_by_key(|span| span.started)
        } else {
            self.sent
                .values_mut()
                .filter(|span| span.link == link)
                .filter(|span| session.is_none() || span.session.as_deref() == session)
                .max_by_key(|span| span.started)
        };
        let Some(span) = span else {
            return;
        };
        if span.events.len() < MAX_EVENTS {
            span.events.push(Event::new(name, time, attributes, 0));
        } else {
            span.dropped_events += 1;
        }
    }

    /// Opens the client span of a request passed on as `sent` (link and our id there), a
    /// child of `parent`, to be closed by its response.
    fn open_hop(
        &mut self,
        at: Instant,
        sent: (LinkId, u64),
        method: &str,
        session: Option<&str>,
        parent: Option<&SpanContext>,
        bytes: usize,
    ) {
        let hop = self.open_span(at, sent.0, method, session, SpanKind::Client, parent, bytes);
        self.sent.insert(sent, hop);
    }

    #[allow(clippy::too_many_arguments)]
    fn open_span(
        &self,
        at: Instant,
        link: LinkId,
        method: &str,
        session: Option<&str>,
        kind: SpanKind,
        parent: Option<&SpanContext>,
        bytes: usize,
    ) -> Open {
        let (trace_id, state, parent_id, parent_is_remote) = match parent {
            Some(parent) => (
                parent.trace_id(),
                parent.trace_state().clone(),
                parent.span_id(),
                parent.is_remote(),
            ),
            None => (
                self.ids.new_trace_id(),
                TraceState::NONE,
                SpanId::INVALID,
                false,
            ),
        };
        let context = SpanContext::new(
            trace_id,
            self.ids.new_span_id(),
            TraceFlags::SAMPLED,
            false,
            state,
        );
        let names = self.links.get(&link);
        let mut attributes = vec![
            KeyValue::new(attr::RPC_SYSTEM, "jsonrpc"),
            KeyValue::new(attr::METHOD, self.redacted(method)),
            KeyValue::new(attr::LINK, self.redacted(&self.link_name(link))),
        ];
        if let Some(position) = names.and_then(|names| names.position) {
            attributes.push(KeyValue::new(attr::POSITION, position as i64));
        }
        if let Some(session) = session {
            attributes.push(KeyValue::new(attr::SESSION, self.redacted(session)));
        }
        attributes.push(KeyValue::new(attr::REQUEST_BYTES, bytes as i64));
        Open {
            context,
            parent: parent_id,
            parent_is_remote,
            kind,
            method: method.to_owned(),
            session: session.map(str::to_owned),
            link,
            started: at,
            attributes,
            events: Vec::new(),
            dropped_events: 0,
            cancelled: false,
        }
    }

    fn finish(
        &self,
        span: Open,
        at: Instant,
        outcome: Outcome,
        response_bytes: Option<usize>,
    ) -> SpanData {
        let outcome = match outcome {
            Outcome::Error(_) | Outcome::Unanswered if span.cancelled => Outcome::Cancelled,
            outcome => outcome,
        };
        let mut attributes = span.attributes;
        attributes.push(KeyValue::new(attr::OUTCOME, outcome.name()));
        if let Some(bytes) = response_bytes {
            attributes.push(KeyValue::new(attr::RESPONSE_BYTES, bytes as i64));
        }
        let status = match outcome {
            Outcome::Error(code) | Outcome::Timeout(code) => {
                attributes.push(KeyValue::new(attr::ERROR_CODE, code));
                Status::error(format!("{} {code}", outcome.name()))
            }
            Outcome::Unanswered => Status::error("unanswered"),
            Outcome::Result | Outcome::Cancelled => Status::Unset,
        };
        let mut events = SpanEvents::default();
        events.events = span.events;
        events.dropped_count = span.dropped_events;
        SpanData {
            span_context: span.context,
            parent_span_id: span.parent,
            parent_span_is_remote: span.parent_is_remote,
            span_kind: span.kind,
            name: self.redacted(&span.method).into(),
            start_time: self.clock.at(span.started),
            end_time: self.clock.at(at.max(span.started)),
            attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }

    /// The chain ended at `at`: every span still open ends, unanswered.
    fn end(&mut self, at: Instant, ended: &mut Vec<SpanData>) {
        let sent: Vec<Open> = self.sent.drain().map(|(_, span)| span).collect();
        let roots: Vec<Open> = self
            .received
            .drain()
            .filter_map(|(_, received)| match received {
                Received::Root { span, .. } => Some(*span),
                Received::Forwarded(_) => None,
            })
            .collect();
        for span in roots.into_iter().chain(sent) {
            ended.push(self.finish(span, at, Outcome::Unanswered, None));
        }
    }

    fn position(&self, link: LinkId) -> Option<usize> {
        self.links.get(&link).and_then(|names| names.position)
    }

    fn link_name(&self, link: LinkId) -> String {
        match self.links.get(&link) {
            Some(names) => names.name.clone(),
            None => format!("link {}", link.0),
        }
    }

    fn redacted(&self, text: &str) -> String {
        match &self.redactor {
            Some(redactor) => redactor.text(text).into_owned(),
            None => text.to_owned(),
        }
    }
}

#[cfg(test)]
#[path = "span_tree_tests.rs"]
mod tests;
