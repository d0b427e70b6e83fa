//! MCP over ACP across a remote link: the provider proxy runs in a local chain, the agent that
//! calls its tools in a chain served by `acp-conductor serve`, reached over WebSocket and HTTP.

use acp_conductor_tests::mcp_chain::{
    Variant, add_provider, agent_servers, of_kind, provider_events_until, run_script,
    use_rmcp_agent,
};
use acp_conductor_tests::{TestChain, binaries};

// The `serve` process helper of tests/serve.rs, which uses all of it; this file only part.
#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;

/// For each wire form: the near chain (`run`) holds `test-mcp-provider` serving MCP server
/// `tools` and names the far chain (`serve`, the rmcp agent) by `{scheme}://` URL. The far
/// conductor bridges the declaration it got from its editor to a stdio shim, so every MCP
/// request of the agent goes back over the link to the near conductor, which routes it to
/// the provider; the answers come back the same way and the agent says them.
fn a_tool_call_crosses_the_link(scheme: &str) {
    let binaries = binaries!();
    for variant in Variant::ALL {
        let label = format!("remote-mcp-{scheme}-{}", variant.arg());
        let mut far = TestChain::new(&binaries, &format!("{label}-far"));
        use_rmcp_agent(&mut far, &["--mcp-version", "2025-06-18"]);
        let server = server::Server::start(&far, &[]);
        let mut near = TestChain::new(&binaries, &format!("{label}-near"));
        add_provider(&mut near, "provider", "tools", variant);
        near.use_remote_agent(&format!("{scheme}://{}/acp", server.addr), &[]);

        let mut editor = near.launch();
        let init = editor.initialize();
        assert_eq!(
            init["agentCapabilities"]["mcpCapabilities"]["acp"], true,
            "{label}: {init}"
        );
        let session = editor.new_session();

        // The far agent was given the far conductor's shim, not the provider's declaration.
        let servers = agent_servers(&far, 0);
        assert_eq!(servers.len(), 1, "{label}: {servers:?}");
        assert_eq!(servers[0]["name"], "tools", "{label}");
        assert_eq!(servers[0]["args"][0], "mcp-bridge", "{label}");

        let lines = run_script(
            &mut editor,
            &session,
            &[
                "open t tools",
                r#"call t echo {"text":"across the link"}"#,
                r#"call t add {"a":20,"b":22}"#,
                "call t whoami",
                "call t fail",
            ],
        );
        let whoami = match variant {
            Variant::Connectionless => "connectionless",
            _ => "tools-1-conn-1",
        };
        assert_eq!(
            lines,
            [
                "opened t tools 2025-06-18".to_string(),
                "result t echo: across the link".to_string(),
                "result t add: 42".to_string(),
                format!("result t whoami: {whoami}"),
                "error t fail: -32000 fail: failed as asked".to_string(),
            ],
            "{label}"
        );

        // The provider, which only the near conductor runs, answered the calls itself.
        let events = provider_events_until(&near, "provider", |events| {
            of_kind(events, "request")
                .iter()
                .filter(|r| r["method"] == "tools/call")
                .count()
                >= 4
        });
        let calls: Vec<_> = of_kind(&events, "request")
            .into_iter()
            .filter(|r| r["method"] == "tools/call")
            .collect();
        assert_eq!(calls.len(), 4, "{label}: {events:?}");
        match variant {
            Variant::Connectionless => {
                assert!(
                    of_kind(&events, "connect").is_empty(),
                    "{label}: {events:?}"
                )
            }
            _ => assert_eq!(of_kind(&events, "connect").len(), 1, "{label}: {events:?}"),
        }

        // Each conductor played its part: the near one routed to its proxy's server, the far
        // one saw the server declared by its editor and bridged it.
        let near_log = editor.wait_for_stderr("MCP server declared by proxy `provider`");
        assert!(
            !near_log.contains("bridging MCP server"),
            "{label}: {near_log}"
        );
        let far_log = server.stderr();
        assert!(
            far_log.contains("MCP server declared by the editor"),
            "{label}: {far_log}"
        );
        assert!(
            far_log.contains("bridging MCP server to the agent as a stdio server"),
            "{label}: {far_log}"
        );

        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{label}: {}", editor.stderr());
    }
}

#[test]
fn a_tool_call_of_a_remote_agent_crosses_a_websocket() {
    a_tool_call_crosses_the_link("ws");
}

#[test]
fn a_tool_call_of_a_remote_agent_crosses_streamable_http() {
    a_tool_call_crosses_the_link("http");
}
