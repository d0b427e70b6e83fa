//! `test-mcp-provider`: a pass-through ACP proxy that also serves an MCP server over ACP, in
//! one of three wire forms; written from the RFDs alone, must not share code with the conductor.
//!
//! As a proxy it behaves like `test-proxy` (own ids counted from 0, `proxy/initialize` becomes
//! a wrapped `initialize`, `$/cancel_request` hop-scoped and plain). On top it appends its
//! server to `mcpServers` of `session/new|load|resume|fork` and answers `mcp/connect`, `mcp/message` and
//! `mcp/disconnect` arriving from its successor, in the form `--variant` names:
//!
//! - `rfd`: declares `{"type":"acp","name","id"}`, `mcp/connect {acpId}` → `{connectionId}`,
//!   `mcp/message {connectionId, method, params}` answered with the inner result (an inner
//!   MCP error is the JSON-RPC error);
//! - `server-id`: declares `serverId`, `mcp/connect {serverId}`, otherwise as `rfd`;
//! - `connectionless`: declares `serverId`, refuses `mcp/connect`/`mcp/disconnect` with
//!   -32601, and serves `mcp/message {serverId, requestId, method, params}` with the result
//!   `{"result": inner}` or `{"error": inner}`, speaking the stateless MCP revision 2026-07-28
//!   (no `initialize`; `server/discover`; a `_meta` with protocol version and client
//!   capabilities on every request).
//!
//! Tools: `echo`, `add`, `whoami`, `fail`, `ask` (a sampling request back over the
//! connection), `progress` (notifications before the answer), `hang` (not listed: answered only
//! when the conductor cancels it, with -32800), `die` (exits with status 3).
//! A recorded connect or request whose `mcp/*` params name an ACP session in
//! `_meta.sessionId` has it as `"session"`.
//! Options: `--variant rfd|server-id|connectionless`, `--name NAME` (default `tools`), `--id ID`
//! (default `NAME-1`), `--record PATH` (one JSON object per MCP event), `--record-received PATH`
//! and `--record-sent PATH` (every line received and written, raw), `--pid-file PATH`,
//! `--slow-start-if PATH` (when PATH exists at start, wait the milliseconds it holds first).
//! Exits on stdin EOF.

use std::collections::{HashMap, HashSet};

use acp_conductor_tests::fixture_io::{self, FixtureArgs, Recording};
use acp_conductor_tests::jsonrpc::{self, RawMessage};
use serde_json::value::RawValue;
use serde_json::{Value, json};

const INITIALIZE: &str = "proxy/initialize";
const SUCCESSOR: &str = "proxy/successor";
const STATELESS_VERSION: &str = "2026-07-28";
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// MCP revisions a connection-form `initialize` accepts; the first is the fallback.
const SESSION_VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];
const SESSION_SETUP: [&str; 4] = [
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Rfd,
    ServerId,
    Connectionless,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Predecessor,
    Successor,
}

/// What one of this proxy's own request ids stands for.
enum Pending {
    /// A request relayed for the conductor, which knows it as `origin_id` (on either side).
    Relay { origin_id: Box<RawValue> },
    /// The sampling request of an `ask` call, answering the `mcp/message` request the
    /// successor knows as `reply_to` when it comes back.
    Sampling { reply_to: Box<RawValue> },
}

/// Who made an inner MCP request.
enum Caller {
    Connection(String),
    Connectionless { request_id: Value },
}

/// An inner MCP error.
struct McpError {
    code: i64,
    message: String,
}

impl McpError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    fn to_value(&self) -> Value {
        json!({ "code": self.code, "message": self.message })
    }
}

/// The answer to an inner MCP request: now, or once the successor answers a request of ours.
enum Answer {
    Now(Result<Value, McpError>),
    Later,
}

struct Provider {
    variant: Variant,
    name: String,
    id: String,
    recording: Recording,
    next_id: u64,
    pending: HashMap<u64, Pending>,
    open_connections: HashSet<String>,
    connects: u64,
    /// The ACP requests carrying `hang` calls, answered when cancelled.
    hanging: Vec<Box<RawValue>>,
}

fn main() {
    let args = FixtureArgs::from_env(&[]);
    fixture_io::write_pid_file(args.value("pid-file"));
    // An instance started while the file exists waits the milliseconds it holds before it
    // reads anything: a provider slow to come back after a restart.
    if let Some(delay) = args
        .value("slow-start-if")
        .and_then(|path| std::fs::read_to_string(path).ok())
    {
        let ms: u64 = delay
            .trim()
            .parse()
            .expect("--slow-start-if names a file of milliseconds");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let variant = match args.value("variant").unwrap_or("rfd") {
        "rfd" => Variant::Rfd,
        "server-id" => Variant::ServerId,
        "connectionless" => Variant::Connectionless,
        other => panic!("unknown --variant {other}"),
    };
    let name = args.value("name").unwrap_or("tools").to_string();
    let id = args
        .value("id")
        .map_or_else(|| format!("{name}-1"), str::to_string);
    fixture_io::record_sent(args.value("record-sent"));
    let mut received = Recording::open(args.value("record-received"));
    let mut provider = Provider {
        variant,
        name,
        id,
        recording: Recording::open(args.value("record")),
        next_id: 0,
        pending: HashMap::new(),
        open_connections: HashSet::new(),
        connects: 0,
        hanging: Vec::new(),
    };
    for line in fixture_io::stdin_lines() {
        received.record(&line);
        match RawMessage::parse(&line) {
            Ok(message) => provider.handle(&message, &line),
            Err(e) => fixture_io::send_line(jsonrpc::error_line(
                "null",
                -32700,
                &format!("parse error: {e}"),
            )),
        }
    }
}

impl Provider {
    fn handle(&mut self, message: &RawMessage, line: &str) {
        let Some(method) = message.method() else {
            self.on_response(message, line);
            return;
        };
        if method == INITIALIZE {
            match message.id() {
                Some(id) => self.forward_initialize(id, message.params()),
                None => eprintln!("test-mcp-provider: {method} sent as a notification"),
            }
        } else if method == SUCCESSOR {
            self.on_wrapped(message);
        } else if method == "$/cancel_request" && message.id().is_none() {
            self.cancel(message.params_value(), Side::Predecessor);
        } else {
            self.forward_to_successor(&method, message);
        }
    }

    fn own_id(&mut self, pending: Pending) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, pending);
        id
    }

    fn record(&mut self, event: &Value) {
        self.recording.record(&event.to_string());
    }

    // ---- the proxy ----

    fn forward_initialize(&mut self, id: &RawValue, params: Option<&RawValue>) {
        let own = self.own_id(Pending::Relay {
            origin_id: id.to_owned(),
        });
        fixture_io::send_line(jsonrpc::request_line(
            &own.to_string(),
            SUCCESSOR,
            Some(&envelope("initialize", params.map(RawValue::get))),
        ));
    }

    /// A plain message from the predecessor: wrapped for the successor, with this
    /// provider's server added to session setups.
    fn forward_to_successor(&mut self, method: &str, message: &RawMessage) {
        let rewritten;
        let mut params = message.params().map(RawValue::get);
        if SESSION_SETUP.contains(&method) {
            rewritten = Some(self.declare(message.params_value()).to_string());
            params = rewritten.as_deref();
        }
        let envelope = envelope(method, params);
        let line = match message.id() {
            Some(id) => {
                let own = self.own_id(Pending::Relay {
                    origin_id: id.to_owned(),
                });
                jsonrpc::request_line(&own.to_string(), SUCCESSOR, Some(&envelope))
            }
            None => jsonrpc::notification_line(SUCCESSOR, Some(&envelope)),
        };
        fixture_io::send_line(line);
    }

    /// Session setup params with this provider's declaration appended to `mcpServers`.
    fn declare(&self, params: Value) -> Value {
        let id_field = match self.variant {
            Variant::Rfd => "id",
            Variant::ServerId | Variant::Connectionless => "serverId",
        };
        let declaration = json!({ "type": "acp", "name": self.name, id_field: self.id });
        let mut params = match params {
            Value::Null => json!({}),
            other => other,
        };
        let Some(object) = params.as_object_mut() else {
            eprintln!("test-mcp-provider: session setup params are not an object");
            return params;
        };
        match object
            .entry("mcpServers")
            .or_insert_with(|| json!([]))
            .as_array_mut()
        {
            Some(servers) => servers.push(declaration),
            None => eprintln!("test-mcp-provider: mcpServers is not an array"),
        }
        params
    }

    /// A `proxy/successor` message: MCP traffic for this provider is served here, the
    /// rest goes to the predecessor unwrapped.
    fn on_wrapped(&mut self, message: &RawMessage) {
        let Some(inner) = message
            .params()
            .and_then(|params| RawMessage::parse(params.get()).ok())
        else {
            eprintln!("test-mcp-provider: {SUCCESSOR} without an object as params");
            return;
        };
        let Some(method) = inner.method() else {
            eprintln!("test-mcp-provider: {SUCCESSOR} without an inner method");
            return;
        };
        let params = inner.params_value();
        match (method.as_str(), message.id()) {
            ("mcp/connect", Some(id)) => self.connect(id, &params),
            ("mcp/disconnect", Some(id)) => self.disconnect(id, &params),
            ("mcp/message", Some(id)) => self.mcp_request(id, &params),
            ("mcp/message", None) => self.mcp_notification(&params),
            ("mcp/connect" | "mcp/disconnect", None) => {
                eprintln!("test-mcp-provider: {method} sent as a notification");
            }
            ("$/cancel_request", None) => self.cancel(params, Side::Successor),
            _ => self.forward_to_predecessor(&method, &inner, message.id()),
        }
    }

    fn forward_to_predecessor(&mut self, method: &str, inner: &RawMessage, id: Option<&RawValue>) {
        let params = inner.params().map(RawValue::get);
        let line = match id {
            Some(id) => {
                let own = self.own_id(Pending::Relay {
                    origin_id: id.to_owned(),
                });
                jsonrpc::request_line(&own.to_string(), method, params)
            }
            None => jsonrpc::notification_line(method, params),
        };
        fixture_io::send_line(line);
    }

    /// A response to one of this proxy's requests.
    fn on_response(&mut self, message: &RawMessage, line: &str) {
        let pending = message
            .id_value()
            .and_then(|id| id.as_u64())
            .and_then(|id| self.pending.remove(&id));
        let (Some(pending), Some((kind, outcome))) = (pending, message.outcome()) else {
            eprintln!("test-mcp-provider: a response that answers nothing we sent: {line}");
            return;
        };
        match pending {
            Pending::Relay { origin_id, .. } => {
                fixture_io::send_line(jsonrpc::response_line(origin_id.get(), kind, outcome.get()))
            }
            Pending::Sampling { reply_to } => {
                let outcome = jsonrpc::to_value(outcome);
                let answer = if kind == "result" {
                    Ok(text_content(&format!(
                        "answer: {}",
                        sampled_text(&outcome).unwrap_or_default()
                    )))
                } else {
                    Err(McpError::new(
                        -32000,
                        format!(
                            "sampling failed: {}",
                            outcome["message"].as_str().unwrap_or_default()
                        ),
                    ))
                };
                fixture_io::send_line(connection_response(&reply_to, answer));
            }
        }
    }

    /// A `$/cancel_request` from the conductor (plain; or wrapped, from older conductors,
    /// arriving from `from`). It is hop-scoped: it names the conductor's id for a request on
    /// this connection, whichever side that came from. An `ask` call waiting for its sampling
    /// answer ends here; a relayed request is cancelled where it went, plain, under this
    /// provider's id. A cancel naming nothing known passes unchanged the way it travelled.
    fn cancel(&mut self, mut params: Value, from: Side) {
        if self.cancel_sampling(&params) || self.cancel_hanging(&params) {
            return;
        }
        let target = params.get("requestId").cloned();
        let own = self
            .pending
            .iter()
            .find_map(|(own, pending)| match pending {
                Pending::Relay { origin_id, .. }
                    if Some(jsonrpc::to_value(origin_id)) == target =>
                {
                    Some(*own)
                }
                _ => None,
            });
        let line = match (own, from) {
            (Some(own), _) => {
                params["requestId"] = Value::from(own);
                jsonrpc::notification_line("$/cancel_request", Some(&params.to_string()))
            }
            (None, Side::Predecessor) => jsonrpc::notification_line(
                SUCCESSOR,
                Some(&envelope("$/cancel_request", Some(&params.to_string()))),
            ),
            (None, Side::Successor) => {
                jsonrpc::notification_line("$/cancel_request", Some(&params.to_string()))
            }
        };
        fixture_io::send_line(line);
    }

    /// The successor gave up on an `ask` call waiting for its sampling answer: the call
    /// ends with -32800 and the sampling request is cancelled in turn.
    fn cancel_sampling(&mut self, params: &Value) -> bool {
        let Some(target) = params.get("requestId") else {
            return false;
        };
        let Some(own) = self
            .pending
            .iter()
            .find_map(|(own, pending)| match pending {
                Pending::Sampling { reply_to } if jsonrpc::to_value(reply_to) == *target => {
                    Some(*own)
                }
                _ => None,
            })
        else {
            return false;
        };
        let Some(Pending::Sampling { reply_to }) = self.pending.remove(&own) else {
            unreachable!("found just above");
        };
        let cancel = json!({ "requestId": own }).to_string();
        fixture_io::send_lines(&[
            jsonrpc::error_line(reply_to.get(), -32800, "Request cancelled"),
            jsonrpc::notification_line("$/cancel_request", Some(&cancel)),
        ]);
        true
    }

    // ---- MCP over ACP ----

    fn connect(&mut self, id: &RawValue, params: &Value) {
        let id_field = match self.variant {
            Variant::Rfd => "acpId",
            Variant::ServerId => "serverId",
            Variant::Connectionless => {
                fixture_io::send_line(jsonrpc::error_line(
                    id.get(),
                    -32601,
                    "method not found: mcp/connect",
                ));
                return;
            }
        };
        if params.get(id_field).and_then(Value::as_str) != Some(self.id.as_str()) {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                &format!("mcp/connect: expected {id_field} {:?}", self.id),
            ));
            return;
        }
        self.connects += 1;
        let connection = format!("{}-conn-{}", self.id, self.connects);
        self.open_connections.insert(connection.clone());
        self.record(&with_session(
            json!({ "event": "connect", "connectionId": connection }),
            params,
        ));
        fixture_io::send_line(jsonrpc::result_line(
            id.get(),
            &json!({ "connectionId": connection }),
        ));
    }

    fn disconnect(&mut self, id: &RawValue, params: &Value) {
        if self.variant == Variant::Connectionless {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32601,
                "method not found: mcp/disconnect",
            ));
            return;
        }
        let connection = params.get("connectionId").and_then(Value::as_str);
        match connection {
            Some(connection) if self.open_connections.remove(connection) => {
                self.record(&json!({ "event": "disconnect", "connectionId": connection }));
                fixture_io::send_line(jsonrpc::result_line(id.get(), &json!({})));
            }
            _ => fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                &format!(
                    "mcp/disconnect: unknown connection {}",
                    params["connectionId"]
                ),
            )),
        }
    }

    fn mcp_notification(&mut self, params: &Value) {
        let mut event = json!({
            "event": "notification",
            "method": params.get("method").cloned().unwrap_or(Value::Null),
        });
        if let Some(connection) = params.get("connectionId") {
            event["connectionId"] = connection.clone();
        }
        self.record(&event);
    }

    fn mcp_request(&mut self, id: &RawValue, params: &Value) {
        let Some(method) = params.get("method").and_then(Value::as_str) else {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                "mcp/message without a method",
            ));
            return;
        };
        let inner_params = params.get("params").cloned().unwrap_or(Value::Null);
        if self.variant == Variant::Connectionless {
            self.connectionless_request(id, params, method, &inner_params);
            return;
        }
        let connection = params.get("connectionId").and_then(Value::as_str);
        let Some(connection) = connection.filter(|c| self.open_connections.contains(*c)) else {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                &format!("mcp/message: unknown connection {}", params["connectionId"]),
            ));
            return;
        };
        let connection = connection.to_string();
        self.record(&with_session(
            json!({ "event": "request", "method": method, "connectionId": connection }),
            params,
        ));
        let caller = Caller::Connection(connection);
        if let Answer::Now(answer) = self.inner_request(&caller, id, method, &inner_params) {
            fixture_io::send_line(connection_response(id, answer));
        }
    }

    fn connectionless_request(
        &mut self,
        id: &RawValue,
        params: &Value,
        method: &str,
        inner_params: &Value,
    ) {
        if params.get("serverId").and_then(Value::as_str) != Some(self.id.as_str()) {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                &format!("mcp/message: expected serverId {:?}", self.id),
            ));
            return;
        }
        let Some(request_id) = params.get("requestId").cloned() else {
            fixture_io::send_line(jsonrpc::error_line(
                id.get(),
                -32602,
                "mcp/message without a requestId",
            ));
            return;
        };
        let meta = check_meta(inner_params);
        self.record(&with_session(
            json!({
                "event": "request", "method": method, "requestId": request_id, "meta": meta.is_ok(),
            }),
            params,
        ));
        let answer = if method == "initialize" {
            Err(McpError::new(
                -32601,
                "stateless server: initialize is not supported",
            ))
        } else if let Err(error) = meta {
            Err(error)
        } else {
            let caller = Caller::Connectionless { request_id };
            match self.inner_request(&caller, id, method, inner_params) {
                Answer::Now(answer) => answer,
                // A `hang` call, answered when it is cancelled.
                Answer::Later => return,
            }
        };
        let result = match answer {
            Ok(result) => json!({ "result": result }),
            Err(error) => json!({ "error": error.to_value() }),
        };
        fixture_io::send_line(jsonrpc::result_line(id.get(), &result));
    }

    /// A cancel naming a `hang` call: the call is answered with -32800 and recorded.
    fn cancel_hanging(&mut self, params: &Value) -> bool {
        let target = params.get("requestId");
        let Some(at) = self
            .hanging
            .iter()
            .position(|id| Some(&jsonrpc::to_value(id)) == target)
        else {
            return false;
        };
        let id = self.hanging.remove(at);
        self.record(&json!({ "event": "cancelled", "tool": "hang" }));
        fixture_io::send_line(jsonrpc::error_line(id.get(), -32800, "hang: cancelled"));
        true
    }

    /// One inner MCP request; `id` is the ACP request that carried it.
    fn inner_request(
        &mut self,
        caller: &Caller,
        id: &RawValue,
        method: &str,
        params: &Value,
    ) -> Answer {
        let connectionless = matches!(caller, Caller::Connectionless { .. });
        let server_info = json!({ "name": self.name, "version": "1.0.0" });
        Answer::Now(match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let version = SESSION_VERSIONS
                    .into_iter()
                    .find(|v| *v == asked)
                    .unwrap_or(SESSION_VERSIONS[0]);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": {} },
                    "serverInfo": server_info,
                }))
            }
            "server/discover" if connectionless => Ok(json!({
                "supportedVersions": [STATELESS_VERSION],
                "capabilities": { "tools": {} },
                "serverInfo": server_info,
                "instructions": "fixture tools",
            })),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools() })),
            "tools/call" => return self.call_tool(caller, id, params),
            other => Err(McpError::new(-32601, format!("method not found: {other}"))),
        })
    }

    fn call_tool(&mut self, caller: &Caller, id: &RawValue, params: &Value) -> Answer {
        let arguments = &params["arguments"];
        let text_argument = |name: &str| {
            arguments[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| McpError::new(-32602, format!("`{name}` must be a string")))
        };
        Answer::Now(match params["name"].as_str().unwrap_or_default() {
            "echo" => text_argument("text").map(|text| text_content(&text)),
            "add" => match (arguments["a"].as_f64(), arguments["b"].as_f64()) {
                (Some(a), Some(b)) => Ok(text_content(&format_number(a + b))),
                _ => Err(McpError::new(-32602, "`a` and `b` must be numbers")),
            },
            "whoami" => Ok(text_content(match caller {
                Caller::Connection(connection) => connection,
                Caller::Connectionless { .. } => "connectionless",
            })),
            "fail" => Err(McpError::new(-32000, "fail: failed as asked")),
            "ask" => match (caller, text_argument("question")) {
                (Caller::Connection(connection), Ok(question)) => {
                    self.ask(connection, id, &question);
                    return Answer::Later;
                }
                (Caller::Connection(_), Err(error)) => Err(error),
                (Caller::Connectionless { .. }, _) => {
                    Err(McpError::new(-32000, "ask needs a connection"))
                }
            },
            "progress" => {
                let log = json!({
                    "level": "info", "logger": self.name,
                    "data": format!("progress from {}", self.name),
                });
                self.notify(caller, "notifications/message", log);
                if let Some(token) = params.get("_meta").and_then(|m| m.get("progressToken")) {
                    let progress = json!({ "progressToken": token, "progress": 1, "total": 1 });
                    self.notify(caller, "notifications/progress", progress);
                }
                Ok(text_content("done"))
            }
            "hang" => {
                self.hanging.push(id.to_owned());
                return Answer::Later;
            }
            "die" => std::process::exit(3),
            other => Err(McpError::new(-32602, format!("unknown tool: {other:?}"))),
        })
    }

    /// Sends a sampling request over `connection`; its answer completes the call `id`.
    fn ask(&mut self, connection: &str, id: &RawValue, question: &str) {
        let own = self.own_id(Pending::Sampling {
            reply_to: id.to_owned(),
        });
        let message = json!({
            "connectionId": connection,
            "method": "sampling/createMessage",
            "params": {
                "messages": [{ "role": "user", "content": { "type": "text", "text": question } }],
                "maxTokens": 64,
            },
        });
        fixture_io::send_line(jsonrpc::request_line(
            &own.to_string(),
            SUCCESSOR,
            Some(&envelope("mcp/message", Some(&message.to_string()))),
        ));
    }

    /// An MCP notification toward whoever made the request `caller` stands for.
    fn notify(&self, caller: &Caller, method: &str, params: Value) {
        let message = match caller {
            Caller::Connection(connection) => {
                json!({ "connectionId": connection, "method": method, "params": params })
            }
            Caller::Connectionless { request_id } => json!({
                "serverId": self.id, "requestId": request_id, "method": method, "params": params,
            }),
        };
        fixture_io::send_line(jsonrpc::notification_line(
            SUCCESSOR,
            Some(&envelope("mcp/message", Some(&message.to_string()))),
        ));
    }
}

/// The params of a `proxy/successor` carrying `method` and `params`.
fn envelope(method: &str, params: Option<&str>) -> String {
    match params {
        Some(params) => format!(r#"{{"method":{},"params":{params}}}"#, Value::from(method)),
        None => format!(r#"{{"method":{}}}"#, Value::from(method)),
    }
}

/// The response to a connection-form `mcp/message`: the inner result, or the inner error
/// as the JSON-RPC error.
fn connection_response(id: &RawValue, answer: Result<Value, McpError>) -> String {
    match answer {
        Ok(result) => jsonrpc::result_line(id.get(), &result),
        Err(error) => jsonrpc::response_line(id.get(), "error", &error.to_value().to_string()),
    }
}

/// What the stateless revision needs in every request's `_meta`.
fn check_meta(params: &Value) -> Result<(), McpError> {
    let meta = params.get("_meta");
    match meta.and_then(|m| m.get(VERSION_KEY)) {
        None => {
            return Err(McpError::new(
                -32602,
                format!("missing _meta {VERSION_KEY}"),
            ));
        }
        Some(version) if version != STATELESS_VERSION => {
            return Err(McpError::new(
                -32602,
                format!("unsupported _meta {VERSION_KEY} {version}"),
            ));
        }
        Some(_) => {}
    }
    match meta.and_then(|m| m.get(CAPABILITIES_KEY)) {
        Some(capabilities) if capabilities.is_object() => Ok(()),
        Some(_) => Err(McpError::new(
            -32602,
            format!("_meta {CAPABILITIES_KEY} is not an object"),
        )),
        None => Err(McpError::new(
            -32602,
            format!("missing _meta {CAPABILITIES_KEY}"),
        )),
    }
}

fn text_content(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// The text of a sampling result; `content` is one block, or a list of them since 2025-11-25.
fn sampled_text(result: &Value) -> Option<&str> {
    let content = &result["content"];
    content["text"]
        .as_str()
        .or_else(|| content[0]["text"].as_str())
}

/// `5`, not `5.0`, for an integral sum.
fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        format!("{}", x as i64)
    } else {
        x.to_string()
    }
}

fn tools() -> Value {
    let tool = |name: &str, description: &str, properties: Value| {
        let required: Vec<&String> = properties.as_object().expect("properties").keys().collect();
        json!({
            "name": name,
            "description": description,
            "inputSchema": { "type": "object", "properties": properties, "required": required },
        })
    };
    let string = json!({ "type": "string" });
    let number = json!({ "type": "number" });
    json!([
        tool(
            "echo",
            "Returns `text` unchanged",
            json!({ "text": string })
        ),
        tool(
            "add",
            "Returns the sum of `a` and `b`",
            json!({ "a": number, "b": number })
        ),
        tool(
            "whoami",
            "Returns the MCP connection id serving the call",
            json!({})
        ),
        tool("fail", "Always fails with an MCP error", json!({})),
        tool(
            "ask",
            "Asks the client to sample an answer to `question`",
            json!({ "question": string })
        ),
        tool(
            "progress",
            "Sends a log message and a progress notification, then answers",
            json!({})
        ),
        tool(
            "die",
            "Ends the provider process without answering",
            json!({})
        ),
    ])
}

/// `event` with the ACP session the `mcp/*` `params` name (`_meta.sessionId`) as `session`,
/// when they name one.
fn with_session(mut event: Value, params: &Value) -> Value {
    if let Some(session) = params.pointer("/_meta/sessionId") {
        event["session"] = session.clone();
    }
    event
}
