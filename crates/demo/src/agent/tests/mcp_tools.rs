//! Turns that call MCP tools: the notes server over stdio, tools listed, unknown and failing
//! ones, and cancels during a call; each test asserts the exact lines a client sees.

use super::*;

fn notes_server_entry(name: &str) -> Value {
    json!({"name": name, "command": "acp-conductor", "args": ["mcp-bridge"], "env": []})
}

#[tokio::test]
async fn remember_recall_and_forget_through_a_stdio_mcp_server() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([
            {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
            {"type": "acp", "name": "proxied", "id": "p-1"},
            notes_server_entry("notes"),
        ]))
        .await;
    assert!(launches(&seen).is_empty(), "servers start on first use");

    client
        .send(&prompt(2, "Remember that the build uses nextest"))
        .await;
    let plan = client.recv().await;
    assert!(
        plan.contains(
            r#"{"content":"Use the requested MCP tool","priority":"medium","status":"pending"}"#
        ),
        "{plan}"
    );
    client
        .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
        .await;
    client
        .expect(&chunk("> Remember that the build uses nextest\n"))
        .await;
    client
        .expect_notes_tool_call(
            1,
            "remember",
            json!({"note": "the build uses nextest"}),
            Ok("Noted (note 1)."),
        )
        .await;
    client
        .expect(&chunk(
            "The `remember` tool of notes answered: Noted (note 1).\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    // The note is the tool's input: "read", "write" and "slow" in it start nothing.
    let text = "please remember: read notes.md slowly, then write";
    client
        .tool_turn(
            3,
            text,
            (
                2,
                "remember",
                json!({"note": "read notes.md slowly, then write"}),
            ),
            Ok("Noted (note 2)."),
            "The `remember` tool of notes answered: Noted (note 2).\n",
        )
        .await;

    let notes = "1. the build uses nextest\n2. read notes.md slowly, then write";
    client
        .tool_turn(
            4,
            "What do you recall?",
            (3, "recall", json!({})),
            Ok(notes),
            &format!("The `recall` tool of notes answered:\n{notes}\n"),
        )
        .await;

    let forgot = "Forgot note 1: the build uses nextest";
    client
        .tool_turn(
            5,
            "forget note #1",
            (4, "forget", json!({"number": 1})),
            Ok(forgot),
            &format!("The `forget` tool of notes answered: {forgot}\n"),
        )
        .await;

    // A tool's own error fails the tool call, not the turn.
    client
        .tool_turn(
            6,
            "forget 5",
            (5, "forget", json!({"number": 5})),
            Err("There is no note 5."),
            "The `forget` tool of notes reported an error: There is no note 5.\n",
        )
        .await;

    let left = "1. read notes.md slowly, then write";
    client
        .tool_turn(
            7,
            "recall",
            (6, "recall", json!({})),
            Ok(left),
            &format!("The `recall` tool of notes answered: {left}\n"),
        )
        .await;

    // Only the stdio server was started, once; it answered the pings of `remember` and
    // its input closes when the connection ends.
    assert_eq!(launches(&seen), ["notes"]);
    client.close().await;
    wait_for_seen(&seen, "notes", "(closed)").await;
}

#[tokio::test]
async fn list_tools_unknown_tools_and_bad_arguments() {
    let seen = Seen::default();
    let notes = notes_launcher(seen.clone());
    let launcher: Launcher = Arc::new(move |server, cwd| {
        if server.name == "broken" {
            return Err(McpError::Spawn {
                server: server.name.clone(),
                command: server.command.clone(),
                source: io::Error::from(io::ErrorKind::NotFound),
            });
        }
        notes(server, cwd)
    });
    let mut client = RawClient::start_with(launcher);
    client
        .open_session_with_servers(json!([
            notes_server_entry("notes"),
            notes_server_entry("broken"),
            notes_server_entry("more"),
        ]))
        .await;

    client.send(&prompt(2, "What tools do you have?")).await;
    client.skip_echo("What tools do you have?").await;
    client
        .expect(&chunk(
            "notes: remember, recall, forget, crash, hang\n\
             broken: could not list its tools: could not start MCP server `broken` (acp-conductor): entity not found\n\
             more: remember, recall, forget, crash, hang\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    client.send(&prompt(3, "use tool nope")).await;
    client.skip_echo("use tool nope").await;
    client
        .expect(&chunk(
            "I cannot do that: no MCP server offers a `nope` tool; could not start MCP server `broken` (acp-conductor): entity not found.\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;

    client.send(&prompt(4, "call remember [1]")).await;
    client.skip_echo("call remember [1]").await;
    client
        .expect(&chunk(
            "I did not call `remember`: its arguments must be a JSON object (got [1]).\n",
        ))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(4).await;

    let text = r#"Use tool `remember` {"note": "first server wins"}"#;
    client
        .tool_turn(
            5,
            text,
            (4, "remember", json!({"note": "first server wins"})),
            Ok("Noted (note 1)."),
            "The `remember` tool of notes answered: Noted (note 1).\n",
        )
        .await;
    client.close().await;
}

#[tokio::test]
async fn a_server_going_away_mid_call_fails_the_tool_call_not_the_turn() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([notes_server_entry("notes")]))
        .await;
    client.send(&prompt(2, "call crash {}")).await;
    client.skip_echo("call crash {}").await;
    client
        .expect_update(json!({
            "sessionUpdate": "tool_call", "toolCallId": "demo-tool-1", "title": "notes: crash",
            "kind": "other", "status": "pending", "rawInput": {},
        }))
        .await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
        .await;
    let error = "MCP server `notes` went away before answering tools/call";
    client
        .expect_update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": error}}],
        }))
        .await;
    client
        .expect(&chunk(&format!(
            "Calling the `crash` tool of notes failed: {error}\n"
        )))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;

    // The next use starts the server again.
    client.send(&prompt(3, "recall")).await;
    client.skip_echo("recall").await;
    client
        .expect_notes_tool_call(2, "recall", json!({}), Ok("No notes yet."))
        .await;
    let _message = client.recv().await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;
    assert_eq!(launches(&seen), ["notes", "notes"]);
    client.close().await;
}

#[tokio::test]
async fn session_cancel_during_a_tool_call_fails_it_and_withdraws_the_call() {
    let seen = Seen::default();
    let mut client = RawClient::start_with(notes_launcher(seen.clone()));
    client
        .open_session_with_servers(json!([notes_server_entry("notes")]))
        .await;
    client.send(&prompt(2, "call hang")).await;
    client.skip_echo("call hang").await;
    let _announced = client.recv().await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
        .await;
    wait_for_seen(&seen, "notes", "tools/call").await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
        .await;
    client
        .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed"}))
        .await;
    client
        .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
        .await;
    wait_for_seen(&seen, "notes", "notifications/cancelled").await;
    client.expect_quiet().await;
    client.close().await;
}

#[tokio::test]
async fn without_stdio_servers_the_agent_says_no_server_offers_the_tool() {
    let mut client = RawClient::start();
    client
        .open_session_with_servers(json!([{"type": "acp", "name": "notes", "id": "n-1"}]))
        .await;
    client.send(&prompt(2, "remember the milk")).await;
    client.skip_echo("remember the milk").await;
    client
        .expect(&chunk("I cannot do that: no MCP server offers a `remember` tool (this session has no stdio MCP servers).\n"))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(2).await;
    client.send(&prompt(3, "list tools")).await;
    client.skip_echo("list tools").await;
    client
        .expect(&chunk("This session has no stdio MCP servers.\n"))
        .await;
    client.expect_plan_done(TOOL).await;
    client.expect_end_turn(3).await;
    client.close().await;
}
