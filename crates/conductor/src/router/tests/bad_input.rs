//! What cannot be routed gets an answer the sender can match: not JSON-RPC, too long, or a
//! broken response to a request that someone is waiting on.

use super::harness::Spec;

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error() {
    let mut chain = Spec::new(0).start();
    chain.editor.send("this is not json");
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
}

#[tokio::test]
async fn a_request_without_jsonrpc_is_answered_with_its_id() {
    let mut chain = Spec::new(0).start();
    chain
        .editor
        .send(r#"{"id":"q","method":"session/new","params":{}}"#);
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], "q");
    assert_eq!(answer["error"]["code"], -32600);
}

#[tokio::test]
async fn an_over_long_request_is_answered_by_the_id_at_its_head() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    chain.editor.send(&format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"session/prompt","params":{{"text":"{}"}}}}"#,
        "y".repeat(2000)
    ));
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 77);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the limit of 512 bytes")
    );
}

#[tokio::test]
async fn an_invalid_response_answers_whoever_asked() {
    let mut chain = Spec::new(0).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":"w","method":"session/new","params":{}}"#)
        .await;
    // A response with neither result nor error.
    chain.agent().send(r#"{"jsonrpc":"2.0","id":1}"#);
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], "w");
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent an invalid response")
    );
}

#[tokio::test]
async fn an_over_long_response_answers_whoever_asked() {
    let mut spec = Spec::new(0);
    spec.limits.max_line = 512;
    let mut chain = spec.start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":"big","method":"session/load","params":{}}"#)
        .await;
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"history":"{}"}}}}"#,
        "z".repeat(4000)
    ));
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], "big");
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent a response that was too large")
    );
}
