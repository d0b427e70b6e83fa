//! The wire rules of ACP's Streamable HTTP and WebSocket transport (RFD "Streamable HTTP &
//! WebSocket Transport"), shared by the client (`remote/client/`) and `serve`. Pure: no I/O.
//!
//! One endpoint (`/acp` by convention) serves both profiles:
//!
//! - **WebSocket**: `GET` with `Upgrade: websocket`; every text message is one JSON-RPC
//!   message, binary messages are ignored. The `101` answer carries [`CONNECTION_ID`].
//! - **Streamable HTTP**: every client→server message is one `POST` body
//!   (`Content-Type: application/json`). `initialize` ([`opens_connection`]) is answered
//!   `200` with the JSON-RPC
//!   response as the body and [`CONNECTION_ID`] as a header; everything else `202 Accepted`
//!   with an empty body. Server→client messages come as SSE events (one message per event's
//!   `data`) on long-lived `GET` streams (`Accept: text/event-stream`): one
//!   connection-scoped stream ([`CONNECTION_ID`] alone) for responses to `session/new`,
//!   `session/load` and what belongs to no session, and one per session ([`CONNECTION_ID`]
//!   plus [`SESSION_ID`]) for everything of that session: its updates, the agent's requests
//!   such as `session/request_permission`, and responses to session-scoped POSTs.
//!   `DELETE` with [`CONNECTION_ID`] ends the connection.
//!
//! Which stream or header a message belongs to is read from its envelope ([`call_scope`]):
//! a call whose params carry a string `sessionId` is session-scoped, except the protocol's own
//! `$/` methods (`$/cancel_request` is connection-scoped); a response belongs to where its
//! request came from, which only the side that received the request knows.

use std::borrow::Cow;

use acp_wire::RawValue;

/// The path servers conventionally serve ACP on, and what `serve` uses.
pub const ENDPOINT_PATH: &str = "/acp";

/// The header naming the connection: set by the server on the `initialize` answer (HTTP) or
/// on the upgrade answer (WebSocket); required by the server on every later request and GET.
/// Lowercase, as `http::HeaderName::from_static` wants; header names are case-insensitive.
pub const CONNECTION_ID: &str = "acp-connection-id";

/// The header naming the session of a session-scoped POST or GET stream.
pub const SESSION_ID: &str = "acp-session-id";

/// The header a client reopening a stream names the last message it processed with (the SSE
/// `id` of that event, a cursor); over WebSocket it is sent with the upgrade that resumes a
/// connection (RFD "Durable & Resumable HTTP/WS Transport").
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The header `serve` advertises resumption with, on the answer that opens a connection:
/// `bytes=N, seconds=S` (what it keeps per connection, and how long a WebSocket connection
/// waits for its client to come back).
pub const RESUMABLE: &str = "acp-resumable";

/// On the answer to a WebSocket upgrade that resumes a connection: how many of the client's
/// messages the server has taken (the client sends again the ones after them).
pub const RECEIVED: &str = "acp-received";

/// The media type of POST bodies and of the `initialize` answer.
pub const JSON_MEDIA_TYPE: &str = "application/json";

/// The media type a GET stream is asked for and served as.
pub const EVENT_STREAM_MEDIA_TYPE: &str = "text/event-stream";

/// The methods whose POST, the first of a connection, is answered with its response in the
/// body and the new connection's id: `initialize`, and for a proxy the `proxy/initialize`
/// (or `_proxy/initialize`) a conductor sends in its place.
pub fn opens_connection(method: &str) -> bool {
    matches!(
        method,
        "initialize" | "proxy/initialize" | "_proxy/initialize"
    )
}

/// Which of the two profiles a URL asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `ws://` and `wss://`: one full-duplex WebSocket.
    WebSocket,
    /// `http://` and `https://`: POSTs one way, SSE streams the other.
    StreamableHttp,
}

/// The URL schemes a remote component may use, as they are written in the configuration.
pub const SCHEMES: &[&str] = &["ws", "wss", "http", "https"];

impl Transport {
    /// The profile a URL scheme (lowercase, as URLs normalise it) selects; `None` for any
    /// other scheme.
    pub fn of_scheme(scheme: &str) -> Option<Transport> {
        match scheme {
            "ws" | "wss" => Some(Transport::WebSocket),
            "http" | "https" => Some(Transport::StreamableHttp),
            _ => None,
        }
    }

    /// Whether the scheme is the TLS one of its pair (`wss`, `https`).
    pub fn is_secure(scheme: &str) -> bool {
        matches!(scheme, "wss" | "https")
    }

    /// What a person reads in logs and in `check`.
    pub fn describe(self) -> &'static str {
        match self {
            Transport::WebSocket => "WebSocket",
            Transport::StreamableHttp => "Streamable HTTP (POST and SSE)",
        }
    }
}

/// Where a message belongs on a Streamable HTTP connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The connection-scoped stream; a POST with [`CONNECTION_ID`] only.
    Connection,
    /// The stream of this session; a POST with [`SESSION_ID`] as well.
    Session(Cow<'a, str>),
}

/// The scope of a request or notification: the session its params name, unless it is one of
/// the protocol's own `$/` methods, which are connection-scoped whatever their params say.
pub fn call_scope<'a>(method: &str, params: Option<&'a RawValue>) -> Scope<'a> {
    if method.starts_with("$/") {
        return Scope::Connection;
    }
    match params.and_then(acp_trace::classify::session_of) {
        Some(session) => Scope::Session(session),
        None => Scope::Connection,
    }
}

/// The session a response's result names (`session/new`, `session/fork`): the client opens
/// that session's stream before it passes the response on, so nothing the agent sends for
/// the new session can go unheard.
pub fn session_in_result(result: &RawValue) -> Option<Cow<'_, str>> {
    acp_trace::classify::session_of(result)
}

/// A URL as it may be shown in logs, errors and the trace: scheme, host, port and path,
/// without the user information, query or fragment, which may carry credentials.
pub fn shown_url(url: &url::Url) -> String {
    let mut shown = format!("{}://", url.scheme());
    if let Some(host) = url.host_str() {
        shown.push_str(host);
    }
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn schemes_select_the_profile() {
        assert_eq!(Transport::of_scheme("ws"), Some(Transport::WebSocket));
        assert_eq!(Transport::of_scheme("wss"), Some(Transport::WebSocket));
        assert_eq!(
            Transport::of_scheme("http"),
            Some(Transport::StreamableHttp)
        );
        assert_eq!(
            Transport::of_scheme("https"),
            Some(Transport::StreamableHttp)
        );
        assert_eq!(Transport::of_scheme("ftp"), None);
        assert!(Transport::is_secure("wss") && Transport::is_secure("https"));
        assert!(!Transport::is_secure("ws") && !Transport::is_secure("http"));
        for scheme in SCHEMES {
            assert!(Transport::of_scheme(scheme).is_some(), "{scheme}");
        }
    }

    #[test]
    fn calls_naming_a_session_are_session_scoped() {
        let prompt = raw(r#"{"sessionId":"s\u00311","prompt":[]}"#);
        assert_eq!(
            call_scope("session/prompt", Some(prompt)),
            Scope::Session(Cow::Borrowed("s11"))
        );
        let cancel = raw(r#"{"sessionId":"s1"}"#);
        assert_eq!(
            call_scope("session/cancel", Some(cancel)),
            Scope::Session(Cow::Borrowed("s1"))
        );
        let update = raw(r#"{"update":{},"sessionId":"s2"}"#);
        assert_eq!(
            call_scope("session/update", Some(update)),
            Scope::Session(Cow::Borrowed("s2"))
        );
    }

    #[test]
    fn protocol_methods_and_sessionless_calls_are_connection_scoped() {
        let cancel = raw(r#"{"requestId":3,"sessionId":"s1"}"#);
        assert_eq!(
            call_scope("$/cancel_request", Some(cancel)),
            Scope::Connection
        );
        let new = raw(r#"{"cwd":"/","mcpServers":[]}"#);
        assert_eq!(call_scope("session/new", Some(new)), Scope::Connection);
        assert_eq!(call_scope("initialize", None), Scope::Connection);
        assert_eq!(
            call_scope("session/prompt", Some(raw(r#"{"sessionId":7}"#))),
            Scope::Connection
        );
        assert_eq!(call_scope("x", Some(raw("[1]"))), Scope::Connection);
    }

    #[test]
    fn initialize_in_either_form_opens_a_connection() {
        assert!(opens_connection("initialize"));
        assert!(opens_connection("proxy/initialize"));
        assert!(opens_connection("_proxy/initialize"));
        assert!(!opens_connection("session/new"));
    }

    #[test]
    fn a_new_session_is_read_from_the_result() {
        assert_eq!(
            session_in_result(raw(r#"{"sessionId":"abc","modes":null}"#)).as_deref(),
            Some("abc")
        );
        assert_eq!(session_in_result(raw(r#"{"stopReason":"end_turn"}"#)), None);
        assert_eq!(session_in_result(raw("null")), None);
    }

    #[test]
    fn shown_urls_leave_out_credentials() {
        let url = url::Url::parse("wss://user:secret@example.com:8443/acp?token=t#f").unwrap();
        assert_eq!(shown_url(&url), "wss://example.com:8443/acp");
        let url = url::Url::parse("http://127.0.0.1/acp").unwrap();
        assert_eq!(shown_url(&url), "http://127.0.0.1/acp");
    }
}
