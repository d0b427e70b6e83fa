//! The test playing a remote editor, over either profile of the transport: send a message,
//! receive the next one; and the requests of an ACP session on top, with agent-side requests
//! answered as they come.

use std::time::Duration;

use acp_conductor_tests::Exchange;
use serde_json::{Value, json};

/// One remote connection to `serve`, as messages.
pub trait Remote {
    fn send(&mut self, message: &Value);
    /// The next message from the server; panics when none comes within `wait`.
    fn recv_within(&mut self, wait: Duration) -> Value;
    /// Ends the connection (WebSocket close, HTTP DELETE).
    fn close(&mut self);
}

/// An ACP client on a [`Remote`]: numbered requests, their answers matched.
pub struct Client<R: Remote> {
    pub remote: R,
    next_id: u64,
}

impl<R: Remote> Client<R> {
    pub fn new(remote: R) -> Self {
        Client { remote, next_id: 0 }
    }

    pub fn recv(&mut self) -> Value {
        self.remote
            .recv_within(acp_conductor_tests::editor::patience())
    }

    /// Sends a request and reads until its answer, answering agent-side requests with
    /// `answer` (a result) and collecting notifications.
    pub fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> Exchange {
        let id = self.start(method, params);
        let mut exchange = Exchange::default();
        loop {
            let message = self.recv();
            match (message.get("method").is_some(), message.get("id")) {
                (false, Some(got)) if *got == id => {
                    exchange.response = message;
                    return exchange;
                }
                (false, _) => exchange.other_responses.push(message),
                (true, Some(request_id)) => {
                    let reply =
                        json!({ "jsonrpc": "2.0", "id": request_id, "result": answer(&message) });
                    self.remote.send(&reply);
                    exchange.requests.push(message);
                }
                (true, None) => exchange.notifications.push(message),
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Exchange {
        self.request_answering(method, params, |request| {
            panic!("unexpected request from the agent side: {request}")
        })
    }

    /// Sends a request without waiting; returns its id.
    pub fn start(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.remote
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.remote
            .send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    pub fn initialize(&mut self) -> Value {
        let exchange = self.request(
            "initialize",
            acp_conductor_tests::editor::initialize_params(),
        );
        exchange.result().clone()
    }

    pub fn new_session(&mut self) -> String {
        let exchange = self.request(
            "session/new",
            json!({ "cwd": std::env::temp_dir(), "mcpServers": [] }),
        );
        exchange.result()["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no sessionId: {}", exchange.response))
            .to_string()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> Exchange {
        self.request(
            "session/prompt",
            acp_conductor_tests::editor::prompt_params(session, text),
        )
    }
}

/// The session every transport must carry: initialize, a new session, a prompt with streamed
/// updates, a permission request answered, a prompt cancelled. The agent is the test-agent
/// with `--updates 3`.
pub fn full_session<R: Remote>(client: &mut Client<R>) {
    let init = client.initialize();
    assert!(
        init["agentCapabilities"].is_object(),
        "initialize result: {init}"
    );
    let session = client.new_session();

    let streamed = client.prompt(&session, "hello");
    assert_eq!(streamed.result()["stopReason"], "end_turn");
    assert_eq!(
        streamed.chunk_texts(),
        (1..=3)
            .map(|i| format!("update {i}/3 for hello"))
            .collect::<Vec<_>>()
    );

    let asked = client.request_answering(
        "session/prompt",
        acp_conductor_tests::editor::prompt_params(&session, "permission"),
        |request| {
            assert_eq!(request["method"], "session/request_permission");
            json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } })
        },
    );
    assert_eq!(asked.requests.len(), 1, "one permission request");
    assert_eq!(asked.result()["stopReason"], "end_turn");
    assert!(
        asked
            .chunk_texts()
            .contains(&"permission selected allow-once".to_string()),
        "the agent heard the answer: {:?}",
        asked.chunk_texts()
    );

    let id = client.start(
        "session/prompt",
        acp_conductor_tests::editor::prompt_params(&session, "hang"),
    );
    loop {
        let message = client.recv();
        if acp_conductor_tests::agent_script::chunk_text(&message["params"])
            == Some(acp_conductor_tests::agent_script::HANGING)
        {
            break;
        }
    }
    client.notify("session/cancel", json!({ "sessionId": session }));
    let cancelled = loop {
        let message = client.recv();
        if message.get("method").is_none() && message["id"] == id {
            break message;
        }
    };
    assert_eq!(
        cancelled["result"]["stopReason"], "cancelled",
        "{cancelled}"
    );
}
