//! acp-remote: ACP's Streamable HTTP and WebSocket transport (docs/remote.md), both sides:
//! reaching a component at a URL as a message-framed link ([`client`]), and serving a chain's
//! editor link to remote editors ([`serve`]), with the rules both share ([`protocol`]) and
//! the one TLS client configuration ([`client_tls`]) and the one bounded GET of a file
//! ([`bounded_get`]). Knows connections and envelopes, never
//! routing, chains or how a run is configured.

pub mod bounded_get;
pub mod client;
pub mod client_tls;
pub mod protocol;
pub mod serve;
mod spec;

pub use spec::RemoteSpec;
