//! The editor's whole conversation with the conformance agent, the same through every chain:
//! every client→agent method, a turn with every agent→client request and update kind, and both
//! cancellations (`paths.rs` lists what it must make the conductor write).

use acp_conductor_tests::Editor;
use acp_conductor_tests::editor::prompt_params;
use acp_conductor_tests::scenario::chunk_of;
use serde_json::{Value, json};

use super::editor_client::{answer, initialize_params};

/// The project directory the sessions are opened in.
const CWD: &str = "/work/project";

/// The prompt whose words make the agent send every agent→client message.
pub const EVERY_PATH: &str = "updates permission read write terminal elicit ext";

/// Requests `method` and answers whatever the agent asks meanwhile; returns the response.
fn call(editor: &mut Editor, method: &str, params: Value) -> Value {
    let exchange = editor.request_answering(method, params, answer);
    exchange.response
}

/// Asserts `response` is a result and returns it.
#[track_caller]
fn result(response: &Value) -> &Value {
    match response.get("result") {
        Some(result) => result,
        None => panic!("expected a result, got {response}"),
    }
}

/// Runs the conversation; returns the id of the session it opened first.
pub fn run(editor: &mut Editor) -> String {
    let init = call(editor, "initialize", initialize_params());
    assert_eq!(result(&init)["protocolVersion"], 1, "{init}");
    result(&call(
        editor,
        "authenticate",
        json!({ "methodId": "api-key" }),
    ));

    let new = call(
        editor,
        "session/new",
        json!({ "cwd": CWD, "mcpServers": [] }),
    );
    let session = result(&new)["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    result(&call(
        editor,
        "session/set_mode",
        json!({ "sessionId": session, "modeId": "code" }),
    ));
    result(&call(
        editor,
        "session/set_config_option",
        json!({ "sessionId": session, "configId": "model", "value": "deep" }),
    ));

    let turn = call(
        editor,
        "session/prompt",
        prompt_params(&session, EVERY_PATH),
    );
    assert_eq!(result(&turn)["stopReason"], "end_turn", "{turn}");

    // The agent cancels its own permission request: the editor waits for the
    // `$/cancel_request` before it answers, with -32800 as a client should.
    let id = editor.start_request("session/prompt", prompt_params(&session, "cancel-own"));
    let asked = editor.wait_for(|m| m["method"] == "session/request_permission");
    let cancel = editor.wait_for(|m| m["method"] == "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], asked["id"], "{cancel}");
    editor.send(&json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "error": { "code": -32800, "message": "Request cancelled" }
    }));
    let turn = editor.finish_request(&id, answer);
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);

    // `$/cancel_request` for a pending prompt: the agent answers -32800.
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some("hanging"));
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    let cancelled = editor.finish_request(&id, answer);
    assert_eq!(cancelled.error()["code"], -32800, "{}", cancelled.response);

    // `session/cancel`: the turn ends with `stopReason: "cancelled"`.
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some("hanging"));
    editor.notify("session/cancel", json!({ "sessionId": session }));
    let cancelled = editor.finish_request(&id, answer);
    assert_eq!(cancelled.result()["stopReason"], "cancelled");

    result(&call(editor, "session/list", json!({ "cwd": CWD })));
    let load = json!({ "sessionId": session, "cwd": CWD, "mcpServers": [] });
    result(&call(editor, "session/load", load));
    let resume = json!({ "sessionId": session, "cwd": CWD });
    result(&call(editor, "session/resume", resume));
    let fork = call(
        editor,
        "session/fork",
        json!({ "sessionId": session, "cwd": CWD }),
    );
    let forked = result(&fork)["sessionId"]
        .as_str()
        .expect("a forked session id")
        .to_string();
    result(&call(
        editor,
        "session/close",
        json!({ "sessionId": forked }),
    ));
    result(&call(
        editor,
        "session/delete",
        json!({ "sessionId": forked }),
    ));

    result(&call(
        editor,
        "_conformance/status",
        json!({ "verbose": true }),
    ));
    editor.notify(
        "_conformance/focus",
        json!({ "sessionId": session, "file": "src/parser.rs" }),
    );
    result(&call(editor, "logout", json!({})));
    session
}
