//! The proxy's main loop and its routing: read a line from the conductor, decide which side it
//! came from, let the hook decide, and write the result. Knows the proxy-chain protocol, not ACP.
//!
//! Routing, in one place:
//!
//! | arriving from the conductor                    | hook                     | sent on as                              |
//! |------------------------------------------------|--------------------------|-----------------------------------------|
//! | `proxy/initialize` / `_proxy/initialize`       | `on_editor_request`      | `proxy/successor {initialize}`, our id  |
//! | plain request / notification                   | `on_editor_*`            | `proxy/successor {method, params}`      |
//! | `proxy/successor` request / notification       | `on_agent_*`             | plain message                           |
//! | response to an id we chose                     | (response hook, if any)  | response under the requester's id       |
//! | `$/cancel_request` naming a forwarded request  | none                     | plain, `requestId` rewritten to our id  |
//!
//! Every request we send gets an id from the in-flight table ([`InFlight`](crate::response_route::InFlight));
//! payloads are spliced into the new envelope byte-for-byte.

use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use acp_wire::frame::DEFAULT_MAX_LINE;
use acp_wire::successor::{self, Dialect, EnvelopeMeta};
use acp_wire::{Envelope, IdKey, Invalid, LineDecoder, Outcome, RawValue, error_code};
use bytes::BytesMut;

use crate::action::{NotificationAction, RequestAction, ResponseAction, RpcError};
use crate::message::{Notification, Request, Response, Side};
use crate::peers::Peers;
use crate::proxy::Proxy;
use crate::response_route::{Forwarded, ResponseRoute, find_forwarded};

/// How much is read from stdin at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Runs `proxy` on stdin/stdout until stdin closes. Errors are logged; the exit code says
/// whether the loop ended cleanly.
pub fn run<P: Proxy>(proxy: P) -> ExitCode {
    match serve(proxy, io::stdin().lock(), io::stdout().lock()) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            crate::error!("stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `proxy` reading the conductor's lines from `input` and writing to `output` until
/// `input` ends; returns the proxy so tests can inspect its state.
///
/// Reads block; everything runs on the calling thread. Output is flushed whenever no
/// complete line is left to process, so nothing waits in a buffer while we wait for input.
pub fn serve<P: Proxy>(proxy: P, mut input: impl Read, output: impl Write) -> io::Result<P> {
    let mut output = BufWriter::new(output);
    let mut router = Router {
        proxy,
        peers: Peers::new(),
    };
    let mut decoder = LineDecoder::new(DEFAULT_MAX_LINE);
    let mut buf = BytesMut::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        while let Some(frame) = decoder.decode(&mut buf) {
            router.on_frame(frame);
            router.drain_to(&mut output)?;
        }
        output.flush()?;
    }
    while let Some(frame) = decoder.decode_eof(&mut buf) {
        router.on_frame(frame);
        router.drain_to(&mut output)?;
    }
    output.flush()?;
    if !router.peers.open.is_empty() {
        crate::warn!(
            "input ended with {} request(s) never answered",
            router.peers.open.len()
        );
    }
    Ok(router.proxy)
}

struct Router<P> {
    proxy: P,
    peers: Peers<P>,
}

impl<P: Proxy> Router<P> {
    fn drain_to(&mut self, output: &mut impl Write) -> io::Result<()> {
        if self.peers.out.is_empty() {
            return Ok(());
        }
        if crate::log::enabled(crate::log::Level::Trace) {
            for line in self
                .peers
                .out
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
            {
                crate::trace!("-> {}", String::from_utf8_lossy(line));
            }
        }
        output.write_all(&self.peers.out)?;
        self.peers.out.clear();
        Ok(())
    }

    fn on_frame(&mut self, frame: Result<bytes::Bytes, acp_wire::FrameError>) {
        let line = match frame {
            Ok(line) => line,
            Err(e) => {
                crate::error!("message dropped: {e}");
                return;
            }
        };
        crate::trace!("<- {}", String::from_utf8_lossy(&line));
        match acp_wire::parse(&line) {
            Ok(Envelope::Request { id, method, params }) => self.on_request(id, method, params),
            Ok(Envelope::Notification { method, params }) => self.on_notification(method, params),
            Ok(Envelope::Response { id, outcome }) => self.on_response(id, outcome, &line),
            Err(invalid) => self.on_invalid(invalid),
        }
    }

    fn on_request(&mut self, id: &RawValue, method: &str, params: Option<&RawValue>) {
        if Dialect::of_successor(method).is_some() {
            match successor::unwrap(params) {
                Ok(wrapped) => self.request_from(Request {
                    from: Side::Agent,
                    id,
                    method: wrapped.method,
                    params: wrapped.params,
                    meta: wrapped.meta,
                }),
                Err(reason) => {
                    crate::warn!("malformed {method} request {}: {reason}", id.get());
                    let error = RpcError::new(error_code::INVALID_PARAMS, reason);
                    self.peers.send_error(id.get(), &error);
                }
            }
            return;
        }
        let method = match Dialect::of_initialize(method) {
            Some(dialect) => {
                self.peers.dialect = dialect;
                "initialize"
            }
            None if method == "initialize" => {
                crate::error!("received `initialize`: a proxy must be started by a conductor");
                let error = RpcError::new(
                    error_code::INVALID_REQUEST,
                    "this program is an ACP proxy: run it from a conductor, which sends `proxy/initialize`",
                );
                self.peers.send_error(id.get(), &error);
                return;
            }
            None => method,
        };
        self.request_from(Request {
            from: Side::Editor,
            id,
            method,
            params,
            meta: EnvelopeMeta::default(),
        });
    }

    fn request_from(&mut self, request: Request<'_>) {
        let key = (request.from, IdKey::of(request.id));
        if !self.peers.open.insert(key.clone()) {
            crate::warn!(
                "request id {} from the {} side reused while still open",
                request.id.get(),
                request.from.noun()
            );
        }
        let action = match request.from {
            Side::Editor => self.proxy.on_editor_request(&mut self.peers, &request),
            Side::Agent => self.proxy.on_agent_request(&mut self.peers, &request),
        };
        let still_open = self.peers.open.contains(&key);
        match action {
            RequestAction::Defer => {
                if still_open {
                    crate::debug!("request {} `{}` deferred", request.id.get(), request.method);
                }
                return;
            }
            _ if !still_open => {
                crate::error!(
                    "request {} `{}` was answered inside its hook; the hook's {action:?} is ignored",
                    request.id.get(),
                    request.method
                );
                return;
            }
            _ => {
                self.peers.open.remove(&key);
            }
        }
        match action {
            RequestAction::Forward => self.forward(&request, key.1, request.params, None),
            RequestAction::ForwardModified(params) => {
                self.forward(&request, key.1, Some(&params), None)
            }
            RequestAction::ForwardThen(params, hook) => {
                let params = params.as_deref().or(request.params);
                self.forward(&request, key.1, params, Some(hook));
            }
            RequestAction::Respond(result) => {
                self.peers
                    .send_response(request.id.get(), Outcome::Result(&result));
            }
            RequestAction::Fail(error) => self.peers.send_error(request.id.get(), &error),
            RequestAction::Defer => unreachable!("handled above"),
        }
    }

    fn forward(
        &mut self,
        request: &Request<'_>,
        origin_key: IdKey,
        params: Option<&RawValue>,
        then: Option<crate::action::ForwardedResponseHook<P>>,
    ) {
        let id = self
            .peers
            .in_flight
            .register(ResponseRoute::Forwarded(Forwarded {
                from: request.from,
                origin_id: request.id.get().into(),
                origin_key,
                method: request.method.into(),
                then,
            }));
        // A plain message has no envelope to carry `meta` on; a wrapped one arrives only
        // from the agent side and leaves plain, so there is never envelope meta to pass on.
        let to = request.from.other();
        self.peers.send_call(
            to,
            Some(id),
            request.method,
            params,
            EnvelopeMeta::default(),
        );
    }

    fn on_notification(&mut self, method: &str, params: Option<&RawValue>) {
        if Dialect::of_successor(method).is_some() {
            match successor::unwrap(params) {
                Ok(wrapped) => self.notification_from(Notification {
                    from: Side::Agent,
                    method: wrapped.method,
                    params: wrapped.params,
                    meta: wrapped.meta,
                }),
                Err(reason) => crate::warn!("malformed {method} notification dropped: {reason}"),
            }
            return;
        }
        self.notification_from(Notification {
            from: Side::Editor,
            method,
            params,
            meta: EnvelopeMeta::default(),
        });
    }

    fn notification_from(&mut self, notification: Notification<'_>) {
        let is_cancel = notification.method == "$/cancel_request";
        if is_cancel && self.pass_on_cancel(&notification) {
            return;
        }
        let action = match notification.from {
            Side::Editor => self
                .proxy
                .on_editor_notification(&mut self.peers, &notification),
            Side::Agent => self
                .proxy
                .on_agent_notification(&mut self.peers, &notification),
        };
        let to = notification.from.other();
        let meta = EnvelopeMeta::default();
        match action {
            NotificationAction::Forward if is_cancel => {
                crate::debug!("$/cancel_request for a request not forwarded: nothing to pass on");
            }
            NotificationAction::Forward => {
                self.peers
                    .send_call(to, None, notification.method, notification.params, meta);
            }
            NotificationAction::ForwardModified(params) => {
                self.peers
                    .send_call(to, None, notification.method, Some(&params), meta);
            }
            NotificationAction::Drop => {
                crate::debug!(
                    "`{}` from the {} side dropped",
                    notification.method,
                    notification.from.noun()
                );
            }
        }
    }

    /// Passes on a `$/cancel_request` for a request we forwarded, naming it by our id.
    /// Cancellation is hop-scoped (schema 1.20): the conductor names its own request on this
    /// connection, plain, whichever side it came from (older conductors wrap it when it comes
    /// from the agent side), and we cancel ours the same way: plain, never wrapped.
    fn pass_on_cancel(&mut self, cancel: &Notification<'_>) -> bool {
        let Some(params) = cancel.params else {
            return false;
        };
        let Some(request_id) =
            acp_wire::splice::Members::of(params).and_then(|m| m.get("requestId"))
        else {
            return false;
        };
        let key = IdKey::of(request_id);
        let Some(ours) = find_forwarded(&self.peers.in_flight, cancel.from, &key)
            .or_else(|| find_forwarded(&self.peers.in_flight, cancel.from.other(), &key))
        else {
            return false;
        };
        let ours = RawValue::from_string(ours.to_string()).expect("a number is JSON");
        let params = crate::json::set_member(params, &["requestId"], &ours);
        // `Side::Editor` is the plain encoding: the cancel names our request on this hop.
        self.peers.send_call(
            Side::Editor,
            None,
            cancel.method,
            Some(&params),
            EnvelopeMeta::default(),
        );
        true
    }

    /// A response from either side, `frame` as its sender wrote it: one the proxy forwards
    /// unchanged goes back with its bytes, only the id changed.
    fn on_response(&mut self, id: &RawValue, outcome: Outcome<'_>, frame: &[u8]) {
        let pending = self.peers.in_flight.complete_raw(id);
        let Some(pending) = pending else {
            crate::warn!(
                "response to id {} that we are not waiting for; dropped",
                id.get()
            );
            return;
        };
        let response = Response { outcome };
        match pending {
            ResponseRoute::Forwarded(forwarded) => {
                let action = match forwarded.then {
                    Some(hook) => hook(&mut self.proxy, &mut self.peers, response),
                    None => ResponseAction::Forward,
                };
                let origin = &forwarded.origin_id;
                crate::debug!(
                    "response to `{}` {origin} passed back to the {} side",
                    forwarded.method,
                    forwarded.from.noun()
                );
                match action {
                    ResponseAction::Forward => {
                        self.peers.send_response_as_sent(origin, frame, id, outcome)
                    }
                    ResponseAction::Replace(result) => {
                        self.peers.send_response(origin, Outcome::Result(&result));
                    }
                    ResponseAction::Fail(error) => self.peers.send_error(origin, &error),
                }
            }
            ResponseRoute::Originated(hook) => hook(&mut self.proxy, &mut self.peers, response),
        }
    }

    fn on_invalid(&mut self, invalid: Invalid<'_>) {
        crate::warn!("invalid message: {invalid}");
        // A broken response to a request we forwarded must still answer whoever asked.
        if let Invalid::NotJsonRpc { id: Some(id), .. } = &invalid
            && let Some(pending) = self.peers.in_flight.complete_raw(id)
        {
            let message = format!("invalid response from the successor: {invalid}");
            let error = RpcError::new(error_code::INTERNAL_ERROR, message);
            match pending {
                ResponseRoute::Forwarded(forwarded) => {
                    self.peers.send_error(&forwarded.origin_id, &error)
                }
                ResponseRoute::Originated(hook) => {
                    let error = crate::json::to_raw(&serde_json::json!({
                        "code": error.code,
                        "message": error.message,
                    }));
                    let response = Response {
                        outcome: Outcome::Error(&error),
                    };
                    hook(&mut self.proxy, &mut self.peers, response);
                }
            }
            return;
        }
        let error = RpcError::new(invalid.code(), invalid.to_string());
        self.peers.send_error(invalid.reply_id(), &error);
    }
}
