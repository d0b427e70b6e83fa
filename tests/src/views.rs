//! Transcripts seen from each place in the chain, reduced to what must be the same
//! everywhere: which message went which way, with which payload, ids left out (each link
//! has its own). Knows the proxy-chain wrapping; knows nothing of processes.

use serde_json::Value;

use crate::editor::Direction;

/// One message as a component of the chain saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A request or notification travelling from the editor toward the agent.
    TowardAgent { method: String, params: Value },
    /// A request or notification travelling from the agent toward the editor.
    TowardEditor { method: String, params: Value },
    /// A response: `{"result": ...}` or `{"error": ...}`.
    Response(Value),
}

/// What a test-proxy's recording says it saw: plain messages come from its predecessor,
/// `proxy/successor` (or `_proxy/successor`) ones from its successor.
pub fn proxy_view(received: &[Value]) -> Vec<Seen> {
    received
        .iter()
        .map(
            |message| match message.get("method").and_then(Value::as_str) {
                Some("proxy/successor" | "_proxy/successor") => Seen::TowardEditor {
                    method: message["params"]["method"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    params: message["params"]
                        .get("params")
                        .cloned()
                        .unwrap_or(Value::Null),
                },
                Some("proxy/initialize" | "_proxy/initialize") => Seen::TowardAgent {
                    method: "initialize".to_string(),
                    params: params(message),
                },
                Some(method) => Seen::TowardAgent {
                    method: method.to_string(),
                    params: params(message),
                },
                None => Seen::Response(outcome(message)),
            },
        )
        .collect()
}

/// What the agent's recording says it saw (everything comes from its predecessor).
pub fn agent_view(received: &[Value]) -> Vec<Seen> {
    proxy_view(received)
}

/// What the editor saw and sent, in order.
pub fn editor_view(transcript: &[(Direction, String)]) -> Vec<Seen> {
    transcript
        .iter()
        .filter_map(|(direction, line)| {
            let message: Value = serde_json::from_str(line).ok()?;
            Some(
                match (message.get("method").and_then(Value::as_str), direction) {
                    (Some(method), Direction::Sent) => Seen::TowardAgent {
                        method: method.to_string(),
                        params: params(&message),
                    },
                    (Some(method), Direction::Received) => Seen::TowardEditor {
                        method: method.to_string(),
                        params: params(&message),
                    },
                    (None, _) => Seen::Response(outcome(&message)),
                },
            )
        })
        .collect()
}

/// Only the messages travelling toward the agent.
pub fn toward_agent(view: &[Seen]) -> Vec<Seen> {
    view.iter()
        .filter(|seen| matches!(seen, Seen::TowardAgent { .. }))
        .cloned()
        .collect()
}

/// The view with `agentCapabilities.mcpCapabilities.acp` removed from every response: the
/// conductor adds it for proxies, and it is the one field allowed to differ.
pub fn without_acp_capability(view: Vec<Seen>) -> Vec<Seen> {
    view.into_iter()
        .map(|seen| match seen {
            Seen::Response(mut outcome) => {
                if let Some(mcp) = outcome
                    .pointer_mut("/result/agentCapabilities/mcpCapabilities")
                    .and_then(Value::as_object_mut)
                {
                    mcp.remove("acp");
                }
                Seen::Response(outcome)
            }
            other => other,
        })
        .collect()
}

fn params(message: &Value) -> Value {
    message.get("params").cloned().unwrap_or(Value::Null)
}

fn outcome(message: &Value) -> Value {
    let mut outcome = serde_json::Map::new();
    for key in ["result", "error"] {
        if let Some(value) = message.get(key) {
            outcome.insert(key.to_string(), value.clone());
        }
    }
    Value::Object(outcome)
}
