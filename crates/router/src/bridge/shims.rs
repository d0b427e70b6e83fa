//! The bridge's shims, a part of the core's state: each shim connection's server, owner and
//! phase, and the requests in flight each way. It answers what a shim's next message calls
//! for; it knows no link's state and sends nothing (the bridge, `mod.rs`, carries that out).

use std::collections::HashMap;

use acp_wire::{IdKey, OutgoingRequests, RawValue};
use bytes::Bytes;

use crate::link::LinkId;
use crate::mcp::declaration::IdField;
use crate::mcp::stateless::ClientHello;
use crate::topology::Position;

/// How far a shim's connection has come.
#[derive(Debug)]
enum Phase {
    /// Waiting for the shim to name its server.
    Hello,
    /// `mcp/connect` sent; the agent's lines wait here.
    Connecting(Vec<Bytes>),
    Connected(String),
    /// Its connection died with a provider that is being started again: what the agent
    /// sends is held for the provider, and a new connection is made once it runs.
    Reconnect,
    Connectionless,
    /// The server cannot be reached; every request is answered with this error.
    Broken {
        code: i64,
        reason: String,
    },
}

#[derive(Debug)]
struct Shim {
    server: String,
    /// The HTTP bridge setup it came in by (`None` for a stdio shim): names its ACP session.
    setup: Option<String>,
    /// The position of the server's provider.
    owner: Position,
    phase: Phase,
    hello: ClientHello,
    /// Requests the server sent to the agent's client, by the MCP id the shim got: the id
    /// they have at the owner.
    server_requests: OutgoingRequests<Box<str>>,
    /// Connectionless requests in flight: requestId → (our id at the owner, MCP id).
    in_flight: HashMap<String, (u64, Box<str>)>,
    /// `mcp/connect` was sent (or is no longer worth trying).
    connect_tried: bool,
    /// The agent's `initialize`, while a connectionless `server/discover` for it is out and
    /// `mcp/connect` is still to be tried: replayed on a connection if discover is refused.
    held_initialize: Option<Bytes>,
    /// The params of the agent's `initialize` (`None` when it sent none), for the handshake
    /// on a connection made again after the provider restarted.
    client_initialize: Option<Option<Box<RawValue>>>,
    /// The connection being made replaces one that died with its provider.
    reconnecting: bool,
}

/// What a line from a shim meets.
pub(super) enum Arrival {
    /// No such shim (it was closed).
    Unknown,
    /// The shim's first line, which names its server.
    Hello(Bytes),
    /// Held until its connection is made.
    Held,
    /// To be routed now.
    Ready(Bytes),
}

/// How a shim that named its server goes on.
pub(super) enum Opening {
    /// Declared with `serverId`: spoken to connectionless.
    Connectionless,
    /// Declared with the RFD's `id`: `mcp/connect` first.
    Connect,
}

/// What a request from the agent's MCP client calls for.
pub(super) enum RequestRoute {
    /// `mcp/message` on this connection.
    Message(String),
    /// A connectionless `initialize`: `server/discover`, with the client's hello recorded.
    Discover,
    /// A connectionless `ping`, answered here.
    Ping,
    /// A connectionless `mcp/message` with a `requestId` of the bridge's.
    Stateless,
    /// Answered with the connection's error.
    Broken { code: i64, reason: String },
}

/// What a notification from the agent's MCP client calls for.
pub(super) enum NotificationRoute {
    /// `mcp/message` on this connection.
    Message(String),
    /// Cancel our request `own` at the owner (a connectionless request the client cancelled).
    Cancel { owner: Position, own: u64 },
    /// Nothing to send.
    Drop,
}

/// What remains of a shim that closed, for the bridge to wind up at its owner.
pub(super) struct Closed {
    pub server: String,
    pub owner: Position,
    /// It never named a server: its owner knows nothing of it.
    pub was_hello: bool,
    /// The ids, at the owner, of the server's requests the client will never answer.
    pub unanswered: Vec<Box<str>>,
    /// Our ids at the owner of the connectionless requests still in flight.
    pub in_flight: Vec<u64>,
    /// Its connection at the owner, to disconnect.
    pub connection: Option<String>,
}

/// Every shim connection.
#[derive(Debug, Default)]
pub struct Shims {
    by_link: HashMap<LinkId, Shim>,
    /// (owner, connectionId) → shim link.
    by_connection: HashMap<(Position, String), LinkId>,
    /// Names the connectionless requests the bridge sends (`requestId`).
    last_request: u64,
}

impl Shims {
    /// The providers' positions after a reload moved them (`at`: old position → new).
    pub fn remap_owners(&mut self, at: &dyn Fn(Position) -> Position) {
        for shim in self.by_link.values_mut() {
            shim.owner = at(shim.owner);
        }
        self.by_connection = std::mem::take(&mut self.by_connection)
            .into_iter()
            .map(|((owner, id), link)| ((at(owner), id), link))
            .collect();
    }

    /// A shim dialed in on `link`: it names its server first.
    pub(super) fn open(&mut self, link: LinkId) {
        let shim = Shim {
            server: String::new(),
            setup: None,
            owner: 0,
            phase: Phase::Hello,
            hello: ClientHello::unknown(),
            server_requests: OutgoingRequests::new(),
            in_flight: HashMap::new(),
            connect_tried: false,
            held_initialize: None,
            client_initialize: None,
            reconnecting: false,
        };
        self.by_link.insert(link, shim);
    }

    pub(super) fn contains(&self, link: LinkId) -> bool {
        self.by_link.contains_key(&link)
    }

    /// The shim has not named its server yet.
    pub(super) fn in_hello(&self, link: LinkId) -> bool {
        self.by_link
            .get(&link)
            .is_some_and(|shim| matches!(shim.phase, Phase::Hello))
    }

    /// Takes a line from the shim: held while its connection is being made.
    pub(super) fn arrive(&mut self, link: LinkId, frame: Bytes) -> Arrival {
        let Some(shim) = self.by_link.get_mut(&link) else {
            return Arrival::Unknown;
        };
        match &mut shim.phase {
            Phase::Hello => Arrival::Hello(frame),
            Phase::Connecting(queued) => {
                queued.push(frame);
                Arrival::Held
            }
            _ => Arrival::Ready(frame),
        }
    }

    /// The shim named server `server` (declared as `field`), served at `owner`, and the HTTP
    /// bridge setup it came in by, if any.
    pub(super) fn name(
        &mut self,
        link: LinkId,
        server: String,
        setup: Option<String>,
        owner: Position,
        field: IdField,
    ) -> Opening {
        let shim = self.shim_mut(link);
        shim.server = server;
        shim.setup = setup;
        shim.owner = owner;
        if field == IdField::ServerId {
            shim.phase = Phase::Connectionless;
            return Opening::Connectionless;
        }
        Opening::Connect
    }

    /// `mcp/connect` goes out for the shim; `queued` (the agent's lines) wait for its answer.
    pub(super) fn begin_connect(&mut self, link: LinkId, queued: Vec<Bytes>) {
        let shim = self.shim_mut(link);
        shim.phase = Phase::Connecting(queued);
        shim.connect_tried = true;
    }

    /// The answer to `mcp/connect`: the connection made (or refused) and the lines that waited
    /// for it, to be routed again in order.
    pub(super) fn connected(
        &mut self,
        link: LinkId,
        outcome: Result<String, ConnectRefused>,
    ) -> Vec<Bytes> {
        let Some(shim) = self.by_link.get_mut(&link) else {
            return Vec::new();
        };
        shim.reconnecting = false;
        let next = match outcome {
            Ok(connection) => {
                self.by_connection
                    .insert((shim.owner, connection.clone()), link);
                Phase::Connected(connection)
            }
            Err(ConnectRefused::Unknown) => Phase::Connectionless,
            Err(ConnectRefused::Broken { code, reason }) => Phase::Broken { code, reason },
        };
        match std::mem::replace(&mut shim.phase, next) {
            Phase::Connecting(queued) => queued,
            _ => Vec::new(),
        }
    }

    /// The agent's `initialize` on a connectionless shim that may still try `mcp/connect`:
    /// kept, to be replayed on a connection if `server/discover` is refused.
    pub(super) fn keep_initialize(&mut self, link: LinkId, frame: &Bytes) {
        if let Some(shim) = self.by_link.get_mut(&link)
            && matches!(shim.phase, Phase::Connectionless)
            && !shim.connect_tried
        {
            shim.held_initialize = Some(frame.clone());
        }
    }

    /// The kept `initialize`, if `mcp/connect` is still to be tried.
    pub(super) fn take_initialize(&mut self, link: LinkId) -> Option<Bytes> {
        let shim = self.shim_mut(link);
        shim.held_initialize.take().filter(|_| !shim.connect_tried)
    }

    /// What a request from the agent's MCP client calls for.
    pub(super) fn request_route(&self, link: LinkId, method: &str) -> RequestRoute {
        match &self.shim(link).phase {
            Phase::Connected(connection) => RequestRoute::Message(connection.clone()),
            Phase::Connectionless => match method {
                "initialize" => RequestRoute::Discover,
                "ping" => RequestRoute::Ping,
                _ => RequestRoute::Stateless,
            },
            Phase::Broken { code, reason } => RequestRoute::Broken {
                code: *code,
                reason: reason.clone(),
            },
            // Its provider was taken out of the chain or gave up instead of running again.
            Phase::Reconnect => RequestRoute::Broken {
                code: acp_wire::error_code::COMPONENT_FAILED,
                reason: format!(
                    "the provider of MCP server `{}` stopped, and with it this connection",
                    self.shim(link).server
                ),
            },
            Phase::Hello | Phase::Connecting(_) => unreachable!("held by `arrive`"),
        }
    }

    /// What a notification from the agent's MCP client calls for.
    pub(super) fn notification_route(
        &self,
        link: LinkId,
        method: &str,
        params: Option<&RawValue>,
    ) -> NotificationRoute {
        let shim = self.shim(link);
        match &shim.phase {
            Phase::Connected(connection) => NotificationRoute::Message(connection.clone()),
            Phase::Connectionless if method == "notifications/cancelled" => {
                let Some(cancelled) = params
                    .and_then(acp_wire::splice::Members::of)
                    .and_then(|m| m.get("requestId"))
                    .map(IdKey::of)
                else {
                    return NotificationRoute::Drop;
                };
                let own = shim.in_flight.values().find_map(|(own, mcp_id)| {
                    RawValue::from_string(mcp_id.to_string())
                        .ok()
                        .filter(|id| IdKey::of(id) == cancelled)
                        .map(|_| *own)
                });
                match own {
                    Some(own) => NotificationRoute::Cancel {
                        owner: shim.owner,
                        own,
                    },
                    None => NotificationRoute::Drop,
                }
            }
            Phase::Connectionless => {
                tracing::debug!(
                    shim = link.0,
                    method,
                    "MCP notification has no connectionless form; dropped"
                );
                NotificationRoute::Drop
            }
            _ => NotificationRoute::Drop,
        }
    }

    /// What the shim sends waits for its provider while that is being started again: it
    /// speaks connectionless, or its connection died with the provider's last instance.
    pub(super) fn waits_for_restart(&self, link: LinkId) -> bool {
        self.by_link
            .get(&link)
            .is_some_and(|shim| matches!(shim.phase, Phase::Connectionless | Phase::Reconnect))
    }

    /// Keeps the params of the agent's `initialize` for a handshake on a later connection.
    pub(super) fn keep_client_initialize(&mut self, link: LinkId, params: Option<&RawValue>) {
        if let Some(shim) = self.by_link.get_mut(&link) {
            shim.client_initialize = Some(params.map(RawValue::to_owned));
        }
    }

    /// The provider at `owner` failed and is being started again: each connection to it died
    /// with it, and its shims wait for a new one.
    pub(super) fn lose_connections(&mut self, owner: Position) {
        for shim in self.by_link.values_mut() {
            if shim.owner != owner {
                continue;
            }
            if let Phase::Connected(connection) = &shim.phase {
                self.by_connection.remove(&(owner, connection.clone()));
                shim.phase = Phase::Reconnect;
            }
        }
    }

    /// The shims of the provider at `owner` whose connection is to be made again, now that
    /// it runs; each is marked as connecting again.
    pub(super) fn take_reconnects(&mut self, owner: Position) -> Vec<LinkId> {
        let mut links: Vec<LinkId> = self
            .by_link
            .iter_mut()
            .filter(|(_, shim)| shim.owner == owner && matches!(shim.phase, Phase::Reconnect))
            .map(|(link, shim)| {
                shim.reconnecting = true;
                *link
            })
            .collect();
        links.sort_by_key(|link| link.0);
        links
    }

    /// Whether the connection being made replaces one that died with its provider: the
    /// agent's client made its handshake on the old one.
    pub(super) fn is_reconnecting(&self, link: LinkId) -> bool {
        self.by_link
            .get(&link)
            .is_some_and(|shim| shim.reconnecting)
    }

    /// The params of the agent's `initialize`, if it sent one.
    pub(super) fn client_initialize(&self, link: LinkId) -> Option<Option<&RawValue>> {
        let shim = self.by_link.get(&link)?;
        shim.client_initialize.as_ref().map(|p| p.as_deref())
    }

    /// Records the client's `initialize` params on a connectionless shim.
    pub(super) fn set_hello(&mut self, link: LinkId, hello: ClientHello) {
        self.shim_mut(link).hello = hello;
    }

    pub(super) fn hello(&self, link: LinkId) -> &ClientHello {
        &self.shim(link).hello
    }

    /// The id of the shim's server, as declared (empty before the hello).
    pub(super) fn server(&self, link: LinkId) -> &str {
        self.by_link.get(&link).map_or("", |s| s.server.as_str())
    }

    /// The HTTP bridge setup the shim came in by.
    pub(super) fn setup(&self, link: LinkId) -> Option<&str> {
        self.by_link.get(&link).and_then(|s| s.setup.as_deref())
    }

    /// The position of the shim's server's provider.
    pub(super) fn owner(&self, link: LinkId) -> Position {
        self.shim(link).owner
    }

    /// A request the server sent to the agent's client, under `id` at the owner: the MCP id
    /// it goes to the shim with, or `None` when the shim is gone.
    pub(super) fn ask_client(&mut self, link: LinkId, id: &str) -> Option<u64> {
        let shim = self.by_link.get_mut(&link)?;
        Some(shim.server_requests.register(id.into()))
    }

    /// The client answered MCP id `id`: the owner and the id the request has there.
    pub(super) fn client_answered(
        &mut self,
        link: LinkId,
        id: &RawValue,
    ) -> Option<(Position, Box<str>)> {
        let shim = self.by_link.get_mut(&link)?;
        let origin_id = shim.server_requests.complete_raw(id)?;
        Some((shim.owner, origin_id))
    }

    /// A connectionless request went out as our request `own` at the owner.
    pub(super) fn track(&mut self, link: LinkId, request_id: &str, own: u64, mcp_id: &str) {
        if let Some(shim) = self.by_link.get_mut(&link) {
            shim.in_flight
                .insert(request_id.to_string(), (own, mcp_id.into()));
        }
    }

    /// The connectionless request `request_id` was answered.
    pub(super) fn untrack(&mut self, link: LinkId, request_id: &str) {
        if let Some(shim) = self.by_link.get_mut(&link) {
            shim.in_flight.remove(request_id);
        }
    }

    /// The shim whose connectionless request `request_id` to `server` is in flight.
    pub(crate) fn with_request(&self, server: &str, request_id: &str) -> Option<LinkId> {
        self.by_link
            .iter()
            .find(|(_, s)| s.server == server && s.in_flight.contains_key(request_id))
            .map(|(link, _)| *link)
    }

    /// The shim on connection `connection` of the provider at `owner`.
    pub(crate) fn on_connection(&self, owner: Position, connection: &str) -> Option<LinkId> {
        self.by_connection
            .get(&(owner, connection.to_owned()))
            .copied()
    }

    /// How many requests the provider at `owner` sent the agents' MCP clients that still wait.
    pub(super) fn waiting_at(&self, owner: Position) -> usize {
        self.by_link
            .values()
            .filter(|shim| shim.owner == owner)
            .map(|shim| shim.server_requests.len())
            .sum()
    }

    /// Takes every request the provider at `owner` sent the agents' MCP clients and still
    /// waits for: their ids at the owner.
    pub(super) fn take_waiting_at(&mut self, owner: Position) -> Vec<Box<str>> {
        self.by_link
            .values_mut()
            .filter(|shim| shim.owner == owner)
            .flat_map(|shim| shim.server_requests.take_all())
            .collect()
    }

    /// The shim closed: what its owner must hear of.
    pub(super) fn close(&mut self, link: LinkId) -> Option<Closed> {
        let mut shim = self.by_link.remove(&link)?;
        let was_hello = matches!(shim.phase, Phase::Hello);
        let connection = match shim.phase {
            Phase::Connected(connection) => {
                self.by_connection.remove(&(shim.owner, connection.clone()));
                Some(connection)
            }
            _ => None,
        };
        Some(Closed {
            was_hello,
            unanswered: shim.server_requests.take_all(),
            in_flight: shim.in_flight.into_values().map(|(own, _)| own).collect(),
            server: shim.server,
            owner: shim.owner,
            connection,
        })
    }

    /// Forgets a shim that is refused before it was ever connected.
    pub(super) fn forget(&mut self, link: LinkId) {
        self.by_link.remove(&link);
    }

    /// The next `requestId` of a connectionless request.
    pub(super) fn next_request_id(&mut self) -> String {
        self.last_request += 1;
        format!("acp-conductor-{}", self.last_request)
    }

    fn shim(&self, link: LinkId) -> &Shim {
        self.by_link.get(&link).expect("a shim the router opened")
    }

    fn shim_mut(&mut self, link: LinkId) -> &mut Shim {
        self.by_link
            .get_mut(&link)
            .expect("a shim the router opened")
    }
}

/// Why `mcp/connect` made no connection.
pub(super) enum ConnectRefused {
    /// The provider does not know `mcp/connect`: speak to the server connectionless.
    Unknown,
    /// Every request is answered with this error.
    Broken { code: i64, reason: String },
}
