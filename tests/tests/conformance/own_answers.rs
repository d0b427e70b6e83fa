//! What the conductor writes on its own, not carried for anyone: its answers to bad input, a
//! failed component's errors and notification, and the answers it gives at shutdown.

use acp_conductor_tests::editor::prompt_params;
use serde_json::{Value, json};

use super::chains::Chain;
use super::editor_client::{answer, initialize_params};
use super::links::LinkKind;
use super::report::Report;

fn new_session(editor: &mut acp_conductor_tests::Editor) -> String {
    let new = editor.request_answering(
        "session/new",
        json!({ "cwd": "/work/project", "mcpServers": [] }),
        answer,
    );
    new.result()["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string()
}

/// Sends `line` and returns the conductor's error answer to it.
fn error_for(editor: &mut acp_conductor_tests::Editor, line: &str) -> Value {
    editor.send_line(line);
    let answer = editor.recv();
    assert!(answer.get("error").is_some(), "{line} got {answer}");
    answer
}

#[test]
fn answers_to_bad_input_and_to_a_failed_agent() {
    let mut chain = Chain::new("conformance-own-answers", &[]);
    chain.proxy("p1", "rfd");
    let mut editor = chain.launch();

    let early = editor.request("session/new", json!({ "cwd": "/", "mcpServers": [] }));
    assert_eq!(early.error()["code"], -32600, "{}", early.response);
    let garbage = error_for(&mut editor, "this is not JSON");
    assert_eq!(
        (&garbage["error"]["code"], &garbage["id"]),
        (&json!(-32700), &Value::Null)
    );
    let no_method = error_for(&mut editor, r#"{"jsonrpc":"2.0","id":41,"params":{}}"#);
    assert_eq!(
        (&no_method["error"]["code"], &no_method["id"]),
        (&json!(-32600), &json!(41))
    );
    let cut_off = error_for(
        &mut editor,
        r#"{"jsonrpc":"2.0","id":42,"method":"session/new","params":{"cwd":"#,
    );
    assert_eq!(
        (&cut_off["error"]["code"], &cut_off["id"]),
        (&json!(-32700), &json!(42))
    );

    editor
        .request_answering("initialize", initialize_params(), answer)
        .result();
    let again = editor.request("initialize", initialize_params());
    assert_eq!(again.error()["code"], -32600, "{}", again.response);
    let posing = editor.request(
        "proxy/successor",
        json!({ "method": "session/cancel", "params": { "sessionId": "s" } }),
    );
    assert_eq!(posing.error()["code"], -32601, "{}", posing.response);

    // The agent exits in the middle of a turn: the turn fails with -32001, the editor is
    // told with `_acp-conductor/component_failed`, and the chain is down.
    let session = new_session(&mut editor);
    let turn = editor.request_answering("session/prompt", prompt_params(&session, "exit"), answer);
    assert_eq!(turn.error()["code"], -32001, "{}", turn.response);
    let later = editor.request("session/list", json!({}));
    assert_eq!(later.error()["code"], -32001, "{}", later.response);

    let (links, status) = chain.finish(&mut editor);
    assert_eq!(status.code(), Some(1), "{}", editor.stderr());
    let report = Report::of(&links);
    report.assert_conformant("the conductor's own answers");
    report.assert_covers(&[
        (LinkKind::Editor, "error of session/new"),
        (LinkKind::Editor, "error for an invalid line"),
        (LinkKind::Editor, "error of initialize"),
        (LinkKind::Editor, "error of proxy/successor"),
        (LinkKind::Editor, "error of session/prompt"),
        (LinkKind::Editor, "error of session/list"),
        (
            LinkKind::Editor,
            "notification _acp-conductor/component_failed",
        ),
    ]);
}

#[test]
fn answers_at_shutdown() {
    let mut chain = Chain::new("conformance-shutdown", &[]);
    chain.proxy("p1", "underscore");
    chain.chain.conductor_setting("shutdown_grace", "\"100ms\"");
    let mut editor = chain.launch();
    editor
        .request_answering("initialize", initialize_params(), answer)
        .result();
    let session = new_session(&mut editor);
    editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|m| acp_conductor_tests::scenario::chunk_of(m) == Some("hanging"));

    // The editor leaves with the turn still running: after `shutdown_grace` the conductor
    // answers it with -32002 itself.
    let (links, status) = chain.finish(&mut editor);
    assert!(status.success(), "{status}: {}", editor.stderr());
    let report = Report::of(&links);
    report.assert_conformant("answers at shutdown");
    let shutdown = report
        .judged
        .iter()
        .find(|j| j.kind == LinkKind::Editor && j.what == "error of session/prompt")
        .expect("the pending prompt was answered");
    assert!(shutdown.line.contains("-32002"), "{}", shutdown.line);
}
