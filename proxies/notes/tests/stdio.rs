//! The built `acp-notes-proxy` driven over stdio the way a conductor drives it: the test writes
//! the conductor's lines (the editor's and the successor's) and checks every line written back.

use std::process::Command;

use proxy_kit::testing::{StdioRun as Run, run_over_stdio};

use serde_json::{Value, json};

fn run(args: &[&str], input: &[String]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-notes-proxy"));
    command.args(args);
    run_over_stdio(command, input)
}

/// A conversation: the lines the conductor writes and the lines the proxy must write back.
#[derive(Default)]
struct Script {
    input: Vec<String>,
    /// Each expected line, parsed; an exact text is also compared byte for byte.
    expected: Vec<(Value, Option<String>)>,
}

impl Script {
    fn new() -> Self {
        let mut script = Script::default();
        script.send(r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#);
        script.expect_exact(r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}}"#);
        script.send(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#);
        script.expect_exact(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#);
        script
    }

    fn send(&mut self, line: impl Into<String>) {
        self.input.push(line.into());
    }

    fn expect(&mut self, line: Value) {
        self.expected.push((line, None));
    }

    fn expect_exact(&mut self, line: impl Into<String>) {
        let line = line.into();
        self.expected
            .push((serde_json::from_str(&line).unwrap(), Some(line)));
    }

    /// A request from the agent side, wrapped as the conductor delivers it.
    fn agent_request(&mut self, id: u64, method: &str, params: Value) {
        self.send(
            json!({"jsonrpc":"2.0","id":id,"method":"proxy/successor","params":{"method":method,"params":params}})
                .to_string(),
        );
    }

    /// A connectionless MCP request to `server`, from the agent side; its `requestId` is
    /// `r<id>`.
    fn mcp(&mut self, id: u64, server: &str, method: &str, params: Value) {
        self.agent_request(
            id,
            "mcp/message",
            json!({"serverId": server, "requestId": format!("r{id}"), "method": method, "params": params}),
        );
    }

    fn tool(&mut self, id: u64, server: &str, name: &str, arguments: Value) {
        self.mcp(
            id,
            server,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
    }

    /// A connectionless MCP notification to `server`, from the agent side.
    fn mcp_notification(&mut self, params: Value) {
        self.send(
            json!({"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":params}})
                .to_string(),
        );
    }

    /// The outer (ACP) result of request `id`.
    fn expect_result(&mut self, id: u64, result: Value) {
        self.expect(json!({"jsonrpc":"2.0","id":id,"result":result}));
    }

    /// A successful `mcp/message` answer carrying the inner MCP result.
    fn expect_inner(&mut self, id: u64, inner: Value) {
        self.expect_result(id, json!({"result": inner}));
    }

    /// A successful `mcp/message` answer carrying an inner MCP error.
    fn expect_inner_error(&mut self, id: u64, code: i64, message: &str) {
        self.expect_result(id, json!({"error": {"code": code, "message": message}}));
    }

    fn expect_text(&mut self, id: u64, text: &str) {
        self.expect_inner(id, json!({"content":[{"type":"text","text":text}]}));
    }

    fn expect_tool_error(&mut self, id: u64, text: &str) {
        self.expect_inner(
            id,
            json!({"content":[{"type":"text","text":text}],"isError":true}),
        );
    }

    /// An outer (ACP) error.
    fn expect_error(&mut self, id: u64, code: i64, message: &str) {
        self.expect(json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}}));
    }

    fn check(self, args: &[&str]) -> Run {
        let out = run(args, &self.input);
        assert_eq!(out.code, Some(0), "stderr:\n{}", out.stderr);
        compare(&self, &out);
        out
    }
}

/// Checks every line written against the script's expectations, in order.
fn compare(script: &Script, out: &Run) {
    for (i, (expected, exact)) in script.expected.iter().enumerate() {
        let Some(line) = out.stdout.get(i) else {
            panic!(
                "line {i} missing; expected {expected}\nstdout:\n{}\nstderr:\n{}",
                out.stdout.join("\n"),
                out.stderr
            );
        };
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(&value, expected, "line {i}\nstderr:\n{}", out.stderr);
        if let Some(exact) = exact {
            assert_eq!(line, exact, "line {i} bytes");
        }
    }
    assert_eq!(
        out.stdout.len(),
        script.expected.len(),
        "extra lines: {:?}",
        &out.stdout[script.expected.len().min(out.stdout.len())..]
    );
}

/// Takes the answer to request `id` out of `out` for checks of its own, leaving a successful
/// `mcp/message` answer carrying `placeholder` in its place.
fn set_aside(out: &mut Run, id: u64, placeholder: &str) -> Value {
    let at = out
        .stdout
        .iter()
        .position(|line| {
            serde_json::from_str::<Value>(line)
                .is_ok_and(|v| v["id"] == id && v.get("method").is_none())
        })
        .unwrap_or_else(|| panic!("no answer to {id}:\n{}", out.stdout.join("\n")));
    let answer = serde_json::from_str(&out.stdout[at]).unwrap();
    out.stdout[at] = json!({"jsonrpc":"2.0","id":id,"result":{"result":placeholder}}).to_string();
    answer
}

const INITIALIZE: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}"#;

/// The `_meta` the conductor's bridge adds to each request it sends connectionless.
fn bridge_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

const CONNECTIONLESS: &str = "(the notes MCP servers of this proxy speak the connectionless \
    form of schema 1.20: `mcp/message` with `serverId` and `requestId`)";

#[test]
fn notes_tools_per_session_over_connectionless_mcp_over_acp() {
    let mut s = Script::new();
    // session/new with a server of the editor's: ours is appended, theirs kept byte for byte.
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]}],"x":1.50}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]},{"type":"acp","name":"notes","serverId":"notes-1"}],"x":1.50}}}"#);
    // The conductor's bridge tries mcp/connect first; "method not found" sends it connectionless.
    s.agent_request(100, "mcp/connect", json!({"serverId": "notes-1"}));
    s.expect_error(
        100,
        -32601,
        &format!("Method not found: `mcp/connect` {CONNECTIONLESS}"),
    );
    // The server answers before session/new is (an agent may list tools first).
    s.mcp(
        101,
        "notes-1",
        "server/discover",
        json!({"_meta": bridge_meta()}),
    );
    s.expect_inner(101, json!("DISCOVER"));
    s.mcp(
        102,
        "notes-1",
        "tools/list",
        json!({"_meta": bridge_meta()}),
    );
    s.expect_inner(102, json!("TOOLS"));
    s.tool(103, "notes-1", "recall", json!({}));
    s.expect_text(103, "No notes are stored for this session.");
    s.send(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    // session/new without mcpServers: the array is created.
    s.send(r#"{"jsonrpc":"2.0","id":"two","method":"session/new","params":{"cwd":"/q"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/q","mcpServers":[{"type":"acp","name":"notes","serverId":"notes-2"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2","modes":null}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":"two","result":{"sessionId":"s2","modes":null}}"#);

    // An agent that speaks MCP over ACP itself may still shake hands.
    s.mcp(
        104,
        "notes-1",
        "initialize",
        serde_json::from_str(INITIALIZE).unwrap(),
    );
    s.expect_inner(104, json!("INITIALIZE"));
    s.mcp(105, "notes-1", "ping", Value::Null);
    s.expect_inner(105, json!({}));

    // Notes are per session.
    s.tool(106, "notes-1", "remember", json!({"note": "Use tabs"}));
    s.expect_text(106, "Remembered note 1 for this session: Use tabs");
    s.tool(107, "notes-1", "remember", json!({"note": "Run clippy"}));
    s.expect_text(107, "Remembered note 2 for this session: Run clippy");
    s.tool(108, "notes-2", "recall", json!({}));
    s.expect_text(108, "No notes are stored for this session.");
    s.tool(109, "notes-2", "remember", json!({"note": "Be brief"}));
    s.expect_text(109, "Remembered note 1 for this session: Be brief");
    s.tool(110, "notes-1", "recall", json!({}));
    s.expect_text(110, "2 notes for this session:\n1. Use tabs\n2. Run clippy");
    s.tool(111, "notes-1", "forget", json!({"number": 1}));
    s.expect_text(
        111,
        "Forgot note 1: Use tabs\nLater notes moved up by one; 1 note remains.",
    );
    s.tool(112, "notes-1", "recall", json!({}));
    s.expect_text(112, "1 note for this session:\n1. Run clippy");
    // A call as the bridge sends it: the stateless revision's `resultType` comes back.
    s.agent_request(
        113,
        "mcp/message",
        json!({"serverId": "notes-2", "requestId": "bridge-7", "method": "tools/call", "params": {
            "name": "recall", "arguments": {}, "_meta": bridge_meta(),
        }}),
    );
    s.expect_inner(
        113,
        json!({"content":[{"type":"text","text":"1 note for this session:\n1. Be brief"}],"resultType":"complete"}),
    );

    // Tool-level failures are tool results; MCP errors come inside a successful answer.
    s.tool(114, "notes-1", "forget", json!({"number": 5}));
    s.expect_tool_error(
        114,
        "There is no note 5: this session has 1 note (numbered 1 to 1).",
    );
    s.tool(115, "notes-1", "remember", json!({"text": "x"}));
    s.expect_tool_error(115, "Unexpected argument `text`: `remember` takes `note`.");
    s.tool(116, "notes-1", "erase", json!({}));
    s.expect_inner_error(
        116,
        -32602,
        "Unknown tool: `erase` (tools: remember, recall, forget)",
    );
    s.mcp(117, "notes-1", "prompts/list", json!({}));
    s.expect_inner_error(
        117,
        -32601,
        "Method not found: `prompts/list` (this server offers tools only)",
    );
    s.mcp(
        118,
        "notes-1",
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}),
    );
    s.expect_result(
        118,
        json!({"error": {"code": -32022, "message": "Unsupported protocol version", "data": {
            "requested": "2099-01-01",
            "supported": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
        }}}),
    );

    // ACP-level failures are outer errors.
    s.mcp(119, "other-1", "ping", json!({}));
    s.expect_error(
        119,
        -32602,
        "Unknown MCP server `other-1`: this notes proxy declared no server with that id",
    );
    s.agent_request(
        120,
        "mcp/message",
        json!({"connectionId": "notes-1:1", "method": "ping", "params": {}}),
    );
    s.expect_error(
        120,
        -32602,
        "mcp/message with a `connectionId` is the retired connection form; the notes MCP servers \
         of this proxy speak the connectionless form of schema 1.20: send `mcp/message` with \
         `serverId` and `requestId`, without `mcp/connect`",
    );
    s.agent_request(121, "mcp/disconnect", json!({"connectionId": "notes-1:1"}));
    s.expect_error(
        121,
        -32601,
        &format!("Method not found: `mcp/disconnect` {CONNECTIONLESS}"),
    );
    s.agent_request(
        122,
        "mcp/message",
        json!({"serverId": "notes-1", "method": "ping"}),
    );
    s.expect_error(
        122,
        -32602,
        "mcp/message needs `requestId`: a string the caller chose to name this MCP request",
    );
    s.tool(123, "notes-1", "recall", json!({}));
    s.expect_text(123, "1 note for this session:\n1. Run clippy");

    // MCP notifications are consumed, ours or not; other traffic passes.
    s.mcp_notification(json!({"serverId": "notes-2", "requestId": "r109", "method": "notifications/cancelled", "params": {"requestId": "r109", "reason": "user"}}));
    s.mcp_notification(json!({"serverId": "elsewhere-1", "requestId": "x", "method": "notifications/progress", "params": {}}));
    s.mcp_notification(json!({"connectionId": "notes-1:1", "method": "notifications/initialized"}));
    s.send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#);

    let mut out = run(&[], &s.input);
    // The answers whose full text belongs to the server, not this test, are checked apart.
    let version = env!("CARGO_PKG_VERSION");
    let discover = set_aside(&mut out, 101, "DISCOVER");
    let discovered = &discover["result"]["result"];
    let instructions = discovered["instructions"].as_str().unwrap();
    assert!(instructions.contains("`remember`"), "{instructions}");
    assert_eq!(
        discover,
        json!({"jsonrpc":"2.0","id":101,"result":{"result":{
            "resultType": "complete",
            "supportedVersions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
            "capabilities": {"tools": {}},
            "instructions": instructions,
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "notes", "version": version}},
        }}})
    );
    let list = set_aside(&mut out, 102, "TOOLS");
    let list = &list["result"]["result"];
    assert_eq!(list["resultType"], "complete");
    assert_eq!(list["ttlMs"], 0, "revision 2026-07-28's caching hints");
    assert_eq!(list["cacheScope"], "private");
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["remember", "recall", "forget"]);
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type":"object","properties":{"note":{"type":"string","minLength":1,"description":tools[0]["inputSchema"]["properties"]["note"]["description"]}},"required":["note"],"additionalProperties":false})
    );
    assert_eq!(tools[1]["inputSchema"]["properties"], json!({}));
    assert_eq!(
        tools[2]["inputSchema"]["properties"]["number"]["type"],
        "integer"
    );
    assert_eq!(tools[2]["inputSchema"]["required"], json!(["number"]));
    assert!(tools.iter().all(|t| t["description"].is_string()));
    let initialize = set_aside(&mut out, 104, "INITIALIZE");
    assert_eq!(
        initialize["result"]["result"],
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": version},
            "instructions": instructions,
        })
    );
    assert_eq!(out.code, Some(0));
    compare(&s, &out);

    for expected in [
        "declared MCP server notes-1 for a new session (session/new 1)",
        "mcp/connect for notes-1 answered method not found",
        "session not yet known: tool `recall` via notes-1 done; 0 note(s) stored",
        "MCP server notes-1 serves session s1",
        "session s1: tool `remember` via notes-1 done; 1 note(s) stored",
        "session s1: tool `forget` via notes-1 refused; 1 note(s) stored",
        "session s2: tool `recall` via notes-2 done; 1 note(s) stored",
        "mcp/disconnect for notes-1:1 answered method not found",
    ] {
        assert!(out.stderr.contains(expected), "{expected}\n{}", out.stderr);
    }
    // Notifications for no server of ours are dropped with a warning; ours are consumed
    // quietly (logged at debug only).
    let dropped: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("WARN mcp/message notification for no server of ours; dropped: {"))
        .collect();
    assert_eq!(dropped.len(), 2, "{}", out.stderr);
    assert!(
        dropped[0].contains(r#""serverId":"elsewhere-1""#),
        "{dropped:?}"
    );
    assert!(
        dropped[1].contains(r#""connectionId":"notes-1:1""#),
        "{dropped:?}"
    );
}

#[test]
fn load_resume_and_fork_find_their_notes() {
    let mut s = Script::new();
    s.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-1"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    s.mcp(
        101,
        "memo-1",
        "initialize",
        json!({"protocolVersion": "1999-01-01"}),
    );
    s.expect_inner(101, json!("INITIALIZE"));
    s.tool(102, "memo-1", "remember", json!({"note": "Parent note"}));
    s.expect_text(102, "Remembered note 1 for this session: Parent note");
    s.mcp_notification(json!({"serverId": "memo-1", "requestId": "r102", "method": "notifications/cancelled", "params": {"requestId": "r102"}}));

    // Load: declared for the named session at once, same notes.
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/p","mcpServers":null}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/load","params":{"sessionId":"s1","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-2"}]}}}"#);
    s.tool(104, "memo-2", "recall", json!({}));
    s.expect_text(104, "1 note for this session:\n1. Parent note");
    s.send(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);

    // Fork: a copy of the parent's notes, independent from then on.
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/fork","params":{"sessionId":"s1","cwd":"/p","mcpServers":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/fork","params":{"sessionId":"s1","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-3"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1-fork"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1-fork"}}"#);
    s.tool(106, "memo-3", "remember", json!({"note": "Fork note"}));
    s.expect_text(106, "Remembered note 2 for this session: Fork note");
    s.tool(107, "memo-2", "recall", json!({}));
    s.expect_text(107, "1 note for this session:\n1. Parent note");
    s.tool(108, "memo-1", "recall", json!({}));
    s.expect_text(108, "1 note for this session:\n1. Parent note");

    // Resume of the fork sees the fork's notes.
    s.send(r#"{"jsonrpc":"2.0","id":4,"method":"session/resume","params":{"sessionId":"s1-fork","cwd":"/p"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/resume","params":{"sessionId":"s1-fork","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-4"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    s.tool(109, "memo-4", "recall", json!({}));
    s.expect_text(
        109,
        "2 notes for this session:\n1. Parent note\n2. Fork note",
    );

    // A failed session/new withdraws its server.
    s.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/nowhere","mcpServers":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":6,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/nowhere","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-5"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"no such directory"}}"#);
    s.expect_exact(
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"no such directory"}}"#,
    );
    s.tool(110, "memo-5", "recall", json!({}));
    s.expect_error(
        110,
        -32602,
        "Unknown MCP server `memo-5`: this memo proxy declared no server with that id",
    );

    let mut out = run(&["--name", "memo", "--log-level", "debug"], &s.input);
    let initialize = set_aside(&mut out, 101, "INITIALIZE");
    // An unknown revision is answered with the latest one that has a handshake.
    assert_eq!(
        initialize["result"]["result"]["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(initialize["result"]["result"]["serverInfo"]["name"], "memo");
    assert_eq!(out.code, Some(0));
    compare(&s, &out);
    for expected in [
        "declared MCP server memo-2 for session s1 (session/load)",
        "declared MCP server memo-3 for a fork of session s1 (session/fork 3, 1 note(s) copied)",
        "declared MCP server memo-4 for session s1-fork (session/resume)",
        "session/new failed; MCP server memo-5 withdrawn",
        r#"DEBUG memo-1: MCP request `initialize` (requestId "r101")"#,
        r#"DEBUG memo-1: MCP notification `notifications/cancelled` for requestId "r102" consumed"#,
    ] {
        assert!(out.stderr.contains(expected), "{expected}\n{}", out.stderr);
    }
}

#[test]
fn unreadable_setups_pass_unchanged() {
    let mut s = Script::new();
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":{"not":"an array"}}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":{"not":"an array"}}}}"#);
    s.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/load","params":{"cwd":"/p","mcpServers":[]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":[1]}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/new","params":[1]}}"#);
    s.mcp(100, "notes-1", "tools/list", json!({}));
    s.expect_error(
        100,
        -32602,
        "Unknown MCP server `notes-1`: this notes proxy declared no server with that id",
    );
    s.agent_request(101, "mcp/message", json!({"method": "ping"}));
    s.expect_error(
        101,
        -32602,
        "mcp/message needs `serverId`: the id of the declared MCP server",
    );
    s.agent_request(102, "mcp/connect", json!({"acpId": "notes-1"}));
    s.expect_error(
        102,
        -32601,
        &format!("Method not found: `mcp/connect` {CONNECTIONLESS}"),
    );
    let out = s.check(&[]);
    assert!(
        out.stderr.contains("`mcpServers` is not an array"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("without a sessionId"), "{}", out.stderr);
}

#[test]
fn a_plain_run_passes_everything_through() {
    let mut s = Script::new();
    s.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"result":{"content":"data"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":7,"result":{"content":"data"}}"#);
    s.check(&[]);
}

#[test]
fn refuses_a_server_name_agents_cannot_use() {
    let out = run(&["--name", "my notes"], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("ASCII letters"), "{}", out.stderr);
}
