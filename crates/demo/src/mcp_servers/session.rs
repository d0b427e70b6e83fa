//! One session's stdio MCP servers: each started on first use, again after it went away, and
//! all closed when the session ends. Must not know ACP.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::{Launcher, McpConnection, McpError, StdioServer, ToolResult};

/// Where a tool was found, and the servers that could not be asked.
#[derive(Debug)]
pub struct ToolSearch {
    /// Index of the first server offering the tool.
    pub found: Option<usize>,
    pub failures: Vec<McpError>,
}

/// One session's stdio MCP servers, each started on first use.
pub struct SessionServers {
    cwd: PathBuf,
    launcher: Launcher,
    timeout: Duration,
    slots: Vec<Slot>,
}

struct Slot {
    server: StdioServer,
    connection: Option<McpConnection>,
}

impl SessionServers {
    /// Starts nothing yet.
    pub fn new(
        servers: Vec<StdioServer>,
        cwd: PathBuf,
        launcher: Launcher,
        timeout: Duration,
    ) -> Self {
        let slots = servers
            .into_iter()
            .map(|server| Slot {
                server,
                connection: None,
            })
            .collect();
        SessionServers {
            cwd,
            launcher,
            timeout,
            slots,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The name the session gave server `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.slots[index].server.name
    }

    /// The connection to server `index`, started (again, if it went away) when needed.
    async fn connection(&mut self, index: usize) -> Result<&McpConnection, McpError> {
        let slot = &mut self.slots[index];
        let connection = match slot.connection.take() {
            Some(connection) if !connection.is_closed() => connection,
            previous => {
                if previous.is_some() {
                    tracing::info!(server = %slot.server.name, "MCP server went away; starting it again");
                }
                let transport = (self.launcher)(&slot.server, &self.cwd)?;
                McpConnection::open(&slot.server.name, transport, self.timeout).await?
            }
        };
        Ok(slot.connection.insert(connection))
    }

    /// Every server's tool names, or why they could not be listed, in declaration order.
    pub async fn list_tools(&mut self) -> Vec<(String, Result<Vec<String>, McpError>)> {
        let mut listed = Vec::new();
        for index in 0..self.slots.len() {
            let tools = match self.connection(index).await {
                Ok(connection) => connection.list_tools().await,
                Err(e) => Err(e),
            };
            listed.push((self.name(index).to_owned(), tools));
        }
        listed
    }

    /// The first server, in declaration order, whose `tools/list` names `tool`.
    pub async fn find_tool(&mut self, tool: &str) -> ToolSearch {
        let mut failures = Vec::new();
        for index in 0..self.slots.len() {
            let tools = match self.connection(index).await {
                Ok(connection) => connection.list_tools().await,
                Err(e) => Err(e),
            };
            match tools {
                Ok(names) if names.iter().any(|name| name == tool) => {
                    return ToolSearch {
                        found: Some(index),
                        failures,
                    };
                }
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
        ToolSearch {
            found: None,
            failures,
        }
    }

    /// Calls `tool` on server `index`.
    pub async fn call_tool(
        &mut self,
        index: usize,
        tool: &str,
        arguments: &Value,
    ) -> Result<ToolResult, McpError> {
        self.connection(index)
            .await?
            .call_tool(tool, arguments)
            .await
    }

    /// Closes every started server (see [`McpConnection::close`]).
    pub async fn close(&mut self) {
        for slot in &mut self.slots {
            if let Some(connection) = slot.connection.take() {
                connection.close().await;
            }
        }
    }
}
