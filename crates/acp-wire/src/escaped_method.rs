//! A frame whose method name is written with JSON escapes (`"session\/close"`, as PHP's
//! `json_encode` writes it), rewritten with the name decoded. Knows no methods but the wrappers'.
//!
//! Envelopes borrow the method's text from the frame ([`crate::Envelope`]), so a method with
//! escapes cannot be borrowed as the name it means and is refused. This is the cold path that
//! rescues such a frame: called only once a frame was refused for it (or a `proxy/successor`'s
//! inner method has escapes), it copies the frame with the escaped names decoded, so the copy
//! parses as the same message; every other byte stays as it was. Ordinary frames never come
//! here and are never copied.

use std::borrow::Cow;

use crate::scan::{Scanned, scan};
use crate::successor::Dialect;

/// `line` with its `method`, and for a `proxy/successor` (either dialect) its inner `method`,
/// written without escapes; `None` when neither has escapes, when the line is not one JSON
/// object with plainly named members, or when a decoded name would still need an escape (a
/// quote, a backslash or a control character: no method is named so).
pub fn with_plain_methods(line: &[u8]) -> Option<Vec<u8>> {
    let scanned = scan(line)?;
    let method_span = scanned.envelope.method?;
    let method = decoded(&scanned, method_span)?;
    let mut edits = Vec::with_capacity(2);
    if let Cow::Owned(plain) = &method {
        edits.push((method_span, plain.clone()));
    }
    if Dialect::of_successor(&method).is_some()
        && let Some(inner_span) = scanned.wrapper.as_ref().and_then(|w| w.method)
        && let Cow::Owned(plain) = decoded(&scanned, inner_span)?
    {
        edits.push((inner_span, plain));
    }
    if edits.is_empty() {
        return None;
    }
    // The members may come in any order.
    edits.sort_by_key(|&((start, _), _)| start);
    let mut out = Vec::with_capacity(line.len());
    let mut copied = 0;
    for ((start, end), plain) in edits {
        out.extend_from_slice(&line[copied..start]);
        out.push(b'"');
        out.extend_from_slice(plain.as_bytes());
        out.push(b'"');
        copied = end;
    }
    out.extend_from_slice(&line[copied..]);
    Some(out)
}

/// The string at `span` decoded: borrowed when it has no escapes, owned when it had some;
/// `None` when it is not a string or its name would need an escape again.
fn decoded<'a>(scanned: &Scanned<'a>, span: (usize, usize)) -> Option<Cow<'a, str>> {
    let quoted = &scanned.text[span.0..span.1];
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    let name: String = serde_json::from_str(quoted).ok()?;
    let needs_escape = name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
    (!needs_escape).then_some(Cow::Owned(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Envelope, parse};
    use crate::successor;

    fn plain(line: &str) -> Option<String> {
        with_plain_methods(line.as_bytes()).map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn an_escaped_method_is_decoded_and_nothing_else_moves() {
        let line = r#"{"jsonrpc":"2.0", "id":"a\/b","method":"session\/close" ,"params":{"sessionId":"s\/1"}}"#;
        assert!(parse(line.as_bytes()).is_err(), "refused as it stands");
        let rewritten = plain(line).unwrap();
        assert_eq!(
            rewritten,
            r#"{"jsonrpc":"2.0", "id":"a\/b","method":"session/close" ,"params":{"sessionId":"s\/1"}}"#
        );
        match parse(rewritten.as_bytes()).unwrap() {
            Envelope::Request { id, method, params } => {
                assert_eq!(id.get(), r#""a\/b""#);
                assert_eq!(method, "session/close");
                assert_eq!(params.unwrap().get(), r#"{"sessionId":"s\/1"}"#);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            plain(r#"{"jsonrpc":"2.0","method":"\u0073ession/cancel","params":{}}"#).as_deref(),
            Some(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#)
        );
        assert_eq!(
            plain(r#"{"method":"_vendor\/caf\u00e9"}"#).as_deref(),
            Some(r#"{"method":"_vendor/café"}"#)
        );
    }

    #[test]
    fn a_successors_inner_method_is_decoded_too() {
        let line = r#"{"jsonrpc":"2.0","id":3,"method":"proxy\/successor","params":{"method":"session\/update","params":{"x":"\/"},"_meta":{}}}"#;
        let rewritten = plain(line).unwrap();
        assert_eq!(
            rewritten,
            r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/update","params":{"x":"\/"},"_meta":{}}}"#
        );
        match parse(rewritten.as_bytes()).unwrap() {
            Envelope::Request { params, .. } => {
                let wrapped = successor::unwrap(params).unwrap();
                assert_eq!(wrapped.method, "session/update");
            }
            other => panic!("{other:?}"),
        }
        // The envelope's method plain, the inner one escaped (either dialect).
        assert_eq!(
            plain(r#"{"method":"_proxy/successor","params":{"method":"fs\/read_text_file"}}"#)
                .as_deref(),
            Some(r#"{"method":"_proxy/successor","params":{"method":"fs/read_text_file"}}"#)
        );
        // Members in any order.
        assert_eq!(
            plain(r#"{"params":{"method":"a\/b"},"method":"proxy\/successor"}"#).as_deref(),
            Some(r#"{"params":{"method":"a/b"},"method":"proxy/successor"}"#)
        );
        // Anything else's params are payload: an MCP message's own method is not touched.
        assert_eq!(
            plain(r#"{"method":"mcp/message","params":{"method":"tools\/call"}}"#),
            None
        );
    }

    #[test]
    fn nothing_to_decode_or_nothing_safe_to_write_is_left_alone() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"session/close"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"method":"a\/b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\"b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\\b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\nb"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"a\/b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\/b","method":"c"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a\/b""#,
            "[]",
        ] {
            assert_eq!(plain(line), None, "{line}");
        }
    }
}
