//! Cancellation through two proxies: `$/cancel_request` reaches the agent naming the id
//! the agent knows the request by, the agent's -32800 reaches the editor under the
//! editor's id, and `session/cancel` ends a turn with `stopReason: "cancelled"`.

use acp_conductor_tests::agent_script::HANGING;
use acp_conductor_tests::editor::{prompt_params, refuse};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::scenario::chunk_of;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

#[test]
fn cancel_request_reaches_the_agent_under_its_own_id_and_the_error_comes_back_under_the_editors() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "cancel-request", 2);
    chain.agent_args(&["--updates", "0"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();

    let raw_id = r#""turn-\u0031""#;
    let id =
        editor.start_request_with_id(raw_id, "session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some(HANGING));
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    let exchange = editor.finish_request(&id, refuse);
    assert_eq!(exchange.error()["code"], -32800, "{}", exchange.response);
    assert_eq!(
        RawMessage::parse(&exchange.response_line)
            .unwrap()
            .id()
            .unwrap()
            .get(),
        raw_id
    );

    let agent_saw: Vec<RawMessage> = chain
        .recording(AGENT)
        .iter()
        .map(|line| RawMessage::parse(line).unwrap())
        .collect();
    let prompt = agent_saw
        .iter()
        .find(|m| m.method().as_deref() == Some("session/prompt"))
        .expect("the agent got the prompt");
    let cancel = agent_saw
        .iter()
        .find(|m| m.method().as_deref() == Some("$/cancel_request"))
        .expect("the agent got $/cancel_request");
    assert_eq!(
        cancel.params_value()["requestId"],
        prompt.id_value().unwrap(),
        "the cancellation names the id the agent saw on the prompt"
    );
}

#[test]
fn session_cancel_ends_the_turn_with_stop_reason_cancelled() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "session-cancel", 2);
    chain.agent_args(&["--updates", "0"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();

    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some(HANGING));
    editor.notify("session/cancel", json!({ "sessionId": session }));
    let exchange = editor.finish_request(&id, refuse);
    assert_eq!(
        exchange.result()["stopReason"],
        "cancelled",
        "{}",
        exchange.response
    );

    let agent_saw: Vec<Value> = chain.received(AGENT);
    let cancel = agent_saw
        .iter()
        .find(|m| m["method"] == "session/cancel")
        .expect("the agent got session/cancel");
    assert_eq!(cancel["params"], json!({ "sessionId": session }));
    assert!(
        cancel.get("id").is_none(),
        "session/cancel stays a notification"
    );
    // The conductor keeps working after a cancelled turn.
    let after = editor.prompt(&session, "again");
    assert_eq!(after.result()["stopReason"], "end_turn");
}
