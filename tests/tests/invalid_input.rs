//! Input from the editor that is not JSON-RPC gets a JSON-RPC error, and the conductor
//! keeps serving the session.

use acp_conductor_tests::{TestChain, binaries};
use serde_json::json;

#[test]
fn non_json_line_gets_parse_error_with_null_id_and_the_conductor_keeps_working() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "invalid-json", 1);
    chain.agent_args(&["--updates", "1"]);
    let mut editor = chain.launch();
    editor.initialize();

    editor.send_line("this is not json {");
    let error = editor.recv();
    assert_eq!(error["id"], json!(null), "{error}");
    assert!(
        error.as_object().unwrap().contains_key("id"),
        "the id member must be present: {error}"
    );
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["jsonrpc"], "2.0");

    let session = editor.new_session();
    let exchange = editor.prompt(&session, "still here");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert_eq!(exchange.chunk_texts().len(), 1);
}
