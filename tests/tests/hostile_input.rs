//! Hostile or broken input on every link, driving the real conductor: each kind of bad line
//! from the editor and, where it applies, from the agent (the test-agent writes the bytes the
//! test chooses). Each gets the exact JSON-RPC error its sender can match, or is skipped with
//! a log line and counted in the summary the conductor logs when the run ends; after each, the
//! chain still serves a normal prompt.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use acp_conductor_tests::agent_script::{self, ANSWER, EMIT, HANGING, Recipe};
use acp_conductor_tests::editor::{Editor, initialize_params, prompt_params, refuse};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::processes;
use acp_conductor_tests::scenario::{assert_all_gone_after_exit, chain_pids, chunk_of};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{Binaries, TestChain, binaries};
use serde_json::{Value, json};

/// No error responses at all.
const NONE: Vec<Value> = Vec::new();

/// `max_line` of every chain here, so that over-long lines are cheap to write.
const MAX_LINE: usize = 4096;

/// A chain of `proxies` test-proxies and the test-agent with `agent_args`, `max_line` 4 KiB.
fn chain(binaries: &Binaries, label: &str, proxies: usize, agent_args: &[&str]) -> TestChain {
    let mut chain = TestChain::with_test_proxies(binaries, label, proxies);
    chain.agent_args(agent_args);
    chain.conductor_setting("max_line", "\"4KiB\"");
    chain
}

/// The chain launched and initialized.
fn started(chain: &TestChain) -> Editor {
    let mut editor = chain.launch();
    editor.initialize();
    editor
}

/// A new session and a prompt are served as usual.
fn still_serves(editor: &mut Editor) {
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
fn next_with_raw_id(editor: &mut Editor) -> (Value, String) {
    let line = editor.recv_line();
    let raw = RawMessage::parse(&line)
        .unwrap_or_else(|e| panic!("not a JSON object ({e}): {line}"))
        .id()
        .map_or_else(String::new, |id| id.get().to_string());
    (serde_json::from_str(&line).unwrap(), raw)
}

/// The next line is an error with `code` and exactly the id text `raw_id`; returns its message.
fn expect_error(editor: &mut Editor, raw_id: &str, code: i64) -> String {
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
fn assert_not_routed(mut editor: Editor, counted: &[(&str, u64)]) {
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
fn agent_writes(editor: &mut Editor, word: &str, recipe: &Recipe) -> acp_conductor_tests::Exchange {
    let session = editor.new_session();
    editor.prompt(&session, &recipe.prompt(word))
}

/// The agent wrote bad lines and then ended its turn: the editor saw the turn end and nothing
/// else.
fn only_the_turn_ended(exchange: &acp_conductor_tests::Exchange) {
    assert_eq!(exchange.result()["stopReason"], "end_turn", "{exchange:?}");
    assert!(
        exchange.notifications.is_empty()
            && exchange.requests.is_empty()
            && exchange.other_responses.is_empty(),
        "{exchange:?}"
    );
}

/// The responses the agent received, by the id they carry.
fn agent_got_responses(chain: &TestChain) -> Vec<Value> {
    chain
        .received(AGENT)
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect()
}

/// The ids of the error responses the agent received, in order.
fn agent_errors(chain: &TestChain) -> Vec<Value> {
    agent_got_responses(chain)
        .into_iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| m["id"].clone())
        .collect()
}

/// The one response the agent received with id `id`.
fn agent_got_error_for(chain: &TestChain, id: &Value) -> Value {
    let answers: Vec<Value> = agent_got_responses(chain)
        .into_iter()
        .filter(|m| &m["id"] == id)
        .collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    answers[0]["error"].clone()
}

// Garbage.

#[test]
fn garbage_from_the_editor_gets_a_parse_error() {
    let binaries = binaries!();
    let chain = chain(&binaries, "garbage-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line("this is not json {");
    expect_error(&mut editor, "null", -32700);
    // Broken JSON whose id can still be read at its top level is answered with that id.
    editor.send_line(r#"{"jsonrpc":"2.0","id":"g-1","method":"session/new","params":{"cwd":}}"#);
    expect_error(&mut editor, r#""g-1""#, -32700);
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

#[test]
fn garbage_from_the_agent_is_skipped_and_not_answered() {
    let binaries = binaries!();
    let chain = chain(&binaries, "garbage-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line("Segmentation fault (core dumped)")
        .line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_eq!(agent_errors(&chain), NONE, "the agent got an error back");
    editor.wait_for_stderr("line with no id to answer; skipped");
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// Partial lines.

#[test]
fn a_cut_off_line_from_the_editor_is_answered_by_the_id_it_shows() {
    let binaries = binaries!();
    let chain = chain(&binaries, "partial-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line(r#"{"jsonrpc":"2.0","id":"cut","method":"session/new","params":{"cw"#);
    expect_error(&mut editor, r#""cut""#, -32700);
    still_serves(&mut editor);
    // The last line, unterminated when the editor closes its output, counts too.
    editor.send_bytes(br#"{"jsonrpc":"2.0","id":"last","method":"session/new""#);
    editor.close_stdin();
    expect_error(&mut editor, r#""last""#, -32700);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

#[test]
fn a_cut_off_line_from_the_agent_is_skipped_or_answers_whoever_asked() {
    let binaries = binaries!();
    let chain = chain(&binaries, "partial-agent", 1, &[]);
    let mut editor = started(&chain);
    let notification =
        Recipe::new().line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sess"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &notification));
    // A response cut off: the prompt it answers gets an error instead.
    let response = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"#);
    let exchange = agent_writes(&mut editor, ANSWER, &response);
    assert_eq!(exchange.error()["code"], -32603, "{}", exchange.response);
    assert!(
        exchange.error()["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent an invalid response: message is not valid JSON"),
        "{}",
        exchange.response
    );
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// One message split over many reads.

#[test]
fn a_request_written_in_pieces_is_one_request() {
    let binaries = binaries!();
    let chain = chain(&binaries, "split-editor", 1, &[]);
    let mut editor = started(&chain);
    let line = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","id":"pieces","method":"session/new","params":{"cwd":std::env::temp_dir(),"mcpServers":[]}})
    );
    for piece in line.as_bytes().chunks(9) {
        editor.send_bytes(piece);
        // Apart in time, so that the conductor reads them apart.
        std::thread::sleep(Duration::from_millis(2));
    }
    let exchange = editor.finish_request(&json!("pieces"), refuse);
    assert!(
        exchange.result()["sessionId"].is_string(),
        "{}",
        exchange.response
    );
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

#[test]
fn a_response_the_agent_writes_in_two_turns_is_one_response() {
    let binaries = binaries!();
    let chain = chain(&binaries, "split-agent", 1, &[]);
    let mut editor = started(&chain);
    let session = editor.new_session();
    // The first prompt's answer is written half now, half with the second prompt's answer.
    let first_half = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .text(r#","result":{"stopRea"#);
    let first = editor.start_request(
        "session/prompt",
        prompt_params(&session, &first_half.prompt(ANSWER)),
    );
    let second_half = Recipe::new()
        .line(r#"son":"end_turn"}}"#)
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"end_turn"}}"#);
    let second = editor.start_request(
        "session/prompt",
        prompt_params(&session, &second_half.prompt(ANSWER)),
    );
    assert_eq!(
        editor.finish_request(&first, refuse).result()["stopReason"],
        "end_turn"
    );
    assert_eq!(
        editor.finish_request(&second, refuse).result()["stopReason"],
        "end_turn"
    );
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

// Lines over max_line.

#[test]
fn an_over_long_request_is_answered_by_its_id_even_after_its_params() {
    let binaries = binaries!();
    let chain = chain(&binaries, "too-long-editor", 1, &[]);
    let mut editor = started(&chain);
    let text = "y".repeat(2 * MAX_LINE);
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"{text}"}}]}},"id":"late-\u0031"}}"#
    );
    editor.send_line(&line);
    let message = expect_error(&mut editor, r#""late-\u0031""#, -32600);
    assert_eq!(
        message,
        format!(
            "message dropped: line of {} bytes exceeds the limit of {MAX_LINE} bytes",
            line.len()
        )
    );
    // With no id at all it is still answered, with a null id.
    editor.send_line(&format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":"{text}"}}"#
    ));
    expect_error(&mut editor, "null", -32600);
    still_serves(&mut editor);
    assert_not_routed(editor, &[("too_long_lines", 2)]);
}

#[test]
fn an_over_long_response_from_the_agent_answers_the_prompt_it_was_for() {
    let binaries = binaries!();
    let chain = chain(&binaries, "too-long-agent", 1, &[]);
    let mut editor = started(&chain);
    // The id after a result too long to keep.
    let response = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","result":{"stopReason":"end_turn","_meta":""#)
        .pad(2 * MAX_LINE)
        .text(r#""},"id":"#)
        .id()
        .line("}");
    let exchange = agent_writes(&mut editor, ANSWER, &response);
    assert_eq!(exchange.error()["code"], -32603, "{}", exchange.response);
    assert!(
        exchange.error()["message"]
            .as_str()
            .unwrap()
            .starts_with("agent `agent` sent a response that was too large: line of "),
        "{}",
        exchange.response
    );
    // An over-long notification is only dropped.
    let notification = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","method":"session/update","params":{"t":""#)
        .pad(2 * MAX_LINE)
        .line(r#""}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &notification));
    still_serves(&mut editor);
    assert_eq!(agent_errors(&chain), NONE, "the agent got an error back");
    assert_not_routed(editor, &[("too_long_lines", 2)]);
}

// Invalid UTF-8.

#[test]
fn a_request_that_is_not_utf8_is_answered_with_its_id() {
    let binaries = binaries!();
    let chain = chain(&binaries, "utf8-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"latin-1\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}}\n",
    );
    let message = expect_error(&mut editor, r#""latin-1""#, -32700);
    assert_eq!(message, "message is not valid UTF-8");
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 1)]);
}

#[test]
fn a_response_from_the_agent_that_is_not_utf8_answers_the_prompt_it_was_for() {
    let binaries = binaries!();
    let chain = chain(&binaries, "utf8-agent", 1, &[]);
    let mut editor = started(&chain);
    let response = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .text(r#","result":{"stopReason":"end_turn","_meta":{"t":""#)
        .bytes(b"\xc3\x28")
        .line(r#""}}}"#);
    let exchange = agent_writes(&mut editor, ANSWER, &response);
    assert_eq!(exchange.error()["code"], -32603, "{}", exchange.response);
    assert_eq!(
        exchange.error()["message"],
        "agent `agent` sent an invalid response: message is not valid UTF-8"
    );
    let notification = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","method":"session/update","params":{"t":""#)
        .bytes(b"\xff\xfe")
        .line(r#""}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &notification));
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// A UTF-8 byte-order mark.

#[test]
fn a_byte_order_mark_before_the_editors_lines_is_ignored() {
    let binaries = binaries!();
    let chain = chain(&binaries, "bom-editor", 1, &[]);
    let mut editor = chain.launch();
    let initialize =
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":initialize_params()});
    editor.send_bytes(format!("\u{feff}{initialize}\n").as_bytes());
    let answer = editor.finish_request(&json!("init"), refuse);
    assert_eq!(answer.result()["protocolVersion"], 1, "{}", answer.response);
    let new = json!({"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":std::env::temp_dir(),"mcpServers":[]}});
    editor.send_bytes(format!("\u{feff}{new}\n").as_bytes());
    let answer = editor.finish_request(&json!("new"), refuse);
    assert!(answer.result()["sessionId"].is_string());
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

#[test]
fn a_byte_order_mark_before_the_agents_lines_is_ignored() {
    let binaries = binaries!();
    let chain = chain(&binaries, "bom-agent", 1, &["--on-start", "hex:efbbbf"]);
    // The agent's first line, its initialize answer, starts with the mark.
    let mut editor = started(&chain);
    let notification = Recipe::new()
        .bytes("\u{feff}".as_bytes())
        .line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"marked":true}}"#);
    let exchange = agent_writes(&mut editor, EMIT, &notification);
    assert_eq!(exchange.notifications.len(), 1, "{exchange:?}");
    assert_eq!(exchange.notifications[0]["params"]["marked"], true);
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

// NUL bytes.

#[test]
fn nul_bytes_from_the_editor_get_a_parse_error() {
    let binaries = binaries!();
    let chain = chain(&binaries, "nul-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_bytes(b"\0\0\0\n");
    expect_error(&mut editor, "null", -32700);
    editor.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"nul\",\"method\":\"session/new\",\"params\":{}}\0\n",
    );
    expect_error(&mut editor, r#""nul""#, -32700);
    still_serves(&mut editor);
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

#[test]
fn nul_bytes_from_the_agent_are_skipped_or_answered_by_id() {
    let binaries = binaries!();
    let chain = chain(&binaries, "nul-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .bytes(b"\0\0\n")
        .text(r#"{"jsonrpc":"2.0","id":"agent-nul","method":"fs/read_text_file","params":{}}"#)
        .bytes(b"\0\n");
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_eq!(
        agent_errors(&chain),
        [json!("agent-nul")],
        "only the line with an id"
    );
    assert_eq!(
        agent_got_error_for(&chain, &json!("agent-nul"))["code"],
        -32700
    );
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// \r\n line ends.

#[test]
fn crlf_line_ends_from_the_editor_are_accepted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "crlf-editor", 1, &[]);
    let mut editor = chain.launch();
    let initialize =
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":initialize_params()});
    let new = json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":std::env::temp_dir(),"mcpServers":[]}});
    editor.send_bytes(format!("{initialize}\r\n{new}\r\n").as_bytes());
    assert_eq!(
        editor.finish_request(&json!(1), refuse).result()["protocolVersion"],
        1
    );
    assert!(editor.finish_request(&json!(2), refuse).result()["sessionId"].is_string());
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

#[test]
fn crlf_line_ends_from_the_agent_are_accepted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "crlf-agent", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","method":"session/update","params":{"crlf":true}}"#)
        .bytes(b"\r\n");
    let exchange = agent_writes(&mut editor, EMIT, &recipe);
    assert_eq!(exchange.notifications.len(), 1, "{exchange:?}");
    assert_eq!(exchange.notifications[0]["params"]["crlf"], true);
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

// Blank lines.

#[test]
fn blank_lines_from_the_editor_are_passed_over() {
    let binaries = binaries!();
    let chain = chain(&binaries, "blank-editor", 1, &[]);
    let mut editor = started(&chain);
    editor.send_bytes(b"\n\n   \n\t\r\n");
    // The next thing the editor hears is the answer to its next request: no error came.
    let id = editor.start_request(
        "session/new",
        json!({"cwd":std::env::temp_dir(),"mcpServers":[]}),
    );
    let (answer, _) = next_with_raw_id(&mut editor);
    assert_eq!(answer["id"], id, "{answer}");
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

#[test]
fn blank_lines_from_the_agent_are_passed_over() {
    let binaries = binaries!();
    let chain = chain(&binaries, "blank-agent", 1, &[]);
    let mut editor = started(&chain);
    only_the_turn_ended(&agent_writes(
        &mut editor,
        EMIT,
        &Recipe::new().bytes(b"\n\n  \n\r\n"),
    ));
    still_serves(&mut editor);
    assert_not_routed(editor, &[]);
}

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

// Before initialize.

#[test]
fn requests_before_initialize_are_refused_and_notifications_dropped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "early-editor", 1, &[]);
    let mut editor = chain.launch();
    editor.notify("session/cancel", json!({ "sessionId": "s" }));
    let early = editor.start_request_with_id(
        r#""early""#,
        "session/prompt",
        prompt_params("s", "before initialize"),
    );
    let message = expect_error(&mut editor, r#""early""#, -32600);
    assert_eq!(
        message,
        "`initialize` must come first; `session/prompt` arrived before it"
    );
    assert_eq!(early, json!("early"));
    editor.initialize();
    still_serves(&mut editor);
    // Neither reached a component.
    for name in ["p1", AGENT] {
        let recorded = chain.recording(name);
        assert!(
            recorded.iter().all(|line| !line.contains("before initialize") && !line.contains("session/cancel")),
            "{name}: {recorded:?}"
        );
    }
    assert_not_routed(editor, &[("before_initialize", 2)]);
}

#[test]
fn an_agent_request_before_initialize_is_refused() {
    let binaries = binaries!();
    let on_start = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":"too-early","method":"fs/read_text_file","params":{"path":"/etc/hostname"}}"#)
        .line(r#"{"jsonrpc":"2.0","method":"session/update","params":{"too":"early"}}"#);
    let chain = chain(
        &binaries,
        "early-agent",
        1,
        &["--on-start", &on_start.words()],
    );
    let mut editor = chain.launch();
    // The agent spoke first; the conductor refused it before the editor's initialize.
    editor.wait_for_stderr("notification refused");
    editor.initialize();
    still_serves(&mut editor);
    let error = agent_got_error_for(&chain, &json!("too-early"));
    assert_eq!(error["code"], -32600);
    assert_eq!(
        error["message"],
        "`initialize` must come first; `fs/read_text_file` arrived before it"
    );
    assert_not_routed(editor, &[("before_initialize", 2)]);
}

// A second initialize.

#[test]
fn a_second_initialize_is_refused_even_while_the_first_is_pending() {
    let binaries = binaries!();
    let chain = chain(&binaries, "second-init", 1, &[]);
    let mut editor = chain.launch();
    let first = editor.start_request("initialize", initialize_params());
    let second = editor.start_request("initialize", initialize_params());
    let refused = editor.finish_request(&second, refuse);
    assert_eq!(refused.error()["code"], -32600);
    assert_eq!(
        refused.error()["message"],
        "`initialize` was already received; the chain is initialized once"
    );
    assert_eq!(
        editor.finish_request(&first, refuse).result()["protocolVersion"],
        1
    );
    let third = editor.request("initialize", initialize_params());
    assert_eq!(third.error()["code"], -32600);
    still_serves(&mut editor);
    let agent_initializes = chain
        .received(AGENT)
        .iter()
        .filter(|m| m["method"] == "initialize")
        .count();
    assert_eq!(agent_initializes, 1);
    assert_not_routed(editor, &[("second_initialize", 2)]);
}

// proxy/successor and proxy/initialize from the wrong side.

/// The editor wraps a `session/prompt` in `successor`, as if it came from the agent.
fn smuggle(editor: &mut Editor, successor: &str, raw_id: Option<&str>, marker: &str) {
    let envelope = json!({
        "method": "session/prompt",
        "params": prompt_params("s", marker),
    });
    match raw_id {
        Some(id) => {
            editor.start_request_with_id(id, successor, envelope);
        }
        None => editor.notify(successor, envelope),
    }
}

#[test]
fn the_editor_cannot_pose_as_the_agent_in_either_dialect() {
    let binaries = binaries!();
    for (successor, dialect) in [
        ("proxy/successor", "rfd"),
        ("_proxy/successor", "underscore"),
    ] {
        let mut chain = chain(&binaries, "smuggle", 1, &[]);
        chain.proxies[0].args(&["--dialect", dialect]);
        let mut editor = started(&chain);
        let marker = format!("SMUGGLED through {successor}");
        smuggle(&mut editor, successor, Some(r#""smuggler""#), &marker);
        let message = expect_error(&mut editor, r#""smuggler""#, -32601);
        assert_eq!(
            message,
            format!(
                "`{successor}` is how a proxy talks to its successor; the editor cannot send it"
            )
        );
        smuggle(&mut editor, successor, None, &marker);
        // The editor gets no session/prompt of its own back, and the proxy never saw it.
        still_serves(&mut editor);
        for name in ["p1", AGENT] {
            let recorded = chain.recording(name);
            assert!(
                recorded.iter().all(|line| !line.contains(&marker)),
                "{name} saw the smuggled prompt: {recorded:?}"
            );
        }
        assert!(
            editor
                .transcript
                .iter()
                .filter(
                    |(direction, _)| *direction == acp_conductor_tests::editor::Direction::Received
                )
                .all(|(_, line)| !line.contains(&marker)),
            "the editor got its smuggled prompt back"
        );
        assert_not_routed(editor, &[("wrong_sender", 2)]);
    }
}

#[test]
fn the_editor_of_a_terminal_chain_cannot_send_proxy_initialize() {
    let binaries = binaries!();
    let chain = chain(&binaries, "editor-proxy-init", 1, &[]);
    let mut editor = chain.launch();
    let refused = editor.request("proxy/initialize", initialize_params());
    assert_eq!(refused.error()["code"], -32600);
    assert!(
        refused.error()["message"]
            .as_str()
            .unwrap()
            .contains("run --proxy"),
        "{}",
        refused.response
    );
    editor.initialize();
    still_serves(&mut editor);
    assert_not_routed(editor, &[("wrong_sender", 1)]);
}

#[test]
fn the_agent_cannot_send_proxy_successor_or_proxy_initialize() {
    let binaries = binaries!();
    let chain = chain(&binaries, "agent-successor", 1, &[]);
    let mut editor = started(&chain);
    let recipe = Recipe::new()
        .line(r#"{"jsonrpc":"2.0","id":"agent-successor","method":"proxy/successor","params":{"method":"session/prompt","params":{"text":"AGENT-SMUGGLED"}}}"#)
        .line(r#"{"jsonrpc":"2.0","id":"agent-underscore","method":"_proxy/successor","params":{"method":"session/prompt","params":{"text":"AGENT-SMUGGLED"}}}"#)
        .line(r#"{"jsonrpc":"2.0","id":"agent-init","method":"proxy/initialize","params":{}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    for id in ["agent-successor", "agent-underscore", "agent-init"] {
        assert_eq!(
            agent_got_error_for(&chain, &json!(id))["code"],
            -32601,
            "{id}"
        );
    }
    let proxy_saw = chain.recording("p1");
    assert!(
        proxy_saw
            .iter()
            .all(|line| !line.contains("AGENT-SMUGGLED") && !line.contains("agent-init")),
        "{proxy_saw:?}"
    );
    assert_not_routed(editor, &[("wrong_sender", 3)]);
}

// Responses to unknown ids, duplicate responses, responses after a cancel.

#[test]
fn responses_to_unknown_ids_are_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "unknown-id", 1, &[]);
    let mut editor = started(&chain);
    editor.send_line(r#"{"jsonrpc":"2.0","id":4242,"result":{}}"#);
    editor.send_line(r#"{"jsonrpc":"2.0","id":"nobody","error":{"code":-32601,"message":"m"}}"#);
    let recipe = Recipe::new().line(r#"{"jsonrpc":"2.0","id":999,"result":{"stray":true}}"#);
    only_the_turn_ended(&agent_writes(&mut editor, EMIT, &recipe));
    still_serves(&mut editor);
    assert_not_routed(editor, &[("unknown_responses", 3)]);
}

#[test]
fn a_second_response_from_the_agent_is_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "duplicate-agent", 1, &[]);
    let mut editor = started(&chain);
    let twice = Recipe::new()
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"end_turn"}}"#)
        .text(r#"{"jsonrpc":"2.0","id":"#)
        .id()
        .line(r#","result":{"stopReason":"refusal"}}"#);
    let exchange = agent_writes(&mut editor, ANSWER, &twice);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    still_serves(&mut editor);
    assert_not_routed(editor, &[("duplicate_responses", 1)]);
}

#[test]
fn a_second_answer_from_the_editor_is_dropped_and_counted() {
    let binaries = binaries!();
    let chain = chain(&binaries, "duplicate-editor", 1, &[]);
    let mut editor = started(&chain);
    let session = editor.new_session();
    let id = editor.start_request(
        "session/prompt",
        prompt_params(&session, "permission please"),
    );
    let asked = editor.wait_for(|m| m["method"] == "session/request_permission");
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}});
    editor.send(&answer);
    editor.send(&answer);
    let exchange = editor.finish_request(&id, refuse);
    assert_eq!(
        exchange.chunk_texts().last().map(String::as_str),
        Some("permission selected allow-once")
    );
    still_serves(&mut editor);
    let permission_answers = agent_got_responses(&chain).len();
    assert_eq!(permission_answers, 1, "the agent was answered once");
    assert_not_routed(editor, &[("duplicate_responses", 1)]);
}

#[test]
fn a_response_after_the_cancelled_answer_is_dropped() {
    let binaries = binaries!();
    let chain = chain(&binaries, "after-cancel", 1, &["--answer-after-cancel"]);
    let mut editor = started(&chain);
    let session = editor.new_session();
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some(HANGING));
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    let cancelled = editor.finish_request(&id, refuse);
    assert_eq!(cancelled.error()["code"], -32800, "{}", cancelled.response);
    // The agent's late result for the same prompt never reaches the editor.
    let session = editor.new_session();
    let exchange = editor.prompt(&session, "after");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert!(exchange.other_responses.is_empty(), "{exchange:?}");
    // A cancel for the prompt no longer waiting goes nowhere.
    editor.notify("$/cancel_request", json!({ "requestId": id }));
    still_serves(&mut editor);
    assert_not_routed(editor, &[("duplicate_responses", 1), ("stale_cancels", 1)]);
}

// A banner on stdout before the component speaks.

#[test]
fn an_agents_banner_before_it_speaks_is_skipped() {
    let binaries = binaries!();
    let banner = Recipe::new()
        .line("ExampleAgent v1.2 (build 7f3c) starting")
        .line("Loading model... done")
        .words();
    let chain = chain(&binaries, "banner", 1, &["--on-start", &banner]);
    let mut editor = started(&chain);
    still_serves(&mut editor);
    assert!(
        agent_got_responses(&chain).is_empty(),
        "the agent got an answer to its banner: {:?}",
        chain.received(AGENT)
    );
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// An editor that stops reading, then closes.

/// How much the conductor's peak resident memory may grow while the editor does not read:
/// the editor's queue (`queue_limit`, then the agent is paused), what one read of the agent
/// adds past it (64 KiB), the write loop's batch (64 KiB) and the allocator's slack, with room
/// to spare: measured, +1.4 MiB with a 1 MiB queue. A conductor that buffered the agent's
/// output would grow by the whole 200 MiB.
fn growth_bound(queue_limit: u64) -> u64 {
    2 * queue_limit + 4 * (1 << 20)
}

/// Waits until the agent's flood stops advancing (or ends); returns how much it wrote.
fn wait_until_held_back(progress: &Path, total: u64) -> u64 {
    let read = || -> u64 {
        std::fs::read_to_string(progress)
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + acp_conductor_tests::editor::patience() * 6;
    let (mut last, mut unchanged) = (read(), 0);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = read();
        if now >= total {
            return now;
        }
        // Held back: no progress for a second, after the conductor took at least something.
        unchanged = if now == last && now > 0 {
            unchanged + 1
        } else {
            0
        };
        if unchanged >= 20 {
            return now;
        }
        last = now;
        assert!(
            std::time::Instant::now() < deadline,
            "the agent's flood neither ended nor stopped: at {now} bytes"
        );
    }
}

#[test]
fn an_editor_that_stops_reading_holds_the_agent_back_and_then_leaves_cleanly() {
    const QUEUE_LIMIT: u64 = 1 << 20;
    const FLOOD: u64 = 200 << 20;
    let binaries = binaries!();
    // The default max_line: the flood's lines are longer than this file's 4 KiB.
    let mut chain = TestChain::new(&binaries, "stalled-editor");
    let progress = chain.file(AGENT, "progress");
    chain.agent_args(&["--progress-file", &progress.display().to_string()]);
    chain.conductor_setting("queue_limit", &QUEUE_LIMIT.to_string());
    let mut editor = started(&chain);
    let session = editor.new_session();
    let conductor = editor.pid();
    let before = processes::peak_rss_kib(conductor) * 1024;

    editor.stop_reading();
    editor.start_request(
        "session/prompt",
        prompt_params(&session, &format!("flood {FLOOD}")),
    );
    let written = wait_until_held_back(&progress, FLOOD);
    let peak = processes::peak_rss_kib(conductor) * 1024;
    let grown = peak.saturating_sub(before);
    eprintln!(
        "flood held back at {written} bytes; conductor VmHWM {before} -> {peak} bytes (+{grown}), bound +{}",
        growth_bound(QUEUE_LIMIT)
    );
    assert!(written < FLOOD, "the agent was never held back");
    assert!(
        written > QUEUE_LIMIT,
        "the conductor took only {written} bytes, less than its queue limit"
    );
    assert!(
        grown < growth_bound(QUEUE_LIMIT),
        "the conductor's peak memory grew by {grown} bytes while the agent had written {written}"
    );

    // The editor closes the conductor's stdout (its stdin stays open): the conductor exits 0
    // and leaves no process behind.
    let pids = chain_pids(&editor, &chain.fixture_pids());
    editor.close_stdout();
    let status = assert_all_gone_after_exit(&mut editor, &pids);
    assert!(status.success(), "{status}; stderr:\n{}", editor.stderr());
}

// The same from a proxy: what it prints before it speaks goes through the same link code.

#[test]
fn a_proxys_banner_garbage_stray_answer_and_over_long_line_are_skipped_and_counted() {
    let binaries = binaries!();
    let mut chain = chain(&binaries, "proxy-banner", 1, &[]);
    let proxy = &mut chain.proxies[0];
    let mut args = vec![
        "-c".to_string(),
        "printf 'proxy v1 starting\\n'; printf '\\000\\000\\n'; \
         printf '{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\\n'; \
         head -c 5000 /dev/zero | tr '\\000' x; echo; exec \"$@\""
            .to_string(),
        "sh".to_string(),
        proxy.command.display().to_string(),
    ];
    args.append(&mut proxy.args);
    proxy.command = Path::new("/bin/sh").to_path_buf();
    proxy.args = args;
    let mut editor = started(&chain);
    still_serves(&mut editor);
    let answered_null = chain
        .received("p1")
        .iter()
        .filter(|m| m.get("method").is_none() && m["id"].is_null())
        .count();
    assert_eq!(
        answered_null, 0,
        "nothing was written back for lines with no id"
    );
    assert_not_routed(
        editor,
        &[
            ("invalid_lines", 2),
            ("too_long_lines", 1),
            ("unknown_responses", 1),
        ],
    );
}
