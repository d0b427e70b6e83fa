//! What a hook decides about the message it was shown: pass, change, answer, drop or defer.
//! Decisions only; carrying them out is the serve loop's business.

use acp_wire::RawValue;
use serde::Serialize;

use crate::json::to_raw;
use crate::message::Response;
use crate::peers::Peers;

/// A hook run on the response to a forwarded request, before it goes back to the requester.
pub type ForwardedResponseHook<P> =
    Box<dyn FnOnce(&mut P, &mut Peers<P>, Response<'_>) -> ResponseAction>;

/// What to do with a request.
pub enum RequestAction<P> {
    /// Send it on to the other side with its params bytes unchanged.
    Forward,
    /// Send it on with these params instead.
    ForwardModified(Box<RawValue>),
    /// Send it on (with new params if given) and run the hook on its response, which may
    /// change that response before the requester sees it.
    ForwardThen(Option<Box<RawValue>>, ForwardedResponseHook<P>),
    /// Answer it here with this `result`; the other side never sees it.
    Respond(Box<RawValue>),
    /// Answer it here with this error; the other side never sees it.
    Fail(RpcError),
    /// The hook kept [`Request::handle`](crate::Request::handle) and answers later with
    /// [`Peers::respond`] or [`Peers::respond_error`].
    Defer,
}

impl<P> RequestAction<P> {
    /// [`RequestAction::ForwardModified`] with params serialized from `params`.
    ///
    /// # Panics
    /// If `params` cannot be JSON (a map with non-string keys): a programming error.
    pub fn forward_modified(params: impl Serialize) -> Self {
        RequestAction::ForwardModified(to_raw(&params))
    }

    /// [`RequestAction::ForwardThen`] with the params unchanged.
    pub fn forward_then(
        hook: impl FnOnce(&mut P, &mut Peers<P>, Response<'_>) -> ResponseAction + 'static,
    ) -> Self {
        RequestAction::ForwardThen(None, Box::new(hook))
    }

    /// [`RequestAction::ForwardThen`] with new params.
    pub fn forward_modified_then(
        params: Box<RawValue>,
        hook: impl FnOnce(&mut P, &mut Peers<P>, Response<'_>) -> ResponseAction + 'static,
    ) -> Self {
        RequestAction::ForwardThen(Some(params), Box::new(hook))
    }

    /// [`RequestAction::Respond`] with a result serialized from `result`.
    ///
    /// # Panics
    /// If `result` cannot be JSON: a programming error.
    pub fn respond(result: impl Serialize) -> Self {
        RequestAction::Respond(to_raw(&result))
    }

    /// [`RequestAction::Fail`] with a code and message.
    pub fn fail(code: i64, message: impl Into<String>) -> Self {
        RequestAction::Fail(RpcError::new(code, message))
    }
}

impl<P> std::fmt::Debug for RequestAction<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestAction::Forward => f.write_str("Forward"),
            RequestAction::ForwardModified(p) => f.debug_tuple("ForwardModified").field(p).finish(),
            RequestAction::ForwardThen(p, _) => f
                .debug_tuple("ForwardThen")
                .field(p)
                .finish_non_exhaustive(),
            RequestAction::Respond(r) => f.debug_tuple("Respond").field(r).finish(),
            RequestAction::Fail(e) => f.debug_tuple("Fail").field(e).finish(),
            RequestAction::Defer => f.write_str("Defer"),
        }
    }
}

/// What to do with a notification.
#[derive(Debug)]
pub enum NotificationAction {
    /// Send it on to the other side with its params bytes unchanged.
    Forward,
    /// Send it on with these params instead.
    ForwardModified(Box<RawValue>),
    /// Do not send it on.
    Drop,
}

impl NotificationAction {
    /// [`NotificationAction::ForwardModified`] with params serialized from `params`.
    ///
    /// # Panics
    /// If `params` cannot be JSON: a programming error.
    pub fn forward_modified(params: impl Serialize) -> Self {
        NotificationAction::ForwardModified(to_raw(&params))
    }
}

/// What to do with the response to a forwarded request (see [`RequestAction::ForwardThen`]).
#[derive(Debug)]
pub enum ResponseAction {
    /// Pass it back unchanged (result or error bytes as received).
    Forward,
    /// Pass back this `result` instead.
    Replace(Box<RawValue>),
    /// Pass back this error instead.
    Fail(RpcError),
}

impl ResponseAction {
    /// [`ResponseAction::Replace`] with a result serialized from `result`.
    ///
    /// # Panics
    /// If `result` cannot be JSON: a programming error.
    pub fn replace(result: impl Serialize) -> Self {
        ResponseAction::Replace(to_raw(&result))
    }
}

/// A JSON-RPC error object a proxy answers with.
#[derive(Debug, Clone)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Box<RawValue>>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data` (serialized).
    ///
    /// # Panics
    /// If `data` cannot be JSON: a programming error.
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        self.data = Some(to_raw(&data));
        self
    }
}
