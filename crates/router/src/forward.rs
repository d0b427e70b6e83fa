//! Forwarding: a request or notification goes one hop with an id of the conductor's own, a
//! response goes back to whoever asked with the id they used. Rewrites by splicing only.
//!
//! A plain notification travelling plain is passed on as the very same bytes. Only the
//! agent's `InitializeResponse`, `$/cancel_request` params and (for MCP) session setups and
//! `mcp/connect` results are looked into; everything else is an envelope around payload
//! bytes kept as they arrived.

use acp_wire::encode::{self, Call};
use acp_wire::error_code;
use acp_wire::successor::{self, Dialect, EnvelopeMeta, WrapperMembers};
use acp_wire::{Envelope, IdKey, Outcome, RawValue};
use bytes::Bytes;

use super::initialize::{self, AgentCapabilities};
use super::mcp_routes::McpRoute;
use super::pending::{Pending, Purpose, find_forwarded};
use super::recovery::Health;
use super::topology::{self, Hop, Position};
use super::{Components, Role, Router, RunState};
use crate::link::LinkId;
use crate::output::Output;

impl<C: Components> Router<C> {
    /// One frame from a link of the chain (not a bridge shim).
    pub(super) fn on_frame(&mut self, link: LinkId, frame: Bytes) {
        self.route_frame(link, frame, Arrival::New);
    }

    /// A frame held for a restarting component, now delivered: it was admitted when it
    /// arrived.
    pub(super) fn on_held_frame(&mut self, link: LinkId, frame: Bytes) {
        self.route_frame(link, frame, Arrival::Held);
    }

    fn route_frame(&mut self, link: LinkId, frame: Bytes, arrival: Arrival) {
        // One pass over the frame: it validates the line and finds the envelope's members,
        // and a `proxy/successor` wrapper's, so that unwrapping does not read it again.
        let (envelope, wrapper) = match acp_wire::parse_frame(&frame) {
            Ok(parsed) => (parsed.envelope, parsed.wrapper),
            Err(invalid) => {
                // A method written with escapes ("session\/close") is refused by the borrowing
                // parse; the frame is routed as the copy with the method decoded. Only here,
                // on the way to an error, is a frame copied for it.
                if invalid.shape() == acp_wire::Shape::Call
                    && let Some(plain) = acp_wire::escaped_method::with_plain_methods(&frame)
                {
                    return self.route_frame(link, Bytes::from(plain), arrival);
                }
                return self.on_invalid(link, invalid);
            }
        };
        if wrapper.method_has_escapes()
            && let Some(plain) = acp_wire::escaped_method::with_plain_methods(&frame)
        {
            return self.route_frame(link, Bytes::from(plain), arrival);
        }
        let call = |id, method, params| IncomingCall {
            id,
            method,
            params,
            wrapper,
        };
        match envelope {
            Envelope::Request { id, method, params } => {
                self.on_call(link, call(Some(id), method, params), &frame, arrival)
            }
            Envelope::Notification { method, params } => {
                self.on_call(link, call(None, method, params), &frame, arrival)
            }
            Envelope::Response { id, outcome } => self.on_response(link, id, outcome, &frame),
        }
    }

    /// A request (`id: Some`) or notification arriving on `link`.
    fn on_call(&mut self, link: LinkId, call: IncomingCall<'_>, frame: &Bytes, arrival: Arrival) {
        let IncomingCall {
            id,
            method,
            params,
            wrapper,
        } = call;
        let from = self.links[link]
            .position
            .expect("bridge shims' frames go to the bridge");
        if from == 0 && id.is_some() {
            self.editor_asked = true;
        }
        if let RunState::Failed(failure) = &self.state {
            if let Some(id) = id
                && from == 0
            {
                let failure = failure.clone();
                self.reply_error(
                    link,
                    id.get(),
                    error_code::COMPONENT_FAILED,
                    &failure.message,
                    Some(&failure.data),
                );
            }
            return;
        }
        if arrival == Arrival::New && !self.admit(link, from, id, method) {
            return;
        }
        if from == 0
            && method == super::reload::RELOAD_REQUEST
            && let Some(id) = id
        {
            return self.on_reload_request(link, id);
        }
        let origin = self.topology.classify(from, method);
        let (method, params) = if origin.wrapped {
            match successor::unwrap_found(params, wrapper) {
                Ok(w) => {
                    // The envelope's `_meta` is hop-local: it ends here (schema 1.20).
                    if !w.meta.is_empty() {
                        tracing::trace!(component = %self.links[link].name, "proxy/successor envelope _meta not carried on");
                    }
                    (w.method, w.params)
                }
                Err(reason) => {
                    tracing::warn!(component = %self.links[link].name, reason, "malformed proxy/successor");
                    if let Some(id) = id {
                        self.reply_error(link, id.get(), error_code::INVALID_PARAMS, reason, None);
                    }
                    return;
                }
            }
        } else {
            (method, params)
        };
        if id.is_none() && method == "$/cancel_request" {
            return self.on_cancel_request(link, params, frame);
        }
        let method = self.initialize_from_parent(from, method);
        if method.starts_with("mcp/") {
            match self.mcp_route(origin, method, params) {
                McpRoute::Ordinary => {}
                McpRoute::To(hop, rewritten) => {
                    if self.hold_if_restarting(hop.position, link, frame) {
                        return;
                    }
                    let reusable = !origin.wrapped && !hop.wrap && rewritten.is_none();
                    let params = rewritten.as_deref().or(params);
                    return self.deliver(link, hop, id, method, params, frame, reusable);
                }
                McpRoute::Shim(shim) => return self.relay_to_shim(shim, link, id, params),
                McpRoute::Refuse(message) => {
                    tracing::warn!(component = %self.links[link].name, method, "{message}");
                    if let Some(id) = id {
                        let code = error_code::INVALID_PARAMS;
                        self.reply_error(link, id.get(), code, &message, None);
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
        if let Some(id) = id
            && method == "initialize"
            && origin.wrapped
            && self.answer_initialize_again(from, link, id)
        {
            return;
        }
        let hop = self.next_hop(origin);
        if self.hold_if_restarting(hop.position, link, frame) {
            return;
        }
        if !hop.wrap
            && self.topology.agent_position() == Some(hop.position)
            && let Some(session) = self.lost_sessions.request(method, params)
        {
            let agent = &self.links[self.at(hop.position)];
            let message = format!(
                "{} `{}` was restarted and no longer has session `{session}`: start a new \
                 session, or load this one again if the agent supports it",
                agent.role.noun(),
                agent.name
            );
            tracing::debug!(%session, method, "request for a session the restarted agent lost");
            if let Some(id) = id {
                self.reply_error(link, id.get(), error_code::COMPONENT_FAILED, &message, None);
            }
            return;
        }
        let session_setup = id.is_some()
            && origin.toward == topology::Toward::Agent
            && crate::mcp::declaration::is_session_setup(method);
        if session_setup && let Some((message, data)) = self.name_collision(from, params) {
            tracing::warn!(component = %self.links[link].name, method, "{message}");
            if let Some(id) = id
                && let Ok(data) = RawValue::from_string(data)
            {
                let code = error_code::INVALID_PARAMS;
                self.reply_error(link, id.get(), code, &message, Some(&data));
            }
            return;
        }
        // `initialize` goes on as the editor wrote it, its protocol version included: the agent
        // answers with the version it supports and the editor decides (initialize.rs).
        if from == 0 && !origin.wrapped && method == "initialize" {
            self.editor_version = initialize::requested_version(params);
        }
        if from == 0
            && let Some(id) = id
        {
            let kept = params.map(|p| keep_bytes(frame, p));
            self.open_sessions.request(id.get(), method, kept);
        }
        let rewritten = if session_setup {
            self.on_session_setup(from, hop, params)
        } else {
            None
        };
        let reusable = !origin.wrapped && !hop.wrap && rewritten.is_none();
        let params = rewritten.as_deref().or(params);
        self.deliver(link, hop, id, method, params, frame, reusable);
        // A setup bridged over HTTP that did not reach the agent needs no servers.
        if let Some(key) = self.http_sessions.not_sent() {
            self.components.close_http_bridge(&key);
        }
    }

    /// `proxy/initialize` is how a parent conductor opens a nested chain; it travels on as
    /// `initialize`. (From an editor of a terminal chain it is refused by admission.)
    fn initialize_from_parent<'m>(&mut self, from: Position, method: &'m str) -> &'m str {
        match (from == 0)
            .then(|| Dialect::of_initialize(method))
            .flatten()
        {
            Some(dialect) if self.topology.mode == topology::ChainMode::Proxy => {
                self.parent_dialect = dialect;
                "initialize"
            }
            _ => method,
        }
    }

    /// Sends a request or notification one hop. `frame` is the arriving frame; `reusable`
    /// says it can go on byte-for-byte if nothing else needs rewriting.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver(
        &mut self,
        from: LinkId,
        hop: Hop,
        id: Option<&RawValue>,
        method: &str,
        params: Option<&RawValue>,
        frame: &Bytes,
        reusable: bool,
    ) {
        let to = self.at(hop.position);
        let target = &self.links[to];
        if !target.alive {
            if let Some(id) = id {
                let why = match self.positions[hop.position].health {
                    Health::Bypassed => "was taken out of the chain after it failed",
                    _ => "is not running",
                };
                let message = format!("{} `{}` {why}", target.role.noun(), target.name);
                self.reply_error(from, id.get(), error_code::COMPONENT_FAILED, &message, None);
            }
            return;
        }
        let initializes =
            !hop.wrap && method == "initialize" && matches!(target.role, Role::Proxy | Role::Agent);
        let out_method = if initializes && target.role == Role::Proxy {
            target.dialect.initialize_method()
        } else {
            method
        };
        let via = if hop.wrap {
            let dialect = if hop.position == 0 {
                self.parent_dialect
            } else {
                target.dialect
            };
            Some(dialect.successor_method())
        } else {
            None
        };

        if initializes {
            let kept = params.map_or_else(Bytes::new, |p| keep_bytes(frame, p));
            self.positions[hop.position].initialize_params = Some(kept.clone());
            self.components.initialized(hop.position, kept);
        }

        let own_id = id.map(|id| {
            let purpose = self.purpose_of(to, hop, method, params, frame);
            self.links[to].pending.register(Pending {
                origin: from,
                origin_id: id.get().into(),
                method: method.into(),
                purpose,
                deadline: None,
            })
        });
        if let Some(own) = own_id {
            self.trace_forwarded(from, to, own);
            self.arm_deadline(to, own, initializes);
            if !hop.wrap && self.topology.agent_position() == Some(hop.position) {
                self.http_sessions.sent(to, own, method, params);
            }
        }

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
                        meta: EnvelopeMeta::default(),
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
        self.queue(to, bytes, from);
    }

    fn purpose_of(
        &self,
        to: LinkId,
        hop: Hop,
        method: &str,
        params: Option<&RawValue>,
        frame: &Bytes,
    ) -> Purpose {
        let target = &self.links[to];
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

    /// `$/cancel_request` is hop-scoped (schema 1.20): it names a request by the id its sender
    /// gave it on this link, whatever the sender's place in the chain, and goes on, plain, to
    /// the one link where we forwarded that request, naming it by our id there. Older proxies
    /// wrap it in `proxy/successor`; it has been unwrapped by now and means the same. A cancel
    /// whose request may still be held for a restarting component is held behind it.
    fn on_cancel_request(&mut self, from: LinkId, params: Option<&RawValue>, frame: &Bytes) {
        let target = params
            .and_then(acp_wire::splice::Members::of)
            .and_then(|m| m.get("requestId").map(IdKey::of))
            .and_then(|key| {
                self.links.iter().find_map(|(to, state)| {
                    find_forwarded(&state.pending, from, &key).map(|own| (to, own))
                })
            });
        let (Some((to, own)), Some(params)) = (target, params) else {
            if let Some(position) = self.restarting_with_frames_from(from) {
                self.hold_if_restarting(position, from, frame);
                return;
            }
            tracing::debug!(from = %self.links[from].name, "dropped $/cancel_request for a request no longer pending");
            self.skipped.count(super::skipped::Skip::StaleCancel);
            return;
        };
        if !self.links[to].alive {
            return;
        }
        let text = acp_wire::splice::set_path(params, &["requestId"], &own.to_string());
        let Ok(params) = RawValue::from_string(text) else {
            return;
        };
        let call = Call::Plain {
            method: "$/cancel_request",
            params: Some(&params),
        };
        let mut out = Vec::with_capacity(params.get().len() + 64);
        encode::call(&mut out, None, call);
        self.trace_cancels(to, own);
        self.queue(to, Bytes::from(out), from);
    }

    /// A response arriving on `link` as `frame`: back to whoever asked, as the very bytes its
    /// sender wrote with only the id changed (and the few results the conductor rewrites).
    fn on_response(&mut self, link: LinkId, id: &RawValue, outcome: Outcome<'_>, frame: &Bytes) {
        let Some(entry) = self.links[link].pending.complete_raw(id) else {
            return self.on_unmatched_response(link, id, outcome);
        };
        if self.http_sessions.awaits_answers()
            && let Ok(own) = id.get().parse::<u64>()
        {
            let result = match outcome {
                Outcome::Result(result) => Some(result),
                Outcome::Error(_) => None,
            };
            for key in self.http_sessions.answered(link, own, result) {
                self.components.close_http_bridge(&key);
            }
        }
        match entry.purpose {
            Purpose::Bridge(_) => return self.on_bridge_response(link, entry, outcome),
            Purpose::Reinitialize => return self.on_reinitialized(link, outcome),
            _ => {}
        }
        if let Outcome::Result(result) = outcome
            && self.links[link].position.is_some()
            && self.links[link].position == self.topology.agent_position()
        {
            self.lost_sessions.result(&entry.method, result);
        }
        if entry.origin == self.editor() {
            let result = match outcome {
                Outcome::Result(result) => Some(result),
                Outcome::Error(_) => None,
            };
            self.open_sessions.answered(&entry.origin_id, result);
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
                if let Some(version) = initialize::newer_version_answered(result) {
                    tracing::warn!(
                        agent = %self.links[link].name,
                        version,
                        "the agent chose ACP protocol version {version}; the conductor passes its \
                         messages on, but reads and rewrites the few it looks into (MCP over ACP) \
                         as version {} has them",
                        initialize::NEWEST_PROTOCOL_VERSION
                    );
                }
                self.agent = Some(caps);
                rewritten = RawValue::from_string(initialize::advertise_mcp_over_acp(result)).ok();
            }
            (Purpose::McpConnect, Outcome::Result(result)) => {
                if let Some(connection) = crate::mcp::params::connection_id(result)
                    && let Some(owner) = self.links[link].position
                {
                    tracing::debug!(%connection, provider = %self.links[link].name, "agent opened an MCP connection");
                    let visible = self.mcp.open_agent_connection(owner, connection.clone());
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
            (_, Outcome::Result(result))
                if entry.origin == self.editor() && &*entry.method == "initialize" =>
            {
                rewritten = RawValue::from_string(initialize::advertise_mcp_over_acp(result)).ok();
            }
            _ => {}
        }
        // An editor that asked for a newer version than the agent answered can read the answer.
        if let Outcome::Result(result) = outcome
            && entry.origin == self.editor()
            && &*entry.method == "initialize"
            && let Some(asked) = self.editor_version
            && let Some(readable) =
                initialize::readable_by_newer_editor(rewritten.as_deref().unwrap_or(result), asked)
        {
            rewritten = RawValue::from_string(readable).ok();
        }
        if !self.links[entry.origin].alive {
            return;
        }
        self.count_answer(entry.origin, matches!(outcome, Outcome::Error(_)));
        let sent = outcome;
        let outcome = match (&rewritten, outcome) {
            (Some(r), Outcome::Result(_)) => Outcome::Result(r),
            (_, o) => o,
        };
        if let Outcome::Result(result) = outcome
            && &*entry.method == "initialize"
        {
            self.initialized(entry.origin, result);
        }
        let replaced = match (sent, &rewritten) {
            (Outcome::Result(sent), Some(new)) => Some((sent, &**new)),
            _ => None,
        };
        // The frame's bytes with the requester's id, and a rewritten result's growth at most.
        let grown = rewritten.as_ref().map_or(0, |r| r.get().len());
        let mut out = Vec::with_capacity(frame.len() + entry.origin_id.len() + grown);
        if !encode::response_in_place(&mut out, frame, id, &entry.origin_id, replaced) {
            encode::response(&mut out, &entry.origin_id, outcome);
        }
        self.trace_answered(entry.origin, &entry.origin_id);
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
            deadline: None,
        });
        self.arm_deadline(link, own, true);
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

    /// `origin` was answered its `initialize`: the editor may now hear of failures, and a
    /// proxy's answer is kept for a restarted instance of it.
    fn initialized(&mut self, origin: LinkId, result: &RawValue) {
        match self.links[origin].position {
            Some(0) => {
                self.editor_initialized = true;
                // A proxy a reload puts first is answered as the editor was.
                self.positions[0].initialize_answer = Some(result.to_owned());
                self.chain_up();
            }
            Some(position) if self.topology.is_proxy(position) => {
                self.positions[position].initialize_answer = Some(result.to_owned());
            }
            _ => {}
        }
    }

    /// Answers a request the conductor cannot pass on, on the link it came from.
    pub(super) fn reply_error(
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
        self.count_answer(link, true);
        let mut out = Vec::new();
        encode::error_response(&mut out, id, code, message, data);
        self.queue(link, Bytes::from(out), link);
    }

    /// Queues a frame for `to`, sent on behalf of `from`. In a traced run, the record of the
    /// frame being routed goes first: a frame in precedes what it causes.
    pub(super) fn queue(&mut self, to: LinkId, bytes: Bytes, from: LinkId) {
        self.trace_flush();
        self.outputs.push(Output::Send {
            to,
            frame: bytes,
            from,
        });
    }

    /// The driver found the queue toward `to` over its limit after sending a frame from
    /// `from`: `from` is paused until `to` has drained (or is gone).
    pub fn congested(&mut self, to: LinkId, from: LinkId) {
        if from == to || !self.links.contains(to) || !self.links.contains(from) {
            return;
        }
        tracing::trace!(to = %self.links[to].name, from = %self.links[from].name, "congested; pausing sender");
        self.outputs.push(Output::Pause(from));
        if !self.links[to].paused_senders.contains(&from) {
            self.links[to].paused_senders.push(from);
        }
    }

    /// The writer of `link` caught up: whoever was paused for sending into it may go on.
    pub(super) fn on_drained(&mut self, link: LinkId) {
        for sender in std::mem::take(&mut self.links[link].paused_senders) {
            self.outputs.push(Output::Resume(sender));
        }
    }
}

/// A request (`id: Some`) or notification as it arrived, with the members of a
/// `proxy/successor` wrapper that the frame's parse found in its params.
#[derive(Clone, Copy)]
struct IncomingCall<'a> {
    id: Option<&'a RawValue>,
    method: &'a str,
    params: Option<&'a RawValue>,
    wrapper: WrapperMembers<'a>,
}

/// Whether a frame arrives now or was held for a restarting component (and so was already
/// admitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    New,
    Held,
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

pub(super) fn error_code_of(error: &RawValue) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    serde_json::from_str::<Code>(error.get())
        .ok()
        .map(|c| c.code)
}
