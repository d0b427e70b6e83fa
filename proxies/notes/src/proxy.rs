//! The notes proxy's hooks and tables: declare an MCP server in each session setup, map each
//! server id to its session's notebook, answer the connectionless `mcp/message` of schema 1.20.

use std::collections::HashMap;

use proxy_kit::json::{array_items, array_of, set_member, to_raw};
use proxy_kit::{
    Notification, NotificationAction, Peers, Proxy, RawValue, Request, RequestAction, Response,
    ResponseAction, RpcError, error_code,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::mcp;
use crate::tools::Notebook;

pub struct NotesProxy {
    /// The declared servers' `name`, and the prefix of their ids.
    name: String,
    registry: Registry,
}

impl NotesProxy {
    pub fn new(name: impl Into<String>) -> Self {
        NotesProxy {
            name: name.into(),
            registry: Registry::default(),
        }
    }

    /// Adds our server to the `mcpServers` of a session setup request.
    fn declare(&mut self, request: &Request<'_>, method: &'static str) -> RequestAction<Self> {
        let Some((params, server_id)) =
            self.add_declaration(method, request.id(), request.params())
        else {
            return RequestAction::Forward;
        };
        RequestAction::forward_modified_then(params, move |me: &mut Self, _, response| {
            me.after_setup(&server_id, method, response);
            ResponseAction::Forward
        })
    }

    /// The params of session setup `method` (request `request_id`) with a new server's
    /// declaration appended to `mcpServers`, every other byte kept, and the server's id.
    /// `None` (and a warning) when the params cannot take one; they then pass unchanged.
    fn add_declaration(
        &mut self,
        method: &'static str,
        request_id: &str,
        raw_params: Option<&RawValue>,
    ) -> Option<(Box<RawValue>, String)> {
        let Some(raw_params) = raw_params else {
            proxy_kit::warn!(
                "{method} {request_id} without params; no {} server declared",
                self.name
            );
            return None;
        };
        let params: SetupParams<'_> = match serde_json::from_str(raw_params.get()) {
            Ok(params) => params,
            Err(e) => {
                proxy_kit::warn!(
                    "{method} {request_id} params not understood ({e}); no {} server declared",
                    self.name
                );
                return None;
            }
        };
        let servers = match params.mcp_servers {
            None => Vec::new(),
            Some(raw) => match array_items(raw) {
                Some(items) => items,
                None => {
                    proxy_kit::warn!(
                        "{method} {request_id}: `mcpServers` is not an array; no {} server declared",
                        self.name
                    );
                    return None;
                }
            },
        };
        let origin = match (method, params.session_id) {
            ("session/new", _) => Origin::Fresh,
            ("session/fork", Some(parent)) => Origin::ForkOf(parent),
            (_, Some(session)) => Origin::Session(session),
            (_, None) => {
                proxy_kit::warn!(
                    "{method} {request_id} without a sessionId; no {} server declared",
                    self.name
                );
                return None;
            }
        };
        let what = match &origin {
            Origin::Fresh => format!("a new session ({method} {request_id})"),
            Origin::ForkOf(parent) => {
                let copied = self.registry.session_notes(parent).map_or(0, Notebook::len);
                format!(
                    "a fork of session {parent} ({method} {request_id}, {copied} note(s) copied)"
                )
            }
            Origin::Session(session) => format!("session {session} ({method})"),
        };
        let server_id = self.registry.declare(&self.name, origin);
        proxy_kit::info!("declared MCP server {server_id} for {what}");
        let declaration = to_raw(&Declaration {
            kind: "acp",
            name: &self.name,
            server_id: &server_id,
        });
        let servers = array_of(servers.into_iter().chain([&*declaration]));
        Some((set_member(raw_params, &["mcpServers"], &servers), server_id))
    }

    fn after_setup(&mut self, server_id: &str, method: &str, response: Response<'_>) {
        if response.error().is_some() {
            proxy_kit::info!("{method} failed; MCP server {server_id} withdrawn");
            self.registry.withdraw(server_id);
            return;
        }
        if !matches!(method, "session/new" | "session/fork") {
            return;
        }
        match response.parse_result::<SessionResult>() {
            Some(Ok(result)) => {
                let merged = self.registry.bind(server_id, &result.session_id);
                proxy_kit::info!(
                    "MCP server {server_id} serves session {}",
                    result.session_id
                );
                if let Some(dropped) = merged {
                    proxy_kit::warn!(
                        "session {} already had notes; notes taken before its setup answered were \
                         added to them ({dropped} did not fit)",
                        result.session_id
                    );
                }
            }
            Some(Err(e)) => proxy_kit::warn!(
                "{method} result without a sessionId ({e}); MCP server {server_id} keeps notes of its own"
            ),
            None => {}
        }
    }

    /// Answers an `mcp/message` request: the outer result carries the inner MCP outcome,
    /// `{"result": ...}` or `{"error": ...}`; the outer error is for a message this proxy
    /// cannot take (not the connectionless form, or no server of ours).
    fn message(&mut self, params: Option<&RawValue>) -> Result<Box<RawValue>, RpcError> {
        let params: MessageParams<'_> = serde_json::from_str(params.map_or("null", RawValue::get))
            .map_err(|e| invalid(format!("mcp/message params not understood: {e}")))?;
        if params.connection_id.is_some() {
            return Err(invalid(format!(
                "mcp/message with a `connectionId` is the retired connection form; the {} MCP \
                 servers of this proxy speak the connectionless form of schema 1.20: send \
                 `mcp/message` with `serverId` and `requestId`, without `mcp/connect`",
                self.name
            )));
        }
        let Some(server_id) = params.server_id else {
            return Err(invalid(
                "mcp/message needs `serverId`: the id of the declared MCP server",
            ));
        };
        let Some(request_id) = params
            .request_id
            .and_then(|id| serde_json::from_str::<String>(id.get()).ok())
        else {
            return Err(invalid(
                "mcp/message needs `requestId`: a string the caller chose to name this MCP request",
            ));
        };
        let Some(method) = params.method else {
            return Err(invalid("mcp/message needs `method`: the inner MCP method"));
        };
        let inner_params = match params.params {
            None => Map::new(),
            Some(raw) => serde_json::from_str::<Option<Map<String, Value>>>(raw.get())
                .map_err(|e| {
                    invalid(format!(
                        "mcp/message `params` must be the inner MCP params object or null: {e}"
                    ))
                })?
                .unwrap_or_default(),
        };
        let Some((session, notebook)) = self.registry.open(&server_id) else {
            return Err(invalid(format!(
                "Unknown MCP server `{server_id}`: this {} proxy declared no server with that id",
                self.name
            )));
        };
        proxy_kit::debug!("{server_id}: MCP request `{method}` (requestId {request_id:?})");
        let outcome = match mcp::handle(&self.name, &method, &inner_params, notebook) {
            Ok(reply) => {
                if let Some((tool, failed)) = &reply.tool {
                    proxy_kit::info!(
                        "{}: tool `{tool}` via {server_id} {}; {} note(s) stored",
                        session.map_or_else(
                            || "session not yet known".to_string(),
                            |s| format!("session {s}")
                        ),
                        if *failed { "refused" } else { "done" },
                        notebook.len()
                    );
                }
                json!({"result": reply.result})
            }
            Err(error) => {
                proxy_kit::debug!(
                    "{server_id}: MCP `{method}` (requestId {request_id:?}) failed: {} {}",
                    error.code,
                    error.message
                );
                json!({"error": error})
            }
        };
        Ok(to_raw(&outcome))
    }

    /// The answer to `mcp/connect` / `mcp/disconnect`, gone from schema 1.20: method not found,
    /// which tells a caller (the conductor's bridge among them) to speak connectionless.
    fn retired(&self, method: &str, params: Option<&RawValue>) -> RpcError {
        let server = params
            .and_then(|p| serde_json::from_str::<RetiredParams>(p.get()).ok())
            .and_then(|p| p.server_id.or(p.acp_id).or(p.connection_id))
            .unwrap_or_else(|| "no server".to_string());
        proxy_kit::info!(
            "{method} for {server} answered method not found: the {} MCP servers speak \
             connectionless mcp/message",
            self.name
        );
        RpcError::new(
            error_code::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{method}` (the {} MCP servers of this proxy speak the \
                 connectionless form of schema 1.20: `mcp/message` with `serverId` and `requestId`)",
                self.name
            ),
        )
    }

    /// An `mcp/message` notification from the agent side (`notifications/cancelled`, ...):
    /// the server answered every request at once, so none asks anything of it. Consumed.
    fn mcp_notification(&self, params: Option<&RawValue>) {
        let parsed = params.and_then(|p| serde_json::from_str::<NotificationParams>(p.get()).ok());
        match parsed {
            Some(NotificationParams {
                server_id: Some(server_id),
                request_id,
                method,
                connection_id: None,
            }) if self.registry.servers.contains_key(&server_id) => proxy_kit::debug!(
                "{server_id}: MCP notification `{}` for requestId {} consumed",
                method.as_deref().unwrap_or("?"),
                request_id.map_or("(none)", RawValue::get)
            ),
            _ => proxy_kit::warn!(
                "mcp/message notification for no server of ours; dropped: {}",
                params.map_or("", RawValue::get)
            ),
        }
    }
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(error_code::INVALID_PARAMS, message)
}

#[derive(Deserialize)]
struct SetupParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(rename = "mcpServers", borrow)]
    mcp_servers: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionResult {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `McpServerAcp` of schema 1.20, tagged as `mcpServers` entries are.
#[derive(Serialize)]
struct Declaration<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    name: &'a str,
    #[serde(rename = "serverId")]
    server_id: &'a str,
}

/// `MessageMcpRequest` of schema 1.20, read leniently so each missing part gets its own
/// answer; `connectionId` only to recognise the retired form.
#[derive(Deserialize)]
struct MessageParams<'a> {
    #[serde(rename = "serverId")]
    server_id: Option<String>,
    #[serde(rename = "requestId", borrow)]
    request_id: Option<&'a RawValue>,
    method: Option<String>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(rename = "connectionId", borrow)]
    connection_id: Option<&'a RawValue>,
}

/// `MessageMcpNotification` of schema 1.20, for the log.
#[derive(Deserialize)]
struct NotificationParams<'a> {
    #[serde(rename = "serverId")]
    server_id: Option<String>,
    #[serde(rename = "requestId", borrow)]
    request_id: Option<&'a RawValue>,
    method: Option<String>,
    #[serde(rename = "connectionId", borrow)]
    connection_id: Option<&'a RawValue>,
}

/// What an `mcp/connect` or `mcp/disconnect` of an older peer names, for the log.
#[derive(Deserialize)]
struct RetiredParams {
    #[serde(rename = "serverId")]
    server_id: Option<String>,
    #[serde(rename = "acpId")]
    acp_id: Option<String>,
    #[serde(rename = "connectionId")]
    connection_id: Option<String>,
}

impl Proxy for NotesProxy {
    fn on_editor_request(
        &mut self,
        _peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        match request.method() {
            "session/new" => self.declare(request, "session/new"),
            "session/load" => self.declare(request, "session/load"),
            "session/resume" => self.declare(request, "session/resume"),
            "session/fork" => self.declare(request, "session/fork"),
            _ => RequestAction::Forward,
        }
    }

    fn on_agent_request(
        &mut self,
        _peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        match request.method() {
            "mcp/message" => match self.message(request.params()) {
                Ok(result) => RequestAction::Respond(result),
                Err(error) => RequestAction::Fail(error),
            },
            method @ ("mcp/connect" | "mcp/disconnect") => {
                RequestAction::Fail(self.retired(method, request.params()))
            }
            _ => RequestAction::Forward,
        }
    }

    fn on_agent_notification(
        &mut self,
        _peers: &mut Peers<Self>,
        notification: &Notification<'_>,
    ) -> NotificationAction {
        if notification.method() != "mcp/message" {
            return NotificationAction::Forward;
        }
        // None is meant for the editor either: MCP over ACP stops at the server's owner.
        self.mcp_notification(notification.params());
        NotificationAction::Drop
    }
}

/// Where a declared server's notes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// `session/new`: a fresh notebook, bound to the session once its id is known.
    Fresh,
    /// `session/fork` of this session: a copy of its notes, bound once the new id is known.
    ForkOf(String),
    /// `session/load` / `session/resume` of this session: its notebook.
    Session(String),
}

type NotebookId = u64;

#[derive(Debug)]
struct Server {
    notebook: NotebookId,
    /// `None` until the session setup answers with the new session's id.
    session: Option<String>,
}

/// The proxy's tables. A server owns a notebook from its declaration on, so the agent may use
/// the tools before the session setup has answered (some agents list tools first).
#[derive(Debug, Default)]
struct Registry {
    next_server: u64,
    next_notebook: NotebookId,
    /// Declared server id → its notebook and session.
    servers: HashMap<String, Server>,
    /// ACP session id → its notebook.
    sessions: HashMap<String, NotebookId>,
    notebooks: HashMap<NotebookId, Notebook>,
}

impl Registry {
    /// Declares server `<name>-<n>` and returns its id.
    fn declare(&mut self, name: &str, origin: Origin) -> String {
        self.next_server += 1;
        let id = format!("{name}-{}", self.next_server);
        let (notebook, session) = match origin {
            Origin::Fresh => (self.new_notebook(Notebook::new()), None),
            Origin::ForkOf(parent) => {
                let copy = self.session_notes(&parent).cloned().unwrap_or_default();
                (self.new_notebook(copy), None)
            }
            Origin::Session(session) => {
                let notebook = match self.sessions.get(&session) {
                    Some(&notebook) => notebook,
                    None => {
                        let notebook = self.new_notebook(Notebook::new());
                        self.sessions.insert(session.clone(), notebook);
                        notebook
                    }
                };
                (notebook, Some(session))
            }
        };
        self.servers
            .insert(id.clone(), Server { notebook, session });
        id
    }

    fn new_notebook(&mut self, notebook: Notebook) -> NotebookId {
        self.next_notebook += 1;
        self.notebooks.insert(self.next_notebook, notebook);
        self.next_notebook
    }

    /// Binds a server declared for a new or forked session to that session's id. Returns
    /// `Some(dropped)` when the session already had a notebook and the server's notes were
    /// appended to it (`dropped` of them did not fit).
    fn bind(&mut self, server_id: &str, session: &str) -> Option<usize> {
        let server = self.servers.get_mut(server_id)?;
        server.session = Some(session.to_string());
        let own = server.notebook;
        match self.sessions.get(session) {
            None => {
                self.sessions.insert(session.to_string(), own);
                None
            }
            Some(&existing) if existing == own => None,
            Some(&existing) => {
                let notes = self.notebooks.remove(&own).unwrap_or_default();
                let dropped = self.notebooks.entry(existing).or_default().absorb(notes);
                for server in self.servers.values_mut() {
                    if server.notebook == own {
                        server.notebook = existing;
                    }
                }
                Some(dropped)
            }
        }
    }

    /// Forgets a server whose session setup failed, and its notebook unless a session or
    /// another server holds it.
    fn withdraw(&mut self, server_id: &str) {
        let Some(server) = self.servers.remove(server_id) else {
            return;
        };
        let held = self.sessions.values().any(|&n| n == server.notebook)
            || self.servers.values().any(|s| s.notebook == server.notebook);
        if !held {
            self.notebooks.remove(&server.notebook);
        }
    }

    /// The session (once known) and notebook a declared server serves; `None` for an id
    /// never declared or withdrawn.
    fn open(&mut self, server_id: &str) -> Option<(Option<&str>, &mut Notebook)> {
        let server = self.servers.get(server_id)?;
        let notebook = self.notebooks.entry(server.notebook).or_default();
        Some((server.session.as_deref(), notebook))
    }

    fn session_notes(&self, session: &str) -> Option<&Notebook> {
        self.sessions
            .get(session)
            .and_then(|id| self.notebooks.get(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn remember(registry: &mut Registry, server_id: &str, note: &str) {
        let (_, notebook) = registry.open(server_id).unwrap();
        notebook.remember(note).unwrap();
    }

    fn notes(registry: &Registry, session: &str) -> Vec<String> {
        registry
            .session_notes(session)
            .map(|n| n.notes().to_vec())
            .unwrap_or_default()
    }

    /// A proxy with server `notes-1` declared for a new session.
    fn proxy_with_a_server() -> NotesProxy {
        let mut proxy = NotesProxy::new("notes");
        let (_, id) = proxy
            .add_declaration("session/new", "1", Some(&raw(r#"{"cwd":"/p"}"#)))
            .unwrap();
        assert_eq!(id, "notes-1");
        proxy
    }

    /// `mcp/message` with these params; the outer result as JSON, or the outer error.
    fn message(proxy: &mut NotesProxy, params: Value) -> Result<Value, (i64, String)> {
        proxy
            .message(Some(&raw(&params.to_string())))
            .map(|result| serde_json::from_str(result.get()).unwrap())
            .map_err(|error| {
                assert!(error.data.is_none());
                (error.code, error.message)
            })
    }

    fn inner(method: &str, params: Value) -> Value {
        json!({"serverId": "notes-1", "requestId": "r-1", "method": method, "params": params})
    }

    #[test]
    fn the_declaration_is_appended_with_a_server_id_and_other_bytes_kept() {
        let mut proxy = NotesProxy::new("notes");
        let params = raw(
            r#"{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]}],"x":1.50}"#,
        );
        let (out, id) = proxy
            .add_declaration("session/new", "1", Some(&params))
            .unwrap();
        assert_eq!(id, "notes-1");
        assert_eq!(
            out.get(),
            r#"{"cwd":"/p","mcpServers":[{"name":"fs","command":"fs-mcp","args":["-v"],"env":[]},{"type":"acp","name":"notes","serverId":"notes-1"}],"x":1.50}"#
        );
        // Without `mcpServers` (or with `null`) the array is made; the name is the proxy's.
        let mut memo = NotesProxy::new("memo");
        let (out, _) = memo
            .add_declaration("session/new", "2", Some(&raw(r#"{"cwd":"/q"}"#)))
            .unwrap();
        assert_eq!(
            out.get(),
            r#"{"cwd":"/q","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-1"}]}"#
        );
        let (out, _) = memo
            .add_declaration(
                "session/load",
                "3",
                Some(&raw(r#"{"sessionId":"s","cwd":"/q","mcpServers":null}"#)),
            )
            .unwrap();
        assert_eq!(
            out.get(),
            r#"{"sessionId":"s","cwd":"/q","mcpServers":[{"type":"acp","name":"memo","serverId":"memo-2"}]}"#
        );
        // Params that cannot take one pass unchanged, and no server is declared.
        for params in [
            None,
            Some(raw(r#"{"cwd":"/p","mcpServers":{"a":1}}"#)),
            Some(raw("[1]")),
        ] {
            assert!(
                memo.add_declaration("session/new", "4", params.as_deref())
                    .is_none()
            );
        }
        assert!(
            memo.add_declaration("session/load", "5", Some(&raw(r#"{"cwd":"/p"}"#)))
                .is_none()
        );
        assert_eq!(memo.registry.servers.len(), 2);
    }

    #[test]
    fn tools_list_and_call_answer_connectionless_in_a_result_carrier() {
        let mut proxy = proxy_with_a_server();
        let list = message(&mut proxy, inner("tools/list", json!({}))).unwrap();
        assert_eq!(
            list,
            json!({"result": {"tools": crate::tools::descriptors()}})
        );
        let call = message(
            &mut proxy,
            inner(
                "tools/call",
                json!({"name": "remember", "arguments": {"note": "Use tabs"}}),
            ),
        )
        .unwrap();
        assert_eq!(
            call,
            json!({"result": {"content": [{"type": "text", "text": "Remembered note 1 for this session: Use tabs"}]}})
        );
        // As the bridge sends it: stateless `_meta`, no `params` for tools/list.
        let bridged = json!({"serverId": "notes-1", "requestId": "7", "method": "tools/call", "params": {
            "name": "recall",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }});
        assert_eq!(
            message(&mut proxy, bridged).unwrap(),
            json!({"result": {
                "content": [{"type": "text", "text": "1 note for this session:\n1. Use tabs"}],
                "resultType": "complete",
            }})
        );
        for params in [
            json!({"serverId": "notes-1", "requestId": "8", "method": "ping"}),
            json!({"serverId": "notes-1", "requestId": "9", "method": "ping", "params": null, "_meta": {"x": 1}}),
        ] {
            assert_eq!(message(&mut proxy, params).unwrap(), json!({"result": {}}));
        }
        // A tool that refuses its arguments answers with a result marked `isError`.
        let refused = message(
            &mut proxy,
            inner(
                "tools/call",
                json!({"name": "forget", "arguments": {"number": "1"}}),
            ),
        )
        .unwrap();
        assert_eq!(
            refused,
            json!({"result": {"content": [{"type": "text", "text": "`number` must be an integer, not a string."}], "isError": true}})
        );
    }

    #[test]
    fn inner_mcp_errors_come_in_an_error_carrier_of_a_successful_answer() {
        let mut proxy = proxy_with_a_server();
        let cases = [
            (
                inner("tools/call", json!({"name": "erase", "arguments": {}})),
                json!({"code": -32602, "message": "Unknown tool: `erase` (tools: remember, recall, forget)"}),
            ),
            (
                inner("tools/call", json!({"arguments": {"note": "x"}})),
                json!({"code": -32602, "message": "tools/call without a tool `name`"}),
            ),
            (
                inner("prompts/list", json!({})),
                json!({"code": -32601, "message": "Method not found: `prompts/list` (this server offers tools only)"}),
            ),
            (
                inner(
                    "tools/list",
                    json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}),
                ),
                json!({"code": -32022, "message": "Unsupported protocol version", "data": {
                    "requested": "2099-01-01",
                    "supported": crate::mcp::SUPPORTED_VERSIONS,
                }}),
            ),
        ];
        for (params, error) in cases {
            assert_eq!(
                message(&mut proxy, params.clone()),
                Ok(json!({"error": error})),
                "{params}"
            );
        }
        assert!(proxy.registry.open("notes-1").unwrap().1.is_empty());
    }

    #[test]
    fn server_discover_is_answered_for_the_bridge() {
        let mut proxy = proxy_with_a_server();
        let discovered = message(
            &mut proxy,
            inner(
                "server/discover",
                json!({"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                }}),
            ),
        )
        .unwrap();
        let result = &discovered["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["capabilities"], json!({"tools": {}}));
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"],
            json!({"name": "notes", "version": env!("CARGO_PKG_VERSION")})
        );
        assert!(
            result["supportedVersions"]
                .as_array()
                .unwrap()
                .contains(&json!("2026-07-28"))
        );
        assert!(
            result["instructions"]
                .as_str()
                .unwrap()
                .contains("`remember`")
        );
        assert_eq!(discovered.as_object().unwrap().len(), 1);
    }

    #[test]
    fn mcp_connect_and_disconnect_are_not_found() {
        let proxy = proxy_with_a_server();
        let expected = "(the notes MCP servers of this proxy speak the connectionless form of \
                        schema 1.20: `mcp/message` with `serverId` and `requestId`)";
        for (method, params) in [
            ("mcp/connect", Some(raw(r#"{"serverId":"notes-1"}"#))),
            ("mcp/connect", Some(raw(r#"{"acpId":"notes-1"}"#))),
            ("mcp/connect", None),
            ("mcp/disconnect", Some(raw(r#"{"connectionId":"c1"}"#))),
        ] {
            let error = proxy.retired(method, params.as_deref());
            assert_eq!(error.code, -32601);
            assert_eq!(
                error.message,
                format!("Method not found: `{method}` {expected}")
            );
        }
    }

    #[test]
    fn acp_level_failures_are_outer_errors() {
        let mut proxy = proxy_with_a_server();
        let old_form = message(
            &mut proxy,
            json!({"connectionId": "notes-1:1", "method": "tools/list", "params": {}}),
        )
        .unwrap_err();
        assert_eq!(old_form.0, -32602);
        assert!(
            old_form
                .1
                .starts_with("mcp/message with a `connectionId` is the retired connection form;"),
            "{}",
            old_form.1
        );
        assert!(
            old_form.1.contains("speak the connectionless form"),
            "{}",
            old_form.1
        );
        // Even alongside a `serverId`.
        let mixed = inner("ping", json!({}));
        let mut mixed = mixed.as_object().unwrap().clone();
        mixed.insert("connectionId".into(), json!("notes-1:1"));
        assert_eq!(
            message(&mut proxy, Value::Object(mixed)).unwrap_err(),
            old_form
        );

        let invalid = |message: &str| Err((-32602, message.to_string()));
        assert_eq!(
            message(
                &mut proxy,
                json!({"serverId": "other-1", "requestId": "1", "method": "ping"})
            ),
            invalid(
                "Unknown MCP server `other-1`: this notes proxy declared no server with that id"
            )
        );
        assert_eq!(
            message(&mut proxy, json!({"requestId": "1", "method": "ping"})),
            invalid("mcp/message needs `serverId`: the id of the declared MCP server")
        );
        for request_id in [None, Some(json!(1)), Some(json!(null))] {
            let mut params = json!({"serverId": "notes-1", "method": "ping"});
            if let Some(id) = request_id {
                params["requestId"] = id;
            }
            assert_eq!(
                message(&mut proxy, params),
                invalid(
                    "mcp/message needs `requestId`: a string the caller chose to name this MCP request"
                )
            );
        }
        assert_eq!(
            message(&mut proxy, json!({"serverId": "notes-1", "requestId": "1"})),
            invalid("mcp/message needs `method`: the inner MCP method")
        );
        let (code, text) = message(&mut proxy, inner("tools/list", json!([1]))).unwrap_err();
        assert_eq!(code, -32602);
        assert!(
            text.starts_with("mcp/message `params` must be the inner MCP params object or null:"),
            "{text}"
        );
        let error = proxy
            .message(Some(&raw(
                r#"{"serverId":"notes-1","requestId":"1","method":"ping","params":{"x":1e400}}"#,
            )))
            .unwrap_err();
        assert_eq!(error.code, -32602);
        assert!(
            error.message.starts_with("mcp/message `params` must be"),
            "{}",
            error.message
        );
        for params in [None, Some(raw("[1]")), Some(raw(r#"{"serverId":5}"#))] {
            let error = proxy.message(params.as_deref()).unwrap_err();
            assert_eq!(error.code, -32602);
            assert!(
                error
                    .message
                    .starts_with("mcp/message params not understood: "),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn a_withdrawn_server_is_unknown() {
        let mut proxy = proxy_with_a_server();
        proxy.registry.withdraw("notes-1");
        assert_eq!(
            message(&mut proxy, inner("tools/list", json!({}))),
            Err((
                -32602,
                "Unknown MCP server `notes-1`: this notes proxy declared no server with that id"
                    .to_string()
            ))
        );
    }

    #[test]
    fn ids_count_per_declaration() {
        let mut r = Registry::default();
        assert_eq!(r.declare("notes", Origin::Fresh), "notes-1");
        assert_eq!(r.declare("memo", Origin::Session("s".into())), "memo-2");
        assert!(r.open("notes-1").is_some());
        assert_eq!(r.open("memo-2").unwrap().0, Some("s"));
        assert!(r.open("notes-9").is_none());
        assert!(r.open("notes").is_none());
    }

    #[test]
    fn tools_work_before_the_new_session_is_known() {
        let mut r = Registry::default();
        let id = r.declare("notes", Origin::Fresh);
        remember(&mut r, &id, "early");
        assert_eq!(r.open(&id).unwrap().0, None);
        assert_eq!(r.bind(&id, "s1"), None);
        assert_eq!(r.open(&id).unwrap().0, Some("s1"));
        assert_eq!(notes(&r, "s1"), ["early"]);
    }

    #[test]
    fn notes_are_per_session_and_shared_by_its_servers() {
        let mut r = Registry::default();
        let a = r.declare("notes", Origin::Fresh);
        r.bind(&a, "s1");
        let b = r.declare("notes", Origin::Fresh);
        r.bind(&b, "s2");
        remember(&mut r, &a, "one");
        remember(&mut r, &b, "two");
        assert_eq!(notes(&r, "s1"), ["one"]);
        assert_eq!(notes(&r, "s2"), ["two"]);
        // Loading s1 again declares another server on the same notes.
        let again = r.declare("notes", Origin::Session("s1".into()));
        assert_eq!(r.open(&again).unwrap().1.notes(), ["one"]);
        remember(&mut r, &again, "three");
        assert_eq!(notes(&r, "s1"), ["one", "three"]);
        assert_eq!(r.open(&a).unwrap().1.notes(), ["one", "three"]);
        // Loading an unknown session starts it empty.
        let other = r.declare("notes", Origin::Session("s9".into()));
        assert!(r.open(&other).unwrap().1.is_empty());
        assert_eq!(r.open(&other).unwrap().0, Some("s9"));
    }

    #[test]
    fn fork_copies_the_parent_notes() {
        let mut r = Registry::default();
        let a = r.declare("notes", Origin::Fresh);
        r.bind(&a, "parent");
        remember(&mut r, &a, "kept");
        let f = r.declare("notes", Origin::ForkOf("parent".into()));
        remember(&mut r, &f, "fork only");
        r.bind(&f, "child");
        remember(&mut r, &a, "parent only");
        assert_eq!(notes(&r, "parent"), ["kept", "parent only"]);
        assert_eq!(notes(&r, "child"), ["kept", "fork only"]);
        let unknown = r.declare("notes", Origin::ForkOf("nobody".into()));
        r.bind(&unknown, "orphan");
        assert!(notes(&r, "orphan").is_empty());
        assert!(r.session_notes("nobody").is_none());
    }

    #[test]
    fn binding_to_a_session_that_has_notes_merges() {
        let mut r = Registry::default();
        let a = r.declare("notes", Origin::Session("s".into()));
        remember(&mut r, &a, "old");
        let b = r.declare("notes", Origin::Fresh);
        remember(&mut r, &b, "new");
        assert_eq!(r.bind(&b, "s"), Some(0));
        assert_eq!(notes(&r, "s"), ["old", "new"]);
        remember(&mut r, &b, "after");
        assert_eq!(r.open(&a).unwrap().1.notes(), ["old", "new", "after"]);
        assert_eq!(r.notebooks.len(), 1);
        assert_eq!(r.bind(&b, "s"), None);
        assert_eq!(r.bind("notes-99", "s"), None);
    }

    #[test]
    fn withdrawn_servers_lose_their_unheld_notes() {
        let mut r = Registry::default();
        let fresh = r.declare("notes", Origin::Fresh);
        remember(&mut r, &fresh, "lost");
        r.withdraw(&fresh);
        assert!(r.open(&fresh).is_none());
        assert!(r.notebooks.is_empty());
        let loaded = r.declare("notes", Origin::Session("s".into()));
        remember(&mut r, &loaded, "stays");
        r.withdraw(&loaded);
        r.withdraw(&loaded);
        assert!(r.open(&loaded).is_none());
        assert_eq!(notes(&r, "s"), ["stays"]);
    }
}
