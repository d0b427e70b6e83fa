//! The transcript `acp-prompt` prints: the agent's text as it streams, and one readable line per
//! other event (tool calls, plans, permissions, files). Knows how to show updates, not where they come from.

use std::io::{self, Write};

use serde_json::Value;

use super::plans::{self, Plans};

/// Which streamed text the transcript is in the middle of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    None,
    Message,
    Thought,
}

/// The human-readable transcript: message text as it streams, one line per other event.
pub(super) struct Transcript<'o, O> {
    out: &'o mut O,
    at_line_start: bool,
    stream: Stream,
    plans: Plans,
}

impl<'o, O: Write> Transcript<'o, O> {
    pub(super) fn new(out: &'o mut O) -> Self {
        Transcript {
            out,
            at_line_start: true,
            stream: Stream::None,
            plans: Plans::default(),
        }
    }

    fn write(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        // Flushed per piece so a human sees text as it streams.
        self.out.flush()
    }

    fn start_line(&mut self) -> io::Result<()> {
        if self.at_line_start {
            Ok(())
        } else {
            self.write("\n")
        }
    }

    /// A whole line of its own, after whatever streamed before.
    pub(super) fn line(&mut self, text: &str) -> io::Result<()> {
        self.start_line()?;
        self.stream = Stream::None;
        self.write(&format!("{text}\n"))
    }

    fn stream_text(&mut self, stream: Stream, text: &str) -> io::Result<()> {
        if self.stream != stream {
            self.start_line()?;
            if stream == Stream::Thought {
                self.write("(thinking) ")?;
            }
            self.stream = stream;
        }
        self.write(text)
    }

    pub(super) fn update(&mut self, update: &Value) -> io::Result<()> {
        let kind = update["sessionUpdate"].as_str().unwrap_or("(unnamed)");
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                let stream = if kind == "agent_message_chunk" {
                    Stream::Message
                } else {
                    Stream::Thought
                };
                let content = &update["content"];
                match content["text"].as_str() {
                    Some(text) if content["type"] == "text" => self.stream_text(stream, text),
                    _ => self.line(&format!("[{} content]", text_or(&content["type"], "?"))),
                }
            }
            "user_message_chunk" => {
                let content = &update["content"];
                match content["text"].as_str() {
                    Some(text) => self.line(&format!("[user] {text}")),
                    None => self.line(&format!(
                        "[user] [{} content]",
                        text_or(&content["type"], "?")
                    )),
                }
            }
            "tool_call" => self.line(&format!(
                "[tool] {} ({}) {}",
                text_or(&update["title"], "untitled"),
                text_or(&update["kind"], "other"),
                text_or(&update["status"], "pending"),
            )),
            "tool_call_update" => {
                let id = text_or(&update["toolCallId"], "?");
                match update["status"].as_str() {
                    Some(status) => self.line(&format!("[tool] {id} -> {status}")),
                    None => self.line(&format!("[tool] {id} updated")),
                }
            }
            "plan" => {
                let entries = update["entries"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if entries.is_empty() {
                    return self.line("[plan] (empty)");
                }
                for entry in entries {
                    self.line(&format!("[plan] {}", plans::checklist_entry(entry)))?;
                }
                Ok(())
            }
            "plan_update" => {
                for line in self.plans.update(&update["plan"]) {
                    self.line(&line)?;
                }
                Ok(())
            }
            "plan_removed" => {
                let line = self.plans.remove(update);
                self.line(&line)
            }
            "available_commands_update" => {
                let names: Vec<String> = update["availableCommands"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|c| format!("/{}", text_or(&c["name"], "?")))
                    .collect();
                self.line(&format!("[commands] {}", names.join(", ")))
            }
            "current_mode_update" => self.line(&format!(
                "[mode] {}",
                text_or(&update["currentModeId"], "?")
            )),
            other => self.line(&format!("[update] {other}")),
        }
    }
}

fn text_or<'v>(value: &'v Value, fallback: &'v str) -> &'v str {
    value.as_str().unwrap_or(fallback)
}
