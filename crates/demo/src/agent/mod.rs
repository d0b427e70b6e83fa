//! The demo agent (`acp-demo-agent`, what `[agent] builtin = "demo"` runs): a scripted ACP agent
//! that shows what it received, so a chain can be tried with no real agent. Must not know about
//! proxies or the conductor: it serves one ACP connection on whatever streams it is given.
//!
//! One connection is one [`serve`] call. The read loop owns the connection's state and answers
//! requests; a prompt turn runs as its own task ([`turn`]) so the loop keeps reading the client's
//! `session/cancel`, `$/cancel_request` and the answers to the turn's own requests. Every line
//! goes through one [`LineWriter`] queue to one writer, so a turn's updates always precede its
//! response.
//!
//! What a prompt makes it do, read from the user's text blocks (context a proxy added, as
//! resources or as `<context source=...>` text, does not count):
//! it always shows a plan and echoes every block; then, if a text block asks for an MCP tool
//! (the rules are in [`intent`]), it does only that; otherwise "slow" ticks, "write"/"permission"
//! asks permission for a write it never does, and "read <path>" reads a line through the client.
//! A client that advertised plans gets the checklist as plan operations (sent again, all done, at
//! the end of the turn) and, for a prompt that mentions "plan", an outline removed as the turn
//! ends ([`turn_plan`]); any other client gets the plain `plan` update, at the start and again,
//! all done, at the end.
//!
//! MCP tools come from the session's stdio `mcpServers` (the only kind it launches; it does not
//! advertise `mcpCapabilities.acp`, so MCP-over-ACP servers must reach it as stdio ones), started
//! on first use by [`crate::mcp_servers`]. `list tools` is answered as `server: tool1, tool2`,
//! one line per server. A call goes to the first server (in `mcpServers` order) whose
//! `tools/list` names the tool, streamed as a `tool_call` (`kind` "other", `pending`), a
//! `tool_call_update` `in_progress`, then one `completed` or `failed` with the tool's text, and a
//! message saying the outcome. When no server offers the tool, or the server fails, the message
//! says so and the turn still ends normally.

mod intent;
mod line_writer;
mod session_ids;
#[cfg(test)]
mod tests;
mod turn;
mod turn_plan;

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use acp_wire::error_code;
use acp_wire::frame::DEFAULT_MAX_LINE;
use acp_wire::{Envelope, FrameError, IdKey, LineDecoder, Outcome, OutgoingRequests, RawValue};
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{Mutex as AsyncMutex, oneshot, watch};
use tokio::task::JoinSet;

use crate::mcp_servers::{self as mcp, Launcher, SessionServers, StdioServer};
use line_writer::{LineWriter, WriterGone, write_lines};
use session_ids::SessionIds;
use turn::Turn;

/// The only ACP major version this agent speaks.
const PROTOCOL_VERSION: u64 = 1;
/// Lines waiting for the writer; a client that stops reading eventually stalls the agent.
const LINE_QUEUE_CAPACITY: usize = 64;

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
    let (writer, queue) = LineWriter::new(LINE_QUEUE_CAPACITY);
    let connection = Connection::new(writer, launcher);
    let (read, written) = tokio::join!(connection.run(input), write_lines(output, queue));
    read.and(written)
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

/// Requests the agent sent to the client and is waiting on, each with where its answer goes.
/// Shared because turns register requests while the read loop delivers the answers.
type SharedRequests = Arc<Mutex<OutgoingRequests<oneshot::Sender<Reply>>>>;

fn lock(requests: &SharedRequests) -> MutexGuard<'_, OutgoingRequests<oneshot::Sender<Reply>>> {
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
    writer: LineWriter,
    client_reads_files: bool,
    client_shows_plans: bool,
    sessions: HashMap<String, Session>,
    session_ids: SessionIds,
    turns_started: u64,
    requests_to_client: SharedRequests,
    turns: JoinSet<()>,
    launcher: Launcher,
}

impl Connection {
    fn new(writer: LineWriter, launcher: Launcher) -> Self {
        Connection {
            writer,
            launcher,
            client_reads_files: false,
            client_shows_plans: false,
            sessions: HashMap::new(),
            session_ids: SessionIds::new(),
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
                () = self.writer.closed() => break Ok(()),
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
                return self.writer.respond_error("null", &error).await;
            }
        };
        match acp_wire::parse(&line) {
            Ok(Envelope::Request { id, method, params }) => {
                let params = params_value(params);
                match self.handle_request(id, method, &params) {
                    Ok(Some(result)) => self.writer.respond(id, &result).await,
                    // A turn task owns the answer.
                    Ok(None) => Ok(()),
                    Err(error) => self.writer.respond_error(id.get(), &error).await,
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
                self.writer.respond_error(invalid.reply_id(), &error).await
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
        self.client_shows_plans = turn_plan::client_shows_plans(params);
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
        let session_id = self.session_ids.next();
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
            writer: self.writer.clone(),
            requests_to_client: self.requests_to_client.clone(),
            session_id: session_id.to_owned(),
            cwd: session.cwd.clone(),
            client_reads_files: self.client_reads_files,
            client_shows_plans: self.client_shows_plans,
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
        let waiting = lock(&self.requests_to_client).complete_raw(id);
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
