//! The notes proxy end to end: its per-session tools used by an rmcp agent through the bridge
//! (connectionless MCP over ACP), native and as WASM, its `serverId` declaration as an agent
//! speaking MCP over ACP gets it, and the built-in demo agent as the README shows.

use std::time::{Duration, Instant};

use acp_conductor_tests::binaries::NOTES_PROXY;
use acp_conductor_tests::editor::patience;
use acp_conductor_tests::mcp_chain::{agent_servers, run_script, use_rmcp_agent};
use acp_conductor_tests::scenario::prompt_example_config;
use acp_conductor_tests::wasm::{self, WasmChain, WasmTarget};
use acp_conductor_tests::{Editor, TestChain, binaries};
use serde_json::json;

/// Remembers in one session, recalls in both: notes belong to the session they were made in.
fn assert_notes_are_per_session(editor: &mut Editor) {
    editor.initialize();
    let first = editor.new_session();
    let second = editor.new_session();
    let lines = run_script(
        editor,
        &first,
        &[
            "open n notes",
            "list n",
            r#"call n remember {"note":"the release is on Friday"}"#,
            r#"call n remember {"note":"run the migrations first"}"#,
            "call n forget {\"number\":2}",
            "call n recall",
            "call n forget {\"number\":7}",
        ],
    );
    assert!(lines[0].starts_with("opened n notes "), "{lines:#?}");
    assert_eq!(lines[1], "tools n: remember,recall,forget", "{lines:#?}");
    assert_eq!(
        lines[2],
        "result n remember: Remembered note 1 for this session: the release is on Friday"
    );
    assert!(lines[4].starts_with("result n forget: Forgot note 2: run the migrations first"));
    let recall = lines
        .iter()
        .position(|l| l.starts_with("result n recall:"))
        .expect("recall answered");
    assert!(
        lines[recall..]
            .iter()
            .any(|l| l.contains("1. the release is on Friday")),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("2. run the migrations")),
        "{lines:#?}"
    );
    let bad = lines.last().expect("forget 7 answered");
    assert!(
        bad.starts_with("result n forget:") && bad.ends_with("[isError]"),
        "{lines:#?}"
    );

    let other = run_script(editor, &second, &["open m notes", "call m recall"]);
    assert_eq!(
        other[1],
        "result m recall: No notes are stored for this session."
    );
}

/// The agent got the bridge in place of the declared server, and the bridge spoke to the notes
/// proxy connectionless from the start (it declares `serverId`; one bridge connection per
/// session here): no `mcp/connect` was tried and no connection was ever opened.
fn assert_bridged_connectionless(chain: &TestChain, editor: &Editor) {
    for (n, id) in [(0, "notes-1"), (1, "notes-2")] {
        let servers = agent_servers(chain, n);
        assert_eq!(servers.len(), 1, "{servers:?}");
        assert_eq!(servers[0]["name"], "notes");
        let args = servers[0]["args"].as_array().expect("a stdio server");
        assert_eq!(args[0], "mcp-bridge", "{servers:?}");
        assert!(args.contains(&json!(id)), "{servers:?}");
    }
    let connectionless = |log: &str| {
        log.lines()
            .filter(|l| {
                l.contains("declared with serverId; using connectionless mcp/message")
                    && l.contains("server=notes")
            })
            .count()
    };
    // The log may lag a little behind the protocol.
    let deadline = Instant::now() + patience();
    let mut log = editor.stderr();
    while connectionless(&log) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        log = editor.stderr();
    }
    assert_eq!(connectionless(&log), 2, "{log}");
    assert!(!log.contains("MCP connection established"), "{log}");
    assert!(!log.contains("provider does not know mcp/connect"), "{log}");
}

#[test]
fn notes_tools_through_the_bridge_native() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "notes-native");
    let notes = binaries.workspace_program(&NOTES_PROXY);
    chain.add_proxy::<&str>("notes", &notes, &[]);
    use_rmcp_agent(&mut chain, &[]);
    let mut editor = chain.launch();
    assert_notes_are_per_session(&mut editor);
    assert_bridged_connectionless(&chain, &editor);
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// An agent that speaks MCP over ACP itself gets the declaration unchanged, with the server id
/// under `serverId` (schema 1.20); its `mcp/connect` reaches the proxy, which speaks the
/// connectionless form only and answers "method not found".
#[test]
fn an_agent_speaking_mcp_over_acp_gets_a_server_id_declaration() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "notes-acp-agent");
    let notes = binaries.workspace_program(&NOTES_PROXY);
    chain.add_proxy::<&str>("notes", &notes, &[]);
    use_rmcp_agent(&mut chain, &["--acp"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    assert_eq!(
        agent_servers(&chain, 0),
        [json!({"type": "acp", "name": "notes", "serverId": "notes-1"})]
    );
    let lines = run_script(&mut editor, &session, &["open n notes"]);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].starts_with("error open n: ") && lines[0].contains("-32601"),
        "{lines:#?}"
    );
    assert!(
        lines[0].contains("connectionless form of schema 1.20"),
        "{lines:#?}"
    );
    let log = editor.stderr();
    assert!(!log.contains("bridging MCP server"), "{log}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn notes_tools_through_the_bridge_as_wasm() {
    let binaries = binaries!();
    for target in WasmTarget::ALL {
        let mut chain = TestChain::new(&binaries, &format!("notes-{}", target.triple()));
        use_rmcp_agent(&mut chain, &[]);
        let mut chain = WasmChain::new(chain);
        chain.add_wasm("notes", &wasm::artifact(&binaries, wasm::NOTES, target));
        let mut editor = chain.launch();
        assert_notes_are_per_session(&mut editor);
        assert_bridged_connectionless(&chain.chain, &editor);
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

/// The README's tool demo, as written there (run from the repository's root): the demo agent
/// calls the notes proxy's tools through the bridge, and the note outlives the turn.
#[test]
fn readme_tool_demo_remembers_then_recalls() {
    let binaries = binaries!();
    let (stdout, stderr) = prompt_example_config(
        &binaries,
        &[
            "Remember that the release is on Friday",
            "What do you recall?",
        ],
    );
    let expected = [
        "[tool] notes: remember (other) pending",
        "[tool] demo-tool-1 -> completed",
        "The `remember` tool of notes answered: Remembered note 1 for this session: the release is on Friday",
        "[prompt] What do you recall?",
        "[tool] notes: recall (other) pending",
        "[tool] demo-tool-2 -> completed",
        "1. the release is on Friday",
    ];
    let mut rest: &str = &stdout;
    for text in expected {
        let at = rest.find(text).unwrap_or_else(|| {
            panic!("stdout should contain `{text}` (in this order):\n{stdout}\nstderr:\n{stderr}")
        });
        rest = &rest[at + text.len()..];
    }
}
