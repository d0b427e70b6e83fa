//! `_meta` survives every hop in params and nested inside payloads; the `_meta` of a
//! `proxy/successor` envelope is hop-local (schema 1.20): a conductor in proxy mode that
//! passes a wrapped message between its parent and its last proxy does not carry it on.

use acp_conductor_tests::agent_script;
use acp_conductor_tests::editor::{Editor, initialize_params};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

fn trace_meta(tag: &str) -> Value {
    json!({
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tag": tag,
        "nested": { "list": [1, "two", { "three": 3 }], "null": null }
    })
}

#[test]
fn params_meta_reaches_the_agent_and_the_agents_result_meta_comes_back() {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, "meta-params", 2);
    let mut editor = chain.launch();
    editor.initialize();
    let meta = trace_meta("session/new");
    let exchange = editor.request(
        "session/new",
        json!({ "cwd": "/tmp", "mcpServers": [], "_meta": meta }),
    );
    assert_eq!(exchange.result()["_meta"], agent_script::result_meta(&meta));

    let agent_saw = chain.received(AGENT);
    let new_session = agent_saw
        .iter()
        .find(|m| m["method"] == "session/new")
        .expect("session/new reached the agent");
    assert_eq!(new_session["params"]["_meta"], meta);
    for proxy in ["p1", "p2"] {
        let saw = chain.received(proxy);
        let new_session = saw
            .iter()
            .find(|m| m["method"] == "session/new")
            .expect("session/new reached the proxy");
        assert_eq!(new_session["params"]["_meta"], meta, "{proxy}");
    }
}

#[test]
fn meta_nested_inside_payloads_survives_both_ways() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "meta-nested", 2);
    chain.agent_args(&["--updates", "0"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let params = json!({
        "sessionId": session,
        "prompt": [
            { "type": "text", "text": "hello", "_meta": trace_meta("block") },
            { "type": "resource_link", "uri": "file:///a.rs", "name": "a.rs", "_meta": { "k": [true] } }
        ],
        "_meta": trace_meta("prompt")
    });
    let exchange = editor.request("session/prompt", params.clone());
    assert_eq!(
        exchange.result()["_meta"],
        agent_script::result_meta(&trace_meta("prompt"))
    );

    let agent_saw = chain.received(AGENT);
    let prompt = agent_saw
        .iter()
        .find(|m| m["method"] == "session/prompt")
        .expect("the prompt reached the agent");
    assert_eq!(
        prompt["params"], params,
        "the prompt's params, nested _meta included"
    );
}

/// Starts `chain` as a conductor in proxy mode with the test as its parent, and runs the
/// `proxy/initialize` handshake; returns the parent's end and the `proxy/successor`
/// request that carried `initialize` up to the parent.
fn start_as_child(chain: &TestChain) -> (Editor, Value) {
    let mut parent = chain.launch_with(&["--proxy"]);
    let mut forwarded = None;
    let exchange = parent.request_answering("proxy/initialize", initialize_params(), |request| {
        assert_eq!(request["method"], "proxy/successor", "{request}");
        assert_eq!(request["params"]["method"], "initialize", "{request}");
        forwarded = Some(request.clone());
        Ok(agent_script::initialize_result(&Value::Null))
    });
    assert_eq!(
        exchange.result()["x-extra"],
        json!({ "keep": true }),
        "{}",
        exchange.response
    );
    (parent, forwarded.expect("initialize went up to the parent"))
}

#[test]
fn envelope_meta_from_the_parent_stays_on_its_hop_and_the_wrapped_params_meta_goes_on() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "meta-envelope-down");
    chain.without_agent().conductor_setting("mode", "\"proxy\"");
    chain.add_test_proxy("inner-p");
    let (mut parent, _) = start_as_child(&chain);

    let envelope_meta = trace_meta("envelope from parent");
    let params_meta = trace_meta("params from the agent");
    let id = parent.start_request(
        "proxy/successor",
        json!({
            "method": "fs/read_text_file",
            "params": { "sessionId": "s", "path": "/x", "_meta": params_meta },
            "_meta": envelope_meta
        }),
    );
    let exchange = parent.finish_request(&id, |request| {
        assert_eq!(request["method"], "fs/read_text_file", "{request}");
        Ok(json!({ "content": "x" }))
    });
    assert_eq!(*exchange.result(), json!({ "content": "x" }));

    let saw = chain.received("inner-p");
    let wrapped = saw
        .iter()
        .find(|m| m["method"] == "proxy/successor" && m["params"]["method"] == "fs/read_text_file")
        .unwrap_or_else(|| panic!("inner-p never got the wrapped request: {saw:#?}"));
    assert_eq!(
        wrapped["params"].get("_meta"),
        None,
        "the parent's envelope _meta belongs to the parent's hop: {wrapped}"
    );
    assert_eq!(
        wrapped["params"]["params"],
        json!({ "sessionId": "s", "path": "/x", "_meta": params_meta })
    );
}

#[test]
fn envelope_meta_from_the_last_proxy_stays_on_its_hop() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "meta-envelope-up");
    chain.without_agent().conductor_setting("mode", "\"proxy\"");
    let meta = json!({ "trace": "inner-p", "n": [1, 2] });
    chain
        .add_test_proxy("inner-p")
        .args(&["--envelope-meta", &meta.to_string()]);
    let (mut parent, initialize) = start_as_child(&chain);
    assert_eq!(initialize["params"].get("_meta"), None, "{initialize}");

    let id = parent.start_request("session/new", json!({ "cwd": "/tmp", "mcpServers": [] }));
    let mut forwarded = None;
    let exchange = parent.finish_request(&id, |request| {
        forwarded = Some(request.clone());
        Ok(json!({ "sessionId": "s-up" }))
    });
    assert_eq!(exchange.result()["sessionId"], "s-up");
    let forwarded = forwarded.expect("session/new went up to the parent");
    assert_eq!(forwarded["method"], "proxy/successor");
    assert_eq!(forwarded["params"]["method"], "session/new");
    assert_eq!(
        forwarded["params"].get("_meta"),
        None,
        "inner-p's envelope _meta belongs to inner-p's hop: {forwarded}"
    );
    assert_eq!(
        forwarded["params"]["params"],
        json!({ "cwd": "/tmp", "mcpServers": [] })
    );
}
