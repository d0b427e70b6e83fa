//! What a hook is shown: borrowed views of one incoming request, notification or response.
//! Views only; routing them is the serve loop's business.

use acp_wire::successor::EnvelopeMeta;
use acp_wire::{IdKey, Outcome, RawValue};
use serde::Deserialize;

/// Which neighbour a message came from (or goes to).
///
/// The editor side is the predecessor: the editor itself or the proxy before this one. The
/// agent side is the successor: the agent or the next proxy. Both are reached through the
/// conductor on stdin/stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Editor,
    Agent,
}

impl Side {
    pub fn noun(self) -> &'static str {
        match self {
            Side::Editor => "editor",
            Side::Agent => "agent",
        }
    }

    /// The side a message from this side is passed on to.
    pub fn other(self) -> Side {
        match self {
            Side::Editor => Side::Agent,
            Side::Agent => Side::Editor,
        }
    }
}

/// A request arriving from one side. `proxy/initialize` is shown as `initialize` and a
/// `proxy/successor` envelope is already opened: hooks see ACP methods only.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub(crate) from: Side,
    pub(crate) id: &'a RawValue,
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a RawValue>,
    pub(crate) meta: EnvelopeMeta<'a>,
}

impl<'a> Request<'a> {
    pub fn from(&self) -> Side {
        self.from
    }

    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The params exactly as received.
    pub fn params(&self) -> Option<&'a RawValue> {
        self.params
    }

    /// The id as received (JSON text), e.g. for logs.
    pub fn id(&self) -> &'a str {
        self.id.get()
    }

    /// `meta` / `_meta` of the `proxy/successor` envelope this request came in, if any.
    /// Requests from the editor side arrive plain and never have any.
    pub fn envelope_meta(&self) -> EnvelopeMeta<'a> {
        self.meta
    }

    /// Deserializes the params; absent params read as JSON `null`.
    pub fn parse_params<T: Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.params.map_or("null", RawValue::get))
    }

    /// A handle for answering this request later with [`Peers::respond`]; pair it with
    /// [`RequestAction::Defer`](crate::RequestAction::Defer).
    ///
    /// [`Peers::respond`]: crate::Peers::respond
    pub fn handle(&self) -> RequestHandle {
        RequestHandle {
            from: self.from,
            id: self.id.get().into(),
            key: IdKey::of(self.id),
            method: self.method.into(),
        }
    }
}

/// A notification arriving from one side, shown like a [`Request`].
#[derive(Debug, Clone, Copy)]
pub struct Notification<'a> {
    pub(crate) from: Side,
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a RawValue>,
    pub(crate) meta: EnvelopeMeta<'a>,
}

impl<'a> Notification<'a> {
    pub fn from(&self) -> Side {
        self.from
    }

    pub fn method(&self) -> &'a str {
        self.method
    }

    pub fn params(&self) -> Option<&'a RawValue> {
        self.params
    }

    pub fn envelope_meta(&self) -> EnvelopeMeta<'a> {
        self.meta
    }

    pub fn parse_params<T: Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.params.map_or("null", RawValue::get))
    }
}

/// A request that a hook has taken responsibility for answering. It is answered exactly once:
/// [`Peers::respond`](crate::Peers::respond) consumes it and the kit refuses a second answer.
#[derive(Debug)]
pub struct RequestHandle {
    pub(crate) from: Side,
    pub(crate) id: Box<str>,
    pub(crate) key: IdKey,
    pub(crate) method: Box<str>,
}

impl RequestHandle {
    pub fn from(&self) -> Side {
        self.from
    }

    pub fn method(&self) -> &str {
        &self.method
    }

    /// The id as received (JSON text).
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The answer to a request the kit sent on a hook's behalf (or forwarded with a response
/// hook): the `result` or the `error` object, as received.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    pub(crate) outcome: Outcome<'a>,
}

impl<'a> Response<'a> {
    pub fn result(&self) -> Option<&'a RawValue> {
        match self.outcome {
            Outcome::Result(result) => Some(result),
            Outcome::Error(_) => None,
        }
    }

    /// The JSON-RPC error object, as received.
    pub fn error(&self) -> Option<&'a RawValue> {
        match self.outcome {
            Outcome::Result(_) => None,
            Outcome::Error(error) => Some(error),
        }
    }

    /// Deserializes the result; `None` when the response is an error.
    pub fn parse_result<T: Deserialize<'a>>(&self) -> Option<Result<T, serde_json::Error>> {
        self.result().map(|r| serde_json::from_str(r.get()))
    }

    pub fn outcome(&self) -> Outcome<'a> {
        self.outcome
    }
}
