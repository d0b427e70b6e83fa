//! acp-router: the chain's routing as a state machine. It owns every link's state and id
//! table and moves each frame one hop, in arrival order; it takes [`Input`]s and hands out
//! [`Output`]s, and never touches a socket, a process, a thread or a runtime. Must not know
//! how components run, how bytes move, or what payloads mean beyond initialize.
//!
//! A driver feeds it: [`Router::handle`] for each input, [`Router::on_time`] when
//! [`Router::next_wake`] has come, and after each call takes what it decided with
//! [`Router::poll_output`]: frames to send, readers to pause or resume, outputs to close,
//! trace points. The time is always the driver's (`now`), so tests run it on a made-up clock.
//!
//! Rules come from [`topology`] (where a message goes) and [`pending`] (where a response
//! goes). [`forward`] applies them, rewriting ids and method names by splicing; [`failure`]
//! decides what the end of a component means and answers what was waiting on it, and
//! [`recovery`] carries out `bypass` and `restart`; [`deadlines`] fails components that do
//! not answer in time; [`admission`] refuses what its sender may not send (yet);
//! [`bad_input`] answers what cannot be routed, and [`skipped`] counts both; [`event_loop`]
//! takes inputs in order and knows how a run ends; [`bridge`] relays MCP for bridge shims;
//! [`run_log`] says when the chain is up and how the run ended; [`traced`] records, in a
//! traced run, each frame it takes and where it sent it.
//! The router starts nothing itself: it asks its [`Components`]. Under `serve`, a proxy
//! shared by many chains keeps them apart with [`shared_proxy::Routes`], the same kind of
//! part: frames in, where each goes out.

#![deny(clippy::print_stdout)]

mod admission;
mod bad_input;
mod bridge;
mod components;
mod deadlines;
mod event_loop;
mod failure;
mod forward;
mod http_sessions;
mod initialize;
pub mod input;
pub mod link;
mod lost_sessions;
pub mod mcp;
mod mcp_routes;
mod open_sessions;
pub mod output;
pub mod pending;
pub mod policy;
mod recovery;
pub mod reload;
mod route_trace;
mod run_log;
pub mod shared_proxy;
pub mod skipped;
mod timers;
pub mod topology;
pub mod trace_record;
mod traced;

use std::ops::{Index, IndexMut};
use std::time::{Duration, Instant};

use acp_wire::RawValue;
use acp_wire::successor::Dialect;
use bytes::Bytes;

use bridge::Shims;
pub use components::{
    BridgeEndpoint, BridgeForm, Components, HttpBridgeSession, LaunchKind, Launched, Restarted,
};
pub use initialize::AgentCapabilities;
pub use input::{ExitStatus, Input};
pub use link::{LinkEvent, LinkId};
use lost_sessions::LostSessions;
use mcp_routes::McpTable;
pub use output::Output;
use output::Outputs;
use pending::PendingRequests;
pub use policy::{AfterRestarts, FailurePolicy, OnFailure};
use recovery::Health;
pub use reload::{NewInstance, Placement, ReloadPlan, ReloadRefused, ReloadStep};
use route_trace::RouteTrace;
pub use run_log::EndOfRun;
use timers::Timers;
use topology::{Position, Topology};

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

/// The link of one chain position, as handed to the router.
#[derive(Debug)]
pub struct ChainLink {
    pub link: LinkId,
    pub name: String,
    pub role: Role,
    pub dialect: DialectChoice,
    /// What to do when it fails; ignored for the editor.
    pub failure: FailurePolicy,
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
    /// A component failed; every editor request still arriving is answered with this error,
    /// for `shutdown_grace` after the editor has had one answer.
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
    /// Once the editor has been told: when the run ends, unless the editor leaves first.
    /// Until then, requests it sent before it heard are answered with the failure too.
    ends_at: Option<Instant>,
}

/// What the router knows of one link.
#[derive(Debug)]
struct LinkState {
    name: String,
    role: Role,
    /// Where in the chain the link is; `None` for a bridge shim.
    position: Option<Position>,
    /// Requests the conductor sent on this link and still waits to hear back about.
    pending: PendingRequests,
    alive: bool,
    /// Links paused because they sent into this link's full outbox.
    paused_senders: Vec<LinkId>,
    dialect: Dialect,
    dialect_pinned: bool,
    /// When the deadline timer of its requests fires, if one is set.
    deadline_timer: Option<Instant>,
}

impl LinkState {
    fn new(name: String, role: Role, position: Option<Position>) -> LinkState {
        LinkState {
            name,
            role,
            position,
            pending: PendingRequests::new(),
            alive: true,
            paused_senders: Vec::new(),
            dialect: Dialect::Rfd,
            dialect_pinned: false,
            deadline_timer: None,
        }
    }
}

/// Every link of the run the router was given, by id. A link stays here after it ended, so
/// that what still refers to it (a pending request's origin) finds it dead, not missing.
#[derive(Debug, Default)]
struct LinkTable(Vec<Option<LinkState>>);

impl LinkTable {
    fn insert(&mut self, id: LinkId, state: LinkState) {
        if self.0.len() <= id.0 {
            self.0.resize_with(id.0 + 1, || None);
        }
        self.0[id.0] = Some(state);
    }

    fn contains(&self, id: LinkId) -> bool {
        self.0.get(id.0).is_some_and(Option::is_some)
    }

    fn iter(&self) -> impl Iterator<Item = (LinkId, &LinkState)> {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(i, l)| Some((LinkId(i), l.as_ref()?)))
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut LinkState> {
        self.0.iter_mut().flatten()
    }
}

impl Index<LinkId> for LinkTable {
    type Output = LinkState;

    fn index(&self, id: LinkId) -> &LinkState {
        self.0[id.0].as_ref().expect("a link the router was given")
    }
}

impl IndexMut<LinkId> for LinkTable {
    fn index_mut(&mut self, id: LinkId) -> &mut LinkState {
        self.0[id.0].as_mut().expect("a link the router was given")
    }
}

/// Something the router has scheduled for itself.
#[derive(Debug)]
enum Timer {
    /// A component closed its output or stopped reading: unless its exit is reported by
    /// then, it is failed with `reason`.
    ExpectExit { link: LinkId, reason: String },
    /// The backoff of a failed component under `restart` is over: start it again.
    Restart { position: Position },
    /// A request the conductor sent on `link` may be past its deadline.
    Deadline { link: LinkId },
    /// An MCP request `id` from bridge shim `link`, held for the restarting provider at
    /// `position`, reaches the provider's `request_timeout`.
    HeldCall {
        position: Position,
        link: LinkId,
        id: Box<str>,
    },
    /// A proxy instance a reload started has not answered `initialize` in time.
    WarmDeadline { link: LinkId },
    /// An instance a reload replaced or removed has had `shutdown_grace` to drain.
    Retire { link: LinkId },
}

/// The component at one chain position, as the router sees it: its current link, how it
/// is doing, and what its failures lead to.
#[derive(Debug)]
struct PositionState {
    link: LinkId,
    policy: FailurePolicy,
    health: Health,
    /// When it failed, within the window that decides when restarting stops.
    failures: Vec<Instant>,
    /// The params of the `initialize` it was sent, sent on around it if it is bypassed
    /// before answering.
    initialize_params: Option<Bytes>,
    /// The `initialize` result it was given, handed again to a restarted proxy that asks its
    /// successor, so that the rest of the chain is not initialized twice.
    initialize_answer: Option<Box<RawValue>>,
}

pub struct Router<C> {
    topology: Topology,
    links: LinkTable,
    /// The component at each chain position (0 is the editor).
    positions: Vec<PositionState>,
    components: C,
    /// What the driver has yet to carry out, in order.
    outputs: Outputs,
    /// The driver's time at the input being handled.
    now: Instant,
    state: RunState,
    timers: Timers,
    shutdown_grace: Duration,
    /// The dialect the parent conductor addressed us in (proxy mode).
    parent_dialect: Dialect,
    /// The editor has sent at least one request (so a failure has been, or will be, reported).
    editor_asked: bool,
    /// The protocol version the editor's `initialize` asked for, when it named one.
    editor_version: Option<u64>,
    /// The editor has had its `initialize` answered, so it may hear of failures.
    editor_initialized: bool,
    agent: Option<AgentCapabilities>,
    /// Sessions a restarted agent no longer has.
    lost_sessions: LostSessions,
    mcp: McpTable,
    shims: Shims,
    /// Which ACP session each HTTP bridge setup serves.
    http_sessions: http_sessions::HttpSessions,
    /// Whether the chain's `initialize` has arrived.
    opening: admission::Opening,
    skipped: skipped::Skipped,
    /// The record of the frame being routed, in a traced run.
    trace: Option<RouteTrace>,
    /// Whether component events are handed out as trace points in an untraced run too (for
    /// a driver that counts them).
    component_events: bool,
    /// What the chain-up and end-of-run log lines say.
    run_log: run_log::RunLog,
    /// A reload whose new instances are being initialized.
    reloading: Option<reload::Warming>,
    /// Instances a reload replaced or removed, answering what was sent to them.
    retiring: Vec<LinkId>,
    /// The editor's open sessions, replayed to the proxy instances a reload starts.
    open_sessions: open_sessions::OpenSessions,
    /// The id of the editor's `_acp-conductor/reload` request, until it is answered.
    reload_asked: Option<Box<str>>,
}

impl<C: Components> Router<C> {
    /// A router for `chain` (one link per position, in chain order), created at `now`.
    pub fn new(
        topology: Topology,
        chain: Vec<ChainLink>,
        components: C,
        shutdown_grace: Duration,
        now: Instant,
    ) -> Router<C> {
        assert_eq!(chain.len(), topology.link_count(), "one link per position");
        let mut links = LinkTable::default();
        let mut positions = Vec::with_capacity(chain.len());
        let mut lost_sessions = LostSessions::default();
        for (position, c) in chain.into_iter().enumerate() {
            let (dialect, pinned) = match c.dialect {
                DialectChoice::Detect => (Dialect::Rfd, false),
                DialectChoice::Pinned(d) => (d, true),
            };
            let id = c.link;
            if topology.agent_position() == Some(position) {
                lost_sessions.track(matches!(c.failure.on_failure, OnFailure::Restart { .. }));
            }
            positions.push(PositionState {
                link: id,
                policy: c.failure,
                health: Health::Up,
                failures: Vec::new(),
                initialize_params: None,
                initialize_answer: None,
            });
            links.insert(
                id,
                LinkState {
                    dialect,
                    dialect_pinned: pinned,
                    ..LinkState::new(c.name, c.role, Some(position))
                },
            );
        }
        Router {
            topology,
            links,
            positions,
            components,
            outputs: Outputs::default(),
            now,
            state: RunState::Running,
            timers: Timers::default(),
            shutdown_grace,
            parent_dialect: Dialect::Rfd,
            editor_asked: false,
            editor_version: None,
            editor_initialized: false,
            agent: None,
            lost_sessions,
            mcp: McpTable::default(),
            shims: Shims::default(),
            http_sessions: http_sessions::HttpSessions::default(),
            opening: admission::Opening::default(),
            skipped: skipped::Skipped::default(),
            trace: None,
            component_events: false,
            run_log: run_log::RunLog::new(now),
            reloading: None,
            retiring: Vec::new(),
            open_sessions: open_sessions::OpenSessions::default(),
            reload_asked: None,
        }
    }

    pub fn components(&mut self) -> &mut C {
        &mut self.components
    }

    /// Ends the router and hands back the components.
    pub fn into_components(self) -> C {
        self.components
    }

    /// What was not routed so far, by kind.
    pub fn skipped(&self) -> &skipped::Skipped {
        &self.skipped
    }

    /// The next thing the driver is to do, in the order the router decided it.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop()
    }

    /// The link at `position` now.
    fn at(&self, position: Position) -> LinkId {
        self.positions[position].link
    }

    /// The editor's link (in proxy mode, the parent conductor's).
    fn editor(&self) -> LinkId {
        self.positions[0].link
    }
}

#[cfg(test)]
mod tests;
