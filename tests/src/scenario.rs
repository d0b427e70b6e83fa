//! Conversations and checks that several test files share: the standard editor session
//! (initialize, session, streamed prompt, permission) and the "every component saw the
//! same messages" and "nothing remains" assertions.

use std::process::ExitStatus;

use serde_json::{Value, json};

use crate::agent_script;
use crate::binaries::{Binaries, CONTEXT_PROXY, NOTES_PROXY, TOOL_GUARD, workspace_root};
use crate::editor::{Editor, patience, prompt_params};
use crate::processes;
use crate::test_chain::{AGENT, TestChain};
use crate::views::{self, Seen};

/// Updates the test-agent streams per prompt in the standard session.
pub const UPDATES: usize = 3;

/// Runs initialize, session/new, a prompt with [`UPDATES`] streamed chunks and a prompt
/// whose permission request the editor allows; asserts what the editor gets back and
/// returns the session id. The agent must run with `--updates 3`.
pub fn standard_session(editor: &mut Editor) -> String {
    let init = editor.initialize();
    assert_eq!(init["protocolVersion"], 1, "initialize result: {init}");
    let session = editor.new_session();

    let streamed = editor.prompt(&session, "hello");
    assert_eq!(streamed.result()["stopReason"], "end_turn");
    let expected: Vec<String> = (1..=UPDATES)
        .map(|i| agent_script::update_text("hello", i, UPDATES))
        .collect();
    assert_eq!(streamed.chunk_texts(), expected);

    let asked = editor.request_answering(
        "session/prompt",
        prompt_params(&session, "permission please"),
        |request| {
            assert_eq!(request["method"], "session/request_permission", "{request}");
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } }))
        },
    );
    assert_eq!(
        asked.requests.len(),
        1,
        "one permission request: {:?}",
        asked.requests
    );
    let request = &asked.requests[0];
    assert_eq!(request["params"]["sessionId"], session.as_str());
    assert_eq!(
        request["params"]["options"],
        agent_script::permission_options()
    );
    assert_eq!(
        asked.chunk_texts().last().map(String::as_str),
        Some("permission selected allow-once")
    );
    assert_eq!(asked.result()["stopReason"], "end_turn");
    assert!(
        asked.other_responses.is_empty(),
        "{:?}",
        asked.other_responses
    );
    session
}

/// Asserts that each named test-proxy saw exactly the conversation the editor had, in the
/// same order, once each, having been initialized with `init_method`; and that the agent
/// received exactly what the editor sent, starting with `initialize`.
pub fn assert_everyone_saw_the_editor_conversation(
    chain: &TestChain,
    editor: &Editor,
    proxies: &[&str],
    init_method: &str,
) {
    for &name in proxies {
        assert_proxy_saw_the_editor_conversation(chain, editor, name, init_method, &[]);
    }
    assert_agent_got_what_the_editor_sent(chain, editor);
}

/// Asserts that test-proxy `name` was initialized with `init_method` and then saw exactly
/// the editor's conversation, in order, once each. Requests it received before that whose
/// method is in `probes` (a conductor finding out which dialect the proxy speaks) are
/// left out of the comparison.
pub fn assert_proxy_saw_the_editor_conversation(
    chain: &TestChain,
    editor: &Editor,
    name: &str,
    init_method: &str,
    probes: &[&str],
) {
    let editor_view = views::without_acp_capability(views::editor_view(&editor.transcript));
    let mut received = chain.received(name);
    let probe_count = received
        .iter()
        .take_while(|m| {
            m["method"]
                .as_str()
                .is_some_and(|method| probes.contains(&method))
        })
        .count();
    received.drain(..probe_count);
    assert_eq!(
        received.first().and_then(|m| m["method"].as_str()),
        Some(init_method),
        "{name}'s first message (after {probe_count} probe(s))"
    );
    let proxy_view = views::without_acp_capability(views::proxy_view(&received));
    assert_same_sequence(&proxy_view, &editor_view, name);
}

/// Asserts that the agent was initialized with `initialize` and received exactly the
/// requests and notifications the editor sent, in order.
pub fn assert_agent_got_what_the_editor_sent(chain: &TestChain, editor: &Editor) {
    let editor_view = views::editor_view(&editor.transcript);
    let received = chain.received(AGENT);
    assert_eq!(
        received.first().and_then(|m| m["method"].as_str()),
        Some("initialize"),
        "the agent's first message"
    );
    assert_same_sequence(
        &views::toward_agent(&views::agent_view(&received)),
        &views::toward_agent(&editor_view),
        AGENT,
    );
}

/// Equal sequences, or a panic that shows where they part.
pub fn assert_same_sequence(seen: &[Seen], expected: &[Seen], who: &str) {
    if seen == expected {
        return;
    }
    let first_difference = seen
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or(seen.len().min(expected.len()));
    panic!(
        "{who} saw {} messages where the editor's side has {}; first difference at #{first_difference}:\n  {who}: {:?}\n  editor: {:?}",
        seen.len(),
        expected.len(),
        seen.get(first_difference),
        expected.get(first_difference),
    );
}

/// The conductor's descendants plus the given fixture pids, taken while the chain runs.
pub fn chain_pids(editor: &Editor, fixtures: &[u32]) -> Vec<u32> {
    let mut pids = processes::descendants(editor.pid());
    for &pid in fixtures {
        if !pids.contains(&pid) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits for the conductor to exit and for every pid in `pids` to be gone; returns the
/// conductor's exit status.
pub fn assert_all_gone_after_exit(editor: &mut Editor, pids: &[u32]) -> ExitStatus {
    let status = editor.wait_exit();
    let remaining = processes::wait_until_gone(pids, patience());
    assert!(
        remaining.is_empty(),
        "processes of the chain still running after the conductor exited ({status}): {:?}\nconductor stderr:\n{}",
        remaining
            .iter()
            .map(|&pid| processes::describe(pid))
            .collect::<Vec<_>>(),
        editor.stderr()
    );
    status
}

/// The text of the `sessionUpdate` chunk, if `message` is one.
pub fn chunk_of(message: &Value) -> Option<&str> {
    if message["method"] != "session/update" {
        return None;
    }
    agent_script::chunk_text(&message["params"])
}

/// Panics unless the proxies of `conductor.toml.example`, which it finds next to the
/// conductor, are built and current.
pub fn check_example_proxies(binaries: &Binaries) {
    for program in [&CONTEXT_PROXY, &TOOL_GUARD, &NOTES_PROXY] {
        binaries.workspace_program(program);
    }
}

/// Runs the README's `acp-conductor prompt --config conductor.toml.example PROMPTS...` from
/// the workspace root and returns its stdout and stderr; panics unless it exits 0.
pub fn prompt_example_config(binaries: &Binaries, prompts: &[&str]) -> (String, String) {
    check_example_proxies(binaries);
    let output = std::process::Command::new(&binaries.conductor)
        .current_dir(workspace_root())
        .args(["prompt", "--config", "conductor.toml.example"])
        .args(prompts)
        .output()
        .expect("run acp-conductor prompt");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}
