//! The `mcp-bridge` shim an agent launches as a stdio MCP server: dials the conductor's
//! private socket, names its server, then copies lines both ways. Blocking std I/O only.
//!
//! Exits 0 when the agent closes its stdin, 1 when the conductor refuses the server or
//! goes away, 2 when the conductor cannot be reached. Never writes anything but the
//! conductor's MCP lines to stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// The first line a shim sends: which declared server it stands for.
pub fn hello_line(server: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "mcpBridge": 1, "server": server })
    )
}

/// Reads the server id out of a shim's first line.
pub fn read_hello(line: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    (v.get("mcpBridge")? == 1)
        .then(|| v.get("server")?.as_str().map(str::to_string))
        .flatten()
}

/// The conductor's answer to a hello: accepted, or why not.
pub fn welcome_line(refusal: Option<&str>) -> String {
    match refusal {
        None => format!("{}\n", serde_json::json!({ "mcpBridge": "ok" })),
        Some(why) => format!(
            "{}\n",
            serde_json::json!({ "mcpBridge": "refused", "reason": why })
        ),
    }
}

/// After the agent closes stdin: how long the conductor gets to close its side.
const LINGER: Duration = Duration::from_secs(2);

pub fn run(socket: &Path, server: &str) -> ExitCode {
    let stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "acp-conductor mcp-bridge: cannot reach the conductor at {}: {e} (the bridge only works while the conductor that wrote this command runs)",
                socket.display()
            );
            return ExitCode::from(2);
        }
    };
    match handshake(&stream, server) {
        Ok(()) => {}
        Err(message) => {
            eprintln!("acp-conductor mcp-bridge: {message}");
            return ExitCode::from(1);
        }
    }
    let to_conductor = match stream.try_clone() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("acp-conductor mcp-bridge: {e}");
            return ExitCode::from(1);
        }
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel::<bool>();
    let stdin_done = done_tx.clone();
    std::thread::spawn(move || {
        let mut to_conductor = to_conductor;
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_conductor);
        let _ = to_conductor.shutdown(Shutdown::Write);
        let _ = stdin_done.send(true);
    });
    std::thread::spawn(move || {
        let mut from_conductor = stream;
        let mut stdout = std::io::stdout().lock();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match from_conductor.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if stdout
                        .write_all(&buf[..n])
                        .and_then(|()| stdout.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        let _ = done_tx.send(false);
    });
    match done_rx.recv() {
        // The agent is done with us: give the conductor a moment to send the rest.
        Ok(true) => {
            let _ = done_rx.recv_timeout(LINGER);
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("acp-conductor mcp-bridge: the conductor closed the connection");
            ExitCode::from(1)
        }
    }
}

fn handshake(stream: &UnixStream, server: &str) -> Result<(), String> {
    let mut writer = stream;
    writer
        .write_all(hello_line(server).as_bytes())
        .map_err(|e| format!("cannot talk to the conductor: {e}"))?;
    // Read the welcome byte by byte so no MCP line after it is consumed here.
    let mut line = Vec::new();
    let mut reader = BufReader::with_capacity(1, stream);
    reader
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("cannot talk to the conductor: {e}"))?;
    let v: serde_json::Value = serde_json::from_slice(&line)
        .map_err(|_| "the conductor closed the connection before accepting it".to_string())?;
    match v.get("mcpBridge").and_then(|s| s.as_str()) {
        Some("ok") => Ok(()),
        _ => Err(format!(
            "the conductor refused MCP server `{server}`: {}",
            v.get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or("no reason given")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips() {
        let line = hello_line("notes-1");
        assert!(line.ends_with('\n'));
        assert_eq!(
            read_hello(line.trim_end().as_bytes()).as_deref(),
            Some("notes-1")
        );
        assert_eq!(read_hello(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(read_hello(br#"{"mcpBridge":2,"server":"x"}"#), None);
        assert_eq!(read_hello(b"not json"), None);
    }

    #[test]
    fn welcome_lines() {
        let ok: serde_json::Value = serde_json::from_str(&welcome_line(None)).unwrap();
        assert_eq!(ok["mcpBridge"], "ok");
        let no: serde_json::Value =
            serde_json::from_str(&welcome_line(Some("no such server"))).unwrap();
        assert_eq!(no["mcpBridge"], "refused");
        assert_eq!(no["reason"], "no such server");
    }
}
