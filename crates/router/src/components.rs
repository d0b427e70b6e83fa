//! The router's one port to whoever runs the components: starting one again, stopping one,
//! remembering what each was initialized with, the MCP bridge's address. Calls whose answer
//! routing needs at once; the router itself starts nothing and opens nothing.

use std::path::PathBuf;
use std::time::Instant;

use bytes::Bytes;

use super::topology::Position;
use crate::link::LinkId;

/// The components of the chain, as the router sees them. Implemented by the conductor's
/// driver over its supervisor, and in tests by fakes that record what was asked.
pub trait Components {
    /// Starts the component at `position` again, stopping what is left of its current
    /// instance, and names the new link. If it cannot start, the new link is unconnected
    /// and the failure arrives as an [`Input::Exited`](crate::Input) for it.
    fn restart(&mut self, position: Position) -> Restarted;

    /// Stops the component at `position`: its process group (or WASM instance) is ended.
    /// The router has already stopped routing to it.
    fn stop(&mut self, position: Position);

    /// Records the params of the `initialize` (or `proxy/initialize`) sent to `position`,
    /// which a restarted component is initialized with again.
    fn initialized(&mut self, position: Position, params: Bytes);

    /// Where MCP bridge shims for the agent dial in, opening the socket on first use.
    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint>;

    /// Which bridge an agent that cannot speak MCP over ACP gets (`[conductor] mcp_bridge`).
    fn bridge_form(&self) -> BridgeForm;

    /// Serves the servers of one session setup (their ids, in order) to the agent over
    /// Streamable HTTP, opening the listener on first use: a URL per server and the headers
    /// that carry the session's secret. What the agent then POSTs there arrives as a shim
    /// link whose first line names the server.
    fn http_bridge(&mut self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession>;

    /// Ends the servers of the session setup served under `key` (its session was closed, or
    /// the agent refused the setup): their URLs answer 404 and their MCP sessions end.
    fn close_http_bridge(&mut self, key: &str);

    /// How the current instance at `position` was launched, for the log; `None` when
    /// nothing runs there (or, in tests, nothing was launched).
    fn launched(&self, _position: Position) -> Option<Launched> {
        None
    }

    /// A reload's new instances took their places: `placements[i]` says what position
    /// `i + 1` now holds. Components that start nothing for reloads keep nothing.
    fn swapped(&mut self, _placements: &[crate::reload::Placement]) {}

    /// Stops the instance behind `link`, which a reload replaced, removed or abandoned; the
    /// router has stopped routing to it.
    fn retire(&mut self, _link: LinkId) {}
}

/// How a component instance was launched and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub kind: LaunchKind,
    pub at: Instant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchKind {
    /// A `command`: a child process (its process id).
    Native { pid: Option<i32> },
    /// A `builtin` agent: a program shipped with the conductor, run as a child process.
    Builtin { pid: Option<i32> },
    /// A WASM proxy, running inside the conductor.
    Wasm { module: PathBuf },
    /// A component served elsewhere, reached at this URL (as it may be shown).
    Remote { url: String },
    /// A proxy `serve` runs once for every connection's chain.
    Shared,
}

/// A component started again.
#[derive(Debug)]
pub struct Restarted {
    pub link: LinkId,
    /// The params its previous instance was initialized with, to initialize it the same way.
    pub initialize_params: Option<Bytes>,
}

/// How proxy-provided MCP servers reach an agent that does not speak MCP over ACP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BridgeForm {
    /// Streamable HTTP when the agent's `initialize` answer says `mcpCapabilities.http`,
    /// else a stdio shim.
    #[default]
    Auto,
    /// Streamable HTTP on the conductor's loopback listener, whatever the agent says.
    Http,
    /// A stdio shim per server (`acp-conductor mcp-bridge`).
    Stdio,
}

/// One session setup's servers as the HTTP bridge serves them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpBridgeSession {
    /// Names the setup's servers, for [`Components::close_http_bridge`].
    pub key: String,
    /// One URL per server id asked for, in that order.
    pub urls: Vec<String>,
    /// `(name, value)` pairs the agent sends with every request: the session's secret.
    pub headers: Vec<(String, String)>,
}

/// How an agent reaches a bridged MCP server: it runs `program mcp-bridge --socket SOCKET
/// --server ID`, which dials `socket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeEndpoint {
    /// The conductor's own executable, which has the `mcp-bridge` subcommand.
    pub program: PathBuf,
    pub socket: PathBuf,
}
