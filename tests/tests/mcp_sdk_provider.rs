//! A provider built on the official Rust ACP SDK (`agent-client-protocol-rmcp`, connectionless
//! MCP over ACP) serves an rmcp agent through the bridge, behind another proxy.

use acp_conductor_tests::mcp_chain::{add_sdk_provider, agent_servers, said, use_rmcp_agent};
use acp_conductor_tests::{TestChain, binaries};

#[test]
fn an_sdk_built_provider_serves_an_rmcp_agent_through_the_bridge() {
    let binaries = binaries!();
    for version in ["2025-06-18", "2025-11-25"] {
        let mut chain = TestChain::with_test_proxies(&binaries, "mcp-sdk-provider", 1);
        add_sdk_provider(&mut chain, "sdk");
        use_rmcp_agent(&mut chain, &["--mcp-version", version]);
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        let servers = agent_servers(&chain, 0);
        assert_eq!(servers.len(), 1, "{servers:?}");
        assert_eq!(servers[0]["name"], "sdk-tools");
        assert_eq!(servers[0]["args"][0], "mcp-bridge");
        let exchange = editor.prompt(
            &session,
            &[
                "open s sdk-tools",
                "list s",
                r#"call s echo {"text":"from the SDK"}"#,
                r#"call s add {"a":2,"b":3}"#,
                "call s fail",
                "call s nonexistent",
            ]
            .join("\n"),
        );
        assert_eq!(exchange.result()["stopReason"], "end_turn");
        // The SDK passes `mcp/connect` for its own server on toward the editor; the
        // conductor answers it, and the editor never hears of MCP.
        assert!(exchange.requests.is_empty(), "{:?}", exchange.requests);
        let lines = said(&exchange);
        // The server's name and version come from its `server/discover`.
        assert_eq!(lines[0], format!("opened s sdk-tools {version}"));
        let mut tools: Vec<&str> = lines[1]
            .strip_prefix("tools s: ")
            .unwrap_or_else(|| panic!("{lines:?}"))
            .split(',')
            .collect();
        tools.sort_unstable();
        assert_eq!(tools, ["add", "echo", "fail"]);
        assert_eq!(lines[2], "result s echo: from the SDK");
        assert_eq!(lines[3], "result s add: 5");
        // Inner MCP errors stay MCP errors, with the provider's code and message.
        assert_eq!(lines[4], "error s fail: -32603 fail: failed as asked");
        assert!(
            lines[5].starts_with("error s nonexistent: -32602"),
            "{lines:?}"
        );
        let log = editor.stderr();
        assert!(log.contains("MCP server declared by proxy `sdk`"), "{log}");
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}
