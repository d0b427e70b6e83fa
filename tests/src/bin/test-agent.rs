//! `test-agent`: a scriptable ACP agent for the end-to-end tests; the prompt text picks
//! the behaviour. It knows nothing of proxies or conductors: it is the end of a chain.
//!
//! Options: `--record PATH` (every received line, raw), `--pid-file PATH`, `--updates K`
//! (chunks streamed per prompt, default 1), `--burst` (chunks, response and more chunks in
//! one write), `--eof-file PATH` (written when stdin reaches EOF), `--no-embedded-context`
//! (`promptCapabilities.embeddedContext: false` in the initialize result), `--on-start
//! RECIPE` (bytes written before anything is read: a banner, a request before `initialize`),
//! `--stderr RECIPE` (bytes written to stderr before anything is read: coloured log lines,
//! escape sequences; added for the tests of the conductor's relay of component stderr),
//! `--progress-file PATH` (how many bytes a `flood` has written so far),
//! `--answer-after-cancel` (a turn ended by `$/cancel_request` is answered twice: -32800,
//! then its result), `--replies PATH` (canned answers: each line of the file is a JSON
//! object `{"method": M, "result": R}` or `{"method": M, "error": E}`, and a request for `M`
//! is answered with `R` or `E` written byte for byte as the file has it, whatever `M` is;
//! see [`agent_script::reply_line`]). Prompt words:
//! `hang` (wait for `session/cancel` or `$/cancel_request`),
//! `permission` (ask the client with `session/request_permission`), `id-zero` (ask the
//! client to read a file with request id `0`); a text block starting with `fs-read`,
//! `fs-write`, `terminal`, `terminal-output` or `permission-for` sends that request to the
//! client and reports its answer (see [`agent_script::client_request`]); one starting with
//! `emit`, `answer` or `flood` writes bytes of the test's choosing (see
//! [`agent_script::EMIT`]). Exits on stdin EOF.

use std::collections::HashMap;
use std::io::Write;

use acp_conductor_tests::agent_script;
use acp_conductor_tests::fixture_io::{self, FixtureArgs, Recording};
use acp_conductor_tests::jsonrpc::{self, RawMessage};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// What a prompt turn waits for before it can end.
enum Waiting {
    /// The client's answer to our request with this id.
    Answer { request_id: Value, about: Question },
    /// `session/cancel` or `$/cancel_request`.
    Cancellation,
}

#[derive(Clone, Copy)]
enum Question {
    Permission,
    ReadFile,
    /// A request asked for by a request word; the answer is reported whole.
    Relayed {
        method: &'static str,
    },
}

struct Turn {
    /// The id of the `session/prompt` request, exactly as it arrived.
    prompt_id: Box<RawValue>,
    session_id: String,
    meta: Value,
    waiting: Waiting,
}

struct Agent {
    /// `--replies`: method -> (`"result"` or `"error"`, the answer's text as the file has it).
    replies: HashMap<String, (&'static str, String)>,
    updates: usize,
    burst: bool,
    answer_after_cancel: bool,
    progress_file: Option<String>,
    embedded_context: bool,
    next_session: u64,
    /// Ids of our own requests; `0` is reserved for the "id-zero" prompt.
    next_request: u64,
    turns: Vec<Turn>,
}

fn main() {
    let args = FixtureArgs::from_env(&["burst", "no-embedded-context", "answer-after-cancel"]);
    fixture_io::write_pid_file(args.value("pid-file"));
    let mut recording = Recording::open(args.value("record"));
    if let Some(recipe) = args.value("stderr") {
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(&agent_script::recipe_bytes(recipe, "null"));
        let _ = stderr.flush();
    }
    if let Some(recipe) = args.value("on-start") {
        fixture_io::send_bytes(&agent_script::recipe_bytes(recipe, "null"));
    }
    let mut agent = Agent {
        replies: args.value("replies").map(read_replies).unwrap_or_default(),
        updates: args
            .value("updates")
            .map_or(1, |k| k.parse().expect("--updates takes a number")),
        burst: args.flag("burst"),
        answer_after_cancel: args.flag("answer-after-cancel"),
        progress_file: args.value("progress-file").map(str::to_string),
        embedded_context: !args.flag("no-embedded-context"),
        next_session: 1,
        next_request: 1,
        turns: Vec::new(),
    };
    for line in fixture_io::stdin_lines() {
        recording.record(&line);
        match RawMessage::parse(&line) {
            Ok(message) => agent.handle(&message),
            Err(e) => fixture_io::send_line(jsonrpc::error_line(
                "null",
                -32700,
                &format!("parse error: {e}"),
            )),
        }
    }
    fixture_io::note_stdin_eof(args.value("eof-file"));
}

impl Agent {
    fn handle(&mut self, message: &RawMessage) {
        let method = message.method();
        let params = message.params_value();
        match (method.as_deref(), message.id()) {
            (Some(method), Some(id)) => self.request(id, method, &params),
            (Some(method), None) => self.notification(method, &params),
            (None, Some(_)) => self.answer(message),
            (None, None) => eprintln!("test-agent: ignoring a message without id or method"),
        }
    }

    fn request(&mut self, id: &RawValue, method: &str, params: &Value) {
        let id = id.get();
        if let Some((kind, outcome)) = self.replies.get(method) {
            fixture_io::send_line(jsonrpc::response_line(id, kind, outcome));
            return;
        }
        let meta = params.get("_meta").cloned().unwrap_or(Value::Null);
        match method {
            "initialize" => {
                let mut result = agent_script::initialize_result(&meta);
                if !self.embedded_context {
                    result["agentCapabilities"]["promptCapabilities"]["embeddedContext"] =
                        Value::Bool(false);
                }
                fixture_io::send_line(jsonrpc::result_line(id, &result));
            }
            "session/new" => {
                let session_id = format!("sess-{}", self.next_session);
                self.next_session += 1;
                let result = json!({
                    "sessionId": session_id,
                    "_meta": agent_script::result_meta(&meta),
                });
                fixture_io::send_line(jsonrpc::result_line(id, &result));
            }
            "session/prompt" => self.prompt(id, params, meta),
            _ => fixture_io::send_line(jsonrpc::error_line(
                id,
                -32601,
                &format!("method not found: {method}"),
            )),
        }
    }

    fn prompt(&mut self, id: &str, params: &Value, meta: Value) {
        let session_id = params["sessionId"].as_str().unwrap_or_default().to_string();
        if self.hostile(id, params, &session_id, &meta) {
            return;
        }
        let text = params["prompt"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let update = |text: &str| {
            jsonrpc::notification_line(
                "session/update",
                Some(&agent_script::chunk(&session_id, text).to_string()),
            )
        };
        let mut lines: Vec<String> = (1..=self.updates)
            .map(|i| update(&agent_script::update_text(&text, i, self.updates)))
            .collect();
        let prompt_id = RawValue::from_string(id.to_string()).expect("an id is JSON");
        let turn = |waiting| Turn {
            prompt_id,
            session_id: session_id.clone(),
            meta: meta.clone(),
            waiting,
        };
        // Request words first: their arguments (paths, commands) may contain the other words.
        let asked = params["prompt"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .find_map(|block| agent_script::client_request(&session_id, block, self.next_request));
        if let Some((method, params)) = asked {
            let request_id = self.next_request;
            self.next_request += 1;
            lines.push(jsonrpc::request_line(
                &request_id.to_string(),
                method,
                Some(&params.to_string()),
            ));
            self.turns.push(turn(Waiting::Answer {
                request_id: Value::from(request_id),
                about: Question::Relayed { method },
            }));
        } else if text.contains(agent_script::HANG) {
            lines.push(update(agent_script::HANGING));
            self.turns.push(turn(Waiting::Cancellation));
        } else if text.contains(agent_script::PERMISSION) {
            let request_id = self.next_request;
            self.next_request += 1;
            let params = json!({
                "sessionId": session_id,
                "toolCall": {
                    "toolCallId": format!("call-{request_id}"),
                    "title": "Write the file",
                    "kind": "edit",
                    "status": "pending"
                },
                "options": agent_script::permission_options(),
            });
            lines.push(jsonrpc::request_line(
                &request_id.to_string(),
                "session/request_permission",
                Some(&params.to_string()),
            ));
            self.turns.push(turn(Waiting::Answer {
                request_id: Value::from(request_id),
                about: Question::Permission,
            }));
        } else if text.contains(agent_script::ID_ZERO) {
            let params = json!({ "sessionId": session_id, "path": agent_script::ID_ZERO_PATH });
            lines.push(jsonrpc::request_line(
                "0",
                "fs/read_text_file",
                Some(&params.to_string()),
            ));
            self.turns.push(turn(Waiting::Answer {
                request_id: Value::from(0),
                about: Question::ReadFile,
            }));
        } else {
            lines.push(end_turn(id, "end_turn", &meta));
            if self.burst {
                let before = (1..=agent_script::BURST_BEFORE)
                    .map(|i| update(&agent_script::burst_before_text(&text, i)));
                let after = (1..=agent_script::BURST_AFTER)
                    .map(|i| update(&agent_script::burst_after_text(&text, i)));
                let response = lines.pop().expect("the response was just pushed");
                lines.extend(before);
                lines.push(response);
                lines.extend(after);
            }
        }
        fixture_io::send_lines(&lines);
    }

    /// The `emit`, `answer` and `flood` words; true when the prompt was one of them.
    fn hostile(&mut self, id: &str, params: &Value, session_id: &str, meta: &Value) -> bool {
        let Some((word, rest)) = params["prompt"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .filter_map(|text| text.trim_start().split_once(' '))
            .find(|(word, _)| {
                [
                    agent_script::EMIT,
                    agent_script::ANSWER,
                    agent_script::FLOOD,
                ]
                .contains(word)
            })
        else {
            return false;
        };
        match word {
            agent_script::EMIT => {
                fixture_io::send_bytes(&agent_script::recipe_bytes(rest, id));
                fixture_io::send_line(end_turn(id, "end_turn", meta));
            }
            agent_script::ANSWER => {
                fixture_io::send_bytes(&agent_script::recipe_bytes(rest, id));
            }
            _ => {
                let total: usize = rest.trim().parse().expect("flood <bytes>");
                if self.flood(session_id, total) {
                    fixture_io::send_line(end_turn(id, "end_turn", meta));
                }
            }
        }
        true
    }

    /// Streams chunks until `total` bytes of text went out, noting the progress after each
    /// write; false if the client went away first.
    fn flood(&self, session_id: &str, total: usize) -> bool {
        let text = "f".repeat(agent_script::FLOOD_CHUNK);
        let mut line = jsonrpc::notification_line(
            "session/update",
            Some(&agent_script::chunk(session_id, &text).to_string()),
        );
        line.push('\n');
        let mut written = 0;
        while written < total {
            if !fixture_io::send_bytes(line.as_bytes()) {
                return false;
            }
            written += line.len();
            if let Some(path) = &self.progress_file {
                fixture_io::replace_file(path, &written.to_string());
            }
        }
        true
    }

    fn notification(&mut self, method: &str, params: &Value) {
        match method {
            "session/cancel" => {
                let session_id = params["sessionId"].as_str().unwrap_or_default();
                let (cancelled, kept) = std::mem::take(&mut self.turns)
                    .into_iter()
                    .partition(|turn| turn.session_id == session_id);
                self.turns = kept;
                let lines: Vec<String> = cancelled
                    .iter()
                    .map(|turn: &Turn| end_turn(turn.prompt_id.get(), "cancelled", &turn.meta))
                    .collect();
                fixture_io::send_lines(&lines);
            }
            "$/cancel_request" => {
                let target = &params["requestId"];
                let Some(index) = self
                    .turns
                    .iter()
                    .position(|turn| jsonrpc::to_value(&turn.prompt_id) == *target)
                else {
                    eprintln!("test-agent: $/cancel_request for {target}, which is not running");
                    return;
                };
                let turn = self.turns.remove(index);
                let mut lines = vec![jsonrpc::error_line(
                    turn.prompt_id.get(),
                    -32800,
                    "Request cancelled",
                )];
                if self.answer_after_cancel {
                    lines.push(end_turn(turn.prompt_id.get(), "end_turn", &turn.meta));
                }
                fixture_io::send_lines(&lines);
            }
            _ => {}
        }
    }

    /// A response from the client to one of our requests.
    fn answer(&mut self, message: &RawMessage) {
        let id = message.id_value().unwrap_or(Value::Null);
        let Some(index) = self.turns.iter().position(
            |turn| matches!(&turn.waiting, Waiting::Answer { request_id, .. } if *request_id == id),
        ) else {
            eprintln!("test-agent: response with id {id} answers nothing we asked");
            return;
        };
        let turn = self.turns.remove(index);
        let Waiting::Answer { about, .. } = turn.waiting else {
            unreachable!("the position matched a turn waiting for an answer");
        };
        let response = match message.outcome() {
            Some((kind, outcome)) => json!({ kind: jsonrpc::to_value(outcome) }),
            None => json!({}),
        };
        let text = match about {
            Question::Permission => agent_script::permission_outcome_text(&response),
            Question::ReadFile => agent_script::read_outcome_text(&response),
            Question::Relayed { method } => agent_script::answer_text(method, &response),
        };
        fixture_io::send_lines(&[
            jsonrpc::notification_line(
                "session/update",
                Some(&agent_script::chunk(&turn.session_id, &text).to_string()),
            ),
            end_turn(turn.prompt_id.get(), "end_turn", &turn.meta),
        ]);
    }
}

/// The canned answers of `--replies PATH`, by method; the last line for a method wins.
fn read_replies(path: &str) -> HashMap<String, (&'static str, String)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read --replies {path}: {e}"));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let reply = RawMessage::parse(line)
                .unwrap_or_else(|e| panic!("--replies: not a JSON object ({e}): {line}"));
            let method = reply
                .method()
                .unwrap_or_else(|| panic!("--replies: a line without a method: {line}"));
            let (kind, outcome) = reply
                .outcome()
                .unwrap_or_else(|| panic!("--replies: neither result nor error: {line}"));
            (method, (kind, outcome.get().to_string()))
        })
        .collect()
}

/// The response that ends a prompt turn.
fn end_turn(id: &str, stop_reason: &str, meta: &Value) -> String {
    jsonrpc::result_line(
        id,
        &json!({ "stopReason": stop_reason, "_meta": agent_script::result_meta(meta) }),
    )
}
