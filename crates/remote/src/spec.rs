//! A component reached at a URL (`url` and `headers` of `[agent]` or `[[proxy]]`), as the
//! configuration resolved it. Plain data; what the configuration checks is the binary's.

/// A component reached at a URL over ACP's Streamable HTTP or WebSocket transport, instead
/// of started by the conductor.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteSpec {
    /// The component's name in logs and errors.
    pub name: String,
    /// `ws`, `wss`, `http` or `https`, with a host, and neither user information nor
    /// fragment (checked).
    pub url: url::Url,
    /// Sent with the WebSocket upgrade and with every HTTP request, in file order; the
    /// values are secrets, never logged and redacted in the trace.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for RemoteSpec {
    /// Shows the URL without what may carry credentials, and the header names only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("RemoteSpec")
            .field("name", &self.name)
            .field("url", &crate::protocol::shown_url(&self.url))
            .field("headers", &names)
            .finish()
    }
}
