//! What a record says about its frame: kind, method, the `proxy/successor` wrapper, id and
//! session, read from the line itself. Pure; runs on the trace thread, never on the router's.

use std::borrow::Cow;

use acp_wire::successor::{self, Dialect};
use acp_wire::{Envelope, Invalid, Outcome, RawValue};
use serde::Deserialize;

/// The `kind` of a message record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Notification,
    Response,
    Error,
    Invalid,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Response => "response",
            Kind::Error => "error",
            Kind::Invalid => "invalid",
        }
    }
}

/// A frame as a record describes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Seen<'a> {
    pub kind: Kind,
    /// The method, the inner one of a wrapped message; for responses, filled in from the
    /// request they answer.
    pub method: Option<Cow<'a, str>>,
    /// `proxy/successor` or `_proxy/successor` when the message is wrapped in one.
    pub wrapped: Option<&'static str>,
    /// The id as its JSON text.
    pub id: Option<Cow<'a, str>>,
    pub session: Option<Cow<'a, str>>,
    /// Whether the line is JSON (and so can be the payload as it is); otherwise the payload
    /// is the line as a string.
    pub json: bool,
}

/// Reads `line`.
pub fn classify(line: &[u8]) -> Seen<'_> {
    match acp_wire::parse(line) {
        Ok(Envelope::Request { id, method, params }) => {
            call(Kind::Request, Some(id), method, params)
        }
        Ok(Envelope::Notification { method, params }) => {
            call(Kind::Notification, None, method, params)
        }
        Ok(Envelope::Response { id, outcome }) => {
            let (kind, session) = match outcome {
                Outcome::Result(result) => (Kind::Response, session_of(result)),
                Outcome::Error(_) => (Kind::Error, None),
            };
            Seen {
                kind,
                method: None,
                wrapped: None,
                id: Some(Cow::Borrowed(id.get())),
                session,
                json: true,
            }
        }
        Err(invalid) => Seen {
            kind: Kind::Invalid,
            method: None,
            wrapped: None,
            id: invalid
                .id()
                .and_then(valid_id)
                .map(|id| Cow::Owned(id.to_owned())),
            session: None,
            json: !matches!(invalid, Invalid::NotUtf8 { .. } | Invalid::NotJson { .. }),
        },
    }
}

fn call<'a>(
    kind: Kind,
    id: Option<&'a RawValue>,
    method: &'a str,
    params: Option<&'a RawValue>,
) -> Seen<'a> {
    let (method, wrapped, params) = match Dialect::of_successor(method) {
        Some(dialect) => match successor::unwrap(params) {
            Ok(inner) => (inner.method, Some(dialect.successor_method()), inner.params),
            Err(_) => (method, None, params),
        },
        None => (method, None, params),
    };
    Seen {
        kind,
        method: Some(Cow::Borrowed(method)),
        wrapped,
        id: id.map(|id| Cow::Borrowed(id.get())),
        session: params.and_then(session_of),
        json: true,
    }
}

/// The `sessionId` member of an object, when it is a string.
fn session_of(object: &RawValue) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Session<'a> {
        #[serde(rename = "sessionId", borrow, default)]
        session: Option<&'a RawValue>,
    }
    if !object.get().starts_with('{') {
        return None;
    }
    let session = serde_json::from_str::<Session<'_>>(object.get())
        .ok()?
        .session?;
    acp_wire::envelope::decode_str(session)
}

/// An id read from a broken line, if it is JSON text that can stand in a record as it is.
pub fn valid_id(id: &str) -> Option<&str> {
    serde_json::from_str::<&RawValue>(id).ok().map(|_| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(line: &str) -> Seen<'_> {
        classify(line.as_bytes())
    }

    #[test]
    fn requests_notifications_and_responses() {
        let s = seen(
            r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s\u00311","prompt":[]}}"#,
        );
        assert_eq!(
            (
                s.kind,
                s.method.as_deref(),
                s.id.as_deref(),
                s.session.as_deref()
            ),
            (
                Kind::Request,
                Some("session/prompt"),
                Some(r#""a""#),
                Some("s11")
            )
        );
        let s = seen(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#);
        assert_eq!((s.kind, s.id), (Kind::Notification, None));
        let s = seen(r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2"}}"#);
        assert_eq!(
            (s.kind, s.id.as_deref(), s.session.as_deref()),
            (Kind::Response, Some("3"), Some("s2"))
        );
        let s = seen(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}"#);
        assert_eq!(s.kind, Kind::Error);
        assert!(s.json);
    }

    #[test]
    fn wrapped_messages_show_their_inner_method_and_session() {
        let s = seen(
            r#"{"jsonrpc":"2.0","id":0,"method":"_proxy/successor","params":{"method":"session/new","params":{"sessionId":"x","cwd":"/"}}}"#,
        );
        assert_eq!(
            (s.method.as_deref(), s.wrapped, s.session.as_deref()),
            (Some("session/new"), Some("_proxy/successor"), Some("x"))
        );
    }

    #[test]
    fn broken_lines_are_invalid_with_what_can_be_read() {
        let s = seen(r#"{"id":7,"method":"x""#);
        assert_eq!(
            (s.kind, s.id.as_deref(), s.json),
            (Kind::Invalid, Some("7"), false)
        );
        let s = seen(r#"[{"jsonrpc":"2.0","method":"m"}]"#);
        assert_eq!((s.kind, s.json), (Kind::Invalid, true));
        let s = classify(b"\xff banner");
        assert_eq!((s.kind, s.id, s.json), (Kind::Invalid, None, false));
    }
}
