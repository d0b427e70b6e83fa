//! What the resume tests share: a session whose slow prompt streams `tick 1` .. `tick 50`
//! from the demo agent, over either profile, and the check that a turn arrived whole.

use serde_json::{Value, json};

use acp_conductor_tests::agent_script::chunk_text;
use acp_conductor_tests::editor::{initialize_params, patience, prompt_params};

use super::http::HttpRemote;
use super::sse::SseStream;
use super::ws::{self as ws_client, WsRemote};

/// The demo agent's "slow" prompt: `tick 1` .. `tick 50`, 100 ms apart.
pub const TICKS: usize = 50;

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

pub fn new_session_params() -> Value {
    json!({ "cwd": std::env::temp_dir(), "mcpServers": [] })
}

pub fn tick_of(message: &Value) -> Option<usize> {
    chunk_text(&message["params"])?
        .strip_prefix("tick ")?
        .trim_end()
        .parse()
        .ok()
}

/// Collects what a slow prompt's stream carries: the ticks in order, until the answer to
/// request `prompt_id`.
#[derive(Default)]
pub struct Turn {
    pub ticks: Vec<usize>,
    pub answer: Option<Value>,
}

impl Turn {
    pub fn take(&mut self, message: &Value, prompt_id: u64) {
        if let Some(tick) = tick_of(message) {
            self.ticks.push(tick);
        } else if message.get("method").is_none() && message["id"] == prompt_id {
            self.answer = Some(message.clone());
        }
    }

    pub fn assert_complete(&self) {
        assert_eq!(
            self.ticks,
            (1..=TICKS).collect::<Vec<_>>(),
            "every update exactly once, in order"
        );
        let answer = self.answer.as_ref().expect("the prompt's answer");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
}

/// An HTTP connection with a session: its id, the session, and the connection's stream.
pub fn http_session(url: &str) -> (HttpRemote, String, SseStream) {
    let mut remote = HttpRemote::new(url, &[]);
    let opened = remote.post_raw(
        &request(0, "initialize", initialize_params()).to_string(),
        "application/json",
        None,
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    let connection = opened.connection_id.expect("Acp-Connection-Id");
    remote.connection_id = Some(connection.clone());
    let mut stream =
        SseStream::open(url, &connection, None, None).expect("the connection's stream");
    let posted = remote.post_raw(
        &request(1, "session/new", new_session_params()).to_string(),
        "application/json",
        None,
    );
    assert_eq!(posted.status, 202, "{}", posted.body);
    let (id, answer) = stream.next().expect("the session/new answer");
    assert_eq!(id, "1", "the connection's first event has cursor 1");
    let session = answer["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string();
    (remote, session, stream)
}

pub fn post_slow_prompt(remote: &HttpRemote, session: &str) {
    let posted = remote.post_raw(
        &request(2, "session/prompt", prompt_params(session, "go slow")).to_string(),
        "application/json",
        Some(session),
    );
    assert_eq!(posted.status, 202, "{}", posted.body);
}

/// Reads a WebSocket until `turn` has `ticks` ticks; returns how many messages were read.
pub fn read_ws_until(remote: &mut WsRemote, turn: &mut Turn, ticks: usize, read: &mut u64) {
    use super::remote::Remote;
    while turn.ticks.len() < ticks && turn.answer.is_none() {
        let message = remote.recv_within(patience());
        *read += 1;
        turn.take(&message, 2);
    }
}

/// A WebSocket connection with a session, whose upgrade advertised `resumable`.
pub fn ws_session(url: &str, resumable: &str) -> (WsRemote, String, u64) {
    use super::remote::Remote;
    let mut remote = ws_client::connect(url, &[]).expect("the upgrade");
    assert_eq!(
        remote.resumable.as_deref(),
        Some(resumable),
        "the upgrade advertises resumption"
    );
    remote.send(&request(0, "initialize", initialize_params()));
    remote.recv_within(patience());
    remote.send(&request(1, "session/new", new_session_params()));
    let answer = remote.recv_within(patience());
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    (remote, session, 2)
}
