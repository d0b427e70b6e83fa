//! The fixtures on their own, driven over their stdio without any conductor: the other
//! tests' conclusions are only as good as these peers.

use acp_conductor_tests::agent_script::{self, HANGING};
use acp_conductor_tests::editor::{Editor, initialize_params, prompt_params};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::test_chain::fresh_dir;
use serde_json::{Value, json};

const AGENT: &str = env!("CARGO_BIN_EXE_test-agent");
const PROXY: &str = env!("CARGO_BIN_EXE_test-proxy");

fn agent(args: &[&str]) -> Editor {
    Editor::launch(AGENT.as_ref(), args, &[])
}

fn proxy(args: &[&str]) -> Editor {
    Editor::launch(PROXY.as_ref(), args, &[])
}

#[test]
fn test_agent_answers_initialize_with_unknown_fields_and_echoed_meta() {
    let mut agent = agent(&[]);
    let mut params = initialize_params();
    params["_meta"] = json!({ "traceparent": "00-1-2-01" });
    let exchange = agent.request("initialize", params);
    assert_eq!(
        *exchange.result(),
        agent_script::initialize_result(&json!({ "traceparent": "00-1-2-01" }))
    );
    assert_eq!(exchange.result()["x-extra"], json!({ "keep": true }));
}

#[test]
fn test_agent_streams_updates_and_records_what_it_receives() {
    let dir = fresh_dir("fixture-agent-record");
    let record = dir.join("agent.record");
    let mut agent = agent(&["--updates", "3", "--record", record.to_str().unwrap()]);
    agent.initialize();
    let session = agent.new_session();
    let exchange = agent.prompt(&session, "hello");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    let expected: Vec<String> = (1..=3)
        .map(|i| agent_script::update_text("hello", i, 3))
        .collect();
    assert_eq!(exchange.chunk_texts(), expected);
    let recorded = std::fs::read_to_string(&record).unwrap();
    let sent: Vec<&str> = agent
        .transcript
        .iter()
        .filter(|(direction, _)| *direction == acp_conductor_tests::editor::Direction::Sent)
        .map(|(_, line)| line.as_str())
        .collect();
    assert_eq!(recorded.lines().collect::<Vec<_>>(), sent);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_agent_asks_permission_and_reports_the_outcome() {
    let mut agent = agent(&["--updates", "0"]);
    agent.initialize();
    let session = agent.new_session();
    let exchange = agent.request_answering(
        "session/prompt",
        prompt_params(&session, "permission please"),
        |request| {
            assert_eq!(request["method"], "session/request_permission");
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "reject-once" } }))
        },
    );
    assert_eq!(exchange.requests.len(), 1);
    assert_eq!(exchange.chunk_texts(), ["permission selected reject-once"]);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
}

#[test]
fn test_agent_uses_request_id_zero_when_asked() {
    let mut agent = agent(&["--updates", "0"]);
    agent.initialize();
    let session = agent.new_session();
    let exchange = agent.request_answering(
        "session/prompt",
        prompt_params(&session, "id-zero"),
        |request| {
            assert_eq!(request["id"], json!(0));
            assert_eq!(request["method"], "fs/read_text_file");
            Ok(json!({ "content": "zero" }))
        },
    );
    assert_eq!(exchange.chunk_texts(), ["read zero"]);
}

#[test]
fn test_agent_hangs_until_cancelled_either_way() {
    let mut agent = agent(&["--updates", "0"]);
    agent.initialize();
    let session = agent.new_session();

    let id = agent.start_request_with_id(
        r#""p\u00e9""#,
        "session/prompt",
        prompt_params(&session, "hang"),
    );
    agent.wait_for(|m| agent_script::chunk_text(&m["params"]) == Some(HANGING));
    agent.notify("$/cancel_request", json!({ "requestId": id }));
    let exchange = agent.finish_request(&id, acp_conductor_tests::editor::refuse);
    assert_eq!(exchange.error()["code"], -32800);
    let raw = RawMessage::parse(&exchange.response_line).unwrap();
    assert_eq!(raw.id().unwrap().get(), r#""p\u00e9""#);

    let id = agent.start_request("session/prompt", prompt_params(&session, "hang"));
    agent.wait_for(|m| agent_script::chunk_text(&m["params"]) == Some(HANGING));
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let exchange = agent.finish_request(&id, acp_conductor_tests::editor::refuse);
    assert_eq!(exchange.result()["stopReason"], "cancelled");
}

#[test]
fn test_agent_burst_writes_chunks_response_and_chunks_in_order() {
    let mut agent = agent(&["--updates", "0", "--burst"]);
    agent.initialize();
    let session = agent.new_session();
    let exchange = agent.prompt(&session, "b");
    assert_eq!(exchange.chunk_texts(), ["b before 1", "b before 2"]);
    for i in 1..=agent_script::BURST_AFTER {
        let next = agent.recv();
        assert_eq!(
            agent_script::chunk_text(&next["params"]),
            Some(agent_script::burst_after_text("b", i).as_str())
        );
    }
}

#[test]
fn test_agent_exits_on_stdin_eof() {
    let mut agent = agent(&[]);
    agent.initialize();
    agent.close_stdin();
    assert!(agent.wait_exit().success());
}

/// Reads the next line the proxy writes, as raw members and as a value.
fn next(proxy: &mut Editor) -> (RawMessage, Value) {
    let line = proxy.recv_line();
    (
        RawMessage::parse(&line).unwrap(),
        serde_json::from_str(&line).unwrap(),
    )
}

#[test]
fn test_proxy_wraps_initialize_and_relays_the_answer_under_the_original_id() {
    let dir = fresh_dir("fixture-proxy-init");
    let init = dir.join("init");
    let mut proxy = proxy(&["--init-response", init.to_str().unwrap()]);
    proxy.send_line(r#"{"jsonrpc":"2.0","id":"a\"b","method":"proxy/initialize","params":{"protocolVersion":1,"x":{"y":2}}}"#);
    let (raw, wrapped) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), "0");
    assert_eq!(wrapped["method"], "proxy/successor");
    assert_eq!(
        wrapped["params"],
        json!({ "method": "initialize", "params": { "protocolVersion": 1, "x": { "y": 2 } } })
    );
    proxy.send_line(r#"{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#);
    let (raw, answer) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), r#""a\"b""#);
    assert_eq!(
        answer["result"]["agentCapabilities"]["mcpCapabilities"]["acp"],
        true
    );
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&init).unwrap()).unwrap();
    assert_eq!(
        recorded["result"]["agentCapabilities"]["mcpCapabilities"]["acp"],
        true
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_proxy_unwraps_successor_messages_and_translates_cancellation() {
    let mut proxy = proxy(&["--envelope-meta", r#"{"via":"proxy"}"#]);
    // From the successor: a wrapped request becomes a plain one under the proxy's id 0.
    proxy.send_line(r#"{"jsonrpc":"2.0","id":0,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"path":"/f"},"_meta":{"m":1}}}"#);
    let (raw, plain) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), "0");
    assert_eq!(plain["method"], "fs/read_text_file");
    assert_eq!(plain["params"], json!({ "path": "/f" }));
    // From the predecessor: a plain request is wrapped under the proxy's id 1.
    proxy.send_line(
        r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s"}}"#,
    );
    let (raw, wrapped) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), "1");
    assert_eq!(wrapped["params"]["_meta"], json!({ "via": "proxy" }));
    // Its cancellation is passed on plain (hop-scoped) under the proxy's own id.
    proxy.send_line(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#);
    let (_, cancel) = next(&mut proxy);
    assert_eq!(
        cancel,
        json!({ "jsonrpc": "2.0", "method": "$/cancel_request", "params": { "requestId": 1 } })
    );
    // A cancel naming the wrapped request 0 (the conductor's id for it) goes the other way.
    proxy.send_line(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}"#);
    let (_, cancel) = next(&mut proxy);
    assert_eq!(
        cancel,
        json!({ "jsonrpc": "2.0", "method": "$/cancel_request", "params": { "requestId": 0 } })
    );
    // Answers go back under the ids they answer.
    proxy.send_line(r#"{"jsonrpc":"2.0","id":0,"result":{"content":"c"}}"#);
    let (raw, _) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), "0");
    proxy.send_line(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#,
    );
    let (raw, cancelled) = next(&mut proxy);
    assert_eq!(raw.id().unwrap().get(), "7");
    assert_eq!(cancelled["error"]["code"], -32800);
}

#[test]
fn underscore_test_proxy_refuses_rfd_initialize_and_speaks_underscore() {
    let mut proxy = proxy(&["--dialect", "underscore"]);
    proxy.send_line(r#"{"jsonrpc":"2.0","id":5,"method":"proxy/initialize","params":{}}"#);
    let (_, refused) = next(&mut proxy);
    assert_eq!(refused["error"]["code"], -32601);
    proxy.send_line(r#"{"jsonrpc":"2.0","id":6,"method":"_proxy/initialize","params":{}}"#);
    let (_, wrapped) = next(&mut proxy);
    assert_eq!(wrapped["method"], "_proxy/successor");
    assert_eq!(wrapped["params"]["method"], "initialize");
}
