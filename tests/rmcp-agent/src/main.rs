//! `test-rmcp-agent`: an ACP agent whose MCP client is the official Rust MCP SDK (`rmcp`), an
//! independent peer for the MCP-over-ACP tests; shares no code with the conductor.

mod acp;
mod clients;
mod commands;
mod over_acp;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::acp::Channel;
use crate::clients::Connection;
use crate::commands::Command;
use crate::over_acp::Routes;

struct Agent {
    acp: Channel,
    speaks_acp: bool,
    /// Advertises `mcpCapabilities.http` and reaches `http` servers with rmcp's Streamable
    /// HTTP client.
    speaks_http: bool,
    mcp_version: String,
    /// The Python interpreter and client script of the `python` command (`--python`).
    python: Option<(String, String)>,
    /// Session id → its `mcpServers`.
    sessions: Mutex<HashMap<String, Vec<Value>>>,
    /// Label → connection, shared by all sessions; one command runs at a time.
    connections: tokio::sync::Mutex<HashMap<String, Connection>>,
    /// Over-ACP connections, for the messages the conductor delivers to them.
    routes: Routes,
    next_session: Mutex<u64>,
}

/// Reads ACP from stdin until it closes. Each line of a prompt is a command (`commands.rs`);
/// each line a command outputs is sent as an agent message chunk; the turn then ends with
/// `end_turn`.
///
/// Options: `--acp` (advertise `mcpCapabilities.acp` and speak `mcp/connect` itself for
/// `{"type":"acp"}` servers), `--http` (advertise `mcpCapabilities.http` and reach `http`
/// servers with rmcp's Streamable HTTP client), `--mcp-version V` (the MCP revision its clients ask for,
/// default 2025-06-18), `--record PATH` (one JSON line per session setup and per line said),
/// `--python PYTHON,SCRIPT` (the interpreter with the MCP Python SDK, and
/// tests/interop/clients/mcp_python_client.py, for the `python` command).
fn main() {
    let mut args = std::env::args().skip(1);
    let mut speaks_acp = false;
    let mut speaks_http = false;
    let mut mcp_version = "2025-06-18".to_string();
    let mut record = None;
    let mut python = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--python" => {
                let value = args.next().expect("--python takes PYTHON,SCRIPT");
                let (interpreter, script) =
                    value.split_once(',').expect("--python takes PYTHON,SCRIPT");
                python = Some((interpreter.to_string(), script.to_string()));
            }
            "--acp" => speaks_acp = true,
            "--http" => speaks_http = true,
            "--mcp-version" => mcp_version = args.next().expect("--mcp-version takes a value"),
            "--record" => {
                let path = args.next().expect("--record takes a path");
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
                record = Some(file);
            }
            other => panic!("unknown option {other}"),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // reqwest is built with rustls in this workspace; loopback HTTP needs no TLS, but a
    // client cannot be built without a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    runtime.block_on(async move {
        let (acp, mut lines) = Channel::new(record);
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = lines.recv().await {
                let line = line + "\n";
                if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err()
                {
                    break;
                }
            }
        });
        let agent = Arc::new(Agent {
            acp,
            speaks_acp,
            speaks_http,
            mcp_version,
            python,
            sessions: Mutex::default(),
            connections: tokio::sync::Mutex::default(),
            routes: Routes::default(),
            next_session: Mutex::new(0),
        });
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = stdin.next_line().await {
            match serde_json::from_str::<Value>(&line) {
                Ok(message) => agent.clone().on_message(message),
                Err(e) => eprintln!("test-rmcp-agent: not JSON ({e}): {line}"),
            }
        }
        drop(agent);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
    });
    // Child servers are not killed: their stdin closes with us, as with any agent.
    std::process::exit(0);
}

impl Agent {
    fn on_message(self: Arc<Self>, message: Value) {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method.as_deref(), id) {
            (None, Some(_)) => {
                if !self.acp.deliver(&message) {
                    eprintln!("test-rmcp-agent: a response to no request: {message}");
                }
            }
            (Some("initialize"), Some(id)) => self.acp.respond(
                &id,
                json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": false,
                        "mcpCapabilities": { "acp": self.speaks_acp, "http": self.speaks_http, "sse": false }
                    },
                    "agentInfo": { "name": "test-rmcp-agent", "version": "0.1.0" },
                    "authMethods": []
                }),
            ),
            (
                Some(m @ ("session/new" | "session/load" | "session/resume" | "session/fork")),
                Some(id),
            ) => {
                let servers = params["mcpServers"].as_array().cloned().unwrap_or_default();
                self.acp
                    .record(json!({ "event": "session/new", "method": m, "mcpServers": servers }));
                let session = match params["sessionId"].as_str() {
                    Some(existing) if m != "session/fork" => existing.to_string(),
                    _ => {
                        let mut next = self.next_session.lock().expect("session lock");
                        *next += 1;
                        format!("s{next}")
                    }
                };
                self.sessions
                    .lock()
                    .expect("sessions lock")
                    .insert(session.clone(), servers);
                let result = match m {
                    "session/new" | "session/fork" => json!({ "sessionId": session }),
                    _ => json!({}),
                };
                self.acp.respond(&id, result);
            }
            (Some("session/close"), Some(id)) => {
                let session = params["sessionId"].as_str().unwrap_or_default();
                let known = self
                    .sessions
                    .lock()
                    .expect("sessions lock")
                    .remove(session)
                    .is_some();
                self.acp
                    .record(json!({ "event": "session/close", "sessionId": session }));
                if known {
                    self.acp.respond(&id, json!({}));
                } else {
                    self.acp.respond_error(&id, -32602, "no such session");
                }
            }
            (Some("session/prompt"), Some(id)) => {
                tokio::spawn(async move { self.prompt(id, params).await });
            }
            (Some("mcp/message"), Some(id)) => self.routes.on_request(&self.acp, &id, &params),
            (Some("mcp/message"), None) => self.routes.on_notification(&params),
            (Some(_), Some(id)) => self.acp.respond_error(&id, -32601, "method not found"),
            (Some(_), None) => {}
            (None, None) => eprintln!("test-rmcp-agent: not a JSON-RPC message: {message}"),
        }
    }

    async fn prompt(self: Arc<Self>, id: Value, params: Value) {
        let session = params["sessionId"].as_str().unwrap_or_default().to_string();
        let text: Vec<&str> = params["prompt"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect();
        let text = text.join("\n");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let said = match commands::parse(line) {
                Ok(command) => self.run(&session, command).await,
                Err(e) => vec![format!("error: {e}")],
            };
            for line in said {
                self.acp.record(json!({ "event": "said", "line": line }));
                self.acp.notify(
                    "session/update",
                    json!({
                        "sessionId": session,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": { "type": "text", "text": format!("{line}\n") }
                        }
                    }),
                );
            }
        }
        self.acp.respond(&id, json!({ "stopReason": "end_turn" }));
    }

    async fn run(&self, session: &str, command: Command) -> Vec<String> {
        let mut connections = self.connections.lock().await;
        // `list` and `call` first open a connection named after its server.
        if let Command::List { label }
        | Command::Call { label, .. }
        | Command::CallCancelled { label, .. }
        | Command::Bench { label, .. } = &command
            && !connections.contains_key(label)
        {
            match self.open(session, label, label).await {
                Ok((connection, _)) => {
                    connections.insert(label.clone(), connection);
                }
                Err(e) => return vec![format!("error open {label}: {e}")],
            }
        }
        match command {
            Command::Open { label, .. }
            | Command::OpenId { label, .. }
            | Command::OpenWrongSecret { label, .. }
                if connections.contains_key(&label) =>
            {
                vec![format!("error open {label}: already open")]
            }
            Command::Open { label, server } => {
                let opened = self.open(session, &label, &server).await;
                keep_opened(&mut connections, label, opened)
            }
            Command::OpenWrongSecret { label, server } => {
                let opened = match self.server_entry(session, &server) {
                    Ok(entry) if entry["type"] == "http" => {
                        clients::open_http(&entry, &self.mcp_version, Some("wrong-secret")).await
                    }
                    Ok(_) => Err(format!("`{server}` is not an http server")),
                    Err(e) => Err(e),
                };
                keep_opened(&mut connections, label, opened)
            }
            Command::Bench { label, tool, n } => {
                let mut took = Vec::with_capacity(n);
                for _ in 0..n {
                    let start = std::time::Instant::now();
                    let called = connections[&label]
                        .call(&self.acp, &tool, &json!({}), false)
                        .await;
                    if let Err(e) = called {
                        return vec![format!("error {label} {tool}: {e}")];
                    }
                    took.push(start.elapsed());
                }
                took.sort();
                let at =
                    |q: usize| took.get((took.len() * q / 100).min(took.len().saturating_sub(1)));
                match (at(50), at(90)) {
                    (Some(p50), Some(p90)) => vec![format!(
                        "bench {label} {tool}: n={n} p50={}us p90={}us",
                        p50.as_micros(),
                        p90.as_micros()
                    )],
                    _ => vec![format!("error {label} {tool}: no calls")],
                }
            }
            Command::CallCancelled { label, tool, ms } => {
                match connections[&label].call_cancelled(&tool, ms).await {
                    Ok(how) => vec![format!("cancelled {label} {tool}: {how}")],
                    Err(e) => vec![format!("error {label} {tool}: {e}")],
                }
            }
            Command::OpenId { label, id } => {
                if !self.speaks_acp {
                    return vec![format!("error open {label}: open-id needs --acp")];
                }
                let opened = self.open_acp(&label, json!({ "acpId": id })).await;
                keep_opened(&mut connections, label, opened)
            }
            Command::List { label } => match connections[&label].list(&self.acp).await {
                Ok(tools) => vec![format!("tools {label}: {}", tools.join(","))],
                Err(e) => vec![format!("error {label} list: {e}")],
            },
            Command::Call {
                label,
                tool,
                arguments,
                progress,
            } => {
                let called = connections[&label]
                    .call(&self.acp, &tool, &arguments, progress)
                    .await;
                match called {
                    Ok(text) => vec![format!("result {label} {tool}: {text}")],
                    Err(e) => vec![format!("error {label} {tool}: {e}")],
                }
            }
            Command::Pid { label } => match connections.get(&label).map(Connection::pid) {
                Some(Ok(pid)) => vec![format!("pid {label} {pid}")],
                Some(Err(e)) => vec![format!("error pid {label}: {e}")],
                None => vec![format!("error pid {label}: not open")],
            },
            Command::Close { label } => match connections.remove(&label) {
                Some(connection) => match connection.close(&self.acp, &self.routes).await {
                    Ok(how) => vec![format!("closed {label} {how}")],
                    Err(e) => vec![format!("error close {label}: {e}")],
                },
                None => vec![format!("error close {label}: not open")],
            },
            Command::Events { label } => match connections.get(&label) {
                Some(connection) => connection.events().lock().expect("events lock").clone(),
                None => vec![format!("error events {label}: not open")],
            },
            Command::Sleep { ms } => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                vec!["slept".to_string()]
            }
            Command::Python {
                server,
                mode,
                tool,
                arguments,
            } => match self.server_entry(session, &server) {
                Ok(entry) => self.python(&entry, &mode, &tool, &arguments).await,
                Err(e) => vec![format!("error python: {e}")],
            },
        }
    }

    /// Runs the Python SDK client on `entry`; its lines, prefixed `python `, or why it failed.
    async fn python(
        &self,
        entry: &Value,
        mode: &str,
        tool: &str,
        arguments: &Value,
    ) -> Vec<String> {
        let Some((interpreter, script)) = &self.python else {
            return vec!["error python: --python is not set".to_string()];
        };
        let output = tokio::process::Command::new(interpreter)
            .arg(script)
            .arg(entry.to_string())
            .arg(mode)
            .arg(tool)
            .arg(arguments.to_string())
            .stdin(std::process::Stdio::null())
            .output()
            .await;
        let output = match output {
            Ok(output) => output,
            Err(e) => return vec![format!("error python: cannot run {interpreter}: {e}")],
        };
        let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| format!("python {line}"))
            .collect();
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            eprintln!("test-rmcp-agent: the Python client failed: {stderr}");
            lines.push(format!("error python: {}: {last}", output.status));
        }
        lines
    }

    /// Opens a connection to the server named `server` in this session's `mcpServers`.
    async fn open(
        &self,
        session: &str,
        label: &str,
        server: &str,
    ) -> Result<(Connection, String), String> {
        let entry = self.server_entry(session, server)?;
        if entry["type"] == "http" && self.speaks_http {
            return clients::open_http(&entry, &self.mcp_version, None).await;
        }
        if let Some(kind @ ("http" | "sse")) = entry["type"].as_str() {
            return Err(format!(
                "`{server}` is an {kind} server, which this agent cannot reach"
            ));
        }
        if entry["type"] == "acp" {
            if !self.speaks_acp {
                return Err(format!("`{server}` is an acp server and --acp is not set"));
            }
            let connect = match (entry.get("id"), entry.get("serverId")) {
                (Some(id), _) => json!({ "acpId": id }),
                (None, Some(id)) => json!({ "serverId": id }),
                (None, None) => return Err(format!("`{server}` has no id")),
            };
            return self.open_acp(label, connect).await;
        }
        clients::open_stdio(label, &entry, &self.mcp_version).await
    }

    /// The entry of the session's `mcpServers` named `server`.
    fn server_entry(&self, session: &str, server: &str) -> Result<Value, String> {
        self.sessions
            .lock()
            .expect("sessions lock")
            .get(session)
            .and_then(|servers| servers.iter().find(|s| s["name"] == server).cloned())
            .ok_or_else(|| format!("session {session} has no MCP server named `{server}`"))
    }

    async fn open_acp(&self, label: &str, connect: Value) -> Result<(Connection, String), String> {
        let (connection, opened) =
            over_acp::open(&self.acp, &self.routes, label, connect, &self.mcp_version).await?;
        Ok((Connection::OverAcp(connection), opened))
    }
}

/// Keeps a connection just opened; the `opened` or `error open` line.
fn keep_opened(
    connections: &mut HashMap<String, Connection>,
    label: String,
    opened: Result<(Connection, String), String>,
) -> Vec<String> {
    match opened {
        Ok((connection, description)) => {
            connections.insert(label.clone(), connection);
            vec![format!("opened {label} {description}")]
        }
        Err(e) => vec![format!("error open {label}: {e}")],
    }
}
