//! Components anywhere: ACP over the Streamable HTTP and WebSocket transport of the RFD.
//! The wire rules both sides share (`protocol`) and the client that reaches a remote component.

pub mod client;
pub mod protocol;
