//! The names of the attributes our spans and events carry (docs/operations.md lists them).
//! Names only; must not know where the values come from.

/// Always `jsonrpc` (OpenTelemetry's RPC conventions).
pub const RPC_SYSTEM: &str = "rpc.system";
/// The ACP method, the inner one of a `proxy/successor` message.
pub const METHOD: &str = "rpc.method";
/// The component the hop's copy was sent to (a root: `editor`); on an event, the link it
/// was read from.
pub const LINK: &str = "acp.link";
/// Its position in the chain: 0 the editor, 1..=n the proxies, n+1 the agent.
pub const POSITION: &str = "acp.link.position";
/// The `sessionId` the request names, when it names one.
pub const SESSION: &str = "acp.session.id";
/// Size of the request as read, and of its answer as read or written; of a notification.
pub const REQUEST_BYTES: &str = "acp.request.bytes";
pub const RESPONSE_BYTES: &str = "acp.response.bytes";
pub const BYTES: &str = "acp.bytes";
/// `result`, `error`, `timeout`, `cancelled` or `unanswered`.
pub const OUTCOME: &str = "acp.outcome";
/// The JSON-RPC error code of an `error` or `timeout` outcome.
pub const ERROR_CODE: &str = "rpc.jsonrpc.error_code";
