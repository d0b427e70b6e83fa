//! MCP over ACP: the declarations a session setup carries, the connectionless wire form, and
//! the stdio bridge (private socket plus shim) for agents that cannot speak it themselves.
//!
//! Routing decisions live in the router (`router/mcp_routes.rs`, `router/bridge.rs`); this
//! module holds the pure parts and the bridge's processes and sockets.

pub mod declaration;
pub mod envelope;
pub mod shim;
pub mod socket;
pub mod stateless;
