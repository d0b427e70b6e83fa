//! Readable JSON that is no valid JSON-RPC message: not an object, a batch, a wrong `jsonrpc`,
//! `method` with `result`, `result` with `error`, ids of invalid types; from either end.

use acp_conductor_tests::agent_script::{ANSWER, EMIT, Recipe};
use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::{prompt_params, refuse};
use acp_conductor_tests::test_chain::AGENT;
use serde_json::json;

use super::harness::{
    NONE, agent_errors, agent_got_error_for, agent_writes, assert_not_routed, chain, expect_error,
    only_the_turn_ended, started, still_serves,
};

// JSON that is not an object.

#[test]
fn json_that_is_not_an_object_from_the_editor_is_an_invalid_request() {
    let binaries = binaries!();
    let chain = chain(&binaries, "scalar-editor", 1, &[]);
    let mut editor = started(&chain);
    for line in ["42", r#""session/new""#, "null", "true"] {
        editor.send_line(line);
        let message = expect_error(&mut editor, "null", -32600);
        assert_eq!(
            message,
            "not a JSON-RPC 2.0 message: expected a JSON object"
        );
    }
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 4)]);
}

#[test]
fn json_that_is_not_an_object_from_the_agent_is_skipped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "scalar-agent", 1, &[]);
    let mut editor = started(&chain);
    only_the_turn_ended(&agent_writes(
        &mut editor,
        EMIT,
        &Recipe::new().line("42").line(r#""ok""#),
    ));
    still_serves(&mut editor);
    assert_eq!(agent_errors(&chain), NONE, "the agent got an error back");
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// Batches.

#[test]
fn a_batch_from_the_editor_is_an_invalid_request_and_none_of_it_is_routed() {
    let binaries = binaries!();
    let chain = chain(&binaries, "batch-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line(r#"[{"jsonrpc":"2.0","id":"in-batch","method":"session/new","params":{}}]"#);
    let message = expect_error(&mut editor, "null", -32600);
    assert_eq!(message, "JSON-RPC batches are not supported");
    editor.send_line("[]");
    expect_error(&mut editor, "null", -32600);
    still_serves(&mut editor);
    let agent_sessions = chain
        .received(AGENT)
        .iter()
        .filter(|m| m["method"] == "session/new")
        .count();
    assert_eq!(
        agent_sessions, 1,
        "only still_serves's session reached the agent"
    );
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

#[test]
fn a_batch_from_the_agent_is_skipped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "batch-agent", 1, &[]);
    let mut editor = started(&chain);
    let batch = Recipe::new().line(
        r#"[{"jsonrpc":"2.0","method":"session/update","params":{"in":"batch"}},{"jsonrpc":"2.0","method":"session/update","params":{}}]"#,
    );
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &batch));
    still_serves(&mut editor);
    assert_eq!(agent_errors(&chain), NONE, "the agent got an error back");
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

// A wrong or missing `jsonrpc`.

#[test]
fn a_wrong_or_missing_jsonrpc_from_the_editor_is_an_invalid_request_with_its_id() {
    let binaries = binaries!();
    let chain = chain(&binaries, "version-editor", 1, &[]);
    let mut editor = started(&chain);
    for (line, id) in [
        (
            r#"{"id":"none","method":"session/new","params":{}}"#,
            r#""none""#,
        ),
        (
            r#"{"jsonrpc":"1.0","id":"old","method":"session/new","params":{}}"#,
            r#""old""#,
        ),
        (
            r#"{"jsonrpc":2.0,"id":3,"method":"session/new","params":{}}"#,
            "3",
        ),
    ] {
        editor.send_line(line);
        let message = expect_error(&mut editor, id, -32600);
        assert_eq!(
            message,
            "not a JSON-RPC 2.0 message: `jsonrpc` must be \"2.0\""
        );
    }
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 3)]);
}

#[test]
fn a_wrong_jsonrpc_from_the_agent_is_answered_with_its_id() {
    let binaries = binaries!();
    let chain = chain(&binaries, "version-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line(r#"{"jsonrpc":"1.0","id":"agent-old","method":"fs/read_text_file","params":{}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_eq!(
        agent_got_error_for(&chain, &json!("agent-old"))["code"],
        -32600
    );
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

// `method` with `result`.

#[test]
fn a_request_carrying_a_result_from_the_editor_is_an_invalid_request() {
    let binaries = binaries!();
    let chain = chain(&binaries, "method-result-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line(
        r#"{"jsonrpc":"2.0","id":"both","method":"session/new","params":{},"result":{}}"#,
    );
    let message = expect_error(&mut editor, r#""both""#, -32600);
    assert_eq!(
        message,
        "not a JSON-RPC 2.0 message: a request cannot carry `result` or `error`"
    );
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

#[test]
fn a_request_carrying_a_result_from_the_agent_is_answered_with_its_id() {
    let binaries = binaries!();
    let chain = chain(&binaries, "method-result-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":"agent-both","method":"fs/read_text_file","params":{},"result":{}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_eq!(
        agent_got_error_for(&chain, &json!("agent-both"))["code"],
        -32600
    );
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

// `result` with `error`.

#[test]
fn a_response_with_result_and_error_from_the_editor_is_never_answered() {
    let binaries = binaries!();
    let chain = chain(&binaries, "result-error-editor", 1, &[]);
    let mut editor = started(&chain);
    // To no request: dropped, and the editor hears nothing back.
    editor.send_line(r#"{"jsonrpc":"2.0","id":77,"result":{},"error":{"code":1,"message":"m"}}"#);
    // To the agent's permission request: the agent gets an error in its place.
    let session = editor.new_session();
    let id = editor.start_request(
        "session/prompt",
        prompt_params(&session, "permission please"),
    );
    let asked = editor.wait_for(|m| m["method"] == "session/request_permission");
    editor.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"outcome":{{"outcome":"cancelled"}}}},"error":{{"code":1,"message":"m"}}}}"#,
        asked["id"]
    ));
    let exchange = editor.finish_request(&id, refuse);
    assert_eq!(
        exchange.chunk_texts().last().map(String::as_str),
        Some("permission error -32603"),
        "{exchange:?}"
    );
    assert!(exchange.other_responses.is_empty(), "{exchange:?}");
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

#[test]
fn a_response_with_result_and_error_from_the_agent_answers_the_prompt_with_an_error() {
    let binaries = binaries!();
    let chain = chain(&binaries, "result-error-agent", 1, &[]);
    let mut editor = started(&chain);
    let response = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"end_turn"},"error":{"code":1,"message":"m"}}"#);
    let exchange = agent_writes(&mut editor, ANSWER, &response);
    assert_eq!(exchange.error()["code"], -32603, "{}", exchange.response);
    assert_eq!(
        exchange.error()["message"],
        "agent `agent` sent an invalid response: not a JSON-RPC 2.0 message: a response cannot carry both `result` and `error`"
    );
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

// Ids of invalid types.

#[test]
fn request_ids_of_invalid_types_from_the_editor_are_refused() {
    let binaries = binaries!();
    let chain = chain(&binaries, "ids-editor", 1, &[]);
    let mut editor = started(&chain);
    for (id, answered_with) in [
        ("1.5", "1.5"),
        ("-2e3", "-2e3"),
        (r#"{"n":1}"#, "null"),
        ("[1]", "null"),
        ("false", "null"),
        ("null", "null"),
    ] {
        editor.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{}}}}"#
        ));
        let message = expect_error(&mut editor, answered_with, -32600);
        assert!(
            message.contains("`id` must be a string or an integer"),
            "{id}: {message}"
        );
    }
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 6)]);
}

#[test]
fn request_ids_of_invalid_types_from_the_agent_are_refused_or_skipped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "ids-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":2.5,"method":"fs/read_text_file","params":{}}"#)
        .line(r#"{"jsonrpc":"2.0","id":true,"method":"fs/read_text_file","params":{}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_eq!(
        agent_errors(&chain),
        [json!(2.5)],
        "only the line with an id"
    );
    assert_eq!(agent_got_error_for(&chain, &json!(2.5))["code"], -32600);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}
