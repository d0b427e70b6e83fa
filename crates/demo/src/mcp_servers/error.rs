//! Why talking to an MCP server failed, naming the server and the request.
//! Must not know how the failure was found out.

use std::io;
use std::time::Duration;

/// Why talking to an MCP server failed. The message names the server and the request.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("could not start MCP server `{server}` ({command}): {source}")]
    Spawn {
        server: String,
        command: String,
        source: io::Error,
    },
    #[error("MCP server `{server}` did not answer {method} within {} s", .after.as_secs_f64())]
    Timeout {
        server: String,
        method: String,
        after: Duration,
    },
    #[error("MCP server `{server}` went away before answering {method}{status}")]
    Closed {
        server: String,
        method: String,
        /// ` (exit status: N)` when the process is known to have exited, else empty.
        status: String,
    },
    #[error("MCP server `{server}` answered {method} with error {code}: {message}")]
    Refused {
        server: String,
        method: String,
        code: i64,
        message: String,
    },
    #[error("MCP server `{server}` answered {method} with something unexpected: {detail}")]
    Malformed {
        server: String,
        method: String,
        detail: String,
    },
}
