//! MCP over ACP: the shim an agent that cannot speak it runs instead, and (from the routing
//! core) the pure parts: declarations, the `mcp/*` params, the connectionless wire form.
//!
//! Routing decisions live in the core (`acp_router`'s `mcp_routes.rs`, `bridge/`), the
//! socket shims dial in on with the supervisor (`supervisor/bridge_socket.rs`); this module
//! holds the shim's side.

pub use acp_router::mcp::{declaration, params, stateless};
pub mod shim;
