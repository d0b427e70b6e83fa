//! MCP over ACP, the pure parts the router routes by: the declarations a session setup
//! carries, the `mcp/*` params, the connectionless wire form, a bridge shim's opening lines.
//!
//! Routing decisions live in `mcp_routes.rs` and `bridge/`; the shim program an agent runs
//! and the socket it dials belong to the conductor's drivers.

pub mod bridge_hello;
pub mod declaration;
pub mod params;
pub mod stateless;
