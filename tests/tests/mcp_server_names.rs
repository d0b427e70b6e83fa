//! MCP server names that collide: two proxies offering servers of one name, or a proxy's server
//! named like one of the editor's, are refused at session setup before the agent sees it.

use acp_conductor_tests::mcp_chain::{Variant, provider_program};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{Editor, TestChain, binaries};
use serde_json::{Value, json};

/// Appends a connectionless `test-mcp-provider` proxy `name` serving server `server` with `id`.
fn add_provider(chain: &mut TestChain, name: &str, server: &str, id: &str) {
    let program = provider_program(chain);
    let args = [
        "--variant",
        Variant::Connectionless.arg(),
        "--name",
        server,
        "--id",
        id,
    ];
    chain.add_proxy(name, &program, &args);
}

fn session_new(editor: &mut Editor, servers: Value) -> acp_conductor_tests::Exchange {
    editor.request(
        "session/new",
        json!({ "cwd": std::env::temp_dir(), "mcpServers": servers }),
    )
}

fn agent_got_session_new(chain: &TestChain) -> bool {
    chain
        .received(AGENT)
        .iter()
        .any(|m| m["method"] == "session/new")
}

#[test]
fn two_proxies_offering_one_server_name_are_refused_naming_both() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-names-two-proxies");
    add_provider(&mut chain, "first", "tools", "first-tools");
    add_provider(&mut chain, "second", "tools", "second-tools");
    let mut editor = chain.launch();
    editor.initialize();

    let exchange = session_new(&mut editor, json!([]));
    let error = exchange.error();
    assert_eq!(error["code"], -32602, "{}", exchange.response);
    assert_eq!(
        error["message"],
        "MCP server name `tools` is declared more than once: by proxy `first` (over ACP, \
         server id `first-tools`) and by proxy `second` (over ACP, server id `second-tools`); \
         the agent could not tell them apart. Rename one of them (a proxy's server names are \
         in its settings)"
    );
    assert_eq!(error["data"]["mcpServer"], "tools");
    assert!(!agent_got_session_new(&chain), "the agent saw the session");
    assert!(
        editor.stderr().contains("is declared more than once"),
        "the refusal is logged: {}",
        editor.stderr()
    );
}

#[test]
fn a_proxys_server_named_like_one_of_the_editors_is_refused() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "mcp-names-editor");
    add_provider(&mut chain, "provider", "tools", "tools-1");
    let mut editor = chain.launch();
    editor.initialize();

    let editors_own =
        json!([{ "name": "tools", "command": "/usr/bin/true", "args": [], "env": [] }]);
    let exchange = session_new(&mut editor, editors_own);
    let error = exchange.error();
    assert_eq!(error["code"], -32602, "{}", exchange.response);
    assert_eq!(
        error["data"]["declaredBy"],
        json!([
            "a `stdio` server of the editor or a proxy",
            "proxy `provider` (over ACP, server id `tools-1`)"
        ])
    );
    assert!(!agent_got_session_new(&chain), "the agent saw the session");

    // The same chain with names apart works, and the chain is still up after the refusal.
    let other = json!([{ "name": "files", "command": "/usr/bin/true", "args": [], "env": [] }]);
    let exchange = session_new(&mut editor, other);
    assert!(
        exchange.result()["sessionId"].is_string(),
        "{}",
        exchange.response
    );
    assert!(agent_got_session_new(&chain));
}
