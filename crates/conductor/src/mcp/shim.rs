//! The `mcp-bridge` shim an agent launches as a stdio MCP server: dials the conductor's
//! private socket, names its server, then copies bytes both ways as two tasks on a small
//! current-thread runtime. Knows the hello and the welcome, never what MCP lines say.
//!
//! Exits 0 when the agent closes its stdin, 1 when the conductor refuses the server or
//! goes away, 2 when the conductor cannot be reached. Never writes anything but the
//! conductor's MCP lines to stdout.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;

use acp_drivers::runtime::{self, RuntimeKind};
use acp_router::mcp::bridge_hello::hello_line;

/// After the agent closes stdin: how long the conductor gets to close its side.
const LINGER: Duration = Duration::from_secs(2);

/// The most the shim reads from the conductor before writing it to stdout.
const COPY_BUFFER: usize = 64 * 1024;

/// Why the shim ended other than by the agent closing its stdin.
#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    #[error("{0}")]
    Runtime(#[source] io::Error),
    #[error(
        "cannot reach the conductor at {}: {source} (the bridge only works while the conductor that wrote this command runs)",
        socket.display()
    )]
    Unreachable {
        socket: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot talk to the conductor: {0}")]
    Talk(#[source] io::Error),
    #[error("the conductor closed the connection before accepting it")]
    ClosedBeforeWelcome,
    #[error("the conductor refused MCP server `{server}`: {reason}")]
    Refused { server: String, reason: String },
    #[error("the conductor closed the connection")]
    ConductorClosed,
}

/// The `mcp-bridge` subcommand: until the agent closes its stdin or the conductor its side.
pub fn run(socket: &Path, server: &str) -> Result<(), ShimError> {
    bridge(socket, server)
}

/// Connects, greets, and copies until either side closes.
fn bridge(socket: &Path, server: &str) -> Result<(), ShimError> {
    runtime::run_on_main_thread(RuntimeKind::OneThreadShutDownInBackground, |_main| async {
        let mut stream =
            UnixStream::connect(socket)
                .await
                .map_err(|source| ShimError::Unreachable {
                    socket: socket.to_path_buf(),
                    source,
                })?;
        handshake(&mut stream, server).await?;
        copy_both_ways(stream, tokio::io::stdin(), tokio::io::stdout()).await
    })
    .map_err(ShimError::Runtime)?
}

/// Copies `input` to the conductor and the conductor's bytes to `output`, as two tasks.
/// Ends well when `input` ends (after giving the conductor [`LINGER`] to finish), badly
/// when the conductor's side ends first or `output` cannot be written.
async fn copy_both_ways<I, O>(stream: UnixStream, input: I, output: O) -> Result<(), ShimError>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (mut from_conductor, mut to_conductor) = stream.into_split();
    let mut input_copied = acp_link::transport::spawn(async move {
        let mut input = input;
        let _ = tokio::io::copy(&mut input, &mut to_conductor).await;
        let _ = to_conductor.shutdown().await;
    });
    let mut output_copied = acp_link::transport::spawn(async move {
        let mut output = output;
        let mut buf = vec![0u8; COPY_BUFFER];
        loop {
            match from_conductor.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    // Flushed at once: the agent waits for each answer line.
                    let written = async {
                        output.write_all(&buf[..n]).await?;
                        output.flush().await
                    };
                    if written.await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    tokio::select! {
        // The agent is done with us: give the conductor a moment to send the rest.
        _ = &mut input_copied => {
            let _ = tokio::time::timeout(LINGER, &mut output_copied).await;
            Ok(())
        }
        _ = &mut output_copied => Err(ShimError::ConductorClosed),
    }
}

async fn handshake(stream: &mut UnixStream, server: &str) -> Result<(), ShimError> {
    stream
        .write_all(hello_line(server).as_bytes())
        .await
        .map_err(ShimError::Talk)?;
    // Read the welcome byte by byte so no MCP line after it is consumed here.
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte).await {
            Ok(0) => break,
            Ok(_) => {
                line.push(byte[0]);
                if byte[0] == b'\n' {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ShimError::Talk(e)),
        }
    }
    let v: serde_json::Value =
        serde_json::from_slice(&line).map_err(|_| ShimError::ClosedBeforeWelcome)?;
    match v.get("mcpBridge").and_then(|s| s.as_str()) {
        Some("ok") => Ok(()),
        _ => Err(ShimError::Refused {
            server: server.to_string(),
            reason: v
                .get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or("no reason given")
                .to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_router::mcp::bridge_hello::welcome_line;

    /// The conductor's end of a shim connection and the shim's.
    fn connection() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[tokio::test]
    async fn bytes_cross_unchanged_and_the_conductors_last_bytes_follow_the_agents_end() {
        let (mut conductor, shim) = connection();
        let (mut agent_in, input) = tokio::io::duplex(16);
        let (output, mut agent_out) = tokio::io::duplex(1 << 20);
        let bridge = tokio::spawn(copy_both_ways(shim, input, output));

        let sent: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let agent = {
            let sent = sent.clone();
            tokio::spawn(async move { agent_in.write_all(&sent).await.unwrap() })
        };
        let mut got = vec![0u8; sent.len()];
        conductor.read_exact(&mut got).await.unwrap();
        assert!(got == sent, "the agent's bytes arrived changed");
        agent.await.unwrap();
        // The agent's end reaches the conductor as the end of its input.
        assert_eq!(conductor.read(&mut [0u8; 1]).await.unwrap(), 0);

        conductor
            .write_all(b"{\"last\":1}\n\xff\x00")
            .await
            .unwrap();
        drop(conductor);
        assert!(bridge.await.unwrap().is_ok());
        let mut out = Vec::new();
        agent_out.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"{\"last\":1}\n\xff\x00");
    }

    #[tokio::test]
    async fn the_conductor_closing_first_is_an_error() {
        let (mut conductor, shim) = connection();
        let (_agent_in, input) = tokio::io::duplex(16);
        let (output, mut agent_out) = tokio::io::duplex(1 << 10);
        let bridge = tokio::spawn(copy_both_ways(shim, input, output));
        conductor.write_all(b"bye\n").await.unwrap();
        drop(conductor);
        let ended = bridge.await.unwrap().unwrap_err();
        assert_eq!(ended.to_string(), "the conductor closed the connection");
        let mut out = Vec::new();
        agent_out.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"bye\n");
    }

    #[tokio::test]
    async fn the_handshake_reads_no_byte_past_the_welcome() {
        let (mut conductor, mut shim) = connection();
        let greeted = tokio::spawn(async move {
            handshake(&mut shim, "notes-1").await.unwrap();
            let mut rest = [0u8; 4];
            shim.read_exact(&mut rest).await.unwrap();
            rest
        });
        let mut hello = vec![0u8; hello_line("notes-1").len()];
        conductor.read_exact(&mut hello).await.unwrap();
        assert_eq!(hello, hello_line("notes-1").as_bytes());
        let welcome = welcome_line(None) + "{\"a\"";
        conductor.write_all(welcome.as_bytes()).await.unwrap();
        assert_eq!(&greeted.await.unwrap(), b"{\"a\"");
    }

    #[tokio::test]
    async fn a_refusal_and_an_early_close_say_what_happened() {
        let (mut conductor, mut shim) = connection();
        conductor
            .write_all(welcome_line(Some("no such server")).as_bytes())
            .await
            .unwrap();
        let refused = handshake(&mut shim, "notes-9").await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the conductor refused MCP server `notes-9`: no such server"
        );
        let status = crate::cli::exit_status(&crate::cli::CommandError::McpBridge(refused));
        assert_eq!(status, 1);

        // The conductor reads the hello and closes without a welcome.
        let (mut conductor, mut shim) = connection();
        let closing = tokio::spawn(async move {
            let mut hello = vec![0u8; hello_line("notes-1").len()];
            conductor.read_exact(&mut hello).await.unwrap();
        });
        let closed = handshake(&mut shim, "notes-1").await.unwrap_err();
        closing.await.unwrap();
        assert_eq!(
            closed.to_string(),
            "the conductor closed the connection before accepting it"
        );
    }

    #[test]
    fn an_unreachable_conductor_exits_2() {
        let missing = std::env::temp_dir().join("acp-conductor-no-such-dir/bridge.sock");
        let error = bridge(&missing, "notes-1").unwrap_err();
        assert!(matches!(error, ShimError::Unreachable { .. }));
        let status = crate::cli::exit_status(&crate::cli::CommandError::McpBridge(error));
        assert_eq!(status, 2);
        let error = bridge(&missing, "notes-1").unwrap_err();
        assert!(error.to_string().starts_with(&format!(
            "cannot reach the conductor at {}: ",
            missing.display()
        )));
    }
}
