//! Which bridge an agent that cannot speak MCP over ACP gets: Streamable HTTP when its
//! `initialize` answer offers `mcpCapabilities.http` (or `mcp_bridge = "http"`), a stdio shim
//! otherwise, the declarations unchanged for an agent that speaks MCP over ACP.

use super::harness::{Chain, Spec};
use crate::BridgeForm;

const DECLARING_SESSION: &str = r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","serverId":"n-1"},{"name":"fs","command":"/bin/fs","args":[],"env":[]},{"type":"acp","name":"todo","serverId":"t-1"}]}}}"#;

/// A one-proxy chain whose agent answers `initialize` with `mcp_capabilities`, under `form`.
fn chain_with(form: BridgeForm, mcp_capabilities: &str) -> Chain {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    chain.asked.lock().unwrap().bridge_form = form;
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    chain.proxy(1).recv();
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{}}}"#,
    );
    let init = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"agentCapabilities":{{"mcpCapabilities":{mcp_capabilities}}}}}}}"#,
        init["id"]
    ));
    chain.proxy(1).recv();
    chain
}

fn servers_the_agent_gets(chain: &mut Chain) -> String {
    chain.proxy(1).send(DECLARING_SESSION);
    let session = chain.agent().recv();
    serde_json::to_string(&session["params"]["mcpServers"]).unwrap()
}

#[test]
fn an_agent_that_offers_http_gets_each_server_at_its_own_url_with_the_sessions_secret() {
    let mut chain = chain_with(BridgeForm::Auto, r#"{"http":true,"sse":false}"#);
    assert_eq!(
        servers_the_agent_gets(&mut chain),
        r#"[{"type":"http","name":"notes","url":"http://127.0.0.1:4000/mcp/s1/0","headers":[{"name":"Authorization","value":"Bearer secret-1"}]},{"name":"fs","command":"/bin/fs","args":[],"env":[]},{"type":"http","name":"todo","url":"http://127.0.0.1:4000/mcp/s1/1","headers":[{"name":"Authorization","value":"Bearer secret-1"}]}]"#
    );
    let asked = chain.asked.lock().unwrap();
    assert_eq!(
        asked.http_sessions,
        vec![vec!["n-1".to_string(), "t-1".to_string()]]
    );
    assert_eq!(asked.bridge_opened, 0);
}

#[test]
fn each_session_setup_is_served_apart() {
    let mut chain = chain_with(BridgeForm::Auto, r#"{"http":true}"#);
    servers_the_agent_gets(&mut chain);
    let second = servers_the_agent_gets(&mut chain);
    assert!(
        second.contains("/mcp/s2/0") && second.contains("Bearer secret-2"),
        "{second}"
    );
    assert_eq!(chain.asked.lock().unwrap().http_sessions.len(), 2);
}

#[test]
fn mcp_bridge_stdio_keeps_the_shim_for_an_agent_that_offers_http() {
    let mut chain = chain_with(BridgeForm::Stdio, r#"{"http":true}"#);
    let servers = servers_the_agent_gets(&mut chain);
    assert!(
        servers.starts_with(
            r#"[{"name":"notes","command":"/opt/acp/acp-conductor","args":["mcp-bridge""#
        ),
        "{servers}"
    );
    let asked = chain.asked.lock().unwrap();
    assert!(asked.http_sessions.is_empty());
    assert_eq!(asked.bridge_opened, 1);
}

#[test]
fn an_agent_without_http_gets_the_shim_unless_http_is_forced() {
    let mut auto = chain_with(BridgeForm::Auto, r#"{"http":false}"#);
    assert!(servers_the_agent_gets(&mut auto).contains(r#""args":["mcp-bridge""#));
    let mut forced = chain_with(BridgeForm::Http, r#"{}"#);
    assert!(servers_the_agent_gets(&mut forced).contains(r#""type":"http","name":"notes""#));
}

#[test]
fn an_agent_that_speaks_mcp_over_acp_gets_the_declarations_even_when_it_offers_http() {
    let mut chain = chain_with(BridgeForm::Http, r#"{"acp":true,"http":true}"#);
    let servers = servers_the_agent_gets(&mut chain);
    assert!(
        servers.starts_with(r#"[{"type":"acp","name":"notes","serverId":"n-1"}"#),
        "{servers}"
    );
    assert!(chain.asked.lock().unwrap().http_sessions.is_empty());
}

#[test]
fn a_sessions_http_servers_end_when_its_close_is_answered_or_its_setup_refused() {
    let mut chain = chain_with(BridgeForm::Auto, r#"{"http":true}"#);
    // Session "a": set up, answered; its servers live until the agent answers its close.
    chain.proxy(1).send(DECLARING_SESSION);
    let setup = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"a"}}}}"#,
        setup["id"]
    ));
    chain.proxy(1).recv();
    // A second setup the agent refuses: its servers end at once.
    chain.proxy(1).send(DECLARING_SESSION);
    let refused = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":"no"}}}}"#,
        refused["id"]
    ));
    chain.proxy(1).recv();
    assert_eq!(chain.asked.lock().unwrap().http_closed, ["s2"]);

    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":6,"method":"proxy/successor","params":{"method":"session/close","params":{"sessionId":"a"}}}"#,
    );
    let close = chain.agent().recv();
    assert_eq!(
        chain.asked.lock().unwrap().http_closed,
        ["s2"],
        "not before the agent answers"
    );
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        close["id"]
    ));
    chain.proxy(1).recv();
    assert_eq!(chain.asked.lock().unwrap().http_closed, ["s2", "s1"]);
}

/// An HTTP bridge session (its hello names the setup key of its URL) gets its calls to the
/// provider tagged with the ACP session the setup serves, once the agent has answered it.
#[test]
fn calls_through_an_http_setup_name_its_acp_session() {
    let mut chain = chain_with(BridgeForm::Auto, r#"{"http":true}"#);
    for session in ["a", "b"] {
        chain.proxy(1).send(DECLARING_SESSION);
        let setup = chain.agent().recv();
        chain.agent().send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"{session}"}}}}"#,
            setup["id"]
        ));
        chain.proxy(1).recv();
    }
    // The second setup's (s2) session for server n-1, then the first's (s1).
    for (key, session) in [("s2", "b"), ("s1", "a")] {
        let mut shim = chain.connect_shim();
        shim.send(&crate::mcp::bridge_hello::http_hello_line("n-1", key));
        assert_eq!(shim.recv()["mcpBridge"], "ok");
        shim.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#);
        let call = chain.proxy(1).recv();
        assert_eq!(call["params"]["method"], "mcp/message", "{call}");
        let params = &call["params"]["params"];
        assert_eq!(params["_meta"]["sessionId"], session, "{call}");
        assert_eq!(params["serverId"], "n-1");
    }
    // A stdio shim's calls name no session: its server may serve several.
    let mut shim = chain.connect_shim();
    shim.send(&crate::mcp::bridge_hello::hello_line("n-1"));
    assert_eq!(shim.recv()["mcpBridge"], "ok");
    shim.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#);
    let call = chain.proxy(1).recv();
    assert!(call["params"]["params"].get("_meta").is_none(), "{call}");
}
