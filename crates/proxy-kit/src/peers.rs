//! A hook's handle on the proxy's two peers, the editor side and the agent side: send
//! notifications and requests either way, answer deferred requests. Encodes lines into the
//! outgoing buffer; knows nothing of stdio.

use std::collections::HashSet;

use acp_wire::encode::{self, Call};
use acp_wire::successor::{Dialect, EnvelopeMeta};
use acp_wire::{IdKey, Outcome, RawValue};
use serde::Serialize;

use crate::action::RpcError;
use crate::json::to_raw;
use crate::message::{RequestHandle, Response, Side};
use crate::response_route::{InFlight, ResponseRoute};

/// Passed to every hook. Messages sent through it go out before whatever the hook's returned
/// action sends, in the order they were sent.
pub struct Peers<P> {
    /// Encoded lines (each ending in `\n`) waiting to be written to stdout.
    pub(crate) out: Vec<u8>,
    /// Requests sent (forwarded or our own) and not yet answered.
    pub(crate) in_flight: InFlight<P>,
    /// Requests received and not yet answered or forwarded.
    pub(crate) open: HashSet<(Side, IdKey)>,
    /// How the conductor addressed us; we name `proxy/successor` the same way.
    pub(crate) dialect: Dialect,
}

impl<P> Peers<P> {
    pub(crate) fn new() -> Self {
        Peers {
            out: Vec::new(),
            in_flight: InFlight::new(),
            open: HashSet::new(),
            dialect: Dialect::default(),
        }
    }

    /// Sends a notification to the agent side.
    ///
    /// # Panics
    /// If `method` needs JSON escaping or `params` cannot be JSON: programming errors.
    pub fn notify_agent(&mut self, method: &str, params: impl Serialize) {
        let params = to_raw(&params);
        self.send_call(
            Side::Agent,
            None,
            checked(method),
            Some(&params),
            EnvelopeMeta::default(),
        );
    }

    /// Sends a notification to the editor side.
    ///
    /// # Panics
    /// As [`notify_agent`](Self::notify_agent).
    pub fn notify_editor(&mut self, method: &str, params: impl Serialize) {
        let params = to_raw(&params);
        self.send_call(
            Side::Editor,
            None,
            checked(method),
            Some(&params),
            EnvelopeMeta::default(),
        );
    }

    /// Sends a request to the agent side; its response goes to `on_response`, never out.
    ///
    /// # Panics
    /// As [`notify_agent`](Self::notify_agent).
    pub fn request_agent(
        &mut self,
        method: &str,
        params: impl Serialize,
        on_response: impl FnOnce(&mut P, &mut Peers<P>, Response<'_>) + 'static,
    ) {
        self.request(Side::Agent, method, params, on_response);
    }

    /// Sends a request to the editor side; its response goes to `on_response`, never out.
    ///
    /// # Panics
    /// As [`notify_agent`](Self::notify_agent).
    pub fn request_editor(
        &mut self,
        method: &str,
        params: impl Serialize,
        on_response: impl FnOnce(&mut P, &mut Peers<P>, Response<'_>) + 'static,
    ) {
        self.request(Side::Editor, method, params, on_response);
    }

    fn request(
        &mut self,
        to: Side,
        method: &str,
        params: impl Serialize,
        on_response: impl FnOnce(&mut P, &mut Peers<P>, Response<'_>) + 'static,
    ) {
        let params = to_raw(&params);
        let method = checked(method);
        let id = self
            .in_flight
            .register(ResponseRoute::Originated(Box::new(on_response)));
        crate::debug!("request {id} `{method}` to the {} side", to.noun());
        self.send_call(to, Some(id), method, Some(&params), EnvelopeMeta::default());
    }

    /// Answers a deferred request with `result`. A request already answered stays answered:
    /// the second answer is logged and dropped.
    ///
    /// # Panics
    /// If `result` cannot be JSON: a programming error.
    pub fn respond(&mut self, request: RequestHandle, result: impl Serialize) {
        if self.close(&request) {
            let result = to_raw(&result);
            self.send_response(&request.id, Outcome::Result(&result));
        }
    }

    /// Answers a deferred request with an error, like [`respond`](Self::respond).
    pub fn respond_error(&mut self, request: RequestHandle, error: RpcError) {
        if self.close(&request) {
            self.send_error(&request.id, &error);
        }
    }

    /// Requests sent (forwarded or our own) whose responses have not arrived yet.
    pub fn requests_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn close(&mut self, request: &RequestHandle) -> bool {
        let open = self.open.remove(&(request.from, request.key.clone()));
        if !open {
            crate::error!(
                "request {} `{}` from the {} side was already answered; this answer is dropped",
                request.id,
                request.method,
                request.from.noun()
            );
        }
        open
    }

    /// Encodes a request or notification to `to`: wrapped in `proxy/successor` toward the
    /// agent side, plain toward the editor side.
    pub(crate) fn send_call(
        &mut self,
        to: Side,
        id: Option<u64>,
        method: &str,
        params: Option<&RawValue>,
        meta: EnvelopeMeta<'_>,
    ) {
        let id_text = id.map(|id| id.to_string());
        let call = match to {
            Side::Agent => Call::Wrapped {
                via: self.dialect.successor_method(),
                method,
                params,
                meta,
            },
            Side::Editor => Call::Plain { method, params },
        };
        encode::call(&mut self.out, id_text.as_deref(), call);
        self.out.push(b'\n');
    }

    pub(crate) fn send_response(&mut self, id: &str, outcome: Outcome<'_>) {
        encode::response(&mut self.out, id, outcome);
        self.out.push(b'\n');
    }

    /// The response `frame` (whose id is `sent_id`) passed on under `id`: its sender's bytes,
    /// member order included, with only the id changed.
    pub(crate) fn send_response_as_sent(
        &mut self,
        id: &str,
        frame: &[u8],
        sent_id: &RawValue,
        outcome: Outcome<'_>,
    ) {
        let start = self.out.len();
        if !encode::response_in_place(&mut self.out, frame, sent_id, id, None) {
            self.out.truncate(start);
            encode::response(&mut self.out, id, outcome);
        }
        self.out.push(b'\n');
    }

    pub(crate) fn send_error(&mut self, id: &str, error: &RpcError) {
        encode::error_response(
            &mut self.out,
            id,
            error.code,
            &error.message,
            error.data.as_deref(),
        );
        self.out.push(b'\n');
    }
}

/// Method names are written into the envelope without escaping, as the wire crate does.
fn checked(method: &str) -> &str {
    assert!(
        !method
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control()),
        "method name {method:?} must not need JSON escaping"
    );
    method
}
