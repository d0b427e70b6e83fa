//! The demo agent's plans: the checklist and outline as plan operations for a client that
//! advertised them, the plain plan otherwise, and what a cancelled turn does to them.

use super::*;

/// initialize with these `clientCapabilities` (as JSON text) and session/new in /tmp.
async fn open_session_with_capabilities(client: &mut RawClient, capabilities: &str) {
    client
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{capabilities}}}}}"#
        ))
        .await;
    let initialized = client.recv().await;
    assert!(
        initialized.starts_with(r#"{"jsonrpc":"2.0","id":0,"result":"#),
        "{initialized}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
        .await;
}

/// The checklist as a `plan_update` line, its two entries with these statuses.
fn checklist(shown: &str, acted: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"demo-session-1","update":{{"sessionUpdate":"plan_update","plan":{{"type":"items","planId":"demo-checklist","entries":[{{"content":"Show what the prompt contained","priority":"high","status":"{shown}"}},{{"content":"Carry out a requested write or read","priority":"medium","status":"{acted}"}}]}}}}}}}}"#
    )
}

const OUTLINE_REMOVED: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan_removed","planId":"demo-outline"}}}"#;

#[tokio::test]
async fn a_client_that_advertised_plan_gets_the_checklist_and_outline_as_plan_operations() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"fs":{"readTextFile":false},"plan":{}}"#).await;
    client.send(&prompt(2, "What is the plan?")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    client
        .expect(r##"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"demo-outline","content":"# Plan for turn 1\n\n1. Show back the 1 content block(s) received\n2. Nothing else: no tool, write or read was asked for\n3. End the turn\n"}}}}"##)
        .await;
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> What is the plan?\n")).await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect(OUTLINE_REMOVED).await;
    client.expect_end_turn(2).await;

    // Without "plan" in the prompt, only the checklist; the outline's number follows the turn.
    client.send(&prompt(3, "hello")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> hello\n")).await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect_end_turn(3).await;
    client.send(&prompt(4, "planning")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r##""content":"# Plan for turn 3\n"##),
        "{outline}"
    );
    client.expect_quiet_after_turn(4).await;
    client.close().await;
}

#[tokio::test]
async fn the_older_plan_capabilities_spelling_gets_plan_operations_too() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"planCapabilities":{}}"#).await;
    client.send(&prompt(2, "plan a write")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r#""plan":{"type":"markdown","planId":"demo-outline","content":"#),
        "{outline}"
    );
    assert!(
        outline.contains(r#"2. Ask permission to write demo.txt (never written)\n"#),
        "{outline}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> plan a write\n")).await;
    let tool_call = client.recv().await;
    assert!(
        tool_call.contains(r#""sessionUpdate":"tool_call""#),
        "{tool_call}"
    );
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}"#)
        .await;
    let failed = client.recv().await;
    assert!(failed.contains(r#""status":"failed""#), "{failed}");
    client
        .expect(&chunk("Permission denied: demo.txt was not written.\n"))
        .await;
    client.expect(&checklist("completed", "completed")).await;
    client.expect(OUTLINE_REMOVED).await;
    client.expect_end_turn(2).await;
    client.close().await;
}

#[tokio::test]
async fn a_client_without_plans_gets_only_the_plain_plan_even_when_asked_for_one() {
    for capabilities in [
        r#"{}"#,
        r#"{"plan":null}"#,
        r#"{"planCapabilities":null,"fs":{"readTextFile":true}}"#,
    ] {
        let mut client = RawClient::start();
        open_session_with_capabilities(&mut client, capabilities).await;
        client.send(&prompt(2, "What is the plan?")).await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Show what the prompt contained","priority":"high","status":"in_progress"},{"content":"Carry out a requested write or read","priority":"medium","status":"pending"}]}}}"#)
            .await;
        client
            .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
            .await;
        client.expect(&chunk("> What is the plan?\n")).await;
        client.expect_plan_done(ACTIONS).await;
        client.expect_end_turn(2).await;
        client.expect_quiet().await;
        client.close().await;
    }
}

#[tokio::test]
async fn a_cancelled_turn_still_takes_its_outline_down() {
    let mut client = RawClient::start();
    open_session_with_capabilities(&mut client, r#"{"plan":{}}"#).await;
    client.send(&prompt(2, "plan, slowly")).await;
    client.expect(&checklist("in_progress", "pending")).await;
    let outline = client.recv().await;
    assert!(
        outline.contains(r#"2. Tick every 100 ms until cancelled (at most 50 ticks)\n"#),
        "{outline}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client.expect(&chunk("> plan, slowly\n")).await;
    client.expect(&chunk("tick 1\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    // The checklist is left as it was: the turn did not finish its work.
    assert_eq!(line, OUTLINE_REMOVED);
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    client.expect_quiet().await;
    client.close().await;
}
