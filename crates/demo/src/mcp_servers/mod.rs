//! The demo agent's MCP client side: a session's stdio MCP servers, each started on first use
//! and spoken to through rmcp, the official Rust MCP SDK. Knows nothing of ACP or prompts.
//!
//! A server comes from a `session/new` entry `{"name", "command", "args", "env": [{name, value}]}`
//! (http, sse and acp entries are skipped: the conductor turns acp ones into stdio entries for
//! this agent). [`SessionServers`] starts a server through a [`Launcher`] the first time it is
//! needed, starts it again after it went away, and closes them all when the session ends.
//!
//! rmcp speaks the protocol over the server's pipes: the handshake, `tools/list` pages, answers
//! to the server's `ping`, and `notifications/cancelled` for a request given up on. What is ours:
//! the agent owns each server's process ([`spawn_process`]: its working directory, its stderr in
//! our log, its exit status in errors, a kill after [`CLOSE_GRACE`]), every request has a
//! deadline, and every failure is an [`McpError`] that names the server and the request.

mod connection;
mod declaration;
mod error;
mod process;
mod session;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use connection::{McpConnection, ToolResult};
pub use declaration::{DeclarationError, StdioServer};
pub use error::McpError;
pub use process::{Launcher, Transport, process_launcher, spawn_process};
pub use session::{SessionServers, ToolSearch};

/// The MCP revision this client asks for in `initialize`.
pub const MCP_PROTOCOL_VERSION: &str = "2025-06-18";
/// How long one request (the handshake, or every page of `tools/list`) may take before it fails.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit once its input is closed, before it is killed.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long a failed request waits for the server's exit status, to name it in the error.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
const CLIENT_NAME: &str = "acp-conductor-demo-agent";
