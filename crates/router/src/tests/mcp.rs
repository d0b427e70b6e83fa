//! MCP over ACP as the router handles it: declarations rewritten into bridge shims for an
//! agent that cannot speak it, a shim's lines relayed to the server's owner and back, and
//! the agent's own `mcp/*` going straight to the owner when it can.

use super::harness::{Chain, Peer, Spec};

const DECLARING_SESSION: &str = r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","id":"n-1"},{"name":"fs","command":"/bin/fs","args":[],"env":[]}]}}}"#;

/// A chain whose proxy 1 declared the server `n-1` in a session the agent was given.
fn declared(chain: &mut Chain) -> serde_json::Value {
    chain.proxy(1).send(DECLARING_SESSION);
    chain.agent().recv()
}

#[test]
fn declarations_become_bridge_shims_for_an_agent_that_cannot_speak_mcp_over_acp() {
    let mut chain = Spec::new(1).start();
    let session = declared(&mut chain);
    assert_eq!(
        serde_json::to_string(&session["params"]["mcpServers"]).unwrap(),
        r#"[{"name":"notes","command":"/opt/acp/acp-conductor","args":["mcp-bridge","--socket","/run/acp/bridge.sock","--server","n-1"],"env":[]},{"name":"fs","command":"/bin/fs","args":[],"env":[]}]"#
    );
    assert_eq!(chain.asked.lock().unwrap().bridge_opened, 1);
}

/// Opens a shim for `n-1` and has proxy 1 accept the connection as `c-7`.
fn connected_shim(chain: &mut Chain) -> Peer {
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    let connect = chain.proxy(1).recv();
    assert_eq!(connect["method"], "proxy/successor");
    assert_eq!(connect["params"]["method"], "mcp/connect");
    assert_eq!(connect["params"]["params"]["acpId"], "n-1");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c-7"}}}}"#,
        connect["id"]
    ));
    shim
}

#[test]
fn a_shims_mcp_lines_reach_the_owner_as_mcp_message_and_come_back() {
    let mut chain = Spec::new(1).start();
    declared(&mut chain);
    let mut shim = connected_shim(&mut chain);
    shim.send(r#"{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{"name":"recall"}}"#);
    let message = chain.proxy(1).recv();
    assert_eq!(message["params"]["method"], "mcp/message");
    let inner = &message["params"]["params"];
    assert_eq!(inner["connectionId"], "c-7");
    assert_eq!(inner["method"], "tools/call");
    assert_eq!(inner["params"]["name"], "recall");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[]}}}}"#,
        message["id"]
    ));
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":"t1","result":{"content":[]}}"#
    );
    // The server's own request to the agent's client, and the client's answer.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":40,"method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"c-7","method":"sampling/createMessage","params":{"n":1}}}}"#,
    );
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"n":1}}"#
    );
    shim.send(r#"{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":40,"result":{"text":"hi"}}"#
    );
}

#[test]
fn a_shim_that_leaves_disconnects_its_connection() {
    let mut chain = Spec::new(1).start();
    declared(&mut chain);
    let mut shim = connected_shim(&mut chain);
    shim.close();
    let disconnect = chain.proxy(1).recv();
    assert_eq!(disconnect["params"]["method"], "mcp/disconnect");
    assert_eq!(disconnect["params"]["params"]["connectionId"], "c-7");
    shim.recv_end();
}

#[test]
fn a_shim_naming_an_undeclared_server_is_refused() {
    let chain = Spec::new(1).start();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"nobody"}"#);
    let refusal = shim.recv();
    assert_eq!(refusal["mcpBridge"], "refused");
    assert_eq!(
        refusal["reason"],
        "no MCP server with id `nobody` was declared in this chain"
    );
    shim.recv_end();
}

#[test]
fn an_agent_that_speaks_mcp_over_acp_reaches_the_owner_directly() {
    let mut chain = Spec::new(2).awaiting_initialize().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    // Each proxy passes initialize on; the agent says it speaks MCP over ACP.
    for k in 1..=2 {
        chain.proxy(k).recv();
        chain.proxy(k).send(
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{}}}"#,
        );
    }
    let init = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"agentCapabilities":{{"mcpCapabilities":{{"acp":true}}}}}}}}"#,
        init["id"]
    ));
    chain.proxy(2).recv();
    // Proxy 1 declares a server in a session; it reaches the agent through proxy 2.
    chain.proxy(1).send(DECLARING_SESSION);
    let passed = chain.proxy(2).recv();
    chain.proxy(2).send(&format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"proxy/successor","params":{{"method":"session/new","params":{}}}}}"#,
        passed["params"]
    ));
    let session = chain.agent().recv();
    assert_eq!(session["params"]["mcpServers"][0]["type"], "acp");
    // The agent's mcp/connect goes to proxy 1, past proxy 2.
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":"mc","method":"mcp/connect","params":{"acpId":"n-1"}}"#);
    let connect = chain.proxy(1).recv();
    assert_eq!(connect["method"], "proxy/successor");
    assert_eq!(connect["params"]["method"], "mcp/connect");
    assert!(
        chain.proxy(2).has_pending().is_none(),
        "proxy 2 is not involved"
    );
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c"}}}}"#,
        connect["id"]
    ));
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":"mc","result":{"connectionId":"c"}}"#
    );
    assert_eq!(chain.asked.lock().unwrap().bridge_opened, 0);
}

#[test]
fn a_shims_bad_lines_are_answered_only_when_someone_can_match_the_answer() {
    let mut chain = Spec::new(1).start();
    declared(&mut chain);
    let mut shim = connected_shim(&mut chain);
    // The server asks the agent's client something; the client's answer is broken.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":41,"method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"c-7","method":"roots/list","params":{}}}}"#,
    );
    let asked = shim.recv();
    shim.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"error":{{"code":1,"message":"m"}}}}"#,
        asked["id"]
    ));
    let answer = chain.proxy(1).recv();
    assert_eq!(answer["id"], 41);
    assert_eq!(answer["error"]["code"], -32603);
    // No answer for a line with no id, nor for a response to nothing; one with its id for a
    // request that is not JSON-RPC 2.0.
    shim.send("MCP client v0.1 ready");
    shim.send(r#"{"jsonrpc":"2.0","id":77,"result":1,"error":{"code":1,"message":"m"}}"#);
    shim.send(r#"{"jsonrpc":"1.0","id":"old","method":"tools/list"}"#);
    let answer = shim.recv();
    assert_eq!(answer["id"], "old", "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
    let skipped = chain.editor_leaves();
    assert_eq!(skipped.invalid_lines, 4);
}

#[test]
fn a_relayed_mcp_method_that_needs_escaping_reaches_the_shim_as_valid_json() {
    let mut chain = Spec::new(1).start();
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","id":"n-1"}]}}}"#);
    chain.agent().recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    let connect = chain.proxy(1).recv();
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c-7"}}}}"#,
        connect["id"]
    ));
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"c-7","method":"a\"b"}}}"#);
    let line = shim.recv_text();
    let parsed: serde_json::Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("the shim got invalid JSON ({e}): {line}"));
    assert_eq!(parsed["method"], "a\"b");
}

#[test]
fn an_editor_request_waiting_on_a_shim_is_answered_when_the_editor_leaves() {
    let mut chain = Spec::new(0).start();
    chain.editor.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"type":"acp","name":"e","id":"e-1"}]}}"#);
    chain.agent().recv();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#);
    chain.editor.recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"e-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    let connect = chain.editor.recv();
    assert_eq!(connect["method"], "mcp/connect");
    chain.editor.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c"}}}}"#,
        connect["id"]
    ));
    chain.editor.send(r#"{"jsonrpc":"2.0","id":"ask","method":"mcp/message","params":{"connectionId":"c","method":"sampling/createMessage","params":{}}}"#);
    assert_eq!(shim.recv()["method"], "sampling/createMessage");
    // The editor leaves; the agent's MCP client never answers.
    chain.editor.close();
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "ask");
    assert_eq!(answer["error"]["code"], -32002);
}

#[test]
fn a_broken_answer_to_the_bridges_connect_is_answered_to_the_shim_in_mcp_terms() {
    let mut chain = Spec::new(1).start();
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","id":"n-1"}]}}}"#);
    chain.agent().recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    let connect = chain.proxy(1).recv();
    assert_eq!(connect["params"]["method"], "mcp/connect");
    // The agent's MCP client starts while the connect is unanswered; then the proxy answers
    // it with a line that is not JSON.
    shim.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    chain.proxy(1).send(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"connectionId\":\"c\u{0}\"}}}}",
        connect["id"]
    ));
    let answer = shim.recv();
    assert_eq!(
        answer["id"], 1,
        "the shim's own request, not id null: {answer}"
    );
    assert_eq!(answer["error"]["code"], -32001);
}

#[test]
fn a_proxys_server_named_like_the_editors_is_refused_and_the_agent_never_sees_the_session() {
    let mut chain = Spec::new(1).start();
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"notes","command":"/bin/notes","args":[],"env":[]},{"type":"acp","name":"notes","serverId":"n-1"}]}}}"#);
    let refused = chain.proxy(1).recv();
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(
        refused["error"]["message"],
        "MCP server name `notes` is declared more than once: by a `stdio` server of the editor \
         or a proxy and by proxy `p1` (over ACP, server id `n-1`); the agent could not tell \
         them apart. Rename one of them (a proxy's server names are in its settings)"
    );
    assert_eq!(refused["error"]["data"]["mcpServer"], "notes");
    // Nothing reached the agent: the next thing it gets is the next request.
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","id":6,"method":"proxy/successor","params":{"method":"session/list","params":{}}}"#);
    assert_eq!(chain.agent().recv()["method"], "session/list");
}

#[test]
fn two_proxies_offering_servers_of_one_name_are_refused_naming_both() {
    let mut chain = Spec::new(2).start();
    chain.proxy(1).send(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools","serverId":"a-1"}]}}}"#);
    let at_p2 = chain.proxy(2).recv();
    assert_eq!(at_p2["method"], "session/new");
    chain.proxy(2).send(r#"{"jsonrpc":"2.0","id":8,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools","serverId":"a-1"},{"type":"acp","name":"tools","serverId":"b-2"}]}}}"#);
    let refused = chain.proxy(2).recv();
    assert_eq!(refused["id"], 8);
    assert_eq!(
        refused["error"]["data"]["declaredBy"],
        serde_json::json!([
            "proxy `p1` (over ACP, server id `a-1`)",
            "proxy `p2` (over ACP, server id `b-2`)"
        ])
    );
}

const SERVER_ID_SESSION: &str = r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","serverId":"n-1"}]}}}"#;

/// A shim for `n-1`, declared with `serverId`, whose agent sent `initialize`; returns the
/// shim and what proxy 1 got for it.
fn server_id_shim_initializing(chain: &mut Chain) -> (Peer, serde_json::Value) {
    chain.proxy(1).send(SERVER_ID_SESSION);
    chain.agent().recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    shim.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}"#);
    let first = chain.proxy(1).recv();
    (shim, first)
}

#[test]
fn a_server_declared_with_server_id_is_spoken_to_connectionless_from_the_start() {
    let mut chain = Spec::new(1).start();
    let (mut shim, discover) = server_id_shim_initializing(&mut chain);
    assert_eq!(
        discover["params"]["method"], "mcp/message",
        "no mcp/connect first"
    );
    let inner = &discover["params"]["params"];
    assert_eq!(inner["serverId"], "n-1");
    assert_eq!(inner["method"], "server/discover");
    assert!(inner["requestId"].is_string(), "{inner}");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"result":{{"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"notes","version":"2"}}}}}}}}"#,
        discover["id"]
    ));
    let answer = shim.recv();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["result"]["serverInfo"]["name"], "notes");
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn an_older_server_id_provider_that_refuses_connectionless_is_connected_instead() {
    let mut chain = Spec::new(1).start();
    let (mut shim, discover) = server_id_shim_initializing(&mut chain);
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"unknown connection"}}}}"#,
        discover["id"]
    ));
    let connect = chain.proxy(1).recv();
    assert_eq!(connect["params"]["method"], "mcp/connect");
    assert_eq!(connect["params"]["params"]["serverId"], "n-1");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c-1"}}}}"#,
        connect["id"]
    ));
    // The agent's initialize goes to the provider on the connection, once.
    let initialize = chain.proxy(1).recv();
    let inner = &initialize["params"]["params"];
    assert_eq!(inner["connectionId"], "c-1");
    assert_eq!(inner["method"], "initialize");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"old","version":"1"}}}}}}"#,
        initialize["id"]
    ));
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}"#
    );
}

#[test]
fn the_agents_mcp_cancellation_reaches_a_connectionless_provider_as_a_plain_cancel() {
    let mut chain = Spec::new(1).start();
    let (mut shim, discover) = server_id_shim_initializing(&mut chain);
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"result":{{"capabilities":{{"tools":{{}}}}}}}}}}"#,
        discover["id"]
    ));
    shim.recv();
    shim.send(r#"{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"slow"}}"#);
    let call = chain.proxy(1).recv();
    assert_eq!(call["params"]["params"]["method"], "tools/call");
    shim.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv(),
        serde_json::json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":call["id"]}}),
        "plain, naming the proxy/successor request of this hop"
    );
}
