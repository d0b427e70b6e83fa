//! The built-in demo agent (`[agent] builtin = "demo"`): a scripted ACP agent that shows what it
//! received, so a chain can be tried with no real agent. Must not know about proxies or real stdio.
//!
//! One connection is one [`serve`] call. The read loop owns the connection's state and answers
//! requests; a prompt turn runs as its own task so the loop keeps reading the client's
//! `session/cancel`, `$/cancel_request` and the answers to the turn's own requests. Every line
//! goes through one queue to one writer, so a turn's updates always precede its response.
//!
//! What a prompt makes it do, read from its text blocks (resources a proxy embedded do not count):
//! it always shows a plan and echoes every block; then, if a text block asks for an MCP tool
//! (rules below), it does only that; otherwise "slow" ticks, "write"/"permission" asks
//! permission for a write it never does, and "read <path>" reads a line through the client.
//!
//! MCP tools come from the session's stdio `mcpServers` (the only kind it launches; it does not
//! advertise `mcpCapabilities.acp`, so MCP-over-ACP servers must reach it as stdio ones), started
//! on first use by [`crate::demo_mcp_client`]. A text block asks for a tool when it starts
//! (after an optional "please") with, case-insensitively, the first that matches of:
//!
//! 1. `remember <text>` / `remember that <text>`: tool `remember`, `{"note": text}`;
//! 2. `what do you recall` / `what do you remember` / `recall`: tool `recall`, `{}`;
//! 3. `forget note <n>` / `forget <n>` (`n` a whole number, `#` allowed): tool `forget`,
//!    `{"number": n}`;
//! 4. `use tool <name> [json]` / `call <name> [json]`: tool `name` with that JSON object as
//!    arguments (none means `{}`; anything else is refused with a message, nothing is called);
//! 5. `list tools` / `what tools`: every server's `tools/list`, said as `server: tool1, tool2`.
//!
//! A call goes to the first server (in `mcpServers` order) whose `tools/list` names the tool,
//! streamed as a `tool_call` (`kind` "other", `pending`), a `tool_call_update` `in_progress`,
//! then one `completed` or `failed` with the tool's text, and a message saying the outcome.
//! When no server offers the tool, or the server fails, the message says so and the turn still
//! ends normally.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acp_wire::encode::{self, Call};
use acp_wire::error_code;
use acp_wire::frame::DEFAULT_MAX_LINE;
use acp_wire::id::own_id;
use acp_wire::{Envelope, FrameError, IdKey, LineDecoder, Outcome, RawValue};
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex as AsyncMutex, mpsc, oneshot, watch};
use tokio::task::JoinSet;

use crate::demo_mcp_client::{self as mcp, Launcher, SessionServers, StdioServer};

/// The only ACP major version this agent speaks.
const PROTOCOL_VERSION: u64 = 1;
/// Pace of the `tick N` chunks of a "slow" prompt: slow enough for a client to cancel mid-turn.
const TICK_INTERVAL: Duration = Duration::from_millis(100);
const MAX_TICKS: u32 = 50;
/// Lines waiting for the writer; a client that stops reading eventually stalls the agent.
const OUTBOX_CAPACITY: usize = 64;
/// What the demo "would" write: shown to the client in the tool call, never written.
const DEMO_FILE_NAME: &str = "demo.txt";
const DEMO_FILE_CONTENT: &str = "Hello from the acp-conductor demo agent.\n";

/// Serves one ACP connection until `input` reaches EOF.
///
/// A turn still running at EOF is cancelled and answered before this returns, so every request
/// gets its response; then `output` is flushed and shut down.
pub async fn serve<R, W>(input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    serve_with(input, output, mcp::process_launcher()).await
}

/// [`serve`], starting MCP servers with `launcher`.
async fn serve_with<R, W>(input: R, output: W, launcher: Launcher) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let (lines, queue) = mpsc::channel(OUTBOX_CAPACITY);
    let connection = Connection::new(Outbox { lines }, launcher);
    let (read, written) = tokio::join!(connection.run(input), write_lines(output, queue));
    read.and(written)
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut queue: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(line) = queue.recv().await {
        output.write_all(&line).await?;
        // Flush only when nothing else is waiting: a burst of chunks costs one flush.
        if queue.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await?;
    output.shutdown().await
}

/// The writer has stopped (its error, if any, is what `serve` reports).
#[derive(Debug)]
struct WriterGone;

/// Sending side of the line queue, shared by the read loop and the turns.
#[derive(Clone)]
struct Outbox {
    lines: mpsc::Sender<Vec<u8>>,
}

impl Outbox {
    async fn send(&self, mut line: Vec<u8>) -> Result<(), WriterGone> {
        line.push(b'\n');
        self.lines.send(line).await.map_err(|_| WriterGone)
    }

    async fn respond(&self, id: &RawValue, result: &Value) -> Result<(), WriterGone> {
        let result = raw(result);
        let mut line = Vec::new();
        encode::response(&mut line, id.get(), Outcome::Result(&result));
        self.send(line).await
    }

    async fn respond_error(&self, id: &str, error: &RpcError) -> Result<(), WriterGone> {
        let mut line = Vec::new();
        encode::error_response(&mut line, id, error.code, &error.message, None);
        self.send(line).await
    }

    async fn notify(&self, method: &str, params: &Value) -> Result<(), WriterGone> {
        self.call(None, method, params).await
    }

    async fn request(&self, id: u64, method: &str, params: &Value) -> Result<(), WriterGone> {
        self.call(Some(&id.to_string()), method, params).await
    }

    async fn call(&self, id: Option<&str>, method: &str, params: &Value) -> Result<(), WriterGone> {
        let params = raw(params);
        let mut line = Vec::new();
        let call = Call::Plain {
            method,
            params: Some(&params),
        };
        encode::call(&mut line, id, call);
        self.send(line).await
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a serde_json::Value always serializes")
}

/// A JSON-RPC error this agent answers with.
#[derive(Debug)]
struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn invalid_params(message: impl Into<String>) -> Self {
        RpcError {
            code: error_code::INVALID_PARAMS,
            message: message.into(),
        }
    }
}

/// How the client answered one of the agent's requests: its `result`, or its `error` object.
type Reply = Result<Value, Value>;

/// Requests the agent sent to the client and is waiting on, keyed by the id it chose.
/// Shared because turns register requests while the read loop delivers the answers.
#[derive(Default)]
struct RequestsToClient {
    next_id: u64,
    waiting: HashMap<u64, oneshot::Sender<Reply>>,
}

impl RequestsToClient {
    fn register(&mut self, reply: oneshot::Sender<Reply>) -> u64 {
        self.next_id += 1;
        self.waiting.insert(self.next_id, reply);
        self.next_id
    }
}

type SharedRequests = Arc<Mutex<RequestsToClient>>;

fn lock(requests: &SharedRequests) -> std::sync::MutexGuard<'_, RequestsToClient> {
    requests.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Session {
    cwd: PathBuf,
    turn: Option<RunningTurn>,
    /// Shared with the running turn; at most one turn uses it at a time.
    servers: Arc<AsyncMutex<SessionServers>>,
}

/// The read loop's handle on a turn task.
struct RunningTurn {
    prompt_id: IdKey,
    /// Set to `true` to cancel. The turn drops its receiver before it answers the prompt,
    /// so `is_closed()` means the turn is over.
    cancel: watch::Sender<bool>,
}

impl RunningTurn {
    fn is_running(&self) -> bool {
        !self.cancel.is_closed()
    }

    fn cancel(&self) {
        // An error only means the turn has already finished.
        let _ = self.cancel.send(true);
    }
}

/// The state of one connection, owned by its read loop.
struct Connection {
    outbox: Outbox,
    client_reads_files: bool,
    sessions: HashMap<String, Session>,
    sessions_created: u64,
    turns_started: u64,
    requests_to_client: SharedRequests,
    turns: JoinSet<()>,
    launcher: Launcher,
}

impl Connection {
    fn new(outbox: Outbox, launcher: Launcher) -> Self {
        Connection {
            outbox,
            launcher,
            client_reads_files: false,
            sessions: HashMap::new(),
            sessions_created: 0,
            turns_started: 0,
            requests_to_client: SharedRequests::default(),
            turns: JoinSet::new(),
        }
    }

    async fn run<R: AsyncRead + Unpin>(mut self, mut input: R) -> io::Result<()> {
        let mut decoder = LineDecoder::new(DEFAULT_MAX_LINE);
        let mut buf = BytesMut::with_capacity(8 * 1024);
        let outcome = 'reading: loop {
            while let Some(frame) = decoder.decode(&mut buf) {
                if self.handle_frame(frame).await.is_err() {
                    break 'reading Ok(());
                }
            }
            tokio::select! {
                read = input.read_buf(&mut buf) => match read {
                    Ok(0) => {
                        while let Some(frame) = decoder.decode_eof(&mut buf) {
                            if self.handle_frame(frame).await.is_err() {
                                break;
                            }
                        }
                        break Ok(());
                    }
                    Ok(_) => {}
                    Err(e) => break Err(e),
                },
                // The writer failed: nobody will see anything this agent says any more.
                () = self.outbox.lines.closed() => break Ok(()),
                Some(joined) = self.turns.join_next(), if !self.turns.is_empty() => {
                    if let Err(e) = joined {
                        tracing::error!("demo agent turn task failed: {e}");
                    }
                }
            }
        };
        self.finish_turns().await;
        // The sessions end with the connection: their MCP servers too.
        for session in self.sessions.values() {
            session.servers.lock().await.close().await;
        }
        outcome
    }

    /// Cancels what is still running and waits until every turn has answered its prompt.
    async fn finish_turns(&mut self) {
        for turn in self.sessions.values().filter_map(|s| s.turn.as_ref()) {
            turn.cancel();
        }
        while let Some(joined) = self.turns.join_next().await {
            if let Err(e) = joined {
                tracing::error!("demo agent turn task failed: {e}");
            }
        }
    }

    async fn handle_frame(&mut self, frame: Result<Bytes, FrameError>) -> Result<(), WriterGone> {
        let line = match frame {
            Ok(line) => line,
            Err(e) => {
                let error = RpcError {
                    code: error_code::MESSAGE_TOO_LARGE,
                    message: e.to_string(),
                };
                return self.outbox.respond_error("null", &error).await;
            }
        };
        match acp_wire::parse(&line) {
            Ok(Envelope::Request { id, method, params }) => {
                let params = params_value(params);
                match self.handle_request(id, method, &params) {
                    Ok(Some(result)) => self.outbox.respond(id, &result).await,
                    // A turn task owns the answer.
                    Ok(None) => Ok(()),
                    Err(error) => self.outbox.respond_error(id.get(), &error).await,
                }
            }
            Ok(Envelope::Notification { method, params }) => {
                self.handle_notification(method, params);
                Ok(())
            }
            Ok(Envelope::Response { id, outcome }) => {
                self.deliver_reply(id, outcome);
                Ok(())
            }
            Err(invalid) => {
                let error = RpcError {
                    code: invalid.code(),
                    message: invalid.to_string(),
                };
                self.outbox.respond_error(invalid.reply_id(), &error).await
            }
        }
    }

    /// The result to answer with, or `None` when a spawned turn will answer.
    fn handle_request(
        &mut self,
        id: &RawValue,
        method: &str,
        params: &Value,
    ) -> Result<Option<Value>, RpcError> {
        match method {
            "initialize" => self.initialize(params).map(Some),
            "authenticate" => Ok(Some(json!({}))),
            "session/new" => self.new_session(params).map(Some),
            "session/prompt" => self.start_turn(id, params).map(|()| None),
            _ => Err(RpcError {
                code: error_code::METHOD_NOT_FOUND,
                message: format!("method not found: {method}"),
            }),
        }
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, RpcError> {
        if !params["protocolVersion"].is_u64() {
            return Err(RpcError::invalid_params(
                "initialize needs protocolVersion, a non-negative integer",
            ));
        }
        // Whatever the client asks for, version 1 is the answer: the same version when the
        // client asked for 1, otherwise the latest (and only) one this agent supports.
        self.client_reads_files = params["clientCapabilities"]["fs"]["readTextFile"] == true;
        Ok(json!({
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": false,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                "mcpCapabilities": {"http": false, "sse": false},
            },
            "agentInfo": {
                "name": "acp-conductor-demo",
                "title": "Demo agent",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "authMethods": [],
        }))
    }

    fn new_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let cwd = params["cwd"]
            .as_str()
            .map(PathBuf::from)
            .filter(|cwd| cwd.is_absolute())
            .ok_or_else(|| RpcError::invalid_params("session/new needs cwd, an absolute path"))?;
        self.sessions_created += 1;
        let session_id = format!("demo-session-{}", self.sessions_created);
        let servers = StdioServer::from_declarations(&params["mcpServers"]);
        tracing::debug!(
            session = %session_id,
            "demo agent: stdio MCP servers: [{}]",
            servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
        );
        let servers = SessionServers::new(
            servers,
            cwd.clone(),
            self.launcher.clone(),
            mcp::REQUEST_TIMEOUT,
        );
        let session = Session {
            cwd,
            turn: None,
            servers: Arc::new(AsyncMutex::new(servers)),
        };
        self.sessions.insert(session_id.clone(), session);
        Ok(json!({ "sessionId": session_id }))
    }

    fn start_turn(&mut self, id: &RawValue, params: &Value) -> Result<(), RpcError> {
        let session_id = session_id_param(params)?;
        let Some(prompt) = params["prompt"].as_array() else {
            return Err(RpcError::invalid_params(
                "session/prompt needs prompt, an array of content blocks",
            ));
        };
        let session = self
            .sessions
            .get_mut(session_id)
            .ok_or_else(|| unknown_session(session_id))?;
        if session.turn.as_ref().is_some_and(RunningTurn::is_running) {
            return Err(RpcError {
                code: error_code::INVALID_REQUEST,
                message: format!("session {session_id} already has a prompt turn running"),
            });
        }
        self.turns_started += 1;
        let (cancel, cancelled) = watch::channel(false);
        session.turn = Some(RunningTurn {
            prompt_id: IdKey::of(id),
            cancel,
        });
        let turn = Turn {
            outbox: self.outbox.clone(),
            requests_to_client: self.requests_to_client.clone(),
            session_id: session_id.to_owned(),
            cwd: session.cwd.clone(),
            client_reads_files: self.client_reads_files,
            turn_number: self.turns_started,
            servers: session.servers.clone(),
            cancelled,
        };
        self.turns.spawn(turn.run(id.to_owned(), prompt.clone()));
        Ok(())
    }

    fn handle_notification(&mut self, method: &str, params: Option<&RawValue>) {
        match method {
            "session/cancel" => {
                let params = params_value(params);
                let session = params["sessionId"]
                    .as_str()
                    .and_then(|s| self.sessions.get(s));
                match session {
                    Some(session) => session.turn.iter().for_each(RunningTurn::cancel),
                    None => tracing::debug!("demo agent: session/cancel for an unknown session"),
                }
            }
            "$/cancel_request" => {
                let Some(request_id) = params.and_then(cancelled_request_id) else {
                    tracing::debug!("demo agent: $/cancel_request without a requestId");
                    return;
                };
                // Only prompts outlive the message that started them; every other request
                // was answered before this notification could be read.
                self.sessions
                    .values()
                    .filter_map(|s| s.turn.as_ref())
                    .filter(|turn| turn.prompt_id == request_id)
                    .for_each(RunningTurn::cancel);
            }
            _ => {}
        }
    }

    fn deliver_reply(&mut self, id: &RawValue, outcome: Outcome<'_>) {
        let waiting = own_id(id).and_then(|id| lock(&self.requests_to_client).waiting.remove(&id));
        let Some(waiting) = waiting else {
            // Typically the answer to a request the turn gave up on when it was cancelled.
            tracing::debug!("demo agent: ignoring a response to request {}", id.get());
            return;
        };
        let reply = match outcome {
            Outcome::Result(result) => Ok(serde_json::from_str(result.get()).unwrap_or_default()),
            Outcome::Error(error) => Err(serde_json::from_str(error.get()).unwrap_or_default()),
        };
        // The turn may have ended meanwhile; then nobody wants the reply.
        let _ = waiting.send(reply);
    }
}

fn params_value(params: Option<&RawValue>) -> Value {
    // The envelope parser already checked the line is JSON.
    params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

fn cancelled_request_id(params: &RawValue) -> Option<IdKey> {
    #[derive(serde::Deserialize)]
    struct CancelRequest<'a> {
        #[serde(rename = "requestId", borrow)]
        request_id: &'a RawValue,
    }
    let params: CancelRequest<'_> = serde_json::from_str(params.get()).ok()?;
    Some(IdKey::of(params.request_id))
}

fn session_id_param(params: &Value) -> Result<&str, RpcError> {
    params["sessionId"]
        .as_str()
        .ok_or_else(|| RpcError::invalid_params("missing sessionId"))
}

fn unknown_session(session_id: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "unknown session: {session_id} (this demo agent knows only sessions it created with session/new on this connection)"
    ))
}

/// The turn stopped because the client cancelled it.
#[derive(Debug)]
struct Cancelled;

/// One prompt turn, running as its own task.
struct Turn {
    outbox: Outbox,
    requests_to_client: SharedRequests,
    session_id: String,
    cwd: PathBuf,
    client_reads_files: bool,
    /// Makes the turn's tool call ids unique on the connection.
    turn_number: u64,
    servers: Arc<AsyncMutex<SessionServers>>,
    cancelled: watch::Receiver<bool>,
}

impl Turn {
    async fn run(mut self, prompt_id: Box<RawValue>, prompt: Vec<Value>) {
        let stop_reason = match self.play(&prompt).await {
            Ok(()) => "end_turn",
            Err(Cancelled) => "cancelled",
        };
        let Turn {
            outbox, cancelled, ..
        } = self;
        // Before answering: the read loop takes a closed channel as "no turn running", and
        // the client may start the next turn as soon as it reads this answer.
        drop(cancelled);
        // A failed write is the writer's error to report.
        let _ = outbox
            .respond(&prompt_id, &json!({ "stopReason": stop_reason }))
            .await;
    }

    async fn play(&mut self, prompt: &[Value]) -> Result<(), Cancelled> {
        let tool_intent = prompt_tool_intent(prompt);
        let action = match tool_intent {
            Some(_) => "Use the requested MCP tool",
            None => "Carry out a requested write or read",
        };
        self.update(json!({
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Show what the prompt contained", "priority": "high", "status": "in_progress"},
                {"content": action, "priority": "medium", "status": "pending"},
            ],
        }))
        .await?;
        self.say(&format!(
            "Demo agent here. I received {} content block(s):\n",
            prompt.len()
        ))
        .await?;
        for block in prompt {
            self.say(&describe_block(block)).await?;
        }
        if let Some(intent) = tool_intent {
            // The rest of the text is the tool's input, not more requests.
            return self.use_tools(intent).await;
        }
        let text = prompt_text(prompt);
        let lowered = text.to_lowercase();
        if lowered.contains("slow") {
            self.tick().await?;
        }
        if lowered.contains("write") || lowered.contains("permission") {
            self.ask_to_write().await?;
        }
        if let Some(target) = read_target(&text) {
            self.read_first_line(&target).await?;
        }
        Ok(())
    }

    fn check_cancelled(&self) -> Result<(), Cancelled> {
        if *self.cancelled.borrow() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Sends a `session/update` as the next step of the turn, unless the turn was cancelled.
    async fn update(&self, update: Value) -> Result<(), Cancelled> {
        self.check_cancelled()?;
        self.report(update).await;
        Ok(())
    }

    /// Sends a `session/update` even after cancellation (final tool call statuses).
    async fn report(&self, update: Value) {
        let params = json!({ "sessionId": self.session_id, "update": update });
        // A failed write is the writer's error to report; the turn still answers its prompt.
        let _ = self.outbox.notify("session/update", &params).await;
    }

    async fn say(&self, text: &str) -> Result<(), Cancelled> {
        self.update(json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }))
        .await
    }

    async fn tick(&mut self) -> Result<(), Cancelled> {
        for n in 1..=MAX_TICKS {
            tokio::select! {
                () = tokio::time::sleep(TICK_INTERVAL) => {}
                () = until_cancelled(&mut self.cancelled) => return Err(Cancelled),
            }
            self.say(&format!("tick {n}\n")).await?;
        }
        Ok(())
    }

    /// Sends a request to the client and waits for its answer, or for cancellation, which
    /// withdraws the request with `$/cancel_request`.
    async fn request(&mut self, method: &str, params: Value) -> Result<Reply, Cancelled> {
        self.check_cancelled()?;
        let (reply_tx, reply_rx) = oneshot::channel();
        let id = lock(&self.requests_to_client).register(reply_tx);
        // A failed write leaves the reply pending until EOF cancels the turn.
        let _ = self.outbox.request(id, method, &params).await;
        tokio::select! {
            reply = reply_rx => Ok(reply.unwrap_or_else(|_| Err(json!({
                "code": error_code::INTERNAL_ERROR,
                "message": "the connection closed before the client answered",
            })))),
            () = until_cancelled(&mut self.cancelled) => {
                lock(&self.requests_to_client).waiting.remove(&id);
                let _ = self.outbox.notify("$/cancel_request", &json!({ "requestId": id })).await;
                Err(Cancelled)
            }
        }
    }

    async fn ask_to_write(&mut self) -> Result<(), Cancelled> {
        let path = self.cwd.join(DEMO_FILE_NAME).to_string_lossy().into_owned();
        let tool_call = json!({
            "toolCallId": self.write_call_id(),
            "title": format!("Write {DEMO_FILE_NAME}"),
            "kind": "edit",
            "status": "pending",
            "locations": [{"path": path}],
            "rawInput": {"path": path, "content": DEMO_FILE_CONTENT},
        });
        let mut announcement = json!({ "sessionUpdate": "tool_call" });
        if let (Some(fields), Some(call)) = (announcement.as_object_mut(), tool_call.as_object()) {
            fields.extend(call.clone());
        }
        self.update(announcement).await?;
        let params = json!({
            "sessionId": self.session_id,
            "toolCall": tool_call,
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        });
        let granted = match self.request("session/request_permission", params).await {
            Ok(Ok(result)) => {
                let outcome = &result["outcome"];
                outcome["outcome"] == "selected" && outcome["optionId"] == "allow"
            }
            Ok(Err(_)) => false,
            Err(Cancelled) => {
                self.report(tool_call_status(&self.write_call_id(), "failed"))
                    .await;
                return Err(Cancelled);
            }
        };
        let id = self.write_call_id();
        if granted {
            self.report(tool_call_status(&id, "completed")).await;
            self.say("Permission granted: I would write demo.txt (the demo agent never touches your files).\n")
                .await
        } else {
            self.report(tool_call_status(&id, "failed")).await;
            self.say("Permission denied: demo.txt was not written.\n")
                .await
        }
    }

    fn write_call_id(&self) -> String {
        format!("demo-write-{}", self.turn_number)
    }

    async fn read_first_line(&mut self, target: &str) -> Result<(), Cancelled> {
        let path = self.cwd.join(target).to_string_lossy().into_owned();
        if !self.client_reads_files {
            return self
                .say(&format!(
                    "I cannot read {path}: the client did not offer fs.readTextFile.\n"
                ))
                .await;
        }
        let params = json!({ "sessionId": self.session_id, "path": path, "line": 1, "limit": 1 });
        let message = match self.request("fs/read_text_file", params).await? {
            Ok(result) => match result["content"].as_str() {
                Some(content) => match content.lines().next() {
                    Some(first) if !first.is_empty() => format!("First line of {path}: {first}\n"),
                    _ => format!("First line of {path} is empty.\n"),
                },
                None => format!("Could not read {path}: the answer had no text content.\n"),
            },
            Err(error) => {
                let reason = error["message"].as_str().unwrap_or("unknown error");
                format!("Could not read {path}: {reason}\n")
            }
        };
        self.say(&message).await
    }

    /// Runs `work` unless the turn is cancelled first.
    async fn or_cancelled<T>(&mut self, work: impl Future<Output = T>) -> Result<T, Cancelled> {
        self.check_cancelled()?;
        tokio::select! {
            biased;
            () = until_cancelled(&mut self.cancelled) => Err(Cancelled),
            done = work => Ok(done),
        }
    }

    async fn use_tools(&mut self, intent: ToolIntent) -> Result<(), Cancelled> {
        let servers = self.servers.clone();
        // Never contended: a session runs one turn at a time.
        let mut servers = servers.lock().await;
        match intent {
            ToolIntent::List => self.list_tools(&mut servers).await,
            ToolIntent::Call { tool, arguments } => {
                self.call_tool(&mut servers, &tool, &arguments).await
            }
            ToolIntent::BadArguments { tool, problem } => {
                self.say(&format!(
                    "I did not call `{tool}`: its arguments must be a JSON object ({problem}).\n"
                ))
                .await
            }
        }
    }

    async fn list_tools(&mut self, servers: &mut SessionServers) -> Result<(), Cancelled> {
        if servers.is_empty() {
            return self.say(NO_SERVERS).await;
        }
        let listed = self.or_cancelled(servers.list_tools()).await?;
        let text: String = listed
            .into_iter()
            .map(|(server, tools)| match tools {
                Ok(tools) if tools.is_empty() => format!("{server}: (no tools)\n"),
                Ok(tools) => format!("{server}: {}\n", tools.join(", ")),
                Err(e) => format!("{server}: could not list its tools: {e}\n"),
            })
            .collect();
        self.say(&text).await
    }

    async fn call_tool(
        &mut self,
        servers: &mut SessionServers,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), Cancelled> {
        let search = self.or_cancelled(servers.find_tool(tool)).await?;
        let Some(index) = search.found else {
            let mut text = format!("I cannot do that: no MCP server offers a `{tool}` tool");
            if servers.is_empty() {
                text.push_str(" (this session has no stdio MCP servers)");
            }
            for failure in &search.failures {
                text.push_str(&format!("; {failure}"));
            }
            text.push_str(".\n");
            return self.say(&text).await;
        };
        let server = servers.name(index).to_owned();
        let id = format!("demo-tool-{}", self.turn_number);
        self.update(json!({
            "sessionUpdate": "tool_call",
            "toolCallId": id,
            "title": format!("{server}: {tool}"),
            "kind": "other",
            "status": "pending",
            "rawInput": arguments,
        }))
        .await?;
        let outcome = match self.update(tool_call_status(&id, "in_progress")).await {
            Ok(()) => {
                self.or_cancelled(servers.call_tool(index, tool, arguments))
                    .await
            }
            Err(cancelled) => Err(cancelled),
        };
        let Ok(outcome) = outcome else {
            // The call, if it was sent, is withdrawn with notifications/cancelled.
            self.report(tool_call_status(&id, "failed")).await;
            return Err(Cancelled);
        };
        let (status, text, raw_output, message) = match outcome {
            Ok(result) if !result.is_error => {
                let message = format!("The `{tool}` tool of {server} answered:");
                ("completed", result.text, Some(result.raw), message)
            }
            Ok(result) => {
                let message = format!("The `{tool}` tool of {server} reported an error:");
                ("failed", result.text, Some(result.raw), message)
            }
            Err(e) => {
                let message = format!("Calling the `{tool}` tool of {server} failed:");
                ("failed", e.to_string(), None, message)
            }
        };
        let mut update = tool_call_status(&id, status);
        update["content"] = json!([{"type": "content", "content": {"type": "text", "text": text}}]);
        if let Some(raw_output) = raw_output {
            update["rawOutput"] = raw_output;
        }
        self.report(update).await;
        // One line inline, several as a block of their own.
        let separator = if text.contains('\n') { "\n" } else { " " };
        self.say(&format!("{message}{separator}{}\n", text.trim_end()))
            .await
    }
}

/// What the agent says when asked about tools in a session with no stdio MCP server.
const NO_SERVERS: &str = "This session has no stdio MCP servers.\n";

fn tool_call_status(id: &str, status: &str) -> Value {
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": id,
        "status": status,
    })
}

/// Resolves once cancellation was requested, or the read loop is gone (which also ends the turn).
async fn until_cancelled(cancelled: &mut watch::Receiver<bool>) {
    let _ = cancelled.wait_for(|&c| c).await;
}

/// How the agent shows one prompt content block back to the client.
fn describe_block(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => quote(block["text"].as_str().unwrap_or_default()),
        Some("resource") => {
            let resource = &block["resource"];
            let uri = resource["uri"].as_str().unwrap_or("?");
            match resource["text"].as_str() {
                Some(text) => format!("[resource {uri}]\n{}", quote(text)),
                None => format!("[resource {uri}] (binary)\n"),
            }
        }
        Some("resource_link") => format!("[link {}]\n", block["uri"].as_str().unwrap_or("?")),
        Some(other) => format!("[{other} block]\n"),
        None => "[untyped block]\n".to_owned(),
    }
}

/// Markdown-style quote: every line prefixed with `> ` (a bare `>` for an empty line).
fn quote(text: &str) -> String {
    if text.is_empty() {
        return ">\n".to_owned();
    }
    text.lines()
        .map(|line| {
            if line.is_empty() {
                ">\n".to_owned()
            } else {
                format!("> {line}\n")
            }
        })
        .collect()
}

/// What the user typed: the text blocks only, so context a proxy embedded as resources does
/// not trigger the demo's actions.
fn prompt_text(prompt: &[Value]) -> String {
    prompt
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A request to use the session's MCP tools (the rules are in the module doc).
#[derive(Debug, Clone, PartialEq)]
enum ToolIntent {
    Call {
        tool: String,
        arguments: Value,
    },
    List,
    /// `use tool` / `call` with arguments that are not a JSON object: nothing is called.
    BadArguments {
        tool: String,
        problem: String,
    },
}

/// The tool request of the first text block that makes one.
fn prompt_tool_intent(prompt: &[Value]) -> Option<ToolIntent> {
    prompt
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .find_map(tool_intent)
}

/// The tool request `text` makes, if any: the first rule of the module doc that matches.
fn tool_intent(text: &str) -> Option<ToolIntent> {
    let text = text.trim_start();
    let text = match after_words(text, &["please"]) {
        Some(rest) => rest.trim_start().trim_start_matches(','),
        None => text,
    };
    let call = |tool: &str, arguments: Value| ToolIntent::Call {
        tool: tool.to_owned(),
        arguments,
    };
    if let Some(rest) = after_words(text, &["remember"]) {
        let rest = rest.trim();
        let note = match after_words(rest, &["that"]).map(str::trim) {
            Some(after_that) if !after_that.is_empty() => after_that,
            _ => rest,
        };
        let note = note.trim_start_matches([':', ',']).trim_start();
        if note.chars().any(char::is_alphanumeric) {
            return Some(call("remember", json!({ "note": note })));
        }
    }
    let recall = [
        &["what", "do", "you", "recall"][..],
        &["what", "do", "you", "remember"],
        &["recall"],
    ];
    if recall
        .iter()
        .any(|words| after_words(text, words).is_some())
    {
        return Some(call("recall", json!({})));
    }
    let number = [&["forget", "note"][..], &["forget"]]
        .iter()
        .filter_map(|words| after_words(text, words))
        .find_map(note_number);
    if let Some(number) = number {
        return Some(call("forget", json!({ "number": number })));
    }
    if let Some(rest) = [&["use", "tool"][..], &["call"]]
        .iter()
        .find_map(|words| after_words(text, words))
    {
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '{')
            .unwrap_or(rest.len());
        let tool = rest[..name_end].trim_matches(['`', '"', '\'']);
        if !tool.is_empty() {
            return Some(tool_call_intent(tool, rest[name_end..].trim()));
        }
    }
    let list = [&["list", "tools"][..], &["what", "tools"]];
    if list.iter().any(|words| after_words(text, words).is_some()) {
        return Some(ToolIntent::List);
    }
    None
}

/// The note number at the start of `rest` ("2", "#2", "2."), if that is all its first word is.
fn note_number(rest: &str) -> Option<u64> {
    let word = rest.split_whitespace().next()?;
    word.trim_start_matches('#')
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .parse()
        .ok()
}

/// `use tool <tool> <arguments>`: the arguments, if any, must be a JSON object.
fn tool_call_intent(tool: &str, arguments: &str) -> ToolIntent {
    let arguments = arguments.trim_matches('`').trim();
    let parsed = if arguments.is_empty() {
        Ok(json!({}))
    } else {
        serde_json::from_str::<Value>(arguments).map_err(|e| e.to_string())
    };
    match parsed {
        Ok(arguments) if arguments.is_object() => ToolIntent::Call {
            tool: tool.to_owned(),
            arguments,
        },
        Ok(other) => ToolIntent::BadArguments {
            tool: tool.to_owned(),
            problem: format!("got {other}"),
        },
        Err(problem) => ToolIntent::BadArguments {
            tool: tool.to_owned(),
            problem,
        },
    }
}

/// What follows `words` at the start of `text`, matched ASCII case-insensitively with any
/// whitespace between them; each must be a whole word.
fn after_words<'t>(text: &'t str, words: &[&str]) -> Option<&'t str> {
    let mut rest = text;
    for word in words {
        rest = rest.trim_start();
        if !rest.get(..word.len())?.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = &rest[word.len()..];
        if rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            return None;
        }
    }
    Some(rest)
}

/// The path in "read <path>", if the prompt asks for one.
fn read_target(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        if !word.eq_ignore_ascii_case("read") {
            continue;
        }
        let target = words
            .next()?
            .trim_matches(['"', '\'', '`'])
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        return (!target.is_empty()).then(|| target.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo_mcp_client::McpError;
    use crate::demo_mcp_client::test_support::{Seen, launches, notes_launcher, wait_for_seen};
    use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

    const WAIT: Duration = Duration::from_secs(10);

    /// A client that speaks raw lines to a demo agent running in its own task.
    struct RawClient {
        from_agent: Lines<BufReader<ReadHalf<DuplexStream>>>,
        to_agent: WriteHalf<DuplexStream>,
        agent: tokio::task::JoinHandle<io::Result<()>>,
    }

    impl RawClient {
        fn start() -> Self {
            Self::start_with(mcp::process_launcher())
        }

        fn start_with(launcher: Launcher) -> Self {
            let (client, agent) = tokio::io::duplex(64 * 1024);
            let (agent_in, agent_out) = tokio::io::split(agent);
            let agent = tokio::spawn(serve_with(agent_in, agent_out, launcher));
            let (from_agent, to_agent) = tokio::io::split(client);
            RawClient {
                from_agent: BufReader::new(from_agent).lines(),
                to_agent,
                agent,
            }
        }

        async fn send(&mut self, line: &str) {
            self.to_agent.write_all(line.as_bytes()).await.unwrap();
            self.to_agent.write_all(b"\n").await.unwrap();
        }

        async fn recv(&mut self) -> String {
            tokio::time::timeout(WAIT, self.from_agent.next_line())
                .await
                .expect("the agent answers in time")
                .unwrap()
                .expect("the agent keeps the connection open")
        }

        async fn expect(&mut self, expected: &str) {
            assert_eq!(self.recv().await, expected);
        }

        /// initialize (with `fs.readTextFile` as given) and session/new in /tmp.
        async fn open_session(&mut self, reads_files: bool) {
            self.send(&format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{"fs":{{"readTextFile":{reads_files}}}}}}}}}"#
            ))
            .await;
            let _ = self.recv().await;
            self.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
                .await;
            self.expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
                .await;
        }

        /// initialize and session/new in /tmp with the given `mcpServers`.
        async fn open_session_with_servers(&mut self, servers: Value) {
            self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#)
                .await;
            let initialized = self.recv().await;
            assert!(
                initialized.contains(r#""mcpCapabilities":{"http":false,"sse":false}"#),
                "{initialized}"
            );
            let request = json!({
                "jsonrpc": "2.0", "id": 1, "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": servers},
            });
            self.send(&request.to_string()).await;
            self.expect(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"demo-session-1"}}"#)
                .await;
        }

        /// The next line is this `session/update` (compared as JSON).
        async fn expect_update(&mut self, update: Value) {
            let line = self.recv().await;
            let got: Value = serde_json::from_str(&line).unwrap();
            let expected = json!({
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "demo-session-1", "update": update},
            });
            assert_eq!(got, expected, "{line}");
        }

        /// A notes tool call of turn `turn`, from announcement to its final status.
        async fn expect_notes_tool_call(
            &mut self,
            turn: u64,
            tool: &str,
            input: Value,
            outcome: Result<&str, &str>,
        ) {
            let id = format!("demo-tool-{turn}");
            self.expect_update(json!({
                "sessionUpdate": "tool_call", "toolCallId": id, "title": format!("notes: {tool}"),
                "kind": "other", "status": "pending", "rawInput": input,
            }))
            .await;
            self.expect_update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress"}),
            )
            .await;
            let (status, text, is_error) = match outcome {
                Ok(text) => ("completed", text, false),
                Err(text) => ("failed", text, true),
            };
            self.expect_update(json!({
                "sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
                "content": [{"type": "content", "content": {"type": "text", "text": text}}],
                "rawOutput": {"content": [{"type": "text", "text": text}], "isError": is_error},
            }))
            .await;
        }

        /// A whole turn of a one-block prompt that calls one notes tool: the prompt's echo,
        /// tool call number `call`, what the agent then says, and the end of the turn.
        async fn tool_turn(
            &mut self,
            prompt_id: u64,
            text: &str,
            call: (u64, &str, Value),
            outcome: Result<&str, &str>,
            said: &str,
        ) {
            self.send(&prompt(prompt_id, text)).await;
            self.skip_echo(text).await;
            let (number, tool, input) = call;
            self.expect_notes_tool_call(number, tool, input, outcome)
                .await;
            self.expect(&chunk(said)).await;
            self.expect_end_turn(prompt_id).await;
        }

        async fn expect_end_turn(&mut self, id: u64) {
            self.expect(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#
            ))
            .await;
        }

        /// Reads the plan and the echo chunks of a one-text-block prompt.
        async fn skip_echo(&mut self, text: &str) {
            let plan = self.recv().await;
            assert!(plan.contains(r#""sessionUpdate":"plan""#), "{plan}");
            self.expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
                .await;
            self.expect(&chunk(&format!("> {text}\n"))).await;
        }

        /// Proves the agent has nothing else queued: the next line answers a fresh request.
        async fn expect_quiet(&mut self) {
            self.send(r#"{"jsonrpc":"2.0","id":"probe","method":"probe"}"#)
                .await;
            self.expect(r#"{"jsonrpc":"2.0","id":"probe","error":{"code":-32601,"message":"method not found: probe"}}"#)
                .await;
        }

        /// Ends the connection as an editor does (EOF on the agent's input) and checks the
        /// agent then finishes cleanly.
        async fn close(mut self) {
            self.to_agent.shutdown().await.unwrap();
            self.agent.await.unwrap().unwrap();
        }
    }

    fn prompt(id: u64, text: &str) -> String {
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "session/prompt",
            "params": {"sessionId": "demo-session-1", "prompt": [{"type": "text", "text": text}]},
        })
        .to_string()
    }

    fn chunk(text: &str) -> String {
        json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "demo-session-1",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            },
        })
        .to_string()
    }

    #[tokio::test]
    async fn initialize_answers_version_1_and_capabilities() {
        let mut client = RawClient::start();
        client
            .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{}}}"#)
            .await;
        client
            .expect(&format!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":false,"promptCapabilities":{{"image":false,"audio":false,"embeddedContext":true}},"mcpCapabilities":{{"http":false,"sse":false}}}},"agentInfo":{{"name":"acp-conductor-demo","title":"Demo agent","version":"{}"}},"authMethods":[]}}}}"#,
                env!("CARGO_PKG_VERSION")
            ))
            .await;
        client
            .send(r#"{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"x"}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn plain_prompt_echoes_every_block_then_ends_turn() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        let request = json!({
            "jsonrpc": "2.0", "id": 2, "method": "session/prompt",
            "params": {"sessionId": "demo-session-1", "prompt": [
                {"type": "text", "text": "first line\n\nthird line"},
                {"type": "resource", "resource": {"uri": "file:///r.md", "text": "injected"}},
                {"type": "resource_link", "uri": "file:///l.md", "name": "l.md"},
                {"type": "image", "mimeType": "image/png", "data": ""},
            ]},
        });
        client.send(&request.to_string()).await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Show what the prompt contained","priority":"high","status":"in_progress"},{"content":"Carry out a requested write or read","priority":"medium","status":"pending"}]}}}"#)
            .await;
        for text in [
            "Demo agent here. I received 4 content block(s):\n",
            "> first line\n>\n> third line\n",
            "[resource file:///r.md]\n> injected\n",
            "[link file:///l.md]\n",
            "[image block]\n",
        ] {
            client.expect(&chunk(text)).await;
        }
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn permission_request_and_its_answers() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "please write it")).await;
        client.skip_echo("please write it").await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call","toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}}}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"demo-session-1","toolCall":{"toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/tmp/demo.txt"}],"rawInput":{"path":"/tmp/demo.txt","content":"Hello from the acp-conductor demo agent.\n"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}"#)
            .await;
        client
            .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"completed"}}}"#)
            .await;
        client.expect(&chunk("Permission granted: I would write demo.txt (the demo agent never touches your files).\n")).await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
            .await;

        // The next turn gets its own tool call id; an error answer counts as a refusal.
        client.send(&prompt(3, "Permission?")).await;
        client.skip_echo("Permission?").await;
        let tool_call = client.recv().await;
        assert!(
            tool_call.contains(r#""toolCallId":"demo-write-2""#),
            "{tool_call}"
        );
        let request = client.recv().await;
        assert!(
            request.starts_with(r#"{"jsonrpc":"2.0","id":2,"method":"session/request_permission""#),
            "{request}"
        );
        client
            .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no UI"}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-2","status":"failed"}}}"#)
            .await;
        client
            .expect(&chunk("Permission denied: demo.txt was not written.\n"))
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn session_cancel_while_permission_pending_withdraws_the_request() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "ask permission")).await;
        client.skip_echo("ask permission").await;
        let _tool_call = client.recv().await;
        let request = client.recv().await;
        assert!(
            request.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission""#),
            "{request}"
        );
        client
            .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"demo-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"demo-write-1","status":"failed"}}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
            .await;
        // The client's late answer to the withdrawn request is ignored.
        client
            .send(r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}"#)
            .await;
        client.expect_quiet().await;
        // The session takes a new turn at once.
        client.send(&prompt(3, "again")).await;
        client.skip_echo("again").await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn session_cancel_stops_a_slow_turn() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "go slow")).await;
        client.skip_echo("go slow").await;
        client.expect(&chunk("tick 1\n")).await;
        client
            .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
            .await;
        let mut ticks = 1;
        loop {
            let line = client.recv().await;
            if line == r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"# {
                break;
            }
            ticks += 1;
            assert_eq!(line, chunk(&format!("tick {ticks}\n")));
        }
        assert!(
            ticks < 5,
            "the turn went on for {ticks} ticks after session/cancel"
        );
        client.expect_quiet().await;
        client.close().await;
    }

    #[tokio::test]
    async fn cancel_request_naming_the_prompt_cancels_the_turn() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(7, "slow please")).await;
        client.skip_echo("slow please").await;
        client.expect(&chunk("tick 1\n")).await;
        // Another id first: it names no running request and changes nothing.
        client
            .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"7"}}"#)
            .await;
        client.expect(&chunk("tick 2\n")).await;
        client
            .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#)
            .await;
        let mut line = client.recv().await;
        while line.contains("tick ") {
            line = client.recv().await;
        }
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"cancelled"}}"#
        );
        client.expect_quiet().await;
        client.close().await;
    }

    #[tokio::test]
    async fn eof_cancels_and_answers_a_running_turn() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "slow")).await;
        client.skip_echo("slow").await;
        let RawClient {
            mut from_agent,
            mut to_agent,
            agent,
        } = client;
        to_agent.shutdown().await.unwrap();
        let mut last = String::new();
        while let Some(line) = from_agent.next_line().await.unwrap() {
            last = line;
        }
        assert_eq!(
            last,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
        );
        agent.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn read_request_reports_first_line_or_error() {
        let mut client = RawClient::start();
        client.open_session(true).await;
        client.send(&prompt(2, "read notes.md")).await;
        client.skip_echo("read notes.md").await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"demo-session-1","path":"/tmp/notes.md","line":1,"limit":1}}"#)
            .await;
        client
            .send(r##"{"jsonrpc":"2.0","id":1,"result":{"content":"# Notes\n"}}"##)
            .await;
        client
            .expect(&chunk("First line of /tmp/notes.md: # Notes\n"))
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
            .await;

        client.send(&prompt(3, "Read /etc/none.")).await;
        client.skip_echo("Read /etc/none.").await;
        let request = client.recv().await;
        assert!(request.contains(r#""path":"/etc/none""#), "{request}");
        client
            .send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no such file"}}"#)
            .await;
        client
            .expect(&chunk("Could not read /etc/none: no such file\n"))
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn read_without_client_capability_sends_no_request() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "read /x")).await;
        client.skip_echo("read /x").await;
        client
            .expect(&chunk(
                "I cannot read /x: the client did not offer fs.readTextFile.\n",
            ))
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn errors_for_unknown_methods_sessions_and_bad_input() {
        let mut client = RawClient::start();
        client
            .send(r#"{"jsonrpc":"2.0","id":5,"method":"session/load","params":{}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"method not found: session/load"}}"#)
            .await;
        client.send("{not json\r").await;
        let line = client.recv().await;
        assert!(
            line.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not valid JSON: "#),
            "{line}"
        );
        client
            .send(r#"{"jsonrpc":"2.0","method":"no/such/notification","params":{}}"#)
            .await;
        client
            .send(r#"{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown session: nope (this demo agent knows only sessions it created with session/new on this connection)"}}"#)
            .await;
        client
            .send(r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}"#)
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"session/new needs cwd, an absolute path"}}"#)
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn second_prompt_while_a_turn_runs_is_refused() {
        let mut client = RawClient::start();
        client.open_session(false).await;
        client.send(&prompt(2, "slow")).await;
        client.skip_echo("slow").await;
        client.send(&prompt(3, "again")).await;
        let mut line = client.recv().await;
        while line.contains("tick ") {
            line = client.recv().await;
        }
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"session demo-session-1 already has a prompt turn running"}}"#
        );
        client
            .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
            .await;
        let mut line = client.recv().await;
        while line.contains("tick ") {
            line = client.recv().await;
        }
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#
        );
        client.close().await;
    }

    fn notes_server_entry(name: &str) -> Value {
        json!({"name": name, "command": "acp-conductor", "args": ["mcp-bridge"], "env": []})
    }

    #[tokio::test]
    async fn remember_recall_and_forget_through_a_stdio_mcp_server() {
        let seen = Seen::default();
        let mut client = RawClient::start_with(notes_launcher(seen.clone()));
        client
            .open_session_with_servers(json!([
                {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
                {"type": "acp", "name": "proxied", "id": "p-1"},
                notes_server_entry("notes"),
            ]))
            .await;
        assert!(launches(&seen).is_empty(), "servers start on first use");

        client
            .send(&prompt(2, "Remember that the build uses nextest"))
            .await;
        let plan = client.recv().await;
        assert!(
            plan.contains(
                r#"{"content":"Use the requested MCP tool","priority":"medium","status":"pending"}"#
            ),
            "{plan}"
        );
        client
            .expect(&chunk("Demo agent here. I received 1 content block(s):\n"))
            .await;
        client
            .expect(&chunk("> Remember that the build uses nextest\n"))
            .await;
        client
            .expect_notes_tool_call(
                1,
                "remember",
                json!({"note": "the build uses nextest"}),
                Ok("Noted (note 1)."),
            )
            .await;
        client
            .expect(&chunk(
                "The `remember` tool of notes answered: Noted (note 1).\n",
            ))
            .await;
        client.expect_end_turn(2).await;

        // The note is the tool's input: "read", "write" and "slow" in it start nothing.
        let text = "please remember: read notes.md slowly, then write";
        client
            .tool_turn(
                3,
                text,
                (
                    2,
                    "remember",
                    json!({"note": "read notes.md slowly, then write"}),
                ),
                Ok("Noted (note 2)."),
                "The `remember` tool of notes answered: Noted (note 2).\n",
            )
            .await;

        let notes = "1. the build uses nextest\n2. read notes.md slowly, then write";
        client
            .tool_turn(
                4,
                "What do you recall?",
                (3, "recall", json!({})),
                Ok(notes),
                &format!("The `recall` tool of notes answered:\n{notes}\n"),
            )
            .await;

        let forgot = "Forgot note 1: the build uses nextest";
        client
            .tool_turn(
                5,
                "forget note #1",
                (4, "forget", json!({"number": 1})),
                Ok(forgot),
                &format!("The `forget` tool of notes answered: {forgot}\n"),
            )
            .await;

        // A tool's own error fails the tool call, not the turn.
        client
            .tool_turn(
                6,
                "forget 5",
                (5, "forget", json!({"number": 5})),
                Err("There is no note 5."),
                "The `forget` tool of notes reported an error: There is no note 5.\n",
            )
            .await;

        let left = "1. read notes.md slowly, then write";
        client
            .tool_turn(
                7,
                "recall",
                (6, "recall", json!({})),
                Ok(left),
                &format!("The `recall` tool of notes answered: {left}\n"),
            )
            .await;

        // Only the stdio server was started, once; it answered the pings of `remember` and
        // its input closes when the connection ends.
        assert_eq!(launches(&seen), ["notes"]);
        client.close().await;
        wait_for_seen(&seen, "notes", "(closed)").await;
    }

    #[tokio::test]
    async fn list_tools_unknown_tools_and_bad_arguments() {
        let seen = Seen::default();
        let notes = notes_launcher(seen.clone());
        let launcher: Launcher = Arc::new(move |server, cwd| {
            if server.name == "broken" {
                return Err(McpError::Spawn {
                    server: server.name.clone(),
                    command: server.command.clone(),
                    source: io::Error::from(io::ErrorKind::NotFound),
                });
            }
            notes(server, cwd)
        });
        let mut client = RawClient::start_with(launcher);
        client
            .open_session_with_servers(json!([
                notes_server_entry("notes"),
                notes_server_entry("broken"),
                notes_server_entry("more"),
            ]))
            .await;

        client.send(&prompt(2, "What tools do you have?")).await;
        client.skip_echo("What tools do you have?").await;
        client
            .expect(&chunk(
                "notes: remember, recall, forget, crash, hang\n\
                 broken: could not list its tools: could not start MCP server `broken` (acp-conductor): entity not found\n\
                 more: remember, recall, forget, crash, hang\n",
            ))
            .await;
        client.expect_end_turn(2).await;

        client.send(&prompt(3, "use tool nope")).await;
        client.skip_echo("use tool nope").await;
        client
            .expect(&chunk(
                "I cannot do that: no MCP server offers a `nope` tool; could not start MCP server `broken` (acp-conductor): entity not found.\n",
            ))
            .await;
        client.expect_end_turn(3).await;

        client.send(&prompt(4, "call remember [1]")).await;
        client.skip_echo("call remember [1]").await;
        client
            .expect(&chunk(
                "I did not call `remember`: its arguments must be a JSON object (got [1]).\n",
            ))
            .await;
        client.expect_end_turn(4).await;

        let text = r#"Use tool `remember` {"note": "first server wins"}"#;
        client
            .tool_turn(
                5,
                text,
                (4, "remember", json!({"note": "first server wins"})),
                Ok("Noted (note 1)."),
                "The `remember` tool of notes answered: Noted (note 1).\n",
            )
            .await;
        client.close().await;
    }

    #[tokio::test]
    async fn a_server_going_away_mid_call_fails_the_tool_call_not_the_turn() {
        let seen = Seen::default();
        let mut client = RawClient::start_with(notes_launcher(seen.clone()));
        client
            .open_session_with_servers(json!([notes_server_entry("notes")]))
            .await;
        client.send(&prompt(2, "call crash {}")).await;
        client.skip_echo("call crash {}").await;
        client
            .expect_update(json!({
                "sessionUpdate": "tool_call", "toolCallId": "demo-tool-1", "title": "notes: crash",
                "kind": "other", "status": "pending", "rawInput": {},
            }))
            .await;
        client
            .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
            .await;
        let error = "MCP server `notes` went away before answering tools/call";
        client
            .expect_update(json!({
                "sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed",
                "content": [{"type": "content", "content": {"type": "text", "text": error}}],
            }))
            .await;
        client
            .expect(&chunk(&format!(
                "Calling the `crash` tool of notes failed: {error}\n"
            )))
            .await;
        client.expect_end_turn(2).await;

        // The next use starts the server again.
        client.send(&prompt(3, "recall")).await;
        client.skip_echo("recall").await;
        client
            .expect_notes_tool_call(2, "recall", json!({}), Ok("No notes yet."))
            .await;
        let _message = client.recv().await;
        client.expect_end_turn(3).await;
        assert_eq!(launches(&seen), ["notes", "notes"]);
        client.close().await;
    }

    #[tokio::test]
    async fn session_cancel_during_a_tool_call_fails_it_and_withdraws_the_call() {
        let seen = Seen::default();
        let mut client = RawClient::start_with(notes_launcher(seen.clone()));
        client
            .open_session_with_servers(json!([notes_server_entry("notes")]))
            .await;
        client.send(&prompt(2, "call hang")).await;
        client.skip_echo("call hang").await;
        let _announced = client.recv().await;
        client
            .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "in_progress"}))
            .await;
        wait_for_seen(&seen, "notes", "tools/call").await;
        client
            .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"demo-session-1"}}"#)
            .await;
        client
            .expect_update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "demo-tool-1", "status": "failed"}))
            .await;
        client
            .expect(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}"#)
            .await;
        wait_for_seen(&seen, "notes", "notifications/cancelled").await;
        client.expect_quiet().await;
        client.close().await;
    }

    #[tokio::test]
    async fn without_stdio_servers_the_agent_says_no_server_offers_the_tool() {
        let mut client = RawClient::start();
        client
            .open_session_with_servers(json!([{"type": "acp", "name": "notes", "id": "n-1"}]))
            .await;
        client.send(&prompt(2, "remember the milk")).await;
        client.skip_echo("remember the milk").await;
        client
            .expect(&chunk("I cannot do that: no MCP server offers a `remember` tool (this session has no stdio MCP servers).\n"))
            .await;
        client.expect_end_turn(2).await;
        client.send(&prompt(3, "list tools")).await;
        client.skip_echo("list tools").await;
        client
            .expect(&chunk("This session has no stdio MCP servers.\n"))
            .await;
        client.expect_end_turn(3).await;
        client.close().await;
    }

    fn call(tool: &str, arguments: Value) -> Option<ToolIntent> {
        Some(ToolIntent::Call {
            tool: tool.to_owned(),
            arguments,
        })
    }

    fn remember(note: &str) -> Option<ToolIntent> {
        call("remember", json!({ "note": note }))
    }

    #[test]
    fn tool_intent_rules() {
        // remember <text> / remember that <text>
        assert_eq!(tool_intent("remember the milk"), remember("the milk"));
        assert_eq!(
            tool_intent("Remember that the build uses nextest."),
            remember("the build uses nextest.")
        );
        assert_eq!(tool_intent("REMEMBER THAT x"), remember("x"));
        assert_eq!(tool_intent("remember thatcher"), remember("thatcher"));
        assert_eq!(tool_intent("remember that"), remember("that"));
        assert_eq!(
            tool_intent("  please remember: buy milk  "),
            remember("buy milk")
        );
        assert_eq!(tool_intent("Please, remember it\nall"), remember("it\nall"));
        assert_eq!(tool_intent("please\nremember\tthat  x"), remember("x"));
        assert_eq!(tool_intent("remember"), None);
        assert_eq!(tool_intent("remember?"), None);
        assert_eq!(tool_intent("remembering things"), None);
        assert_eq!(tool_intent("I remember it"), None);

        // recall
        let recall = call("recall", json!({}));
        for text in [
            "what do you recall",
            "What do you recall?",
            "what   do you\nremember",
            "What do you remember about me",
            "recall",
            "RECALL everything",
            "please recall",
        ] {
            assert_eq!(tool_intent(text), recall, "{text:?}");
        }
        assert_eq!(tool_intent("recalled"), None);
        assert_eq!(tool_intent("what do you think"), None);
        assert_eq!(tool_intent("what do you remembers"), None);

        // forget <n> / forget note <n>
        let forget = |n: u64| call("forget", json!({ "number": n }));
        assert_eq!(tool_intent("forget 2"), forget(2));
        assert_eq!(tool_intent("Forget note 3"), forget(3));
        assert_eq!(tool_intent("forget note #4."), forget(4));
        assert_eq!(tool_intent("forget #1 please"), forget(1));
        assert_eq!(tool_intent("forget it"), None);
        assert_eq!(tool_intent("forget note"), None);
        assert_eq!(tool_intent("forget -1"), None);
        assert_eq!(tool_intent("forgetting 2"), None);

        // use tool <name> [json] / call <name> [json]
        assert_eq!(
            tool_intent(r#"use tool remember {"note": "x"}"#),
            remember("x")
        );
        assert_eq!(tool_intent("call recall"), recall);
        assert_eq!(tool_intent("CALL `recall`"), recall);
        assert_eq!(tool_intent(r#"call remember{"note":"y"}"#), remember("y"));
        assert_eq!(
            tool_intent("use tool t `{\"a\": 1}`"),
            call("t", json!({"a": 1}))
        );
        assert_eq!(
            tool_intent("use tool my-tool.v2 {}"),
            call("my-tool.v2", json!({}))
        );
        assert_eq!(
            tool_intent("call t [1]"),
            Some(ToolIntent::BadArguments {
                tool: "t".into(),
                problem: "got [1]".into()
            })
        );
        let Some(ToolIntent::BadArguments { tool, problem }) = tool_intent("call t {oops") else {
            panic!("not refused")
        };
        assert_eq!(tool, "t");
        assert!(problem.contains("line 1"), "{problem}");
        assert_eq!(tool_intent("call"), None);
        assert_eq!(tool_intent("call  "), None);
        assert_eq!(tool_intent("use tools x"), None);
        assert_eq!(tool_intent("caller t"), None);

        // list tools / what tools
        for text in ["list tools", "List Tools please", "What tools do you have?"] {
            assert_eq!(tool_intent(text), Some(ToolIntent::List), "{text:?}");
        }
        assert_eq!(tool_intent("list the tools"), None);
        assert_eq!(tool_intent("listing tools"), None);

        // The first rule that matches wins.
        assert_eq!(
            tool_intent("remember to call recall"),
            remember("to call recall")
        );
        assert_eq!(tool_intent("recall what tools"), recall);
        assert_eq!(
            tool_intent("call forget 2"),
            Some(ToolIntent::BadArguments {
                tool: "forget".into(),
                problem: "got 2".into()
            })
        );

        // What the demo did before stays as it was.
        for text in [
            "",
            "  ",
            "hello",
            "please write it",
            "read notes.md",
            "go slow",
            "Permission?",
        ] {
            assert_eq!(tool_intent(text), None, "{text:?}");
        }
    }

    #[test]
    fn tool_intent_comes_from_the_first_text_block_that_asks() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let resource =
            json!({"type": "resource", "resource": {"uri": "file:///r", "text": "recall"}});
        assert_eq!(
            prompt_tool_intent(&[text("some context"), text("list tools"), text("recall")]),
            Some(ToolIntent::List)
        );
        assert_eq!(prompt_tool_intent(std::slice::from_ref(&resource)), None);
        assert_eq!(
            prompt_tool_intent(&[resource, text("forget 1")]),
            call("forget", json!({"number": 1}))
        );
        assert_eq!(prompt_tool_intent(&[]), None);
    }

    #[test]
    fn read_target_finds_the_word_after_read() {
        assert_eq!(read_target("please READ ./a.txt."), Some("./a.txt".into()));
        assert_eq!(read_target("read `/x y`"), Some("/x".into()));
        assert_eq!(read_target("already done, I've read"), None);
        assert_eq!(read_target("nothing here"), None);
    }
}
