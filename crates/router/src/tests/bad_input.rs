//! What cannot be routed gets an answer the sender can match: not JSON-RPC, too long, or a
//! broken response to a request that someone is waiting on. A response is never answered, a
//! component's line with no id is only logged, and everything is counted.

use super::harness::{Chain, Spec};
use crate::skipped::Skipped;

#[test]
fn a_line_that_is_not_json_gets_a_parse_error() {
    let mut chain = Spec::new(0).start();
    chain.editor.send("this is not json");
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
}

#[test]
fn a_request_without_jsonrpc_is_answered_with_its_id() {
    let mut chain = Spec::new(0).start();
    chain
        .editor
        .send(r#"{"id":"q","method":"session/new","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "q");
    assert_eq!(answer["error"]["code"], -32600);
}

#[test]
fn an_over_long_request_is_answered_by_the_id_at_its_head() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    chain.editor.send(&format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"session/prompt","params":{{"text":"{}"}}}}"#,
        "y".repeat(2000)
    ));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 77);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the limit of 512 bytes")
    );
}

#[test]
fn an_invalid_response_answers_whoever_asked() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":"w","method":"session/new","params":{}}"#);
    // A response with neither result nor error.
    chain.agent().send(r#"{"jsonrpc":"2.0","id":1}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "w");
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent an invalid response")
    );
}

#[test]
fn an_over_long_response_answers_whoever_asked() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":"big","method":"session/load","params":{}}"#);
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"history":"{}"}}}}"#,
        "z".repeat(4000)
    ));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "big");
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent a response that was too large")
    );
}

#[test]
fn an_over_long_request_is_answered_by_the_id_after_its_params() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    chain.editor.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"session/prompt","params":{{"id":1,"text":"{}"}},"id":"late"}}"#,
        "y".repeat(2000)
    ));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "late", "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            too_long_lines: 1,
            ..Skipped::default()
        }
    );
}

/// The agent's notification reaches the editor: the router has taken everything the agent
/// sent before it.
fn agent_was_heard(chain: &mut Chain) {
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"marker":true}}"#);
    assert_eq!(chain.editor.recv()["params"]["marker"], true);
}

/// The next thing the agent receives is the editor's `session/new`: nothing was written to
/// the agent before it.
fn agent_hears_nothing_before_the_next_request(chain: &mut Chain) {
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"next","method":"session/new","params":{}}"#);
    let next = chain.agent().recv();
    assert_eq!(next["method"], "session/new", "{next}");
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        next["id"]
    ));
    assert_eq!(chain.editor.recv()["id"], "next");
}

#[test]
fn a_components_line_with_no_id_is_skipped_not_answered() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    for line in [
        "Welcome to ExampleAgent 1.0!".to_string(),
        "42".to_string(),
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#.to_string(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"t":"{}"}}}}"#,
            "z".repeat(600)
        ),
    ] {
        chain.agent().send(&line);
    }
    agent_was_heard(&mut chain);
    agent_hears_nothing_before_the_next_request(&mut chain);
    assert_eq!(chain.editor.has_pending(), None);
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            invalid_lines: 3,
            too_long_lines: 1,
            ..Skipped::default()
        }
    );
}

#[test]
fn a_response_is_never_answered_even_when_invalid() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    for line in [
        r#"{"jsonrpc":"2.0","id":99,"result":1,"error":{"code":1,"message":"m"}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":99,"error":"bad"}"#.to_string(),
        r#"{"jsonrpc":"1.0","id":99,"result":1}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":true,"result":1}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":98,"result":{"t":"unterminated}"#.to_string(),
        format!(
            r#"{{"jsonrpc":"2.0","result":{{"t":"{}"}},"id":97}}"#,
            "z".repeat(600)
        ),
    ] {
        chain.editor.send(&line);
    }
    // A well-formed one to no request.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":96,"result":null}"#);
    // The editor's next request gets through, and is the first thing the editor hears back.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"next","method":"session/new","params":{}}"#);
    let next = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        next["id"]
    ));
    assert_eq!(chain.editor.recv()["id"], "next");
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            invalid_lines: 6,
            too_long_lines: 1,
            unknown_responses: 1,
            ..Skipped::default()
        }
    );
}

#[test]
fn a_response_that_is_both_result_and_error_answers_whoever_asked() {
    let mut chain = Spec::new(0).start();
    let asked =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":"w","method":"session/new","params":{}}"#);
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"error":{{"code":1,"message":"m"}}}}"#,
        asked["id"]
    ));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "w");
    assert_eq!(answer["error"]["code"], -32603);
    agent_hears_nothing_before_the_next_request(&mut chain);
}

#[test]
fn an_unreadable_response_answers_whoever_asked_by_the_id_it_shows() {
    let mut chain = Spec::new(0).start();
    let asked =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":"u","method":"session/load","params":{}}"#);
    let mut line =
        format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"t":""#, asked["id"]).into_bytes();
    line.extend_from_slice(b"caf\xe9\"}}");
    chain.agent().send_raw(line);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "u");
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` sent an invalid response: message is not valid UTF-8"
    );
    agent_hears_nothing_before_the_next_request(&mut chain);
}

#[test]
fn a_second_response_and_one_to_an_unknown_id_are_dropped_and_counted() {
    let mut chain = Spec::new(0).start();
    let asked =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":"d","method":"session/new","params":{}}"#);
    let response = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"n":1}}}}"#,
        asked["id"]
    );
    chain.agent().send(&response);
    chain.agent().send(&response);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":"never","error":{"code":-32700,"message":"what?"}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"what?"}}"#);
    assert_eq!(chain.editor.recv()["result"]["n"], 1);
    agent_was_heard(&mut chain);
    agent_hears_nothing_before_the_next_request(&mut chain);
    assert_eq!(chain.editor.has_pending(), None);
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            duplicate_responses: 1,
            unknown_responses: 2,
            ..Skipped::default()
        }
    );
}

#[test]
fn request_ids_of_invalid_types_are_refused() {
    let mut chain = Spec::new(0).start();
    for (id, answered_with) in [
        ("1.5", serde_json::json!(1.5)),
        ("2e3", serde_json::json!(2000.0)),
        ("true", serde_json::Value::Null),
        ("{}", serde_json::Value::Null),
        ("[1]", serde_json::Value::Null),
        ("null", serde_json::Value::Null),
    ] {
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{}}}}"#
        ));
        let answer = chain.editor.recv();
        assert_eq!(answer["id"], answered_with, "{id}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "{id}: {answer}");
    }
    agent_hears_nothing_before_the_next_request(&mut chain);
}

#[test]
fn an_editor_request_that_is_not_utf8_is_answered_with_its_id() {
    let mut chain = Spec::new(0).start();
    chain.editor.send_raw(
        &b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"session/prompt\",\"params\":{\"t\":\"\xff\"}}"[..],
    );
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 12);
    assert_eq!(answer["error"]["code"], -32700);
    chain.editor.send_raw(&b"\x00\x00\x00"[..]);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    agent_hears_nothing_before_the_next_request(&mut chain);
}

#[test]
fn a_cancel_for_no_request_waiting_is_counted() {
    let mut chain = Spec::new(0).start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"gone"}}"#);
    agent_hears_nothing_before_the_next_request(&mut chain);
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            stale_cancels: 1,
            ..Skipped::default()
        }
    );
}
