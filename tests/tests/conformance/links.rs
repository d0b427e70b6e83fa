//! The links the conductor writes on, by what it is to the peer at the other end, and one
//! link's recording. How each kind is judged is the judge's business (tests/conformance-judge).

use std::fmt;

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
    /// ACP: only the JSON-RPC 2.0 envelope is judged, never the MCP payload.
    Shim,
}

impl LinkKind {
    const ALL: [LinkKind; 5] = [
        LinkKind::Editor,
        LinkKind::Agent,
        LinkKind::Proxy,
        LinkKind::Parent,
        LinkKind::Shim,
    ];

    /// The kind's name in a recording and in the judge's verdicts.
    pub fn token(self) -> &'static str {
        match self {
            LinkKind::Editor => "editor",
            LinkKind::Agent => "agent",
            LinkKind::Proxy => "proxy",
            LinkKind::Parent => "parent",
            LinkKind::Shim => "shim",
        }
    }

    /// The kind a verdict names.
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
