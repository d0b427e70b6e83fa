//! Each routing rule of the topology, applied by the router to real frames: who gets what,
//! plain or wrapped, in which dialect, and with which bytes.

use acp_wire::successor::Dialect;

use super::harness::{Spec, json};
use crate::DialectChoice;

#[test]
fn editor_requests_reach_the_agent_directly_without_proxies() {
    let mut chain = Spec::new(0).start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/w"}}"#);
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}"#
    );
}

#[test]
fn initialize_becomes_proxy_initialize_for_a_proxy_and_is_recorded() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#
    );
    // The proxy passes it on to its successor, the agent, which gets plain `initialize`.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#
    );
    let asked = chain.asked.lock().unwrap();
    assert_eq!(
        asked.initialized,
        [
            (
                1,
                r#"{"protocolVersion":1,"clientCapabilities":{}}"#.to_string()
            ),
            (2, r#"{"protocolVersion":1}"#.to_string()),
        ],
        "the components learn what each position was initialized with"
    );
}

#[test]
fn a_proxy_successor_message_goes_to_the_next_proxy_unwrapped() {
    let mut chain = Spec::new(3).start();
    for k in 1..=2 {
        chain.proxy(k).send(
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"n":1}}}"#,
        );
        assert_eq!(
            chain.proxy(k + 1).recv_text(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#
        );
    }
    chain.proxy(3).send(
        r#"{"jsonrpc":"2.0","id":"a","method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s"}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}"#
    );
}

#[test]
fn a_proxys_plain_message_goes_to_its_predecessor_wrapped_or_plain_to_the_editor() {
    let mut chain = Spec::new(2).start();
    chain
        .proxy(2)
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/a"}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"path":"/a"}}}"#
    );
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"path":"/b"}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"/b"}}"#
    );
}

#[test]
fn the_agents_requests_go_to_the_last_proxy_wrapped_or_to_the_editor_plain() {
    let mut chain = Spec::new(2).start();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"x":1}}"#);
    assert_eq!(
        chain.proxy(2).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"x":1}}}"#
    );

    let mut direct = Spec::new(0).start();
    direct
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"x":1}}"#);
    assert_eq!(
        direct.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"x":1}}"#
    );
}

#[test]
fn a_plain_notification_travels_as_the_very_same_bytes() {
    let mut chain = Spec::new(0).start();
    // Member order, spacing and escapes as a peer might write them.
    let original = r#"{"params":{"sessionId":"s","update":{"text":"caf\u00e9 \"q\""}} ,"method":"session/update","jsonrpc":"2.0"}"#;
    chain.agent().send(original);
    assert_eq!(chain.editor.recv_text(), original);
}

#[test]
fn underscore_proxies_are_detected_and_then_addressed_in_their_dialect() {
    let mut chain = Spec::new(1)
        .dialect(DialectChoice::Detect)
        .awaiting_initialize()
        .start();
    let first = chain.editor_sends(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
    );
    assert_eq!(first["method"], "proxy/initialize");
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32601,"message":"Method not found"}}}}"#,
        first["id"]
    ));
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":2,"method":"_proxy/initialize","params":{"protocolVersion":1}}"#
    );
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":1}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], 1);
    // From now on the agent's messages reach it as `_proxy/successor`.
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/update","params":{}}}"#
    );
}

#[test]
fn either_successor_spelling_is_accepted_from_a_pinned_proxy() {
    let mut chain = Spec::new(1)
        .dialect(DialectChoice::Pinned(Dialect::Rfd))
        .start();
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
    );
}

#[test]
fn a_nested_chain_reaches_its_successor_through_the_parent() {
    let mut chain = Spec::new(2).proxy_mode().awaiting_initialize().start();
    // The parent opens the nested chain with proxy/initialize; proxy 1 gets it as such.
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"_proxy/initialize","params":{"protocolVersion":1}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}"#
    );
    // The last proxy's successor is the parent, addressed in the parent's dialect.
    chain.proxy(2).send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{}}}"#,
    );
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/cancel","params":{}}}"#
    );
    // What the parent delivers from our successor goes to the last proxy, wrapped.
    chain.editor.send(
        r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/update","params":{"u":1}}}"#,
    );
    assert_eq!(
        chain.proxy(2).recv_text(),
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"u":1}}}"#
    );
}

#[test]
fn an_editor_sending_proxy_initialize_to_a_terminal_chain_is_told_why() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("run --proxy")
    );
}

#[test]
fn a_malformed_successor_envelope_is_refused_with_invalid_params() {
    let mut chain = Spec::new(1).start();
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":8,"method":"proxy/successor","params":{"params":{}}}"#);
    let answer = chain.proxy(1).recv();
    assert_eq!(answer["id"], 8);
    assert_eq!(answer["error"]["code"], -32602);
}

#[test]
fn the_editor_learns_mcp_over_acp_is_available_from_its_initialize_answer() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    chain.agent().send(
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    );
    assert_eq!(
        chain.editor.recv(),
        json(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"acp":true}}}}"#
        )
    );
}

#[test]
fn the_envelopes_meta_is_hop_local_and_the_wrapped_messages_meta_goes_on() {
    let mut chain = Spec::new(1).proxy_mode().start();
    // From the last proxy, re-wrapped for the parent: the proxy's envelope `_meta` stays behind.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"_meta":{"inner":1}},"_meta":{"hop":"p1"}}}"#,
    );
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"_meta":{"inner":1}}}}"#
    );
    // From the parent, re-wrapped for the last proxy: the parent's envelope `_meta` stays behind.
    chain.editor.send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"_meta":{"inner":2}},"_meta":{"hop":"parent"}}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"_meta":{"inner":2}}}}"#
    );
    // And in a terminal chain, what a proxy sends its successor arrives without it.
    let mut chain = Spec::new(1).start();
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"},"meta":{"old":true},"_meta":{"hop":"p1"}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
    );
}

#[test]
fn initialize_asking_for_a_newer_protocol_version_reaches_the_chain_as_written() {
    // Version 2's params (`info`, `capabilities`) with its version: the agent answers the
    // version it supports, the editor decides.
    let mut chain = Spec::new(1).awaiting_initialize().start();
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"v2"},"capabilities":{"x":"\u0041"}}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":2,"info":{"name":"v2"},"capabilities":{"x":"\u0041"}}}"#
    );

    // A nested conductor passes its parent's `proxy/initialize` on the same way.
    let mut chain = Spec::new(1).proxy_mode().awaiting_initialize().start();
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":"p","method":"proxy/initialize","params":{"protocolVersion":7}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":7}}"#
    );
}

#[test]
fn an_editor_that_asked_for_version_2_can_read_a_version_1_answer() {
    // A version 2 client's schema requires `info`: the version 1 answer gets it (and
    // `capabilities`) beside its own members, so that the client reads the version and decides.
    for proxies in [0, 1] {
        let mut chain = Spec::new(proxies).awaiting_initialize().start();
        chain.editor.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"v2"}}}"#,
        );
        if proxies == 1 {
            chain.proxy(1).recv_text();
            chain.proxy(1).send(
                r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":2,"info":{"name":"v2"}}}}"#,
            );
        }
        chain.agent().recv_text();
        chain.agent().send(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"a","version":"1"}}}"#,
        );
        if proxies == 1 {
            chain.proxy(1).recv_text();
            chain.proxy(1).send(
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}},"agentInfo":{"name":"a","version":"1"}}}"#,
            );
        }
        assert_eq!(
            chain.editor.recv_text(),
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}},"agentInfo":{"name":"a","version":"1"},"info":{"name":"a","version":"1"},"capabilities":{"mcpCapabilities":{"acp":true}}}}"#,
            "{proxies} proxies"
        );
    }
    // A version 1 editor gets the answer as the agent wrote it (but for MCP over ACP).
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    chain.agent().recv_text();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#
    );
}

#[test]
fn params_null_is_carried_as_no_params() {
    let mut chain = Spec::new(1).start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"session/list","params":null}"#);
    // Under our id, with no params (a notification travelling plain keeps its bytes).
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#
    );
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":9,"method":"proxy/successor","params":{"method":"session/list","params":null}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#
    );
}

#[test]
fn a_method_written_with_escapes_is_routed_as_the_method_it_names() {
    let mut chain = Spec::new(1).start();
    // PHP's json_encode writes `/` as `\/`; `\u0073` is an `s`.
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"session\/close","params":{"sessionId":"s\/1"}}"#,
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"s\/1"}}"#
    );
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#
    );
    // A notification goes on as its bytes, the method decoded.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"\u0073ession\/cancel","params":{"sessionId":"s"}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
    );
    // A proxy's wrapper, and the method inside it.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":3,"method":"proxy\/successor","params":{"method":"session\/close","params":{"sessionId":"s"}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"s"}}"#
    );
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session\/cancel","params":{"sessionId":"s"}}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
    );
}

#[test]
fn a_method_that_would_still_need_escapes_is_refused_as_before() {
    let mut chain = Spec::new(1).start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"a\"b","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], -32600);
}
