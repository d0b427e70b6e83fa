//! The HTTP bridge end to end: an agent that advertises `mcpCapabilities.http` gets each
//! proxy-provided server as an `http` server on the conductor's loopback listener and calls it
//! with rmcp's Streamable HTTP client; `mcp_bridge = "stdio"` and agents without `http` keep the
//! stdio shim; a wrong secret is refused; two sessions' servers stay apart, and each call names
//! its ACP session to the provider.

use acp_conductor_tests::binaries::NOTES_PROXY;
use acp_conductor_tests::mcp_chain::{
    Variant, add_provider, agent_servers, of_kind, provider_events_until, run_script,
    use_rmcp_agent,
};
use acp_conductor_tests::{Editor, TestChain, binaries};
use serde_json::Value;

/// A chain of the notes proxy and the rmcp agent with `agent_args`, under `mcp_bridge`.
fn notes_chain(label: &str, agent_args: &[&str], mcp_bridge: Option<&str>) -> TestChain {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, label);
    let notes = binaries.workspace_program(&NOTES_PROXY);
    chain.add_proxy::<&str>("notes", &notes, &[]);
    use_rmcp_agent(&mut chain, agent_args);
    if let Some(form) = mcp_bridge {
        chain.conductor_setting("mcp_bridge", &format!("\"{form}\""));
    }
    chain
}

/// The one server the agent got in its `n`th session setup.
fn only_server(chain: &TestChain, n: usize) -> Value {
    let servers = agent_servers(chain, n);
    assert_eq!(servers.len(), 1, "{servers:?}");
    servers[0].clone()
}

/// Remember, recall, a tool error: the notes proxy's tools as the agent's client sees them.
fn assert_notes_work(editor: &mut Editor, session: &str) -> Vec<String> {
    let lines = run_script(
        editor,
        session,
        &[
            "open n notes",
            "list n",
            r#"call n remember {"note":"the release is on Friday"}"#,
            "call n recall",
            "call n forget {\"number\":7}",
        ],
    );
    assert_eq!(lines[1], "tools n: remember,recall,forget", "{lines:#?}");
    assert_eq!(
        lines[2],
        "result n remember: Remembered note 1 for this session: the release is on Friday"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("1. the release is on Friday")),
        "{lines:#?}"
    );
    let bad = lines.last().expect("forget 7 answered");
    assert!(
        bad.starts_with("result n forget:") && bad.ends_with("[isError]"),
        "{lines:#?}"
    );
    lines
}

#[test]
fn an_agent_offering_http_calls_the_notes_proxy_over_http() {
    let chain = notes_chain("http-notes", &["--http"], None);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let server = only_server(&chain, 0);
    assert_eq!(server["type"], "http", "{server}");
    assert_eq!(server["name"], "notes");
    let url = server["url"].as_str().expect("a url");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let headers = server["headers"].as_array().expect("headers");
    assert_eq!(headers.len(), 1, "{server}");
    assert_eq!(headers[0]["name"], "Authorization");
    let secret = headers[0]["value"].as_str().expect("a value");
    assert!(
        secret.starts_with("Bearer ") && secret.len() > 40,
        "{secret}"
    );

    let lines = assert_notes_work(&mut editor, &session);
    assert!(lines[0].starts_with("opened n notes "), "{lines:#?}");
    assert!(lines[0].ends_with(" http"), "{lines:#?}");

    // A client with a wrong secret is refused before anything reaches the provider.
    let refused = run_script(&mut editor, &session, &["open-wrong-secret w notes"]);
    assert!(refused[0].starts_with("error open w: "), "{refused:#?}");
    let log = editor.stderr();
    assert!(
        log.contains("MCP HTTP bridge: a request without the session's secret; refused"),
        "{log}"
    );
    assert!(
        log.contains("bridging MCP server to the agent as an HTTP server"),
        "{log}"
    );
    assert_eq!(
        log.matches("MCP bridge connection opened").count(),
        1,
        "only the right secret opened a connection: {log}"
    );
    // No shim process: the agent has no child.
    assert!(!log.contains("as a stdio server"), "{log}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn mcp_bridge_stdio_gives_an_agent_offering_http_the_shim() {
    let chain = notes_chain("http-notes-stdio", &["--http"], Some("stdio"));
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let server = only_server(&chain, 0);
    assert_eq!(server["args"][0], "mcp-bridge", "{server}");
    let lines = assert_notes_work(&mut editor, &session);
    assert!(!lines[0].ends_with(" http"), "{lines:#?}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn an_agent_without_http_still_gets_the_shim() {
    let chain = notes_chain("http-notes-no-http", &[], None);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let server = only_server(&chain, 0);
    assert!(server.get("type").is_none(), "{server}");
    assert_eq!(server["args"][0], "mcp-bridge", "{server}");
    assert_notes_work(&mut editor, &session);
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn two_sessions_servers_are_kept_apart() {
    let chain = notes_chain("http-notes-sessions", &["--http"], None);
    let mut editor = chain.launch();
    editor.initialize();
    let first = editor.new_session();
    let second = editor.new_session();
    let (a, b) = (only_server(&chain, 0), only_server(&chain, 1));
    assert_ne!(a["url"], b["url"]);
    assert_ne!(a["headers"], b["headers"]);
    let lines = run_script(
        &mut editor,
        &first,
        &[
            "open n notes",
            r#"call n remember {"note":"only in the first"}"#,
        ],
    );
    assert!(lines[1].starts_with("result n remember:"), "{lines:#?}");
    let other = run_script(&mut editor, &second, &["open m notes", "call m recall"]);
    assert_eq!(
        other[1],
        "result m recall: No notes are stored for this session."
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// A long call cancelled by the agent's client (`notifications/cancelled` POSTed) is
/// cancelled at its provider, and the session goes on.
#[test]
fn a_long_call_is_cancelled_at_its_provider() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "http-cancel");
    add_provider(&mut chain, "provider", "tools", Variant::Connectionless);
    use_rmcp_agent(&mut chain, &["--http"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    assert_eq!(only_server(&chain, 0)["type"], "http");
    let lines = run_script(
        &mut editor,
        &session,
        &[
            "open t tools",
            "call-cancel t hang 300",
            r#"call t echo {"text":"still here"}"#,
        ],
    );
    assert!(lines[0].starts_with("opened t tools "), "{lines:#?}");
    assert_eq!(
        lines[1..],
        [
            "cancelled t hang: notifications/cancelled sent",
            "result t echo: still here"
        ],
        "{lines:#?}"
    );
    let events = provider_events_until(&chain, "provider", |events| {
        !of_kind(events, "cancelled").is_empty()
    });
    assert_eq!(of_kind(&events, "cancelled").len(), 1, "{events:?}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// A session's servers live as long as the session: once the agent has answered
/// `session/close`, their URLs answer 404, so the agent's client gets an error, and the
/// provider hears the MCP connection end.
#[test]
fn a_sessions_servers_end_with_session_close() {
    let chain = notes_chain("http-close", &["--http"], None);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let lines = run_script(&mut editor, &session, &["open n notes", "call n recall"]);
    assert!(lines[0].starts_with("opened n notes "), "{lines:#?}");
    assert!(lines[1].starts_with("result n recall:"), "{lines:#?}");

    let closed = editor.request("session/close", serde_json::json!({ "sessionId": session }));
    assert!(
        closed.response.get("result").is_some(),
        "{}",
        closed.response
    );
    editor.wait_for_stderr("MCP bridge connection closed");

    // The agent still holds the client it opened; the bridge no longer serves it.
    let after = run_script(&mut editor, &session, &["call n recall"]);
    assert!(
        after[0].starts_with("error n recall:") && after[0].contains("404"),
        "{after:#?}"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// One provider serving one server id to two sessions, in each wire form: every call (and
/// connect) through the HTTP bridge reaches it naming the ACP session whose URL it came by.
#[test]
fn each_call_names_the_acp_session_of_its_url() {
    for variant in Variant::ALL {
        let binaries = binaries!();
        let mut chain = TestChain::new(&binaries, &format!("http-session-{}", variant.arg()));
        add_provider(&mut chain, "provider", "tools", variant);
        use_rmcp_agent(&mut chain, &["--http"]);
        let mut editor = chain.launch();
        editor.initialize();
        let first = editor.new_session();
        let second = editor.new_session();
        assert_ne!(first, second);
        for (session, label) in [(&second, "b"), (&first, "a")] {
            let lines = run_script(
                &mut editor,
                session,
                &[
                    &format!("open {label} tools"),
                    &format!(r#"call {label} echo {{"text":"from {label}"}}"#),
                ],
            );
            assert_eq!(
                lines[1],
                format!("result {label} echo: from {label}"),
                "{lines:#?}"
            );
        }
        let events = provider_events_until(&chain, "provider", |events| {
            events
                .iter()
                .filter(|e| e["event"] == "request" && e["method"] == "tools/call")
                .count()
                == 2
        });
        let calls: Vec<&Value> = of_kind(&events, "request")
            .into_iter()
            .filter(|e| e["method"] == "tools/call")
            .collect();
        assert_eq!(
            calls[0]["session"],
            second.as_str(),
            "{variant:?}: {events:#?}"
        );
        assert_eq!(
            calls[1]["session"],
            first.as_str(),
            "{variant:?}: {events:#?}"
        );
        // Every message the bridge sent for the two MCP sessions named its ACP session.
        for event in of_kind(&events, "request")
            .into_iter()
            .chain(of_kind(&events, "connect"))
        {
            assert!(event["session"].is_string(), "{variant:?}: {event}");
        }
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

/// rmcp's client in the stateless revision 2026-07-28 (`server/discover`, `_meta` on every
/// request, no `initialize`) uses the notes proxy through either bridge.
#[test]
fn rmcp_in_the_stateless_revision_uses_the_notes_proxy_through_either_bridge() {
    for bridge in ["http", "stdio"] {
        let chain = notes_chain(
            &format!("stateless-notes-{bridge}"),
            &["--http", "--mcp-version", "2026-07-28"],
            Some(bridge),
        );
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        let lines = assert_notes_work(&mut editor, &session);
        assert!(
            lines[0].starts_with("opened n notes 2026-07-28"),
            "{bridge}: {lines:#?}"
        );
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}
