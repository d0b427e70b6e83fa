//! The allow-list of legacy MCP-over-ACP wire forms: what peers in the wild still send, the
//! conductor carries, and schema 1.20 no longer describes. Every entry is named and says why.
//!
//! Schema 1.20 (`src/v1/mcp.rs`) keeps one MCP-over-ACP message: the connectionless
//! `mcp/message {serverId, requestId, method, params}`, declared as
//! `{"type": "acp", "name", "serverId"}`. The MCP-over-ACP RFD and the SDK generation after it
//! open a connection first; the conductor supports those forms (docs/mcp.md, forms 1 and 2)
//! because providers and editors built on them exist. Their messages are judged by their
//! JSON-RPC envelope only, with the schema's `rpc` types; nothing else is excused.

use serde_json::Value;

/// One legacy form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Legacy {
    /// `mcp/connect {acpId}` (RFD) or `{serverId}` (the next SDK generation), answered with
    /// `{connectionId}`: opens a connection. Not in schema 1.20, which has no connections.
    McpConnect,
    /// `mcp/disconnect {connectionId}`, answered with `{}`: closes one. Not in schema 1.20.
    McpDisconnect,
    /// `mcp/message {connectionId, method, params}`: MCP on a connection, either way, as a
    /// request (answered with the inner MCP result itself, an inner MCP error being the
    /// JSON-RPC error) or a notification. Schema 1.20's `mcp/message` has the same name but
    /// `serverId` and `requestId` instead, and a `{"result"}`/`{"error"}` carrier as result.
    McpMessageOnConnection,
    /// An acp server declaration with the RFD text's `id` where schema 1.20 has `serverId`,
    /// in the `mcpServers` of a session setup. The params are judged by the schema with the
    /// field read as `serverId`; only the name is excused.
    AcpDeclarationWithId,
}

/// Every entry, for the report.
pub const ALLOW_LIST: [Legacy; 4] = [
    Legacy::McpConnect,
    Legacy::McpDisconnect,
    Legacy::McpMessageOnConnection,
    Legacy::AcpDeclarationWithId,
];

impl Legacy {
    pub fn name(self) -> &'static str {
        match self {
            Legacy::McpConnect => "mcp/connect",
            Legacy::McpDisconnect => "mcp/disconnect",
            Legacy::McpMessageOnConnection => "mcp/message with connectionId",
            Legacy::AcpDeclarationWithId => "acp declaration with `id`",
        }
    }
}

/// The legacy method form `method` with `params` is, if it is one; its envelope is all
/// that is judged.
pub fn method_form(method: &str, params: &Value) -> Option<Legacy> {
    match method {
        "mcp/connect" => Some(Legacy::McpConnect),
        "mcp/disconnect" => Some(Legacy::McpDisconnect),
        "mcp/message"
            if params.get("connectionId").is_some() && params.get("serverId").is_none() =>
        {
            Some(Legacy::McpMessageOnConnection)
        }
        _ => None,
    }
}

/// The methods whose params declare MCP servers.
const SESSION_SETUPS: [&str; 4] = [
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
];

/// Session setup params with each acp declaration's `id` read as `serverId`, when there is
/// such a declaration; `None` otherwise (the params are judged as they are).
pub fn with_declarations_renamed(method: &str, params: &Value) -> Option<Value> {
    if !SESSION_SETUPS.contains(&method) {
        return None;
    }
    let servers = params.get("mcpServers")?.as_array()?;
    let legacy = |server: &Value| {
        server["type"] == "acp" && server.get("id").is_some() && server.get("serverId").is_none()
    };
    if !servers.iter().any(legacy) {
        return None;
    }
    let mut params = params.clone();
    for server in params["mcpServers"].as_array_mut()? {
        if legacy(server) {
            let object = server.as_object_mut()?;
            let id = object.remove("id")?;
            object.insert("serverId".to_string(), id);
        }
    }
    Some(params)
}
