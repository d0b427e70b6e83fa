//! JSON-RPC lines as raw bytes: reading the members of one line and writing new lines.
//! Shared by the fixtures and the editor harness; knows nothing of ACP methods or chains.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

/// One received line, its top-level members kept as the exact text that arrived, so that
/// ids and payloads can be sent on without being re-encoded (big integers, escapes).
#[derive(Debug)]
pub struct RawMessage {
    members: BTreeMap<String, Box<RawValue>>,
}

impl RawMessage {
    /// Parses one line; fails on anything that is not a JSON object.
    pub fn parse(line: &str) -> Result<Self, serde_json::Error> {
        Ok(Self {
            members: serde_json::from_str(line)?,
        })
    }

    /// A member's raw text, if present (`null` counts as present).
    pub fn member(&self, name: &str) -> Option<&RawValue> {
        self.members.get(name).map(|raw| &**raw)
    }

    pub fn id(&self) -> Option<&RawValue> {
        self.member("id")
    }

    /// The id as a value, for comparisons where the spelling does not matter.
    pub fn id_value(&self) -> Option<Value> {
        self.id().map(to_value)
    }

    pub fn method(&self) -> Option<String> {
        self.member("method")
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
    }

    pub fn params(&self) -> Option<&RawValue> {
        self.member("params")
    }

    /// The params as a value (`Null` when absent).
    pub fn params_value(&self) -> Value {
        self.params().map_or(Value::Null, to_value)
    }

    /// A request has a method and an id.
    pub fn is_request(&self) -> bool {
        self.members.contains_key("method") && self.members.contains_key("id")
    }

    pub fn is_notification(&self) -> bool {
        self.members.contains_key("method") && !self.members.contains_key("id")
    }

    pub fn is_response(&self) -> bool {
        !self.members.contains_key("method")
            && (self.members.contains_key("result") || self.members.contains_key("error"))
    }

    /// The `result` or `error` member of a response, with its name, as raw text.
    pub fn outcome(&self) -> Option<(&'static str, &RawValue)> {
        if let Some(result) = self.member("result") {
            Some(("result", result))
        } else {
            self.member("error").map(|error| ("error", error))
        }
    }
}

/// A raw JSON text as a value.
pub fn to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("RawValue holds valid JSON")
}

/// `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}` with `id` and
/// `params` written exactly as given.
pub fn request_line(id: &str, method: &str, params: Option<&str>) -> String {
    let method = Value::from(method);
    match params {
        Some(params) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{params}}}"#)
        }
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method}}}"#),
    }
}

pub fn notification_line(method: &str, params: Option<&str>) -> String {
    let method = Value::from(method);
    match params {
        Some(params) => format!(r#"{{"jsonrpc":"2.0","method":{method},"params":{params}}}"#),
        None => format!(r#"{{"jsonrpc":"2.0","method":{method}}}"#),
    }
}

/// A response whose `kind` is `"result"` or `"error"`, both texts written as given.
pub fn response_line(id: &str, kind: &str, outcome: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"{kind}":{outcome}}}"#)
}

pub fn result_line(id: &str, result: &Value) -> String {
    response_line(id, "result", &result.to_string())
}

pub fn error_line(id: &str, code: i64, message: &str) -> String {
    let error = serde_json::json!({ "code": code, "message": message });
    response_line(id, "error", &error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_params_keep_their_spelling() {
        let line = r#"{"jsonrpc":"2.0","id":"a\"b\\c\u00e9","method":"m","params":{"n":9007199254740993}}"#;
        let message = RawMessage::parse(line).unwrap();
        assert_eq!(message.id().unwrap().get(), r#""a\"b\\c\u00e9""#);
        assert_eq!(message.params().unwrap().get(), r#"{"n":9007199254740993}"#);
        assert!(message.is_request());
        assert_eq!(
            request_line(
                message.id().unwrap().get(),
                "m",
                Some(message.params().unwrap().get())
            ),
            line
        );
    }

    #[test]
    fn kinds_are_told_apart() {
        let notification = RawMessage::parse(r#"{"jsonrpc":"2.0","method":"n"}"#).unwrap();
        assert!(notification.is_notification() && !notification.is_request());
        let response = RawMessage::parse(r#"{"jsonrpc":"2.0","id":0,"result":null}"#).unwrap();
        assert!(response.is_response());
        assert_eq!(response.outcome().unwrap().0, "result");
        assert_eq!(response.id_value(), Some(Value::from(0)));
    }
}
