//! The judge: every line the conductor wrote on a link, deserialized with the official schema
//! crate's types for what that line is on that link. The schema judges; it never produces.
//!
//! A line is first read as a JSON-RPC 2.0 envelope with the schema's `rpc` types (`Request`,
//! `Notification`, `Response` inside `JsonRpcMessage`, so `"jsonrpc": "2.0"`, the id and an
//! error object are checked too), then its payload by method and direction: requests and
//! notifications through `ClientRequest`/`AgentRequest`/`ClientNotification`/
//! `AgentNotification::from_method_and_params` (or `ProtocolLevelNotification` for
//! `$/cancel_request`), results through `AgentResponse`/`ClientResponse::from_method_and_result`
//! by the method of the request the peer sent (errors through the schema's `Error`), and the
//! proxy methods through `InitializeProxyRequest`, `ProxySuccessorRequest`/`Notification` with
//! the wrapped message judged again as what it is. `_`-prefixed methods go through the schema's
//! extension variants (that is what `from_method_and_params` does with them); `_proxy/*` are the
//! older dialect's names of the proxy methods and are judged as those. Only the forms of
//! [`legacy`](crate::legacy) are excused from payload judging; anything else that does not
//! deserialize is a failure naming the link, the line and the serde error.

use std::collections::{HashMap, VecDeque};

use agent_client_protocol_schema::v1::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, InitializeProxyRequest, InitializeProxyResponse, JsonRpcMessage, Notification,
    ProtocolLevelNotification, ProxySuccessorNotification, ProxySuccessorRequest,
    ProxySuccessorResponse, Request, Response,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::legacy::{self, Legacy};
use crate::links::{Direction, LinkKind, LinkRecord};

/// The verdict on one line the conductor wrote.
#[derive(Debug, Clone)]
pub struct Judged {
    pub link: String,
    pub kind: LinkKind,
    /// Which of the lines the conductor wrote on the link it is, from 1.
    pub number: usize,
    /// What the line is: `request session/new`, `notification session/update plan`,
    /// `result of session/prompt`, `request fs/read_text_file in proxy/successor`; the
    /// scenarios' coverage checks match on it.
    pub what: String,
    /// The legacy form it is, when it is one of the allow-list's.
    pub legacy: Option<Legacy>,
    pub line: String,
    /// `Err` holds the serde error (or why the line has no type to be judged by).
    pub verdict: Result<(), String>,
}

/// A request the peer sent the conductor, which a response the conductor writes answers.
#[derive(Debug, Clone)]
enum Asked {
    /// `proxy/initialize` (either spelling), from a parent conductor.
    ProxyInitialize,
    /// A request, plain or wrapped in `proxy/successor` (`wrapper` then names it).
    Call {
        method: String,
        direction: Direction,
        legacy: Option<Legacy>,
        wrapper: Option<String>,
    },
}

/// The requests the peer sent on one link, by id, in the order sent.
struct PeerRequests {
    by_id: HashMap<String, VecDeque<Asked>>,
    /// The peer's lines that were neither a request nor a response (not JSON, no method):
    /// JSON-RPC answers them with an error carrying their id when it can be read.
    invalid: Vec<String>,
}

impl PeerRequests {
    fn read(kind: LinkKind, lines: &[String]) -> Self {
        let mut by_id: HashMap<String, VecDeque<Asked>> = HashMap::new();
        let mut invalid = Vec::new();
        let (Some(plain), wrapped) = (kind.plain(), kind.wrapped()) else {
            return Self { by_id, invalid };
        };
        for line in lines {
            let message = match serde_json::from_str::<Value>(line) {
                Ok(message) if message.is_object() => message,
                _ => {
                    invalid.push(line.clone());
                    continue;
                }
            };
            let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
                if message.get("result").is_none() && message.get("error").is_none() {
                    invalid.push(line.clone());
                }
                continue;
            };
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let asked = if is_proxy_initialize(method) {
                Asked::ProxyInitialize
            } else if let (true, Some(wrapped)) = (is_proxy_successor(method), wrapped) {
                let inner = params["method"].as_str().unwrap_or_default().to_string();
                let inner_params = params.get("params").cloned().unwrap_or(Value::Null);
                Asked::Call {
                    legacy: legacy::method_form(&inner, &inner_params),
                    method: inner,
                    direction: wrapped.opposite(),
                    wrapper: Some(method.to_string()),
                }
            } else {
                Asked::Call {
                    method: method.to_string(),
                    direction: plain.opposite(),
                    legacy: legacy::method_form(method, &params),
                    wrapper: None,
                }
            };
            by_id.entry(id.to_string()).or_default().push_back(asked);
        }
        Self { by_id, invalid }
    }

    /// The earliest request with this id not yet answered.
    fn answer(&mut self, id: &Value) -> Option<Asked> {
        self.by_id.get_mut(&id.to_string())?.pop_front()
    }

    /// Whether an invalid line of the peer's carries `id` (as JSON text, the way the
    /// conductor reads it from a line it cannot parse).
    fn sent_invalid_with(&self, id: &Value) -> bool {
        let id = id.to_string();
        self.invalid
            .iter()
            .any(|line| line.contains(&format!("\"id\":{id}")))
    }
}

fn is_proxy_initialize(method: &str) -> bool {
    matches!(method, "proxy/initialize" | "_proxy/initialize")
}

fn is_proxy_successor(method: &str) -> bool {
    matches!(method, "proxy/successor" | "_proxy/successor")
}

/// Judges every line the conductor wrote on `record`'s link.
pub fn judge_link(record: &LinkRecord) -> Vec<Judged> {
    let mut asked = PeerRequests::read(record.kind, &record.peer_sent);
    record
        .written
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let (what, outcome) = judge_line(record.kind, &mut asked, line);
            let (legacy, verdict) = match outcome {
                Ok(legacy) => (legacy, Ok(())),
                Err(error) => (None, Err(error)),
            };
            Judged {
                link: record.name.clone(),
                kind: record.kind,
                number: index + 1,
                what,
                legacy,
                line: line.clone(),
                verdict,
            }
        })
        .collect()
}

/// What a line is, and the legacy form it is (if any) or why the schema rejected it.
type Outcome = (String, Result<Option<Legacy>, String>);

fn judge_line(kind: LinkKind, asked: &mut PeerRequests, line: &str) -> Outcome {
    let message = match serde_json::from_str::<Value>(line) {
        Ok(message) if message.is_object() => message,
        Ok(_) => {
            return (
                "unreadable line".to_string(),
                Err("not a JSON object".to_string()),
            );
        }
        Err(e) => return ("unreadable line".to_string(), Err(format!("not JSON: {e}"))),
    };
    let method = message
        .get("method")
        .map(|m| m.as_str().unwrap_or_default().to_string());
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let (envelope, (what, outcome)) = match (method, message.get("id").is_some()) {
        (Some(method), true) => (
            envelope::<Request<Value>>(line),
            judge_call(kind, &method, &params, true),
        ),
        (Some(method), false) => (
            envelope::<Notification<Value>>(line),
            judge_call(kind, &method, &params, false),
        ),
        (None, _) => (
            envelope::<Response<Value>>(line),
            judge_response(kind, asked, &message),
        ),
    };
    (what, envelope.and(outcome))
}

/// The JSON-RPC 2.0 envelope, read with the schema's `rpc` types.
fn envelope<M: DeserializeOwned>(line: &str) -> Result<Option<Legacy>, String> {
    serde_json::from_str::<JsonRpcMessage<M>>(line)
        .map(|_| None)
        .map_err(|e| format!("JSON-RPC envelope: {e}"))
}

fn deserialize<T: DeserializeOwned>(value: &Value, what: &str) -> Result<(), String> {
    serde_json::from_value::<T>(value.clone())
        .map(|_| ())
        .map_err(|e| format!("{what}: {e}"))
}

/// A request (`is_request`) or notification the conductor wrote on a link of `kind`.
fn judge_call(kind: LinkKind, method: &str, params: &Value, is_request: bool) -> Outcome {
    let shape = if is_request {
        "request"
    } else {
        "notification"
    };
    let Some(plain) = kind.plain() else {
        // MCP on a shim link: the envelope is all there is to judge.
        return (format!("MCP {shape} {method}"), Ok(None));
    };
    if is_proxy_initialize(method) {
        let what = format!("{shape} {method}");
        if !kind.initializes_proxy() || !is_request {
            return (what, Err(format!("{method} has no place on a {kind} link")));
        }
        return (
            what,
            deserialize::<InitializeProxyRequest>(params, "InitializeProxyRequest").map(|()| None),
        );
    }
    if is_proxy_successor(method) {
        let Some(wrapped) = kind.wrapped() else {
            return (
                format!("{shape} {method}"),
                Err(format!("{method} has no place on a {kind} link")),
            );
        };
        let envelope = if is_request {
            deserialize::<ProxySuccessorRequest>(params, "ProxySuccessorRequest")
        } else {
            deserialize::<ProxySuccessorNotification>(params, "ProxySuccessorNotification")
        };
        let inner_method = params["method"].as_str().unwrap_or_default();
        let inner_params = params.get("params").cloned().unwrap_or(Value::Null);
        let (inner_what, inner) = judge_payload(wrapped, inner_method, &inner_params, is_request);
        let what = format!("{inner_what} in {method}");
        return (what, envelope.and(inner));
    }
    judge_payload(plain, method, params, is_request)
}

/// An ACP request or notification's params, going `direction`.
fn judge_payload(direction: Direction, method: &str, params: &Value, is_request: bool) -> Outcome {
    let shape = if is_request {
        "request"
    } else {
        "notification"
    };
    let mut what = format!("{shape} {method}");
    if method == "session/update"
        && let Some(update) = params["update"]["sessionUpdate"].as_str()
    {
        what = format!("{what} {update}");
    }
    if let Some(form) = legacy::method_form(method, params) {
        return (format!("{what} (legacy)"), Ok(Some(form)));
    }
    let (params, renamed) = match legacy::with_declarations_renamed(method, params) {
        Some(renamed) => (renamed, Some(Legacy::AcpDeclarationWithId)),
        None => (params.clone(), None),
    };
    let outcome = match (direction, is_request) {
        (_, false) if method == "$/cancel_request" => {
            ProtocolLevelNotification::from_method_and_params(method, &params).map(|_| ())
        }
        (Direction::ClientToAgent, true) => {
            ClientRequest::from_method_and_params(method, &params).map(|_| ())
        }
        (Direction::AgentToClient, true) => {
            AgentRequest::from_method_and_params(method, &params).map(|_| ())
        }
        (Direction::ClientToAgent, false) => {
            ClientNotification::from_method_and_params(method, &params).map(|_| ())
        }
        (Direction::AgentToClient, false) => {
            AgentNotification::from_method_and_params(method, &params).map(|_| ())
        }
    };
    let side = match direction {
        Direction::ClientToAgent => "client→agent",
        Direction::AgentToClient => "agent→client",
    };
    (
        what,
        outcome
            .map(|()| renamed)
            .map_err(|e| format!("as a {side} {shape}: {e}")),
    )
}

/// A response the conductor wrote, judged by the request of the peer's it answers.
fn judge_response(kind: LinkKind, asked: &mut PeerRequests, message: &Value) -> Outcome {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let is_error = message.get("error").is_some();
    let outcome = if is_error { "error" } else { "result" };
    if kind == LinkKind::Shim {
        // MCP: no ACP method to judge the result by; the envelope has been judged.
        return (format!("MCP {outcome}"), Ok(None));
    }
    let Some(request) = asked.answer(&id) else {
        if is_error && (id.is_null() || asked.sent_invalid_with(&id)) {
            // JSON-RPC's answer to a line that was not a request: with its id when it could
            // be read, else `null`.
            return ("error for an invalid line".to_string(), Ok(None));
        }
        return (
            format!("{outcome} of nothing"),
            Err(format!("answers no request the peer sent with id {id}")),
        );
    };
    match request {
        Asked::ProxyInitialize => {
            let what = format!("{outcome} of proxy/initialize");
            if is_error {
                return (what, Ok(None));
            }
            let verdict = deserialize::<InitializeProxyResponse>(
                &message["result"],
                "InitializeProxyResponse",
            );
            (what, verdict.map(|()| None))
        }
        Asked::Call {
            method,
            direction,
            legacy,
            wrapper,
        } => {
            let mut what = format!("{outcome} of {method}");
            if let Some(wrapper) = &wrapper {
                what = format!("{what} in {wrapper}");
            }
            if legacy.is_some() {
                return (format!("{what} (legacy)"), Ok(legacy));
            }
            if is_error {
                // The envelope read the error with the schema's `Error`.
                return (what, Ok(None));
            }
            let result = message["result"].clone();
            let wrapped = match wrapper {
                Some(_) => deserialize::<ProxySuccessorResponse>(&result, "ProxySuccessorResponse"),
                None => Ok(()),
            };
            let verdict = match direction {
                Direction::ClientToAgent => {
                    AgentResponse::from_method_and_result(&method, result).map(|_| ())
                }
                Direction::AgentToClient => {
                    ClientResponse::from_method_and_result(&method, result).map(|_| ())
                }
            };
            let verdict = verdict.map_err(|e| format!("as the result of {method}: {e}"));
            (what, wrapped.and(verdict).map(|()| None))
        }
    }
}
