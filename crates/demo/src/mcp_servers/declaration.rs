//! A stdio MCP server as a session's `mcpServers` entry declares it, and why an entry is skipped.
//! Must not know how a server is started or spoken to.

use serde_json::Value;

/// A stdio MCP server as a `session/new` entry declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl StdioServer {
    /// The stdio servers among a session's `mcpServers`, in order. Other transports and
    /// malformed entries are skipped with a debug log: the session still starts.
    pub fn from_declarations(servers: &Value) -> Vec<StdioServer> {
        let entries = servers.as_array().map(Vec::as_slice).unwrap_or_default();
        entries
            .iter()
            .filter_map(|entry| match StdioServer::from_declaration(entry) {
                Ok(server) => Some(server),
                Err(reason) => {
                    let name = entry["name"].as_str().unwrap_or("?");
                    tracing::debug!(server = name, "demo agent: ignoring MCP server: {reason}");
                    None
                }
            })
            .collect()
    }

    fn from_declaration(entry: &Value) -> Result<StdioServer, DeclarationError> {
        match entry["type"].as_str() {
            None | Some("stdio") => {}
            Some(other) => return Err(DeclarationError::NotStdio(other.to_owned())),
        }
        let name = entry["name"].as_str().ok_or(DeclarationError::NoName)?;
        let command = entry["command"]
            .as_str()
            .ok_or(DeclarationError::NoCommand)?;
        let strings = |field: &'static str| -> Result<Vec<String>, DeclarationError> {
            match &entry[field] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or(DeclarationError::NotStrings(field)),
                _ => Err(DeclarationError::NotAList(field)),
            }
        };
        let args = strings("args")?;
        let env = match &entry["env"] {
            Value::Null => Vec::new(),
            Value::Array(vars) => vars
                .iter()
                .map(|var| {
                    Some((
                        var["name"].as_str()?.to_owned(),
                        var["value"].as_str()?.to_owned(),
                    ))
                })
                .collect::<Option<_>>()
                .ok_or(DeclarationError::EnvNotPairs)?,
            _ => return Err(DeclarationError::NotAList("env")),
        };
        Ok(StdioServer {
            name: name.to_owned(),
            command: command.to_owned(),
            args,
            env,
        })
    }
}

/// Why a `mcpServers` entry is not a server the demo agent launches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("the demo agent only launches stdio servers, not {0}")]
    NotStdio(String),
    #[error("no name")]
    NoName,
    #[error("no command")]
    NoCommand,
    #[error("{0} is not a list of strings")]
    NotStrings(&'static str),
    #[error("{0} is not a list")]
    NotAList(&'static str),
    #[error("env is not a list of {{name, value}} strings")]
    EnvNotPairs,
}
