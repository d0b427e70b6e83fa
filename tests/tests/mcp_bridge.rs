//! MCP over ACP through the bridge: an agent whose MCP client is the official Rust MCP SDK
//! (`rmcp`) over stdio uses tools that proxies at several depths, or the editor, serve over ACP.

use acp_conductor_tests::editor::Reply;
use acp_conductor_tests::mcp_chain::{
    Variant, add_provider, agent_servers, launch_with_provider, new_session_with, of_kind,
    provider_events_until, run_script, said, use_rmcp_agent,
};
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

/// What `list` says for the fixture provider's tools.
const FIXTURE_TOOLS: &str = "echo,add,whoami,fail,ask,progress,die";

/// Lists and calls tools of server `tools`, and checks every answer.
fn assert_lists_and_calls(editor: &mut acp_conductor_tests::Editor, session: &str, version: &str) {
    let lines = run_script(
        editor,
        session,
        &[
            "open t tools",
            "list t",
            r#"call t echo {"text":"hi there"}"#,
            r#"call t add {"a":2,"b":3}"#,
            "call t fail",
        ],
    );
    assert_eq!(
        lines,
        [
            format!("opened t tools {version}"),
            format!("tools t: {FIXTURE_TOOLS}"),
            "result t echo: hi there".to_string(),
            "result t add: 5".to_string(),
            "error t fail: -32000 fail: failed as asked".to_string(),
        ]
    );
}

/// The agent was given the conductor itself as a stdio MCP server named `name`.
fn assert_bridged(chain: &TestChain, name: &str) {
    let servers = agent_servers(chain, 0);
    assert_eq!(servers.len(), 1, "{servers:?}");
    let server = &servers[0];
    assert_eq!(server["name"], name);
    let conductor = std::fs::canonicalize(&chain.binaries.conductor).expect("conductor path");
    assert_eq!(server["command"], conductor.display().to_string());
    assert_eq!(server["args"][0], "mcp-bridge");
    assert_eq!(server["env"], json!([]));
    assert!(server.get("type").is_none(), "{server}");
}

#[test]
fn rmcp_agent_uses_the_tools_of_a_provider_at_depth_1() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-depth-1");
    add_provider(&mut chain, "provider", "tools", Variant::Rfd);
    use_rmcp_agent(&mut chain, &["--mcp-version", "2025-06-18"]);
    let mut editor = chain.launch();
    let init = editor.initialize();
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["acp"], true);
    let session = editor.new_session();
    assert_bridged(&chain, "tools");
    assert_lists_and_calls(&mut editor, &session, "2025-06-18");
    let log = editor.wait_for_stderr("bridging MCP server to the agent as a stdio server");
    assert!(
        log.contains("MCP server declared by proxy `provider`"),
        "{log}"
    );
    editor.wait_for_stderr("MCP bridge connection opened");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn rmcp_agent_uses_the_tools_of_a_provider_at_depth_3() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "mcp-depth-3", 2);
    let (mut editor, session) =
        launch_with_provider(&mut chain, Variant::Rfd, &["--mcp-version", "2025-11-25"]);
    assert_bridged(&chain, "tools");
    assert_lists_and_calls(&mut editor, &session, "2025-11-25");
    // The proxies in front saw the declaration pass by, but none of the MCP traffic.
    for proxy in ["p1", "p2"] {
        let received = chain.recording(proxy);
        assert!(
            !received.iter().any(|l| l.contains("mcp/")),
            "{proxy}: {received:#?}"
        );
    }
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// A minimal MCP server the test editor serves over ACP, in the RFD's form.
struct EditorServer {
    connections: usize,
    seen: Vec<String>,
}

impl EditorServer {
    fn answer(&mut self, request: &Value) -> Reply {
        let params = &request["params"];
        self.seen
            .push(request["method"].as_str().unwrap_or("?").to_string());
        match request["method"].as_str() {
            Some("mcp/connect") => {
                assert_eq!(params["acpId"], "editor-1", "{request}");
                self.connections += 1;
                Ok(json!({ "connectionId": format!("editor-conn-{}", self.connections) }))
            }
            Some("mcp/disconnect") => Ok(json!({})),
            Some("mcp/message") => {
                assert!(params["connectionId"].is_string(), "{request}");
                let inner = &params["params"];
                self.seen
                    .push(params["method"].as_str().unwrap_or("?").to_string());
                match params["method"].as_str() {
                    Some("initialize") => Ok(json!({
                        "protocolVersion": inner["protocolVersion"],
                        "capabilities": { "tools": {} },
                        "serverInfo": { "name": "editor-tools", "version": "1.0.0" }
                    })),
                    Some("tools/list") => Ok(json!({ "tools": [{
                        "name": "open_files",
                        "description": "The files open in the editor",
                        "inputSchema": { "type": "object", "properties": {} }
                    }]})),
                    Some("tools/call") => Ok(json!({
                        "content": [{ "type": "text", "text": "src/main.rs, README.md" }]
                    })),
                    _ => Err(json!({ "code": -32601, "message": "not here" })),
                }
            }
            _ => Err(json!({ "code": -32601, "message": "the test editor does not handle this" })),
        }
    }
}

#[test]
fn rmcp_agent_uses_the_tools_the_editor_provides() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "mcp-editor-owned", 1);
    use_rmcp_agent(&mut chain, &[]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = new_session_with(
        &mut editor,
        json!([{ "type": "acp", "name": "editor-tools", "id": "editor-1" }]),
    );
    assert_bridged(&chain, "editor-tools");
    let mut server = EditorServer {
        connections: 0,
        seen: Vec::new(),
    };
    let exchange = editor.request_answering(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text":
            "open e editor-tools\nlist e\ncall e open_files\nclose e" }] }),
        |request| server.answer(request),
    );
    let lines = said(&exchange);
    assert_eq!(
        lines[0].split(' ').take(3).collect::<Vec<_>>(),
        ["opened", "e", "editor-tools"]
    );
    assert_eq!(
        lines[1..3],
        [
            "tools e: open_files",
            "result e open_files: src/main.rs, README.md"
        ]
    );
    assert!(lines[3].starts_with("closed e"), "{lines:?}");
    assert_eq!(server.connections, 1);
    for method in ["mcp/connect", "initialize", "tools/list", "tools/call"] {
        assert!(
            server.seen.iter().any(|m| m == method),
            "{method}: {:?}",
            server.seen
        );
    }
    // The shim's stdin closed with `close`, so the editor hears `mcp/disconnect`.
    if !server.seen.iter().any(|m| m == "mcp/disconnect") {
        let disconnect = editor.wait_for(|m| m["method"] == "mcp/disconnect");
        assert_eq!(disconnect["params"]["connectionId"], "editor-conn-1");
    }
    let log = editor.stderr();
    assert!(log.contains("MCP server declared by the editor"), "{log}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn each_wire_form_is_addressed_the_way_its_provider_speaks() {
    let binaries = binaries!();
    for variant in Variant::ALL {
        let mut chain = TestChain::new(&binaries, &format!("mcp-variant-{}", variant.arg()));
        let (mut editor, session) =
            launch_with_provider(&mut chain, variant, &["--mcp-version", "2025-06-18"]);
        assert_bridged(&chain, "tools");
        assert_lists_and_calls(&mut editor, &session, "2025-06-18");
        let whoami = run_script(&mut editor, &session, &["call t whoami"]);
        let expected = match variant {
            Variant::Connectionless => "result t whoami: connectionless",
            _ => "result t whoami: tools-1-conn-1",
        };
        assert_eq!(whoami, [expected], "{variant:?}");
        let events = provider_events_until(&chain, "provider", |events| {
            of_kind(events, "request").len() >= 4
        });
        let requests = of_kind(&events, "request");
        match variant {
            Variant::Connectionless => {
                assert!(of_kind(&events, "connect").is_empty(), "{events:?}");
                assert!(
                    requests
                        .iter()
                        .all(|r| r["meta"] == true && !r["requestId"].is_null()),
                    "{requests:?}"
                );
                assert!(!requests.iter().any(|r| r["method"] == "initialize"));
            }
            _ => {
                assert_eq!(of_kind(&events, "connect").len(), 1, "{events:?}");
                assert_eq!(requests[0]["method"], "initialize", "{variant:?}");
            }
        }
        editor.close_stdin();
        assert!(
            editor.wait_exit().success(),
            "{variant:?}: {}",
            editor.stderr()
        );
    }
}

#[test]
fn server_requests_and_notifications_reach_the_agents_mcp_client() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "mcp-server-to-client", 1);
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &[]);
    let lines = run_script(
        &mut editor,
        &session,
        &[
            "open t tools",
            r#"call t ask {"question":"which branch?"}"#,
            "call-progress t progress",
            "sleep 300",
            "events t",
        ],
    );
    assert_eq!(lines[1], "result t ask: answer: sampled: which branch?");
    assert_eq!(lines[2], "result t progress: done");
    assert_eq!(lines[3], "slept");
    let events = &lines[4..];
    assert_eq!(events[0], "request t: sampling/createMessage which branch?");
    assert!(
        events[1].starts_with("notification t: notifications/message")
            && events[1].contains("progress from tools"),
        "{events:?}"
    );
    assert!(
        events[2].starts_with("notification t: notifications/progress"),
        "{events:?}"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn a_connectionless_provider_notifies_the_shim_that_made_the_request() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-connectionless-notes");
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Connectionless, &[]);
    let lines = run_script(
        &mut editor,
        &session,
        &[
            "open a tools",
            "open b tools",
            "call-progress a progress",
            "sleep 300",
            "events a",
            "events b",
        ],
    );
    assert_eq!(lines[2], "result a progress: done", "{lines:?}");
    let events: Vec<&String> = lines[4..].iter().collect();
    assert!(
        events.iter().all(|l| l.starts_with("notification a:")),
        "{lines:?}"
    );
    assert_eq!(events.len(), 2, "{lines:?}");
    // `ask` needs a connection, which this form has not: an inner MCP error, not a hang.
    let ask = run_script(&mut editor, &session, &[r#"call a ask {"question":"q"}"#]);
    assert_eq!(ask, ["error a ask: -32000 ask needs a connection"]);
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}
