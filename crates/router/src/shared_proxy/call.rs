//! A call (request or notification) as a shared proxy's routes see it: its session, the
//! message inside a `proxy/successor` envelope, and the few splices that rewrite them.
//! Pure text work on one frame; must not know which connection a frame belongs to.

use acp_wire::encode;
use acp_wire::envelope::decode_str;
use acp_wire::error_code::INTERNAL_ERROR;
use acp_wire::splice::{Members, set_path};
use acp_wire::successor::{Dialect, Wrapped, unwrap};
use acp_wire::{Outcome, RawValue};
use bytes::Bytes;

use super::SESSION_ID;

/// A request or notification, taken apart as far as its session needs.
pub(super) struct Call<'a> {
    method: &'a str,
    params: Option<&'a RawValue>,
    /// When `method` is a `proxy/successor` envelope: the message inside it.
    inner: Option<Wrapped<'a>>,
}

impl<'a> Call<'a> {
    pub(super) fn of(method: &'a str, params: Option<&'a RawValue>) -> Call<'a> {
        let inner = Dialect::of_successor(method).and_then(|_| unwrap(params).ok());
        Call {
            method,
            params,
            inner,
        }
    }

    /// The params that name the session: the wrapped message's, or the call's own.
    pub(super) fn scoped(&self) -> Option<&'a RawValue> {
        match &self.inner {
            Some(inner) => inner.params,
            None => self.params,
        }
    }

    pub(super) fn member(&self, key: &str) -> Option<String> {
        member_str(self.scoped(), key)
    }

    /// The scoped params with `sessionId` set to `session`.
    pub(super) fn with_session(&self, session: &str) -> Box<RawValue> {
        let scoped = self.scoped().expect("a session was read from them");
        raw(set_path(scoped, &[SESSION_ID], &json(session)))
    }

    /// The call under `id` (a notification without), with `scoped` in place of the params
    /// that name the session when given.
    pub(super) fn write(&self, id: Option<&str>, scoped: Option<&RawValue>) -> Bytes {
        let mut out = Vec::new();
        let call = match &self.inner {
            Some(inner) => encode::Call::Wrapped {
                via: self.method,
                method: inner.method,
                params: scoped.or(inner.params),
                meta: inner.meta,
            },
            None => encode::Call::Plain {
                method: self.method,
                params: scoped.or(self.params),
            },
        };
        encode::call(&mut out, id, call);
        out.into()
    }
}

pub(super) fn member_raw<'a>(object: Option<&'a RawValue>, key: &str) -> Option<&'a RawValue> {
    Members::of(object?)?.get(key)
}

pub(super) fn member_str(object: Option<&RawValue>, key: &str) -> Option<String> {
    decode_str(member_raw(object, key)?).map(|s| s.into_owned())
}

pub(super) fn json(text: &str) -> String {
    let mut out = Vec::new();
    encode::json_string(&mut out, text);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

pub(super) fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("spliced from valid JSON")
}

/// The response `frame` (whose id is `sent_id` and whose outcome `outcome`) under `id`, with
/// its result replaced by `result` when given: the sender's bytes, member order included, with
/// only those parts changed.
pub(super) fn response(
    frame: &[u8],
    sent_id: &RawValue,
    id: &str,
    outcome: Outcome<'_>,
    result: Option<&RawValue>,
) -> Bytes {
    let mut out = Vec::with_capacity(frame.len() + id.len() + result.map_or(0, |r| r.get().len()));
    let replaced = match (outcome, result) {
        (Outcome::Result(sent), Some(new)) => Some((sent, new)),
        _ => None,
    };
    if !encode::response_in_place(&mut out, frame, sent_id, id, replaced) {
        out.clear();
        let outcome = match (outcome, result) {
            (Outcome::Result(_), Some(new)) => Outcome::Result(new),
            (outcome, _) => outcome,
        };
        encode::response(&mut out, id, outcome);
    }
    out.into()
}

pub(super) fn error(id: &str, message: &str) -> Bytes {
    let mut out = Vec::new();
    encode::error_response(&mut out, id, INTERNAL_ERROR, message, None);
    out.into()
}
