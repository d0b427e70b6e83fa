//! Turns a test leaves in flight: a prompt waiting for the client's permission, one that hangs
//! until cancelled; and reading on until a request's answer.

use acp_conductor_tests::agent_script::{HANGING, chunk_text};
use acp_conductor_tests::editor::prompt_params;
use serde_json::{Value, json};

use super::remote::{Client, Remote};

/// Starts a prompt that waits for the client's permission; returns the prompt's id and the
/// permission request.
pub fn start_permission_turn<R: Remote>(client: &mut Client<R>) -> (Value, Value) {
    client.initialize();
    let session = client.new_session();
    let id = client.start("session/prompt", prompt_params(&session, "permission"));
    loop {
        let message = client.recv();
        if message["method"] == "session/request_permission" {
            return (id, message);
        }
    }
}

/// Answers the permission request and reads until the prompt's answer.
pub fn finish_permission_turn<R: Remote>(
    client: &mut Client<R>,
    id: &Value,
    asked: &Value,
) -> Value {
    let allow = json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } });
    client
        .remote
        .send(&json!({ "jsonrpc": "2.0", "id": asked["id"], "result": allow }));
    answer_to(client, id)
}

pub fn answer_to<R: Remote>(client: &mut Client<R>, id: &Value) -> Value {
    loop {
        let message = client.recv();
        if message.get("method").is_none() && message["id"] == *id {
            return message;
        }
    }
}

pub fn start_hanging_turn<R: Remote>(client: &mut Client<R>) -> Value {
    client.initialize();
    let session = client.new_session();
    let id = client.start("session/prompt", prompt_params(&session, "hang"));
    loop {
        let message = client.recv();
        if chunk_text(&message["params"]) == Some(HANGING) {
            return id;
        }
    }
}
