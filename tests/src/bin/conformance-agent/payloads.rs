//! What the conformance agent says, as literal JSON: its results, every `SessionUpdate` kind of
//! schema 1.20 and its requests to the client, written to be schema-valid and realistic.

use serde_json::{Value, json};

/// The project every path in these payloads points into.
const PROJECT: &str = "/work/project";

pub fn initialize_result(mcp_over_acp: bool) -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": { "image": true, "audio": false, "embeddedContext": true },
            "mcpCapabilities": { "http": false, "sse": false, "acp": mcp_over_acp },
            "sessionCapabilities": {
                "list": {}, "delete": {}, "fork": {}, "resume": {}, "close": {}
            }
        },
        "authMethods": [{
            "id": "api-key",
            "name": "API key",
            "description": "Reads CONFORMANCE_API_KEY from the environment"
        }],
        "agentInfo": { "name": "conformance-agent", "title": "Conformance agent", "version": "1.0.0" }
    })
}

fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": [
            { "id": "ask", "name": "Ask", "description": "Asks before changing files" },
            { "id": "code", "name": "Code", "description": "Edits files without asking" }
        ]
    })
}

/// The session's one config option, the model, with `current` selected.
pub fn model_option(current: &str) -> Value {
    json!({
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": current,
        "options": [
            { "value": "fast", "name": "Fast" },
            { "value": "deep", "name": "Deep", "description": "Slower, more thorough" }
        ]
    })
}

/// `session/new` and `session/fork`.
pub fn session_result(session_id: &str) -> Value {
    json!({
        "sessionId": session_id,
        "modes": modes("ask"),
        "configOptions": [model_option("fast")]
    })
}

/// `session/load` and `session/resume`.
pub fn restored_session_result() -> Value {
    json!({ "modes": modes("ask"), "configOptions": [model_option("fast")] })
}

/// The conversation a `session/load` replays before its result.
pub fn history(session_id: &str) -> Vec<Value> {
    vec![
        update(
            session_id,
            json!({
                "sessionUpdate": "user_message_chunk",
                "content": { "type": "text", "text": "Why does the parser reject empty input?" },
                "messageId": "msg-history-1"
            }),
        ),
        update(
            session_id,
            json!({
                "sessionUpdate": "agent_message_chunk",
                "content": { "type": "text", "text": "`parse` returns an error before looking at the input." },
                "messageId": "msg-history-2"
            }),
        ),
    ]
}

pub fn list_result() -> Value {
    json!({
        "sessions": [
            {
                "sessionId": "sess-1",
                "cwd": PROJECT,
                "title": "Fix the parser",
                "updatedAt": "2026-11-25T08:00:00Z"
            },
            { "sessionId": "sess-archived", "cwd": PROJECT }
        ],
        "nextCursor": "page-2"
    })
}

pub fn config_option_result(value: &str) -> Value {
    json!({ "configOptions": [model_option(value)] })
}

pub fn prompt_result(stop_reason: &str) -> Value {
    json!({
        "stopReason": stop_reason,
        "usage": { "totalTokens": 1834, "inputTokens": 1500, "outputTokens": 334, "cachedReadTokens": 1200 }
    })
}

/// The params of a `session/update` carrying `update`.
pub fn update(session_id: &str, update: Value) -> Value {
    json!({ "sessionId": session_id, "update": update })
}

/// An agent message chunk saying `text`.
pub fn say(session_id: &str, text: &str) -> Value {
    update(
        session_id,
        json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
    )
}

fn plan_entries() -> Value {
    json!([
        { "content": "Read src/parser.rs", "priority": "high", "status": "completed" },
        { "content": "Accept empty input", "priority": "high", "status": "in_progress" },
        { "content": "Run the parser tests", "priority": "medium", "status": "pending" }
    ])
}

/// One `session/update` of every kind schema 1.20 defines (with the unstable features the
/// suite enables), in the order a turn might send them.
pub fn every_update(session_id: &str) -> Vec<Value> {
    let file = format!("{PROJECT}/src/parser.rs");
    [
        json!({
            "sessionUpdate": "user_message_chunk",
            "content": { "type": "text", "text": "Make the parser accept empty input." },
            "messageId": "msg-user-1"
        }),
        json!({
            "sessionUpdate": "agent_thought_chunk",
            "content": { "type": "text", "text": "The early return in `parse` fires before the empty check." }
        }),
        json!({
            "sessionUpdate": "agent_message_chunk",
            "content": { "type": "text", "text": "I'll read the parser first." },
            "messageId": "msg-agent-1"
        }),
        json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "call-read-1",
            "title": "Read src/parser.rs",
            "kind": "read",
            "status": "pending",
            "locations": [{ "path": file, "line": 42 }],
            "rawInput": { "path": "src/parser.rs" }
        }),
        json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-read-1",
            "status": "completed",
            "content": [
                { "type": "content", "content": { "type": "text", "text": "pub fn parse(input: &str) -> Result<Ast, Error> {" } },
                { "type": "diff", "path": file, "oldText": "if input.len() > 0 {", "newText": "if !input.is_empty() {" }
            ],
            "rawOutput": { "lines": 120 }
        }),
        json!({ "sessionUpdate": "plan", "entries": plan_entries() }),
        json!({
            "sessionUpdate": "plan_update",
            "plan": { "type": "items", "planId": "plan-1", "entries": plan_entries() }
        }),
        json!({
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "markdown",
                "planId": "plan-2",
                "content": "# Plan\n\n1. Accept empty input\n2. Run the tests\n",
                "path": format!("{PROJECT}/PLAN.md")
            }
        }),
        json!({ "sessionUpdate": "plan_removed", "planId": "plan-2" }),
        json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                { "name": "test", "description": "Run the test suite", "input": { "hint": "a test name filter" } },
                { "name": "review", "description": "Review the current diff" }
            ]
        }),
        json!({ "sessionUpdate": "current_mode_update", "currentModeId": "code" }),
        json!({ "sessionUpdate": "config_option_update", "configOptions": [model_option("deep")] }),
        json!({
            "sessionUpdate": "session_info_update",
            "title": "Accept empty input in the parser",
            "updatedAt": "2026-11-25T08:05:00Z"
        }),
        json!({
            "sessionUpdate": "usage_update",
            "used": 53000,
            "size": 200000,
            "cost": { "amount": 0.42, "currency": "USD" }
        }),
        json!({
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "MCP server `docs` unavailable",
            "description": "Continuing without it."
        }),
        json!({
            "sessionUpdate": "compaction_update",
            "compactionId": "compaction-1",
            "status": "completed",
            "summary": [{ "type": "text", "text": "Earlier: read the parser and found the early return." }]
        }),
        json!({
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "compaction-1",
            "content": { "type": "text", "text": "The user wants empty input accepted." }
        }),
        json!({
            "sessionUpdate": "prompt_suggestions_update",
            "suggestions": [{ "prompt": [{ "type": "text", "text": "Run the parser tests again" }] }]
        }),
        json!({
            "sessionUpdate": "cursor_update",
            "cursorId": "cursor-1",
            "anchor": { "type": "agent_message", "messageId": "msg-agent-1", "position": "after" }
        }),
        json!({
            "sessionUpdate": "subagent_update",
            "sessionId": "sess-sub-1",
            "title": "Test runner",
            "description": "Runs `cargo test -p parser`",
            "state": { "state": "running" }
        }),
        json!({
            "sessionUpdate": "session_message",
            "messageId": "msg-sub-1",
            "senderSessionId": "sess-sub-1",
            "recipientSessionId": session_id,
            "content": [{ "type": "text", "text": "All 42 parser tests pass." }]
        }),
        json!({
            "sessionUpdate": "session_message_chunk",
            "messageId": "msg-sub-2",
            "content": { "type": "text", "text": "Running the doc tests" }
        }),
    ]
    .into_iter()
    .map(|u| update(session_id, u))
    .collect()
}

/// The `session/request_permission` params for editing the parser.
pub fn permission_request(session_id: &str, tool_call_id: &str) -> Value {
    json!({
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": tool_call_id,
            "title": "Edit src/parser.rs",
            "kind": "edit",
            "status": "pending",
            "locations": [{ "path": format!("{PROJECT}/src/parser.rs"), "line": 42 }]
        },
        "options": [
            { "optionId": "allow-once", "name": "Allow", "kind": "allow_once" },
            { "optionId": "allow-always", "name": "Always allow edits", "kind": "allow_always" },
            { "optionId": "reject-once", "name": "Reject", "kind": "reject_once" }
        ]
    })
}

pub fn read_request(session_id: &str) -> Value {
    json!({ "sessionId": session_id, "path": format!("{PROJECT}/src/parser.rs"), "line": 40, "limit": 10 })
}

pub fn write_request(session_id: &str) -> Value {
    json!({
        "sessionId": session_id,
        "path": format!("{PROJECT}/src/parser.rs"),
        "content": "pub fn parse(input: &str) -> Result<Ast, Error> {\n    if input.is_empty() {\n        return Ok(Ast::empty());\n    }\n    todo!()\n}\n"
    })
}

pub fn terminal_create_request(session_id: &str) -> Value {
    json!({
        "sessionId": session_id,
        "command": "cargo",
        "args": ["test", "-p", "parser"],
        "env": [{ "name": "RUST_BACKTRACE", "value": "1" }],
        "cwd": PROJECT,
        "outputByteLimit": 65536
    })
}

/// The params of `terminal/output`, `wait_for_exit`, `kill` and `release`.
pub fn terminal_request(session_id: &str, terminal_id: &str) -> Value {
    json!({ "sessionId": session_id, "terminalId": terminal_id })
}

/// The tool call showing a terminal's output.
pub fn terminal_tool_call(session_id: &str, terminal_id: &str) -> Value {
    update(
        session_id,
        json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "call-test-1",
            "title": "cargo test -p parser",
            "kind": "execute",
            "status": "in_progress",
            "content": [{ "type": "terminal", "terminalId": terminal_id }]
        }),
    )
}

pub fn form_elicitation_request(session_id: &str) -> Value {
    json!({
        "mode": "form",
        "sessionId": session_id,
        "message": "Which branch should the fix go on?",
        "requestedSchema": {
            "type": "object",
            "title": "Branch",
            "properties": {
                "branch": { "type": "string", "title": "Branch name", "default": "fix/empty-input" },
                "push": { "type": "boolean", "title": "Push when done", "default": false }
            },
            "required": ["branch"]
        }
    })
}

pub fn url_elicitation_request(session_id: &str) -> Value {
    json!({
        "mode": "url",
        "sessionId": session_id,
        "elicitationId": "elicit-login-1",
        "url": "https://example.com/login?state=conformance",
        "message": "Sign in to the package registry"
    })
}

pub fn elicitation_complete() -> Value {
    json!({ "elicitationId": "elicit-login-1" })
}

/// An extension request and notification the client may not know.
pub const EXT_REQUEST: &str = "_conformance/lint";
pub const EXT_NOTIFICATION: &str = "_conformance/progress";

pub fn ext_request(session_id: &str) -> Value {
    json!({ "sessionId": session_id, "files": ["src/parser.rs"] })
}

pub fn ext_notification(session_id: &str) -> Value {
    json!({ "sessionId": session_id, "step": "lint", "done": 1, "total": 3 })
}

/// An MCP `sampling/createMessage` result answering `question`.
pub fn sampling_result(question: &str) -> Value {
    json!({
        "role": "assistant",
        "content": { "type": "text", "text": format!("sampled: {question}") },
        "model": "conformance-model",
        "stopReason": "endTurn"
    })
}
