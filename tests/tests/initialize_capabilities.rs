//! Initialization through the chain: proxies are told `mcpCapabilities.acp: true`, every
//! other field of the agent's answer (unknown ones included) reaches the editor unchanged,
//! and unknown fields of the editor's request reach the agent. The protocol version is the
//! editor's and the agent's to settle: a version 2 `initialize` reaches the agent as written.

use acp_conductor_tests::agent_script;
use acp_conductor_tests::editor::initialize_params;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries, views};
use serde_json::{Value, json};

/// The editor's `initialize` params with fields no schema knows, at several depths.
fn params_with_unknown_fields() -> Value {
    let mut params = initialize_params();
    params["x-client-extra"] = json!({ "deep": [1, { "a": null }], "big": 9007199254740993u64 });
    params["clientCapabilities"]["x-cap"] = json!({ "on": true });
    params["_meta"] =
        json!({ "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" });
    params
}

fn without_acp(result: &Value) -> Value {
    let view =
        views::without_acp_capability(vec![views::Seen::Response(json!({ "result": result }))]);
    match &view[0] {
        views::Seen::Response(outcome) => outcome["result"].clone(),
        other => unreachable!("a response stays a response: {other:?}"),
    }
}

fn initialize_through(proxies: usize) {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, &format!("init-{proxies}"), proxies);
    let mut editor = chain.launch();
    let params = params_with_unknown_fields();
    let exchange = editor.request("initialize", params.clone());

    let expected = agent_script::initialize_result(&params["_meta"]);
    assert_eq!(
        without_acp(exchange.result()),
        without_acp(&expected),
        "the agent's InitializeResponse, every field but mcpCapabilities.acp"
    );

    let agent_saw = chain.received(AGENT);
    assert_eq!(agent_saw[0]["method"], "initialize");
    assert_eq!(
        agent_saw[0]["params"], params,
        "the agent's initialize params"
    );

    for i in 1..=proxies {
        let name = format!("p{i}");
        let proxy_saw = chain.received(&name);
        assert_eq!(proxy_saw[0]["method"], "proxy/initialize");
        assert_eq!(
            proxy_saw[0]["params"], params,
            "{name}'s proxy/initialize params"
        );
        let answer = chain.init_response(&name);
        assert_eq!(
            answer["result"]["agentCapabilities"]["mcpCapabilities"]["acp"], true,
            "{name} must be told mcpCapabilities.acp: true, got {answer}"
        );
        assert_eq!(
            without_acp(&answer["result"]),
            without_acp(&expected),
            "{name} sees the rest of the agent's answer unchanged"
        );
    }
}

#[test]
fn agent_initialize_response_reaches_the_editor_unchanged_without_proxies() {
    initialize_through(0);
}

#[test]
fn proxies_see_mcp_acp_capability_and_the_rest_passes_unchanged() {
    initialize_through(2);
}

/// A version 2 client's `initialize`, as the TypeScript SDK's v2 client shapes it: version 2, and
/// `info` and `capabilities` where version 1 has `clientInfo` and `clientCapabilities`.
const V2_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"v2-client","version":"0.1.0"},"capabilities":{"plan":{},"auth":{"terminal":true}}}}"#;

/// Version negotiation is ACP's: the agent answers with the version it supports and the client
/// decides. The conductor used to lower the version to 1 on the way and keep the version 2
/// params, so that a version 1 agent saw version 1 with no `clientCapabilities`.
#[test]
fn a_version_2_initialize_reaches_the_agent_as_written_through_proxies() {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, "init-v2", 1);
    let mut editor = chain.launch();
    editor.send_line(V2_INITIALIZE);
    let answer = editor.recv();
    assert_eq!(answer["id"], 0, "{answer}");
    assert!(answer.get("result").is_some(), "a version answer: {answer}");

    let sent: Value = serde_json::from_str(V2_INITIALIZE).unwrap();
    let agent_saw = chain.received(AGENT);
    assert_eq!(agent_saw[0]["method"], "initialize");
    assert_eq!(
        agent_saw[0]["params"], sent["params"],
        "the agent's initialize params"
    );
    let proxy_saw = chain.received("p1");
    assert_eq!(proxy_saw[0]["method"], "proxy/initialize");
    assert_eq!(
        proxy_saw[0]["params"], sent["params"],
        "p1's proxy/initialize params"
    );
}

/// The demo agent speaks version 1: a version 2 client gets that as its answer, with the demo's
/// capabilities, not an error, in members it can read.
#[test]
fn a_version_2_client_gets_the_demo_agents_version_1_answer() {
    let binaries = binaries!();
    let chain = TestChain::with_demo_agent(&binaries, "init-v2-demo");
    let mut editor = chain.launch();
    editor.send_line(V2_INITIALIZE);
    let answer = editor.recv();
    assert_eq!(answer["id"], 0, "{answer}");
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    assert_eq!(
        answer["result"]["agentInfo"]["name"], "acp-conductor-demo",
        "{answer}"
    );
    // Readable by a version 2 client, whose schema requires `info`: version 2's members beside
    // version 1's (the TypeScript SDK's v2 client refused the answer without them).
    assert_eq!(
        answer["result"]["info"], answer["result"]["agentInfo"],
        "{answer}"
    );
    assert_eq!(
        answer["result"]["capabilities"], answer["result"]["agentCapabilities"],
        "{answer}"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}
