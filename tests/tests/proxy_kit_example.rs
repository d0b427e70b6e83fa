//! The example proxy of docs/proxies.md (`crates/proxy-kit/examples/shout.rs`), built by cargo
//! and run by the real conductor: the editor gets the agent's message text upper-cased, and
//! every other message, either way, as it was sent.

use acp_conductor_tests::agent_script;
use acp_conductor_tests::binaries::SHOUT_EXAMPLE;
use acp_conductor_tests::editor::prompt_params;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries, scenario};
use serde_json::{Value, json};

fn update_message(session: &str, update: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": { "sessionId": session, "update": update },
    })
}

fn text_chunk(session: &str, text: &str) -> Value {
    update_message(
        session,
        json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
    )
}

#[test]
fn shout_upper_cases_the_demo_agents_message_chunks_and_nothing_else() {
    let binaries = binaries!();
    let mut chain = TestChain::with_demo_agent(&binaries, "shout-demo");
    let shout = binaries.workspace_program(&SHOUT_EXAMPLE);
    chain.add_proxy("shout", &shout, &[] as &[&str]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session_in(&chain.dir);
    let checklist = |shown: &str, acted: &str| {
        update_message(
            &session,
            json!({ "sessionUpdate": "plan", "entries": [
                { "content": "Show what the prompt contained", "priority": "high", "status": shown },
                { "content": "Carry out a requested write or read", "priority": "medium", "status": acted },
            ] }),
        )
    };
    let (plan, done) = (
        checklist("in_progress", "pending"),
        checklist("completed", "completed"),
    );

    let greeting = editor.prompt(&session, "hello, world");
    assert_eq!(
        greeting.notifications,
        [
            plan.clone(),
            text_chunk(
                &session,
                "DEMO AGENT HERE. I RECEIVED 1 CONTENT BLOCK(S):\n"
            ),
            text_chunk(&session, "> HELLO, WORLD\n"),
            done.clone(),
        ]
    );
    assert_eq!(*greeting.result(), json!({ "stopReason": "end_turn" }));

    // Tool calls and the permission request pass unchanged; the editor's answer reaches the
    // agent, whose reply is upper-cased again.
    let demo_file = chain.dir.join("demo.txt").display().to_string();
    let tool_call = json!({
        "toolCallId": "demo-write-2",
        "title": "Write demo.txt",
        "kind": "edit",
        "status": "pending",
        "locations": [{ "path": demo_file }],
        "rawInput": { "path": demo_file, "content": "Hello from the acp-conductor demo agent.\n" },
    });
    let asked = editor.request_answering(
        "session/prompt",
        prompt_params(&session, "please write it"),
        |request| {
            assert_eq!(request["method"], "session/request_permission");
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow" } }))
        },
    );
    assert_eq!(asked.requests.len(), 1, "{:?}", asked.requests);
    assert_eq!(
        asked.requests[0]["params"],
        json!({
            "sessionId": session,
            "toolCall": tool_call,
            "options": [
                { "optionId": "allow", "name": "Allow", "kind": "allow_once" },
                { "optionId": "reject", "name": "Reject", "kind": "reject_once" },
            ],
        })
    );
    let mut announcement = json!({ "sessionUpdate": "tool_call" });
    announcement
        .as_object_mut()
        .unwrap()
        .extend(tool_call.as_object().unwrap().clone());
    assert_eq!(
        asked.notifications,
        [
            plan,
            text_chunk(
                &session,
                "DEMO AGENT HERE. I RECEIVED 1 CONTENT BLOCK(S):\n"
            ),
            text_chunk(&session, "> PLEASE WRITE IT\n"),
            update_message(&session, announcement),
            update_message(
                &session,
                json!({ "sessionUpdate": "tool_call_update", "toolCallId": "demo-write-2", "status": "completed" }),
            ),
            text_chunk(
                &session,
                "PERMISSION GRANTED: I WOULD WRITE DEMO.TXT (THE DEMO AGENT NEVER TOUCHES YOUR FILES).\n",
            ),
            done,
        ]
    );
    assert_eq!(*asked.result(), json!({ "stopReason": "end_turn" }));
}

#[test]
fn shout_leaves_what_the_editor_sends_as_sent() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "shout-test-agent");
    chain.agent_args(&["--updates", "2"]);
    let shout = binaries.workspace_program(&SHOUT_EXAMPLE);
    chain.add_proxy("shout", &shout, &[] as &[&str]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();

    let streamed = editor.prompt(&session, "hello");
    let loud: Vec<String> = (1..=2)
        .map(|i| agent_script::update_text("hello", i, 2).to_uppercase())
        .collect();
    assert_eq!(streamed.chunk_texts(), loud);

    let asked = editor.request_answering(
        "session/prompt",
        prompt_params(&session, "permission please"),
        |request| {
            assert_eq!(request["method"], "session/request_permission");
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } }))
        },
    );
    assert_eq!(asked.requests.len(), 1, "{:?}", asked.requests);
    assert_eq!(
        asked.requests[0]["params"]["toolCall"]["title"],
        "Write the file"
    );
    assert_eq!(
        asked.chunk_texts().last().map(String::as_str),
        Some("PERMISSION SELECTED ALLOW-ONCE")
    );
    // The agent got exactly what the editor sent: initialize, session/new, both prompts
    // (lower case) and the editor's answer to the permission request.
    scenario::assert_agent_got_what_the_editor_sent(&chain, &editor);
    let answer = chain
        .received(AGENT)
        .into_iter()
        .find(|message| message.get("method").is_none())
        .expect("the agent got the permission answer");
    assert_eq!(
        answer["result"],
        json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } })
    );
}
