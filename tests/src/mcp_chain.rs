//! Chains for the MCP-over-ACP tests: the rmcp-based test agent, MCP providers in each wire
//! form, and reading what the agent said and what the providers recorded. Knows the fixtures'
//! options and output lines; knows nothing of how the conductor routes them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binaries::{RMCP_AGENT, SDK_PROVIDER};
use crate::editor::{Editor, Exchange};
use crate::test_chain::{AgentEntry, TestChain};

/// The name under which the rmcp agent's files are kept.
pub const RMCP: &str = "rmcp-agent";

/// The wire forms a `test-mcp-provider` speaks (`--variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The RFD's: declaration `id`, `mcp/connect {acpId}`, messages by `connectionId`.
    Rfd,
    /// Declaration `serverId`, `mcp/connect {serverId}`, otherwise as the RFD.
    ServerId,
    /// The current official SDK's: declaration `serverId`, no connect, stateless MCP.
    Connectionless,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Rfd, Variant::ServerId, Variant::Connectionless];

    pub fn arg(self) -> &'static str {
        match self {
            Variant::Rfd => "rfd",
            Variant::ServerId => "server-id",
            Variant::Connectionless => "connectionless",
        }
    }
}

/// Makes the rmcp test agent the chain's agent, recording its session setups to
/// `<dir>/rmcp-agent.record`; `args` are extra options (`--acp`, `--mcp-version V`).
pub fn use_rmcp_agent(chain: &mut TestChain, args: &[&str]) {
    let command = chain.binaries.workspace_program(&RMCP_AGENT);
    let mut all = vec![
        "--record".to_string(),
        chain.file(RMCP, "record").display().to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    chain.agent = Some(AgentEntry {
        command,
        args: all,
        settings: Vec::new(),
    });
}

/// The `test-mcp-provider` fixture, built with the test-agent into the same directory.
pub fn provider_program(chain: &TestChain) -> PathBuf {
    chain.binaries.agent.with_file_name("test-mcp-provider")
}

/// Appends a `test-mcp-provider` named `name` serving MCP server `server` (id `<server>-1`)
/// in `variant`, recording its MCP events to `<dir>/<name>.record`.
pub fn add_provider(chain: &mut TestChain, name: &str, server: &str, variant: Variant) {
    let program = provider_program(chain);
    let args = vec![
        "--variant".to_string(),
        variant.arg().to_string(),
        "--name".to_string(),
        server.to_string(),
        "--record".to_string(),
        chain.file(name, "record").display().to_string(),
        "--pid-file".to_string(),
        chain.file(name, "pid").display().to_string(),
    ];
    chain.add_proxy(name, &program, &args);
}

/// Appends provider `provider` serving MCP server `tools` in `variant`, makes the rmcp agent
/// (with `agent_args`) the chain's agent, launches the chain and initializes it; returns the
/// editor and a new session's id.
pub fn launch_with_provider(
    chain: &mut TestChain,
    variant: Variant,
    agent_args: &[&str],
) -> (Editor, String) {
    add_provider(chain, "provider", "tools", variant);
    use_rmcp_agent(chain, agent_args);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    (editor, session)
}

/// Appends the proxy built on the official Rust ACP SDK (MCP server `sdk-tools`).
pub fn add_sdk_provider(chain: &mut TestChain, name: &str) {
    let program = chain.binaries.workspace_program(&SDK_PROVIDER);
    chain.add_proxy::<&str>(name, &program, &[]);
}

/// Every line the agent said during `exchange` (chunks joined, split at newlines).
pub fn said(exchange: &Exchange) -> Vec<String> {
    exchange
        .chunk_texts()
        .concat()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs a script of agent commands as one prompt and returns what the agent said,
/// panicking when the prompt itself failed.
pub fn run_script(editor: &mut Editor, session_id: &str, commands: &[&str]) -> Vec<String> {
    let exchange = editor.prompt(session_id, &commands.join("\n"));
    let stop = &exchange.result()["stopReason"];
    assert_eq!(stop, "end_turn", "prompt failed: {}", exchange.response);
    said(&exchange)
}

/// `session/new` with these `mcpServers`; returns the session id.
pub fn new_session_with(editor: &mut Editor, servers: Value) -> String {
    let exchange = editor.request(
        "session/new",
        serde_json::json!({ "cwd": std::env::temp_dir(), "mcpServers": servers }),
    );
    exchange.result()["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("session/new gave no sessionId: {}", exchange.response))
        .to_string()
}

/// The `mcpServers` the agent got in its `n`th session setup (from 0).
pub fn agent_servers(chain: &TestChain, n: usize) -> Vec<Value> {
    let setups: Vec<Value> = chain
        .received(RMCP)
        .into_iter()
        .filter(|e| e["event"] == "session/new")
        .collect();
    let setup = setups
        .get(n)
        .unwrap_or_else(|| panic!("the agent recorded {} session setups", setups.len()));
    setup["mcpServers"]
        .as_array()
        .expect("mcpServers is an array")
        .clone()
}

/// The events provider `name` recorded, waiting up to the tests' patience until `done`
/// holds for them (providers record asynchronously to the messages the editor sees).
pub fn provider_events_until(
    chain: &TestChain,
    name: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + crate::editor::patience();
    loop {
        let events = if chain.file(name, "record").exists() {
            chain.received(name)
        } else {
            Vec::new()
        };
        if done(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "provider {name} never recorded what was expected; it recorded:\n{}",
            events
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The events of `kind` (`connect`, `disconnect`, `request`, `notification`) among `events`.
pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

/// The value after `prefix` on the first line that starts with it.
pub fn line_after<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    lines
        .iter()
        .find_map(|line| line.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?} in {lines:#?}"))
}
