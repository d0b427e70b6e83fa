//! The agent's MCP client connections: stdio servers through rmcp (the official Rust MCP
//! SDK), and, with `--acp`, servers reached over ACP with `mcp/connect` and `mcp/message`.

// Sampling and logging are deprecated by a later MCP revision; agents still answer them.
#![allow(deprecated)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ErrorData, LoggingMessageNotificationParam, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Child;

use crate::acp::{Channel, describe_error};

/// What a server sent to its client, as the `events` command prints it.
pub type Events = Arc<Mutex<Vec<String>>>;

/// The sampling answer: the text of the request's first message, prefixed.
pub fn sampling_answer(first_text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": { "type": "text", "text": format!("sampled: {first_text}") },
        "model": "test-rmcp-agent",
        "stopReason": "endTurn"
    })
}

/// The text of the first message of `sampling/createMessage` params.
pub fn first_message_text(params: &Value) -> String {
    let content = &params["messages"][0]["content"];
    let text = content["text"]
        .as_str()
        .or_else(|| content[0]["text"].as_str());
    text.unwrap_or("").to_string()
}

pub fn client_config(version: &str) -> ClientConfig {
    serde_json::from_value(json!({
        "protocolVersion": version,
        "capabilities": { "sampling": {} },
        "clientInfo": { "name": "test-rmcp-agent", "version": "0.1.0" }
    }))
    .expect("a valid client config")
}

/// rmcp's client handler: answers sampling, records notifications.
pub struct Handler {
    label: String,
    events: Events,
    config: ClientConfig,
}

impl Handler {
    fn push(&self, line: String) {
        self.events.lock().expect("events lock").push(line);
    }

    fn note(&self, method: &str, params: Result<Value, serde_json::Error>) {
        let params = params.unwrap_or(Value::Null);
        self.push(format!("notification {}: {method} {params}", self.label));
    }
}

impl ClientHandler for Handler {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        let text = first_message_text(&params);
        self.push(format!(
            "request {}: sampling/createMessage {text}",
            self.label
        ));
        serde_json::from_value(sampling_answer(&text))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.note("notifications/progress", serde_json::to_value(&params));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.note("notifications/message", serde_json::to_value(&params));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.push(format!(
            "notification {}: notifications/tools/list_changed {{}}",
            self.label
        ));
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// One open MCP client connection.
pub enum Connection {
    Stdio {
        service: Box<RunningService<RoleClient, Handler>>,
        child: Child,
        events: Events,
    },
    OverAcp {
        connection_id: String,
        events: Events,
    },
}

/// A stdio server entry of `mcpServers`.
pub async fn open_stdio(
    label: &str,
    server: &Value,
    version: &str,
) -> Result<(Connection, String), String> {
    let command = server["command"]
        .as_str()
        .ok_or("the server entry has no command")?;
    let mut process = tokio::process::Command::new(command);
    for arg in server["args"].as_array().into_iter().flatten() {
        process.arg(arg.as_str().unwrap_or_default());
    }
    for var in server["env"].as_array().into_iter().flatten() {
        if let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) {
            process.env(name, value);
        }
    }
    process
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = process
        .spawn()
        .map_err(|e| format!("cannot start {command}: {e}"))?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let events = Events::default();
    let handler = Handler {
        label: label.to_string(),
        events: events.clone(),
        config: client_config(version),
    };
    let service = handler
        .serve((stdout, stdin))
        .await
        .map_err(|e| format!("MCP initialize failed: {e}"))?;
    let info = service
        .peer_info()
        .map(|info| serde_json::to_value(&*info).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let opened = format!(
        "{} {}",
        info["serverInfo"]["name"].as_str().unwrap_or("?"),
        info["protocolVersion"].as_str().unwrap_or("?")
    );
    Ok((
        Connection::Stdio {
            service: Box::new(service),
            child,
            events,
        },
        opened,
    ))
}

/// `mcp/connect` to `connect_params`, then the MCP handshake over `mcp/message`.
pub async fn open_over_acp(
    acp: &Channel,
    connect_params: Value,
    version: &str,
) -> Result<(String, String), String> {
    let connected = acp
        .request("mcp/connect", connect_params)
        .await
        .map_err(|e| describe_error(&e))?;
    let connection_id = connected["connectionId"]
        .as_str()
        .ok_or_else(|| format!("mcp/connect answered without a connectionId: {connected}"))?
        .to_string();
    let init = json!({
        "protocolVersion": version,
        "capabilities": { "sampling": {} },
        "clientInfo": { "name": "test-rmcp-agent", "version": "0.1.0" }
    });
    let result = message(acp, &connection_id, "initialize", init)
        .await
        .map_err(|e| describe_error(&e))?;
    acp.notify(
        "mcp/message",
        json!({ "connectionId": connection_id, "method": "notifications/initialized", "params": {} }),
    );
    let opened = format!(
        "{} {}",
        result["serverInfo"]["name"].as_str().unwrap_or("?"),
        result["protocolVersion"].as_str().unwrap_or("?")
    );
    Ok((connection_id, opened))
}

async fn message(
    acp: &Channel,
    connection_id: &str,
    method: &str,
    params: Value,
) -> Result<Value, Value> {
    acp.request(
        "mcp/message",
        json!({ "connectionId": connection_id, "method": method, "params": params }),
    )
    .await
}

impl Connection {
    pub fn events(&self) -> &Events {
        match self {
            Connection::Stdio { events, .. } | Connection::OverAcp { events, .. } => events,
        }
    }

    /// The tool names, in the server's order.
    pub async fn list(&self, acp: &Channel) -> Result<Vec<String>, String> {
        match self {
            Connection::Stdio { service, .. } => {
                let tools = service.list_all_tools().await.map_err(describe_service)?;
                Ok(tools.iter().map(|t| t.name.to_string()).collect())
            }
            Connection::OverAcp { connection_id, .. } => {
                let result = message(acp, connection_id, "tools/list", json!({}))
                    .await
                    .map_err(|e| describe_error(&e))?;
                Ok(result["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["name"].as_str().map(str::to_string))
                    .collect())
            }
        }
    }

    /// Calls a tool; the text it answered (with ` [isError]` when it says so).
    pub async fn call(
        &self,
        acp: &Channel,
        tool: &str,
        arguments: &Value,
        progress: bool,
    ) -> Result<String, String> {
        let mut params = json!({ "name": tool, "arguments": arguments });
        if progress {
            params["_meta"] = json!({ "progressToken": format!("progress-{tool}") });
        }
        let result = match self {
            Connection::Stdio { service, .. } => {
                let params: CallToolRequestParams =
                    serde_json::from_value(params).map_err(|e| format!("bad call params: {e}"))?;
                let result: CallToolResult =
                    service.call_tool(params).await.map_err(describe_service)?;
                serde_json::to_value(&result).unwrap_or(Value::Null)
            }
            Connection::OverAcp { connection_id, .. } => {
                message(acp, connection_id, "tools/call", params)
                    .await
                    .map_err(|e| describe_error(&e))?
            }
        };
        let text: Vec<&str> = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect();
        let mut text = text.concat();
        if result["isError"] == true {
            text.push_str(" [isError]");
        }
        Ok(text)
    }

    pub fn pid(&self) -> Result<u32, String> {
        match self {
            Connection::Stdio { child, .. } => child.id().ok_or_else(|| "exited".to_string()),
            Connection::OverAcp { .. } => Err("not a process".to_string()),
        }
    }

    /// Closes the connection: a stdio server's input closes and it is waited for (5 s).
    pub async fn close(self, acp: &Channel) -> Result<String, String> {
        match self {
            Connection::Stdio {
                service, mut child, ..
            } => {
                let _ = service.cancel().await;
                match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                    Ok(Ok(status)) => Ok(status.to_string()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err("the server did not exit within 5 s".to_string()),
                }
            }
            Connection::OverAcp { connection_id, .. } => acp
                .request("mcp/disconnect", json!({ "connectionId": connection_id }))
                .await
                .map(|_| "disconnected".to_string())
                .map_err(|e| describe_error(&e)),
        }
    }
}

fn describe_service(error: ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => format!("{} {}", e.code.0, e.message),
        other => other.to_string(),
    }
}
