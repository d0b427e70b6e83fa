//! In-memory MCP servers for the tests of this client and of the demo agent.
//! Must not know what a test asserts: it only plays the server's side.

use std::sync::Mutex;

use super::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

const WAIT: Duration = Duration::from_secs(10);

/// A transport whose other end is the returned stream.
pub(crate) fn duplex_transport() -> (Transport, DuplexStream) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(ours);
    let transport = Transport {
        reader: Box::new(reader),
        writer: Box::new(writer),
        child: None,
    };
    (transport, theirs)
}

/// The server side of a connection, one JSON line at a time.
pub(crate) struct ServerEnd {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl ServerEnd {
    pub(crate) fn new(stream: DuplexStream) -> Self {
        let (reader, writer) = tokio::io::split(stream);
        ServerEnd {
            lines: BufReader::new(reader).lines(),
            writer,
        }
    }

    /// The client's next message, or `None` once the client closed its side.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        let line = self.lines.next_line().await.ok()??;
        Some(serde_json::from_str(&line).expect("the client sends JSON lines"))
    }

    /// The client's next message, which must come in time.
    pub(crate) async fn recv(&mut self) -> Value {
        tokio::time::timeout(WAIT, self.next())
            .await
            .expect("the client sends in time")
            .expect("the client keeps the connection open")
    }

    pub(crate) async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    pub(crate) async fn answer(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            .await;
    }

    /// Reads `initialize` and `notifications/initialized`, answering the first.
    pub(crate) async fn handshake(&mut self) {
        let initialize = self.recv().await;
        assert_eq!(initialize["method"], "initialize");
        let result = json!({
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "test", "version": "1"},
        });
        self.answer(&initialize, result).await;
        assert_eq!(self.recv().await["method"], "notifications/initialized");
    }
}

/// What the notes servers of a test received: each server's name and every method.
pub(crate) type Seen = Arc<Mutex<Vec<(String, String)>>>;

pub(crate) fn seen_log(seen: &Seen) -> Vec<(String, String)> {
    seen.lock().unwrap().clone()
}

/// The names of the servers launched so far, in order.
pub(crate) fn launches(seen: &Seen) -> Vec<String> {
    seen_log(seen)
        .into_iter()
        .filter(|(kind, _)| kind == "launch")
        .map(|(_, name)| name)
        .collect()
}

/// Launches every server as an in-memory [`notes_server`], recording `("launch", name)`.
pub(crate) fn notes_launcher(seen: Seen) -> Launcher {
    Arc::new(move |server: &StdioServer, _cwd: &Path| {
        seen.lock()
            .unwrap()
            .push(("launch".to_owned(), server.name.clone()));
        let (transport, theirs) = duplex_transport();
        tokio::spawn(notes_server(server.name.clone(), theirs, seen.clone()));
        Ok(transport)
    })
}

pub(crate) const NOTES_TOOLS: [&str; 5] = ["remember", "recall", "forget", "crash", "hang"];

/// A notes server: `remember {note}` (pings the client first and needs its answer),
/// `recall`, `forget {number}`, `crash` (goes away mid-call), `hang` (never answers).
pub(crate) async fn notes_server(name: String, stream: DuplexStream, seen: Seen) {
    let mut end = ServerEnd::new(stream);
    let mut notes: Vec<String> = Vec::new();
    while let Some(message) = end.next().await {
        let method = message["method"]
            .as_str()
            .unwrap_or("(response)")
            .to_owned();
        seen.lock().unwrap().push((name.clone(), method.clone()));
        match method.as_str() {
            "initialize" => {
                let result = json!({
                    "protocolVersion": MCP_PROTOCOL_VERSION,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": name, "version": "1"},
                });
                end.answer(&message, result).await;
            }
            "tools/list" => {
                let tools: Vec<Value> = NOTES_TOOLS
                    .iter()
                    .map(|tool| json!({"name": tool, "inputSchema": {"type": "object"}}))
                    .collect();
                end.answer(&message, json!({ "tools": tools })).await;
            }
            "tools/call" => {
                let arguments = &message["params"]["arguments"];
                let (text, is_error) = match message["params"]["name"].as_str() {
                    Some("remember") => {
                        end.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "remembering"}}))
                                .await;
                        end.send(json!({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}))
                            .await;
                        let Some(pong) = end.next().await else { return };
                        if pong != json!({"jsonrpc": "2.0", "id": "ping-1", "result": {}}) {
                            (format!("bad answer to ping: {pong}"), true)
                        } else {
                            notes.push(arguments["note"].as_str().unwrap_or("?").to_owned());
                            (format!("Noted (note {}).", notes.len()), false)
                        }
                    }
                    Some("recall") if notes.is_empty() => ("No notes yet.".to_owned(), false),
                    Some("recall") => {
                        let lines: Vec<String> = notes
                            .iter()
                            .enumerate()
                            .map(|(i, note)| format!("{}. {note}", i + 1))
                            .collect();
                        (lines.join("\n"), false)
                    }
                    Some("forget") => match arguments["number"].as_u64() {
                        Some(n) if n >= 1 && (n as usize) <= notes.len() => {
                            let note = notes.remove(n as usize - 1);
                            (format!("Forgot note {n}: {note}"), false)
                        }
                        _ => (format!("There is no note {}.", arguments["number"]), true),
                    },
                    Some("crash") => return,
                    Some("hang") => continue,
                    other => (format!("unknown tool {other:?}"), true),
                };
                let result = json!({
                    "content": [{"type": "text", "text": text}],
                    "isError": is_error,
                });
                end.answer(&message, result).await;
            }
            _ => {}
        }
    }
    seen.lock().unwrap().push((name, "(closed)".to_owned()));
}

/// Waits until `seen` holds `(server, method)`.
pub(crate) async fn wait_for_seen(seen: &Seen, server: &str, method: &str) {
    let entry = (server.to_owned(), method.to_owned());
    let deadline = tokio::time::Instant::now() + WAIT;
    while !seen_log(seen).contains(&entry) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{entry:?} never came: {:?}",
            seen_log(seen)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
