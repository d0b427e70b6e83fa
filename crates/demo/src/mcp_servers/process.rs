//! A server's process: spawned with its pipes as the transport, its stderr in our log.
//! Must not know MCP: rmcp speaks it over the transport this returns.

use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::process::{Child, Command};

use super::{McpError, StdioServer};

/// The two ends of a connection to a server, and its process when it has one.
pub struct Transport {
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    pub child: Option<Child>,
}

/// Starts a server in the given working directory: [`spawn_process`], or an in-memory one in tests.
pub type Launcher =
    Arc<dyn Fn(&StdioServer, &Path) -> Result<Transport, McpError> + Send + Sync + 'static>;

/// The launcher of real servers.
pub fn process_launcher() -> Launcher {
    Arc::new(spawn_process)
}

/// Spawns the server's command with its args, its env added to ours, in `cwd` when that is a
/// directory. Its stderr goes to our log, line by line; the process is killed if the
/// connection is dropped without [`McpConnection::close`](super::McpConnection::close).
pub fn spawn_process(server: &StdioServer, cwd: &Path) -> Result<Transport, McpError> {
    let mut command = Command::new(&server.command);
    command
        .args(&server.args)
        .envs(server.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if cwd.is_dir() {
        command.current_dir(cwd);
    }
    let spawn_error = |source| McpError::Spawn {
        server: server.name.clone(),
        command: server.command.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let missing = || spawn_error(io::Error::other("a standard stream was not piped"));
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(server.name.clone(), stderr));
    }
    tracing::info!(
        server = %server.name,
        pid = child.id(),
        "demo agent: started MCP server: {} {}",
        server.command,
        server.args.join(" ")
    );
    Ok(Transport {
        reader: Box::new(stdout),
        writer: Box::new(stdin),
        child: Some(child),
    })
}

async fn log_stderr(server: String, stderr: impl AsyncRead + Unpin) {
    let mut stderr = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match stderr.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(server = %server, "MCP server stderr: {}", text.trim_end());
            }
        }
    }
}
