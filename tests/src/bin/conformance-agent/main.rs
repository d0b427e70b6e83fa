//! `conformance-agent`: an ACP agent for the conformance suite that answers every client→agent
//! method of schema 1.20 and, per prompt word, sends every kind of agent→client message.
//!
//! It knows nothing of proxies or conductors: it is the end of a chain, written from the
//! protocol alone with std and serde_json, sharing no code with the conductor.
//!
//! Options: `--record PATH` (every received line, raw), `--record-sent PATH` (every line
//! written), `--record-shim PATH` (every line read from a bridged stdio MCP server), `--acp`
//! (`mcpCapabilities.acp: true`: it speaks MCP over ACP itself instead of launching stdio MCP
//! servers), `--pid-file PATH`, `--eof-file PATH`. Exits on stdin EOF.
//!
//! A prompt's words run in order, each request waiting for its answer (which the agent
//! reports in an agent message chunk): `updates` (one `session/update` of every kind),
//! `permission`, `read`, `write`, `terminal` (create, output, wait_for_exit, kill, release),
//! `elicit` (a form, a URL and its completion), `ext` (an extension request and
//! notification), `cancel-own` (a permission request, then `$/cancel_request` for it),
//! `hang` (waits for `session/cancel` or `$/cancel_request`), `mcp` (uses every MCP server
//! of the session), `exit` (exits at once, status 4). Any other word is echoed in a chunk.

mod mcp;
mod payloads;

use std::collections::HashMap;

use acp_conductor_tests::fixture_io::{self, FixtureArgs, Recording};
use acp_conductor_tests::jsonrpc::{self, RawMessage};
use serde_json::{Value, json};

/// How the running prompt turn was cancelled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cancelled {
    /// `session/cancel` for its session: the turn ends with `stopReason: "cancelled"`.
    Session,
    /// `$/cancel_request` for the prompt: the turn ends with error -32800.
    Request,
}

struct Turn {
    prompt_id: Value,
    session_id: String,
    cancelled: Option<Cancelled>,
}

struct Agent {
    input: Box<dyn Iterator<Item = String>>,
    recording: Recording,
    mcp_over_acp: bool,
    shim_record: Option<String>,
    next_session: u64,
    next_request: u64,
    /// The `mcpServers` of each session's setup.
    servers: HashMap<String, Vec<Value>>,
    turn: Option<Turn>,
}

/// The outcome of one of the agent's requests: `{"result": ...}` or `{"error": ...}`.
type Answer = Value;

fn main() {
    let args = FixtureArgs::from_env(&["acp"]);
    fixture_io::write_pid_file(args.value("pid-file"));
    fixture_io::record_sent(args.value("record-sent"));
    let mut agent = Agent {
        input: Box::new(fixture_io::stdin_lines()),
        recording: Recording::open(args.value("record")),
        mcp_over_acp: args.flag("acp"),
        shim_record: args.value("record-shim").map(str::to_string),
        next_session: 1,
        next_request: 1,
        servers: HashMap::new(),
        turn: None,
    };
    while let Some(line) = agent.next_line() {
        agent.handle_line(&line);
    }
    fixture_io::note_stdin_eof(args.value("eof-file"));
}

impl Agent {
    fn next_line(&mut self) -> Option<String> {
        let line = self.input.next()?;
        self.recording.record(&line);
        Some(line)
    }

    fn handle_line(&mut self, line: &str) {
        let message = match RawMessage::parse(line) {
            Ok(message) => message,
            Err(e) => {
                fixture_io::send_line(jsonrpc::error_line(
                    "null",
                    -32700,
                    &format!("parse error: {e}"),
                ));
                return;
            }
        };
        let params = message.params_value();
        match (message.method(), message.id()) {
            (Some(method), Some(id)) => self.request(id.get(), &method, &params),
            (Some(method), None) => self.notification(&method, &params),
            _ => eprintln!("conformance-agent: a response that answers nothing pending: {line}"),
        }
    }

    fn request(&mut self, id: &str, method: &str, params: &Value) {
        let session_id = params["sessionId"].as_str().unwrap_or_default().to_string();
        let result = match method {
            "initialize" => payloads::initialize_result(self.mcp_over_acp),
            "authenticate" | "logout" | "session/close" | "session/delete" => json!({}),
            "session/new" | "session/fork" => {
                let new_id = format!("sess-{}", self.next_session);
                self.next_session += 1;
                self.remember_servers(&new_id, params);
                payloads::session_result(&new_id)
            }
            "session/load" => {
                self.remember_servers(&session_id, params);
                let history: Vec<String> = payloads::history(&session_id)
                    .iter()
                    .map(|update| {
                        jsonrpc::notification_line("session/update", Some(&update.to_string()))
                    })
                    .collect();
                fixture_io::send_lines(&history);
                payloads::restored_session_result()
            }
            "session/resume" => {
                self.remember_servers(&session_id, params);
                payloads::restored_session_result()
            }
            "session/list" => payloads::list_result(),
            "session/set_mode" => {
                let mode = params["modeId"].as_str().unwrap_or("ask");
                self.notify_update(payloads::update(
                    &session_id,
                    json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode }),
                ));
                json!({})
            }
            "session/set_config_option" => {
                payloads::config_option_result(params["value"].as_str().unwrap_or("fast"))
            }
            "session/prompt" if self.turn.is_none() => {
                self.prompt(id, session_id, params);
                return;
            }
            "session/prompt" => {
                fixture_io::send_line(jsonrpc::error_line(id, -32603, "a turn is running"));
                return;
            }
            // A provider's MCP request on a connection (sampling), MCP over ACP.
            "mcp/message" if params["method"] == "sampling/createMessage" => {
                payloads::sampling_result(&mcp::sampled_question(&params["params"]))
            }
            other if other.starts_with('_') => json!({ "echo": params }),
            other => {
                fixture_io::send_line(jsonrpc::error_line(
                    id,
                    -32601,
                    &format!("method not found: {other}"),
                ));
                return;
            }
        };
        fixture_io::send_line(jsonrpc::result_line(id, &result));
    }

    fn notification(&mut self, method: &str, params: &Value) {
        let Some(turn) = &mut self.turn else {
            return;
        };
        match method {
            "session/cancel" if params["sessionId"] == turn.session_id.as_str() => {
                turn.cancelled = Some(Cancelled::Session);
            }
            "$/cancel_request" if params["requestId"] == turn.prompt_id => {
                turn.cancelled = Some(Cancelled::Request);
            }
            _ => {}
        }
    }

    fn remember_servers(&mut self, session_id: &str, params: &Value) {
        let servers = params["mcpServers"].as_array().cloned().unwrap_or_default();
        self.servers.insert(session_id.to_string(), servers);
    }

    fn notify_update(&self, params: Value) {
        fixture_io::send_line(jsonrpc::notification_line(
            "session/update",
            Some(&params.to_string()),
        ));
    }

    fn say(&self, session_id: &str, text: &str) {
        self.notify_update(payloads::say(session_id, text));
    }

    /// Sends a request to the client and waits for its answer, handling whatever else
    /// arrives meanwhile.
    fn ask(&mut self, method: &str, params: Value) -> Answer {
        let id = self.send_request(method, &params);
        self.await_answer(id)
    }

    fn send_request(&mut self, method: &str, params: &Value) -> u64 {
        let id = self.next_request;
        self.next_request += 1;
        fixture_io::send_line(jsonrpc::request_line(
            &id.to_string(),
            method,
            Some(&params.to_string()),
        ));
        id
    }

    fn await_answer(&mut self, id: u64) -> Answer {
        while let Some(line) = self.next_line() {
            match RawMessage::parse(&line) {
                Ok(message) if message.is_response() && message.id_value() == Some(json!(id)) => {
                    return match message.outcome() {
                        Some((kind, outcome)) => json!({ kind: jsonrpc::to_value(outcome) }),
                        None => json!({}),
                    };
                }
                _ => self.handle_line(&line),
            }
        }
        // The client went away in the middle of the turn.
        std::process::exit(0);
    }

    /// Asks, and reports the answer in a chunk.
    fn ask_and_report(&mut self, session_id: &str, method: &str, params: Value) -> Answer {
        let answer = self.ask(method, params);
        self.say(session_id, &format!("{method} answered {answer}"));
        answer
    }

    fn cancelled(&self) -> Option<Cancelled> {
        self.turn.as_ref().and_then(|turn| turn.cancelled)
    }

    fn prompt(&mut self, id: &str, session_id: String, params: &Value) {
        self.turn = Some(Turn {
            prompt_id: serde_json::from_str(id).expect("an id is JSON"),
            session_id: session_id.clone(),
            cancelled: None,
        });
        let words: Vec<String> = params["prompt"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .flat_map(str::split_whitespace)
            .map(str::to_string)
            .collect();
        for word in words {
            if self.cancelled().is_some() {
                break;
            }
            self.run_word(&session_id, &word);
        }
        let turn = self.turn.take().expect("the turn is running");
        let line = match turn.cancelled {
            Some(Cancelled::Request) => jsonrpc::error_line(id, -32800, "Request cancelled"),
            Some(Cancelled::Session) => {
                jsonrpc::result_line(id, &payloads::prompt_result("cancelled"))
            }
            None => jsonrpc::result_line(id, &payloads::prompt_result("end_turn")),
        };
        fixture_io::send_line(line);
    }

    fn run_word(&mut self, session_id: &str, word: &str) {
        match word {
            "updates" => {
                let lines: Vec<String> = payloads::every_update(session_id)
                    .iter()
                    .map(|u| jsonrpc::notification_line("session/update", Some(&u.to_string())))
                    .collect();
                fixture_io::send_lines(&lines);
            }
            "permission" => {
                let params = payloads::permission_request(session_id, "call-edit-1");
                self.ask_and_report(session_id, "session/request_permission", params);
            }
            "read" => {
                let params = payloads::read_request(session_id);
                self.ask_and_report(session_id, "fs/read_text_file", params);
            }
            "write" => {
                let params = payloads::write_request(session_id);
                self.ask_and_report(session_id, "fs/write_text_file", params);
            }
            "terminal" => self.terminal(session_id),
            "elicit" => {
                let form = payloads::form_elicitation_request(session_id);
                self.ask_and_report(session_id, "elicitation/create", form);
                let url = payloads::url_elicitation_request(session_id);
                self.ask_and_report(session_id, "elicitation/create", url);
                fixture_io::send_line(jsonrpc::notification_line(
                    "elicitation/complete",
                    Some(&payloads::elicitation_complete().to_string()),
                ));
            }
            "ext" => {
                let params = payloads::ext_request(session_id);
                self.ask_and_report(session_id, payloads::EXT_REQUEST, params);
                fixture_io::send_line(jsonrpc::notification_line(
                    payloads::EXT_NOTIFICATION,
                    Some(&payloads::ext_notification(session_id).to_string()),
                ));
            }
            "cancel-own" => {
                // The request and its cancellation in one write, so that both are on their
                // way before the client can answer.
                let params = payloads::permission_request(session_id, "call-edit-2");
                let id = self.next_request;
                self.next_request += 1;
                fixture_io::send_lines(&[
                    jsonrpc::request_line(
                        &id.to_string(),
                        "session/request_permission",
                        Some(&params.to_string()),
                    ),
                    jsonrpc::notification_line(
                        "$/cancel_request",
                        Some(&json!({ "requestId": id }).to_string()),
                    ),
                ]);
                let answer = self.await_answer(id);
                self.say(
                    session_id,
                    &format!("cancelled permission answered {answer}"),
                );
            }
            "hang" => {
                self.say(session_id, "hanging");
                while self.cancelled().is_none() {
                    let Some(line) = self.next_line() else {
                        std::process::exit(0);
                    };
                    self.handle_line(&line);
                }
            }
            "mcp" => self.use_mcp_servers(session_id),
            "exit" => std::process::exit(4),
            other => self.say(session_id, &format!("heard {other}")),
        }
    }

    fn terminal(&mut self, session_id: &str) {
        let params = payloads::terminal_create_request(session_id);
        let created = self.ask_and_report(session_id, "terminal/create", params);
        let Some(terminal_id) = created["result"]["terminalId"].as_str().map(str::to_string) else {
            return;
        };
        self.notify_update(payloads::terminal_tool_call(session_id, &terminal_id));
        for method in [
            "terminal/output",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release",
        ] {
            let params = payloads::terminal_request(session_id, &terminal_id);
            self.ask_and_report(session_id, method, params);
        }
    }
}
