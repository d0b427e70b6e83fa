//! Request ids come back exactly as the editor wrote them, whatever their type or
//! spelling, and an agent request with id `0` is answered correctly; a response comes back as
//! the bytes its sender wrote, only the id changed.

use acp_conductor_tests::agent_script::{self, ANSWER, Recipe};
use acp_conductor_tests::editor::{initialize_params, prompt_params};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::json;

/// Ids as raw JSON text: the response must carry the very same bytes.
const EDITOR_IDS: &[&str] = &[
    "0",
    r#""0""#,
    "9007199254740993",
    "18446744073709551615",
    "-7",
    r#""a\"b\\c\u00e9""#,
    r#""""#,
];

fn ids_come_back_through(proxies: usize) {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, &format!("ids-{proxies}"), proxies);
    let mut editor = chain.launch();
    for (i, raw_id) in EDITOR_IDS.iter().enumerate() {
        let (method, params) = if i == 0 {
            ("initialize", initialize_params())
        } else {
            ("session/new", json!({ "cwd": "/tmp", "mcpServers": [] }))
        };
        let id = editor.start_request_with_id(raw_id, method, params);
        let exchange = editor.finish_request(&id, acp_conductor_tests::editor::refuse);
        let response = RawMessage::parse(&exchange.response_line).expect("a JSON object");
        assert_eq!(
            response.id().map(|id| id.get()),
            Some(*raw_id),
            "the id text of the response to {method}: {}",
            exchange.response_line
        );
        assert!(
            exchange.response.get("result").is_some(),
            "{}",
            exchange.response
        );
    }
}

#[test]
fn editor_ids_come_back_byte_for_byte_without_proxies() {
    ids_come_back_through(0);
}

#[test]
fn editor_ids_come_back_byte_for_byte_through_two_proxies() {
    ids_come_back_through(2);
}

fn agent_request_with_id_zero_through(proxies: usize) {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, &format!("id-zero-{proxies}"), proxies);
    chain.agent_args(&["--updates", "0"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    // The editor's prompt has id 0 too, while the agent's request 0 is in flight.
    let id =
        editor.start_request_with_id("0", "session/prompt", prompt_params(&session, "id-zero"));
    let exchange = editor.finish_request(&id, |request| {
        assert_eq!(request["method"], "fs/read_text_file", "{request}");
        assert_eq!(request["params"]["path"], agent_script::ID_ZERO_PATH);
        Ok(json!({ "content": "zero-content" }))
    });
    assert_eq!(exchange.requests.len(), 1);
    assert_eq!(exchange.chunk_texts(), ["read zero-content"]);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    assert_eq!(
        RawMessage::parse(&exchange.response_line)
            .unwrap()
            .id()
            .unwrap()
            .get(),
        "0"
    );

    let agent_saw = chain.recording(AGENT);
    let answer = agent_saw
        .iter()
        .filter_map(|line| RawMessage::parse(line).ok())
        .find(|message| message.is_response() && message.id().is_some_and(|id| id.get() == "0"))
        .unwrap_or_else(|| panic!("the agent never got an answer with id 0: {agent_saw:#?}"));
    assert_eq!(
        acp_conductor_tests::jsonrpc::to_value(answer.member("result").expect("a result")),
        json!({ "content": "zero-content" })
    );
}

#[test]
fn agent_request_with_id_zero_is_answered_without_proxies() {
    agent_request_with_id_zero_through(0);
}

#[test]
fn agent_request_with_id_zero_is_answered_through_two_proxies() {
    agent_request_with_id_zero_through(2);
}

/// The agent's answer to the prompt, `result` before `id` (as codex-acp writes its responses),
/// with a space; `ID` stands for the id.
const RESULT_FIRST: (&str, &str) = (
    r#"{"jsonrpc":"2.0","result":{"stopReason":"end_turn"} ,"id":"#,
    "}",
);

/// `RESULT_FIRST` with `id`.
fn result_first(id: &str) -> String {
    format!("{}{id}{}", RESULT_FIRST.0, RESULT_FIRST.1)
}

/// The agent answers a prompt with [`RESULT_FIRST`] through test proxies of the given dialects;
/// returns the chain and the response line the editor read for its prompt `"p-7"`.
fn result_first_answer_through(label: &str, dialects: &[&str]) -> (TestChain, String) {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, label);
    chain.agent_args(&["--updates", "0"]);
    for (i, dialect) in dialects.iter().enumerate() {
        chain
            .add_test_proxy(&format!("p{}", i + 1))
            .args(&["--dialect", dialect]);
    }
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let answer = Recipe::new().text(RESULT_FIRST.0).id().line(RESULT_FIRST.1);
    let id = editor.start_request_with_id(
        r#""p-7""#,
        "session/prompt",
        prompt_params(&session, &answer.prompt(ANSWER)),
    );
    let exchange = editor.finish_request(&id, acp_conductor_tests::editor::refuse);
    (chain, exchange.response_line)
}

/// A response reaches whoever asked as the bytes its sender wrote, with only the id changed:
/// members are not re-ordered (`{"result":..,"id":..}` stays so), spaces stay.
#[test]
fn a_response_reaches_the_editor_as_the_agent_wrote_it_with_only_the_id_changed() {
    let (_chain, line) = result_first_answer_through("result-first", &[]);
    assert_eq!(line, result_first(r#""p-7""#));
}

/// The same on every hop of a chain: the agent's answer to a proxy's `proxy/successor` request
/// (either dialect) reaches that proxy with only the proxy's id spliced in, and what the first
/// proxy answers reaches the editor as that proxy wrote it.
#[test]
fn responses_to_successor_requests_keep_their_bytes_in_both_dialects() {
    for dialect in ["rfd", "underscore"] {
        let (chain, line) =
            result_first_answer_through(&format!("result-first-{dialect}"), &[dialect, dialect]);
        // The test proxy writes its responses `id` first: that is what the editor gets.
        assert_eq!(
            line, r#"{"jsonrpc":"2.0","id":"p-7","result":{"stopReason":"end_turn"}}"#,
            "{dialect}"
        );
        let at_last_proxy = chain
            .recording("p2")
            .into_iter()
            .rfind(|line| line.contains("stopReason"))
            .unwrap_or_else(|| panic!("{dialect}: p2 got no answer to the prompt"));
        let own_id = RawMessage::parse(&at_last_proxy)
            .expect("a JSON object")
            .id()
            .expect("an id")
            .get()
            .to_string();
        assert_eq!(at_last_proxy, result_first(&own_id), "{dialect}");
    }
}
