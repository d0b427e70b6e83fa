//! Valid messages at the wrong time or from the wrong side: before or twice `initialize`,
//! `proxy/successor` and `proxy/initialize` from an end, responses to nothing or answered twice.

use acp_conductor_tests::agent_script::{ANSWER, EMIT, HANGING, Recipe};
use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::{Editor, initialize_params, prompt_params, refuse};
use acp_conductor_tests::scenario::chunk_of;
use acp_conductor_tests::test_chain::AGENT;
use serde_json::json;

use super::harness::{
    agent_got_error_for, agent_got_responses, agent_writes, assert_not_routed, chain, expect_error,
    only_the_turn_ended, started, still_serves,
};

// Before initialize.

#[test]
fn requests_before_initialize_are_refused_and_notifications_dropped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "early-editor", 1, &[]);
    let mut editor = chain.launch();
    editor.notify("session/cancel", json!({ "sessionId": "s" }));
    let early = editor.start_request_with_id(
        r#""early""#,
        "session/prompt",
        prompt_params("s", "before initialize"),
    );
    let message = expect_error(&mut editor, r#""early""#, -32600);
    assert_eq!(
        message,
        "`initialize` must come first; `session/prompt` arrived before it"
    );
    assert_eq!(early, json!("early"));
    editor.initialize();
    still_serves(&mut editor);
    // Neither reached a component.
    for name in ["p1", AGENT] {
        let recorded = chain.recording(name);
        assert!(
            recorded.iter().all(|line| !line.contains("before initialize") && !line.contains("session/cancel")),
            "{name}: {recorded:?}"
        );
    }
    assert_not_routed(editor, &[("before_initialize", 2)]);
}

#[test]
fn an_agent_request_before_initialize_is_refused() {
    let binaries = binaries!();
    let on_start = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":"too-early","method":"fs/read_text_file","params":{"path":"/etc/hostname"}}"#)
        .line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"too":"early"}}"#);
    let chain = chain(
        &binaries,
        "early-agent",
        1,
        &["--on-start", &on_start.words()],
    );
    let mut editor = chain.launch();
    // The agent spoke first; the conductor refused it before the editor's initialize.
    editor.wait_for_stderr("notification refused");
    editor.initialize();
    still_serves(&mut editor);
    let error = agent_got_error_for(&chain, &json!("too-early"));
    assert_eq!(error["code"], -32600);
    assert_eq!(
        error["message"],
        "`initialize` must come first; `fs/read_text_file` arrived before it"
    );
    assert_not_routed(editor, &[("before_initialize", 2)]);
}

// A second initialize.

#[test]
fn a_second_initialize_is_refused_even_while_the_first_is_pending() {
    let binaries = binaries!();
    let chain = chain(&binaries, "second-init", 1, &[]);
    let mut editor = chain.launch();
    let first = editor.start_request("initialize", initialize_params());
    let second = editor.start_request("initialize", initialize_params());
    let refused = editor.finish_request(&second, refuse);
    assert_eq!(refused.error()["code"], -32600);
    assert_eq!(
        refused.error()["message"],
        "`initialize` was already received; the chain is initialized once"
    );
    assert_eq!(
        editor.finish_request(&first, refuse).result()["protocolVersion"],
        1
    );
    let third = editor.request("initialize", initialize_params());
    assert_eq!(third.error()["code"], -32600);
    still_serves(&mut editor);
    let agent_initializes = chain
        .received(AGENT)
        .iter()
        .filter(|m| m["method"] == "initialize")
        .count();
    assert_eq!(agent_initializes, 1);
    assert_not_routed(editor, &[("second_initialize", 2)]);
}

// proxy/successor and proxy/initialize from the wrong side.

/// The editor wraps a `session/prompt` in `successor`, as if it came from the agent.
fn smuggle(editor: &mut Editor, successor: &str, raw_id: Option<&str>, marker: &str) {
    let envelope = json!({
        "method": "session/prompt",
        "params": prompt_params("s", marker),
    });
    match raw_id {
        Some(id) => {
            editor.start_request_with_id(id, successor, envelope);
        }
        None => editor.notify(successor, envelope),
    }
}

#[test]
fn the_editor_cannot_pose_as_the_agent_in_either_dialect() {
    let binaries = binaries!();
    for (successor, dialect) in [
        ("proxy/successor", "rfd"),
        ("_proxy/successor", "underscore"),
    ] {
        let mut chain = chain(&binaries, "smuggle", 1, &[]);
        chain.proxies[0].args(&["--dialect", dialect]);
        let mut editor = started(&chain);
        let marker = format!("SMUGGLED through {successor}");
        smuggle(&mut editor, successor, Some(r#""smuggler""#), &marker);
        let message = expect_error(&mut editor, r#""smuggler""#, -32601);
        assert_eq!(
            message,
            format!(
                "`{successor}` is how a proxy talks to its successor; the editor cannot send it"
            )
        );
        smuggle(&mut editor, successor, None, &marker);
        // The editor gets no session/prompt of its own back, and the proxy never saw it.
        still_serves(&mut editor);
        for name in ["p1", AGENT] {
            let recorded = chain.recording(name);
            assert!(
                recorded.iter().all(|line| !line.contains(&marker)),
                "{name} saw the smuggled prompt: {recorded:?}"
            );
        }
        assert!(
            editor
                .transcript
                .iter()
                .filter(
                    |(direction, _)| *direction == acp_conductor_tests::editor::Direction::Received
                )
                .all(|(_, line)| !line.contains(&marker)),
            "the editor got its smuggled prompt back"
        );
        assert_not_routed(editor, &[("wrong_sender", 2)]);
    }
}

#[test]
fn the_editor_of_a_terminal_chain_cannot_send_proxy_initialize() {
    let binaries = binaries!();
    let chain = chain(&binaries, "editor-proxy-init", 1, &[]);
    let mut editor = chain.launch();
    let refused = editor.request("proxy/initialize", initialize_params());
    assert_eq!(refused.error()["code"], -32600);
    assert!(
        refused.error()["message"]
            .as_str()
            .unwrap()
            .contains("run --proxy"),
        "{}",
        refused.response
    );
    editor.initialize();
    still_serves(&mut editor);
    assert_not_routed(editor, &[("wrong_sender", 1)]);
}

#[test]
fn the_agent_cannot_send_proxy_successor_or_proxy_initialize() {
    let binaries = binaries!();
    let chain = chain(&binaries, "agent-successor", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":"agent-successor","method":"proxy/successor","params":{"method":"session/prompt","params":{"text":"AGENT-SMUGGLED"}}}"#)
        .line(r#"{"jsonrpc":"2.0","id":"agent-underscore","method":"_proxy/successor","params":{"method":"session/prompt","params":{"text":"AGENT-SMUGGLED"}}}"#)
        .line(r#"{"jsonrpc":"2.0","id":"agent-init","method":"proxy/initialize","params":{}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    for id in ["agent-successor", "agent-underscore", "agent-init"] {
        assert_eq!(
            agent_got_error_for(&chain, &json!(id))["code"],
            -32601,
            "{id}"
        );
    }
    let proxy_saw = chain.recording("p1");
    assert!(
        proxy_saw
            .iter()
            .all(|line| !line.contains("AGENT-SMUGGLED") && !line.contains("agent-init")),
        "{proxy_saw:?}"
    );
    assert_not_routed(editor, &[("wrong_sender", 3)]);
}

// Responses to unknown ids, duplicate responses, responses after a cancel.

#[test]
fn responses_to_unknown_ids_are_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "unknown-id", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line(r#"{"jsonrpc":"2.0","id":4242,"result":{}}"#);
    editor.send_line(r#"{"jsonrpc":"2.0","id":"nobody","error":{"code":-32601,"message":"m"}}"#);
    let recipe = Recipe::new().line(r#"{"jsonrpc":"2.0","id":999,"result":{"stray":true}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_not_routed(editor, &[("unknown_responses", 3)]);
}

#[test]
fn a_second_response_from_the_agent_is_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "duplicate-agent", 1, &[]);
    let mut editor = started(&chain);
    let twice = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"end_turn"}}"#)
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"refusal"}}"#);
    let exchange = agent_writes(&mut editor, ANSWER, &twice);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    still_serves(&mut editor);
    assert_not_routed(editor, &[("duplicate_responses", 1)]);
}

#[test]
fn a_second_answer_from_the_editor_is_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "duplicate-editor", 1, &[]);
    let mut editor = started(&chain);
    let session = editor.new_session();
    let id = editor.start_request(
        "session/prompt",
        prompt_params(&session, "permission please"),
    );
    let asked = editor.wait_for(|m| m["method"] == "session/request_permission");
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}});
    editor.send(&answer);
    editor.send(&answer);
    let exchange = editor.finish_request(&id, refuse);
    assert_eq!(
        exchange.chunk_texts().last().map(String::as_str),
        Some("permission selected allow-once")
    );
    still_serves(&mut editor);
    let permission_answers = agent_got_responses(&chain).len();
    assert_eq!(permission_answers, 1, "the agent was answered once");
    assert_not_routed(editor, &[("duplicate_responses", 1)]);
}

#[test]
fn a_response_after_the_cancelled_answer_is_dropped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "after-cancel", 1, &["--answer-after-cancel"]);
    let mut editor = started(&chain);
    let session = editor.new_session();
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some(HANGING));
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    let cancelled = editor.finish_request(&id, refuse);
    assert_eq!(cancelled.error()["code"], -32800, "{}", cancelled.response);
    // The agent's late result for the same prompt never reaches the editor.
    let session = editor.new_session();
    let exchange = editor.prompt(&session, "after");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert!(exchange.other_responses.is_empty(), "{exchange:?}");
    // A cancel for the prompt no longer waiting goes nowhere.
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    still_serves(&mut editor);
    assert_not_routed(editor, &[("duplicate_responses", 1), ("stale_cancels", 1)]);
}
