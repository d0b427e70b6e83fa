//! The conformance agent's MCP client: it launches the stdio servers of a session (the
//! conductor's bridge shims among them) or, with `--acp`, speaks MCP over ACP itself.
//!
//! Over ACP it opens each server the way its declaration asks: `mcp/connect` with `acpId`
//! (declaration `id`, the RFD's form) or `serverId`, and when that is refused with -32601,
//! the connectionless `mcp/message {serverId, requestId, method, params}` of schema 1.20.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::{Agent, Answer, payloads};

/// The MCP revision the agent asks for on a connection.
const MCP_VERSION: &str = "2025-06-18";
/// What the stateless revision wants in every request's `_meta`.
const STATELESS_META: [(&str, &str); 1] =
    [("io.modelcontextprotocol/protocolVersion", "2026-07-28")];
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// The question of a `sampling/createMessage` request's first message.
pub fn sampled_question(params: &Value) -> String {
    params["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// One way of carrying MCP to a server.
trait Transport {
    /// `{"result": ...}` or `{"error": ...}`.
    fn request(&mut self, method: &str, params: Value) -> Answer;
    fn notify(&mut self, method: &str, params: Value);
}

/// The tools the agent calls when a server lists them, with their arguments.
fn tool_calls() -> [(&'static str, Value); 5] {
    [
        ("echo", json!({ "text": "conformance" })),
        ("progress", json!({})),
        ("ask", json!({ "question": "Proceed with the fix?" })),
        ("fail", json!({})),
        ("open_files", json!({})),
    ]
}

/// Lists the server's tools and calls the known ones; returns what happened, a line each.
fn exercise(transport: &mut impl Transport, handshake: bool) -> Vec<String> {
    let mut said = Vec::new();
    if handshake {
        let init = transport.request(
            "initialize",
            json!({
                "protocolVersion": MCP_VERSION,
                "capabilities": { "sampling": {} },
                "clientInfo": { "name": "conformance-agent", "version": "1.0.0" }
            }),
        );
        said.push(format!("initialize {}", outcome(&init)));
        transport.notify("notifications/initialized", json!({}));
    } else {
        let discover = transport.request("server/discover", json!({}));
        said.push(format!("server/discover {}", outcome(&discover)));
    }
    let tools = transport.request("tools/list", json!({}));
    said.push(format!("tools/list {}", outcome(&tools)));
    let listed: Vec<String> = tools["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect();
    for (name, arguments) in tool_calls() {
        if listed.iter().any(|listed| listed == name) {
            let call = transport.request(
                "tools/call",
                json!({ "name": name, "arguments": arguments, "_meta": { "progressToken": format!("progress-{name}") } }),
            );
            said.push(format!("tools/call {name} {}", outcome(&call)));
        }
    }
    said
}

/// `ok` or the error's code, for the agent's report.
fn outcome(answer: &Value) -> String {
    match answer.get("error") {
        Some(error) => format!("error {}", error["code"]),
        None => "ok".to_string(),
    }
}

impl Agent {
    /// Uses every MCP server declared in the session's setup, reporting in chunks.
    pub(crate) fn use_mcp_servers(&mut self, session_id: &str) {
        let servers = self.servers.get(session_id).cloned().unwrap_or_default();
        for server in servers {
            let name = server["name"].as_str().unwrap_or("?").to_string();
            let said = if server["type"] == "acp" {
                if !self.mcp_over_acp {
                    self.say(session_id, &format!("mcp {name}: not launched, type acp"));
                    continue;
                }
                self.over_acp(&server)
            } else if server.get("command").is_some() {
                let mut stdio = StdioServer::launch(&server, self.shim_record.as_deref());
                let said = exercise(&mut stdio, true);
                stdio.close();
                said
            } else {
                vec!["not a stdio server".to_string()]
            };
            for line in said {
                self.say(session_id, &format!("mcp {name}: {line}"));
            }
        }
    }

    /// MCP over ACP with the server `declaration` names.
    fn over_acp(&mut self, declaration: &Value) -> Vec<String> {
        let (field, id) = match declaration.get("serverId") {
            Some(id) => ("serverId", id.clone()),
            None => ("acpId", declaration["id"].clone()),
        };
        let connect = self.ask("mcp/connect", json!({ field: id }));
        let mut said = vec![format!("mcp/connect {}", outcome(&connect))];
        match connect["result"]["connectionId"].as_str() {
            Some(connection) => {
                let connection = connection.to_string();
                let mut transport = OnConnection {
                    agent: self,
                    connection: connection.clone(),
                };
                said.extend(exercise(&mut transport, true));
                let closed = self.ask("mcp/disconnect", json!({ "connectionId": connection }));
                said.push(format!("mcp/disconnect {}", outcome(&closed)));
            }
            None => {
                let mut transport = Connectionless {
                    agent: self,
                    server_id: id,
                    next: 1,
                };
                said.extend(exercise(&mut transport, false));
            }
        }
        said
    }
}

/// MCP on a connection opened with `mcp/connect`.
struct OnConnection<'a> {
    agent: &'a mut Agent,
    connection: String,
}

impl Transport for OnConnection<'_> {
    fn request(&mut self, method: &str, params: Value) -> Answer {
        self.agent.ask(
            "mcp/message",
            json!({ "connectionId": self.connection, "method": method, "params": params }),
        )
    }

    fn notify(&mut self, method: &str, params: Value) {
        let params = json!({ "connectionId": self.connection, "method": method, "params": params });
        acp_conductor_tests::fixture_io::send_line(
            acp_conductor_tests::jsonrpc::notification_line(
                "mcp/message",
                Some(&params.to_string()),
            ),
        );
    }
}

/// Schema 1.20's `mcp/message`: one ACP request per MCP request, stateless MCP.
struct Connectionless<'a> {
    agent: &'a mut Agent,
    server_id: Value,
    next: u64,
}

impl Transport for Connectionless<'_> {
    fn request(&mut self, method: &str, mut params: Value) -> Answer {
        let meta = &mut params["_meta"];
        for (key, value) in STATELESS_META {
            meta[key] = json!(value);
        }
        meta[CAPABILITIES_KEY] = json!({ "sampling": {} });
        let request_id = format!("mcp-req-{}", self.next);
        self.next += 1;
        let answer = self.agent.ask(
            "mcp/message",
            json!({
                "serverId": self.server_id,
                "requestId": request_id,
                "method": method,
                "params": params
            }),
        );
        // The MCP outcome is inside the result: `{"result": ...}` or `{"error": ...}`; an
        // ACP-level error stays what it is.
        match answer.get("result") {
            Some(carrier) => carrier.clone(),
            None => answer,
        }
    }

    fn notify(&mut self, _method: &str, _params: Value) {
        // Stateless MCP has no client notifications the agent needs to send.
    }
}

/// A stdio MCP server the agent launched: one JSON-RPC message per line.
struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// Every line read from the server (the bridge link, as the conductor wrote it).
    record: Option<File>,
}

impl StdioServer {
    fn launch(server: &Value, record: Option<&str>) -> Self {
        let command = server["command"]
            .as_str()
            .expect("a stdio server has a command");
        let mut launch = Command::new(command);
        launch
            .args(
                server["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for variable in server["env"].as_array().into_iter().flatten() {
            if let (Some(name), Some(value)) =
                (variable["name"].as_str(), variable["value"].as_str())
            {
                launch.env(name, value);
            }
        }
        let mut child = launch
            .spawn()
            .unwrap_or_else(|e| panic!("conformance-agent: cannot launch {command}: {e}"));
        let record = record.map(|path| {
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .unwrap_or_else(|e| panic!("cannot open {path}: {e}"))
        });
        Self {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("stdout is piped")),
            child,
            next_id: 1,
            record,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("the server's stdin is open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .expect("write to the MCP server");
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .expect("read from the MCP server");
        assert!(n > 0, "the MCP server closed its output");
        if let Some(record) = &mut self.record {
            record
                .write_all(line.as_bytes())
                .and_then(|()| record.flush())
                .expect("write the shim recording");
        }
        serde_json::from_str(&line).expect("the MCP server writes JSON")
    }

    fn close(mut self) {
        self.stdin = None;
        let _ = self.child.wait();
    }
}

impl Transport for StdioServer {
    fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.read();
            match (message.get("method"), message.get("id")) {
                (None, Some(answered)) if *answered == json!(id) => {
                    return match message.get("error") {
                        Some(error) => json!({ "error": error }),
                        None => json!({ "result": message["result"] }),
                    };
                }
                (Some(asked), Some(request_id)) => {
                    let result = match asked.as_str() {
                        Some("sampling/createMessage") => {
                            payloads::sampling_result(&sampled_question(&message["params"]))
                        }
                        _ => json!({}),
                    };
                    self.send(&json!({ "jsonrpc": "2.0", "id": request_id, "result": result }));
                }
                // Notifications (progress, log messages) are only recorded.
                _ => {}
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }
}
