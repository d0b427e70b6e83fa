//! The links the conductor writes on, what role it plays on each, and one link's recording:
//! every line the conductor wrote on it and every line its peer sent it.

use std::fmt;

/// Which way an ACP message goes, seen from the protocol's two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to agent: `ClientRequest`, `ClientNotification`; answered by `AgentResponse`.
    ClientToAgent,
    /// Agent to client: `AgentRequest`, `AgentNotification`; answered by `ClientResponse`.
    AgentToClient,
}

impl Direction {
    pub fn opposite(self) -> Self {
        match self {
            Direction::ClientToAgent => Direction::AgentToClient,
            Direction::AgentToClient => Direction::ClientToAgent,
        }
    }
}

/// A kind of link, by what the conductor is to the peer at its other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// The editor's stdio: the conductor plays the agent.
    Editor,
    /// The agent's stdio: the conductor plays the client.
    Agent,
    /// A proxy's stdio (either dialect): client→agent messages plain, agent→client ones
    /// wrapped in `proxy/successor`, and `proxy/initialize`.
    Proxy,
    /// In proxy mode (`run --proxy`), the parent conductor: the conductor plays a proxy,
    /// agent→client messages plain and client→agent ones wrapped.
    Parent,
    /// A bridge shim's socket, as the agent's stdio MCP server sees it. It carries MCP, not
    /// ACP: the ACP schema has no types for it, so only the JSON-RPC 2.0 envelope is judged
    /// (with the schema's `rpc` types), never the MCP payload.
    Shim,
}

impl LinkKind {
    /// The direction of the messages the conductor writes plain on this link (`None` for
    /// MCP).
    pub fn plain(self) -> Option<Direction> {
        match self {
            LinkKind::Editor | LinkKind::Parent => Some(Direction::AgentToClient),
            LinkKind::Agent | LinkKind::Proxy => Some(Direction::ClientToAgent),
            LinkKind::Shim => None,
        }
    }

    /// The direction of the messages the conductor writes wrapped in `proxy/successor`, on
    /// the links that carry them.
    pub fn wrapped(self) -> Option<Direction> {
        match self {
            LinkKind::Proxy => Some(Direction::AgentToClient),
            LinkKind::Parent => Some(Direction::ClientToAgent),
            _ => None,
        }
    }

    /// Whether the conductor may send `proxy/initialize` here.
    pub fn initializes_proxy(self) -> bool {
        self == LinkKind::Proxy
    }
}

impl LinkKind {
    /// Every kind, in the order of [`LinkKind::token`]'s table.
    pub const ALL: [LinkKind; 5] = [
        LinkKind::Editor,
        LinkKind::Agent,
        LinkKind::Proxy,
        LinkKind::Parent,
        LinkKind::Shim,
    ];

    /// The kind's name in a recording and in the verdicts.
    pub fn token(self) -> &'static str {
        match self {
            LinkKind::Editor => "editor",
            LinkKind::Agent => "agent",
            LinkKind::Proxy => "proxy",
            LinkKind::Parent => "parent",
            LinkKind::Shim => "shim",
        }
    }

    /// The kind named `token` in a recording.
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.token() == token)
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            LinkKind::Editor => "editor",
            LinkKind::Agent => "agent",
            LinkKind::Proxy => "proxy",
            LinkKind::Parent => "parent (proxy mode)",
            LinkKind::Shim => "bridge shim (MCP)",
        };
        f.write_str(name)
    }
}

/// One link's recording, complete once the run is over.
#[derive(Debug, Clone)]
pub struct LinkRecord {
    /// Names the link in failure messages: `editor`, `proxy p1`, ...
    pub name: String,
    pub kind: LinkKind,
    /// Every line the conductor wrote on the link, in order.
    pub written: Vec<String>,
    /// Every line the peer sent the conductor on the link, in order: the requests the
    /// conductor's responses answer.
    pub peer_sent: Vec<String>,
}

impl LinkRecord {
    pub fn new(name: &str, kind: LinkKind, written: Vec<String>, peer_sent: Vec<String>) -> Self {
        Self {
            name: name.to_string(),
            kind,
            written,
            peer_sent,
        }
    }
}
