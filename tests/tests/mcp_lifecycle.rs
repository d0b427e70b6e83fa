//! Bridge connections over time: concurrent connections to one server, shims closed by the
//! agent, by the agent's death and by the conductor's exit, a provider that dies mid-call, and
//! requests still waiting when the conductor stops.

use std::time::Duration;

use serde_json::json;

use acp_conductor_tests::mcp_chain::{
    RMCP, Variant, agent_servers, launch_with_provider, line_after, new_session_with, of_kind,
    provider_events_until, run_script, use_rmcp_agent,
};
use acp_conductor_tests::processes::{descendants, describe, wait_until_gone};
use acp_conductor_tests::{Editor, TestChain, binaries};

/// Opens connections `a` and `b` to `tools` and returns their shims' pids.
fn open_two(editor: &mut Editor, session: &str) -> [u32; 2] {
    let lines = run_script(
        editor,
        session,
        &["open a tools", "open b tools", "pid a", "pid b"],
    );
    let pid = |label: &str| -> u32 {
        line_after(&lines, &format!("pid {label} "))
            .parse()
            .expect("a pid")
    };
    [pid("a"), pid("b")]
}

fn assert_gone(pids: &[u32], what: &str) {
    let left = wait_until_gone(pids, Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "{what}: still running: {:?}",
        left.iter().map(|&p| describe(p)).collect::<Vec<_>>()
    );
}

#[test]
fn two_connections_to_one_server_are_separate() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-two-connections");
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &[]);
    let [a, b] = open_two(&mut editor, &session);
    assert_ne!(a, b);
    let lines = run_script(
        &mut editor,
        &session,
        &[
            "call a whoami",
            "call b whoami",
            r#"call b echo {"text":"b"}"#,
        ],
    );
    let who_a = line_after(&lines, "result a whoami: ").to_string();
    let who_b = line_after(&lines, "result b whoami: ").to_string();
    assert_ne!(who_a, who_b);
    assert_eq!(lines[2], "result b echo: b");

    // Closing one connection disconnects it at the provider; the other keeps working.
    let lines = run_script(
        &mut editor,
        &session,
        &["close a", r#"call b echo {"text":"still"}"#],
    );
    assert!(lines[0].starts_with("closed a"), "{lines:?}");
    assert_eq!(lines[1], "result b echo: still");
    assert_gone(&[a], "the shim of a closed connection");
    let events =
        provider_events_until(&chain, "provider", |e| !of_kind(e, "disconnect").is_empty());
    assert_eq!(of_kind(&events, "connect").len(), 2, "{events:?}");
    let disconnects = of_kind(&events, "disconnect");
    assert_eq!(disconnects.len(), 1, "{events:?}");
    assert_eq!(disconnects[0]["connectionId"], who_a.as_str());
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
    assert_gone(&[b], "the other shim after the conductor exited");
}

#[test]
fn shims_exit_when_the_agent_dies() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-agent-dies");
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &[]);
    let shims = open_two(&mut editor, &session);
    let agent = descendants(editor.pid())
        .into_iter()
        .find(|&pid| describe(pid).contains("test-rmcp-agent"))
        .expect("the agent runs under the conductor");
    // SAFETY: kill(2) on a process of this test's chain.
    assert_eq!(unsafe { libc::kill(agent as i32, libc::SIGKILL) }, 0);
    assert_gone(&shims, "shims of a dead agent");
    // The conductor reports the agent's death and ends; nothing of the chain is left.
    let chain_pids = descendants(editor.pid());
    editor.close_stdin();
    editor.wait_exit();
    assert_gone(&chain_pids, "the chain");
}

#[test]
fn no_shim_outlives_the_conductor() {
    let binaries = binaries!();
    for kill in [false, true] {
        let mut chain = TestChain::new(&binaries, "mcp-conductor-exits");
        let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &[]);
        let shims = open_two(&mut editor, &session);
        let chain_pids = descendants(editor.pid());
        if kill {
            editor.signal(libc::SIGKILL);
        } else {
            editor.close_stdin();
            assert!(editor.wait_exit().success(), "{}", editor.stderr());
        }
        assert_gone(
            &shims,
            if kill {
                "shims of a killed conductor"
            } else {
                "shims"
            },
        );
        assert_gone(&chain_pids, "the chain");
    }
}

#[test]
fn a_provider_that_dies_mid_call_fails_the_call_not_hangs_it() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-provider-dies");
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &[]);
    run_script(&mut editor, &session, &["open t tools"]);
    let exchange = editor.prompt(&session, "call t die");
    // The editor's prompt is answered (the chain lost a component) ...
    let error = exchange.error();
    assert_eq!(error["code"], -32001, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("provider"),
        "{error}"
    );
    // ... and the agent's MCP client got an MCP error for its call instead of waiting.
    let said = chain_said(&chain);
    assert!(
        said.iter().any(|l| l.starts_with("error t die: -32001")),
        "the agent said: {said:#?}"
    );
    editor.close_stdin();
    editor.wait_exit();
}

/// Every line the rmcp agent said, from its record, waiting for its last command to finish.
fn chain_said(chain: &TestChain) -> Vec<String> {
    let deadline = std::time::Instant::now() + acp_conductor_tests::editor::patience();
    loop {
        let said: Vec<String> = chain
            .received(RMCP)
            .into_iter()
            .filter(|e| e["event"] == "said")
            .filter_map(|e| e["line"].as_str().map(str::to_string))
            .collect();
        if said.iter().any(|l| l.contains(" die: ")) || std::time::Instant::now() > deadline {
            return said;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mcp_requests_still_waiting_when_the_conductor_stops_get_an_error() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-calls-at-shutdown");
    use_rmcp_agent(&mut chain, &[]);
    let mut editor = chain.launch();
    editor.initialize();
    new_session_with(
        &mut editor,
        json!([{ "type": "acp", "name": "editor-tools", "id": "editor-1" }]),
    );
    // The test is the agent's MCP client: it starts the shims the agent was told to start.
    // The editor serves one connection, which gets a call it never answers ...
    let mut calling = start_shim(&chain, "editor-tools");
    let connect = editor.wait_for(|m| m["method"] == "mcp/connect");
    editor.send(&json!({ "jsonrpc": "2.0", "id": connect["id"],
        "result": { "connectionId": "c1" } }));
    let initialize = editor.wait_for(|m| m["params"]["method"] == "initialize");
    editor.send(
        &json!({ "jsonrpc": "2.0", "id": initialize["id"], "result": {
        "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
        "serverInfo": { "name": "editor-tools", "version": "1" } } }),
    );
    assert_eq!(calling.recv()["id"], 1);
    calling.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    calling.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "slow", "arguments": {} } }));
    editor.wait_for(|m| m["params"]["method"] == "tools/call");
    // ... and never answers the other's mcp/connect, so its `initialize` waits in the bridge.
    let mut connecting = start_shim(&chain, "editor-tools");
    editor.wait_for(|m| m["method"] == "mcp/connect" && m["id"] != connect["id"]);
    editor.close_stdin();
    // Both are answered with an error once the conductor stops, not left waiting.
    for (shim, id) in [(&mut calling, 2), (&mut connecting, 1)] {
        let answer = shim.recv();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32001, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("shutting down"), "{answer}");
        // The shim ends either way: its stdin closed, or the conductor went first.
        shim.close_stdin();
        shim.wait_exit();
    }
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// Starts the shim of the agent's MCP server `name` the way the agent would, and sends it
/// `initialize` (id 1).
fn start_shim(chain: &TestChain, name: &str) -> Editor {
    let servers = agent_servers(chain, 0);
    let entry = servers
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no server {name} in {servers:?}"));
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string"))
        .collect();
    let program = std::path::PathBuf::from(entry["command"].as_str().expect("a command"));
    let mut shim = Editor::launch(&program, &args, &[]);
    shim.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "test", "version": "1" } } }),
    );
    shim
}
