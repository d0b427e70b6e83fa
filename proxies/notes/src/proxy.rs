//! The notes proxy's hooks and tables: declare an MCP server in each session setup, map server
//! ids to ACP sessions and connections to servers, relay MCP-over-ACP to the inner server.

use std::collections::HashMap;

use proxy_kit::json::{array_items, array_of, set_member, to_raw};
use proxy_kit::{
    Notification, NotificationAction, Peers, Proxy, RawValue, Request, RequestAction, Response,
    ResponseAction, RpcError, error_code,
};
use serde::{Deserialize, Serialize};

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
        let Some(raw_params) = request.params() else {
            proxy_kit::warn!(
                "{method} {} without params; no {} server declared",
                request.id(),
                self.name
            );
            return RequestAction::Forward;
        };
        let params: SetupParams<'_> = match request.parse_params() {
            Ok(params) => params,
            Err(e) => {
                proxy_kit::warn!(
                    "{method} {} params not understood ({e}); no {} server declared",
                    request.id(),
                    self.name
                );
                return RequestAction::Forward;
            }
        };
        let servers = match params.mcp_servers {
            None => Vec::new(),
            Some(raw) => match array_items(raw) {
                Some(items) => items,
                None => {
                    proxy_kit::warn!(
                        "{method} {}: `mcpServers` is not an array; no {} server declared",
                        request.id(),
                        self.name
                    );
                    return RequestAction::Forward;
                }
            },
        };
        let origin = match (method, params.session_id) {
            ("session/new", _) => Origin::Fresh,
            ("session/fork", Some(parent)) => Origin::ForkOf(parent),
            (_, Some(session)) => Origin::Session(session),
            (_, None) => {
                proxy_kit::warn!(
                    "{method} {} without a sessionId; no {} server declared",
                    request.id(),
                    self.name
                );
                return RequestAction::Forward;
            }
        };
        let what = match &origin {
            Origin::Fresh => format!("a new session ({method} {})", request.id()),
            Origin::ForkOf(parent) => {
                let copied = self.registry.session_notes(parent).map_or(0, Notebook::len);
                format!(
                    "a fork of session {parent} ({method} {}, {copied} note(s) copied)",
                    request.id()
                )
            }
            Origin::Session(session) => format!("session {session} ({method})"),
        };
        let server_id = self.registry.declare(&self.name, origin);
        proxy_kit::info!("declared MCP server {server_id} for {what}");
        let declaration = to_raw(&Declaration {
            kind: "acp",
            name: &self.name,
            id: &server_id,
        });
        let servers = array_of(servers.into_iter().chain([&*declaration]));
        let params = set_member(raw_params, &["mcpServers"], &servers);
        RequestAction::forward_modified_then(params, move |me: &mut Self, _, response| {
            me.after_setup(&server_id, method, response);
            ResponseAction::Forward
        })
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

    fn connect(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let params: ConnectParams = match request.parse_params() {
            Ok(params) => params,
            Err(e) => return invalid(format!("mcp/connect params not understood: {e}")),
        };
        let Some(server_id) = params.acp_id.or(params.server_id) else {
            return invalid("mcp/connect needs `acpId`: the id of the declared MCP server");
        };
        let Some(connection) = self.registry.connect(&server_id) else {
            return invalid(format!(
                "Unknown MCP server `{server_id}`: this {} proxy declared no server with that id",
                self.name
            ));
        };
        proxy_kit::info!(
            "connection {connection} opened to MCP server {server_id} ({})",
            self.registry.session_label(&server_id)
        );
        RequestAction::respond(ConnectResult {
            connection_id: &connection,
        })
    }

    fn message(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let params: MessageParams<'_> = match request.parse_params() {
            Ok(params) => params,
            Err(e) => return invalid(format!("mcp/message params not understood: {e}")),
        };
        let connection = params.connection_id;
        let Some((server_id, session, notebook)) = self.registry.open(&connection) else {
            return invalid(format!("Unknown MCP connection `{connection}`"));
        };
        let method = params.method;
        proxy_kit::debug!("connection {connection}: MCP request `{method}`");
        match mcp::handle(&self.name, &method, params.params, notebook) {
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
                RequestAction::Respond(to_raw(&reply.result))
            }
            Err(error) => {
                proxy_kit::debug!(
                    "connection {connection}: MCP `{method}` failed: {}",
                    error.message
                );
                RequestAction::Fail(error)
            }
        }
    }

    fn disconnect(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let params: DisconnectParams = match request.parse_params() {
            Ok(params) => params,
            Err(e) => return invalid(format!("mcp/disconnect params not understood: {e}")),
        };
        let connection = params.connection_id;
        match self.registry.disconnect(&connection) {
            Some(server_id) => {
                proxy_kit::info!("connection {connection} to MCP server {server_id} closed");
                RequestAction::respond(serde_json::json!({}))
            }
            None => invalid(format!("Unknown MCP connection `{connection}`")),
        }
    }
}

fn invalid<P>(message: impl Into<String>) -> RequestAction<P> {
    RequestAction::Fail(RpcError::new(error_code::INVALID_PARAMS, message))
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

#[derive(Serialize)]
struct Declaration<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    name: &'a str,
    id: &'a str,
}

#[derive(Deserialize)]
struct ConnectParams {
    #[serde(rename = "acpId")]
    acp_id: Option<String>,
    #[serde(rename = "serverId")]
    server_id: Option<String>,
}

#[derive(Serialize)]
struct ConnectResult<'a> {
    #[serde(rename = "connectionId")]
    connection_id: &'a str,
}

#[derive(Deserialize)]
struct MessageParams<'a> {
    #[serde(rename = "connectionId")]
    connection_id: String,
    method: String,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct DisconnectParams {
    #[serde(rename = "connectionId")]
    connection_id: String,
}

#[derive(Deserialize)]
struct NotificationParams {
    #[serde(rename = "connectionId")]
    connection_id: Option<String>,
    method: Option<String>,
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
            "mcp/connect" => self.connect(request),
            "mcp/message" => self.message(request),
            "mcp/disconnect" => self.disconnect(request),
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
        // Our server answers every request at once, so no MCP notification (initialized,
        // cancelled, ...) asks anything of it; none is meant for the editor either.
        match notification.parse_params::<NotificationParams>() {
            Ok(NotificationParams {
                connection_id: Some(connection),
                method,
            }) if self.registry.connections.contains_key(&connection) => {
                proxy_kit::debug!(
                    "connection {connection}: MCP notification `{}` consumed",
                    method.as_deref().unwrap_or("?")
                );
            }
            _ => proxy_kit::warn!(
                "mcp/message notification not on a connection of ours; dropped: {}",
                notification.params().map_or("", RawValue::get)
            ),
        }
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
/// the tools before the session setup has answered (some agents connect to MCP servers first).
#[derive(Debug, Default)]
struct Registry {
    next_server: u64,
    next_connection: u64,
    next_notebook: NotebookId,
    /// Declared server id → its notebook and session.
    servers: HashMap<String, Server>,
    /// Connection id → server id.
    connections: HashMap<String, String>,
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

    /// Forgets a server whose session setup failed, with its connections, and its notebook
    /// unless a session or another server holds it.
    fn withdraw(&mut self, server_id: &str) {
        let Some(server) = self.servers.remove(server_id) else {
            return;
        };
        self.connections.retain(|_, s| s != server_id);
        let held = self.sessions.values().any(|&n| n == server.notebook)
            || self.servers.values().any(|s| s.notebook == server.notebook);
        if !held {
            self.notebooks.remove(&server.notebook);
        }
    }

    /// Opens a fresh connection `<server id>:<m>`; `None` for an unknown server.
    fn connect(&mut self, server_id: &str) -> Option<String> {
        if !self.servers.contains_key(server_id) {
            return None;
        }
        self.next_connection += 1;
        let connection = format!("{server_id}:{}", self.next_connection);
        self.connections
            .insert(connection.clone(), server_id.to_string());
        Some(connection)
    }

    /// The server, session and notebook a connection reaches.
    fn open(&mut self, connection: &str) -> Option<(&str, Option<&str>, &mut Notebook)> {
        let server_id = self.connections.get(connection)?;
        let server = self.servers.get(server_id)?;
        let notebook = self.notebooks.entry(server.notebook).or_default();
        Some((server_id, server.session.as_deref(), notebook))
    }

    /// Closes a connection; returns its server id, `None` if it was not open.
    fn disconnect(&mut self, connection: &str) -> Option<String> {
        self.connections.remove(connection)
    }

    fn session_notes(&self, session: &str) -> Option<&Notebook> {
        self.sessions
            .get(session)
            .and_then(|id| self.notebooks.get(id))
    }

    fn session_label(&self, server_id: &str) -> String {
        match self
            .servers
            .get(server_id)
            .and_then(|s| s.session.as_deref())
        {
            Some(session) => format!("session {session}"),
            None => "session not yet known".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remember(registry: &mut Registry, connection: &str, note: &str) {
        let (_, _, notebook) = registry.open(connection).unwrap();
        notebook.remember(note).unwrap();
    }

    fn notes(registry: &Registry, session: &str) -> Vec<String> {
        registry
            .session_notes(session)
            .map(|n| n.notes().to_vec())
            .unwrap_or_default()
    }

    #[test]
    fn ids_count_per_declaration_and_connection() {
        let mut r = Registry::default();
        assert_eq!(r.declare("notes", Origin::Fresh), "notes-1");
        assert_eq!(r.declare("memo", Origin::Session("s".into())), "memo-2");
        assert_eq!(r.connect("notes-1").as_deref(), Some("notes-1:1"));
        assert_eq!(r.connect("notes-1").as_deref(), Some("notes-1:2"));
        assert_eq!(r.connect("memo-2").as_deref(), Some("memo-2:3"));
        assert_eq!(r.connect("notes-9"), None);
        assert_eq!(r.disconnect("notes-1:1").as_deref(), Some("notes-1"));
        assert_eq!(r.disconnect("notes-1:1"), None);
        assert!(r.open("notes-1:1").is_none());
        assert!(r.open("notes-1:2").is_some());
    }

    #[test]
    fn tools_work_before_the_new_session_is_known() {
        let mut r = Registry::default();
        let id = r.declare("notes", Origin::Fresh);
        let c = r.connect(&id).unwrap();
        remember(&mut r, &c, "early");
        assert_eq!(r.open(&c).unwrap().1, None);
        assert_eq!(r.session_label(&id), "session not yet known");
        assert_eq!(r.bind(&id, "s1"), None);
        assert_eq!(r.open(&c).unwrap().1, Some("s1"));
        assert_eq!(r.session_label(&id), "session s1");
        assert_eq!(notes(&r, "s1"), ["early"]);
    }

    #[test]
    fn notes_are_per_session_and_shared_by_its_servers() {
        let mut r = Registry::default();
        let a = r.declare("notes", Origin::Fresh);
        r.bind(&a, "s1");
        let b = r.declare("notes", Origin::Fresh);
        r.bind(&b, "s2");
        let ca = r.connect(&a).unwrap();
        let cb = r.connect(&b).unwrap();
        remember(&mut r, &ca, "one");
        remember(&mut r, &cb, "two");
        assert_eq!(notes(&r, "s1"), ["one"]);
        assert_eq!(notes(&r, "s2"), ["two"]);
        // Loading s1 again declares another server on the same notes.
        let again = r.declare("notes", Origin::Session("s1".into()));
        let c = r.connect(&again).unwrap();
        assert_eq!(r.open(&c).unwrap().2.notes(), ["one"]);
        remember(&mut r, &c, "three");
        assert_eq!(notes(&r, "s1"), ["one", "three"]);
        // Loading an unknown session starts it empty.
        let other = r.declare("notes", Origin::Session("s9".into()));
        let c = r.connect(&other).unwrap();
        assert!(r.open(&c).unwrap().2.is_empty());
        assert_eq!(r.open(&c).unwrap().1, Some("s9"));
    }

    #[test]
    fn fork_copies_the_parent_notes() {
        let mut r = Registry::default();
        let a = r.declare("notes", Origin::Fresh);
        r.bind(&a, "parent");
        let ca = r.connect(&a).unwrap();
        remember(&mut r, &ca, "kept");
        let f = r.declare("notes", Origin::ForkOf("parent".into()));
        let cf = r.connect(&f).unwrap();
        remember(&mut r, &cf, "fork only");
        r.bind(&f, "child");
        remember(&mut r, &ca, "parent only");
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
        let ca = r.connect(&a).unwrap();
        remember(&mut r, &ca, "old");
        let b = r.declare("notes", Origin::Fresh);
        let cb = r.connect(&b).unwrap();
        remember(&mut r, &cb, "new");
        assert_eq!(r.bind(&b, "s"), Some(0));
        assert_eq!(notes(&r, "s"), ["old", "new"]);
        remember(&mut r, &cb, "after");
        assert_eq!(r.open(&ca).unwrap().2.notes(), ["old", "new", "after"]);
        assert_eq!(r.notebooks.len(), 1);
        assert_eq!(r.bind(&b, "s"), None);
        assert_eq!(r.bind("notes-99", "s"), None);
    }

    #[test]
    fn withdrawn_servers_lose_their_connections_and_unheld_notes() {
        let mut r = Registry::default();
        let fresh = r.declare("notes", Origin::Fresh);
        let c = r.connect(&fresh).unwrap();
        remember(&mut r, &c, "lost");
        r.withdraw(&fresh);
        assert!(r.open(&c).is_none());
        assert_eq!(r.disconnect(&c), None);
        assert_eq!(r.connect(&fresh), None);
        assert!(r.notebooks.is_empty());
        let loaded = r.declare("notes", Origin::Session("s".into()));
        let c = r.connect(&loaded).unwrap();
        remember(&mut r, &c, "stays");
        r.withdraw(&loaded);
        r.withdraw(&loaded);
        assert_eq!(notes(&r, "s"), ["stays"]);
    }
}
