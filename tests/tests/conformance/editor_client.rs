//! The test editor as a schema-valid client: its `initialize` params, and its answers to every
//! agent→client request, including an MCP server it serves over ACP in schema 1.20's form.
//!
//! What the editor sends is not judged (the conductor did not write it), but the conductor
//! carries it on to proxies and the agent, where it is: so it has to be valid ACP.

use acp_conductor_tests::editor::Reply;
use serde_json::{Value, json};

/// The MCP server the editor declares, schema 1.20's form.
pub const EDITOR_SERVER: &str = "editor-1";

pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": { "readTextFile": true, "writeTextFile": true },
            "terminal": true,
            "elicitation": { "form": {}, "url": {} },
            "plan": {}
        },
        "clientInfo": { "name": "conformance-editor", "title": "Conformance editor", "version": "1.0.0" }
    })
}

/// The editor's declaration of its MCP server, for a session setup's `mcpServers`.
pub fn editor_server_declaration() -> Value {
    json!({ "type": "acp", "name": "editor-tools", "serverId": EDITOR_SERVER })
}

/// The editor's answer to a request from the agent side.
pub fn answer(request: &Value) -> Reply {
    let params = &request["params"];
    let method = request["method"].as_str().unwrap_or_default();
    Ok(match method {
        "session/request_permission" => {
            json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } })
        }
        "fs/read_text_file" => json!({
            "content": "pub fn parse(input: &str) -> Result<Ast, Error> {\n    if input.len() > 0 {\n"
        }),
        "fs/write_text_file" | "terminal/kill" | "terminal/release" => json!({}),
        "terminal/create" => json!({ "terminalId": "term-1" }),
        "terminal/output" => json!({
            "output": "running 42 tests\ntest result: ok. 42 passed\n",
            "truncated": false,
            "exitStatus": { "exitCode": 0, "signal": null }
        }),
        "terminal/wait_for_exit" => json!({ "exitCode": 0, "signal": null }),
        "elicitation/create" if params["mode"] == "form" => json!({
            "action": "accept",
            "content": { "branch": "fix/empty-input", "push": false }
        }),
        "elicitation/create" => json!({ "action": "accept" }),
        "_conformance/lint" => json!({ "problems": [] }),
        "mcp/connect" => {
            return Err(json!({ "code": -32601, "message": "method not found: mcp/connect" }));
        }
        "mcp/message" if params["serverId"] == EDITOR_SERVER => mcp_message(params),
        _ => {
            return Err(
                json!({ "code": -32601, "message": format!("method not found: {method}") }),
            );
        }
    })
}

/// The editor's MCP server, stateless MCP over schema 1.20's `mcp/message`: the MCP outcome
/// is carried in the result as `{"result": ...}` or `{"error": ...}`.
fn mcp_message(params: &Value) -> Value {
    let server_info = json!({ "name": "editor-tools", "version": "1.0.0" });
    match params["method"].as_str().unwrap_or_default() {
        "server/discover" => json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} },
            "serverInfo": server_info,
            "instructions": "The files open in the editor"
        }}),
        "tools/list" => json!({ "result": { "tools": [{
            "name": "open_files",
            "description": "The files open in the editor",
            "inputSchema": { "type": "object", "properties": {} }
        }]}}),
        "tools/call" => json!({ "result": {
            "content": [{ "type": "text", "text": "src/parser.rs, PLAN.md" }]
        }}),
        other => {
            json!({ "error": { "code": -32601, "message": format!("method not found: {other}") } })
        }
    }
}
