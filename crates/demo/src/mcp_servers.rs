//! The demo agent's MCP client side: a session's stdio MCP servers, each started on first use
//! and spoken to through rmcp, the official Rust MCP SDK. Knows nothing of ACP or prompts.
//!
//! A server comes from a `session/new` entry `{"name", "command", "args", "env": [{name, value}]}`
//! (http, sse and acp entries are skipped: the conductor turns acp ones into stdio entries for
//! this agent). [`SessionServers`] starts a server through a [`Launcher`] the first time it is
//! needed, starts it again after it went away, and closes them all when the session ends.
//!
//! rmcp speaks the protocol over the server's pipes: the handshake, `tools/list` pages, answers
//! to the server's `ping`, and `notifications/cancelled` for a request given up on. What is ours:
//! the agent owns each server's process ([`spawn_process`]: its working directory, its stderr in
//! our log, its exit status in errors, a kill after [`CLOSE_GRACE`]), every request has a
//! deadline, and every failure is an [`McpError`] that names the server and the request.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientConfig, ErrorData};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::process::{Child, Command};

/// The MCP revision this client asks for in `initialize`.
pub const MCP_PROTOCOL_VERSION: &str = "2025-06-18";
/// How long one request (the handshake, or every page of `tools/list`) may take before it fails.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit once its input is closed, before it is killed.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long a failed request waits for the server's exit status, to name it in the error.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
const CLIENT_NAME: &str = "acp-conductor-demo-agent";

/// A stdio MCP server as a `session/new` entry declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl StdioServer {
    /// The stdio servers among a session's `mcpServers`, in order. Other transports and
    /// malformed entries are skipped with a debug log: the session still starts.
    pub fn from_declarations(servers: &Value) -> Vec<StdioServer> {
        let entries = servers.as_array().map(Vec::as_slice).unwrap_or_default();
        entries
            .iter()
            .filter_map(|entry| match StdioServer::from_declaration(entry) {
                Ok(server) => Some(server),
                Err(reason) => {
                    let name = entry["name"].as_str().unwrap_or("?");
                    tracing::debug!(server = name, "demo agent: ignoring MCP server: {reason}");
                    None
                }
            })
            .collect()
    }

    fn from_declaration(entry: &Value) -> Result<StdioServer, String> {
        match entry["type"].as_str() {
            None | Some("stdio") => {}
            Some(other) => {
                return Err(format!(
                    "the demo agent only launches stdio servers, not {other}"
                ));
            }
        }
        let name = entry["name"].as_str().ok_or("no name")?;
        let command = entry["command"].as_str().ok_or("no command")?;
        let strings = |field: &str| -> Result<Vec<String>, String> {
            match &entry[field] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("{field} is not a list of strings")),
                _ => Err(format!("{field} is not a list")),
            }
        };
        let args = strings("args")?;
        let env = match &entry["env"] {
            Value::Null => Vec::new(),
            Value::Array(vars) => vars
                .iter()
                .map(|var| {
                    Some((
                        var["name"].as_str()?.to_owned(),
                        var["value"].as_str()?.to_owned(),
                    ))
                })
                .collect::<Option<_>>()
                .ok_or("env is not a list of {name, value} strings")?,
            _ => return Err("env is not a list".to_owned()),
        };
        Ok(StdioServer {
            name: name.to_owned(),
            command: command.to_owned(),
            args,
            env,
        })
    }
}

/// Why talking to an MCP server failed. The message names the server and the request.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("could not start MCP server `{server}` ({command}): {source}")]
    Spawn {
        server: String,
        command: String,
        source: io::Error,
    },
    #[error("MCP server `{server}` did not answer {method} within {} s", .after.as_secs_f64())]
    Timeout {
        server: String,
        method: String,
        after: Duration,
    },
    #[error("MCP server `{server}` went away before answering {method}{status}")]
    Closed {
        server: String,
        method: String,
        /// ` (exit status: N)` when the process is known to have exited, else empty.
        status: String,
    },
    #[error("MCP server `{server}` answered {method} with error {code}: {message}")]
    Refused {
        server: String,
        method: String,
        code: i64,
        message: String,
    },
    #[error("MCP server `{server}` answered {method} with something unexpected: {detail}")]
    Malformed {
        server: String,
        method: String,
        detail: String,
    },
}

/// The two ends of a connection to a server, and its process when it has one.
pub struct Transport {
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    pub child: Option<Child>,
}

/// Starts a server in the given working directory: [`spawn_process`], or an in-memory one in tests.
pub type Launcher =
    Arc<dyn Fn(&StdioServer, &Path) -> Result<Transport, McpError> + Send + Sync + 'static>;

/// The launcher of real servers.
pub fn process_launcher() -> Launcher {
    Arc::new(spawn_process)
}

/// Spawns the server's command with its args, its env added to ours, in `cwd` when that is a
/// directory. Its stderr goes to our log, line by line; the process is killed if the
/// connection is dropped without [`McpConnection::close`].
pub fn spawn_process(server: &StdioServer, cwd: &Path) -> Result<Transport, McpError> {
    let mut command = Command::new(&server.command);
    command
        .args(&server.args)
        .envs(server.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if cwd.is_dir() {
        command.current_dir(cwd);
    }
    let spawn_error = |source| McpError::Spawn {
        server: server.name.clone(),
        command: server.command.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let missing = || spawn_error(io::Error::other("a standard stream was not piped"));
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(server.name.clone(), stderr));
    }
    tracing::info!(
        server = %server.name,
        pid = child.id(),
        "demo agent: started MCP server: {} {}",
        server.command,
        server.args.join(" ")
    );
    Ok(Transport {
        reader: Box::new(stdout),
        writer: Box::new(stdin),
        child: Some(child),
    })
}

async fn log_stderr(server: String, stderr: impl AsyncRead + Unpin) {
    let mut stderr = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match stderr.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(server = %server, "MCP server stderr: {}", text.trim_end());
            }
        }
    }
}

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

/// Where a tool was found, and the servers that could not be asked.
#[derive(Debug)]
pub struct ToolSearch {
    /// Index of the first server offering the tool.
    pub found: Option<usize>,
    pub failures: Vec<McpError>,
}

/// One session's stdio MCP servers, each started on first use.
pub struct SessionServers {
    cwd: PathBuf,
    launcher: Launcher,
    timeout: Duration,
    slots: Vec<Slot>,
}

struct Slot {
    server: StdioServer,
    connection: Option<McpConnection>,
}

impl SessionServers {
    /// Starts nothing yet.
    pub fn new(
        servers: Vec<StdioServer>,
        cwd: PathBuf,
        launcher: Launcher,
        timeout: Duration,
    ) -> Self {
        let slots = servers
            .into_iter()
            .map(|server| Slot {
                server,
                connection: None,
            })
            .collect();
        SessionServers {
            cwd,
            launcher,
            timeout,
            slots,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The name the session gave server `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.slots[index].server.name
    }

    /// The connection to server `index`, started (again, if it went away) when needed.
    async fn connection(&mut self, index: usize) -> Result<&McpConnection, McpError> {
        let slot = &mut self.slots[index];
        let connection = match slot.connection.take() {
            Some(connection) if !connection.is_closed() => connection,
            previous => {
                if previous.is_some() {
                    tracing::info!(server = %slot.server.name, "MCP server went away; starting it again");
                }
                let transport = (self.launcher)(&slot.server, &self.cwd)?;
                McpConnection::open(&slot.server.name, transport, self.timeout).await?
            }
        };
        Ok(slot.connection.insert(connection))
    }

    /// Every server's tool names, or why they could not be listed, in declaration order.
    pub async fn list_tools(&mut self) -> Vec<(String, Result<Vec<String>, McpError>)> {
        let mut listed = Vec::new();
        for index in 0..self.slots.len() {
            let tools = match self.connection(index).await {
                Ok(connection) => connection.list_tools().await,
                Err(e) => Err(e),
            };
            listed.push((self.name(index).to_owned(), tools));
        }
        listed
    }

    /// The first server, in declaration order, whose `tools/list` names `tool`.
    pub async fn find_tool(&mut self, tool: &str) -> ToolSearch {
        let mut failures = Vec::new();
        for index in 0..self.slots.len() {
            let tools = match self.connection(index).await {
                Ok(connection) => connection.list_tools().await,
                Err(e) => Err(e),
            };
            match tools {
                Ok(names) if names.iter().any(|name| name == tool) => {
                    return ToolSearch {
                        found: Some(index),
                        failures,
                    };
                }
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
        ToolSearch {
            found: None,
            failures,
        }
    }

    /// Calls `tool` on server `index`.
    pub async fn call_tool(
        &mut self,
        index: usize,
        tool: &str,
        arguments: &Value,
    ) -> Result<ToolResult, McpError> {
        self.connection(index)
            .await?
            .call_tool(tool, arguments)
            .await
    }

    /// Closes every started server (see [`McpConnection::close`]).
    pub async fn close(&mut self) {
        for slot in &mut self.slots {
            if let Some(connection) = slot.connection.take() {
                connection.close().await;
            }
        }
    }
}

/// In-memory MCP servers for the tests of this client and of the demo agent.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Mutex;

    use super::*;
    use tokio::io::{AsyncWriteExt, DuplexStream, Lines, ReadHalf, WriteHalf};

    const WAIT: Duration = Duration::from_secs(10);

    /// A transport whose other end is the returned stream.
    pub(crate) fn duplex_transport() -> (Transport, DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(ours);
        let transport = Transport {
            reader: Box::new(reader),
            writer: Box::new(writer),
            child: None,
        };
        (transport, theirs)
    }

    /// The server side of a connection, one JSON line at a time.
    pub(crate) struct ServerEnd {
        lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
        writer: WriteHalf<DuplexStream>,
    }

    impl ServerEnd {
        pub(crate) fn new(stream: DuplexStream) -> Self {
            let (reader, writer) = tokio::io::split(stream);
            ServerEnd {
                lines: BufReader::new(reader).lines(),
                writer,
            }
        }

        /// The client's next message, or `None` once the client closed its side.
        pub(crate) async fn next(&mut self) -> Option<Value> {
            let line = self.lines.next_line().await.ok()??;
            Some(serde_json::from_str(&line).expect("the client sends JSON lines"))
        }

        /// The client's next message, which must come in time.
        pub(crate) async fn recv(&mut self) -> Value {
            tokio::time::timeout(WAIT, self.next())
                .await
                .expect("the client sends in time")
                .expect("the client keeps the connection open")
        }

        pub(crate) async fn send(&mut self, message: Value) {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            self.writer.write_all(&line).await.unwrap();
        }

        pub(crate) async fn answer(&mut self, request: &Value, result: Value) {
            self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                .await;
        }

        /// Reads `initialize` and `notifications/initialized`, answering the first.
        pub(crate) async fn handshake(&mut self) {
            let initialize = self.recv().await;
            assert_eq!(initialize["method"], "initialize");
            let result = json!({
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "test", "version": "1"},
            });
            self.answer(&initialize, result).await;
            assert_eq!(self.recv().await["method"], "notifications/initialized");
        }
    }

    /// What the notes servers of a test received: each server's name and every method.
    pub(crate) type Seen = Arc<Mutex<Vec<(String, String)>>>;

    pub(crate) fn seen_log(seen: &Seen) -> Vec<(String, String)> {
        seen.lock().unwrap().clone()
    }

    /// The names of the servers launched so far, in order.
    pub(crate) fn launches(seen: &Seen) -> Vec<String> {
        seen_log(seen)
            .into_iter()
            .filter(|(kind, _)| kind == "launch")
            .map(|(_, name)| name)
            .collect()
    }

    /// Launches every server as an in-memory [`notes_server`], recording `("launch", name)`.
    pub(crate) fn notes_launcher(seen: Seen) -> Launcher {
        Arc::new(move |server: &StdioServer, _cwd: &Path| {
            seen.lock()
                .unwrap()
                .push(("launch".to_owned(), server.name.clone()));
            let (transport, theirs) = duplex_transport();
            tokio::spawn(notes_server(server.name.clone(), theirs, seen.clone()));
            Ok(transport)
        })
    }

    pub(crate) const NOTES_TOOLS: [&str; 5] = ["remember", "recall", "forget", "crash", "hang"];

    /// A notes server: `remember {note}` (pings the client first and needs its answer),
    /// `recall`, `forget {number}`, `crash` (goes away mid-call), `hang` (never answers).
    pub(crate) async fn notes_server(name: String, stream: DuplexStream, seen: Seen) {
        let mut end = ServerEnd::new(stream);
        let mut notes: Vec<String> = Vec::new();
        while let Some(message) = end.next().await {
            let method = message["method"]
                .as_str()
                .unwrap_or("(response)")
                .to_owned();
            seen.lock().unwrap().push((name.clone(), method.clone()));
            match method.as_str() {
                "initialize" => {
                    let result = json!({
                        "protocolVersion": MCP_PROTOCOL_VERSION,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": name, "version": "1"},
                    });
                    end.answer(&message, result).await;
                }
                "tools/list" => {
                    let tools: Vec<Value> = NOTES_TOOLS
                        .iter()
                        .map(|tool| json!({"name": tool, "inputSchema": {"type": "object"}}))
                        .collect();
                    end.answer(&message, json!({ "tools": tools })).await;
                }
                "tools/call" => {
                    let arguments = &message["params"]["arguments"];
                    let (text, is_error) = match message["params"]["name"].as_str() {
                        Some("remember") => {
                            end.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "remembering"}}))
                                .await;
                            end.send(json!({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}))
                                .await;
                            let Some(pong) = end.next().await else { return };
                            if pong != json!({"jsonrpc": "2.0", "id": "ping-1", "result": {}}) {
                                (format!("bad answer to ping: {pong}"), true)
                            } else {
                                notes.push(arguments["note"].as_str().unwrap_or("?").to_owned());
                                (format!("Noted (note {}).", notes.len()), false)
                            }
                        }
                        Some("recall") if notes.is_empty() => ("No notes yet.".to_owned(), false),
                        Some("recall") => {
                            let lines: Vec<String> = notes
                                .iter()
                                .enumerate()
                                .map(|(i, note)| format!("{}. {note}", i + 1))
                                .collect();
                            (lines.join("\n"), false)
                        }
                        Some("forget") => match arguments["number"].as_u64() {
                            Some(n) if n >= 1 && (n as usize) <= notes.len() => {
                                let note = notes.remove(n as usize - 1);
                                (format!("Forgot note {n}: {note}"), false)
                            }
                            _ => (format!("There is no note {}.", arguments["number"]), true),
                        },
                        Some("crash") => return,
                        Some("hang") => continue,
                        other => (format!("unknown tool {other:?}"), true),
                    };
                    let result = json!({
                        "content": [{"type": "text", "text": text}],
                        "isError": is_error,
                    });
                    end.answer(&message, result).await;
                }
                _ => {}
            }
        }
        seen.lock().unwrap().push((name, "(closed)".to_owned()));
    }

    /// Waits until `seen` holds `(server, method)`.
    pub(crate) async fn wait_for_seen(seen: &Seen, server: &str, method: &str) {
        let entry = (server.to_owned(), method.to_owned());
        let deadline = tokio::time::Instant::now() + WAIT;
        while !seen_log(seen).contains(&entry) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{entry:?} never came: {:?}",
                seen_log(seen)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use std::time::Instant;

    async fn open(name: &str, timeout: Duration) -> (McpConnection, ServerEnd) {
        let (transport, theirs) = duplex_transport();
        let mut server = ServerEnd::new(theirs);
        let (connection, ()) = tokio::join!(
            McpConnection::open(name, transport, timeout),
            server.handshake()
        );
        (connection.unwrap(), server)
    }

    #[tokio::test]
    async fn handshake_names_the_demo_agent_and_every_tools_page_is_read() {
        let (transport, theirs) = duplex_transport();
        let mut server = ServerEnd::new(theirs);
        let script = async {
            let initialize = server.recv().await;
            assert_eq!(initialize["method"], "initialize");
            let params = &initialize["params"];
            assert_eq!(params["protocolVersion"], "2025-06-18");
            assert_eq!(
                params["clientInfo"],
                json!({"name": "acp-conductor-demo-agent", "version": env!("CARGO_PKG_VERSION")})
            );
            // An older revision is fine for tools.
            let result = json!({"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}});
            server.answer(&initialize, result).await;
            assert_eq!(server.recv().await["method"], "notifications/initialized");
            server
        };
        let (connection, mut server) =
            tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
        let connection = connection.unwrap();

        let script = async {
            let first = server.recv().await;
            assert_eq!(first["method"], "tools/list");
            let page = json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}], "nextCursor": "p2"});
            server.answer(&first, page).await;
            let second = server.recv().await;
            assert_eq!(second["params"]["cursor"], "p2");
            server
                .answer(
                    &second,
                    json!({"tools": [{"name": "c", "inputSchema": {"type": "object"}}]}),
                )
                .await;
        };
        let (tools, ()) = tokio::join!(connection.list_tools(), script);
        assert_eq!(tools.unwrap(), ["a", "b", "c"]);
    }

    #[tokio::test]
    async fn a_tool_result_reads_as_its_text_with_the_whole_result_kept() {
        let (connection, mut server) = open("s", REQUEST_TIMEOUT).await;
        let script = async {
            let call = server.recv().await;
            assert_eq!(call["method"], "tools/call");
            assert_eq!(call["params"]["name"], "b");
            assert_eq!(call["params"]["arguments"], json!({"x": 1}));
            let result = json!({"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "", "mimeType": "image/png"}], "isError": true});
            server.answer(&call, result).await;
            let call = server.recv().await;
            server
                .answer(&call, json!({"content": [], "structuredContent": {"n": 2}}))
                .await;
        };
        let (x1, empty) = (json!({"x": 1}), json!({}));
        let calls = async {
            let first = connection.call_tool("b", &x1).await.unwrap();
            let second = connection.call_tool("b", &empty).await.unwrap();
            (first, second)
        };
        let ((first, second), ()) = tokio::join!(calls, script);
        assert_eq!(first.text, "one\n[image content]");
        assert!(first.is_error);
        assert_eq!(second.text, r#"{"n":2}"#);
        assert!(!second.is_error);
        assert_eq!(second.raw["structuredContent"]["n"], 2);
    }

    #[tokio::test]
    async fn an_error_answer_is_a_refusal_naming_server_and_method() {
        let (connection, mut server) = open("notes", REQUEST_TIMEOUT).await;
        let script = async {
            let call = server.recv().await;
            server
                .send(json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32602, "message": "unknown tool: t"}}))
                .await;
        };
        let empty = json!({});
        let (result, ()) = tokio::join!(connection.call_tool("t", &empty), script);
        let error = result.unwrap_err();
        assert!(
            matches!(error, McpError::Refused { code: -32602, .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "MCP server `notes` answered tools/call with error -32602: unknown tool: t"
        );
        assert!(!connection.is_closed());
    }

    #[tokio::test]
    async fn a_refused_or_malformed_handshake_fails_open() {
        let (transport, theirs) = duplex_transport();
        let mut server = ServerEnd::new(theirs);
        let script = async {
            let initialize = server.recv().await;
            server
                .send(json!({"jsonrpc": "2.0", "id": initialize["id"], "error": {"code": -32602, "message": "unsupported version"}}))
                .await;
        };
        let (opened, ()) =
            tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
        assert_eq!(
            opened.unwrap_err().to_string(),
            "MCP server `s` answered initialize with error -32602: unsupported version"
        );

        let (transport, theirs) = duplex_transport();
        let mut server = ServerEnd::new(theirs);
        let script = async {
            let initialize = server.recv().await;
            server
                .answer(&initialize, json!({"capabilities": {}}))
                .await;
        };
        let (opened, ()) =
            tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
        // What is wrong with it is rmcp's to say.
        let error = opened.unwrap_err().to_string();
        assert!(
            error.starts_with("MCP server `s` answered initialize with something unexpected: "),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_server_going_away_mid_call_fails_the_call_at_once() {
        let (connection, mut server) = open("notes", REQUEST_TIMEOUT).await;
        let started = Instant::now();
        let script = async move {
            let call = server.recv().await;
            assert_eq!(call["method"], "tools/call");
            drop(server);
        };
        let empty = json!({});
        let (result, ()) = tokio::join!(connection.call_tool("t", &empty), script);
        let error = result.unwrap_err();
        assert_eq!(
            error.to_string(),
            "MCP server `notes` went away before answering tools/call"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
        assert!(connection.is_closed());
        // Later requests fail the same way without waiting.
        let again = tokio::time::timeout(Duration::from_secs(5), connection.list_tools())
            .await
            .expect("no wait on a closed connection");
        assert!(matches!(again, Err(McpError::Closed { .. })), "{again:?}");
    }

    #[tokio::test]
    async fn a_timeout_fails_the_request_and_tells_the_server() {
        let (connection, mut server) = open("slow", Duration::from_millis(200)).await;
        let call = async {
            let error = connection.call_tool("t", &json!({})).await.unwrap_err();
            assert_eq!(
                error.to_string(),
                "MCP server `slow` did not answer tools/call within 0.2 s"
            );
        };
        let script = async {
            let request = server.recv().await;
            let cancelled = server.recv().await;
            assert_eq!(cancelled["method"], "notifications/cancelled");
            assert_eq!(cancelled["params"]["requestId"], request["id"]);
            // A late answer is ignored; the connection still works.
            server.answer(&request, json!({"content": []})).await;
            let list = server.recv().await;
            server.answer(&list, json!({"tools": []})).await;
        };
        let ((), ()) = tokio::join!(
            async {
                call.await;
                assert!(!connection.is_closed());
                assert_eq!(connection.list_tools().await.unwrap(), Vec::<String>::new());
            },
            script
        );
    }

    #[test]
    fn only_stdio_declarations_are_kept() {
        let declared = json!([
            {"name": "notes", "command": "/bin/shim", "args": ["mcp-bridge", "--server", "n"], "env": []},
            {"type": "stdio", "name": "typed", "command": "tool", "args": [], "env": [{"name": "K", "value": "v"}]},
            {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
            {"type": "sse", "name": "events", "url": "https://example.com/sse", "headers": []},
            {"type": "acp", "name": "proxied", "id": "p-1"},
            {"name": "no-command", "args": []},
            {"name": "bad-args", "command": "x", "args": [1]},
            {"name": "bad-env", "command": "x", "env": [{"name": "K"}]},
            {"name": "bare", "command": "x"},
        ]);
        assert_eq!(
            StdioServer::from_declarations(&declared),
            [
                StdioServer {
                    name: "notes".into(),
                    command: "/bin/shim".into(),
                    args: vec!["mcp-bridge".into(), "--server".into(), "n".into()],
                    env: vec![],
                },
                StdioServer {
                    name: "typed".into(),
                    command: "tool".into(),
                    args: vec![],
                    env: vec![("K".into(), "v".into())],
                },
                StdioServer {
                    name: "bare".into(),
                    command: "x".into(),
                    args: vec![],
                    env: vec![],
                },
            ]
        );
        assert_eq!(StdioServer::from_declarations(&Value::Null), []);
        assert_eq!(StdioServer::from_declarations(&json!({"a": 1})), []);
    }

    fn notes_servers(names: &[&str], seen: &Seen) -> SessionServers {
        let servers = names
            .iter()
            .map(|name| StdioServer {
                name: (*name).to_owned(),
                command: "unused".to_owned(),
                args: vec![],
                env: vec![],
            })
            .collect();
        SessionServers::new(
            servers,
            PathBuf::from("/"),
            notes_launcher(seen.clone()),
            REQUEST_TIMEOUT,
        )
    }

    #[tokio::test]
    async fn servers_start_on_first_use_once_and_again_after_going_away() {
        let seen = Seen::default();
        let mut servers = notes_servers(&["a", "b"], &seen);
        assert!(launches(&seen).is_empty());

        // The first server offering the tool wins; the second is not started for it.
        let search = servers.find_tool("recall").await;
        assert_eq!(search.found, Some(0));
        assert!(search.failures.is_empty());
        assert_eq!(launches(&seen), ["a"]);
        let search = servers.find_tool("nope").await;
        assert_eq!(search.found, None);
        assert_eq!(launches(&seen), ["a", "b"]);
        let listed = servers.list_tools().await;
        assert_eq!(listed.len(), 2);
        for (_, tools) in listed {
            assert_eq!(tools.unwrap(), NOTES_TOOLS);
        }
        assert_eq!(launches(&seen), ["a", "b"]);

        let remembered = servers
            .call_tool(0, "remember", &json!({"note": "n1"}))
            .await
            .unwrap();
        assert_eq!(remembered.text, "Noted (note 1).");
        let crashed = servers.call_tool(0, "crash", &json!({})).await.unwrap_err();
        assert_eq!(
            crashed.to_string(),
            "MCP server `a` went away before answering tools/call"
        );
        // Started again, with a fresh state.
        let recalled = servers.call_tool(0, "recall", &json!({})).await.unwrap();
        assert_eq!(recalled.text, "No notes yet.");
        assert_eq!(launches(&seen), ["a", "b", "a"]);
        servers.close().await;
    }

    #[tokio::test]
    async fn a_server_that_cannot_start_is_reported_and_skipped() {
        let missing = StdioServer {
            name: "missing".to_owned(),
            command: "/nonexistent/acp-demo-mcp-server".to_owned(),
            args: vec![],
            env: vec![],
        };
        let mut servers = SessionServers::new(
            vec![missing],
            PathBuf::from("/"),
            process_launcher(),
            REQUEST_TIMEOUT,
        );
        let search = servers.find_tool("remember").await;
        assert_eq!(search.found, None);
        let [failure] = &search.failures[..] else {
            panic!("{search:?}")
        };
        assert!(
            failure.to_string().starts_with(
                "could not start MCP server `missing` (/nonexistent/acp-demo-mcp-server): "
            ),
            "{failure}"
        );
    }

    /// A directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(label: &str) -> Self {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos();
            let path = std::env::temp_dir().join(format!(
                "acp-demo-mcp-{}-{label}-{nanos}",
                std::process::id()
            ));
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path.canonicalize().unwrap())
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A stdio MCP server in POSIX sh: tools `where` (says `$GREETING $1 in $(pwd)`) and `die`
    /// (exits 3 mid-call); writes "closed" to the file `$2` when its input ends.
    const SH_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"where","inputSchema":{"type":"object"}},{"name":"die","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"name":"where"'*)
      echo "where was called" >&2
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s %s in %s"}]}}\n' "$id" "$GREETING" "$1" "$(pwd -P)" ;;
    *'"name":"die"'*)
      exit 3 ;;
  esac
done
echo closed > "$2"
"#;

    fn sh_servers(dir: &TempDir) -> SessionServers {
        let marker = dir.0.join("marker").to_string_lossy().into_owned();
        let server = StdioServer {
            name: "sh".to_owned(),
            command: "sh".to_owned(),
            args: vec![
                "-c".into(),
                SH_SERVER.into(),
                "sh".into(),
                "arg1".into(),
                marker,
            ],
            env: vec![("GREETING".into(), "hello".into())],
        };
        SessionServers::new(
            vec![server],
            dir.0.clone(),
            process_launcher(),
            REQUEST_TIMEOUT,
        )
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_process_server_gets_args_env_and_cwd_and_its_input_closed_at_the_end() {
        let dir = TempDir::new("process");
        let mut servers = sh_servers(&dir);
        let search = servers.find_tool("where").await;
        assert_eq!(search.found, Some(0), "{:?}", search.failures);
        let result = servers.call_tool(0, "where", &json!({})).await.unwrap();
        assert_eq!(result.text, format!("hello arg1 in {}", dir.0.display()));
        assert!(!dir.0.join("marker").exists());
        servers.close().await;
        // The server saw its input end and exited on its own, within the grace period.
        assert_eq!(
            std::fs::read_to_string(dir.0.join("marker")).unwrap(),
            "closed\n"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_process_exiting_mid_call_is_an_error_with_its_status() {
        let dir = TempDir::new("exit");
        let mut servers = sh_servers(&dir);
        let started = Instant::now();
        let error = servers.call_tool(0, "die", &json!({})).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "MCP server `sh` went away before answering tools/call (exit status: 3)"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        // The next use starts it again.
        let result = servers.call_tool(0, "where", &json!({})).await.unwrap();
        assert!(result.text.starts_with("hello arg1 in "), "{}", result.text);
        servers.close().await;
    }
}
