//! The agent's MCP client connections: stdio servers spawned and spoken to by rmcp (the
//! official Rust MCP SDK), `http` servers reached with rmcp's Streamable HTTP client, or
//! servers reached over ACP (`over_acp.rs`). Knows no prompt syntax.

// Sampling is deprecated by a later MCP revision (SEP-2577); agents still answer it.
#![allow(deprecated)]

use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper};
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientConfig, ClientRequest,
    CreateMessageRequestParams, CreateMessageResult, ErrorData,
};
use rmcp::service::{
    PeerRequestOptions, RequestContext, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess, Transport};
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError, ServiceExt,
};
use serde_json::{Value, json};

use crate::acp::Channel;
use crate::over_acp::{AcpConnection, Routes};

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

/// The text of the first message of `sampling/createMessage` params (content as one block or,
/// since MCP 2025-11-25, as a list of blocks).
pub fn first_message_text(params: &Value) -> String {
    let content = &params["messages"][0]["content"];
    let text = content["text"]
        .as_str()
        .or_else(|| content[0]["text"].as_str());
    text.unwrap_or("").to_string()
}

/// The `initialize` params the agent's clients send.
pub fn client_info(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": { "sampling": {} },
        "clientInfo": { "name": "test-rmcp-agent", "version": "0.1.0" }
    })
}

/// Starts an rmcp client on `transport`: with the `initialize` handshake, or, for the
/// stateless revision 2026-07-28, with `server/discover` and `_meta` on every request.
async fn start<T, E, A>(
    handler: Handler,
    transport: T,
    version: &str,
) -> Result<RunningService<RoleClient, Handler>, String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let started = if version == ProtocolVersion::V_2026_07_28.as_str() {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        handler.serve_with_lifecycle(transport, lifecycle).await
    } else {
        handler.serve(transport).await
    };
    started.map_err(|e| format!("MCP initialize failed: {e}"))
}

/// `<serverInfo.name> <protocolVersion>` of an `initialize` result.
pub fn describe_server(initialize_result: &Value) -> String {
    format!(
        "{} {}",
        initialize_result["serverInfo"]["name"]
            .as_str()
            .unwrap_or("?"),
        initialize_result["protocolVersion"].as_str().unwrap_or("?")
    )
}

/// The text contents of a `tools/call` result, concatenated (` [isError]` appended when so).
pub fn tool_text(result: &Value) -> String {
    let mut text: String = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    if result["isError"] == true {
        text.push_str(" [isError]");
    }
    text
}

/// Adds `message`'s event line, if it has one, to `events`.
pub fn record(events: &Events, label: &str, message: &Value) {
    if let Some(line) = event_line(label, message) {
        events.lock().expect("events lock").push(line);
    }
}

/// The `events` line for a message a server sent: notifications and sampling requests;
/// `None` for anything else (responses, other requests).
pub fn event_line(label: &str, message: &Value) -> Option<String> {
    let method = message["method"].as_str()?;
    let params = match message.get("params") {
        Some(params) if !params.is_null() => keys_sorted(params),
        _ => json!({}),
    };
    match message.get("id") {
        None => Some(format!("notification {label}: {method} {params}")),
        Some(_) if method == "sampling/createMessage" => Some(format!(
            "request {label}: sampling/createMessage {}",
            first_message_text(&params)
        )),
        Some(_) => None,
    }
}

/// `value` with every object's keys in sorted order, so an event line reads the same
/// whether or not some other crate in the build turns on serde_json's `preserve_order`.
fn keys_sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), keys_sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(keys_sorted).collect()),
        other => other.clone(),
    }
}

/// rmcp's client handler: answers sampling. What the server sends is recorded by
/// [`RecordingTransport`], in order (rmcp runs each notification handler in a task of its own).
pub struct Handler {
    config: ClientConfig,
}

impl ClientHandler for Handler {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        serde_json::from_value(sampling_answer(&first_message_text(&params)))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// rmcp's child-process transport, recording each message the server sends as it arrives.
pub struct RecordingTransport {
    inner: TokioChildProcess,
    label: String,
    events: Events,
}

impl Transport<RoleClient> for RecordingTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        let value = serde_json::to_value(&message).unwrap_or(Value::Null);
        record(&self.events, &self.label, &value);
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Where the exit status of a stdio server lands once rmcp has waited for it.
type ExitCell = Arc<Mutex<Option<ExitStatus>>>;

/// A process-wrap layer that keeps the exit status seen by whoever waits for the child:
/// rmcp's transport waits for (and reaps) it on close and keeps nothing.
#[derive(Debug, Default)]
struct KeepExitStatus(ExitCell);

impl CommandWrapper for KeepExitStatus {
    fn wrap_child(
        &mut self,
        child: Box<dyn ChildWrapper>,
        _core: &CommandWrap,
    ) -> std::io::Result<Box<dyn ChildWrapper>> {
        Ok(Box::new(StatusKeepingChild {
            inner: child,
            exit: self.0.clone(),
        }))
    }
}

#[derive(Debug)]
struct StatusKeepingChild {
    inner: Box<dyn ChildWrapper>,
    exit: ExitCell,
}

impl StatusKeepingChild {
    fn keep(exit: &ExitCell, status: ExitStatus) {
        *exit.lock().expect("exit lock") = Some(status);
    }
}

impl ChildWrapper for StatusKeepingChild {
    fn inner(&self) -> &dyn ChildWrapper {
        &*self.inner
    }

    fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
        &mut *self.inner
    }

    fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
        self.inner
    }

    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.inner.try_wait()?;
        if let Some(status) = status {
            Self::keep(&self.exit, status);
        }
        Ok(status)
    }

    fn wait(&mut self) -> Pin<Box<dyn Future<Output = std::io::Result<ExitStatus>> + Send + '_>> {
        let exit = self.exit.clone();
        let waiting = self.inner.wait();
        Box::pin(async move {
            let status = waiting.await?;
            Self::keep(&exit, status);
            Ok(status)
        })
    }
}

/// One open MCP client connection.
pub enum Connection {
    Stdio {
        service: Box<RunningService<RoleClient, Handler>>,
        pid: Option<u32>,
        exit: ExitCell,
        events: Events,
    },
    /// An `http` server, through rmcp's Streamable HTTP client.
    Http {
        service: Box<RunningService<RoleClient, Handler>>,
        events: Events,
    },
    OverAcp(AcpConnection),
}

/// Connects rmcp's Streamable HTTP client to an `http` entry of `mcpServers` (`url`, with
/// its `headers` on every request) and initializes it. `wrong_secret` replaces the value of
/// every header that carries one. Returns the connection and `<serverInfo.name> <version>`.
pub async fn open_http(
    server: &Value,
    version: &str,
    wrong_secret: Option<&str>,
) -> Result<(Connection, String), String> {
    let url = server["url"]
        .as_str()
        .ok_or("the server entry has no url")?;
    let mut headers = std::collections::HashMap::new();
    for header in server["headers"].as_array().into_iter().flatten() {
        let (Some(name), Some(value)) = (header["name"].as_str(), header["value"].as_str()) else {
            return Err(format!("a header without name or value: {header}"));
        };
        let value = match wrong_secret {
            Some(wrong) if name.eq_ignore_ascii_case("authorization") => format!("Bearer {wrong}"),
            _ => value.to_string(),
        };
        headers.insert(
            http::HeaderName::try_from(name).map_err(|e| format!("header {name}: {e}"))?,
            http::HeaderValue::try_from(value).map_err(|e| format!("header {name}: {e}"))?,
        );
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let config: ClientConfig = serde_json::from_value(client_info(version))
        .map_err(|e| format!("bad client info for version {version}: {e}"))?;
    let service = start(Handler { config }, transport, version).await?;
    let info = service
        .peer_info()
        .map(|info| serde_json::to_value(&*info).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let opened = describe_server(&info);
    let connection = Connection::Http {
        service: Box::new(service),
        events: Events::default(),
    };
    Ok((connection, format!("{opened} http")))
}

/// Starts the stdio server of an `mcpServers` entry (`command`, `args`, `env`) with rmcp's
/// child-process transport and initializes an rmcp client with it. Returns the connection
/// and `<serverInfo.name> <protocolVersion>`.
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
    let exit = ExitCell::default();
    let mut process = CommandWrap::from(process);
    process.wrap(KeepExitStatus(exit.clone()));
    // Piped stdin and stdout, inherited stderr: the server logs where the agent does.
    let (transport, _no_stderr) = TokioChildProcess::builder(process)
        .spawn()
        .map_err(|e| format!("cannot start {command}: {e}"))?;
    let pid = transport.id();
    let events = Events::default();
    let config: ClientConfig = serde_json::from_value(client_info(version))
        .map_err(|e| format!("bad client info for version {version}: {e}"))?;
    let transport = RecordingTransport {
        inner: transport,
        label: label.to_string(),
        events: events.clone(),
    };
    let service = start(Handler { config }, transport, version).await?;
    let info = service
        .peer_info()
        .map(|info| serde_json::to_value(&*info).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let opened = describe_server(&info);
    let connection = Connection::Stdio {
        service: Box::new(service),
        pid,
        exit,
        events,
    };
    Ok((connection, opened))
}

impl Connection {
    pub fn events(&self) -> &Events {
        match self {
            Connection::Stdio { events, .. } | Connection::Http { events, .. } => events,
            Connection::OverAcp(connection) => &connection.events,
        }
    }

    /// The tool names, in the server's order.
    pub async fn list(&self, acp: &Channel) -> Result<Vec<String>, String> {
        match self {
            Connection::Stdio { service, .. } | Connection::Http { service, .. } => {
                let tools = service.list_all_tools().await.map_err(describe_service)?;
                Ok(tools.iter().map(|t| t.name.to_string()).collect())
            }
            Connection::OverAcp(connection) => connection.list(acp).await,
        }
    }

    /// Calls a tool; the text it answered (see [`tool_text`]). Over ACP, `progress` puts
    /// `_meta.progressToken` = `progress-<tool>` in the request; rmcp puts a progress token
    /// of its own (a number) in every request, replacing any set, so on stdio it changes nothing.
    pub async fn call(
        &self,
        acp: &Channel,
        tool: &str,
        arguments: &Value,
        progress: bool,
    ) -> Result<String, String> {
        match self {
            Connection::Stdio { service, .. } | Connection::Http { service, .. } => {
                let mut params = CallToolRequestParams::new(tool.to_string());
                params.arguments = arguments.as_object().cloned();
                let result = service.call_tool(params).await.map_err(describe_service)?;
                Ok(tool_text(
                    &serde_json::to_value(&result).unwrap_or(Value::Null),
                ))
            }
            Connection::OverAcp(connection) => {
                let token = progress.then(|| format!("progress-{tool}"));
                connection
                    .call(acp, tool, arguments, token.as_deref())
                    .await
            }
        }
    }

    pub fn pid(&self) -> Result<u32, String> {
        match self {
            Connection::Stdio { pid, .. } => pid.ok_or_else(|| "no pid".to_string()),
            Connection::Http { .. } | Connection::OverAcp(_) => Err("not a process".to_string()),
        }
    }

    /// Closes the connection. A stdio server: rmcp closes its stdin and waits for it (then,
    /// as rmcp does, SIGTERM after 3 s and SIGKILL after 3 s more); says how it exited.
    pub async fn close(self, acp: &Channel, routes: &Routes) -> Result<String, String> {
        match self {
            Connection::Stdio { service, exit, .. } => {
                match tokio::time::timeout(Duration::from_secs(10), service.cancel()).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return Err(format!("the MCP client task failed: {e}")),
                    Err(_) => return Err("the MCP client did not stop within 10 s".to_string()),
                }
                let status = *exit.lock().expect("exit lock");
                status
                    .map(|s| s.to_string())
                    .ok_or_else(|| "the server's exit status is unknown".to_string())
            }
            Connection::Http { service, .. } => {
                match tokio::time::timeout(Duration::from_secs(10), service.cancel()).await {
                    Ok(Ok(_)) => Ok("http".to_string()),
                    Ok(Err(e)) => Err(format!("the MCP client task failed: {e}")),
                    Err(_) => Err("the MCP client did not stop within 10 s".to_string()),
                }
            }
            Connection::OverAcp(connection) => connection.close(acp, routes).await,
        }
    }

    /// Calls `tool` and, after `ms` milliseconds, cancels it with rmcp's
    /// `notifications/cancelled`; says whether an answer had come first.
    pub async fn call_cancelled(&self, tool: &str, ms: u64) -> Result<String, String> {
        let (Connection::Stdio { service, .. } | Connection::Http { service, .. }) = self else {
            return Err("call-cancel needs an rmcp connection".to_string());
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_string()),
        ));
        let mut handle = service
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(describe_service)?;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        if let Ok(answer) = handle.rx.try_recv() {
            return Ok(format!("answered before the cancel: {answer:?}"));
        }
        handle
            .cancel(Some("cancelled by test-rmcp-agent".to_string()))
            .await
            .map_err(describe_service)?;
        Ok("notifications/cancelled sent".to_string())
    }
}

/// `code message` for an MCP error, else rmcp's description.
fn describe_service(error: ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => format!("{} {}", e.code.0, e.message),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_reads_either_content_form() {
        let one =
            json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "q" } }] });
        let many = json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": "r" }] }] });
        assert_eq!(first_message_text(&one), "q");
        assert_eq!(first_message_text(&many), "r");
        assert_eq!(sampling_answer("q")["content"]["text"], "sampled: q");
    }

    #[test]
    fn events_are_notifications_and_sampling_requests() {
        let progress = json!({ "jsonrpc": "2.0", "method": "notifications/progress",
            "params": { "progressToken": 1, "progress": 1 } });
        assert_eq!(
            event_line("t", &progress).unwrap(),
            r#"notification t: notifications/progress {"progress":1,"progressToken":1}"#
        );
        let changed = json!({ "method": "notifications/tools/list_changed", "params": null });
        assert_eq!(
            event_line("t", &changed).unwrap(),
            "notification t: notifications/tools/list_changed {}"
        );
        let sampling = json!({ "id": 3, "method": "sampling/createMessage", "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": "q?" } }] } });
        assert_eq!(
            event_line("t", &sampling).unwrap(),
            "request t: sampling/createMessage q?"
        );
        assert_eq!(event_line("t", &json!({ "id": 4, "method": "ping" })), None);
        assert_eq!(event_line("t", &json!({ "id": 4, "result": {} })), None);
    }

    #[test]
    fn tool_text_joins_text_and_marks_errors() {
        let result = json!({ "content": [
            { "type": "text", "text": "a" },
            { "type": "image", "data": "", "mimeType": "image/png" },
            { "type": "text", "text": "b" }
        ], "isError": true });
        assert_eq!(tool_text(&result), "ab [isError]");
        assert_eq!(
            tool_text(&json!({ "content": [{ "type": "text", "text": "x" }] })),
            "x"
        );
    }

    #[test]
    fn client_info_is_an_rmcp_client_config_for_each_tested_version() {
        for version in ["2025-06-18", "2025-11-25"] {
            let config: ClientConfig = serde_json::from_value(client_info(version)).unwrap();
            let back = serde_json::to_value(&config).unwrap();
            assert_eq!(back["protocolVersion"], version);
            assert!(back["capabilities"]["sampling"].is_object(), "{back}");
        }
    }
}
