//! MCP over ACP: the declarations a session setup carries, the `mcp/*` params, the
//! connectionless wire form, and the shim an agent that cannot speak it runs instead.
//!
//! Routing decisions live in the router (`router/mcp_routes.rs`, `router/bridge.rs`), the
//! socket shims dial in on with the supervisor (`supervisor/bridge_socket.rs`); this module
//! holds the pure parts and the shim's side.

pub mod declaration;
pub mod params;
pub mod shim;
pub mod stateless;
