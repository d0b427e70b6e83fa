//! The stdio bridge, router side: each shim connection is a link whose lines are MCP, turned
//! into `mcp/connect`, `mcp/message` and `mcp/disconnect` toward the server's owner and back.
//!
//! A shim first names its server. A server declared with `serverId` (schema 1.20) is spoken to
//! connectionless (`mcp/message {serverId, requestId}`), with the `initialize` answered here
//! and the stateless `_meta` added; if the provider refuses that at the ACP level it is an
//! older one and gets `mcp/connect {serverId}`. A server declared with the RFD's `id` is
//! connected (`mcp/connect {acpId}`), and spoken to connectionless if it answers -32601.
//!
//! The shims' state is a part of its own (`shims.rs`) that says what each message calls for;
//! this module carries that out on the links.

mod shims;

use acp_wire::encode::{self, Call};
use acp_wire::error_code;
use acp_wire::successor::EnvelopeMeta;
use acp_wire::{Envelope, Invalid, Outcome, RawValue, Shape};
use bytes::Bytes;

use super::forward::error_code_of;
use super::pending::{BridgeCall, Pending, Purpose};
use super::skipped::Skip;
use super::topology::Position;
use super::{Components, Router, Timer};
use crate::link::LinkId;
use crate::mcp::bridge_hello;
use crate::mcp::params::{Address, McpFields, connection_id, message_params, single};
use crate::mcp::stateless::{self, ClientHello, InnerOutcome};
use crate::output::Output;
pub use shims::Shims;
use shims::{Arrival, ConnectRefused, NotificationRoute, Opening, RequestRoute};

/// The `_meta` member of the bridge's `mcp/*` params that names the ACP session of a call
/// through the HTTP bridge (docs/mcp.md).
const SESSION_META_KEY: &str = "sessionId";

impl<C: Components> Router<C> {
    /// A shim dialed in on `link`: it names its server first.
    pub(super) fn open_shim(&mut self, link: LinkId) {
        self.shims.open(link);
    }

    pub(super) fn on_shim_frame(&mut self, link: LinkId, frame: Bytes) {
        let frame = match self.shims.arrive(link, frame) {
            Arrival::Unknown => return,
            Arrival::Hello(frame) => return self.on_shim_hello(link, &frame),
            Arrival::Held => return self.trace_held(),
            Arrival::Ready(frame) => frame,
        };
        // A provider being started again: a connectionless one keeps no state the call needs,
        // and a connection that died with it is made again once it runs. The call waits for
        // it, as the editor's requests do, bounded by the provider's `request_timeout`.
        if self.shims.waits_for_restart(link) {
            let owner = self.shims.owner(link);
            if self.hold_if_restarting(owner, link, &frame) {
                return self.bound_held_call(owner, link, &frame);
            }
        }
        match acp_wire::parse(&frame) {
            Ok(Envelope::Request { id, method, params }) => {
                if method == "initialize" {
                    self.shims.keep_initialize(link, &frame);
                    self.shims.keep_client_initialize(link, params);
                }
                self.shim_request(link, id.get(), method, params)
            }
            Ok(Envelope::Notification { method, params }) => {
                self.shim_notification(link, method, params)
            }
            Ok(Envelope::Response { id, outcome }) => self.shim_response(link, id, outcome, &frame),
            Err(invalid) => self.shim_invalid(link, invalid),
        }
    }

    /// A line over `max_line` from a shim: before the hello it can only be a broken hello (the
    /// connection is refused, as for any first line that names no server); after, it is
    /// answered as any component's.
    pub(super) fn on_shim_too_long(&mut self, link: LinkId, error: acp_wire::FrameError) {
        if !self.shims.in_hello(link) {
            return self.on_oversized(link, error);
        }
        tracing::warn!(shim = link.0, %error, "a bridge connection's first line was too long; closing it");
        self.skipped.count(Skip::TooLongLine);
        self.write_line(
            link,
            bridge_hello::welcome_line(Some("the first line must name the server")),
        );
        self.close_shim(link);
    }

    /// A line from the agent's MCP client that is not JSON-RPC. A broken response to one of
    /// the server's requests answers the server; any other response is never answered, nor a
    /// line with no id (as for any component, see `bad_input`).
    fn shim_invalid(&mut self, link: LinkId, invalid: Invalid<'_>) {
        tracing::warn!(shim = link.0, error = %invalid, "invalid MCP message from the agent");
        self.skipped.count(Skip::InvalidLine);
        let message = invalid.to_string();
        if invalid.shape() != Shape::Call
            && let Some(raw) = invalid
                .id()
                .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
            && let Some((owner, origin_id)) = self.shims.client_answered(link, raw)
        {
            let owner = self.at(owner);
            let message = format!("the agent sent an invalid MCP response: {message}");
            let code = error_code::INTERNAL_ERROR;
            self.reply_error(owner, &origin_id, code, &message, None);
            return;
        }
        if invalid.shape() != Shape::Response
            && let Some(id) = invalid.id()
        {
            self.reply_error(link, id, invalid.code(), &message, None);
        }
    }

    fn on_shim_hello(&mut self, link: LinkId, frame: &[u8]) {
        let Some(bridge_hello::Hello {
            server: server_id,
            setup,
        }) = bridge_hello::read_hello(frame)
        else {
            tracing::warn!(
                shim = link.0,
                "a bridge connection did not name its server; closing it"
            );
            self.write_line(
                link,
                bridge_hello::welcome_line(Some("the first line must name the server")),
            );
            return self.close_shim(link);
        };
        let Some(server) = self.mcp.servers.get(&server_id).cloned() else {
            let reason = format!("no MCP server with id `{server_id}` was declared in this chain");
            tracing::warn!(shim = link.0, "{reason}");
            self.write_line(link, bridge_hello::welcome_line(Some(&reason)));
            return self.close_shim(link);
        };
        if !self.links[self.at(server.owner)].alive {
            let reason = format!(
                "the provider of MCP server `{}` is not running",
                server.name
            );
            self.write_line(link, bridge_hello::welcome_line(Some(&reason)));
            return self.close_shim(link);
        }
        self.trace_shim_named(link, &server.name);
        self.write_line(link, bridge_hello::welcome_line(None));
        tracing::info!(server = %server.name, id = %server_id, shim = link.0, "MCP bridge connection opened");
        match self
            .shims
            .name(link, server_id, setup, server.owner, server.field)
        {
            Opening::Connectionless => {
                tracing::debug!(server = %server.name, shim = link.0, "declared with serverId; using connectionless mcp/message");
            }
            Opening::Connect => self.connect_shim(link, Vec::new()),
        }
    }

    /// The answer to the connectionless `server/discover` the agent's `initialize` became: the
    /// `initialize` answer made from it; or, refused at the ACP level before `mcp/connect` was
    /// tried, a connection (an older `serverId` provider); or else a probe with `tools/list`.
    fn on_discovered(&mut self, link: LinkId, mcp_id: &str, outcome: Outcome<'_>) {
        let held = self.shims.take_initialize(link);
        match (outcome, held) {
            (Outcome::Result(r), _) => {
                if let InnerOutcome::Result(discovered) = stateless::inner_outcome(r) {
                    return self.answer_initialize(link, mcp_id, Some(discovered));
                }
            }
            (Outcome::Error(_), Some(initialize)) => {
                let name = self.server_name(link);
                tracing::debug!(server = %name, shim = link.0, "connectionless server/discover refused; trying mcp/connect (an older provider)");
                return self.connect_shim(link, vec![initialize]);
            }
            (Outcome::Error(_), None) => {}
        }
        self.send_stateless(link, mcp_id, BridgeCall::ProbeTools, "tools/list", None);
    }

    /// Sends `mcp/connect` for the shim's server; `queued` (frames of the agent's) wait for
    /// the answer.
    fn connect_shim(&mut self, link: LinkId, queued: Vec<Bytes>) {
        self.shims.begin_connect(link, queued);
        let server_id = self.shims.server(link);
        let Some(server) = self.mcp.servers.get(server_id) else {
            return;
        };
        let params = single(server.field.connect_member(), server_id);
        self.send_to_owner(
            link,
            Some(("null", BridgeCall::Connect)),
            "mcp/connect",
            &params,
        );
    }

    fn shim_request(
        &mut self,
        link: LinkId,
        mcp_id: &str,
        method: &str,
        params: Option<&RawValue>,
    ) {
        match self.shims.request_route(link, method) {
            RequestRoute::Message(connection) => {
                let p = message_params(
                    Address::Connection(&connection),
                    method,
                    params.map(RawValue::get),
                );
                self.send_to_owner(link, Some((mcp_id, BridgeCall::Reply)), "mcp/message", &p);
            }
            RequestRoute::Discover => {
                self.shims.set_hello(link, ClientHello::read(params));
                self.send_stateless(link, mcp_id, BridgeCall::Discover, "server/discover", None);
            }
            RequestRoute::Ping => self.shim_result(link, mcp_id, "{}"),
            RequestRoute::Stateless => {
                let request_id = self.shims.next_request_id();
                let call = BridgeCall::Stateless {
                    request_id: request_id.clone(),
                };
                self.send_stateless_as(link, mcp_id, call, &request_id, method, params);
            }
            RequestRoute::Broken { code, reason } => {
                self.reply_error(link, mcp_id, code, &reason, None);
            }
        }
    }

    fn shim_notification(&mut self, link: LinkId, method: &str, params: Option<&RawValue>) {
        match self.shims.notification_route(link, method, params) {
            NotificationRoute::Message(connection) => {
                let p = message_params(
                    Address::Connection(&connection),
                    method,
                    params.map(RawValue::get),
                );
                self.send_to_owner(link, None, "mcp/message", &p);
            }
            NotificationRoute::Cancel { owner, own } => self.cancel_at_owner(owner, link, own),
            NotificationRoute::Drop => {}
        }
    }

    /// The agent's MCP client answering a request its server sent: its bytes as it wrote them,
    /// under the id the request has at the owner.
    fn shim_response(&mut self, link: LinkId, id: &RawValue, outcome: Outcome<'_>, frame: &[u8]) {
        let Some((owner, origin_id)) = self.shims.client_answered(link, id) else {
            tracing::warn!(
                shim = link.0,
                id = id.get(),
                "MCP response to no pending request; dropped"
            );
            self.skipped.count(Skip::UnknownResponse);
            return;
        };
        let owner = self.at(owner);
        if !self.links[owner].alive {
            return;
        }
        self.count_answer(owner, matches!(outcome, Outcome::Error(_)));
        let mut out = Vec::with_capacity(frame.len() + origin_id.len());
        if !encode::response_in_place(&mut out, frame, id, &origin_id, None) {
            out.clear();
            encode::response(&mut out, &origin_id, outcome);
        }
        self.trace_answered(owner, &origin_id);
        self.queue(owner, Bytes::from(out), link);
    }

    /// A message the provider sent on a bridged connection, toward the agent's client.
    pub(super) fn relay_to_shim(
        &mut self,
        link: LinkId,
        from: LinkId,
        id: Option<&RawValue>,
        params: Option<&RawValue>,
    ) {
        let fields = McpFields::read(params);
        let Some(method) = fields.method.as_deref() else {
            if let Some(id) = id {
                self.reply_error(
                    from,
                    id.get(),
                    error_code::INVALID_PARAMS,
                    "mcp/message needs a `method`",
                    None,
                );
            }
            return;
        };
        if !self.shims.contains(link) {
            return;
        }
        let mcp_id = id.and_then(|id| self.shims.ask_client(link, id.get()));
        if let Some(mcp_id) = mcp_id {
            self.trace_forwarded(from, link, mcp_id);
        }
        let mcp_id = mcp_id.map(|id| id.to_string());
        let mut out = Vec::new();
        encode::call(
            &mut out,
            mcp_id.as_deref(),
            Call::Plain {
                method,
                params: fields.params,
            },
        );
        self.queue(link, Bytes::from(out), from);
    }

    /// The answer to a request the bridge sent for a shim, arriving on `answered_on`.
    pub(super) fn on_bridge_response(
        &mut self,
        answered_on: LinkId,
        pending: Pending,
        outcome: Outcome<'_>,
    ) {
        let link = pending.origin;
        let Some(owner) = self.links[answered_on].position else {
            return;
        };
        let Purpose::Bridge(call) = pending.purpose else {
            unreachable!("only bridge entries come here")
        };
        if !self.shims.contains(link) {
            // The shim left while connecting: close the connection it will never use.
            if let (BridgeCall::Connect, Outcome::Result(r)) = (&call, outcome)
                && let Some(connection) = connection_id(r)
            {
                let params = single("connectionId", &connection);
                self.send_to(
                    owner,
                    link,
                    Some(("null", BridgeCall::Disconnect)),
                    "mcp/disconnect",
                    &params,
                );
            }
            return;
        }
        let mcp_id = &*pending.origin_id;
        match call {
            BridgeCall::Connect => self.on_connected(link, outcome),
            BridgeCall::Reply => self.shim_outcome(link, mcp_id, outcome),
            BridgeCall::Discover => self.on_discovered(link, mcp_id, outcome),
            BridgeCall::ProbeTools => match outcome {
                Outcome::Result(r)
                    if matches!(stateless::inner_outcome(r), InnerOutcome::Result(_)) =>
                {
                    self.answer_initialize(link, mcp_id, None)
                }
                _ => {
                    let name = self.server_name(link);
                    let message = format!(
                        "MCP server `{name}` answered neither server/discover nor tools/list"
                    );
                    self.reply_error(link, mcp_id, error_code::INTERNAL_ERROR, &message, None);
                }
            },
            BridgeCall::Stateless { request_id } => {
                self.shims.untrack(link, &request_id);
                match outcome {
                    Outcome::Result(r) => match stateless::inner_outcome(r) {
                        InnerOutcome::Result(inner) => {
                            self.shim_outcome(link, mcp_id, Outcome::Result(inner))
                        }
                        InnerOutcome::Error(inner) => {
                            self.shim_outcome(link, mcp_id, Outcome::Error(inner))
                        }
                        InnerOutcome::Malformed => {
                            let name = self.server_name(link);
                            let message = format!(
                                "MCP server `{name}` sent a connectionless result with neither `result` nor `error`"
                            );
                            self.reply_error(
                                link,
                                mcp_id,
                                error_code::INTERNAL_ERROR,
                                &message,
                                None,
                            );
                        }
                    },
                    Outcome::Error(e) => self.transport_error(link, mcp_id, e),
                }
            }
            BridgeCall::Disconnect => {}
            BridgeCall::Handshake => {
                if let Outcome::Error(e) = outcome {
                    let name = self.server_name(link);
                    tracing::warn!(server = %name, shim = link.0, error = error_message(e), "the provider refused the MCP handshake on a connection made again");
                }
            }
        }
    }

    fn on_connected(&mut self, link: LinkId, outcome: Outcome<'_>) {
        let name = self.server_name(link);
        let again = self.shims.is_reconnecting(link);
        let made = match outcome {
            Outcome::Result(r) => match connection_id(r) {
                Some(connection) => {
                    tracing::debug!(server = %name, %connection, shim = link.0, "MCP connection established");
                    Ok(connection)
                }
                None => Err(ConnectRefused::Broken {
                    code: error_code::INTERNAL_ERROR,
                    reason: format!(
                        "MCP server `{name}`: the provider's mcp/connect result has no connectionId"
                    ),
                }),
            },
            Outcome::Error(e) if error_code_of(e) == Some(error_code::METHOD_NOT_FOUND) => {
                tracing::debug!(server = %name, shim = link.0, "provider does not know mcp/connect; using connectionless mcp/message");
                Err(ConnectRefused::Unknown)
            }
            Outcome::Error(e) => Err(ConnectRefused::Broken {
                code: error_code::INTERNAL_ERROR,
                reason: format!(
                    "MCP server `{name}`: the provider refused the connection: {}",
                    error_message(e)
                ),
            }),
        };
        if again && let Ok(connection) = &made {
            self.handshake_again(link, connection);
        }
        let queued = self.shims.connected(link, made);
        self.replay_shim_frames(link, queued);
    }

    /// A connection made again after its provider restarted: the agent's client made its MCP
    /// handshake on the old one, so the bridge makes it on the new one with the client's own
    /// `initialize` params, the answer dropped, before anything the client sent meanwhile.
    fn handshake_again(&mut self, link: LinkId, connection: &str) {
        let Some(params) = self.shims.client_initialize(link) else {
            return;
        };
        let params = params.map(|p| p.get().to_string());
        let p = message_params(
            Address::Connection(connection),
            "initialize",
            params.as_deref(),
        );
        self.send_to_owner(
            link,
            Some(("null", BridgeCall::Handshake)),
            "mcp/message",
            &p,
        );
        let p = message_params(
            Address::Connection(connection),
            "notifications/initialized",
            None,
        );
        self.send_to_owner(link, None, "mcp/message", &p);
    }

    /// The provider at `owner` failed and is being started again: its connections died.
    pub(super) fn bridge_connections_lost(&mut self, owner: Position) {
        self.shims.lose_connections(owner);
    }

    /// The provider at `owner` runs again: each connection that died with its last instance
    /// is made again, before what was held for it is delivered (and queued behind the
    /// connect).
    pub(super) fn reconnect_shims(&mut self, owner: Position) {
        for link in self.shims.take_reconnects(owner) {
            let name = self.server_name(link);
            tracing::info!(server = %name, shim = link.0, "MCP bridge connection made again after its provider restarted");
            self.connect_shim(link, Vec::new());
        }
    }

    /// A request held for the restarting provider at `owner` waits at most the provider's
    /// `request_timeout`.
    fn bound_held_call(&mut self, owner: Position, link: LinkId, frame: &[u8]) {
        let Some(limit) = self.positions[owner].policy.request_timeout else {
            return;
        };
        if let Ok(Envelope::Request { id, .. }) = acp_wire::parse(frame) {
            let timer = Timer::HeldCall {
                position: owner,
                link,
                id: id.get().into(),
            };
            self.timers.at(self.now + limit, timer);
        }
    }

    /// A request held for the restarting provider at `position` reached its
    /// `request_timeout`: if it is still held, it is answered with an MCP error naming the
    /// provider, and never sent.
    pub(super) fn on_held_call_due(&mut self, position: Position, link: LinkId, id: &str) {
        let Some(frame) = self.take_held_request(position, link, id) else {
            return;
        };
        self.trace_in(link, &frame);
        let owner = self.at(position);
        let noun = self.links[owner].role.noun();
        let provider = &self.links[owner].name;
        let limit = self.positions[position]
            .policy
            .request_timeout
            .map_or_else(String::new, crate::deadlines::seconds);
        let message = format!(
            "MCP server `{}`: {noun} `{provider}` is being restarted and did not run again within its request_timeout ({limit})",
            self.server_name(link)
        );
        tracing::warn!(shim = link.0, "{message}");
        self.reply_error(link, id, error_code::COMPONENT_FAILED, &message, None);
        self.trace_flush();
    }

    fn answer_initialize(&mut self, link: LinkId, mcp_id: &str, discovered: Option<&RawValue>) {
        let name = self.server_name(link);
        let hello = self.shims.hello(link);
        let result = stateless::initialize_result(hello, discovered, &name);
        self.shim_result(link, mcp_id, &result);
    }

    /// An ACP-level failure of a connectionless request: an MCP error that says so, kept
    /// apart from the inner MCP errors the provider reports inside its result.
    fn transport_error(&mut self, link: LinkId, mcp_id: &str, error: &RawValue) {
        let name = self.server_name(link);
        let message = format!(
            "MCP server `{name}`: ACP transport error: {}",
            error_message(error)
        );
        let code = error_code_of(error).unwrap_or(error_code::INTERNAL_ERROR);
        self.reply_error(link, mcp_id, code, &message, None);
    }

    fn shim_outcome(&mut self, link: LinkId, mcp_id: &str, outcome: Outcome<'_>) {
        if !self.links[link].alive {
            return;
        }
        self.count_answer(link, matches!(outcome, Outcome::Error(_)));
        let mut out = Vec::new();
        encode::response(&mut out, mcp_id, outcome);
        self.trace_answered(link, mcp_id);
        self.queue(link, Bytes::from(out), link);
    }

    fn shim_result(&mut self, link: LinkId, mcp_id: &str, result: &str) {
        let result = RawValue::from_string(result.to_string()).expect("valid JSON");
        self.shim_outcome(link, mcp_id, Outcome::Result(&result));
    }

    fn send_stateless(
        &mut self,
        link: LinkId,
        mcp_id: &str,
        call: BridgeCall,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let request_id = self.shims.next_request_id();
        self.send_stateless_as(link, mcp_id, call, &request_id, method, params);
    }

    fn send_stateless_as(
        &mut self,
        link: LinkId,
        mcp_id: &str,
        call: BridgeCall,
        request_id: &str,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let inner = stateless::with_request_meta(params, self.shims.hello(link));
        let p = message_params(
            Address::Stateless {
                server_id: self.shims.server(link),
                request_id,
            },
            method,
            Some(&inner),
        );
        let tracked = matches!(call, BridgeCall::Stateless { .. });
        let own = self.send_to_owner(link, Some((mcp_id, call)), "mcp/message", &p);
        if tracked && let Some(own) = own {
            self.shims.track(link, request_id, own, mcp_id);
        }
    }

    /// Sends a request (`call: Some((mcp id, purpose))`) or notification to the owner of
    /// the shim's server, wrapped when the owner is a proxy. Returns our id for a request.
    fn send_to_owner(
        &mut self,
        link: LinkId,
        call: Option<(&str, BridgeCall)>,
        method: &str,
        params: &str,
    ) -> Option<u64> {
        let owner = self.shims.owner(link);
        self.send_to(owner, link, call, method, params)
    }

    fn send_to(
        &mut self,
        owner: Position,
        link: LinkId,
        call: Option<(&str, BridgeCall)>,
        method: &str,
        params: &str,
    ) -> Option<u64> {
        let hop = self.owner_hop(owner);
        let owner = self.at(owner);
        if !self.links[owner].alive {
            if let Some((mcp_id, _)) = call {
                let message = format!(
                    "the provider of MCP server `{}` is not running",
                    self.server_name(link)
                );
                self.reply_error(link, mcp_id, error_code::COMPONENT_FAILED, &message, None);
            }
            return None;
        }
        let own = call.map(|(mcp_id, purpose)| {
            let own = self.links[owner].pending.register(Pending {
                origin: link,
                origin_id: mcp_id.into(),
                method: method.into(),
                purpose: Purpose::Bridge(purpose),
                deadline: None,
            });
            // `null` stands for a request of the bridge's own (connect, disconnect).
            if mcp_id != "null" {
                self.trace_forwarded(link, owner, own);
            }
            own
        });
        let params = self.with_session_meta(link, params);
        let params = RawValue::from_string(params).expect("built as JSON");
        let via = hop
            .wrap
            .then(|| self.links[owner].dialect.successor_method());
        let call = match via {
            Some(via) => Call::Wrapped {
                via,
                method,
                params: Some(&params),
                meta: EnvelopeMeta::default(),
            },
            None => Call::Plain {
                method,
                params: Some(&params),
            },
        };
        let mut out = Vec::new();
        encode::call(&mut out, own.map(|n| n.to_string()).as_deref(), call);
        self.queue(owner, Bytes::from(out), link);
        if let Some(own) = own {
            self.arm_deadline(owner, own, false);
        }
        own
    }

    /// `params` of a request or notification for the shim on `link`, with the ACP session it
    /// belongs to as `_meta.sessionId` when it came in by an HTTP bridge setup the agent has
    /// accepted: a provider serving one server to many sessions can tell its calls apart.
    fn with_session_meta(&self, link: LinkId, params: &str) -> String {
        let session = self
            .shims
            .setup(link)
            .and_then(|key| self.http_sessions.session_of(key));
        let (Some(session), Ok(object)) = (session, serde_json::from_str::<&RawValue>(params))
        else {
            return params.to_string();
        };
        let session = serde_json::to_string(session).expect("a string serializes");
        acp_wire::splice::set_path(object, &["_meta", SESSION_META_KEY], &session)
    }

    /// Cancels our request `own` at the owner: plain even toward a proxy, as cancellation is
    /// hop-scoped (schema 1.20) and names the `proxy/successor` request of this hop.
    fn cancel_at_owner(&mut self, owner: Position, link: LinkId, own: u64) {
        let params = format!("{{\"requestId\":{own}}}");
        let params = RawValue::from_string(params).expect("valid JSON");
        let owner = self.at(owner);
        let call = Call::Plain {
            method: "$/cancel_request",
            params: Some(&params),
        };
        let mut out = Vec::new();
        encode::call(&mut out, None, call);
        self.trace_cancels(owner, own);
        self.queue(owner, Bytes::from(out), link);
    }

    /// How many requests the provider at `owner` sent the agent's MCP clients that still wait
    /// for their answer.
    pub(super) fn requests_waiting_on_shims(&self, owner: Position) -> usize {
        self.shims.waiting_at(owner)
    }

    /// Answers every request the provider at `owner` sent the agent's MCP clients and still
    /// waits for (the run is ending, or the chain failed).
    pub(super) fn answer_requests_waiting_on_shims(
        &mut self,
        owner: Position,
        code: i64,
        message: &str,
        data: Option<&RawValue>,
    ) {
        let waiting = self.shims.take_waiting_at(owner);
        let owner_link = self.at(owner);
        for origin_id in waiting {
            self.reply_error(owner_link, &origin_id, code, message, data);
        }
    }

    /// The shim closed (the agent closed its stdin) or its socket failed: tell the owner
    /// and answer what the owner still waits for from the agent's client.
    pub(super) fn on_shim_gone(&mut self, link: LinkId) {
        let Some(closed) = self.shims.close(link) else {
            return;
        };
        // Closing our side lets the shim, which waits for it after its stdin closed, exit now.
        self.links[link].alive = false;
        self.outputs.push(Output::Close(link));
        let name = self
            .mcp
            .servers
            .get(&closed.server)
            .map_or_else(|| closed.server.clone(), |s| s.name.clone());
        tracing::info!(server = %name, shim = link.0, "MCP bridge connection closed");
        let owner = closed.owner;
        let owner_link = self.at(owner);
        if closed.was_hello || !self.links[owner_link].alive {
            return;
        }
        for origin_id in closed.unanswered {
            self.reply_error(
                owner_link,
                &origin_id,
                error_code::INTERNAL_ERROR,
                "the agent's MCP client disconnected",
                None,
            );
        }
        for own in closed.in_flight {
            self.cancel_at_owner(owner, link, own);
        }
        if let Some(connection) = closed.connection {
            let params = single("connectionId", &connection);
            // The answer finds no shim and is dropped.
            self.send_to(
                owner,
                link,
                Some(("null", BridgeCall::Disconnect)),
                "mcp/disconnect",
                &params,
            );
        }
    }

    /// Answers a bridge request that will never be answered by its provider.
    pub(super) fn fail_bridge_request(&mut self, pending: Pending, message: &str) {
        let link = pending.origin;
        match pending.purpose {
            Purpose::Bridge(BridgeCall::Disconnect | BridgeCall::Handshake) => return,
            // No connection: what the agent sent meanwhile is answered with the failure.
            Purpose::Bridge(BridgeCall::Connect) => {
                let broken = ConnectRefused::Broken {
                    code: error_code::COMPONENT_FAILED,
                    reason: message.to_string(),
                };
                let queued = self.shims.connected(link, Err(broken));
                self.replay_shim_frames(link, queued);
                return;
            }
            _ => {}
        }
        if self.shims.contains(link) {
            self.reply_error(
                link,
                &pending.origin_id,
                error_code::COMPONENT_FAILED,
                message,
                None,
            );
        }
    }

    /// What the agent sent while the connection was being made, now that it is made (or
    /// could not be).
    fn replay_shim_frames(&mut self, link: LinkId, frames: Vec<Bytes>) {
        for frame in frames {
            self.trace_in(link, &frame);
            self.on_shim_frame(link, frame);
            self.trace_flush();
        }
    }

    fn close_shim(&mut self, link: LinkId) {
        self.outputs.push(Output::Close(link));
        self.shims.forget(link);
        self.links[link].alive = false;
    }

    fn write_line(&mut self, link: LinkId, line: String) {
        let line = line.trim_end_matches('\n').to_string();
        self.queue(link, Bytes::from(line), link);
    }

    fn server_name(&self, link: LinkId) -> String {
        let id = self.shims.server(link);
        self.mcp
            .servers
            .get(id)
            .map_or_else(|| id.to_string(), |s| s.name.clone())
    }
}

fn error_message(error: &RawValue) -> String {
    acp_wire::splice::Members::of(error)
        .and_then(|m| m.get("message"))
        .and_then(|m| serde_json::from_str::<String>(m.get()).ok())
        .unwrap_or_else(|| error.get().to_string())
}
