//! The label values of `serve`'s metric families: closed sets, so that a family's series are
//! bounded whatever clients send. Knows no transport and no routing.

use std::fmt::Write;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};

/// Label values written as the name each variant gives.
macro_rules! label_value {
    ($($ty:ty),*) => {$(
        impl EncodeLabelValue for $ty {
            fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
                encoder.write_str(self.name())
            }
        }
    )*};
}

label_value!(
    Profile,
    Refusal,
    ChainState,
    ComponentEvent,
    LinkKind,
    Direction,
    ReloadOutcome,
    ResumeOutcome
);

/// The transport profile a connection came in on.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum Profile {
    WebSocket,
    Http,
}

/// Why a request that would have opened a connection (or any request, for the gate) was
/// refused.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum Refusal {
    /// `--max-connections` were being served (503).
    ConnectionLimit,
    /// `serve` is draining (503).
    Draining,
    /// No bearer token, or the wrong one (401).
    Unauthorized,
    /// A browser origin not allowed (403).
    Origin,
}

/// Where a chain is in its life.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum ChainState {
    /// Serving its connection.
    Running,
    /// Serving its connection while `serve` drains: it ends with its turns in flight.
    Draining,
}

/// Something that happened to a component.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum ComponentEvent {
    Started,
    Failed,
    Restarted,
    Bypassed,
}

/// The kind of peer at the other end of a link.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum LinkKind {
    /// The editor (under `serve`, the remote client) or, in proxy mode, the parent conductor.
    Editor,
    Proxy,
    Agent,
    /// An MCP bridge shim or an HTTP MCP session of the bridge.
    McpBridge,
}

impl LinkKind {
    pub const ALL: [LinkKind; 4] = [
        LinkKind::Editor,
        LinkKind::Proxy,
        LinkKind::Agent,
        LinkKind::McpBridge,
    ];
}

/// What became of a reload of the configuration (SIGHUP, or a change on disk with `watch`).
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The new configuration runs from now on.
    Applied,
    /// The file was read again and runs the same chain: nothing happened.
    Unchanged,
    /// The file could not be used (read or checked): nothing changed.
    Rejected,
}

impl ReloadOutcome {
    pub const ALL: [ReloadOutcome; 3] = [
        ReloadOutcome::Applied,
        ReloadOutcome::Unchanged,
        ReloadOutcome::Rejected,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReloadOutcome::Applied => "applied",
            ReloadOutcome::Unchanged => "unchanged",
            ReloadOutcome::Rejected => "rejected",
        }
    }
}

/// Read by the conductor from a link (`in`) or written by it to one (`out`).
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum Direction {
    In,
    Out,
}

/// What became of a client's attempt to resume a dropped stream or socket.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum ResumeOutcome {
    /// The missed messages were replayed and the stream goes on.
    Resumed,
    /// The connection is gone: its resume window passed, or it never existed here (409).
    RefusedWindow,
    /// Messages after the client's cursor were dropped from the replay buffer (409).
    RefusedBuffer,
    /// The cursor is malformed or was never given out (400 or 409).
    RefusedCursor,
}

impl ResumeOutcome {
    pub fn name(self) -> &'static str {
        match self {
            ResumeOutcome::Resumed => "resumed",
            ResumeOutcome::RefusedWindow => "refused_window",
            ResumeOutcome::RefusedBuffer => "refused_buffer",
            ResumeOutcome::RefusedCursor => "refused_cursor",
        }
    }
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::WebSocket => "websocket",
            Profile::Http => "http",
        }
    }
}

impl Refusal {
    pub fn name(self) -> &'static str {
        match self {
            Refusal::ConnectionLimit => "connection_limit",
            Refusal::Draining => "draining",
            Refusal::Unauthorized => "unauthorized",
            Refusal::Origin => "origin",
        }
    }
}

impl ChainState {
    pub fn name(self) -> &'static str {
        match self {
            ChainState::Running => "running",
            ChainState::Draining => "draining",
        }
    }
}

impl ComponentEvent {
    pub fn name(self) -> &'static str {
        match self {
            ComponentEvent::Started => "started",
            ComponentEvent::Failed => "failed",
            ComponentEvent::Restarted => "restarted",
            ComponentEvent::Bypassed => "bypassed",
        }
    }
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Editor => "editor",
            LinkKind::Proxy => "proxy",
            LinkKind::Agent => "agent",
            LinkKind::McpBridge => "mcp_bridge",
        }
    }
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ProfileLabels {
    pub(crate) profile: Profile,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResumeLabels {
    pub(crate) profile: Profile,
    pub(crate) outcome: ResumeOutcome,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RefusalLabels {
    pub(crate) reason: Refusal,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ChainLabels {
    pub(crate) state: ChainState,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ComponentLabels {
    /// The component's name in the config: bounded by the config, never a client's text.
    pub(crate) component: String,
    /// `native`, `wasm`, `remote`, `shared` or `unknown`.
    pub(crate) kind: &'static str,
    pub(crate) event: ComponentEvent,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct LinkLabels {
    pub(crate) link: LinkKind,
    pub(crate) direction: Direction,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReloadLabels {
    pub(crate) outcome: ReloadOutcome,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct MethodLabels {
    /// One of ACP's methods, or `other`.
    pub(crate) method: &'static str,
}
