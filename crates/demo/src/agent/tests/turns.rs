//! Turns without tools: initialize, echoes, permissions, reads, cancels and the errors a
//! client gets for bad input; each test asserts the exact lines a client sees.

use super::*;

#[tokio::test]
async fn initialize_answers_version_1_and_capabilities() {
    let mut client = RawClient::start();
    client
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{}}}"#)
        .await;
    client
        .expect(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":false,"promptCapabilities":{{"image":false,"audio":false,"embeddedContext":true}},"mcpCapabilities":{{"http":false,"sse":false}}}},"agentInfo":{{"name":"acp-conductor-demo","title":"Demo agent","version":"{}"}},"authMethods":[]}}}}"#,
            env!("CARGO_PKG_VERSION")
        ))
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"x"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn plain_prompt_echoes_every_block_then_ends_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    let request = json!({
        "jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": "demo-session-1", "prompt": [
            {"type": "text", "text": "first line\n\nthird line"},
            {"type": "resource", "resource": {"uri": "file:///r.md", "text": "injected"}},
            {"type": "resource_link", "uri": "file:///l.md", "name": "l.md"},
            {"type": "image", "mimeType": "image/png", "data": ""},
        ]},
    });
    client.send(&request.to_string()).await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Show what the prompt contained","priority":"high","status":"in_progress"},{"content":"Carry out a requested write or read","priority":"medium","status":"pending"}]}}}"#)
        .await;
    for text in [
        "Demo agent here. I received 4 content block(s):\n",
        "> first line\n>\n> third line\n",
        "[resource file:///r.md]\n> injected\n",
        "[link file:///l.md]\n",
        "[image block]\n",
    ] {
        client.expect(&chunk(text)).await;
    }
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn permission_request_and_its_answers() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "please write it")).await;
    client.skip_echo("please write it").await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call","toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"demo-session-1","toolCall":{"toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"completed"}}}"#)
        .await;
    client.expect(&chunk("Permission granted: I would write demo.txt (the demo agent never touches your files).\n")).await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;

    // The next turn gets its own tool call id; an error answer counts as a refusal.
    client.send(&prompt(3, "Permission?")).await;
    client.skip_echo("Permission?").await;
    let tool_call = client.recv().await;
    assert!(
        tool_call.contains(r#""toolCallId":"demo-write-2""#),
        "{tool_call}"
    );
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":2,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no UI"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-2","status":"failed"}}}"#)
        .await;
    client
        .expect(&chunk("Permission denied: demo.txt was not written.\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn session_cancel_while_permission_pending_withdraws_the_request() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "ask permission")).await;
    client.skip_echo("ask permission").await;
    let _tool_call = client.recv().await;
    let request = client.recv().await;
    assert!(
        request.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission""#),
        "{request}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"failed"}}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    // The client's late answer to the withdrawn request is ignored.
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}"#)
        .await;
    client.expect_quiet().await;
    // The session takes a new turn at once.
    client.send(&prompt(3, "again")).await;
    client.skip_echo("again").await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn session_cancel_stops_a_slow_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "go slow")).await;
    client.skip_echo("go slow").await;
    client.expect(&chunk("tick 1\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut ticks = 1;
    loop {
        let line = client.recv().await;
        if line == r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"# {
            break;
        }
        ticks += 1;
        assert_eq!(line, chunk(&format!("tick {ticks}\n")));
    }
    assert!(
        ticks < 5,
        "the turn went on for {ticks} ticks after session/cancel"
    );
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn cancel_request_naming_the_prompt_cancels_the_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(7, "slow please")).await;
    client.skip_echo("slow please").await;
    client.expect(&chunk("tick 1\n")).await;
    // Another id first: it names no running request and changes nothing.
    client
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"7"}}"#)
        .await;
    client.expect(&chunk("tick 2\n")).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"cancelled"}}"#
    );
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn eof_cancels_and_answers_a_running_turn() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "slow")).await;
    client.skip_echo("slow").await;
    let RawClient {
        mut from_agent,
        mut to_agent,
        agent,
        ..
    } = client;
    to_agent.shutdown().await.unwrap();
    let mut last = String::new();
    while let Some(line) = from_agent.next_line().await.unwrap() {
        last = line;
    }
    assert_eq!(
        last,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
    );
    agent.await.unwrap().unwrap();
}

#[tokio::test]
async fn read_request_reports_first_line_or_error() {
    let mut client = RawClient::start();
    client.open_session(true).await;
    client.send(&prompt(2, "read notes.md")).await;
    client.skip_echo("read notes.md").await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"demo-session-1","path":"/tmp/notes.md","line":1,"limit":1}}"#)
        .await;
    client
        .send(r##"{"jsonrpc":"2.0","id":1,"result":{"content":"# Notes\n"}}"##)
        .await;
    client
        .expect(&chunk("First line of /tmp/notes.md: # Notes\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;

    client.send(&prompt(3, "Read /etc/none.")).await;
    client.skip_echo("Read /etc/none.").await;
    let request = client.recv().await;
    assert!(request.contains(r#""path":"/etc/none""#), "{request}");
    client
        .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no such file"}}"#)
        .await;
    client
        .expect(&chunk("Could not read /etc/none: no such file\n"))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn read_without_client_capability_sends_no_request() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "read /x")).await;
    client.skip_echo("read /x").await;
    client
        .expect(&chunk(
            "I cannot read /x: the client did not offer fs.readTextFile.\n",
        ))
        .await;
    client.expect_plan_done(ACTIONS).await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn errors_for_unknown_methods_sessions_and_bad_input() {
    let mut client = RawClient::start();
    client
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"session/load","params":{}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found: session/load"}}"#)
        .await;
    client.send("{not json\r").await;
    let line = client.recv().await;
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not valid JSON: "#),
        "{line}"
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"no/such/notification","params":{}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown session: nope (this demo agent knows only sessions it created with session/new on this connection)"}}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}"#)
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"session/new needs cwd, an absolute path"}}"#)
        .await;
    client.close().await;
}

#[tokio::test]
async fn second_prompt_while_a_turn_runs_is_refused() {
    let mut client = RawClient::start();
    client.open_session(false).await;
    client.send(&prompt(2, "slow")).await;
    client.skip_echo("slow").await;
    client.send(&prompt(3, "again")).await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"session demo-session-1 already has a prompt turn running"}}"#
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    let mut line = client.recv().await;
    while line.contains("tick ") {
        line = client.recv().await;
    }
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
    );
    client.close().await;
}
