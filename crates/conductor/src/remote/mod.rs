//! Components anywhere: ACP over the Streamable HTTP and WebSocket transport of the RFD.
//! The wire rules both sides share (`protocol`), the client that reaches a remote component,
//! and `serve`, which offers a chain to remote editors.

pub mod client;
pub mod protocol;
pub mod serve;
