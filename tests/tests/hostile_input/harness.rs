//! The hostile-input tests' chain (test-proxies and the test-agent, `max_line` 4 KiB) and the
//! checks they share: a bad line's exact error, the end-of-run summary, a chain still serving.

use std::collections::BTreeMap;

use acp_conductor_tests::agent_script::{self, Recipe};
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{Binaries, TestChain};
use serde_json::Value;

/// No error responses at all.
pub const NONE: Vec<Value> = Vec::new();

/// `max_line` of every chain here, so that over-long lines are cheap to write.
pub const MAX_LINE: usize = 4096;

/// A chain of `proxies` test-proxies and the test-agent with `agent_args`, `max_line` 4 KiB.
pub fn chain(binaries: &Binaries, label: &str, proxies: usize, agent_args: &[&str]) -> TestChain {
    let mut chain = TestChain::with_test_proxies(binaries, label, proxies);
    chain.agent_args(agent_args);
    chain.conductor_setting("max_line", "\"4KiB\"");
    chain
}

/// The chain launched and initialized.
pub fn started(chain: &TestChain) -> Editor {
    let mut editor = chain.launch();
    editor.initialize();
    editor
}

/// A new session and a prompt are served as usual.
pub fn still_serves(editor: &mut Editor) {
    let session = editor.new_session();
    let exchange = editor.prompt(&session, "still here");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert_eq!(
        exchange.chunk_texts(),
        [agent_script::update_text("still here", 1, 1)]
    );
    assert!(
        exchange.other_responses.is_empty() && exchange.requests.is_empty(),
        "{exchange:?}"
    );
}

/// The next line from the conductor, parsed, and its id exactly as written.
pub fn next_with_raw_id(editor: &mut Editor) -> (Value, String) {
    let line = editor.recv_line();
    let raw = RawMessage::parse(&line)
        .unwrap_or_else(|e| panic!("not a JSON object ({e}): {line}"))
        .id()
        .map_or_else(String::new, |id| id.get().to_string());
    (serde_json::from_str(&line).unwrap(), raw)
}

/// The next line is an error with `code` and exactly the id text `raw_id`; returns its message.
pub fn expect_error(editor: &mut Editor, raw_id: &str, code: i64) -> String {
    let (message, raw) = next_with_raw_id(editor);
    assert_eq!(raw, raw_id, "{message}");
    assert_eq!(message["error"]["code"], code, "{message}");
    assert!(message.get("result").is_none(), "{message}");
    message["error"]["message"]
        .as_str()
        .expect("an error message")
        .to_string()
}

/// The kinds of the conductor's end-of-run summary of what it did not route.
const KINDS: [&str; 8] = [
    "invalid_lines",
    "too_long_lines",
    "unknown_responses",
    "duplicate_responses",
    "before_initialize",
    "second_initialize",
    "wrong_sender",
    "stale_cancels",
];

/// Ends the run (the editor closes stdin), checks the conductor exits 0, and that its summary
/// of what it did not route is `counted` (every kind not named is zero).
pub fn assert_not_routed(mut editor: Editor, counted: &[(&str, u64)]) {
    editor.close_stdin();
    let status = editor.wait_exit();
    assert!(status.success(), "{status}; stderr:\n{}", editor.stderr());
    if counted.is_empty() {
        editor.wait_for_stderr("every message received was routed");
        return;
    }
    let stderr = editor.wait_for_stderr("messages not routed during the run");
    let line = stderr
        .lines()
        .find(|line| line.contains("messages not routed during the run"))
        .expect("the summary line");
    let found: BTreeMap<&str, u64> = line
        .split_whitespace()
        .filter_map(|word| word.split_once('='))
        .filter_map(|(key, value)| Some((key, value.parse().ok()?)))
        .collect();
    let expected: BTreeMap<&str, u64> = KINDS
        .iter()
        .map(|kind| {
            let count = counted.iter().find(|(k, _)| k == kind).map_or(0, |c| c.1);
            (*kind, count)
        })
        .collect();
    assert_eq!(found, expected, "{line}");
}

/// A prompt whose text makes the test-agent write `recipe` (see [`agent_script::EMIT`]).
pub fn agent_writes(
    editor: &mut Editor,
    word: &str,
    recipe: &Recipe,
) -> acp_conductor_tests::Exchange {
    let session = editor.new_session();
    editor.prompt(&session, &recipe.prompt(word))
}

/// The agent wrote bad lines and then ended its turn: the editor saw the turn end and nothing
/// else.
pub fn only_the_turn_ended(exchange: &acp_conductor_tests::Exchange) {
    assert_eq!(exchange.result()["stopReason"], "end_turn", "{exchange:?}");
    assert!(
        exchange.notifications.is_empty()
            && exchange.requests.is_empty()
            && exchange.other_responses.is_empty(),
        "{exchange:?}"
    );
}

/// The responses the agent received, by the id they carry.
pub fn agent_got_responses(chain: &TestChain) -> Vec<Value> {
    chain
        .received(AGENT)
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect()
}

/// The ids of the error responses the agent received, in order.
pub fn agent_errors(chain: &TestChain) -> Vec<Value> {
    agent_got_responses(chain)
        .into_iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| m["id"].clone())
        .collect()
}

/// The one response the agent received with id `id`.
pub fn agent_got_error_for(chain: &TestChain, id: &Value) -> Value {
    let answers: Vec<Value> = agent_got_responses(chain)
        .into_iter()
        .filter(|m| &m["id"] == id)
        .collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    answers[0]["error"].clone()
}
