//! The JSON-RPC 2.0 envelope of one frame, as borrowed views into the line's bytes.
//! Classifies request / notification / response / invalid; never looks inside payloads.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::frame::TopLevel;
use crate::successor::WrapperMembers;

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

/// What kind of message a frame meant to be, as far as its top-level members tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// It has a `method`: a request or a notification, which may be answered.
    Call,
    /// No `method`, but a `result` or an `error`: a response, which is never answered.
    Response,
    /// Neither.
    Unknown,
}

/// Why a frame is not a usable JSON-RPC 2.0 message, with the id to answer if one could
/// be read (`None` means the error response carries `"id": null`) and its [`Shape`].
///
/// A frame that is not UTF-8 or not JSON is still scanned ([`TopLevel`]): when its top level
/// shows a string or number `id` before anything breaks, that id is answered, so that an
/// editor whose prompt carried one stray byte can match the error to its request.
#[derive(Debug, Clone)]
pub enum Invalid<'a> {
    /// Not UTF-8 (JSON-RPC -32700).
    NotUtf8 { seen: TopLevel },
    /// Not JSON at all (-32700).
    NotJson { error: String, seen: TopLevel },
    /// A JSON array: batches are not part of ACP (-32600).
    Batch,
    /// JSON, but not a JSON-RPC 2.0 object (-32600).
    NotJsonRpc {
        id: Option<&'a RawValue>,
        reason: &'static str,
        shape: Shape,
    },
}

impl Invalid<'_> {
    /// The JSON-RPC error code this deserves.
    pub fn code(&self) -> i64 {
        match self {
            Invalid::NotUtf8 { .. } | Invalid::NotJson { .. } => crate::error_code::PARSE_ERROR,
            Invalid::Batch | Invalid::NotJsonRpc { .. } => crate::error_code::INVALID_REQUEST,
        }
    }

    /// The id the frame carried, as JSON text, if one could be read.
    pub fn id(&self) -> Option<&str> {
        match self {
            Invalid::NotUtf8 { seen } | Invalid::NotJson { seen, .. } => seen.id.as_deref(),
            Invalid::NotJsonRpc { id, .. } => id.map(RawValue::get),
            Invalid::Batch => None,
        }
    }

    /// The id an error response should carry, as JSON text.
    pub fn reply_id(&self) -> &str {
        self.id().unwrap_or("null")
    }

    pub fn shape(&self) -> Shape {
        match self {
            Invalid::NotUtf8 { seen } | Invalid::NotJson { seen, .. } => seen.shape(),
            Invalid::NotJsonRpc { shape, .. } => *shape,
            Invalid::Batch => Shape::Unknown,
        }
    }
}

impl std::fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::NotUtf8 { .. } => f.write_str("message is not valid UTF-8"),
            Invalid::NotJson { error, .. } => write!(f, "message is not valid JSON: {error}"),
            Invalid::Batch => f.write_str("JSON-RPC batches are not supported"),
            Invalid::NotJsonRpc { reason, .. } => write!(f, "not a JSON-RPC 2.0 message: {reason}"),
        }
    }
}

/// Every member as raw text; `null` stays distinguishable from absent.
#[derive(Deserialize)]
pub(crate) struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pub(crate) error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// A frame's envelope, and what its one validating pass found of a `proxy/successor`
/// wrapper in its `params` (for [`crate::successor::unwrap_found`]).
#[derive(Debug, Clone, Copy)]
pub struct Parsed<'a> {
    pub envelope: Envelope<'a>,
    pub wrapper: WrapperMembers<'a>,
}

/// Classifies one frame. Validates that the whole line is JSON (so a peer is never
/// handed a malformed payload) but only decodes the envelope members.
pub fn parse(line: &[u8]) -> Result<Envelope<'_>, Invalid<'_>> {
    parse_frame(line).map(|parsed| parsed.envelope)
}

/// [`parse`], also keeping where the members of an object `params` are, so that unwrapping
/// a `proxy/successor` does not scan the payload again. One pass over the line
/// ([`crate::scan`]) for a valid frame; anything that pass leaves alone, invalid frames
/// included, is read by serde_json as before, which says what is wrong.
pub fn parse_frame(line: &[u8]) -> Result<Parsed<'_>, Invalid<'_>> {
    let Some(scanned) = crate::scan::scan(line) else {
        return parse_with_serde(line).map(|envelope| Parsed {
            envelope,
            wrapper: WrapperMembers::default(),
        });
    };
    let e = &scanned.envelope;
    let members = Members {
        jsonrpc: scanned.raw(e.jsonrpc),
        id: scanned.raw(e.id),
        method: scanned.raw(e.method),
        params: scanned.raw(e.params),
        result: scanned.raw(e.result),
        error: scanned.raw(e.error),
    };
    let wrapper = scanned
        .wrapper
        .as_ref()
        .map_or_else(WrapperMembers::default, |w| {
            WrapperMembers::found(
                scanned.raw(w.method),
                scanned.raw(w.params),
                scanned.raw(w.meta),
                scanned.raw(w.underscore_meta),
                w.repeated,
            )
        });
    classify(members).map(|envelope| Parsed { envelope, wrapper })
}

/// The envelope as serde_json reads it: `from_utf8`, then a pass that validates the JSON
/// and decodes the envelope members. For the frames [`crate::scan`] leaves alone.
pub(crate) fn parse_with_serde(line: &[u8]) -> Result<Envelope<'_>, Invalid<'_>> {
    let not_json = |e: serde_json::Error| Invalid::NotJson {
        error: e.to_string(),
        seen: TopLevel::of(line),
    };
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(Invalid::NotUtf8 {
            seen: TopLevel::of(line),
        });
    };
    let first = text.trim_start().as_bytes().first().copied();
    if first == Some(b'[') {
        // Still tell a malformed array apart from a batch.
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(Invalid::Batch),
            Err(e) => Err(not_json(e)),
        };
    }
    if first != Some(b'{') {
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(Invalid::NotJsonRpc {
                id: None,
                reason: "expected a JSON object",
                shape: Shape::Unknown,
            }),
            Err(e) => Err(not_json(e)),
        };
    }
    let m: Members<'_> = serde_json::from_str(text).map_err(not_json)?;
    classify(m)
}

fn classify(m: Members<'_>) -> Result<Envelope<'_>, Invalid<'_>> {
    let shape = if m.method.is_some() {
        Shape::Call
    } else if m.result.is_some() || m.error.is_some() {
        Shape::Response
    } else {
        Shape::Unknown
    };
    let id = match m.id.map(|id| (id, id_kind(id))) {
        None => None,
        Some((id, IdKind::Integer | IdKind::String)) => Some(id),
        // A null id can only be answered with null, which is also the id of the answer to a
        // message no one could read: a request must not use it. A response may (it is how a
        // peer answers what it could not read).
        Some((id, IdKind::Null)) if shape == Shape::Call => {
            return Err(Invalid::NotJsonRpc {
                id: Some(id),
                reason: "a request's `id` must be a string or an integer, not null",
                shape,
            });
        }
        Some((id, IdKind::Null)) => Some(id),
        // Still answered with the number as written, so that its sender can match it.
        Some((id, IdKind::Fraction)) => {
            return Err(Invalid::NotJsonRpc {
                id: Some(id),
                reason: "`id` must be a string or an integer, not a number with a fraction or an exponent",
                shape,
            });
        }
        Some((_, IdKind::Other)) => {
            return Err(Invalid::NotJsonRpc {
                id: None,
                reason: "`id` must be a string or an integer",
                shape,
            });
        }
    };
    let invalid = |reason| Err(Invalid::NotJsonRpc { id, reason, shape });
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
        // `"params": null` is sent by peers in the wild and means no params, as the official
        // schema reads it (JSON-RPC itself would refuse it).
        let params = m.params.filter(|p| p.get() != "null");
        if let Some(p) = params
            && !matches!(p.get().as_bytes().first(), Some(b'{' | b'['))
        {
            return invalid("`params` must be an object or an array");
        }
        return Ok(match id {
            Some(id) => Envelope::Request { id, method, params },
            None => Envelope::Notification { method, params },
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

/// The JSON types an `id` can have, as ACP sees them: its ids are strings or integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdKind {
    String,
    Integer,
    /// A number with a fraction or an exponent (`1.5`, `1e3`).
    Fraction,
    Null,
    /// An object, an array or a boolean.
    Other,
}

fn id_kind(id: &RawValue) -> IdKind {
    let text = id.get().as_bytes();
    match text.first() {
        Some(b'"') => IdKind::String,
        Some(b'n') => IdKind::Null,
        Some(b'-' | b'0'..=b'9') if text.iter().all(|b| matches!(b, b'-' | b'0'..=b'9')) => {
            IdKind::Integer
        }
        Some(b'-' | b'0'..=b'9') => IdKind::Fraction,
        _ => IdKind::Other,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn params_null_means_no_params_and_other_scalars_are_refused() {
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","id":3,"method":"session/list","params":null}"#),
            Envelope::Request { params: None, .. }
        ));
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","method":"_vendor/tick","params" : null }"#),
            Envelope::Notification { params: None, .. }
        ));
        for params in ["1", "\"x\"", "true"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"m","params":{params}}}"#);
            assert!(parse(line.as_bytes()).is_err(), "{line}");
        }
    }

    #[test]
    fn ids_keep_their_exact_text() {
        for id in [
            "0",
            "-1",
            "\"0\"",
            "9007199254740993",
            "-7",
            "18446744073709551616",
            r#""a\"b\\c\u00e9""#,
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
            (br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, -32600, "1.5"),
            (br#"{"jsonrpc":"2.0","id":2e3,"method":"m"}"#, -32600, "2e3"),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
                -32600,
                "null",
            ),
            (
                br#"{"jsonrpc":"2.0","id":[7],"method":"m"}"#,
                -32600,
                "null",
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
                -32600,
                "null",
            ),
            (br#"{"jsonrpc":"2.0","id":2.5,"result":1}"#, -32600, "2.5"),
            (
                br#"{"jsonrpc":"2.0","id":false,"result":1}"#,
                -32600,
                "null",
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"m\",\"params\":{\"t\":\"\xff\"}}",
                -32700,
                "4",
            ),
            (
                br#"{"jsonrpc":"2.0","params":{bad},"id":"x","method":"m"}"#,
                -32700,
                r#""x""#,
            ),
            (
                br#"{"jsonrpc":"2.0","params":{"a":1}},"id":"x","method":"m"}"#,
                -32700,
                "null",
            ),
            (
                br#"{"jsonrpc":"2.0","id":"x","method":"m","params":{bad}}"#,
                -32700,
                r#""x""#,
            ),
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
    fn a_null_id_is_refused_on_a_request_and_kept_on_a_response() {
        let err = parse(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).unwrap_err();
        assert_eq!((err.code(), err.shape()), (-32600, Shape::Call));
        match env(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#) {
            Envelope::Response { id, .. } => assert_eq!(id.get(), "null"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_invalid_message_tells_whether_it_meant_to_be_a_response() {
        let cases: &[(&[u8], Shape)] = &[
            (
                br#"{"jsonrpc":"2.0","id":5,"result":1,"error":{}}"#,
                Shape::Response,
            ),
            (br#"{"jsonrpc":"1.0","id":5,"result":1}"#, Shape::Response),
            (
                br#"{"jsonrpc":"2.0","id":5,"error":"bad"}"#,
                Shape::Response,
            ),
            (br#"{"jsonrpc":"2.0","id":{},"result":1}"#, Shape::Response),
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"m","result":1}"#,
                Shape::Call,
            ),
            (br#"{"id":5,"method":"m"}"#, Shape::Call),
            (br#"{"jsonrpc":"2.0","id":5}"#, Shape::Unknown),
            (b"{\"id\":5,\"result\":\"\xff\"}", Shape::Response),
            (br#"{"id":5,"result":{"a":}}"#, Shape::Response),
            (b"[]", Shape::Unknown),
            (b"garbage", Shape::Unknown),
        ];
        for (line, shape) in cases {
            let err = parse(line).expect_err(&String::from_utf8_lossy(line));
            assert_eq!(err.shape(), *shape, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn unknown_top_level_members_are_ignored() {
        assert!(matches!(
            env(r#"{"jsonrpc":"2.0","method":"m","extra":{"deep":[1]}}"#),
            Envelope::Notification { method: "m", .. }
        ));
    }
}
