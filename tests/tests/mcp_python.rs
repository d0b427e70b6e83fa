//! The official MCP Python SDK (PyPI `mcp` 2.3.0, `.ci/setup-interop`) as the agent's MCP
//! client of the notes proxy, through the HTTP bridge and the stdio shim: in the stateless
//! 2026-07-28 revision it negotiates by itself (`server/discover`, `_meta` on every request,
//! `ttlMs` and `cacheScope` on `tools/list`) and in the classic `initialize` handshake.

use acp_conductor_tests::binaries::NOTES_PROXY;
use acp_conductor_tests::interop::{InteropTools, arg, client_script};
use acp_conductor_tests::mcp_chain::{agent_servers, run_script, use_rmcp_agent};
use acp_conductor_tests::{TestChain, binaries};

/// The notes proxy and the rmcp agent (with `agent_args`), whose `python` command runs the
/// Python SDK client.
fn notes_chain(label: &str, agent_args: &[&str], mcp_bridge: Option<&str>) -> TestChain {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, label);
    let notes = binaries.workspace_program(&NOTES_PROXY);
    chain.add_proxy::<&str>("notes", &notes, &[]);
    let python = format!(
        "{},{}",
        arg(&tools.mcp_python()),
        arg(&client_script("mcp_python_client.py"))
    );
    let mut args = vec!["--python", python.as_str()];
    args.extend_from_slice(agent_args);
    use_rmcp_agent(&mut chain, &args);
    if let Some(form) = mcp_bridge {
        chain.conductor_setting("mcp_bridge", &format!("\"{form}\""));
    }
    chain
}

/// In `mode`, the Python client remembers a note and another recalls it; returns the
/// revision each negotiated.
fn remember_and_recall(chain: &TestChain, mode: &str) -> [String; 2] {
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let lines = run_script(
        &mut editor,
        &session,
        &[
            &format!(r#"python notes {mode} remember {{"note":"the release is on Friday"}}"#),
            &format!("python notes {mode} recall"),
        ],
    );
    assert_eq!(lines.len(), 6, "{mode}: {lines:#?}");
    assert_eq!(
        lines[1], "python tools remember,recall,forget",
        "{lines:#?}"
    );
    assert_eq!(
        lines[2],
        "python result remember: Remembered note 1 for this session: the release is on Friday",
        "{lines:#?}"
    );
    assert_eq!(lines[4], lines[1], "{lines:#?}");
    assert!(
        lines[5].starts_with("python result recall:")
            && lines[5].contains("1. the release is on Friday"),
        "{lines:#?}"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
    let version = |line: &str| {
        line.strip_prefix("python version ")
            .unwrap_or_else(|| panic!("{mode}: {lines:#?}"))
            .to_string()
    };
    [version(&lines[0]), version(&lines[3])]
}

#[test]
fn the_python_sdk_speaks_either_revision_through_the_http_bridge() {
    let stateless = notes_chain("python-http", &["--http"], None);
    assert_eq!(
        remember_and_recall(&stateless, "auto"),
        ["2026-07-28", "2026-07-28"]
    );
    assert_eq!(agent_servers(&stateless, 0)[0]["type"], "http");
    let handshake = notes_chain("python-http-legacy", &["--http"], None);
    for version in remember_and_recall(&handshake, "legacy") {
        assert!(version.starts_with("2025-"), "{version}");
    }
}

#[test]
fn the_python_sdk_speaks_either_revision_through_the_stdio_shim() {
    let stateless = notes_chain("python-stdio", &["--http"], Some("stdio"));
    assert_eq!(
        remember_and_recall(&stateless, "auto"),
        ["2026-07-28", "2026-07-28"]
    );
    assert_eq!(agent_servers(&stateless, 0)[0]["args"][0], "mcp-bridge");
    let handshake = notes_chain("python-stdio-legacy", &[], None);
    for version in remember_and_recall(&handshake, "legacy") {
        assert!(version.starts_with("2025-"), "{version}");
    }
}
