//! The test playing the editor: a launched conductor with piped stdio, lines written to
//! its stdin and read from its stdout, requests matched with their responses.
//! Knows JSON-RPC and the editor's side of ACP; knows nothing of what is behind the conductor.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::jsonrpc::RawMessage;

/// How long to wait for any one message before declaring the conductor stuck. Generous:
/// it bounds a hang, it never measures speed. `ACP_E2E_TIMEOUT_SECS` overrides it.
pub fn patience() -> Duration {
    let seconds = std::env::var("ACP_E2E_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    Duration::from_secs(seconds)
}

/// Which way a line went, seen from the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Sent,
    Received,
}

/// The answer the editor gives to a request from the agent side: a result, or an error object.
pub type Reply = Result<Value, Value>;

/// What came back for one request, and what arrived while waiting for it.
#[derive(Debug, Default)]
pub struct Exchange {
    /// The whole response message.
    pub response: Value,
    /// The response exactly as it was read.
    pub response_line: String,
    /// Notifications that arrived before the response, in order.
    pub notifications: Vec<Value>,
    /// Requests from the agent side that arrived (and were answered) meanwhile.
    pub requests: Vec<Value>,
    /// Responses to other requests that arrived meanwhile.
    pub other_responses: Vec<Value>,
}

impl Exchange {
    /// The `result`, panicking with the whole response when it is an error.
    pub fn result(&self) -> &Value {
        match self.response.get("result") {
            Some(result) => result,
            None => panic!("expected a result, got {}", self.response),
        }
    }

    /// The `error`, panicking with the whole response when it is a result.
    pub fn error(&self) -> &Value {
        match self.response.get("error") {
            Some(error) => error,
            None => panic!("expected an error, got {}", self.response),
        }
    }

    /// The texts of the agent message chunks among the notifications.
    pub fn chunk_texts(&self) -> Vec<String> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == "session/update")
            .filter_map(|n| crate::agent_script::chunk_text(&n["params"]))
            .map(str::to_string)
            .collect()
    }
}

/// What the editor does with the conductor's stdout.
const READING: u8 = 0;
const NOT_READING: u8 = 1;
const CLOSED: u8 = 2;

/// A conductor launched the way an editor launches its agent.
pub struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    /// [`READING`], [`NOT_READING`] or [`CLOSED`], for the thread that reads stdout.
    stdout_state: Arc<AtomicU8>,
    stderr: Arc<Mutex<String>>,
    /// Disconnects when the conductor's stderr reaches EOF.
    stderr_closed: Receiver<()>,
    /// Lines read while looking for something else, delivered before any new line.
    held: VecDeque<String>,
    next_id: u64,
    /// Every line sent and received, in order.
    pub transcript: Vec<(Direction, String)>,
    patience: Duration,
}

impl Editor {
    /// Starts `program` with piped stdin, stdout and stderr.
    pub fn launch<S: AsRef<OsStr>>(program: &Path, args: &[S], envs: &[(&str, &str)]) -> Self {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in envs {
            command.env(name, value);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");

        let (lines_tx, lines_rx) = std::sync::mpsc::channel();
        let stdout_state = Arc::new(AtomicU8::new(READING));
        let state = Arc::clone(&stdout_state);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                match state.load(Ordering::SeqCst) {
                    CLOSED => return,
                    NOT_READING => {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    _ => {}
                }
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if lines_tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let stderr_sink = Arc::clone(&stderr_text);
        let (stderr_open, stderr_closed) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _open = stderr_open;
            let mut stderr = stderr;
            let mut buffer = [0u8; 8192];
            while let Ok(n @ 1..) = stderr.read(&mut buffer) {
                let text = String::from_utf8_lossy(&buffer[..n]);
                stderr_sink.lock().expect("stderr lock").push_str(&text);
            }
        });
        Self {
            child,
            stdin,
            stdout: lines_rx,
            stdout_state,
            stderr: stderr_text,
            stderr_closed,
            held: VecDeque::new(),
            next_id: 0,
            transcript: Vec::new(),
            patience: patience(),
        }
    }

    /// Waits up to `patience` for each message and for the exit instead of [`patience()`], from
    /// now on: for peers slower than the fixtures (a real agent starting its own programs, a
    /// large WASM component loaded by a debug conductor on a busy machine).
    pub fn set_patience(&mut self, patience: Duration) {
        self.patience = patience;
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the conductor wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Waits up to [`patience`] until the conductor's stderr contains `text`, and returns
    /// the stderr then. A component's log line reaches it through the conductor's logging,
    /// a little after the component wrote it, so it may lag behind the protocol.
    pub fn wait_for_stderr(&self, text: &str) -> String {
        let deadline = Instant::now() + self.patience;
        loop {
            let stderr = self.stderr();
            if stderr.contains(text) {
                return stderr;
            }
            assert!(
                Instant::now() < deadline,
                "the conductor's stderr never contained {text:?}; it is:\n{stderr}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The stderr for a failure message: waits a moment for the last of it when the
    /// conductor is exiting, since its final words usually explain the failure.
    fn stderr_for_failure(&self) -> String {
        let _ = self.stderr_closed.recv_timeout(Duration::from_secs(1));
        self.stderr()
    }

    /// Writes one line (a newline is added).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin was closed");
        if let Err(e) = stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
        {
            panic!(
                "cannot write to the conductor ({e}); its stderr:\n{}",
                self.stderr_for_failure()
            );
        }
        self.transcript.push((Direction::Sent, line.to_string()));
    }

    /// Writes `bytes` exactly as given (no newline added), in one write.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin was closed");
        if let Err(e) = stdin.write_all(bytes).and_then(|()| stdin.flush()) {
            panic!(
                "cannot write to the conductor ({e}); its stderr:\n{}",
                self.stderr_for_failure()
            );
        }
        let text = String::from_utf8_lossy(bytes);
        self.transcript.push((Direction::Sent, text.into_owned()));
    }

    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The next line from the conductor, without its newline; panics after [`patience`].
    pub fn recv_line(&mut self) -> String {
        if let Some(line) = self.held.pop_front() {
            return line;
        }
        self.read_new_line()
    }

    fn read_new_line(&mut self) -> String {
        match self.stdout.recv_timeout(self.patience) {
            Ok(line) => {
                let line = line.strip_suffix('\n').unwrap_or(&line).to_string();
                self.transcript.push((Direction::Received, line.clone()));
                line
            }
            Err(RecvTimeoutError::Timeout) => panic!(
                "nothing from the conductor for {:?}; its stderr:\n{}",
                self.patience,
                self.stderr_for_failure()
            ),
            Err(RecvTimeoutError::Disconnected) => panic!(
                "the conductor closed its stdout; its stderr:\n{}",
                self.stderr_for_failure()
            ),
        }
    }

    /// The next message; panics when the line is not JSON (stdout is only for the protocol).
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line();
        parse(&line)
    }

    /// Reads until a message satisfies `wanted` and returns it; the messages passed over
    /// are kept, in order, for the following reads.
    pub fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let mut passed = Vec::new();
        let found = loop {
            let line = self.recv_line();
            let message = parse(&line);
            if wanted(&message) {
                break message;
            }
            passed.push(line);
        };
        for line in passed.into_iter().rev() {
            self.held.push_front(line);
        }
        found
    }

    /// Sends a request with the next numeric id (counted from 0) and returns that id.
    pub fn start_request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.start_request_with_id(&id.to_string(), method, params)
    }

    /// Sends a request whose id is `raw_id`, written exactly as given.
    pub fn start_request_with_id(&mut self, raw_id: &str, method: &str, params: Value) -> Value {
        let line = crate::jsonrpc::request_line(raw_id, method, Some(&params.to_string()));
        self.send_line(&line);
        serde_json::from_str(raw_id).expect("the id is JSON")
    }

    /// Reads until the response to `id`, answering agent-side requests with `answer` and
    /// collecting everything else.
    pub fn finish_request(
        &mut self,
        id: &Value,
        mut answer: impl FnMut(&Value) -> Reply,
    ) -> Exchange {
        let mut exchange = Exchange::default();
        loop {
            let line = self.recv_line();
            let message = parse(&line);
            let has_method = message.get("method").is_some();
            match (has_method, message.get("id")) {
                (false, Some(response_id)) if response_id == id => {
                    exchange.response = message;
                    exchange.response_line = line;
                    return exchange;
                }
                (false, _) => exchange.other_responses.push(message),
                (true, Some(request_id)) => {
                    let reply = match answer(&message) {
                        Ok(result) => {
                            json!({ "jsonrpc": "2.0", "id": request_id, "result": result })
                        }
                        Err(error) => json!({ "jsonrpc": "2.0", "id": request_id, "error": error }),
                    };
                    self.send(&reply);
                    exchange.requests.push(message);
                }
                (true, None) => exchange.notifications.push(message),
            }
        }
    }

    /// A request whose agent-side requests, if any, are refused with "method not found".
    pub fn request(&mut self, method: &str, params: Value) -> Exchange {
        self.request_answering(method, params, refuse)
    }

    pub fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: impl FnMut(&Value) -> Reply,
    ) -> Exchange {
        let id = self.start_request(method, params);
        self.finish_request(&id, answer)
    }

    /// `initialize` with [`initialize_params`]; returns the result.
    pub fn initialize(&mut self) -> Value {
        let exchange = self.request("initialize", initialize_params());
        exchange.result().clone()
    }

    /// `session/new` in the current directory; returns the session id.
    pub fn new_session(&mut self) -> String {
        let exchange = self.request(
            "session/new",
            json!({ "cwd": std::env::temp_dir(), "mcpServers": [] }),
        );
        exchange.result()["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new gave no sessionId: {}", exchange.response))
            .to_string()
    }

    /// `session/new` with `cwd` as the session's working directory; returns the session id.
    pub fn new_session_in(&mut self, cwd: &Path) -> String {
        let exchange = self.request("session/new", json!({ "cwd": cwd, "mcpServers": [] }));
        exchange.result()["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new gave no sessionId: {}", exchange.response))
            .to_string()
    }

    /// A `session/prompt` with one text block.
    pub fn prompt(&mut self, session_id: &str, text: &str) -> Exchange {
        self.request("session/prompt", prompt_params(session_id, text))
    }

    /// Closes the conductor's stdin, as an editor does when it is done.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Stops reading the conductor's stdout, as a hung editor would: after the line being
    /// read, if any, nothing more is taken from the pipe.
    pub fn stop_reading(&self) {
        self.stdout_state.store(NOT_READING, Ordering::SeqCst);
    }

    /// Closes the read end of the conductor's stdout (after [`stop_reading`](Self::stop_reading),
    /// at once; while reading, once the next line arrives).
    pub fn close_stdout(&self) {
        self.stdout_state.store(CLOSED, Ordering::SeqCst);
    }

    /// Sends `signal` to the conductor.
    pub fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.pid()).expect("pid fits pid_t");
        // SAFETY: kill(2) with a pid we started and have not reaped yet.
        let status = unsafe { libc::kill(pid, signal) };
        assert_eq!(status, 0, "kill({pid}, {signal}) failed");
    }

    /// Waits for the conductor to exit, then for the rest of its stderr; panics (after killing
    /// it) past [`patience`].
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + self.patience;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // What it wrote last may still be in the pipe: the reader thread lags behind
                // the exit on a busy machine, and a test reading stderr next must see it all.
                let left = deadline.saturating_duration_since(Instant::now());
                let _ = self
                    .stderr_closed
                    .recv_timeout(left.max(Duration::from_secs(1)));
                return status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the conductor did not exit within {:?}; its stderr:\n{}",
                    self.patience,
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every line still coming until the conductor closes stdout (after it was told to stop).
    pub fn drain(&mut self) -> Vec<String> {
        let mut lines: Vec<String> = self.held.drain(..).collect();
        while let Ok(line) = self.stdout.recv_timeout(self.patience) {
            let line = line.strip_suffix('\n').unwrap_or(&line).to_string();
            self.transcript.push((Direction::Received, line.clone()));
            lines.push(line);
        }
        lines
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- conductor stderr ---\n{}", self.stderr_for_failure());
        }
    }
}

fn parse(line: &str) -> Value {
    match RawMessage::parse(line) {
        Ok(_) => serde_json::from_str(line).expect("an object is a value"),
        Err(e) => panic!("the conductor wrote a line that is not a JSON object ({e}): {line}"),
    }
}

/// Refuses an agent-side request the test did not expect.
pub fn refuse(_request: &Value) -> Reply {
    Err(json!({ "code": -32601, "message": "the test editor does not handle this" }))
}

/// The `initialize` params the test editor sends, with a field no schema knows.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": { "readTextFile": true, "writeTextFile": true },
            "terminal": false
        },
        "clientInfo": { "name": "e2e-editor", "version": "0.0.0" }
    })
}

pub fn prompt_params(session_id: &str, text: &str) -> Value {
    json!({ "sessionId": session_id, "prompt": [{ "type": "text", "text": text }] })
}
