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

mod mcp_tools;
mod plans;
mod turns;

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
