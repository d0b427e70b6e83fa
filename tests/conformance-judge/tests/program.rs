//! The judge's program as the conformance suite runs it: a recording in, a verdict per line
//! out, and an exit status that fails the run on any refused line.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const JUDGE: &str = env!("CARGO_BIN_EXE_acp-conformance-judge");

/// A `session/update` the conductor wrote to the editor without the `sessionId` the schema
/// requires.
const WITHOUT_SESSION_ID: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;

fn entry(link: &str, kind: &str, by: &str, line: &str) -> String {
    json!({ "link": link, "kind": kind, "by": by, "line": line }).to_string()
}

/// Runs the judge with `args` and `input` on its stdin.
fn run(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(JUDGE)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the judge starts");
    let mut stdin = child.stdin.take().expect("a stdin");
    stdin.write_all(input.as_bytes()).expect("the judge reads");
    drop(stdin);
    child.wait_with_output().expect("the judge ends")
}

fn verdicts(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a verdict is JSON"))
        .collect()
}

#[test]
fn a_session_update_without_session_id_fails_the_run() {
    let asked =
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    let recording = [
        entry("editor", "editor", "peer", asked),
        entry(
            "editor",
            "editor",
            "conductor",
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#,
        ),
        entry("editor", "editor", "conductor", WITHOUT_SESSION_ID),
    ]
    .join("\n");
    let output = run(&[], &recording);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let verdicts = verdicts(&output);
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert_eq!(verdicts[0]["what"], "result of session/new");
    assert_eq!(verdicts[0]["error"], Value::Null);
    let error = verdicts[1]["error"].as_str().expect("refused");
    assert!(error.contains("sessionId"), "{error}");
    for context in [
        "link: editor (editor), line 2",
        "what: notification session/update agent_message_chunk",
        WITHOUT_SESSION_ID,
        "sessionId",
    ] {
        assert!(stderr.contains(context), "no {context:?} in {stderr}");
    }
}

#[test]
fn a_conforming_recording_passes() {
    let line = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let output = run(&[], &entry("agent", "agent", "conductor", line));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts = verdicts(&output);
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0]["what"], "request initialize");
    assert_eq!(verdicts[0]["legacy"], Value::Null);
}

#[test]
fn an_unreadable_recording_is_not_a_pass() {
    let output = run(&[], "{\"link\": \"editor\"");
    assert_eq!(output.status.code(), Some(2));
    assert!(verdicts(&output).is_empty());
    let output = run(&["--no-such-option"], "");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn the_allow_list_names_every_excused_form() {
    let output = run(&["--allow-list"], "");
    assert!(output.status.success());
    let names = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "mcp/connect",
            "mcp/disconnect",
            "mcp/message with connectionId",
            "acp declaration with `id`"
        ]
    );
}
