//! The editor's open sessions as a reload needs them: each `session/new` or `session/load`
//! the editor sent, as it sent it, with the result it got. A proxy instance a reload starts is
//! introduced to each by a replay of that request, and its forwarded copy is answered with
//! that result, so that the agent never sees a session begin twice. Pure.

use std::collections::HashMap;

use acp_wire::RawValue;
use acp_wire::envelope::decode_str;
use acp_wire::splice::Members;
use bytes::Bytes;

/// Methods that open a session for the editor.
const OPENING: &[&str] = &["session/new", "session/load"];

/// One session as it was opened.
#[derive(Debug, Clone)]
pub(super) struct OpenSession {
    pub id: Box<str>,
    /// `session/new` or `session/load`.
    pub method: &'static str,
    pub params: Option<Bytes>,
    pub result: Box<RawValue>,
}

#[derive(Debug, Default)]
pub(super) struct OpenSessions {
    /// Requests the editor sent to open a session, by the id it gave them, until answered.
    asked: HashMap<Box<str>, (&'static str, Option<Bytes>)>,
    /// Open sessions, in the order they were opened.
    open: Vec<OpenSession>,
}

impl OpenSessions {
    /// The editor sent `method` with `params` under `id`.
    pub(super) fn request(&mut self, id: &str, method: &str, params: Option<Bytes>) {
        if let Some(method) = OPENING.iter().find(|m| **m == method) {
            self.asked.insert(id.into(), (method, params));
        } else if method == "session/close"
            && let Some(session) = params
                .as_deref()
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(|p| serde_json::from_str::<&RawValue>(p).ok())
                .and_then(|p| session_id(p, "sessionId"))
        {
            self.open.retain(|s| s.id != session);
        }
    }

    /// The editor's request `id` was answered: with `result`, or with an error (`None`).
    pub(super) fn answered(&mut self, id: &str, result: Option<&RawValue>) {
        let Some((method, params)) = self.asked.remove(id) else {
            return;
        };
        let Some(result) = result else {
            return;
        };
        let named_in = match method {
            "session/load" => params
                .as_deref()
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(|p| serde_json::from_str::<&RawValue>(p).ok())
                .and_then(|p| session_id(p, "sessionId")),
            _ => session_id(result, "sessionId"),
        };
        let Some(session) = named_in else {
            return;
        };
        self.open.retain(|s| s.id != session);
        self.open.push(OpenSession {
            id: session,
            method,
            params,
            result: result.to_owned(),
        });
    }

    /// Forgets every session (the agent that had them was restarted).
    pub(super) fn clear(&mut self) {
        self.open.clear();
    }

    /// The open sessions, oldest first.
    pub(super) fn all(&self) -> &[OpenSession] {
        &self.open
    }
}

fn session_id(object: &RawValue, key: &str) -> Option<Box<str>> {
    let value = Members::of(object)?.get(key)?;
    decode_str(value).map(|s| s.into_owned().into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn bytes(text: &str) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(text.as_bytes()))
    }

    fn ids(sessions: &OpenSessions) -> Vec<&str> {
        sessions.all().iter().map(|s| &*s.id).collect()
    }

    #[test]
    fn new_and_loaded_sessions_are_kept_until_closed() {
        let mut s = OpenSessions::default();
        s.request("1", "session/new", bytes(r#"{"cwd":"/a"}"#));
        s.request(
            "2",
            "session/load",
            bytes(r#"{"sessionId":"old","cwd":"/b"}"#),
        );
        s.request("3", "session/new", bytes(r#"{"cwd":"/c"}"#));
        s.answered("1", Some(&raw(r#"{"sessionId":"s\u0031"}"#)));
        s.answered("2", Some(&raw("null")));
        s.answered("3", None);
        assert_eq!(ids(&s), vec!["s1", "old"]);
        assert_eq!(s.all()[0].method, "session/new");
        assert_eq!(s.all()[0].params.as_deref(), Some(&br#"{"cwd":"/a"}"#[..]));
        assert_eq!(s.all()[1].result.get(), "null");
        s.request("4", "session/close", bytes(r#"{"sessionId":"s1"}"#));
        assert_eq!(ids(&s), vec!["old"]);
    }

    #[test]
    fn other_requests_and_unknown_answers_are_ignored() {
        let mut s = OpenSessions::default();
        s.request("1", "session/prompt", bytes(r#"{"sessionId":"x"}"#));
        s.answered("1", Some(&raw(r#"{"sessionId":"x"}"#)));
        s.answered("9", Some(&raw(r#"{"sessionId":"y"}"#)));
        s.request("2", "session/new", None);
        s.answered("2", Some(&raw("{}")));
        assert!(s.all().is_empty());
    }
}
