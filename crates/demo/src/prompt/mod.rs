//! The editor side of one ACP connection, for humans (`acp-prompt`, `acp-conductor prompt`): sends
//! prompts and writes a readable transcript. Must not know what answers it (an agent, a chain, the demo).
//!
//! The client is strictly sequential: it sends one request, then handles whatever the agent
//! sends (updates, permission and file requests) until that request's answer arrives.
//! [`conductor`] runs it against a conductor started as a child process.

pub mod conductor;
mod plans;
mod transcript;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use acp_wire::encode::{self, Call};
use acp_wire::error_code;
use acp_wire::frame::DEFAULT_MAX_LINE;
use acp_wire::{Envelope, FrameError, LineDecoder, Outcome, OutgoingRequests, RawValue};
use anyhow::Context as _;
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use transcript::Transcript;

/// The only ACP major version this client speaks.
const PROTOCOL_VERSION: u64 = 1;

/// How the client answers the agent's `session/request_permission`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Pick the first `allow_*` option.
    Allow,
    /// Pick the first `reject_*` option.
    Deny,
}

/// What to ask, where, and how to answer permission requests.
#[derive(Clone, Debug)]
pub struct PromptOptions {
    /// The prompts, sent one after another in one session.
    pub prompts: Vec<String>,
    /// Working directory of the session; made absolute against the process's current directory.
    pub cwd: PathBuf,
    pub permissions: PermissionPolicy,
}

/// The agent answered one of the client's requests with a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentError {
    /// The request that failed (`initialize`, `session/new`, `session/prompt`).
    pub method: String,
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed: {} (JSON-RPC error {})",
            self.method, self.message, self.code
        )?;
        if let Some(data) = &self.data {
            write!(f, "; data: {data}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AgentError {}

/// Plays the editor over one ACP connection: initialize, session/new in `cwd`, then each
/// prompt as a session/prompt, the next once the previous turn ended. Writes a readable
/// transcript to `out`; returns the first stopReason other than `end_turn`, else `end_turn`.
///
/// An error answer to any of the three requests is returned as an [`AgentError`] inside the
/// `anyhow::Error`.
pub async fn run<R, W, O>(
    from_agent: R,
    to_agent: W,
    opts: &PromptOptions,
    out: &mut O,
) -> anyhow::Result<String>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    O: Write,
{
    let cwd = std::path::absolute(&opts.cwd)
        .with_context(|| format!("cannot make {} absolute", opts.cwd.display()))?;
    let mut editor = Editor {
        from_agent: FrameReader::new(from_agent),
        to_agent,
        requests: OutgoingRequests::new(),
        permissions: opts.permissions,
        transcript: Transcript::new(out),
    };
    let initialized = editor
        .call(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": true, "writeTextFile": false},
                    "terminal": false,
                    // `plan_update` and `plan_removed` are shown (plans.rs).
                    "plan": {},
                },
                "clientInfo": {"name": "acp-conductor prompt", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .await?;
    if initialized["protocolVersion"].as_u64() != Some(PROTOCOL_VERSION) {
        anyhow::bail!(
            "the agent speaks ACP protocol version {}; this client speaks version {PROTOCOL_VERSION}",
            initialized["protocolVersion"]
        );
    }
    let session = editor
        .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .await?;
    let session_id = session["sessionId"]
        .as_str()
        .context("the agent answered session/new without a sessionId")?
        .to_owned();
    let mut outcome = "end_turn".to_owned();
    for (i, text) in opts.prompts.iter().enumerate() {
        if i > 0 {
            editor.transcript.line(&format!("[prompt] {text}"))?;
        }
        let answer = editor
            .call(
                "session/prompt",
                json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}),
            )
            .await?;
        let stop_reason = answer["stopReason"]
            .as_str()
            .context("the agent answered session/prompt without a stopReason")?
            .to_owned();
        editor.transcript.line(&format!("[stop] {stop_reason}"))?;
        if stop_reason != "end_turn" {
            outcome = stop_reason;
            break;
        }
    }
    Ok(outcome)
}

/// Lines from the agent, `\n` or `\r\n` terminated.
struct FrameReader<R> {
    input: R,
    decoder: LineDecoder,
    buf: BytesMut,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    fn new(input: R) -> Self {
        FrameReader {
            input,
            decoder: LineDecoder::new(DEFAULT_MAX_LINE),
            buf: BytesMut::with_capacity(8 * 1024),
            eof: false,
        }
    }

    /// The next frame, or `None` at end of stream.
    async fn next(&mut self) -> io::Result<Option<Result<Bytes, FrameError>>> {
        loop {
            let frame = if self.eof {
                self.decoder.decode_eof(&mut self.buf)
            } else {
                self.decoder.decode(&mut self.buf)
            };
            if frame.is_some() || self.eof {
                return Ok(frame);
            }
            if self.input.read_buf(&mut self.buf).await? == 0 {
                self.eof = true;
            }
        }
    }
}

struct Editor<'o, R, W, O> {
    from_agent: FrameReader<R>,
    to_agent: W,
    /// The request sent and not yet answered (one at a time), with its method.
    requests: OutgoingRequests<String>,
    permissions: PermissionPolicy,
    transcript: Transcript<'o, O>,
}

/// A JSON-RPC error this client answers the agent with.
struct RpcError {
    code: i64,
    message: String,
}

impl<R, W, O> Editor<'_, R, W, O>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    O: Write,
{
    /// Sends a request and serves the agent until its answer arrives.
    async fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.requests.register(method.to_owned());
        let params = raw(&params);
        let mut line = Vec::new();
        let call = Call::Plain {
            method,
            params: Some(&params),
        };
        encode::call(&mut line, Some(&id.to_string()), call);
        self.send(line)
            .await
            .with_context(|| format!("sending {method} to the agent"))?;
        loop {
            let frame = self
                .from_agent
                .next()
                .await
                .context("reading from the agent")?
                .with_context(|| {
                    format!("the agent closed the connection before answering {method}")
                })?;
            let line = match frame {
                Ok(line) => line,
                Err(e) => {
                    tracing::warn!("skipping a message from the agent: {e}");
                    continue;
                }
            };
            match acp_wire::parse(&line) {
                Ok(Envelope::Response {
                    id: answered,
                    outcome,
                }) => {
                    if self.requests.complete_raw(answered).is_none() {
                        tracing::warn!("ignoring an answer to unknown request {}", answered.get());
                        continue;
                    }
                    return match outcome {
                        Outcome::Result(result) => Ok(serde_json::from_str(result.get())?),
                        Outcome::Error(error) => Err(agent_error(method, error).into()),
                    };
                }
                Ok(Envelope::Request {
                    id: request_id,
                    method: requested,
                    params,
                }) => {
                    let params = params_value(params);
                    let answer = self.answer(requested, &params).await?;
                    let mut line = Vec::new();
                    match answer {
                        Ok(result) => {
                            let result = raw(&result);
                            encode::response(&mut line, request_id.get(), Outcome::Result(&result));
                        }
                        Err(e) => {
                            encode::error_response(
                                &mut line,
                                request_id.get(),
                                e.code,
                                &e.message,
                                None,
                            );
                        }
                    }
                    self.send(line)
                        .await
                        .with_context(|| format!("answering the agent's {requested}"))?;
                }
                Ok(Envelope::Notification {
                    method: "session/update",
                    params,
                }) => self.transcript.update(&params_value(params)["update"])?,
                // `$/cancel_request` included: every request is answered before the next
                // message is read, so there is never anything left to cancel.
                Ok(Envelope::Notification { .. }) => {}
                Err(invalid) => tracing::warn!("skipping a message from the agent: {invalid}"),
            }
        }
    }

    async fn send(&mut self, mut line: Vec<u8>) -> io::Result<()> {
        line.push(b'\n');
        self.to_agent.write_all(&line).await?;
        self.to_agent.flush().await
    }

    /// The answer to one of the agent's requests. The outer error is a transcript write failure.
    async fn answer(
        &mut self,
        method: &str,
        params: &Value,
    ) -> io::Result<Result<Value, RpcError>> {
        match method {
            "session/request_permission" => self.permission(params).map(Ok),
            "fs/read_text_file" => self.read_text_file(params).await,
            _ => {
                self.transcript.line(&format!(
                    "[request] {method} refused: not supported by this client"
                ))?;
                Ok(Err(RpcError {
                    code: error_code::METHOD_NOT_FOUND,
                    message: format!("method not found: {method}"),
                }))
            }
        }
    }

    fn permission(&mut self, params: &Value) -> io::Result<Value> {
        let tool_call = &params["toolCall"];
        let title = tool_call["title"]
            .as_str()
            .or_else(|| tool_call["toolCallId"].as_str())
            .unwrap_or("tool call");
        let options = params["options"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let (verdict, outcome) = match choose_option(self.permissions, options) {
            Some(option) => {
                let kind = option["kind"].as_str().unwrap_or_default();
                let verdict = match self.permissions {
                    PermissionPolicy::Allow => format!("allowed ({kind})"),
                    PermissionPolicy::Deny => format!("denied ({kind})"),
                };
                let outcome = json!({"outcome": "selected", "optionId": option["optionId"]});
                (verdict, outcome)
            }
            None => {
                let wanted = match self.permissions {
                    PermissionPolicy::Allow => "allow",
                    PermissionPolicy::Deny => "reject",
                };
                let verdict = format!("cancelled (no {wanted} option offered)");
                (verdict, json!({"outcome": "cancelled"}))
            }
        };
        self.transcript
            .line(&format!("[permission] {title}: {verdict}"))?;
        Ok(json!({ "outcome": outcome }))
    }

    async fn read_text_file(&mut self, params: &Value) -> io::Result<Result<Value, RpcError>> {
        let Some(path) = params["path"]
            .as_str()
            .map(Path::new)
            .filter(|p| p.is_absolute())
        else {
            return Ok(Err(RpcError {
                code: error_code::INVALID_PARAMS,
                message: "fs/read_text_file needs path, an absolute path".to_owned(),
            }));
        };
        let owned = path.to_owned();
        // The runtime has no `fs` feature; a file read is a blocking call like any other.
        let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(owned))
            .await
            .unwrap_or_else(|e| Err(io::Error::other(e)));
        match read {
            Ok(content) => {
                self.transcript
                    .line(&format!("[fs] read {}", path.display()))?;
                let content =
                    select_lines(&content, params["line"].as_u64(), params["limit"].as_u64());
                Ok(Ok(json!({ "content": content })))
            }
            Err(e) => {
                let message = format!("cannot read {}: {e}", path.display());
                self.transcript.line(&format!("[fs] {message}"))?;
                Ok(Err(RpcError {
                    code: error_code::INTERNAL_ERROR,
                    message,
                }))
            }
        }
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a serde_json::Value always serializes")
}

fn params_value(params: Option<&RawValue>) -> Value {
    // The envelope parser already checked the line is JSON.
    params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

fn agent_error(method: &str, error: &RawValue) -> AgentError {
    let error: Value = serde_json::from_str(error.get()).unwrap_or_default();
    AgentError {
        method: method.to_owned(),
        code: error["code"].as_i64().unwrap_or_default(),
        message: error["message"]
            .as_str()
            .unwrap_or("(no message)")
            .to_owned(),
        data: error.get("data").cloned(),
    }
}

/// The option the policy picks: the first `allow_*` (Allow) or `reject_*` (Deny) kind.
fn choose_option(policy: PermissionPolicy, options: &[Value]) -> Option<&Value> {
    let prefix = match policy {
        PermissionPolicy::Allow => "allow_",
        PermissionPolicy::Deny => "reject_",
    };
    options.iter().find(|option| {
        option["kind"]
            .as_str()
            .is_some_and(|k| k.starts_with(prefix))
    })
}

/// `limit` lines from 1-based line `line` on, line endings kept.
fn select_lines(content: &str, line: Option<u64>, limit: Option<u64>) -> String {
    let skip = usize::try_from(line.unwrap_or(1).saturating_sub(1)).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    content
        .split_inclusive('\n')
        .skip(skip)
        .take(take)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent;
    use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

    /// Runs the client against the demo agent; returns the stop reason and the transcript.
    async fn with_demo_agent(
        text: &str,
        cwd: &Path,
        permissions: PermissionPolicy,
    ) -> (String, String) {
        let (client, agent) = tokio::io::duplex(64 * 1024);
        let (agent_in, agent_out) = tokio::io::split(agent);
        let agent = tokio::spawn(agent::serve(agent_in, agent_out));
        let (from_agent, to_agent) = tokio::io::split(client);
        let opts = PromptOptions {
            prompts: vec![text.to_owned()],
            cwd: cwd.to_owned(),
            permissions,
        };
        let mut transcript = Vec::new();
        let stop = run(from_agent, to_agent, &opts, &mut transcript)
            .await
            .unwrap();
        // `run` dropped its end of the pipe: the agent sees EOF and ends cleanly.
        agent.await.unwrap().unwrap();
        (stop, String::from_utf8(transcript).unwrap())
    }

    /// The demo agent's checklist as the client shows it at the start of a turn.
    const PLAN: &str = "[plan demo-checklist] checklist (new)\n\
                        [plan demo-checklist] - [~] Show what the prompt contained (high)\n\
                        [plan demo-checklist] - [ ] Carry out a requested write or read (medium)\n";
    /// The checklist at the end of the turn.
    const DONE: &str = "[plan demo-checklist] checklist (updated)\n\
                        [plan demo-checklist] - [x] Show what the prompt contained (high)\n\
                        [plan demo-checklist] - [x] Carry out a requested write or read (medium)\n";

    #[tokio::test]
    async fn plain_prompt_transcript_shows_the_quoted_prompt() {
        let (stop, transcript) =
            with_demo_agent("hello\nthere", Path::new("/tmp"), PermissionPolicy::Allow).await;
        assert_eq!(stop, "end_turn");
        assert_eq!(
            transcript,
            format!(
                "{PLAN}Demo agent here. I received 1 content block(s):\n> hello\n> there\n\
                 {DONE}[stop] end_turn\n"
            )
        );
    }

    #[tokio::test]
    async fn allow_policy_grants_the_demo_write() {
        let (stop, transcript) =
            with_demo_agent("please write", Path::new("/tmp"), PermissionPolicy::Allow).await;
        assert_eq!(stop, "end_turn");
        assert_eq!(
            transcript,
            format!(
                "{PLAN}Demo agent here. I received 1 content block(s):\n> please write\n\
                 [tool] Write demo.txt (edit) pending\n\
                 [permission] Write demo.txt: allowed (allow_once)\n\
                 [tool] demo-write-1 -> completed\n\
                 Permission granted: I would write demo.txt (the demo agent never touches your files).\n\
                 {DONE}[stop] end_turn\n"
            )
        );
    }

    #[tokio::test]
    async fn deny_policy_fails_the_demo_write() {
        let (stop, transcript) = with_demo_agent(
            "permission please",
            Path::new("/tmp"),
            PermissionPolicy::Deny,
        )
        .await;
        assert_eq!(stop, "end_turn");
        assert_eq!(
            transcript,
            format!(
                "{PLAN}Demo agent here. I received 1 content block(s):\n> permission please\n\
                 [tool] Write demo.txt (edit) pending\n\
                 [permission] Write demo.txt: denied (reject_once)\n\
                 [tool] demo-write-1 -> failed\n\
                 Permission denied: demo.txt was not written.\n\
                 {DONE}[stop] end_turn\n"
            )
        );
    }

    #[tokio::test]
    async fn a_prompt_about_a_plan_shows_the_outline_and_its_removal() {
        let (stop, transcript) = with_demo_agent(
            "Plan it, then write it",
            Path::new("/tmp"),
            PermissionPolicy::Deny,
        )
        .await;
        assert_eq!(stop, "end_turn");
        assert_eq!(
            transcript,
            format!(
                "{PLAN}[plan demo-outline] markdown (new)\n\
                 [plan demo-outline] | # Plan for turn 1\n\
                 [plan demo-outline] |\n\
                 [plan demo-outline] | 1. Show back the 1 content block(s) received\n\
                 [plan demo-outline] | 2. Ask permission to write demo.txt (never written)\n\
                 [plan demo-outline] | 3. End the turn\n\
                 Demo agent here. I received 1 content block(s):\n> Plan it, then write it\n\
                 [tool] Write demo.txt (edit) pending\n\
                 [permission] Write demo.txt: denied (reject_once)\n\
                 [tool] demo-write-1 -> failed\n\
                 Permission denied: demo.txt was not written.\n\
                 {DONE}[plan demo-outline] removed (a markdown plan); still shown: demo-checklist\n\
                 [stop] end_turn\n"
            )
        );
    }

    /// A directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("acp-prompt-client-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[tokio::test]
    async fn read_prompt_is_served_from_disk() {
        let dir = TempDir::new("read");
        std::fs::write(dir.0.join("notes.txt"), "alpha\nbeta\n").unwrap();
        let (stop, transcript) =
            with_demo_agent("read notes.txt", &dir.0, PermissionPolicy::Deny).await;
        let path = dir.0.join("notes.txt");
        assert_eq!(stop, "end_turn");
        assert_eq!(
            transcript,
            format!(
                "{PLAN}Demo agent here. I received 1 content block(s):\n> read notes.txt\n\
                 [fs] read {path}\n\
                 First line of {path}: alpha\n\
                 {DONE}[stop] end_turn\n",
                path = path.display()
            )
        );

        let (_, transcript) =
            with_demo_agent("read missing.txt", &dir.0, PermissionPolicy::Deny).await;
        let missing = dir.0.join("missing.txt");
        assert!(
            transcript.contains(&format!(
                "Could not read {0}: cannot read {0}: No such file or directory",
                missing.display()
            )),
            "{transcript}"
        );
    }

    #[test]
    fn select_lines_honours_line_and_limit() {
        let content = "one\ntwo\nthree";
        assert_eq!(select_lines(content, None, None), content);
        assert_eq!(select_lines(content, Some(2), None), "two\nthree");
        assert_eq!(select_lines(content, Some(1), Some(2)), "one\ntwo\n");
        assert_eq!(select_lines(content, Some(0), Some(1)), "one\n");
        assert_eq!(select_lines(content, Some(9), Some(1)), "");
        assert_eq!(select_lines(content, None, Some(0)), "");
    }

    /// The agent's end of a connection to a client under test, driven with raw lines.
    struct ScriptedAgent {
        from_client: Lines<BufReader<ReadHalf<DuplexStream>>>,
        to_client: WriteHalf<DuplexStream>,
    }

    impl ScriptedAgent {
        async fn expect(&mut self, expected: &str) {
            let line = self.from_client.next_line().await.unwrap().unwrap();
            assert_eq!(line, expected);
        }

        async fn expect_method(&mut self, method: &str) {
            let line = self.from_client.next_line().await.unwrap().unwrap();
            assert!(line.contains(&format!(r#""method":"{method}""#)), "{line}");
        }

        async fn send(&mut self, line: &str) {
            self.to_client.write_all(line.as_bytes()).await.unwrap();
            self.to_client.write_all(b"\r\n").await.unwrap();
        }

        /// Answers initialize and session/new as a well-behaved agent does.
        async fn set_up_session(&mut self) {
            self.expect_method("initialize").await;
            self.send(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#)
                .await;
            self.expect(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
                .await;
            self.send(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}"#)
                .await;
            self.expect(r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}"#)
                .await;
        }
    }

    /// Runs the client (prompt "hi" in /tmp) against `script`.
    async fn with_scripted_agent<F, Fut>(
        permissions: PermissionPolicy,
        script: F,
    ) -> (anyhow::Result<String>, String)
    where
        F: FnOnce(ScriptedAgent) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (client, agent) = tokio::io::duplex(64 * 1024);
        let (from_client, to_client) = tokio::io::split(agent);
        let agent = tokio::spawn(script(ScriptedAgent {
            from_client: BufReader::new(from_client).lines(),
            to_client,
        }));
        let (from_agent, to_agent) = tokio::io::split(client);
        let opts = PromptOptions {
            prompts: vec!["hi".to_owned()],
            cwd: PathBuf::from("/tmp"),
            permissions,
        };
        let mut transcript = Vec::new();
        let result = run(from_agent, to_agent, &opts, &mut transcript).await;
        agent.await.unwrap();
        (result, String::from_utf8(transcript).unwrap())
    }

    #[tokio::test]
    async fn initialize_request_and_error_answer() {
        let (result, _) = with_scripted_agent(PermissionPolicy::Allow, |mut agent| async move {
            agent
                .expect(&format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{"fs":{{"readTextFile":true,"writeTextFile":false}},"terminal":false,"plan":{{}}}},"clientInfo":{{"name":"acp-conductor prompt","version":"{}"}}}}}}"#,
                    env!("CARGO_PKG_VERSION")
                ))
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"agent failed to start","data":{"stderr":"boom"}}}"#)
                .await;
        })
        .await;
        let error = result.unwrap_err();
        let agent_error = error.downcast_ref::<AgentError>().expect("an AgentError");
        assert_eq!(
            agent_error,
            &AgentError {
                method: "initialize".into(),
                code: -32001,
                message: "agent failed to start".into(),
                data: Some(json!({"stderr": "boom"})),
            }
        );
        assert_eq!(
            error.to_string(),
            r#"initialize failed: agent failed to start (JSON-RPC error -32001); data: {"stderr":"boom"}"#
        );
    }

    #[tokio::test]
    async fn unsupported_requests_are_refused_and_unknown_notifications_ignored() {
        let (result, transcript) = with_scripted_agent(PermissionPolicy::Allow, |mut agent| async move {
            agent.set_up_session().await;
            agent
                .send(r#"{"jsonrpc":"2.0","method":"vendor/ping","params":{}}"#)
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":"t1","method":"terminal/create","params":{"sessionId":"s","command":"ls"}}"#)
                .await;
            agent
                .expect(r#"{"jsonrpc":"2.0","id":"t1","error":{"code":-32601,"message":"method not found: terminal/create"}}"#)
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":9,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/tmp/x","content":""}}"#)
                .await;
            agent
                .expect(r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"method not found: fs/write_text_file"}}"#)
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"refusal"}}"#)
                .await;
        })
        .await;
        assert_eq!(result.unwrap(), "refusal");
        assert_eq!(
            transcript,
            "[request] terminal/create refused: not supported by this client\n\
             [request] fs/write_text_file refused: not supported by this client\n\
             [stop] refusal\n"
        );
    }

    #[tokio::test]
    async fn permission_without_a_matching_option_is_cancelled() {
        let (result, transcript) = with_scripted_agent(PermissionPolicy::Deny, |mut agent| async move {
            agent.set_up_session().await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_always"}]}}"#)
                .await;
            agent
                .expect(r#"{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"cancelled"}}}"#)
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c2","title":"Run rm"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"never","name":"Never","kind":"reject_always"}]}}"#)
                .await;
            agent
                .expect(r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"never"}}}"#)
                .await;
            agent
                .send(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
                .await;
        })
        .await;
        assert_eq!(result.unwrap(), "end_turn");
        assert_eq!(
            transcript,
            "[permission] c1: cancelled (no reject option offered)\n\
             [permission] Run rm: denied (reject_always)\n\
             [stop] end_turn\n"
        );
    }

    #[tokio::test]
    async fn streamed_text_thoughts_and_other_updates_read_well() {
        let (result, transcript) = with_scripted_agent(PermissionPolicy::Allow, |mut agent| async move {
            agent.set_up_session().await;
            for update in [
                r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm, "}}"#,
                r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"let me see"}}"#,
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hel"}}"#,
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo"}}"#,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[]}"#,
                r#"{"sessionUpdate":"current_mode_update","currentModeId":"code"}"#,
                r#"{"sessionUpdate":"usage_update","used":1,"size":2}"#,
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}"#,
            ] {
                agent
                    .send(&format!(
                        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
                    ))
                    .await;
            }
            agent
                .send(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens"}}"#)
                .await;
        })
        .await;
        assert_eq!(result.unwrap(), "max_tokens");
        assert_eq!(
            transcript,
            "(thinking) hmm, let me see\nHello\n[tool] c1 updated\n[mode] code\n[update] usage_update\ndone\n[stop] max_tokens\n"
        );
    }

    #[tokio::test]
    async fn plan_operations_of_every_spelling_read_well_between_streamed_text() {
        let (result, transcript) = with_scripted_agent(PermissionPolicy::Allow, |mut agent| async move {
            agent.set_up_session().await;
            for update in [
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me "}}"#,
                r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"Step 1","priority":"high","status":"pending"}]}}"#,
                r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"plan."}}"#,
                r###"{"sessionUpdate":"plan_update","plan":{"type":"markdown","id":"p2","content":"## Steps\n- [ ] Refactor module"}}"###,
                r#"{"sessionUpdate":"plan_update","plan":{"type":"file","id":"p3","uri":"https://example.com/plan.md"}}"#,
                r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p2","entries":[]}}"#,
                r#"{"sessionUpdate":"plan_removed","id":"p1"}"#,
                r#"{"sessionUpdate":"plan_removed","planId":"p3"}"#,
                r#"{"sessionUpdate":"plan","entries":[{"content":"Plain","priority":"low","status":"completed"}]}"#,
            ] {
                agent
                    .send(&format!(
                        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
                    ))
                    .await;
            }
            agent
                .send(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#)
                .await;
        })
        .await;
        assert_eq!(result.unwrap(), "end_turn");
        assert_eq!(
            transcript,
            "Let me \n\
             [plan p1] checklist (new)\n\
             [plan p1] - [ ] Step 1 (high)\n\
             plan.\n\
             [plan p2] markdown (new)\n\
             [plan p2] | ## Steps\n\
             [plan p2] | - [ ] Refactor module\n\
             [plan p3] file (new): https://example.com/plan.md, not a local file\n\
             [plan p2] checklist (replaces a markdown plan), empty\n\
             [plan p1] removed (a checklist); still shown: p2, p3\n\
             [plan p3] removed (a file plan); still shown: p2\n\
             [plan] - [x] Plain (low)\n\
             [stop] end_turn\n"
        );
    }

    #[tokio::test]
    async fn agent_closing_early_is_an_error() {
        let (result, _) = with_scripted_agent(PermissionPolicy::Allow, |mut agent| async move {
            agent.expect_method("initialize").await;
        })
        .await;
        assert_eq!(
            result.unwrap_err().to_string(),
            "the agent closed the connection before answering initialize"
        );
    }
}
