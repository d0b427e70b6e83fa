//! Bad bytes on a link: garbage, cut-off and split lines, lines over `max_line`, invalid UTF-8,
//! a byte-order mark, NUL bytes, `\r\n` and blank lines, from the editor and from the agent.

use std::time::Duration;

use acp_conductor_tests::agent_script::{ANSWER, EMIT, Recipe};
use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::{initialize_params, prompt_params, refuse};
use serde_json::json;

use super::harness::{
    MAX_LINE, NONE, agent_errors, agent_got_error_for, agent_writes, assert_not_routed, chain,
    expect_error, next_with_raw_id, only_the_turn_ended, started, still_serves,
};

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
