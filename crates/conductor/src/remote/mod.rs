//! ACP's Streamable HTTP & WebSocket transport (the RFD `streamable-http-websocket-transport`):
//! a chain served to remote editors (`serve`). The chain itself is the conductor's own run.

pub mod serve;
