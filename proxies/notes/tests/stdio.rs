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

    /// An MCP request on `connection`, from the agent side.
    fn mcp(&mut self, id: u64, connection: &str, method: &str, params: Value) {
        self.agent_request(
            id,
            "mcp/message",
            json!({"connectionId": connection, "method": method, "params": params}),
        );
    }

    fn tool(&mut self, id: u64, connection: &str, name: &str, arguments: Value) {
        self.mcp(
            id,
            connection,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
    }

    fn expect_result(&mut self, id: u64, result: Value) {
        self.expect(json!({"jsonrpc":"2.0","id":id,"result":result}));
    }

    fn expect_text(&mut self, id: u64, text: &str) {
        self.expect_result(id, json!({"content":[{"type":"text","text":text}]}));
    }

    fn expect_tool_error(&mut self, id: u64, text: &str) {
        self.expect_result(
            id,
            json!({"content":[{"type":"text","text":text}],"isError":true}),
        );
    }

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

const INITIALIZE: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}"#;

#[test]
fn notes_tools_per_session_over_mcp_over_acp() {
    let mut s = Script::new();
    // session/new with a server of the editor's: ours is appended, theirs kept byte for byte.
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]}],"x":1.50}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]},{"type":"acp","name":"notes","id":"notes-1"}],"x":1.50}}}"#);
    // The agent connects before it answers session/new (some agents do).
    s.agent_request(100, "mcp/connect", json!({"acpId": "notes-1"}));
    s.expect_result(100, json!({"connectionId": "notes-1:1"}));
    s.send(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    // session/new without mcpServers: the array is created.
    s.send(r#"{"jsonrpc":"2.0","id":"two","method":"session/new","params":{"cwd":"/q"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/q","mcpServers":[{"type":"acp","name":"notes","id":"notes-2"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2","modes":null}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":"two","result":{"sessionId":"s2","modes":null}}"#);

    // The MCP handshake on session 1's connection.
    s.mcp(
        101,
        "notes-1:1",
        "initialize",
        serde_json::from_str(INITIALIZE).unwrap(),
    );
    s.expect_result(
        101,
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "INSTRUCTIONS",
        }),
    );
    s.send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"notes-1:1","method":"notifications/initialized"}}}"#);
    s.mcp(102, "notes-1:1", "tools/list", json!({}));
    s.expect_result(102, json!("TOOLS"));
    s.mcp(103, "notes-1:1", "ping", Value::Null);
    s.expect_result(103, json!({}));

    // Notes are per session.
    s.tool(104, "notes-1:1", "remember", json!({"note": "Use tabs"}));
    s.expect_text(104, "Remembered note 1 for this session: Use tabs");
    s.tool(105, "notes-1:1", "remember", json!({"note": "Run clippy"}));
    s.expect_text(105, "Remembered note 2 for this session: Run clippy");
    s.agent_request(106, "mcp/connect", json!({"serverId": "notes-2"}));
    s.expect_result(106, json!({"connectionId": "notes-2:2"}));
    s.tool(107, "notes-2:2", "recall", json!({}));
    s.expect_text(107, "No notes are stored for this session.");
    s.tool(108, "notes-2:2", "remember", json!({"note": "Be brief"}));
    s.expect_text(108, "Remembered note 1 for this session: Be brief");
    s.tool(109, "notes-1:1", "recall", json!({}));
    s.expect_text(109, "2 notes for this session:\n1. Use tabs\n2. Run clippy");
    s.tool(110, "notes-1:1", "forget", json!({"number": 1}));
    s.expect_text(
        110,
        "Forgot note 1: Use tabs\nLater notes moved up by one; 1 note remains.",
    );
    s.tool(111, "notes-1:1", "recall", json!({}));
    s.expect_text(111, "1 note for this session:\n1. Run clippy");
    s.tool(112, "notes-2:2", "recall", json!({}));
    s.expect_text(112, "1 note for this session:\n1. Be brief");

    // Tool-level failures, then protocol errors.
    s.tool(113, "notes-1:1", "forget", json!({"number": 5}));
    s.expect_tool_error(
        113,
        "There is no note 5: this session has 1 note (numbered 1 to 1).",
    );
    s.tool(114, "notes-1:1", "remember", json!({"text": "x"}));
    s.expect_tool_error(114, "Unexpected argument `text`: `remember` takes `note`.");
    s.tool(115, "notes-1:1", "erase", json!({}));
    s.expect_error(
        115,
        -32602,
        "Unknown tool: `erase` (tools: remember, recall, forget)",
    );
    s.mcp(116, "notes-1:1", "prompts/list", json!({}));
    s.expect_error(
        116,
        -32601,
        "Method not found: `prompts/list` (this server offers tools only)",
    );
    s.agent_request(117, "mcp/connect", json!({"acpId": "other-1"}));
    s.expect_error(
        117,
        -32602,
        "Unknown MCP server `other-1`: this notes proxy declared no server with that id",
    );
    s.agent_request(118, "mcp/connect", json!({}));
    s.expect_error(
        118,
        -32602,
        "mcp/connect needs `acpId`: the id of the declared MCP server",
    );
    s.mcp(119, "notes-1:99", "ping", json!({}));
    s.expect_error(119, -32602, "Unknown MCP connection `notes-1:99`");

    // Disconnect: the connection is gone, the session's notes are not.
    s.agent_request(120, "mcp/disconnect", json!({"connectionId": "notes-1:1"}));
    s.expect_result(120, json!({}));
    s.mcp(121, "notes-1:1", "ping", json!({}));
    s.expect_error(121, -32602, "Unknown MCP connection `notes-1:1`");
    s.agent_request(122, "mcp/disconnect", json!({"connectionId": "notes-1:1"}));
    s.expect_error(122, -32602, "Unknown MCP connection `notes-1:1`");
    s.agent_request(123, "mcp/connect", json!({"acpId": "notes-1"}));
    s.expect_result(123, json!({"connectionId": "notes-1:3"}));
    s.tool(124, "notes-1:3", "recall", json!({}));
    s.expect_text(124, "1 note for this session:\n1. Run clippy");

    // MCP notifications are consumed, even on unknown connections; other traffic passes.
    s.send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"notes-2:2","method":"notifications/cancelled","params":{"requestId":3}}}}"#);
    s.send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"elsewhere:1","method":"notifications/progress","params":{}}}}"#);
    s.send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#);

    let mut out = run(&[], &s.input);
    // The two answers whose full text belongs to the server, not this test, are checked apart.
    let initialize: Value = serde_json::from_str(&out.stdout[7]).unwrap();
    let instructions = initialize["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("`remember`"), "{instructions}");
    let list: Value = serde_json::from_str(&out.stdout[8]).unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
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
    out.stdout[7] = json!({"jsonrpc":"2.0","id":101,"result":{
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "notes", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "INSTRUCTIONS",
    }})
    .to_string();
    out.stdout[8] = json!({"jsonrpc":"2.0","id":102,"result":"TOOLS"}).to_string();
    assert_eq!(out.code, Some(0));
    compare(&s, &out);

    for expected in [
        "declared MCP server notes-1 for a new session (session/new 1)",
        "MCP server notes-1 serves session s1",
        "connection notes-1:1 opened to MCP server notes-1 (session not yet known)",
        "connection notes-2:2 opened to MCP server notes-2 (session s2)",
        "session s1: tool `remember` via notes-1 done; 1 note(s) stored",
        "session s1: tool `forget` via notes-1 refused; 1 note(s) stored",
        "connection notes-1:1 to MCP server notes-1 closed",
        "mcp/message notification not on a connection of ours; dropped",
    ] {
        assert!(out.stderr.contains(expected), "{expected}\n{}", out.stderr);
    }
}

#[test]
fn load_resume_and_fork_find_their_notes() {
    let mut s = Script::new();
    s.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[{"type":"acp","name":"memo","id":"memo-1"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    s.agent_request(100, "mcp/connect", json!({"acpId": "memo-1"}));
    s.expect_result(100, json!({"connectionId": "memo-1:1"}));
    s.mcp(
        101,
        "memo-1:1",
        "initialize",
        json!({"protocolVersion": "1999-01-01"}),
    );
    s.expect(json!("INITIALIZE"));
    s.tool(102, "memo-1:1", "remember", json!({"note": "Parent note"}));
    s.expect_text(102, "Remembered note 1 for this session: Parent note");

    // Load: declared for the named session at once, same notes.
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/p","mcpServers":null}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/load","params":{"sessionId":"s1","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","id":"memo-2"}]}}}"#);
    s.agent_request(103, "mcp/connect", json!({"acpId": "memo-2"}));
    s.expect_result(103, json!({"connectionId": "memo-2:2"}));
    s.tool(104, "memo-2:2", "recall", json!({}));
    s.expect_text(104, "1 note for this session:\n1. Parent note");
    s.send(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);

    // Fork: a copy of the parent's notes, independent from then on.
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/fork","params":{"sessionId":"s1","cwd":"/p","mcpServers":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/fork","params":{"sessionId":"s1","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","id":"memo-3"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1-fork"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1-fork"}}"#);
    s.agent_request(105, "mcp/connect", json!({"acpId": "memo-3"}));
    s.expect_result(105, json!({"connectionId": "memo-3:3"}));
    s.tool(106, "memo-3:3", "remember", json!({"note": "Fork note"}));
    s.expect_text(106, "Remembered note 2 for this session: Fork note");
    s.tool(107, "memo-2:2", "recall", json!({}));
    s.expect_text(107, "1 note for this session:\n1. Parent note");

    // Resume of the fork sees the fork's notes.
    s.send(r#"{"jsonrpc":"2.0","id":4,"method":"session/resume","params":{"sessionId":"s1-fork","cwd":"/p"}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/resume","params":{"sessionId":"s1-fork","cwd":"/p","mcpServers":[{"type":"acp","name":"memo","id":"memo-4"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    s.agent_request(108, "mcp/connect", json!({"acpId": "memo-4"}));
    s.expect_result(108, json!({"connectionId": "memo-4:4"}));
    s.tool(109, "memo-4:4", "recall", json!({}));
    s.expect_text(
        109,
        "2 notes for this session:\n1. Parent note\n2. Fork note",
    );

    // A failed session/new withdraws its server.
    s.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/nowhere","mcpServers":[]}}"#);
    s.expect_exact(r#"{"jsonrpc":"2.0","id":6,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/nowhere","mcpServers":[{"type":"acp","name":"memo","id":"memo-5"}]}}}"#);
    s.send(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"no such directory"}}"#);
    s.expect_exact(
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"no such directory"}}"#,
    );
    s.agent_request(110, "mcp/connect", json!({"acpId": "memo-5"}));
    s.expect_error(
        110,
        -32602,
        "Unknown MCP server `memo-5`: this memo proxy declared no server with that id",
    );

    let mut out = run(&["--name", "memo", "--log-level", "debug"], &s.input);
    let initialize: Value = serde_json::from_str(&out.stdout[5]).unwrap();
    // An unknown revision is answered with the latest one.
    assert_eq!(initialize["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(initialize["result"]["serverInfo"]["name"], "memo");
    out.stdout[5] = "\"INITIALIZE\"".into();
    assert_eq!(out.code, Some(0));
    compare(&s, &out);
    for expected in [
        "declared MCP server memo-2 for session s1 (session/load)",
        "declared MCP server memo-3 for a fork of session s1 (session/fork 3, 1 note(s) copied)",
        "declared MCP server memo-4 for session s1-fork (session/resume)",
        "session/new failed; MCP server memo-5 withdrawn",
        "DEBUG connection memo-1:1: MCP request `initialize`",
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
    s.agent_request(100, "mcp/connect", json!({"acpId": "notes-1"}));
    s.expect_error(
        100,
        -32602,
        "Unknown MCP server `notes-1`: this notes proxy declared no server with that id",
    );
    s.agent_request(101, "mcp/message", json!({"method": "ping"}));
    s.expect(json!({"jsonrpc":"2.0","id":101,"error":{"code":-32602,"message":"MCP_MESSAGE"}}));
    let mut out = run(&[], &s.input);
    let error: Value = serde_json::from_str(&out.stdout[6]).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("mcp/message params not understood: missing field `connectionId`"),
        "{message}"
    );
    out.stdout[6] =
        json!({"jsonrpc":"2.0","id":101,"error":{"code":-32602,"message":"MCP_MESSAGE"}})
            .to_string();
    compare(&s, &out);
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
