//! The built-in demo agent (`[agent] builtin = "demo"`): a scripted ACP agent that shows what it
//! received, so a chain can be tried with no real agent. Must not know about proxies or real stdio.
//!
//! One connection is one [`serve`] call. The read loop owns the connection's state and answers
//! requests; a prompt turn runs as its own task so the loop keeps reading the client's
//! `session/cancel`, `$/cancel_request` and the answers to the turn's own requests. Every line
//! goes through one queue to one writer, so a turn's updates always precede its response.

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
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

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
    let (lines, queue) = mpsc::channel(OUTBOX_CAPACITY);
    let connection = Connection::new(Outbox { lines });
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
}

impl Connection {
    fn new(outbox: Outbox) -> Self {
        Connection {
            outbox,
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
        self.sessions
            .insert(session_id.clone(), Session { cwd, turn: None });
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
            tool_call_id: format!("demo-write-{}", self.turns_started),
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
    tool_call_id: String,
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
        self.update(json!({
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Show what the prompt contained", "priority": "high", "status": "in_progress"},
                {"content": "Carry out a requested write or read", "priority": "medium", "status": "pending"},
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
            "toolCallId": self.tool_call_id,
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
                self.report(self.tool_call_status("failed")).await;
                return Err(Cancelled);
            }
        };
        if granted {
            self.report(self.tool_call_status("completed")).await;
            self.say("Permission granted: I would write demo.txt (the demo agent never touches your files).\n")
                .await
        } else {
            self.report(self.tool_call_status("failed")).await;
            self.say("Permission denied: demo.txt was not written.\n")
                .await
        }
    }

    fn tool_call_status(&self, status: &str) -> Value {
        json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": self.tool_call_id,
            "status": status,
        })
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
            let (client, agent) = tokio::io::duplex(64 * 1024);
            let (agent_in, agent_out) = tokio::io::split(agent);
            let agent = tokio::spawn(serve(agent_in, agent_out));
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

    #[test]
    fn read_target_finds_the_word_after_read() {
        assert_eq!(read_target("please READ ./a.txt."), Some("./a.txt".into()));
        assert_eq!(read_target("read `/x y`"), Some("/x".into()));
        assert_eq!(read_target("already done, I've read"), None);
        assert_eq!(read_target("nothing here"), None);
    }
}
