//! MCP over ACP with an agent that speaks it (`mcpCapabilities.acp: true`): declarations pass
//! through unchanged, the agent's `mcp/*` reach the owner, the owner's messages come back.

use acp_conductor_tests::mcp_chain::{
    Variant, agent_servers, launch_with_provider, of_kind, provider_events_until, run_script,
};
use acp_conductor_tests::processes::{descendants, describe};
use acp_conductor_tests::{TestChain, binaries};
use serde_json::json;

#[test]
fn declarations_pass_through_and_mcp_goes_straight_to_the_provider() {
    let binaries = binaries!();
    for variant in [Variant::Rfd, Variant::ServerId] {
        let mut chain = TestChain::with_test_proxies(&binaries, "mcp-native", 1);
        let (mut editor, session) = launch_with_provider(&mut chain, variant, &["--acp"]);
        let field = match variant {
            Variant::Rfd => "id",
            _ => "serverId",
        };
        assert_eq!(
            agent_servers(&chain, 0),
            [json!({ "type": "acp", "name": "tools", field: "tools-1" })],
            "{variant:?}"
        );
        let lines = run_script(
            &mut editor,
            &session,
            &[
                "open t tools",
                "list t",
                r#"call t echo {"text":"native"}"#,
                "call t fail",
                r#"call t ask {"question":"ok?"}"#,
                "call t progress",
                "sleep 200",
                "events t",
                "close t",
            ],
        );
        assert_eq!(
            lines[0], "opened t tools 2025-06-18",
            "{variant:?}: {lines:?}"
        );
        assert_eq!(lines[1], "tools t: echo,add,whoami,fail,ask,progress,die");
        assert_eq!(lines[2], "result t echo: native");
        assert_eq!(lines[3], "error t fail: -32000 fail: failed as asked");
        assert_eq!(lines[4], "result t ask: answer: sampled: ok?");
        assert_eq!(lines[5], "result t progress: done");
        assert_eq!(lines[7], "request t: sampling/createMessage ok?");
        assert!(
            lines[8].starts_with("notification t: notifications/message"),
            "{lines:?}"
        );
        assert_eq!(lines.last().unwrap(), "closed t disconnected");
        let events =
            provider_events_until(&chain, "provider", |e| !of_kind(e, "disconnect").is_empty());
        assert_eq!(of_kind(&events, "connect").len(), 1, "{events:?}");
        // No bridge: the conductor started no shim.
        let bridges: Vec<String> = descendants(editor.pid())
            .into_iter()
            .map(describe)
            .filter(|d| d.contains("mcp-bridge"))
            .collect();
        assert!(bridges.is_empty(), "{bridges:?}");
        let log = editor.stderr();
        assert!(!log.contains("bridging MCP server"), "{log}");
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

#[test]
fn connecting_to_an_id_nobody_declared_is_an_error() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-native-unknown");
    let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, &["--acp"]);
    let lines = run_script(
        &mut editor,
        &session,
        &["open-id x nobody-1", "open t tools", "list t"],
    );
    assert!(
        lines[0].starts_with("error open x: -32602") && lines[0].contains("nobody-1"),
        "{lines:?}"
    );
    // The chain is unharmed.
    assert_eq!(lines[2], "tools t: echo,add,whoami,fail,ask,progress,die");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}
