//! The inner MCP server of one connection: answers `initialize`, `ping`, `tools/list` and
//! `tools/call` against one session's notebook. Knows nothing of ACP, connections or sessions.

use proxy_kit::{RawValue, RpcError, error_code};
use serde_json::{Value, json};

use crate::tools::{self, Notebook};

/// The MCP revisions this server speaks; a client asking for another gets [`LATEST`].
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
pub const LATEST: &str = "2025-11-25";

const INSTRUCTIONS: &str = "Notes the user asked you to remember in this session. Call \
    `remember` when the user asks you to remember something, `recall` to see what was \
    remembered, and `forget` to remove a note by its number. Each session has its own notes.";

/// The answer to one inner MCP request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The MCP result.
    pub result: Value,
    /// For `tools/call`: the tool's name and whether it reported an error.
    pub tool: Option<(String, bool)>,
}

impl Reply {
    fn plain(result: Value) -> Self {
        Reply { result, tool: None }
    }
}

/// Answers MCP request `method` of server `server_name` with `params` as received; the
/// error is the MCP (JSON-RPC) error to answer with.
pub fn handle(
    server_name: &str,
    method: &str,
    params: Option<&RawValue>,
    notebook: &mut Notebook,
) -> Result<Reply, RpcError> {
    let params: Value = match params {
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| invalid_params(format!("params are not JSON ({e})")))?,
        None => Value::Null,
    };
    match method {
        "initialize" => Ok(Reply::plain(initialize(server_name, &params))),
        "ping" => Ok(Reply::plain(json!({}))),
        "tools/list" => Ok(Reply::plain(json!({"tools": tools::descriptors()}))),
        "tools/call" => call_tool(&params, notebook),
        _ => Err(RpcError::new(
            error_code::METHOD_NOT_FOUND,
            format!("Method not found: `{method}` (this server offers tools only)"),
        )),
    }
}

fn initialize(server_name: &str, params: &Value) -> Value {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = requested
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(LATEST);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": server_name, "version": env!("CARGO_PKG_VERSION")},
        "instructions": INSTRUCTIONS,
    })
}

fn call_tool(params: &Value, notebook: &mut Notebook) -> Result<Reply, RpcError> {
    let Some(name) = params.get("name") else {
        return Err(invalid_params("tools/call without a tool `name`"));
    };
    let Some(name) = name.as_str() else {
        return Err(invalid_params(
            "tools/call: the tool `name` must be a string",
        ));
    };
    match tools::call(notebook, name, params.get("arguments")) {
        Some(output) => Ok(Reply {
            result: output.to_result(),
            tool: Some((name.to_string(), output.is_error)),
        }),
        None => Err(invalid_params(format!(
            "Unknown tool: `{name}` (tools: {})",
            tools::TOOL_NAMES.join(", ")
        ))),
    }
}

fn invalid_params(message: impl Into<String>) -> RpcError {
    RpcError::new(error_code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn ask(book: &mut Notebook, method: &str, params: Option<&str>) -> Result<Reply, RpcError> {
        let params = params.map(raw);
        handle("notes", method, params.as_deref(), book)
    }

    fn error_of(result: Result<Reply, RpcError>) -> (i64, String) {
        let error = result.expect_err("an MCP error");
        (error.code, error.message)
    }

    #[test]
    fn initialize_echoes_a_known_version_else_offers_the_latest() {
        let mut book = Notebook::new();
        for version in PROTOCOL_VERSIONS {
            let reply = ask(
                &mut book,
                "initialize",
                Some(&format!(
                    r#"{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}"#
                )),
            )
            .unwrap();
            assert_eq!(reply.result["protocolVersion"], version);
            assert_eq!(reply.tool, None);
        }
        for params in [
            Some(r#"{"protocolVersion":"2099-01-01"}"#),
            Some(r#"{"protocolVersion":5}"#),
            Some("{}"),
            Some("null"),
            None,
        ] {
            let reply = ask(&mut book, "initialize", params).unwrap();
            assert_eq!(reply.result["protocolVersion"], LATEST, "{params:?}");
        }
        let reply = ask(&mut book, "initialize", None).unwrap();
        assert_eq!(
            reply.result,
            json!({
                "protocolVersion": LATEST,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "notes", "version": env!("CARGO_PKG_VERSION")},
                "instructions": INSTRUCTIONS,
            })
        );
        let named = handle("memo", "initialize", None, &mut book).unwrap();
        assert_eq!(named.result["serverInfo"]["name"], "memo");
    }

    #[test]
    fn ping_and_tools_list() {
        let mut book = Notebook::new();
        assert_eq!(ask(&mut book, "ping", None).unwrap().result, json!({}));
        assert_eq!(
            ask(&mut book, "ping", Some("{}")).unwrap().result,
            json!({})
        );
        let list = ask(&mut book, "tools/list", Some(r#"{"cursor":null}"#)).unwrap();
        assert_eq!(list.result, json!({"tools": tools::descriptors()}));
    }

    #[test]
    fn tools_call_runs_the_tool_on_the_notebook() {
        let mut book = Notebook::new();
        let reply = ask(
            &mut book,
            "tools/call",
            Some(r#"{"name":"remember","arguments":{"note":"Use tabs"},"_meta":{"progressToken":1}}"#),
        )
        .unwrap();
        assert_eq!(
            reply.result,
            json!({"content":[{"type":"text","text":"Remembered note 1 for this session: Use tabs"}]})
        );
        assert_eq!(reply.tool, Some(("remember".to_string(), false)));
        assert_eq!(book.notes(), ["Use tabs"]);
        let reply = ask(&mut book, "tools/call", Some(r#"{"name":"recall"}"#)).unwrap();
        assert_eq!(
            reply.result["content"][0]["text"],
            "1 note for this session:\n1. Use tabs"
        );
        let reply = ask(
            &mut book,
            "tools/call",
            Some(r#"{"name":"forget","arguments":{"number":4}}"#),
        )
        .unwrap();
        assert_eq!(reply.result["isError"], true);
        assert_eq!(reply.tool, Some(("forget".to_string(), true)));
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn protocol_errors() {
        let mut book = Notebook::new();
        let invalid = error_code::INVALID_PARAMS;
        assert_eq!(
            error_of(ask(
                &mut book,
                "tools/call",
                Some(r#"{"name":"erase","arguments":{}}"#)
            )),
            (
                invalid,
                "Unknown tool: `erase` (tools: remember, recall, forget)".into()
            )
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", Some("{}"))),
            (invalid, "tools/call without a tool `name`".into())
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", None)),
            (invalid, "tools/call without a tool `name`".into())
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", Some(r#"{"name":7}"#))),
            (
                invalid,
                "tools/call: the tool `name` must be a string".into()
            )
        );
        assert_eq!(
            error_of(ask(&mut book, "resources/list", Some("{}"))),
            (
                error_code::METHOD_NOT_FOUND,
                "Method not found: `resources/list` (this server offers tools only)".into()
            )
        );
        let (code, message) = error_of(ask(&mut book, "ping", Some(r#"{"x":1e400}"#)));
        assert_eq!(code, invalid);
        assert!(message.starts_with("params are not JSON"), "{message}");
        assert!(book.is_empty());
    }
}
