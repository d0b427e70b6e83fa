//! The agent's ACP channel: writes lines to stdout, sends requests and waits for their
//! responses, records events to the `--record` file. Knows JSON-RPC, not MCP.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// A JSON-RPC error object, as received or to send.
pub type RpcError = Value;

pub struct Channel {
    out: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    record: Option<Mutex<File>>,
}

impl Channel {
    /// A channel whose lines are written by a task draining the returned receiver.
    pub fn new(record: Option<File>) -> (Channel, mpsc::UnboundedReceiver<String>) {
        let (out, rx) = mpsc::unbounded_channel();
        let channel = Channel {
            out,
            next_id: AtomicU64::new(1000),
            pending: Mutex::new(HashMap::new()),
            record: record.map(Mutex::new),
        };
        (channel, rx)
    }

    pub fn send(&self, message: Value) {
        let _ = self.out.send(message.to_string());
    }

    pub fn respond(&self, id: &Value, result: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    pub fn respond_error(&self, id: &Value, code: i64, message: &str) {
        self.send(
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }),
        );
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request to the client and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, tx);
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        rx.await
            .unwrap_or_else(|_| Err(json!({ "code": -32000, "message": "the agent is stopping" })))
    }

    /// Delivers a response to the request waiting for it; false if none was.
    pub fn deliver(&self, message: &Value) -> bool {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return false;
        };
        let Some(tx) = self.pending.lock().expect("pending lock").remove(&id) else {
            return false;
        };
        let outcome = match message.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = tx.send(outcome);
        true
    }

    /// Appends one event to the `--record` file, if any.
    pub fn record(&self, event: Value) {
        if let Some(file) = &self.record {
            let mut file = file.lock().expect("record lock");
            let _ = writeln!(file, "{event}");
            let _ = file.flush();
        }
    }
}

/// `code message` of a JSON-RPC error object.
pub fn describe_error(error: &Value) -> String {
    format!(
        "{} {}",
        error.get("code").unwrap_or(&Value::Null),
        error.get("message").and_then(Value::as_str).unwrap_or("")
    )
}
