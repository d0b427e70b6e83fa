//! One prompt turn of the demo agent, running as a task of its own: the plans, the echo of every
//! block, then what the prompt asks for. Must not know how lines reach the client.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use acp_wire::RawValue;
use acp_wire::error_code;
use serde_json::{Value, json};
use tokio::sync::{Mutex as AsyncMutex, oneshot, watch};

use super::intent::{Asked, ToolIntent, mentions_plan};
use super::line_writer::LineWriter;
use super::turn_plan::{Progress, TurnPlan};
use super::{Reply, SharedRequests, lock};
use crate::mcp_servers::SessionServers;

/// Pace of the `tick N` chunks of a "slow" prompt: slow enough for a client to cancel mid-turn.
const TICK_INTERVAL: Duration = Duration::from_millis(100);
const MAX_TICKS: u32 = 50;
/// What the demo "would" write: shown to the client in the tool call, never written.
const DEMO_FILE_NAME: &str = "demo.txt";
const DEMO_FILE_CONTENT: &str = "Hello from the acp-conductor demo agent.\n";

/// The turn stopped because the client cancelled it.
#[derive(Debug)]
struct Cancelled;

/// One prompt turn, running as its own task.
pub(super) struct Turn {
    pub(super) writer: LineWriter,
    pub(super) requests_to_client: SharedRequests,
    pub(super) session_id: String,
    pub(super) cwd: PathBuf,
    pub(super) client_reads_files: bool,
    /// The client advertised plan operations (see [`super::turn_plan`]).
    pub(super) client_shows_plans: bool,
    /// Makes the turn's tool call ids unique on the connection.
    pub(super) turn_number: u64,
    pub(super) servers: Arc<AsyncMutex<SessionServers>>,
    pub(super) cancelled: watch::Receiver<bool>,
}

impl Turn {
    pub(super) async fn run(mut self, prompt_id: Box<RawValue>, prompt: Vec<Value>) {
        let stop_reason = match self.play(&prompt).await {
            Ok(()) => "end_turn",
            Err(Cancelled) => "cancelled",
        };
        let Turn {
            writer, cancelled, ..
        } = self;
        // Before answering: the read loop takes a closed channel as "no turn running", and
        // the client may start the next turn as soon as it reads this answer.
        drop(cancelled);
        // A failed write is the writer's error to report.
        let _ = writer
            .respond(&prompt_id, &json!({ "stopReason": stop_reason }))
            .await;
    }

    async fn play(&mut self, prompt: &[Value]) -> Result<(), Cancelled> {
        let asked = Asked::of(prompt);
        let plan = TurnPlan::new(
            self.client_shows_plans,
            self.turn_number,
            prompt.len(),
            &asked,
            mentions_plan(prompt),
        );
        self.show_checklist(&plan, Progress::Started).await?;
        let Some(outline) = plan.outline() else {
            return self.carry_out(prompt, asked, &plan).await;
        };
        self.update(outline).await?;
        let outcome = self.carry_out(prompt, asked, &plan).await;
        // Even a cancelled turn takes its outline down: it described this turn only.
        if let Some(removal) = plan.outline_removal() {
            self.report(removal).await;
        }
        outcome
    }

    /// The turn's work: the echo of every block, what the prompt asked for, the checklist done.
    async fn carry_out(
        &mut self,
        prompt: &[Value],
        asked: Asked,
        plan: &TurnPlan,
    ) -> Result<(), Cancelled> {
        self.say(&format!(
            "Demo agent here. I received {} content block(s):\n",
            prompt.len()
        ))
        .await?;
        for block in prompt {
            self.say(&describe_block(block)).await?;
        }
        match asked {
            Asked::Tool(intent) => self.use_tools(intent).await?,
            Asked::Actions { slow, write, read } => {
                if slow {
                    self.tick().await?;
                }
                if write {
                    self.ask_to_write().await?;
                }
                if let Some(target) = read {
                    self.read_first_line(&target).await?;
                }
            }
        }
        self.show_checklist(plan, Progress::Done).await
    }

    async fn show_checklist(&self, plan: &TurnPlan, progress: Progress) -> Result<(), Cancelled> {
        self.update(plan.checklist(progress)).await
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
        let _ = self.writer.notify("session/update", &params).await;
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
        let _ = self.writer.request(id, method, &params).await;
        tokio::select! {
            reply = reply_rx => Ok(reply.unwrap_or_else(|_| Err(json!({
                "code": error_code::INTERNAL_ERROR,
                "message": "the connection closed before the client answered",
            })))),
            () = until_cancelled(&mut self.cancelled) => {
                lock(&self.requests_to_client).complete(id);
                let _ = self.writer.notify("$/cancel_request", &json!({ "requestId": id })).await;
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
