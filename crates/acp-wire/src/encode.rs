//! Writing messages by splicing: a fresh envelope around payload bytes copied verbatim.
//! Never builds a `serde_json::Value`; appends to a caller-owned buffer without a newline.

use serde_json::value::RawValue;

use crate::envelope::Outcome;
use crate::successor::EnvelopeMeta;

/// What a request or notification carries: its own method and params, or those of a
/// message wrapped in a `proxy/successor`-style envelope named `via`.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    Plain {
        method: &'a str,
        params: Option<&'a RawValue>,
    },
    Wrapped {
        via: &'a str,
        method: &'a str,
        params: Option<&'a RawValue>,
        meta: EnvelopeMeta<'a>,
    },
}

/// A request (`id: Some`) or notification (`id: None`). A `method` name that needs JSON
/// escaping (one decoded from an MCP message, say) is escaped; names the envelope parser read
/// never do, and are copied as they are.
pub fn call(out: &mut Vec<u8>, id: Option<&str>, call: Call<'_>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.extend_from_slice(b"\"id\":");
        out.extend_from_slice(id.as_bytes());
        out.push(b',');
    }
    match call {
        Call::Plain { method, params } => method_and_params(out, method, params),
        Call::Wrapped {
            via,
            method,
            params,
            meta,
        } => {
            out.extend_from_slice(b"\"method\":\"");
            out.extend_from_slice(via.as_bytes());
            out.extend_from_slice(b"\",\"params\":{");
            method_and_params(out, method, params);
            if let Some(m) = meta.meta {
                out.extend_from_slice(b",\"meta\":");
                out.extend_from_slice(m.get().as_bytes());
            }
            if let Some(m) = meta.underscore_meta {
                out.extend_from_slice(b",\"_meta\":");
                out.extend_from_slice(m.get().as_bytes());
            }
            out.push(b'}');
        }
    }
    out.push(b'}');
}

fn method_and_params(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(b"\"method\":");
    string(out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(p.get().as_bytes());
    }
}

/// `text` as a JSON string: copied between quotes when nothing in it needs escaping (every
/// method name a peer sent plainly), escaped otherwise.
fn string(out: &mut Vec<u8>, text: &str) {
    if text.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        let escaped = serde_json::to_string(text).expect("a string serializes");
        out.extend_from_slice(escaped.as_bytes());
    } else {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

/// A response with the given id text and the result or error bytes as received.
pub fn response(out: &mut Vec<u8>, id: &str, outcome: Outcome<'_>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    match outcome {
        Outcome::Result(r) => {
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(r.get().as_bytes());
        }
        Outcome::Error(e) => {
            out.extend_from_slice(b",\"error\":");
            out.extend_from_slice(e.get().as_bytes());
        }
    }
    out.push(b'}');
}

/// An error response made by the conductor itself.
pub fn error_response(
    out: &mut Vec<u8>,
    id: &str,
    code: i64,
    message: &str,
    data: Option<&RawValue>,
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"error\":");
    error_object(out, code, message, data);
    out.push(b'}');
}

/// `{"code":..,"message":..,"data":..}`.
pub fn error_object(out: &mut Vec<u8>, code: i64, message: &str, data: Option<&RawValue>) {
    out.extend_from_slice(b"{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    json_string(out, message);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        out.extend_from_slice(d.get().as_bytes());
    }
    out.push(b'}');
}

/// Appends `s` as a JSON string literal.
pub fn json_string(out: &mut Vec<u8>, s: &str) {
    // Writing into a Vec cannot fail.
    serde_json::to_writer(&mut *out, s).expect("write to Vec");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_that_need_escaping_are_escaped() {
        for method in ["a\"b", "back\\slash", "line\nbreak", "plain/name"] {
            let mut out = Vec::new();
            call(
                &mut out,
                Some("1"),
                Call::Plain {
                    method,
                    params: None,
                },
            );
            let parsed: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
            assert_eq!(parsed["method"], method);
            assert_eq!(parsed.as_object().unwrap().len(), 3, "no member injected");
        }
    }
    use crate::envelope::{Envelope, parse};

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn plain_request_and_notification() {
        let p = raw(r#"{ "a" : 1 }"#);
        assert_eq!(
            text(|o| call(
                o,
                Some("7"),
                Call::Plain {
                    method: "session/prompt",
                    params: Some(&p)
                }
            )),
            r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{ "a" : 1 }}"#
        );
        assert_eq!(
            text(|o| call(
                o,
                None,
                Call::Plain {
                    method: "session/cancel",
                    params: None
                }
            )),
            r#"{"jsonrpc":"2.0","method":"session/cancel"}"#
        );
    }

    #[test]
    fn wrapped_call_nests_params_and_meta() {
        let p = raw(r#"{"x":1}"#);
        let m = raw(r#"{"trace":"t"}"#);
        let s = text(|o| {
            call(
                o,
                Some("\"id\""),
                Call::Wrapped {
                    via: "proxy/successor",
                    method: "initialize",
                    params: Some(&p),
                    meta: EnvelopeMeta {
                        meta: None,
                        underscore_meta: Some(&m),
                    },
                },
            )
        });
        assert_eq!(
            s,
            r#"{"jsonrpc":"2.0","id":"id","method":"proxy/successor","params":{"method":"initialize","params":{"x":1},"_meta":{"trace":"t"}}}"#
        );
        // What we write parses back to what we wrapped.
        match parse(s.as_bytes()).unwrap() {
            Envelope::Request { params, .. } => {
                let w = crate::successor::unwrap(params).unwrap();
                assert_eq!(w.method, "initialize");
                assert_eq!(w.params.unwrap().get(), r#"{"x":1}"#);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn responses_keep_id_and_payload_bytes() {
        let r = raw(r#"{"stopReason" :"end_turn"}"#);
        assert_eq!(
            text(|o| response(o, "9007199254740993", Outcome::Result(&r))),
            r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{"stopReason" :"end_turn"}}"#
        );
        assert_eq!(
            text(|o| error_response(o, "null", -32700, "bad \"json\"\n", None)),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"json\"\n"}}"#
        );
    }
}
