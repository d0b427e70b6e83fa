//! The JSON-RPC 2.0 envelope of one frame, as borrowed views into the line's bytes.
//! Classifies request / notification / response / invalid; never looks inside payloads.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A well-formed JSON-RPC 2.0 message. Payloads stay raw so they can be forwarded
/// byte-for-byte.
#[derive(Debug, Clone, Copy)]
pub enum Envelope<'a> {
    Request {
        id: &'a RawValue,
        method: &'a str,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: &'a str,
        params: Option<&'a RawValue>,
    },
    Response {
        id: &'a RawValue,
        outcome: Outcome<'a>,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    Result(&'a RawValue),
    Error(&'a RawValue),
}

/// Why a frame is not a usable JSON-RPC 2.0 message, with the id to answer if one could
/// be read (`None` means the error response carries `"id": null`).
#[derive(Debug, Clone)]
pub enum Invalid<'a> {
    NotUtf8,
    /// Not JSON at all (JSON-RPC -32700).
    NotJson(String),
    /// A JSON array: batches are not part of ACP (-32600).
    Batch,
    /// JSON, but not a JSON-RPC 2.0 object (-32600).
    NotJsonRpc {
        id: Option<&'a RawValue>,
        reason: &'static str,
    },
}

impl Invalid<'_> {
    /// The JSON-RPC error code this deserves.
    pub fn code(&self) -> i64 {
        match self {
            Invalid::NotUtf8 | Invalid::NotJson(_) => crate::error_code::PARSE_ERROR,
            Invalid::Batch | Invalid::NotJsonRpc { .. } => crate::error_code::INVALID_REQUEST,
        }
    }

    /// The id an error response should carry, as JSON text.
    pub fn reply_id(&self) -> &str {
        match self {
            Invalid::NotJsonRpc { id: Some(id), .. } => id.get(),
            _ => "null",
        }
    }
}

impl std::fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::NotUtf8 => f.write_str("message is not valid UTF-8"),
            Invalid::NotJson(e) => write!(f, "message is not valid JSON: {e}"),
            Invalid::Batch => f.write_str("JSON-RPC batches are not supported"),
            Invalid::NotJsonRpc { reason, .. } => write!(f, "not a JSON-RPC 2.0 message: {reason}"),
        }
    }
}

/// Every member as raw text; `null` stays distinguishable from absent.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// Classifies one frame. Validates that the whole line is JSON (so a peer is never
/// handed a malformed payload) but only decodes the envelope members.
pub fn parse(line: &[u8]) -> Result<Envelope<'_>, Invalid<'_>> {
    let text = std::str::from_utf8(line).map_err(|_| Invalid::NotUtf8)?;
    let first = text.trim_start().as_bytes().first().copied();
    if first == Some(b'[') {
        // Still tell a malformed array apart from a batch.
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(Invalid::Batch),
            Err(e) => Err(Invalid::NotJson(e.to_string())),
        };
    }
    if first != Some(b'{') {
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(Invalid::NotJsonRpc {
                id: None,
                reason: "expected a JSON object",
            }),
            Err(e) => Err(Invalid::NotJson(e.to_string())),
        };
    }
    let m: Members<'_> = serde_json::from_str(text).map_err(|e| Invalid::NotJson(e.to_string()))?;
    classify(m)
}

fn classify(m: Members<'_>) -> Result<Envelope<'_>, Invalid<'_>> {
    let id = match m.id {
        Some(id) if !is_valid_id(id) => {
            return Err(Invalid::NotJsonRpc {
                id: None,
                reason: "`id` must be a string, a number or null",
            });
        }
        other => other,
    };
    let invalid = |reason| Err(Invalid::NotJsonRpc { id, reason });
    if m.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if let Some(method) = m.method {
        let Some(method) = plain_str(method) else {
            return invalid("`method` must be a string without escapes");
        };
        if m.result.is_some() || m.error.is_some() {
            return invalid("a request cannot carry `result` or `error`");
        }
        if let Some(p) = m.params
            && !matches!(p.get().as_bytes().first(), Some(b'{' | b'['))
        {
            return invalid("`params` must be an object or an array");
        }
        return Ok(match id {
            Some(id) => Envelope::Request {
                id,
                method,
                params: m.params,
            },
            None => Envelope::Notification {
                method,
                params: m.params,
            },
        });
    }
    let Some(id) = id else {
        return invalid("neither `method` nor `id`");
    };
    match (m.result, m.error) {
        (Some(result), None) => Ok(Envelope::Response {
            id,
            outcome: Outcome::Result(result),
        }),
        (None, Some(error)) if error.get().starts_with('{') => Ok(Envelope::Response {
            id,
            outcome: Outcome::Error(error),
        }),
        (None, Some(_)) => invalid("`error` must be an object"),
        (Some(_), Some(_)) => invalid("a response cannot carry both `result` and `error`"),
        (None, None) => invalid("a response needs `result` or `error`"),
    }
}

fn is_valid_id(id: &RawValue) -> bool {
    matches!(
        id.get().as_bytes().first(),
        Some(b'"' | b'-' | b'0'..=b'9' | b'n')
    )
}

/// The contents of a JSON string with no escape sequences, borrowed. Method names in
/// practice never need escapes; one that does is treated as invalid rather than copied.
fn plain_str(raw: &RawValue) -> Option<&str> {
    let s = raw.get();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

/// Decodes a JSON string value (escapes resolved). For ids and small fields only.
pub fn decode_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

/// What the first bytes of a message too long to parse reveal about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peek {
    /// The top-level `id` as JSON text, when it appears whole in the bytes given.
    pub id: Option<String>,
    /// A top-level `method` appeared (so it is a request, not a response).
    pub method: bool,
}

/// Scans the top-level members at the start of a (possibly cut-off) JSON object without
/// validating the rest. Used to answer a request whose line was too long to keep.
pub fn peek_id(head: &[u8]) -> Peek {
    let mut peek = Peek::default();
    let mut s = Scanner { b: head, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return peek;
    }
    loop {
        s.ws();
        let Some(key) = s.string() else { return peek };
        s.ws();
        if !s.eat(b':') {
            return peek;
        }
        s.ws();
        let start = s.i;
        if !s.value() {
            return peek;
        }
        let value = &head[start..s.i];
        match key {
            b"\"id\"" => {
                // Only an id `parse` would accept: the answer must be a valid response.
                let id = std::str::from_utf8(value)
                    .ok()
                    .and_then(|t| serde_json::from_str::<&RawValue>(t).ok())
                    .filter(|id| is_valid_id(id));
                if let Some(id) = id {
                    peek.id = Some(id.get().to_string());
                }
            }
            b"\"method\"" => peek.method = true,
            _ => {}
        }
        s.ws();
        if !s.eat(b',') {
            return peek;
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A whole string literal, quotes included; `None` if cut off.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if !self.eat(b'"') {
            return None;
        }
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(&self.b[start..self.i]);
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value; false if it is cut off.
    fn value(&mut self) -> bool {
        match self.b.get(self.i) {
            None => false,
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    match self.b.get(self.i) {
                        None => return false,
                        Some(b'"') => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        Some(b'{' | b'[') => depth += 1,
                        Some(b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            Some(_) => {
                while let Some(c) = self.b.get(self.i) {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                        return true;
                    }
                    self.i += 1;
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peeks_the_id_of_a_cut_off_message() {
        let p = peek_id(br#"{"jsonrpc":"2.0","id":"a\"}b","method":"session/prompt","params":{"prompt":[{"text":"xxxx"#);
        assert_eq!(p.id.as_deref(), Some(r#""a\"}b""#));
        assert!(p.method);
        let p = peek_id(
            br#"{"params":{"id":5,"x":["}"]},"id":9007199254740993,"method":"m","params2":"xx"#,
        );
        assert_eq!(p.id.as_deref(), Some("9007199254740993"));
        let p = peek_id(br#"{"jsonrpc":"2.0","result":{"content":"xxxxxxx"#);
        assert_eq!(p, Peek::default());
        let p = peek_id(br#"{"id":12"#);
        assert_eq!(p.id, None, "a number cut off at the end is not trusted");
        // An id that is not a string, number or null would make an invalid answer.
        for id in [r#"{"a":1}"#, "[1]", "true"] {
            let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":"xx"#);
            assert_eq!(peek_id(head.as_bytes()).id, None, "{id}");
        }
        assert_eq!(peek_id(b"garbage"), Peek::default());
    }

    fn env(line: &str) -> Envelope<'_> {
        parse(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    #[test]
    fn classifies_request_notification_response() {
        match env(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"a":1}}"#) {
            Envelope::Request { id, method, params } => {
                assert_eq!(id.get(), "0");
                assert_eq!(method, "initialize");
                assert_eq!(params.unwrap().get(), r#"{"a":1}"#);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","method":"session/update"}"#),
            Envelope::Notification {
                method: "session/update",
                params: None
            }
        ));
        match env(r#"{"id":"x","jsonrpc":"2.0","result":null}"#) {
            Envelope::Response {
                id,
                outcome: Outcome::Result(r),
            } => {
                assert_eq!(id.get(), r#""x""#);
                assert_eq!(r.get(), "null");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#),
            Envelope::Response {
                outcome: Outcome::Error(_),
                ..
            }
        ));
    }

    #[test]
    fn ids_keep_their_exact_text() {
        for id in [
            "0",
            "-1",
            "\"0\"",
            "9007199254740993",
            r#""a\"b\\c\u00e9""#,
            "1.5e3",
            "null",
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            match parse(line.as_bytes()).unwrap() {
                Envelope::Request { id: got, .. } => assert_eq!(got.get(), id),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn payload_bytes_are_untouched() {
        let params = r#"{ "b" : [1, 2.50, 1e400, "\u0041"], "a":{} }"#;
        let line = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{params}}}"#);
        match parse(line.as_bytes()).unwrap() {
            Envelope::Notification { params: p, .. } => assert_eq!(p.unwrap().get(), params),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invalid_messages_are_reported_with_their_code() {
        let cases: &[(&[u8], i64, &str)] = &[
            (b"\xff\xfe", -32700, "null"),
            (b"{not json", -32700, "null"),
            (b"[]", -32600, "null"),
            (b"[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]", -32600, "null"),
            (b"[1,", -32700, "null"),
            (b"42", -32600, "null"),
            (b"\"str\"", -32600, "null"),
            (br#"{"id":3,"method":"m"}"#, -32600, "3"),
            (br#"{"jsonrpc":"1.0","id":3,"method":"m"}"#, -32600, "3"),
            (br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, -32600, "null"),
            (br#"{"jsonrpc":"2.0","id":4,"method":5}"#, -32600, "4"),
            (
                br#"{"jsonrpc":"2.0","id":4,"method":"m","params":3}"#,
                -32600,
                "4",
            ),
            (br#"{"jsonrpc":"2.0","id":5}"#, -32600, "5"),
            (
                br#"{"jsonrpc":"2.0","id":5,"result":1,"error":{}}"#,
                -32600,
                "5",
            ),
            (br#"{"jsonrpc":"2.0","id":5,"error":"bad"}"#, -32600, "5"),
            (br#"{"jsonrpc":"2.0"}"#, -32600, "null"),
            (
                br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
                -32700,
                "null",
            ),
            (br#"{"jsonrpc":"2.0","method":"m"} x"#, -32700, "null"),
        ];
        for (line, code, id) in cases {
            let err = parse(line).expect_err(&String::from_utf8_lossy(line));
            assert_eq!(err.code(), *code, "{}", String::from_utf8_lossy(line));
            assert_eq!(err.reply_id(), *id, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn null_id_request_is_a_request() {
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#),
            Envelope::Request { .. }
        ));
    }

    #[test]
    fn unknown_top_level_members_are_ignored() {
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","method":"m","extra":{"deep":[1]}}"#),
            Envelope::Notification { method: "m", .. }
        ));
    }
}
