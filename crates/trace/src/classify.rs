//! What a record says about its frame: kind, method, the `proxy/successor` wrapper, id and
//! session, read from the line itself. Pure; runs on the trace thread, never on the router's.

use std::borrow::Cow;

use std::cell::Cell;

use acp_wire::successor::{self, Dialect};
use acp_wire::{Envelope, Invalid, Outcome, RawValue};
use serde::Deserializer;
use serde::de::{IgnoredAny, MapAccess, Visitor};

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

/// The `sessionId` member of an object, when it is a string. The object is read only up to
/// that member: the params of a 1 MiB prompt, which start with it, are not read past it.
pub fn session_of(object: &RawValue) -> Option<Cow<'_, str>> {
    if !object.get().starts_with('{') {
        return None;
    }
    let found = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(object.get());
    // Stopping early leaves the rest of the object unread, which serde_json reports as an
    // error once the visitor returns: what was found is taken from `found` instead.
    let _ = de.deserialize_map(SessionMember(&found));
    acp_wire::envelope::decode_str(found.get()?)
}

/// Visits an object's members until `sessionId`.
struct SessionMember<'f, 'de>(&'f Cell<Option<&'de RawValue>>);

impl<'de> Visitor<'de> for SessionMember<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        while let Some(name) = members.next_key::<Cow<'de, str>>()? {
            if name == "sessionId" {
                self.0.set(Some(members.next_value::<&'de RawValue>()?));
                return Ok(());
            }
            members.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
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
    fn the_session_is_read_without_reading_past_it() {
        let seen = |params: &str| {
            let raw: &RawValue = serde_json::from_str(params).unwrap();
            session_of(raw).map(Cow::into_owned)
        };
        assert_eq!(
            seen(r#"{"sessionId":"s1","prompt":[1,2]}"#).as_deref(),
            Some("s1")
        );
        assert_eq!(
            seen(r#"{"cwd":{"a":[1,{"sessionId":"x"}]},"sessionId":"s2"}"#).as_deref(),
            Some("s2")
        );
        // Past the member, nothing is read: what follows may even be cut off.
        let mut de = serde_json::Deserializer::from_str(r#"{"sessionId":"s3","prompt":[1,2"#);
        let found = Cell::new(None);
        let _ = de.deserialize_map(SessionMember(&found));
        assert_eq!(found.get().map(RawValue::get), Some(r#""s3""#));
        assert_eq!(seen(r#"{"sessionId":7}"#), None);
        assert_eq!(seen(r#"{"other":"x"}"#), None);
        assert_eq!(seen("[1]"), None);
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
