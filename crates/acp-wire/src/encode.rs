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

/// A response as its sender wrote it, `frame`, with only its id (`sent_id`, read from `frame`)
/// replaced by `id`, and, when `rewritten` is given as (the outcome read from `frame`, its new
/// text), that one payload replaced: every other member keeps its place and its bytes, `result`
/// before `id` included. `false`, with nothing written, when what is to be replaced is not a
/// part of `frame`; the caller then writes the response afresh ([`response`]).
///
/// The same one copy as [`response`]: the bytes before the id, the id, the bytes after it.
pub fn response_in_place(
    out: &mut Vec<u8>,
    frame: &[u8],
    sent_id: &RawValue,
    id: &str,
    rewritten: Option<(&RawValue, &RawValue)>,
) -> bool {
    let Some(id_span) = span_in(frame, sent_id) else {
        return false;
    };
    let payload = match rewritten {
        Some((sent, new)) => match span_in(frame, sent) {
            Some(span) => Some((span, new.get())),
            None => return false,
        },
        None => None,
    };
    let mut edits = [Some((id_span, id)), payload];
    edits.sort_by_key(|edit| edit.map(|((start, _), _)| start));
    let mut copied = 0;
    for ((start, end), text) in edits.into_iter().flatten() {
        out.extend_from_slice(&frame[copied..start]);
        out.extend_from_slice(text.as_bytes());
        copied = end;
    }
    out.extend_from_slice(&frame[copied..]);
    true
}

/// Where `value`'s text lies in `frame`, if it is a part of it.
fn span_in(frame: &[u8], value: &RawValue) -> Option<(usize, usize)> {
    let text = value.get().as_bytes();
    let start = (text.as_ptr() as usize).checked_sub(frame.as_ptr() as usize)?;
    let end = start + text.len();
    (end <= frame.len()).then_some((start, end))
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
    fn a_response_in_place_changes_only_its_id() {
        let frame = r#"{"jsonrpc":"2.0","result":{ "stopReason":"end_turn" },"id":2 , "x":[1]}"#;
        let Envelope::Response { id, .. } = parse(frame.as_bytes()).unwrap() else {
            panic!("a response")
        };
        let mut out = Vec::new();
        assert!(response_in_place(
            &mut out,
            frame.as_bytes(),
            id,
            r#""ed-7""#,
            None
        ));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"jsonrpc":"2.0","result":{ "stopReason":"end_turn" },"id":"ed-7" , "x":[1]}"#
        );
    }

    #[test]
    fn a_response_in_place_may_have_its_payload_rewritten_too() {
        let new = raw(r#"{"agentCapabilities":{"mcpCapabilities":{"acp":true}}}"#);
        for (frame, expected) in [
            (
                r#"{"result":{"agentCapabilities":{}},"jsonrpc":"2.0","id":1}"#,
                r#"{"result":{"agentCapabilities":{"mcpCapabilities":{"acp":true}}},"jsonrpc":"2.0","id":0}"#,
            ),
            (
                r#"{"id":1,"jsonrpc":"2.0","result":{"agentCapabilities":{}}}"#,
                r#"{"id":0,"jsonrpc":"2.0","result":{"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#,
            ),
        ] {
            let Envelope::Response {
                id,
                outcome: Outcome::Result(result),
            } = parse(frame.as_bytes()).unwrap()
            else {
                panic!("a result")
            };
            let mut out = Vec::new();
            assert!(response_in_place(
                &mut out,
                frame.as_bytes(),
                id,
                "0",
                Some((result, &new))
            ));
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }

    #[test]
    fn a_response_in_place_needs_its_parts_in_the_frame() {
        let frame = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        let elsewhere = raw("1");
        let mut out = Vec::new();
        assert!(!response_in_place(
            &mut out,
            frame.as_bytes(),
            &elsewhere,
            "2",
            None
        ));
        let Envelope::Response { id, .. } = parse(frame.as_bytes()).unwrap() else {
            panic!("a response")
        };
        let (old, new) = (raw("null"), raw("true"));
        assert!(!response_in_place(
            &mut out,
            frame.as_bytes(),
            id,
            "2",
            Some((&old, &new))
        ));
        assert!(out.is_empty());
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
