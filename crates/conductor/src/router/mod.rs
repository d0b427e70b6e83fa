//! The routing task: owns every link's state and id table and moves each frame one hop, in
//! arrival order. Must not know how components run or what payloads mean beyond initialize.
//!
//! Rules come from [`topology`] (where a message goes) and [`pending`] (where a response goes);
//! this module applies them, rewrites ids and method names by splicing, and answers requests
//! itself only when a component cannot (it failed, or the conductor is shutting down).

mod bridge;
mod initialize;
mod mcp_routes;
pub mod pending;
pub mod topology;

use std::sync::Arc;
use std::time::Duration;

use acp_wire::encode::{self, Call};
use acp_wire::error_code;
use acp_wire::successor::{self, Dialect, EnvelopeMeta};
use acp_wire::{Envelope, IdKey, Invalid, Outcome, RawValue};
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::event::{Event, LinkId, ReadEvent};
use crate::transport::{Outbox, Queued, ReadGate};
pub use bridge::LinkLimits;
use bridge::Shims;
pub use initialize::AgentCapabilities;
use mcp_routes::{McpRoute, McpTable};
use pending::{Pending, PendingRequests, Purpose};
use topology::{Hop, Topology};

/// How long a component may leave its output closed before it counts as gone even if its
/// process has not been reaped yet.
const CLOSED_OUTPUT_GRACE: Duration = Duration::from_millis(500);
/// The error for the agent's MCP requests that meet the conductor's shutdown.
const STOPPING: &str = "the conductor is shutting down";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The editor, or in proxy mode the parent conductor.
    Editor,
    Proxy,
    Agent,
    /// An MCP bridge shim the agent launched, connected over the private socket.
    Shim,
}

impl Role {
    fn noun(self) -> &'static str {
        match self {
            Role::Editor => "editor",
            Role::Proxy => "proxy",
            Role::Agent => "agent",
            Role::Shim => "MCP bridge",
        }
    }
}

/// How a proxy's dialect is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialectChoice {
    /// Start with the RFD's `proxy/*`; fall back to `_proxy/*` if `proxy/initialize` is unknown.
    Detect,
    Pinned(Dialect),
}

/// One link as handed to the router.
#[derive(Debug)]
pub struct LinkSetup {
    pub name: String,
    pub role: Role,
    pub outbox: Outbox,
    pub gate: Arc<ReadGate>,
    pub dialect: DialectChoice,
}

/// How the routing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The editor left or asked us to stop.
    Stopped,
    /// A component failed and the chain went down with it.
    Failed,
}

#[derive(Debug)]
enum RunState {
    Running,
    /// A component failed; every editor request still arriving is answered with this error.
    Failed(Failure),
    /// The editor closed its input; waiting for its pending requests until the deadline.
    Draining {
        deadline: Instant,
    },
    Finished(Finish),
}

#[derive(Debug, Clone)]
struct Failure {
    message: String,
    data: Box<RawValue>,
}

#[derive(Debug)]
struct LinkState {
    name: String,
    role: Role,
    outbox: Outbox,
    gate: Arc<ReadGate>,
    pending: PendingRequests,
    alive: bool,
    /// Links paused because they sent into this link's full outbox.
    paused_senders: Vec<LinkId>,
    dialect: Dialect,
    dialect_pinned: bool,
}

impl LinkState {
    fn new(name: String, role: Role, outbox: Outbox, gate: Arc<ReadGate>) -> LinkState {
        LinkState {
            name,
            role,
            outbox,
            gate,
            pending: PendingRequests::default(),
            alive: true,
            paused_senders: Vec::new(),
            dialect: Dialect::Rfd,
            dialect_pinned: false,
        }
    }
}

pub struct Router {
    topology: Topology,
    links: Vec<LinkState>,
    events: mpsc::Receiver<Event>,
    /// For events the router schedules for itself (a closed output's grace period).
    events_tx: mpsc::Sender<Event>,
    state: RunState,
    shutdown_grace: Duration,
    /// The dialect the parent conductor addressed us in (proxy mode).
    parent_dialect: Dialect,
    /// The editor has sent at least one request (so a failure has been, or will be, reported).
    editor_asked: bool,
    agent: Option<AgentCapabilities>,
    mcp: McpTable,
    shims: Shims,
}

impl Router {
    pub fn new(
        topology: Topology,
        links: Vec<LinkSetup>,
        events: mpsc::Receiver<Event>,
        events_tx: mpsc::Sender<Event>,
        shutdown_grace: Duration,
    ) -> Router {
        assert_eq!(links.len(), topology.link_count(), "one setup per link");
        let links = links
            .into_iter()
            .map(|l| {
                let (dialect, pinned) = match l.dialect {
                    DialectChoice::Detect => (Dialect::Rfd, false),
                    DialectChoice::Pinned(d) => (d, true),
                };
                LinkState {
                    dialect,
                    dialect_pinned: pinned,
                    ..LinkState::new(l.name, l.role, l.outbox, l.gate)
                }
            })
            .collect();
        Router {
            topology,
            links,
            events,
            events_tx,
            state: RunState::Running,
            shutdown_grace,
            parent_dialect: Dialect::Rfd,
            editor_asked: false,
            agent: None,
            mcp: McpTable::default(),
            shims: Shims::default(),
        }
    }

    /// The line cap, queue limit and write timeout of the links made for bridge shims.
    pub fn set_shim_limits(&mut self, limits: LinkLimits) {
        self.shims.limits = Some(limits);
    }

    /// What the agent said about itself in its `InitializeResponse`, once it has.
    pub fn agent_capabilities(&self) -> Option<AgentCapabilities> {
        self.agent
    }

    /// After [`run`](Self::run): closes the editor's output and every component's input
    /// (each writer first finishes what is queued). Bridge shims stay connected, so that the
    /// agent, told to stop, closes its MCP servers itself instead of seeing them die first;
    /// MCP requests they still wait on are answered with an error, as no provider will.
    pub fn close_components(&mut self) {
        for l in &mut self.links {
            if l.role != Role::Shim {
                l.outbox = Outbox::closed();
            }
        }
        let waiting = self.take_pending(|p| matches!(p.purpose, Purpose::Bridge(_)));
        if !waiting.is_empty() {
            tracing::debug!(
                requests = waiting.len(),
                "answering the agent's MCP requests still waiting on a provider"
            );
        }
        for p in waiting {
            self.fail_bridge_request(p, STOPPING);
        }
    }

    /// After [`close_components`](Self::close_components): lets go of each shim as soon as
    /// it closes its side (the agent closed that MCP server), so it exits at once. MCP
    /// requests the agent sends meanwhile are answered with an error. Returns when no shim
    /// is connected; the caller bounds the wait.
    pub async fn release_shims(&mut self) {
        while self.links.iter().any(|l| l.role == Role::Shim && l.alive) {
            match self.events.recv().await {
                Some(Event::Read {
                    link,
                    event: ReadEvent::Frames(frames),
                }) if self.links[link].role == Role::Shim => {
                    for frame in frames {
                        self.shim_frame_after_failure(link, &frame, STOPPING);
                    }
                }
                Some(
                    Event::Read {
                        link,
                        event: ReadEvent::Closed(_),
                    }
                    | Event::WriteFailed { link, .. },
                ) if self.links[link].role == Role::Shim => {
                    self.links[link].alive = false;
                    self.links[link].outbox = Outbox::closed();
                }
                Some(_) => {}
                None => return,
            }
        }
    }

    /// Routes until the editor leaves, a signal arrives, or the chain fails.
    pub async fn run(&mut self) -> Finish {
        loop {
            if let RunState::Finished(finish) = self.state {
                return finish;
            }
            let event = match self.state {
                RunState::Draining { deadline } => {
                    tokio::select! {
                        ev = self.events.recv() => ev,
                        _ = tokio::time::sleep_until(deadline) => {
                            self.answer_editor_requests(error_code::SHUTTING_DOWN, "the conductor is shutting down", None);
                            self.state = RunState::Finished(Finish::Stopped);
                            continue;
                        }
                    }
                }
                _ => self.events.recv().await,
            };
            match event {
                Some(event) => self.handle(event),
                None => return Finish::Stopped,
            }
        }
    }

    /// Applies one event. Public so a component that failed before the loop started can be
    /// reported in order.
    pub fn handle(&mut self, event: Event) {
        match event {
            Event::Read { link, event } if self.links[link].role == Role::Shim => match event {
                ReadEvent::Frames(frames) => {
                    for frame in frames {
                        match &self.state {
                            RunState::Failed(failure) => {
                                let message = failure.message.clone();
                                self.shim_frame_after_failure(link, &frame, &message);
                            }
                            _ => self.on_shim_frame(link, frame),
                        }
                    }
                }
                ReadEvent::TooLong(e) => self.on_oversized(link, e),
                ReadEvent::Closed(_) => self.on_shim_gone(link),
            },
            Event::WriteFailed { link, .. } if self.links[link].role == Role::Shim => {
                self.on_shim_gone(link)
            }
            Event::ShimConnected(stream) => self.on_shim_connected(stream),
            Event::Read { link, event } => match event {
                ReadEvent::Frames(frames) => {
                    for frame in frames {
                        self.on_frame(link, frame);
                    }
                }
                ReadEvent::TooLong(e) => self.on_oversized(link, e),
                ReadEvent::Closed(err) => self.on_closed(link, err),
            },
            Event::Drained { link } => self.on_drained(link),
            Event::WriteFailed {
                link,
                reason,
                stalled,
            } => {
                if link == 0 {
                    tracing::debug!(%reason, "the editor stopped reading");
                    self.state = RunState::Finished(self.finish_kind());
                } else if stalled {
                    self.component_gone(link, reason, Vec::new());
                } else {
                    self.expect_exit(link, reason);
                }
            }
            Event::Exited {
                link,
                reason,
                stderr_tail,
            } => self.component_gone(link, reason, stderr_tail),
            Event::Signal(name) => {
                tracing::info!(signal = name, "shutting down");
                self.answer_editor_requests(
                    error_code::SHUTTING_DOWN,
                    &format!("the conductor received {name} and is shutting down"),
                    None,
                );
                self.state = RunState::Finished(self.finish_kind());
            }
        }
        self.check_drained();
    }

    fn finish_kind(&self) -> Finish {
        match self.state {
            RunState::Failed(_) | RunState::Finished(Finish::Failed) => Finish::Failed,
            _ => Finish::Stopped,
        }
    }

    fn on_frame(&mut self, link: LinkId, frame: Bytes) {
        match acp_wire::parse(&frame) {
            Ok(Envelope::Request { id, method, params }) => {
                self.on_call(link, Some(id), method, params, &frame)
            }
            Ok(Envelope::Notification { method, params }) => {
                self.on_call(link, None, method, params, &frame)
            }
            Ok(Envelope::Response { id, outcome }) => self.on_response(link, id, outcome),
            Err(invalid) => self.on_invalid(link, invalid),
        }
    }

    /// A request (`id: Some`) or notification arriving on `link`.
    fn on_call(
        &mut self,
        link: LinkId,
        id: Option<&RawValue>,
        method: &str,
        params: Option<&RawValue>,
        frame: &Bytes,
    ) {
        if link == 0 && id.is_some() {
            self.editor_asked = true;
        }
        if let RunState::Failed(failure) = &self.state {
            if let Some(id) = id
                && link == 0
            {
                let failure = failure.clone();
                self.reply_error(
                    0,
                    id.get(),
                    error_code::COMPONENT_FAILED,
                    &failure.message,
                    Some(&failure.data),
                );
            }
            return;
        }
        let origin = self.topology.classify(link, method);
        let (method, params, meta) = if origin.wrapped {
            match successor::unwrap(params) {
                Ok(w) => (w.method, w.params, w.meta),
                Err(reason) => {
                    tracing::warn!(component = %self.links[link].name, reason, "malformed proxy/successor");
                    if let Some(id) = id {
                        self.reply_error(link, id.get(), error_code::INVALID_PARAMS, reason, None);
                    }
                    return;
                }
            }
        } else {
            (method, params, EnvelopeMeta::default())
        };
        let method = match self.initialize_from_parent(link, method) {
            Ok(method) => method,
            Err(message) => {
                if let Some(id) = id {
                    self.reply_error(link, id.get(), error_code::INVALID_REQUEST, message, None);
                }
                return;
            }
        };
        if method.starts_with("mcp/") {
            match self.mcp_route(link, origin, method, params) {
                McpRoute::Ordinary => {}
                McpRoute::To(hop, rewritten) => {
                    let reusable = !origin.wrapped && !hop.wrap && rewritten.is_none();
                    let params = rewritten.as_deref().or(params);
                    return self.deliver(link, hop, id, method, params, meta, frame, reusable);
                }
                McpRoute::Shim(shim) => return self.relay_to_shim(shim, link, id, params),
                McpRoute::Refuse(message) => {
                    tracing::warn!(component = %self.links[link].name, method, "{message}");
                    if let Some(id) = id {
                        self.reply_error(
                            link,
                            id.get(),
                            error_code::INVALID_PARAMS,
                            &message,
                            None,
                        );
                    }
                    return;
                }
                McpRoute::Unserved(message) => {
                    tracing::debug!(component = %self.links[link].name, method, "{message}");
                    if let Some(id) = id {
                        let code = error_code::METHOD_NOT_FOUND;
                        self.reply_error(link, id.get(), code, &message, None);
                    }
                    return;
                }
            }
        }
        let hop = self.topology.next_hop(origin);
        let rewritten = if id.is_some()
            && origin.toward == topology::Toward::Agent
            && crate::mcp::declaration::is_session_setup(method)
        {
            self.on_session_setup(link, hop, params)
        } else {
            None
        };
        let reusable = !origin.wrapped && !hop.wrap && rewritten.is_none();
        let params = rewritten.as_deref().or(params);
        self.deliver(link, hop, id, method, params, meta, frame, reusable);
    }

    /// `proxy/initialize` is how a parent conductor opens a nested chain; it travels on as
    /// `initialize`. An editor sending it to a terminal chain has misconfigured something.
    fn initialize_from_parent<'m>(
        &mut self,
        link: LinkId,
        method: &'m str,
    ) -> Result<&'m str, &'static str> {
        let Some(dialect) = (link == 0)
            .then(|| Dialect::of_initialize(method))
            .flatten()
        else {
            return Ok(method);
        };
        match self.topology.mode {
            topology::ChainMode::Proxy => {
                self.parent_dialect = dialect;
                Ok("initialize")
            }
            topology::ChainMode::Agent => Err(
                "this conductor runs as an agent and expects `initialize`; run it with `run --proxy` to nest it in another conductor",
            ),
        }
    }

    /// Sends a request or notification one hop. `frame` is the arriving frame; `reusable`
    /// says it can go on byte-for-byte if nothing else needs rewriting.
    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &mut self,
        from: LinkId,
        hop: Hop,
        id: Option<&RawValue>,
        method: &str,
        params: Option<&RawValue>,
        meta: EnvelopeMeta<'_>,
        frame: &Bytes,
        reusable: bool,
    ) {
        let target = &self.links[hop.link];
        if !target.alive {
            if let Some(id) = id {
                let message = format!("{} `{}` is not running", target.role.noun(), target.name);
                self.reply_error(from, id.get(), error_code::COMPONENT_FAILED, &message, None);
            }
            return;
        }
        let out_method = if !hop.wrap && target.role == Role::Proxy && method == "initialize" {
            target.dialect.initialize_method()
        } else {
            method
        };
        let via = if hop.wrap {
            let dialect = if hop.link == 0 {
                self.parent_dialect
            } else {
                target.dialect
            };
            Some(dialect.successor_method())
        } else {
            None
        };

        let rewritten_cancel;
        let mut params = params;
        if id.is_none() && method == "$/cancel_request" {
            match self.cancel_target(from, hop.link, params) {
                Some(p) => {
                    rewritten_cancel = p;
                    params = Some(&rewritten_cancel);
                }
                None => {
                    tracing::debug!(from = %self.links[from].name, "dropped $/cancel_request for a request no longer pending");
                    return;
                }
            }
        }

        let own_id = id.map(|id| {
            let purpose = self.purpose_of(hop, method, params, frame);
            let target = &mut self.links[hop.link];
            target.pending.register(Pending {
                origin: from,
                origin_id: id.get().into(),
                method: method.into(),
                purpose,
            })
        });

        let bytes = match (own_id, via) {
            (None, None) if reusable && out_method == method && params_untouched(method) => {
                frame.clone()
            }
            _ => {
                let mut out = Vec::with_capacity(params.map_or(0, |p| p.get().len()) + 128);
                let id_text = own_id.map(|n| n.to_string());
                let call = match via {
                    Some(via) => Call::Wrapped {
                        via,
                        method: out_method,
                        params,
                        meta,
                    },
                    None => Call::Plain {
                        method: out_method,
                        params,
                    },
                };
                encode::call(&mut out, id_text.as_deref(), call);
                Bytes::from(out)
            }
        };
        self.queue(hop.link, bytes, from);
    }

    fn purpose_of(
        &self,
        hop: Hop,
        method: &str,
        params: Option<&RawValue>,
        frame: &Bytes,
    ) -> Purpose {
        let target = &self.links[hop.link];
        if method == "mcp/connect" {
            return Purpose::McpConnect;
        }
        if hop.wrap || method != "initialize" {
            return Purpose::Relay;
        }
        match target.role {
            Role::Agent => Purpose::AgentInitialize,
            Role::Proxy if !target.dialect_pinned => Purpose::ProxyInitialize {
                params: params.map(|p| keep_bytes(frame, p)),
            },
            _ => Purpose::Relay,
        }
    }

    /// `$/cancel_request` names the sender's id; the receiver knows the request by ours.
    fn cancel_target(
        &self,
        from: LinkId,
        to: LinkId,
        params: Option<&RawValue>,
    ) -> Option<Box<RawValue>> {
        let params = params?;
        let request_id = acp_wire::splice::Members::of(params)?.get("requestId")?;
        let own = self.links[to].pending.find(from, &IdKey::of(request_id))?;
        let text = acp_wire::splice::set_path(params, &["requestId"], &own.to_string());
        RawValue::from_string(text).ok()
    }

    fn on_response(&mut self, link: LinkId, id: &RawValue, outcome: Outcome<'_>) {
        let Some(entry) =
            acp_wire::id::own_id(id).and_then(|own| self.links[link].pending.complete(own))
        else {
            tracing::warn!(component = %self.links[link].name, id = id.get(), "response to no pending request; dropped");
            return;
        };
        if let Purpose::Bridge(_) = entry.purpose {
            return self.on_bridge_response(link, entry, outcome);
        }
        let mut rewritten = None;
        match (&entry.purpose, outcome) {
            (Purpose::ProxyInitialize { params }, Outcome::Error(error))
                if error_code_of(error) == Some(error_code::METHOD_NOT_FOUND) =>
            {
                self.retry_underscore_initialize(
                    link,
                    entry.origin,
                    entry.origin_id,
                    params.clone(),
                );
                return;
            }
            (Purpose::ProxyInitialize { .. }, Outcome::Result(_)) => {
                self.links[link].dialect_pinned = true;
            }
            (Purpose::AgentInitialize, Outcome::Result(result)) => {
                let caps = AgentCapabilities::read(result);
                tracing::debug!(mcp_over_acp = caps.mcp_over_acp, "agent initialized");
                self.agent = Some(caps);
                rewritten = RawValue::from_string(initialize::advertise_mcp_over_acp(result)).ok();
            }
            (Purpose::McpConnect, Outcome::Result(result)) => {
                if let Some(connection) = crate::mcp::envelope::connection_id(result) {
                    tracing::debug!(%connection, provider = %self.links[link].name, "agent opened an MCP connection");
                    let visible = self.mcp.open_agent_connection(link, connection.clone());
                    if visible != connection {
                        let id = serde_json::to_string(&visible).expect("a string serializes");
                        rewritten = RawValue::from_string(acp_wire::splice::set_path(
                            result,
                            &["connectionId"],
                            &id,
                        ))
                        .ok();
                    }
                }
            }
            // The editor learns MCP-over-ACP is available whatever the first proxy says.
            (_, Outcome::Result(result)) if entry.origin == 0 && &*entry.method == "initialize" => {
                rewritten = RawValue::from_string(initialize::advertise_mcp_over_acp(result)).ok();
            }
            _ => {}
        }
        if !self.links[entry.origin].alive {
            return;
        }
        let outcome = match (&rewritten, outcome) {
            (Some(r), Outcome::Result(_)) => Outcome::Result(r),
            (_, o) => o,
        };
        let mut out = Vec::with_capacity(entry.origin_id.len() + 64 + outcome_len(outcome));
        encode::response(&mut out, &entry.origin_id, outcome);
        self.queue(entry.origin, Bytes::from(out), link);
    }

    /// A proxy that does not know `proxy/initialize` is an older one speaking `_proxy/*`.
    fn retry_underscore_initialize(
        &mut self,
        link: LinkId,
        origin: LinkId,
        origin_id: Box<str>,
        params: Option<Bytes>,
    ) {
        let target = &mut self.links[link];
        tracing::info!(component = %target.name, "proxy does not know proxy/initialize; using _proxy/initialize and _proxy/successor");
        target.dialect = Dialect::Underscore;
        target.dialect_pinned = true;
        let own = target.pending.register(Pending {
            origin,
            origin_id,
            method: "initialize".into(),
            purpose: Purpose::Relay,
        });
        let params = params
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| serde_json::from_str::<&RawValue>(s).ok());
        let mut out = Vec::new();
        encode::call(
            &mut out,
            Some(&own.to_string()),
            Call::Plain {
                method: Dialect::Underscore.initialize_method(),
                params,
            },
        );
        self.queue(link, Bytes::from(out), origin);
    }

    fn on_invalid(&mut self, link: LinkId, invalid: Invalid<'_>) {
        let name = self.links[link].name.clone();
        tracing::warn!(component = %name, error = %invalid, "invalid message");
        // A broken response to one of our requests must still answer whoever asked.
        if let Invalid::NotJsonRpc { id: Some(id), .. } = &invalid
            && link != 0
            && let Some(own) = acp_wire::id::own_id(id)
            && let Some(entry) = self.links[link].pending.complete(own)
        {
            let message = format!(
                "{} `{}` sent an invalid response: {invalid}",
                self.links[link].role.noun(),
                name
            );
            self.reply_error(
                entry.origin,
                &entry.origin_id,
                error_code::INTERNAL_ERROR,
                &message,
                None,
            );
            return;
        }
        let message = invalid.to_string();
        self.reply_error(link, invalid.reply_id(), invalid.code(), &message, None);
    }

    /// A line over `max_line` was dropped unread. If its head shows a request id, that request
    /// is answered; if it was a response to one of ours, whoever asked gets the error instead.
    fn on_oversized(&mut self, link: LinkId, error: acp_wire::FrameError) {
        let acp_wire::FrameError::TooLong { head, .. } = &error;
        let peek = acp_wire::envelope::peek_id(head);
        let name = self.links[link].name.clone();
        tracing::warn!(component = %name, %error, id = ?peek.id, "message dropped");
        let message = format!("message dropped: {error}");
        let id = peek.id.as_deref().unwrap_or("null");
        if !peek.method
            && let Some(own) = peek
                .id
                .as_deref()
                .and_then(|t| serde_json::from_str::<&RawValue>(t).ok())
                .and_then(acp_wire::id::own_id)
            && let Some(entry) = self.links[link].pending.complete(own)
        {
            let message = format!(
                "{} `{}` sent a response that was too large: {error}",
                self.links[link].role.noun(),
                name
            );
            self.reply_error(
                entry.origin,
                &entry.origin_id,
                error_code::INTERNAL_ERROR,
                &message,
                None,
            );
            return;
        }
        self.reply_error(link, id, error_code::INVALID_REQUEST, &message, None);
    }

    fn on_closed(&mut self, link: LinkId, error: Option<String>) {
        if link == 0 {
            tracing::debug!(?error, "editor closed its output");
            self.on_editor_gone();
            return;
        }
        let reason = match error {
            Some(e) => format!("output failed: {e}"),
            None => "closed its output".to_string(),
        };
        self.expect_exit(link, reason);
    }

    /// The component is most likely exiting: give its exit status a moment to arrive, so
    /// the error can say how it ended, and fail it with `reason` otherwise.
    fn expect_exit(&mut self, link: LinkId, reason: String) {
        if !self.links[link].alive {
            return;
        }
        let events = self.events_tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(CLOSED_OUTPUT_GRACE).await;
            let _ = events
                .send(Event::Exited {
                    link,
                    reason,
                    stderr_tail: Vec::new(),
                })
                .await;
        });
    }

    fn on_editor_gone(&mut self) {
        match self.state {
            RunState::Running => {
                self.state = RunState::Draining {
                    deadline: Instant::now() + self.shutdown_grace,
                };
            }
            RunState::Failed(_) => self.state = RunState::Finished(Finish::Failed),
            RunState::Draining { .. } | RunState::Finished(_) => {}
        }
    }

    /// In draining, finishes once the editor has had every answer.
    fn check_drained(&mut self) {
        if let RunState::Draining { .. } = self.state
            && self.editor_pending() == 0
        {
            self.state = RunState::Finished(Finish::Stopped);
        }
        if let RunState::Failed(_) = self.state
            && self.editor_asked
        {
            self.state = RunState::Finished(Finish::Failed);
        }
    }

    fn editor_pending(&self) -> usize {
        self.links.iter().map(|l| l.pending.count_from(0)).sum()
    }

    fn component_gone(&mut self, link: LinkId, reason: String, stderr_tail: Vec<String>) {
        let l = &mut self.links[link];
        if !l.alive {
            return;
        }
        l.alive = false;
        let message = format!("{} `{}` {reason}", l.role.noun(), l.name);
        let data =
            serde_json::json!({ "component": l.name, "reason": reason, "stderr": stderr_tail });
        let data = RawValue::from_string(data.to_string()).expect("json! is valid JSON");
        if matches!(self.state, RunState::Finished(_)) {
            tracing::debug!("{message}");
            return;
        }
        tracing::error!(stderr = ?stderr_tail, "{message}");
        self.answer_editor_requests(error_code::COMPONENT_FAILED, &message, Some(&data));
        let waiting = self.take_pending(|_| true);
        // Every other request still waiting is answered too: an agent's MCP call, a
        // proxy's request to the editor.
        for p in waiting {
            if let Purpose::Bridge(_) = p.purpose {
                self.fail_bridge_request(p, &message);
            } else if self.links[p.origin].alive {
                self.reply_error(
                    p.origin,
                    &p.origin_id,
                    error_code::COMPONENT_FAILED,
                    &message,
                    Some(&data),
                );
            }
        }
        self.state = match self.state {
            RunState::Running => RunState::Failed(Failure { message, data }),
            _ => RunState::Finished(Finish::Failed),
        };
    }

    /// Removes and returns the requests still waiting, on any link, that `which` selects.
    fn take_pending(&mut self, mut which: impl FnMut(&Pending) -> bool) -> Vec<Pending> {
        let mut taken = Vec::new();
        for l in &mut self.links {
            taken.extend(l.pending.take_where(&mut which));
        }
        taken
    }

    /// Answers every request the editor is still waiting on with the same error.
    fn answer_editor_requests(&mut self, code: i64, message: &str, data: Option<&RawValue>) {
        let waiting = self.take_pending(|p| p.origin == 0);
        for p in waiting {
            self.reply_error(0, &p.origin_id, code, message, data);
        }
    }

    fn reply_error(
        &mut self,
        link: LinkId,
        id: &str,
        code: i64,
        message: &str,
        data: Option<&RawValue>,
    ) {
        if !self.links[link].alive {
            return;
        }
        let mut out = Vec::new();
        encode::error_response(&mut out, id, code, message, data);
        self.queue(link, Bytes::from(out), link);
    }

    /// Queues a frame; pauses `from` if the destination is behind.
    fn queue(&mut self, to: LinkId, bytes: Bytes, from: LinkId) {
        if self.links[to].outbox.send(bytes) == Queued::Congested && from != to {
            tracing::trace!(to = %self.links[to].name, from = %self.links[from].name, "congested; pausing sender");
            self.links[from].gate.pause();
            if !self.links[to].paused_senders.contains(&from) {
                self.links[to].paused_senders.push(from);
            }
        }
    }

    fn on_drained(&mut self, link: LinkId) {
        for sender in std::mem::take(&mut self.links[link].paused_senders) {
            self.links[sender].gate.resume();
        }
    }
}

/// Plain forwarding may reuse the arriving bytes unless the params need rewriting.
fn params_untouched(method: &str) -> bool {
    method != "$/cancel_request"
}

/// The params as owned bytes, sharing the frame's buffer when they are part of it.
fn keep_bytes(frame: &Bytes, params: &RawValue) -> Bytes {
    let text = params.get().as_bytes();
    if frame.as_ptr_range().contains(&text.as_ptr()) {
        frame.slice_ref(text)
    } else {
        Bytes::copy_from_slice(text)
    }
}

fn error_code_of(error: &RawValue) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    serde_json::from_str::<Code>(error.get())
        .ok()
        .map(|c| c.code)
}

fn outcome_len(outcome: Outcome<'_>) -> usize {
    match outcome {
        Outcome::Result(r) | Outcome::Error(r) => r.get().len(),
    }
}
