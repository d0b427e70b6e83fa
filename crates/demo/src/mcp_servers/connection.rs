//! One initialized connection to an MCP server through rmcp: the handshake, `tools/list`,
//! `tools/call`, closing; every request with a deadline. Must not know sessions or ACP.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientConfig, ErrorData};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Child;

use super::{
    CLIENT_NAME, CLOSE_GRACE, EXIT_STATUS_WAIT, MCP_PROTOCOL_VERSION, McpError, Transport,
};

/// What a tool call returned: its text content, and whether the tool reported an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
    /// The whole `CallToolResult`.
    pub raw: Value,
}

impl ToolResult {
    fn of(raw: Value) -> ToolResult {
        let is_error = raw["isError"] == true;
        let items = raw["content"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut parts: Vec<String> = items
            .iter()
            .map(|item| match item["text"].as_str() {
                Some(text) if item["type"] == "text" => text.to_owned(),
                _ => format!("[{} content]", item["type"].as_str().unwrap_or("untyped")),
            })
            .collect();
        if parts.is_empty() && !raw["structuredContent"].is_null() {
            parts.push(raw["structuredContent"].to_string());
        }
        let text = if parts.is_empty() {
            "(no content)".to_owned()
        } else {
            parts.join("\n")
        };
        ToolResult {
            text,
            is_error,
            raw,
        }
    }
}

/// An initialized connection to one MCP server, through rmcp.
#[derive(Debug)]
pub struct McpConnection {
    server: String,
    service: RunningService<RoleClient, ClientConfig>,
    timeout: Duration,
    /// Set once a request found the server gone: rmcp may take a moment to notice it too.
    gone: AtomicBool,
    child: Option<tokio::sync::Mutex<Child>>,
}

/// What this client tells servers about itself in `initialize`.
fn client_config() -> ClientConfig {
    let info = json!({
        "protocolVersion": MCP_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
    });
    serde_json::from_value(info).expect("a valid InitializeRequestParams")
}

impl McpConnection {
    /// Completes the MCP handshake over `transport`, within `timeout`.
    pub async fn open(
        server: &str,
        transport: Transport,
        timeout: Duration,
    ) -> Result<McpConnection, McpError> {
        let Transport {
            reader,
            writer,
            child,
        } = transport;
        let child = child.map(tokio::sync::Mutex::new);
        let handshake =
            tokio::time::timeout(timeout, client_config().serve((reader, writer))).await;
        let service = match handshake {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => {
                let method = "initialize";
                return Err(match error {
                    ClientInitializeError::JsonRpcError(error) => refused(server, method, error),
                    ClientInitializeError::ConnectionClosed(_)
                    | ClientInitializeError::TransportError { .. } => McpError::Closed {
                        server: server.to_owned(),
                        method: method.to_owned(),
                        status: exit_status(child.as_ref()).await,
                    },
                    other => McpError::Malformed {
                        server: server.to_owned(),
                        method: method.to_owned(),
                        detail: other.to_string(),
                    },
                });
            }
            Err(_) => {
                return Err(McpError::Timeout {
                    server: server.to_owned(),
                    method: "initialize".to_owned(),
                    after: timeout,
                });
            }
        };
        if let Some(info) = service.peer_info() {
            // tools/list and tools/call are the same in every revision: any version will do.
            tracing::info!(
                server,
                protocol = %info.protocol_version,
                server_info = %serde_json::to_value(&info.server_info).unwrap_or_default(),
                "demo agent: MCP server ready"
            );
        }
        Ok(McpConnection {
            server: server.to_owned(),
            service,
            timeout,
            gone: AtomicBool::new(false),
            child,
        })
    }

    /// The server's input or output is gone: nothing more will be answered.
    pub fn is_closed(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
            || self.service.is_closed()
            || self.service.peer().is_transport_closed()
    }

    /// The names of the server's tools, every page of `tools/list`.
    pub async fn list_tools(&self) -> Result<Vec<String>, McpError> {
        let tools = self
            .within_deadline("tools/list", self.service.peer().list_all_tools())
            .await?;
        Ok(tools
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect())
    }

    /// Calls a tool. A tool's own failure is a [`ToolResult`] with `is_error`, not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: &Value) -> Result<ToolResult, McpError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments.as_object().cloned();
        let result = self
            .within_deadline("tools/call", self.service.peer().call_tool(params))
            .await?;
        match serde_json::to_value(result) {
            Ok(raw) => Ok(ToolResult::of(raw)),
            Err(e) => Err(self.malformed("tools/call", &e.to_string())),
        }
    }

    /// Closes the server's input and gives its process [`CLOSE_GRACE`] to exit before killing it.
    pub async fn close(self) {
        let McpConnection {
            server,
            service,
            child,
            ..
        } = self;
        // rmcp closes its transport, which shuts the server's input down.
        if tokio::time::timeout(CLOSE_GRACE, service.cancel())
            .await
            .is_err()
        {
            tracing::debug!(server = %server, "the MCP client did not stop in time");
        }
        let Some(child) = child else { return };
        let mut child = child.into_inner();
        match tokio::time::timeout(CLOSE_GRACE, child.wait()).await {
            Ok(Ok(status)) => tracing::debug!(server = %server, "MCP server stopped: {status}"),
            Ok(Err(e)) => tracing::warn!(server = %server, "could not wait for MCP server: {e}"),
            Err(_) => {
                tracing::warn!(
                    server = %server,
                    "MCP server still running {} s after its input closed; killing it",
                    CLOSE_GRACE.as_secs()
                );
                if let Err(e) = child.kill().await {
                    tracing::warn!(server = %server, "could not kill MCP server: {e}");
                }
            }
        }
    }

    /// `request`, failed with [`McpError::Timeout`] if it takes longer than this connection's
    /// timeout. Giving up drops the request, and rmcp then tells the server with
    /// `notifications/cancelled`.
    async fn within_deadline<T>(
        &self,
        method: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        tracing::debug!(server = %self.server, "MCP request {method}");
        match tokio::time::timeout(self.timeout, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ServiceError::McpError(error))) => Err(refused(&self.server, method, error)),
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                self.gone.store(true, Ordering::Relaxed);
                Err(McpError::Closed {
                    server: self.server.clone(),
                    method: method.to_owned(),
                    status: exit_status(self.child.as_ref()).await,
                })
            }
            Ok(Err(other)) => Err(self.malformed(method, &other.to_string())),
            Err(_) => Err(McpError::Timeout {
                server: self.server.clone(),
                method: method.to_owned(),
                after: self.timeout,
            }),
        }
    }

    fn malformed(&self, method: &str, detail: &str) -> McpError {
        McpError::Malformed {
            server: self.server.clone(),
            method: method.to_owned(),
            detail: detail.to_owned(),
        }
    }
}

fn refused(server: &str, method: &str, error: ErrorData) -> McpError {
    McpError::Refused {
        server: server.to_owned(),
        method: method.to_owned(),
        code: i64::from(error.code.0),
        message: error.message.into_owned(),
    }
}

/// ` (exit status: N)` once the server's process has exited, else empty (no process, or it
/// did not exit within [`EXIT_STATUS_WAIT`]).
async fn exit_status(child: Option<&tokio::sync::Mutex<Child>>) -> String {
    let Some(child) = child else {
        return String::new();
    };
    let mut child = child.lock().await;
    match tokio::time::timeout(EXIT_STATUS_WAIT, child.wait()).await {
        Ok(Ok(exit)) => format!(" ({exit})"),
        _ => String::new(),
    }
}
