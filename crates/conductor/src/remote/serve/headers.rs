//! The names the transport RFD gives on the wire: the endpoint's path, the connection and
//! session headers, the media types. Names only; who sends them is decided elsewhere.

/// The one endpoint: WebSocket upgrade, POST, GET (SSE) and DELETE.
pub(crate) const ENDPOINT_PATH: &str = "/acp";
/// The transport-level connection, returned on `initialize` (HTTP) or the upgrade (WebSocket).
pub(crate) const CONNECTION_ID: &str = "acp-connection-id";
/// The session a POST or a GET stream is scoped to.
pub(crate) const SESSION_ID: &str = "acp-session-id";
/// What a POST body must be.
pub(crate) const JSON: &str = "application/json";
/// What a GET stream is.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// Client methods that act on one session: a POST of one must name it (`Acp-Session-Id`, or
/// `params.sessionId` as the official SDK's client allows).
pub(crate) fn method_needs_session(method: &str) -> bool {
    matches!(
        method,
        "session/prompt"
            | "session/cancel"
            | "session/close"
            | "session/delete"
            | "session/fork"
            | "session/load"
            | "session/resume"
            | "session/set_config_option"
            | "session/set_mode"
            | "session/set_model"
    )
}

/// Methods that open a connection: the first message on a new HTTP connection, sent without
/// `Acp-Connection-Id` (`proxy/initialize` when the served chain is a proxy).
pub(crate) fn method_opens_connection(method: &str) -> bool {
    matches!(method, "initialize" | "proxy/initialize")
}
