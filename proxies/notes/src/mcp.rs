//! The inner MCP server of one declared server: answers `server/discover` (stateless MCP
//! 2026-07-28), `initialize`, `ping`, `tools/list` and `tools/call` on one session's notebook.
//!
//! Knows nothing of ACP, server ids or sessions: it gets an inner method and its params and
//! gives the inner result or the inner MCP error. A request whose `params._meta` names a
//! revision (`io.modelcontextprotocol/protocolVersion`, as stateless MCP requires on every
//! request) is answered in that revision; other `_meta` keys (client capabilities, progress
//! tokens, ...) ask nothing of a server that answers every request at once.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::tools::{self, Notebook};

/// The MCP revisions with an `initialize` handshake this server speaks, oldest first; a client
/// asking for another gets [`LATEST`].
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest revision with an `initialize` handshake.
pub const LATEST: &str = "2025-11-25";
/// The stateless revision: no handshake; `server/discover`, and `_meta` on every request.
pub const STATELESS: &str = "2026-07-28";
/// Every revision this server speaks, as `server/discover` lists them.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    PROTOCOL_VERSIONS[0],
    PROTOCOL_VERSIONS[1],
    PROTOCOL_VERSIONS[2],
    PROTOCOL_VERSIONS[3],
    STATELESS,
];

/// The request `_meta` key naming the revision of a stateless request.
pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The result `_meta` key under which revision 2026-07-28 puts `serverInfo`.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// MCP error codes this server answers with (JSON-RPC's, plus MCP's own).
pub mod code {
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    /// The request's `_meta` names a revision this server does not speak (MCP 2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

const INSTRUCTIONS: &str = "Notes the user asked you to remember in this session. Call \
    `remember` when the user asks you to remember something, `recall` to see what was \
    remembered, and `forget` to remove a note by its number. Each session has its own notes.";

/// An inner MCP error: the `error` of an MCP response, never an ACP error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl McpError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        McpError {
            code,
            message: message.into(),
            data: None,
        }
    }
}

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

/// Answers MCP request `method` of server `server_name` with `params` (an absent or `null`
/// params object reads as `{}`).
pub fn handle(
    server_name: &str,
    method: &str,
    params: &Map<String, Value>,
    notebook: &mut Notebook,
) -> Result<Reply, McpError> {
    let revision = requested_revision(method, params)?;
    let mut reply = match method {
        "server/discover" => Reply::plain(discover(server_name)),
        "initialize" => Reply::plain(initialize(server_name, params)),
        "ping" => Reply::plain(json!({})),
        "tools/list" => Reply::plain(json!({"tools": tools::descriptors()})),
        "tools/call" => call_tool(params, notebook)?,
        _ => {
            return Err(McpError::new(
                code::METHOD_NOT_FOUND,
                format!("Method not found: `{method}` (this server offers tools only)"),
            ));
        }
    };
    // Revision 2026-07-28 requires `resultType` in every result, and caching hints on the
    // cacheable ones; older revisions know neither.
    if revision == Some(STATELESS)
        && let Value::Object(result) = &mut reply.result
    {
        result.insert("resultType".into(), json!("complete"));
        if method == "tools/list" {
            insert_cache_hints(result);
        }
    }
    Ok(reply)
}

/// The revision a request names in `params._meta`, if it names one. `initialize` negotiates in
/// its own params instead, so its `_meta` is not read.
fn requested_revision(
    method: &str,
    params: &Map<String, Value>,
) -> Result<Option<&'static str>, McpError> {
    if method == "initialize" {
        return Ok(None);
    }
    let Some(requested) = params
        .get("_meta")
        .and_then(Value::as_object)
        .and_then(|meta| meta.get(VERSION_KEY))
    else {
        return Ok(None);
    };
    match SUPPORTED_VERSIONS
        .into_iter()
        .find(|v| requested.as_str() == Some(*v))
    {
        Some(version) => Ok(Some(version)),
        None => Err(McpError {
            code: code::UNSUPPORTED_PROTOCOL_VERSION,
            message: "Unsupported protocol version".into(),
            data: Some(json!({"requested": requested, "supported": SUPPORTED_VERSIONS})),
        }),
    }
}

fn server_info(server_name: &str) -> Value {
    json!({"name": server_name, "version": env!("CARGO_PKG_VERSION")})
}

/// The `server/discover` result of revision 2026-07-28: what this server speaks and offers,
/// with `serverInfo` under `_meta` where that revision keeps it. Nothing is worth caching.
fn discover(server_name: &str) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": {"tools": {}},
        "instructions": INSTRUCTIONS,
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {SERVER_INFO_KEY: server_info(server_name)},
    })
}

/// The caching hints revision 2026-07-28 requires on cacheable results: nothing is worth
/// caching (`ttlMs` 0), and nothing is to be shared between callers (`private`).
fn insert_cache_hints(result: &mut Map<String, Value>) {
    result.insert("ttlMs".into(), json!(0));
    result.insert("cacheScope".into(), json!("private"));
}

fn initialize(server_name: &str, params: &Map<String, Value>) -> Value {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let version = requested
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(LATEST);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": server_info(server_name),
        "instructions": INSTRUCTIONS,
    })
}

fn call_tool(params: &Map<String, Value>, notebook: &mut Notebook) -> Result<Reply, McpError> {
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

fn invalid_params(message: impl Into<String>) -> McpError {
    McpError::new(code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(book: &mut Notebook, method: &str, params: Value) -> Result<Reply, McpError> {
        let params = match params {
            Value::Object(members) => members,
            Value::Null => Map::new(),
            other => panic!("params must be an object: {other}"),
        };
        handle("notes", method, &params, book)
    }

    fn error_of(result: Result<Reply, McpError>) -> (i64, String) {
        let error = result.expect_err("an MCP error");
        (error.code, error.message)
    }

    /// The `_meta` the conductor's bridge adds to every request it sends connectionless.
    fn stateless(mut params: Value) -> Value {
        params["_meta"] = json!({
            VERSION_KEY: STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        });
        params
    }

    #[test]
    fn discover_tells_revisions_capabilities_server_info_and_instructions() {
        let mut book = Notebook::new();
        let expected = json!({
            "resultType": "complete",
            "supportedVersions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
            "capabilities": {"tools": {}},
            "instructions": INSTRUCTIONS,
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {
                "io.modelcontextprotocol/serverInfo":
                    {"name": "notes", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        // As the bridge asks it, and bare (a client speaking MCP over ACP itself may).
        for params in [stateless(json!({})), Value::Null] {
            let reply = ask(&mut book, "server/discover", params).unwrap();
            assert_eq!(reply.result, expected);
            assert_eq!(reply.tool, None);
        }
        let named = handle("memo", "server/discover", &Map::new(), &mut book).unwrap();
        assert_eq!(named.result["_meta"][SERVER_INFO_KEY]["name"], "memo");
        assert!(book.is_empty());
    }

    #[test]
    fn initialize_echoes_a_known_version_else_offers_the_latest() {
        let mut book = Notebook::new();
        for version in PROTOCOL_VERSIONS {
            let reply = ask(
                &mut book,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
            )
            .unwrap();
            assert_eq!(reply.result["protocolVersion"], version);
            assert_eq!(reply.tool, None);
        }
        for params in [
            json!({"protocolVersion": "2099-01-01"}),
            // The stateless revision has no handshake to offer.
            json!({"protocolVersion": STATELESS}),
            json!({"protocolVersion": 5}),
            json!({}),
            Value::Null,
        ] {
            let reply = ask(&mut book, "initialize", params.clone()).unwrap();
            assert_eq!(reply.result["protocolVersion"], LATEST, "{params}");
        }
        let expected = json!({
            "protocolVersion": LATEST,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": env!("CARGO_PKG_VERSION")},
            "instructions": INSTRUCTIONS,
        });
        assert_eq!(
            ask(&mut book, "initialize", Value::Null).unwrap().result,
            expected
        );
        // Its `_meta` is not read: the handshake names the revision.
        let odd_meta = json!({"_meta": {VERSION_KEY: "1999-01-01"}});
        assert_eq!(
            ask(&mut book, "initialize", odd_meta).unwrap().result,
            expected
        );
        let named = handle("memo", "initialize", &Map::new(), &mut book).unwrap();
        assert_eq!(named.result["serverInfo"]["name"], "memo");
    }

    #[test]
    fn ping_and_tools_list() {
        let mut book = Notebook::new();
        assert_eq!(
            ask(&mut book, "ping", Value::Null).unwrap().result,
            json!({})
        );
        let list = ask(&mut book, "tools/list", json!({"cursor": null})).unwrap();
        assert_eq!(list.result, json!({"tools": tools::descriptors()}));
    }

    #[test]
    fn stateless_requests_get_a_result_type_and_a_list_its_caching_hints() {
        let mut book = Notebook::new();
        let list = ask(&mut book, "tools/list", stateless(json!({}))).unwrap();
        assert_eq!(
            list.result,
            json!({"tools": tools::descriptors(), "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
        );
        let call = ask(
            &mut book,
            "tools/call",
            stateless(json!({"name": "remember", "arguments": {"note": "x"}})),
        )
        .unwrap();
        assert_eq!(
            call.result,
            json!({
                "content": [{"type": "text", "text": "Remembered note 1 for this session: x"}],
                "resultType": "complete",
            })
        );
        // A request naming an older revision is answered in it.
        let old = json!({"_meta": {VERSION_KEY: "2025-06-18", "progressToken": 1}});
        let list = ask(&mut book, "tools/list", old).unwrap();
        assert_eq!(list.result, json!({"tools": tools::descriptors()}));
    }

    #[test]
    fn a_revision_this_server_does_not_speak_is_refused() {
        let mut book = Notebook::new();
        for requested in [json!("2099-01-01"), json!(20260728), Value::Null] {
            let params = json!({"name": "remember", "arguments": {"note": "x"}, "_meta": {VERSION_KEY: requested}});
            let error = ask(&mut book, "tools/call", params).unwrap_err();
            assert_eq!(
                error,
                McpError {
                    code: -32022,
                    message: "Unsupported protocol version".into(),
                    data: Some(json!({"requested": requested, "supported": SUPPORTED_VERSIONS})),
                }
            );
        }
        assert!(book.is_empty());
        // `_meta` that is not an object names no revision.
        let reply = ask(&mut book, "tools/list", json!({"_meta": 7})).unwrap();
        assert!(reply.result.get("resultType").is_none());
    }

    #[test]
    fn tools_call_runs_the_tool_on_the_notebook() {
        let mut book = Notebook::new();
        let reply = ask(
            &mut book,
            "tools/call",
            json!({"name": "remember", "arguments": {"note": "Use tabs"}, "_meta": {"progressToken": 1}}),
        )
        .unwrap();
        assert_eq!(
            reply.result,
            json!({"content":[{"type":"text","text":"Remembered note 1 for this session: Use tabs"}]})
        );
        assert_eq!(reply.tool, Some(("remember".to_string(), false)));
        assert_eq!(book.notes(), ["Use tabs"]);
        let reply = ask(&mut book, "tools/call", json!({"name": "recall"})).unwrap();
        assert_eq!(
            reply.result["content"][0]["text"],
            "1 note for this session:\n1. Use tabs"
        );
        let reply = ask(
            &mut book,
            "tools/call",
            json!({"name": "forget", "arguments": {"number": 4}}),
        )
        .unwrap();
        assert_eq!(reply.result["isError"], true);
        assert_eq!(reply.tool, Some(("forget".to_string(), true)));
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn protocol_errors() {
        let mut book = Notebook::new();
        let invalid = code::INVALID_PARAMS;
        assert_eq!(
            error_of(ask(
                &mut book,
                "tools/call",
                json!({"name": "erase", "arguments": {}})
            )),
            (
                invalid,
                "Unknown tool: `erase` (tools: remember, recall, forget)".into()
            )
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", json!({}))),
            (invalid, "tools/call without a tool `name`".into())
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", Value::Null)),
            (invalid, "tools/call without a tool `name`".into())
        );
        assert_eq!(
            error_of(ask(&mut book, "tools/call", json!({"name": 7}))),
            (
                invalid,
                "tools/call: the tool `name` must be a string".into()
            )
        );
        assert_eq!(
            error_of(ask(&mut book, "resources/list", json!({}))),
            (
                code::METHOD_NOT_FOUND,
                "Method not found: `resources/list` (this server offers tools only)".into()
            )
        );
        assert!(book.is_empty());
        let error = ask(&mut book, "prompts/list", Value::Null).unwrap_err();
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": -32601, "message": "Method not found: `prompts/list` (this server offers tools only)"})
        );
    }
}
