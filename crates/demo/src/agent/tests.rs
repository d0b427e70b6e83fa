//! The demo agent driven over an in-memory pipe with raw lines: every test asserts the exact
//! lines a client sees. MCP servers are in-memory ones from `mcp_servers::test_support`.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

use super::{serve_with, session_ids};
use crate::mcp_servers::test_support::{Seen, launches, notes_launcher, wait_for_seen};
use crate::mcp_servers::{self as mcp, Launcher, McpError};

const WAIT: Duration = Duration::from_secs(10);

/// The checklist's second entry for a prompt that asks for actions (or nothing), and for one
/// that asks for an MCP tool.
const ACTIONS: &str = "Carry out a requested write or read";
const TOOL: &str = "Use the requested MCP tool";

/// A client that speaks raw lines to a demo agent running in its own task.
///
/// Session ids differ on every connection (`demo-session-<token>-<n>`, [`session_ids`]), so the
/// tests spell them `demo-session-<n>`: each id a received line carries is checked for its shape
/// and written that way, and `send` turns the short spelling back into the connection's id.
/// Every other byte is compared as it is.
struct RawClient {
    from_agent: Lines<BufReader<ReadHalf<DuplexStream>>>,
    to_agent: WriteHalf<DuplexStream>,
    agent: tokio::task::JoinHandle<io::Result<()>>,
    /// The connection's session id token, once a line showed it.
    session_token: Option<String>,
}

impl RawClient {
    fn start() -> Self {
        Self::start_with(mcp::process_launcher())
    }

    fn start_with(launcher: Launcher) -> Self {
        let (client, agent) = tokio::io::duplex(64 * 1024);
        let (agent_in, agent_out) = tokio::io::split(agent);
        let agent = tokio::spawn(serve_with(agent_in, agent_out, launcher));
        let (from_agent, to_agent) = tokio::io::split(client);
        RawClient {
            from_agent: BufReader::new(from_agent).lines(),
            to_agent,
            agent,
            session_token: None,
        }
    }

    async fn send(&mut self, line: &str) {
        let line = match &self.session_token {
            Some(token) => line.replace(
                session_ids::PREFIX,
                &format!("{}{token}-", session_ids::PREFIX),
            ),
            None => line.to_owned(),
        };
        self.to_agent.write_all(line.as_bytes()).await.unwrap();
        self.to_agent.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> String {
        let line = tokio::time::timeout(WAIT, self.from_agent.next_line())
            .await
            .expect("the agent answers in time")
            .unwrap()
            .expect("the agent keeps the connection open");
        shorten_session_ids(&line, &mut self.session_token)
    }

    async fn expect(&mut self, expected: &str) {
        assert_eq!(self.recv().await, expected);
    }

    /// initialize (with `fs.readTextFile` as given) and session/new in /tmp.
    async fn open_session(&mut self, reads_files: bool) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{"fs":{{"readTextFile":{reads_files}}}}}}}}}"#
        ))
        .await;
        let _ = self.recv().await;
        self.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
            .await;
        self.expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
            .await;
    }

    /// initialize and session/new in /tmp with the given `mcpServers`.
    async fn open_session_with_servers(&mut self, servers: Value) {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#)
            .await;
        let initialized = self.recv().await;
        assert!(
            initialized.contains(r#""mcpCapabilities":{"http":false,"sse":false}"#),
            "{initialized}"
        );
        let request = json!({
            "jsonrpc": "2.0", "id": 1, "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": servers},
        });
        self.send(&request.to_string()).await;
        self.expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
            .await;
    }

    /// The next line is this `session/update` (compared as JSON).
    async fn expect_update(&mut self, update: Value) {
        let line = self.recv().await;
        let got: Value = serde_json::from_str(&line).unwrap();
        let expected = json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "demo-session-1", "update": update},
        });
        assert_eq!(got, expected, "{line}");
    }

    /// A notes tool call of turn `turn`, from announcement to its final status.
    async fn expect_notes_tool_call(
        &mut self,
        turn: u64,
        tool: &str,
        input: Value,
        outcome: Result<&str, &str>,
    ) {
        let id = format!("demo-tool-{turn}");
        self.expect_update(json!({
            "sessionUpdate": "tool_call", "toolCallId": id, "title": format!("notes: {tool}"),
            "kind": "other", "status": "pending", "rawInput": input,
        }))
        .await;
        self.expect_update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress"}),
        )
        .await;
        let (status, text, is_error) = match outcome {
            Ok(text) => ("completed", text, false),
            Err(text) => ("failed", text, true),
        };
        self.expect_update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
            "content": [{"type": "content", "content": {"type": "text", "text": text}}],
            "rawOutput": {"content": [{"type": "text", "text": text}], "isError": is_error},
        }))
        .await;
    }

    /// A whole turn of a one-block prompt that calls one notes tool: the prompt's echo,
    /// tool call number `call`, what the agent then says, and the end of the turn.
    async fn tool_turn(
        &mut self,
        prompt_id: u64,
        text: &str,
        call: (u64, &str, Value),
        outcome: Result<&str, &str>,
        said: &str,
    ) {
        self.send(&prompt(prompt_id, text)).await;
        self.skip_echo(text).await;
        let (number, tool, input) = call;
        self.expect_notes_tool_call(number, tool, input, outcome)
            .await;
        self.expect(&chunk(said)).await;
        self.expect_plan_done(TOOL).await;
        self.expect_end_turn(prompt_id).await;
    }

    /// The checklist again, all done, as a client without plan operations gets it before the
    /// turn ends; `action` is its second entry ([`ACTIONS`] or [`TOOL`]).
    async fn expect_plan_done(&mut self, action: &str) {
        self.expect(&format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"demo-session-1","update":{{"sessionUpdate":"plan","entries":[{{"content":"Show what the prompt contained","priority":"high","status":"completed"}},{{"content":"{action}","priority":"medium","status":"completed"}}]}}}}}}"#
        ))
        .await;
    }

    async fn expect_end_turn(&mut self, id: u64) {
        self.expect(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#
        ))
        .await;
    }

    /// Reads the plan and the echo chunks of a one-text-block prompt.
    async fn skip_echo(&mut self, text: &str) {
        let plan = self.recv().await;
        assert!(plan.contains(r#""sessionUpdate":"plan""#), "{plan}");
        self.expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
            .await;
        self.expect(&chunk(&format!("> {text}\n"))).await;
    }

    /// Skips the rest of turn `id` up to its end, then [`Self::expect_quiet`].
    async fn expect_quiet_after_turn(&mut self, id: u64) {
        let end = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#);
        while self.recv().await != end {}
        self.expect_quiet().await;
    }

    /// Proves the agent has nothing else queued: the next line answers a fresh request.
    async fn expect_quiet(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":"probe","method":"probe"}"#)
            .await;
        self.expect(r#"{"jsonrpc":"2.0","id":"probe","error":{"code":-32601,"message":"method not found: probe"}}"#)
            .await;
    }

    /// Ends the connection as an editor does (EOF on the agent's input) and checks the
    /// agent then finishes cleanly.
    async fn close(mut self) {
        self.to_agent.shutdown().await.unwrap();
        self.agent.await.unwrap().unwrap();
    }
}

fn prompt(id: u64, text: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "session/prompt",
        "params": {"sessionId": "demo-session-1", "prompt": [{"type": "text", "text": text}]},
    })
    .to_string()
}

fn chunk(text: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "demo-session-1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        },
    })
    .to_string()
}

#[tokio::test]
async fn initialize_answers_version_1_and_capabilities() {
    let mut client = RawClient::start();
    client
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{}}}"#)
        .await;
    client
        .expect(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":false,"promptCapabilities":{{"image":false,"audio":false,"embeddedContext":true}},"mcpCapabilities":{{"http":false,"sse":false}}}},"agentInfo":{{"name":"acp-conductor-demo","title":"Demo agent","version":"{}"}},"authMethods":[]}}}}"#,
            env!("CARGO_PKG_VERSION")
        ))
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"x"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn plain_prompt_echoes_every_block_then_ends_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    let request = json!({
        "jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": "demo-session-1", "prompt": [
            {"type": "text", "text": "first line\n\nthird line"},
            {"type": "resource", "resource": {"uri": "file:///r.md", "text": "injected"}},
            {"type": "resource_link", "uri": "file:///l.md", "name": "l.md"},
            {"type": "image", "mimeType": "image/png", "data": ""},
        ]},
    });
    client.send(&request.to_string()).await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Show what the prompt contained","priority":"high","status":"in_progress"},{"content":"Carry out a requested write or read","priority":"medium","status":"pending"}]}}}"#)
        .await;
    for text in [
        "Demo agent here. I received 4 content block(s):\n",
        "> first line\n>\n> third line\n",
        "[resource file:///r.md]\n> injected\n",
        "[link file:///l.md]\n",
        "[image block]\n",
    ] {
        client.expect(&chunk(text)).await;
    }
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn permission_request_and_its_answers() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "please write it")).await;
    client.skip_echo("please write it").await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call","toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"demo-session-1","toolCall":{"toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"completed"}}}"#)
        .await;
    client.expect(&chunk("Permission granted: I would write demo.txt (the demo agent never touches your files).\n")).await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;

    // The next turn gets its own tool call id; an error answer counts as a refusal.
    client.send(&prompt(3, "Permission?")).await;
    client.skip_echo("Permission?").await;
    let tool_call = client.recv().await;
    assert!(
        tool_call.contains(r#""toolCallId":"demo-write-2""#),
        "{tool_call}"
    );
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":2,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no UI"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-2","status":"failed"}}}"#)
        .await;
    client
        .expect(&chunk("Permission denied: demo.txt was not written.\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn session_cancel_while_permission_pending_withdraws_the_request() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "ask permission")).await;
    client.skip_echo("ask permission").await;
    let _tool_call = client.recv().await;
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"failed"}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    // The client's late answer to the withdrawn request is ignored.
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}"#)
        .await;
    client.expect_quiet().await;
    // The session takes a new turn at once.
    client.send(&prompt(3, "again")).await;
    client.skip_echo("again").await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn session_cancel_stops_a_slow_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "go slow")).await;
    client.skip_echo("go slow").await;
    client.expect(&chunk("tick 1\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut ticks = 1;
    loop {
        let line = client.recv().await;
        if line == r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"# {
            break;
        }
        ticks += 1;
        assert_eq!(line, chunk(&format!("tick {ticks}\n")));
    }
    assert!(
        ticks < 5,
        "the turn went on for {ticks} ticks after session/cancel"
    );
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn cancel_request_naming_the_prompt_cancels_the_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(7, "slow please")).await;
    client.skip_echo("slow please").await;
    client.expect(&chunk("tick 1\n")).await;
    // Another id first: it names no running request and changes nothing.
    client
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"7"}}"#)
        .await;
    client.expect(&chunk("tick 2\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"cancelled"}}"#
    );
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn eof_cancels_and_answers_a_running_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "slow")).await;
    client.skip_echo("slow").await;
    let RawClient {
        mut from_agent,
        mut to_agent,
        agent,
        ..
    } = client;
    to_agent.shutdown().await.unwrap();
    let mut last = String::new();
    while let Some(line) = from_agent.next_line().await.unwrap() {
        last = line;
    }
    assert_eq!(
        last,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
    );
    agent.await.unwrap().unwrap();
}

#[tokio::test]
async fn read_request_reports_first_line_or_error() {
    let mut client = RawClient::start();
    client.open_session(true).await;
    client.send(&prompt(2, "read notes.md")).await;
    client.skip_echo("read notes.md").await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"demo-session-1","path":"/tmp/notes.md","line":1,"limit":1}}"#)
        .await;
    client
        .send(r##"{"jsonrpc":"2.0","id":1,"result":{"content":"# Notes\n"}}"##)
        .await;
    client
        .expect(&chunk("First line of /tmp/notes.md: # Notes\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;

    client.send(&prompt(3, "Read /etc/none.")).await;
    client.skip_echo("Read /etc/none.").await;
    let request = client.recv().await;
    assert!(request.contains(r#""path":"/etc/none""#), "{request}");
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no such file"}}"#)
        .await;
    client
        .expect(&chunk("Could not read /etc/none: no such file\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn read_without_client_capability_sends_no_request() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "read /x")).await;
    client.skip_echo("read /x").await;
    client
        .expect(&chunk(
            "I cannot read /x: the client did not offer fs.readTextFile.\n",
        ))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn errors_for_unknown_methods_sessions_and_bad_input() {
    let mut client = RawClient::start();
    client
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"session/load","params":{}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found: session/load"}}"#)
        .await;
    client.send("{not json\r").await;
    let line = client.recv().await;
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not valid JSON: "#),
        "{line}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"no/such/notification","params":{}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown session: nope (this demo agent knows only sessions it created with session/new on this connection)"}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"session/new needs cwd, an absolute path"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn second_prompt_while_a_turn_runs_is_refused() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "slow")).await;
    client.skip_echo("slow").await;
    client.send(&prompt(3, "again")).await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"session demo-session-1 already has a prompt turn running"}}"#
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
    );
    client.close().await;
}

fn notes_server_entry(name: &str) -> Value {
    json!({"name": name, "command": "acp-conductor", "args": ["mcp-bridge"], "env": []})
}

#[tokio::test]
async fn remember_recall_and_forget_through_a_stdio_mcp_server() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([
            {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
            {"type": "acp", "name": "proxied", "id": "p-1"},
            notes_server_entry("notes"),
        ]))
        .await;
    assert!(launches(&seen).is_empty(), "servers start on first use");

    client
        .send(&prompt(2, "Remember that the build uses nextest"))
        .await;
    let plan = client.recv().await;
    assert!(
        plan.contains(
            r#"{"content":"Use the requested MCP tool","priority":"medium","status":"pending"}"#
        ),
        "{plan}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client
        .expect(&chunk("> Remember that the build uses nextest\n"))
        .await;
    client
        .expect_notes_tool_call(
            1,
            "remember",
            json!({"note": "the build uses nextest"}),
            Ok("Noted (note 1)."),
        )
        .await;
    client
        .expect(&chunk(
            "The `remember` tool of notes answered: Noted (note 1).\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    // The note is the tool's input: "read", "write" and "slow" in it start nothing.
    let text = "please remember: read notes.md slowly, then write";
    client
        .tool_turn(
            3,
            text,
            (
                2,
                "remember",
                json!({"note": "read notes.md slowly, then write"}),
            ),
            Ok("Noted (note 2)."),
            "The `remember` tool of notes answered: Noted (note 2).\n",
        )
        .await;

    let notes = "1. the build uses nextest\n2. read notes.md slowly, then write";
    client
        .tool_turn(
            4,
            "What do you recall?",
            (3, "recall", json!({})),
            Ok(notes),
            &format!("The `recall` tool of notes answered:\n{notes}\n"),
        )
        .await;

    let forgot = "Forgot note 1: the build uses nextest";
    client
        .tool_turn(
            5,
            "forget note #1",
            (4, "forget", json!({"number": 1})),
            Ok(forgot),
            &format!("The `forget` tool of notes answered: {forgot}\n"),
        )
        .await;

    // A tool's own error fails the tool call, not the turn.
    client
        .tool_turn(
            6,
            "forget 5",
            (5, "forget", json!({"number": 5})),
            Err("There is no note 5."),
            "The `forget` tool of notes reported an error: There is no note 5.\n",
        )
        .await;

    let left = "1. read notes.md slowly, then write";
    client
        .tool_turn(
            7,
            "recall",
            (6, "recall", json!({})),
            Ok(left),
            &format!("The `recall` tool of notes answered: {left}\n"),
        )
        .await;

    // Only the stdio server was started, once; it answered the pings of `remember` and
    // its input closes when the connection ends.
    assert_eq!(launches(&seen), ["notes"]);
    client.close().await;
    wait_for_seen(&seen, "notes", "(closed)").await;
}

#[tokio::test]
async fn list_tools_unknown_tools_and_bad_arguments() {
    let seen = Seen::default();
    let notes = notes_launcher(seen.clone());
    let launcher: Launcher = Arc::new(move |server, cwd| {
        if server.name == "broken" {
            return Err(McpError::Spawn {
                server: server.name.clone(),
                command: server.command.clone(),
                source: io::Error::from(io::ErrorKind::NotFound),
            });
        }
        notes(server, cwd)
    });
    let mut client = RawClient::start_with(launcher);
    client
        .open_session_with_servers(json!([
            notes_server_entry("notes"),
            notes_server_entry("broken"),
            notes_server_entry("more"),
        ]))
        .await;

    client.send(&prompt(2, "What tools do you have?")).await;
    client.skip_echo("What tools do you have?").await;
    client
        .expect(&chunk(
            "notes: remember, recall, forget, crash, hang\n\
             broken: could not list its tools: could not start MCP server `broken` (acp-conductor): entity not found\n\
             more: remember, recall, forget, crash, hang\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    client.send(&prompt(3, "use tool nope")).await;
    client.skip_echo("use tool nope").await;
    client
        .expect(&chunk(
            "I cannot do that: no MCP server offers a `nope` tool; could not start MCP server `broken` (acp-conductor): entity not found.\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;

    client.send(&prompt(4, "call remember [1]")).await;
    client.skip_echo("call remember [1]").await;
    client
        .expect(&chunk(
            "I did not call `remember`: its arguments must be a JSON object (got [1]).\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(4).await;

    let text = r#"Use tool `remember` {"note": "first server wins"}"#;
    client
        .tool_turn(
            5,
            text,
            (4, "remember", json!({"note": "first server wins"})),
            Ok("Noted (note 1)."),
            "The `remember` tool of notes answered: Noted (note 1).\n",
        )
        .await;
    client.close().await;
}

#[tokio::test]
async fn a_server_going_away_mid_call_fails_the_tool_call_not_the_turn() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([notes_server_entry("notes")]))
        .await;
    client.send(&prompt(2, "call crash {}")).await;
    client.skip_echo("call crash {}").await;
    client
        .expect_update(json!({
            "sessionUpdate": "tool_call", "toolCallId": "demo-tool-1", "title": "notes: crash",
            "kind": "other", "status": "pending", "rawInput": {},
        }))
        .await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
        .await;
    let error = "MCP server `notes` went away before answering tools/call";
    client
        .expect_update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": error}}],
        }))
        .await;
    client
        .expect(&chunk(&format!(
            "Calling the `crash` tool of notes failed: {error}\n"
        )))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    // The next use starts the server again.
    client.send(&prompt(3, "recall")).await;
    client.skip_echo("recall").await;
    client
        .expect_notes_tool_call(2, "recall", json!({}), Ok("No notes yet."))
        .await;
    let _message = client.recv().await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;
    assert_eq!(launches(&seen), ["notes", "notes"]);
    client.close().await;
}

#[tokio::test]
async fn session_cancel_during_a_tool_call_fails_it_and_withdraws_the_call() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([notes_server_entry("notes")]))
        .await;
    client.send(&prompt(2, "call hang")).await;
    client.skip_echo("call hang").await;
    let _announced = client.recv().await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
        .await;
    wait_for_seen(&seen, "notes", "tools/call").await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed"}))
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    wait_for_seen(&seen, "notes", "notifications/cancelled").await;
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn without_stdio_servers_the_agent_says_no_server_offers_the_tool() {
    let mut client = RawClient::start();
    client
        .open_session_with_servers(json!([{"type": "acp", "name": "notes", "id": "n-1"}]))
        .await;
    client.send(&prompt(2, "remember the milk")).await;
    client.skip_echo("remember the milk").await;
    client
        .expect(&chunk("I cannot do that: no MCP server offers a `remember` tool (this session has no stdio MCP servers).\n"))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;
    client.send(&prompt(3, "list tools")).await;
    client.skip_echo("list tools").await;
    client
        .expect(&chunk("This session has no stdio MCP servers.\n"))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;
    client.close().await;
}

/// initialize with these `clientCapabilities` (as JSON text) and session/new in /tmp.
async fn open_session_with_capabilities(client: &mut RawClient, capabilities: &str) {
    client
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{capabilities}}}}}"#
        ))
        .await;
    let initialized = client.recv().await;
    assert!(
        initialized.starts_with(r#"{"jsonrpc":"2.0","id":0,"result":"#),
        "{initialized}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
        .await;
}

/// The checklist as a `plan_update` line, its two entries with these statuses.
fn checklist(shown: &str, acted: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"demo-session-1","update":{{"sessionUpdate":"plan_update","plan":{{"type":"items","planId":"demo-checklist","entries":[{{"content":"Show what the prompt contained","priority":"high","status":"{shown}"}},{{"content":"Carry out a requested write or read","priority":"medium","status":"{acted}"}}]}}}}}}}}"#
    )
}

const OUTLINE_REMOVED: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan_removed","planId":"demo-outline"}}}"#;

#[tokio::test]
async fn a_client_that_advertised_plan_gets_the_checklist_and_outline_as_plan_operations() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"fs":{"readTextFile":false},"plan":{}}"#).await;
    client.send(&prompt(2, "What is the plan?")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    client
        .expect(r##"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"demo-outline","content":"# Plan for turn 1\n\n1. Show back the 1 content block(s) received\n2. Nothing else: no tool, write or read was asked for\n3. End the turn\n"}}}}"##)
        .await;
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> What is the plan?\n")).await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect(OUTLINE_REMOVED).await;
    client.expect_end_turn(2).await;

    // Without "plan" in the prompt, only the checklist; the outline's number follows the turn.
    client.send(&prompt(3, "hello")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> hello\n")).await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect_end_turn(3).await;
    client.send(&prompt(4, "planning")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r##""content":"# Plan for turn 3\n"##),
        "{outline}"
    );
    client.expect_quiet_after_turn(4).await;
    client.close().await;
}

#[tokio::test]
async fn the_older_plan_capabilities_spelling_gets_plan_operations_too() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"planCapabilities":{}}"#).await;
    client.send(&prompt(2, "plan a write")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r#""plan":{"type":"markdown","planId":"demo-outline","content":"#),
        "{outline}"
    );
    assert!(
        outline.contains(r#"2. Ask permission to write demo.txt (never written)\n"#),
        "{outline}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> plan a write\n")).await;
    let tool_call = client.recv().await;
    assert!(
        tool_call.contains(r#""sessionUpdate":"tool_call""#),
        "{tool_call}"
    );
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}"#)
        .await;
    let failed = client.recv().await;
    assert!(failed.contains(r#""status":"failed""#), "{failed}");
    client
        .expect(&chunk("Permission denied: demo.txt was not written.\n"))
        .await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect(OUTLINE_REMOVED).await;
    client.expect_end_turn(2).await;
    client.close().await;
}

#[tokio::test]
async fn a_client_without_plans_gets_only_the_plain_plan_even_when_asked_for_one() {
    for capabilities in [
        r#"{}"#,
        r#"{"plan":null}"#,
        r#"{"planCapabilities":null,"fs":{"readTextFile":true}}"#,
    ] {
        let mut client = RawClient::start();
        open_session_with_capabilities(&mut client, capabilities).await;
        client.send(&prompt(2, "What is the plan?")).await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Show what the prompt contained","priority":"high","status":"in_progress"},{"content":"Carry out a requested write or read","priority":"medium","status":"pending"}]}}}"#)
            .await;
        client
            .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
            .await;
        client.expect(&chunk("> What is the plan?\n")).await;
        client.expect_plan_done(ACTIONS).await;
        client.expect_end_turn(2).await;
        client.expect_quiet().await;
        client.close().await;
    }
}

#[tokio::test]
async fn a_cancelled_turn_still_takes_its_outline_down() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"plan":{}}"#).await;
    client.send(&prompt(2, "plan, slowly")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r#"2. Tick every 100 ms until cancelled (at most 50 ticks)\n"#),
        "{outline}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> plan, slowly\n")).await;
    client.expect(&chunk("tick 1\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    // The checklist is left as it was: the turn did not finish its work.
    assert_eq!(line, OUTLINE_REMOVED);
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    client.expect_quiet().await;
    client.close().await;
}

/// `line` with each session id (`demo-session-<token>-<n>`) written `demo-session-<n>`; every id
/// must have the shape the agent promises, and all of a connection's the same token.
fn shorten_session_ids(line: &str, token: &mut Option<String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(session_ids::PREFIX) {
        let id_len = rest[at..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len() - at);
        let id = &rest[at..at + id_len];
        let n = session_ids::number_of(id)
            .unwrap_or_else(|| panic!("{id} is not a demo session id, in {line}"));
        let this_token = &id[session_ids::PREFIX.len()..session_ids::PREFIX.len() + 8];
        match token {
            Some(known) => assert_eq!(known, this_token, "one token per connection: {line}"),
            None => *token = Some(this_token.to_owned()),
        }
        out.push_str(&rest[..at]);
        out.push_str(&format!("{}{n}", session_ids::PREFIX));
        rest = &rest[at + id_len..];
    }
    out.push_str(rest);
    out
}
